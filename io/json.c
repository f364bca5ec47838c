/* A small streaming JSON writer: objects, arrays, numbers, strings with escaping; atomic file output. */
#include "io/json.h"
#include "io/written.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/error.h"

int hs_json_open(hs_json *j, const char *path, int indent)
{
    memset(j, 0, sizeof *j);
    HS_CHECK(hs_io_whole_open(&j->file, "JSON", path, "w"));
    j->f = j->file.f;
    j->indent = indent;
    return HS_OK;
}

void hs_json_init_stream(hs_json *j, FILE *f, int indent)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->indent = indent;
}

int hs_json_close(hs_json *j)
{
    if (!j->file.f) return HS_OK;
    fputc('\n', j->f);
    const char *path = j->file.path;
    int rc = hs_io_whole_commit(&j->file, !j->failed);
    if (rc == HS_OK) hs_io_written_add(path, -1);
    j->f = NULL;
    return rc;
}

void hs_json_abort(hs_json *j)
{
    hs_io_whole_discard(&j->file);
    j->f = NULL;
}

static void newline(hs_json *j)
{
    if (!j->indent) return;
    fputc('\n', j->f);
    for (int i = 0; i < j->depth * j->indent; i++) fputc(' ', j->f);
}

/* Comma and indentation before a value or a key. */
static void before_item(hs_json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth > 0) {
        if (j->count[j->depth]++) fputc(',', j->f);
        newline(j);
    }
}

void hs_json_write_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void open_level(hs_json *j, char c)
{
    before_item(j);
    fputc(c, j->f);
    if (j->depth + 1 >= HS_JSON_MAX_DEPTH) {
        j->failed = 1;
        return;
    }
    j->depth++;
    j->count[j->depth] = 0;
}

static void close_level(hs_json *j, char c)
{
    int had = j->count[j->depth];
    if (j->depth > 0) j->depth--;
    if (had) newline(j);
    fputc(c, j->f);
}

void hs_json_begin_object(hs_json *j) { open_level(j, '{'); }
void hs_json_end_object(hs_json *j) { close_level(j, '}'); }
void hs_json_begin_array(hs_json *j) { open_level(j, '['); }
void hs_json_end_array(hs_json *j) { close_level(j, ']'); }

void hs_json_key(hs_json *j, const char *key)
{
    before_item(j);
    hs_json_write_escaped(j->f, key);
    fputs(j->indent ? ": " : ":", j->f);
    j->after_key = 1;
}

void hs_json_string(hs_json *j, const char *s)
{
    before_item(j);
    hs_json_write_escaped(j->f, s);
}

void hs_json_double(hs_json *j, double v)
{
    before_item(j);
    if (!isfinite(v)) fputs("null", j->f);
    else fprintf(j->f, "%.17g", v);
}

void hs_json_int(hs_json *j, int64_t v)
{
    before_item(j);
    fprintf(j->f, "%lld", (long long)v);
}

void hs_json_bool(hs_json *j, int v)
{
    before_item(j);
    fputs(v ? "true" : "false", j->f);
}

void hs_json_null(hs_json *j)
{
    before_item(j);
    fputs("null", j->f);
}
