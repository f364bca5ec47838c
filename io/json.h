/* JSON: our small streaming writer (objects, arrays, numbers, escaped strings; atomic file output) and cJSON-based reading. */
#ifndef HS_JSON_H
#define HS_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "io/written.h"

/* Writer state.  Nesting depth is limited to HS_JSON_MAX_DEPTH. */
#define HS_JSON_MAX_DEPTH 32
typedef struct hs_json {
    FILE *f;
    hs_io_whole file;      /* a file's: PATH.partial until hs_json_close renames it (file.f NULL on a stream) */
    int depth;
    int count[HS_JSON_MAX_DEPTH]; /* items written at each level (for commas) */
    int after_key;         /* the next value follows "key": */
    int indent;            /* spaces per level; 0 writes one line */
    int failed;
} hs_json;

/* Open PATH.partial for writing (indent spaces per level, 0 for compact).  Not collective: call on the
 * rank that writes.  Fails with a runtime error naming the path. */
int hs_json_open(hs_json *j, const char *path, int indent);
/* Write to an already open stream (no rename; hs_json_close does not close it). */
void hs_json_init_stream(hs_json *j, FILE *f, int indent);
/* Finish: flush, close and rename PATH.partial to PATH (a failure leaves no file under PATH). */
int hs_json_close(hs_json *j);
/* Remove PATH.partial after an error elsewhere. */
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

/* ---------------------------------------------------------------- reading (cJSON, io/json_read.c) */

/* The writer above stays our own, streaming: a result of 2^20 amplitudes took 1.6 s and no extra
 * memory through it, 4.6 s and 386 MB more as a cJSON tree printed with cJSON_Print (the tree
 * and the whole text are held at once), and quantum.amplitudes_max_qubits allows 2^26.  Reading
 * goes through cJSON (Debian libcjson-dev), a build feature (HS_HAVE_CJSON, `cjson` in hpcsim info). */
struct cJSON;

/* Parse the file at `path` into a cJSON tree (release with hs_json_free).  A missing or unreadable
 * file, or text that is not JSON, is an input error "path:line: message" (the line of the first
 * character cJSON could not take).  Without cJSON in the build: a runtime error saying so.  Not
 * collective. */
int hs_json_read_file(const char *path, struct cJSON **tree);
void hs_json_free(struct cJSON *tree);

/* The numbers found at `key` in tree: members separated by '.', array elements by their index
 * ("expectation.value", "amplitudes.3", "counts"); an empty key is the whole document.  A number
 * gives itself; an array or object every number inside it, depth first in document order (text
 * inside is passed over); null is NaN (the writer's non-finite values), true and false 1 and 0.
 * With last, the key must name an array and only its last element is taken (the last record, as
 * hpcsim compare --last means for the NetCDF and HDF5 files).  *values is malloc'd (free it;
 * *count may be 0).  A missing key, text at the key, or last on something other than a non-empty
 * array is an input error naming `source` and the key. */
/* 1 when the value `key` names (its last element with `last`) has the same object keys, in the same
 * order, and array lengths in both trees; else 0, with the first difference in `where`. */
int hs_json_same_layout(const struct cJSON *ta, const struct cJSON *tb, const char *key, int last, char *where, size_t len);
int hs_json_numbers(const struct cJSON *tree, const char *key, int last, const char *source, double **values,
                    int64_t *count);

#endif
