/* Reading JSON files back through cJSON: a parsed tree, and the numbers under a key path. */
#include "io/json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/config.h"
#include "kernels/error.h"

#if HS_HAVE_CJSON
#include <cjson/cJSON.h>

/* The whole file in one NUL-terminated buffer (cJSON parses from memory). */
static int slurp(const char *path, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return hs_input_error(path, 0, NULL, "cannot open the file: %s", strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            return HS_FAIL(HS_ERR_RUNTIME, "out of host memory reading %s", path);
        }
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1) break;
        char *grown = realloc(buf, cap * 2);
        if (!grown) free(buf);
        buf = grown;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return hs_input_error(path, 0, NULL, "read error");
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return HS_OK;
}

int hs_json_read_file(const char *path, cJSON **tree)
{
    *tree = NULL;
    char *text = NULL;
    size_t len = 0;
    HS_CHECK(slurp(path, &text, &len));
    const char *end = NULL;
    cJSON *t = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (!t) {
        /* cJSON leaves end at the first character it could not take */
        int line = 1;
        const char *stop = end && end >= text && end <= text + len ? end : text + len;
        for (const char *c = text; c < stop; c++) line += *c == '\n';
        unsigned char bad = (unsigned char)*stop;
        int rc = stop == text + len ? hs_input_error(path, line, NULL, "not JSON: the text ends early")
                 : isprint(bad)     ? hs_input_error(path, line, NULL, "not JSON: unexpected '%c'", bad)
                                    : hs_input_error(path, line, NULL, "not JSON: unexpected byte 0x%02x", bad);
        free(text);
        return rc;
    }
    free(text);
    *tree = t;
    return HS_OK;
}

void hs_json_free(cJSON *tree) { cJSON_Delete(tree); }

/* The element of node named by path[0..n). */
static const cJSON *child(const cJSON *node, const char *name, size_t n)
{
    if (cJSON_IsObject(node)) {
        for (const cJSON *c = node->child; c; c = c->next)
            if (c->string && strlen(c->string) == n && !memcmp(c->string, name, n)) return c;
        return NULL;
    }
    if (!cJSON_IsArray(node) || n == 0 || n > 18) return NULL;
    long long idx = 0;
    for (size_t i = 0; i < n; i++) {
        if (name[i] < '0' || name[i] > '9') return NULL;
        idx = idx * 10 + (name[i] - '0');
    }
    const cJSON *c = node->child;
    while (c && idx-- > 0) c = c->next;
    return c;
}

/* Count (values NULL) or store the numbers under node, depth first; text inside is passed over. */
static int64_t collect(const cJSON *node, double *values, int64_t at)
{
    if (cJSON_IsNumber(node)) {
        if (values) values[at] = node->valuedouble;
        return 1;
    }
    if (cJSON_IsNull(node)) {
        if (values) values[at] = NAN;
        return 1;
    }
    if (cJSON_IsBool(node)) {
        if (values) values[at] = cJSON_IsTrue(node) ? 1.0 : 0.0;
        return 1;
    }
    if (cJSON_IsArray(node) || cJSON_IsObject(node)) {
        int64_t n = 0;
        for (const cJSON *c = node->child; c; c = c->next) n += collect(c, values, at + n);
        return n;
    }
    return 0;
}

/* The node `key` names (dots separate levels), its last element with `last`; NULL when none. */
static const cJSON *find_node(const cJSON *tree, const char *key, int last)
{
    const cJSON *node = tree;
    for (const char *p = key; node && *p;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        node = child(node, p, n);
        p += n + (dot != NULL);
    }
    if (node && last) {
        if (!cJSON_IsArray(node) || !node->child) return NULL;
        node = node->child;
        while (node->next) node = node->next;
    }
    return node;
}

/* Whether x and y hold their numbers under the same keys and array lengths; the first place they
 * part is written to `where` (a path below the compared key). */
static int same_layout(const cJSON *x, const cJSON *y, char *where, size_t len)
{
    if (cJSON_IsObject(x) != cJSON_IsObject(y) || cJSON_IsArray(x) != cJSON_IsArray(y)) {
        snprintf(where, len, "%s", cJSON_IsObject(x) ? "an object here, not there" : cJSON_IsArray(x) ? "an array here, not there" : "a value here, not there");
        return 0;
    }
    if (!cJSON_IsObject(x) && !cJSON_IsArray(x)) return 1;
    const cJSON *a = x->child, *b = y->child;
    for (int i = 0; a && b; a = a->next, b = b->next, i++) {
        if (cJSON_IsObject(x) && strcmp(a->string ? a->string : "", b->string ? b->string : "") != 0) {
            snprintf(where, len, "key '%s' here where the other has '%s'", a->string ? a->string : "", b->string ? b->string : "");
            return 0;
        }
        char inner[512] = "";
        if (!same_layout(a, b, inner, sizeof inner)) {
            if (cJSON_IsObject(x)) snprintf(where, len, "%s: %s", a->string ? a->string : "", inner);
            else snprintf(where, len, "[%d]: %s", i, inner);
            return 0;
        }
    }
    if (a || b) {
        snprintf(where, len, "%s here than there", a ? "more entries" : "fewer entries");
        return 0;
    }
    return 1;
}

int hs_json_same_layout(const cJSON *ta, const cJSON *tb, const char *key, int last, char *where, size_t len)
{
    const cJSON *x = find_node(ta, key, last), *y = find_node(tb, key, last);
    if (!x || !y) return 1; /* hs_json_numbers says what is missing */
    return same_layout(x, y, where, len);
}

int hs_json_numbers(const cJSON *tree, const char *key, int last, const char *source, double **values,
                    int64_t *count)
{
    *values = NULL;
    *count = 0;
    const cJSON *node = find_node(tree, key, 0);
    const char *name = *key ? key : NULL;
    if (!node) return hs_input_error(source, 0, name, "no such key");
    if (last) {
        if (!cJSON_IsArray(node) || !node->child)
            return hs_input_error(source, 0, name, "--last needs a non-empty array here");
        node = find_node(tree, key, 1);
    }
    if (cJSON_IsString(node) || cJSON_IsRaw(node)) return hs_input_error(source, 0, name, "holds text, not numbers");
    int64_t n = collect(node, NULL, 0);
    *values = malloc((size_t)(n ? n : 1) * sizeof **values);
    if (!*values) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for %lld numbers of %s", (long long)n, source);
    collect(node, *values, 0);
    *count = n;
    return HS_OK;
}

#else

int hs_json_read_file(const char *path, struct cJSON **tree)
{
    *tree = NULL;
    return HS_FAIL(HS_ERR_RUNTIME, "reading %s: this build has no JSON reader (install libcjson-dev and rebuild)", path);
}

void hs_json_free(struct cJSON *tree) { (void)tree; }

int hs_json_same_layout(const struct cJSON *ta, const struct cJSON *tb, const char *key, int last, char *where, size_t len)
{
    (void)ta, (void)tb, (void)key, (void)last, (void)where, (void)len;
    return 1;
}

int hs_json_numbers(const struct cJSON *tree, const char *key, int last, const char *source, double **values,
                    int64_t *count)
{
    (void)tree, (void)key, (void)last;
    *values = NULL;
    *count = 0;
    return HS_FAIL(HS_ERR_RUNTIME, "reading %s: this build has no JSON reader (install libcjson-dev and rebuild)", source);
}

#endif
