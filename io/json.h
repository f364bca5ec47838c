/* A small streaming JSON writer: objects, arrays, numbers, strings with escaping; atomic file output. */
#ifndef HS_JSON_H
#define HS_JSON_H

#include <stdint.h>
#include <stdio.h>

/* Writer state.  Nesting depth is limited to HS_JSON_MAX_DEPTH. */
#define HS_JSON_MAX_DEPTH 32
typedef struct hs_json {
    FILE *f;
    char *path;            /* final name; data go to PATH.tmp until hs_json_close renames */
    int depth;
    int count[HS_JSON_MAX_DEPTH]; /* items written at each level (for commas) */
    int after_key;         /* the next value follows "key": */
    int indent;            /* spaces per level; 0 writes one line */
    int failed;
} hs_json;

/* Open PATH.tmp for writing (indent spaces per level, 0 for compact).  Not collective: call on the
 * rank that writes.  Fails with a runtime error naming the path. */
int hs_json_open(hs_json *j, const char *path, int indent);
/* Write to an already open stream (no rename; hs_json_close does not close it). */
void hs_json_init_stream(hs_json *j, FILE *f, int indent);
/* Finish: flush, close and rename PATH.tmp to PATH (a failure leaves no file under PATH). */
int hs_json_close(hs_json *j);
/* Remove PATH.tmp after an error elsewhere. */
void hs_json_abort(hs_json *j);

/* Structure.  Inside an object every value must be preceded by hs_json_key. */
void hs_json_begin_object(hs_json *j);
void hs_json_end_object(hs_json *j);
void hs_json_begin_array(hs_json *j);
void hs_json_end_array(hs_json *j);
void hs_json_key(hs_json *j, const char *key);

/* Values.  Doubles are written with 17 significant digits (round trip); NaN/Inf become null. */
void hs_json_string(hs_json *j, const char *s);
void hs_json_double(hs_json *j, double v);
void hs_json_int(hs_json *j, int64_t v);
void hs_json_bool(hs_json *j, int v);
void hs_json_null(hs_json *j);

/* Write `s` as a quoted, escaped JSON string to f (also used for keys). */
void hs_json_write_escaped(FILE *f, const char *s);

#endif
