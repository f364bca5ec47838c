/* Parameter files: our own INI line reader (lines of any length), declared-key validation, overrides, errors. */
#include "io/params.h"

#include <ctype.h>
#include <libgen.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/error.h"

#define MAX_DECLS 1024

static hs_param_decl g_decls[MAX_DECLS];
static int g_ndecls;

typedef enum { SRC_DEFAULT, SRC_FILE, SRC_OVERRIDE } source_kind;

typedef struct {
    const hs_param_decl *decl;
    char *value;        /* as resolved text */
    source_kind source;
    int line;           /* file line */
    char where[80];     /* an override's source in messages: "command line (override N)" or (the option) */
    char *resolved;     /* input path resolved by hs_params_input_path (cached) */
} entry;

struct hs_params {
    char *file;
    entry *entries;     /* one per declared key, in declaration order */
    int n;
};

int hs_params_declare(const hs_param_decl *decls, int count)
{
    for (int i = 0; i < count; i++) {
        for (int j = 0; j < g_ndecls; j++)
            if (!strcmp(g_decls[j].section, decls[i].section) && !strcmp(g_decls[j].key, decls[i].key)) {
                if (&g_decls[j] == &decls[i] || !memcmp(&g_decls[j], &decls[i], sizeof decls[i])) goto next;
                return HS_FAIL(HS_ERR_RUNTIME, "parameter %s.%s declared twice", decls[i].section, decls[i].key);
            }
        if (g_ndecls == MAX_DECLS) return HS_FAIL(HS_ERR_RUNTIME, "too many parameter declarations");
        g_decls[g_ndecls++] = decls[i];
    next:;
    }
    return HS_OK;
}

/* The keys that name input files (hs_params_declare_inputs): no output may be written onto one. */
#define MAX_INPUT_KEYS 64
static const char *g_input_keys[MAX_INPUT_KEYS];
static int g_ninput_keys;

int hs_params_declare_inputs(const char *const *names)
{
    for (; *names; names++) {
        int known = 0;
        for (int i = 0; i < g_ninput_keys && !known; i++) known = !strcmp(g_input_keys[i], *names);
        if (known) continue;
        if (g_ninput_keys == MAX_INPUT_KEYS) return HS_FAIL(HS_ERR_RUNTIME, "too many input-file keys");
        g_input_keys[g_ninput_keys++] = *names;
    }
    return HS_OK;
}

/* ---------------------------------------------------------------- helpers */

static int levenshtein(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    int d[64][64];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int m = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < m) m = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < m) m = d[i - 1][j - 1] + cost;
            /* a swap of two neighbours counts as one edit */
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < m)
                m = d[i - 2][j - 2] + 1;
            d[i][j] = m;
        }
    return d[la][lb];
}

static int section_declared(const char *section)
{
    for (int i = 0; i < g_ndecls; i++)
        if (!strcmp(g_decls[i].section, section)) return 1;
    return 0;
}

/* Nearest declared section name within a small edit distance, or NULL. */
static const char *nearest_section(const char *section)
{
    const char *best = NULL;
    int bestd = 3;
    for (int i = 0; i < g_ndecls; i++) {
        int d = levenshtein(section, g_decls[i].section);
        if (d < bestd) { bestd = d; best = g_decls[i].section; }
    }
    return best;
}

/* Nearest declared key, preferring the same section; writes "section.key" into buf. */
static const char *nearest_key(const char *section, const char *key, char *buf, size_t len)
{
    int bestd = 99, besti = -1;
    for (int i = 0; i < g_ndecls; i++) {
        int d = levenshtein(key, g_decls[i].key) + (strcmp(section, g_decls[i].section) ? 2 : 0);
        if (d < bestd) { bestd = d; besti = i; }
    }
    int limit = (int)strlen(key) / 3 + 1;
    if (limit < 2) limit = 2;
    if (besti < 0 || bestd > limit) return NULL;
    snprintf(buf, len, "%s.%s", g_decls[besti].section, g_decls[besti].key);
    return buf;
}

static const hs_param_decl *find_decl(const char *section, const char *key)
{
    for (int i = 0; i < g_ndecls; i++)
        if (!strcmp(g_decls[i].section, section) && !strcmp(g_decls[i].key, key)) return &g_decls[i];
    return NULL;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) {
        fprintf(stderr, "hpcsim: out of memory\n");
        exit(HS_ERR_RUNTIME);
    }
    return d;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    return s;
}

static const char *type_name(hs_param_type t)
{
    switch (t) {
    case HS_PARAM_INT: return "integer";
    case HS_PARAM_REAL: return "real";
    case HS_PARAM_BOOL: return "boolean";
    case HS_PARAM_STRING: return "string";
    case HS_PARAM_ENUM: return "choice";
    case HS_PARAM_INT_LIST: return "integer list";
    case HS_PARAM_REAL_LIST: return "real list";
    case HS_PARAM_NAMES: return "names";
    }
    return "?";
}

/* Elements of a list are separated by blanks or by one comma (blanks around it allowed): a comma
 * with no element before or after it ("4,", ",4", "a,,b") is a typo that was read as a shorter
 * list.  Commas inside double quotes (a quoted name) are text. */
size_t hs_text_bare_cr_line(char *s, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++)
        if (s[i] == '\r' && s[i + 1] != '\n') {
            s[i] = '\0';
            return i;
        }
    return len;
}

int64_t hs_text_bare_cr_part(const char *s, size_t at, size_t *start)
{
    int64_t part = 0;
    *start = 0;
    for (size_t i = 0; i < at; i++) /* s[i + 1] exists: at is within s */
        if (s[i] == '\r' && s[i + 1] != '\n') part++, *start = i + 1;
    return part;
}

int hs_params_list_has_empty(const char *s)
{
    int pending = 1, commas = 0, quoted = 0; /* at the start a comma has nothing before it */
    for (; *s; s++) {
        if (*s == '"') quoted = !quoted;
        if (quoted || (*s != ',' && *s != ' ' && *s != '\t')) {
            pending = 0;
        } else if (*s == ',') {
            if (pending) return 1;
            pending = 1, commas++;
        }
    }
    return pending && commas > 0;
}

/* Names separated by blanks or commas; one in double quotes may hold both ("left wall", right): a
 * whole-value quote cannot say which blanks part names.  Stores the first max names (cut to
 * HS_PARAM_NAME_MAX - 1 characters) in out; returns how many there are, or -1 with the reason in *why. */
static int split_names(const char *s, char (*out)[HS_PARAM_NAME_MAX], int max, const char **why)
{
    int n = 0;
    if (hs_params_list_has_empty(s)) return *why = "an empty name (a comma with no name before or after it)", -1;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == ',') s++;
        if (!*s) return n;
        const char *b = s, *e;
        if (*s == '"') {
            b = s + 1;
            e = strchr(b, '"');
            if (!e) return *why = "a name's opening double quote is not closed", -1;
            if (e == b) return *why = "an empty quoted name", -1;
            s = e + 1;
            if (*s && *s != ' ' && *s != '\t' && *s != ',') return *why = "text right after a quoted name's closing quote", -1;
        } else {
            while (*s && *s != ' ' && *s != '\t' && *s != ',') {
                if (*s == '"') return *why = "a double quote inside a name (quote the whole name)", -1;
                s++;
            }
            e = s;
        }
        if (n < max) {
            size_t len = (size_t)(e - b) < HS_PARAM_NAME_MAX - 1 ? (size_t)(e - b) : HS_PARAM_NAME_MAX - 1;
            memcpy(out[n], b, len);
            out[n][len] = '\0';
        }
        n++;
    }
}

/* Why a number does not parse (NUM_OK when it does). */
enum { NUM_OK, NUM_SYNTAX, NUM_NONFINITE, NUM_OVERFLOW, NUM_UNDERFLOW, NUM_EMPTY };

/* A whole decimal integer that fits in 64 bits. */
static int parse_int(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end) return NUM_SYNTAX;
    if (errno == ERANGE) return NUM_OVERFLOW;
    *v = x;
    return NUM_OK;
}

/* A whole finite real; a nonzero value that rounds to 0 (underflow) or to infinity (overflow)
 * is refused, subnormals are kept. */
static int parse_real(const char *s, double *v)
{
    char *end;
    if (strpbrk(s, "xX")) return NUM_SYNTAX; /* strtod reads hexadecimal ("0x10", "0x1p3"); integers refuse it, so do reals */
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end) return NUM_SYNTAX;
    if (errno == ERANGE && isinf(x)) return NUM_OVERFLOW;
    if (errno == ERANGE && x == 0) return NUM_UNDERFLOW;
    if (!isfinite(x)) return NUM_NONFINITE;
    *v = x;
    return NUM_OK;
}

/* The end of "value TOKEN ..." for a number that parses but cannot be held. */
static const char *number_problem(int why, int is_int)
{
    switch (why) {
    case NUM_NONFINITE: return "is not a finite number";
    case NUM_OVERFLOW: return is_int ? "is outside the 64-bit integer range" : "overflows a double (magnitude above 1.8e308)";
    case NUM_UNDERFLOW: return "underflows a double (nonzero magnitude below 4.9e-324)";
    case NUM_EMPTY: return "has an empty element (a comma with no number before or after it)";
    }
    return "is not a number";
}

const char *hs_parse_real(const char *s, double *v)
{
    int why = parse_real(s, v);
    return why == NUM_OK ? NULL : number_problem(why, 0);
}

static int parse_bool(const char *s, int *v)
{
    static const char *yes[] = {"true", "yes", "on", "1"}, *no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i])) { *v = 1; return 1; }
        if (!strcasecmp(s, no[i])) { *v = 0; return 1; }
    }
    return 0;
}

int hs_params_choice_index(const char *choices, const char *v)
{
    size_t n = strlen(v);
    int i = 0;
    for (const char *c = choices; c && *c; i++) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && !strncmp(c, v, n)) return i;
        c = bar ? bar + 1 : NULL;
    }
    return -1;
}

static int in_choices(const char *choices, const char *v) { return hs_params_choice_index(choices, v) >= 0; }

/* The shortest %g text (15 to 17 digits) that reads back as v: 1e+300, not 1.0000000000000001e+300. */
static void shortest_real(double v, char *buf, size_t len)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, len, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static void format_range(const hs_param_decl *d, char *buf, size_t len)
{
    /* an unbounded side is still bounded by HS_NO_MIN / HS_NO_MAX (+-1e300): say that number, not
     * "inf", so that a refused 1e308 reads as out of range */
    char lo[32], hi[32];
    shortest_real(d->min, lo, sizeof lo);
    shortest_real(d->max, hi, sizeof hi);
    snprintf(buf, len, "[%s, %s]", lo, hi);
}

/* Split a list value on spaces and commas into vals (reals) or ivals (integers), at most max of
 * them; returns the count, or -1 with the first bad element in bad and its NUM_ reason in *why. */
static int split_list(const char *value, int is_int, double *vals, int64_t *ivals, int max, char *bad, size_t badlen,
                      int *why)
{
    if (hs_params_list_has_empty(value)) {
        snprintf(bad, badlen, "%s", value);
        *why = NUM_EMPTY;
        return -1;
    }
    char *tmp = xstrdup(value);
    int n = 0;
    for (char *tok = strtok(tmp, " ,\t"); tok; tok = strtok(NULL, " ,\t")) {
        double v = 0;
        int64_t iv = 0;
        int rc = is_int ? parse_int(tok, &iv) : parse_real(tok, &v);
        if (rc != NUM_OK) {
            snprintf(bad, badlen, "%s", tok);
            *why = rc;
            free(tmp);
            return -1;
        }
        if (n < max) {
            if (vals) vals[n] = is_int ? (double)iv : v;
            if (ivals) ivals[n] = iv;
        }
        n++;
    }
    free(tmp);
    return n;
}

static int check_list(const hs_param_decl *d, const char *value, const char *source, int line, const char *name,
                      const char *range)
{
    int is_int = d->type == HS_PARAM_INT_LIST, why = NUM_OK, max = (int)(strlen(value) / 2 + 1);
    double *vals = malloc(sizeof *vals * (size_t)max);
    char bad[256];
    if (!vals) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int n = split_list(value, is_int, vals, NULL, max, bad, sizeof bad, &why), rc = HS_OK;
    char cnt[16];
    snprintf(cnt, sizeof cnt, "%d", n);
    if (n < 0 && why == NUM_SYNTAX)
        rc = hs_input_error(source, line, name, "expected a list of %s numbers, got '%s'", is_int ? "integer" : "real", bad);
    else if (n < 0 && why == NUM_EMPTY)
        rc = hs_input_error(source, line, name, "'%s' %s", bad, number_problem(why, is_int));
    else if (n < 0)
        rc = hs_input_error(source, line, name, "list value %s %s", bad, number_problem(why, is_int));
    else if (n == 0)
        rc = hs_input_error(source, line, name, "empty list");
    else if (d->choices && !in_choices(d->choices, cnt))
        rc = hs_input_error(source, line, name, "has %d value(s); expected %s", n, d->choices);
    for (int i = 0; rc == HS_OK && i < n; i++)
        if (vals[i] < d->min || vals[i] > d->max)
            rc = hs_input_error(source, line, name, "value %.17g is out of range %s", vals[i], range);
    free(vals);
    return rc;
}

/* Check one value against its declaration; on failure, raise an input error at source:line. */
static int check_value(const hs_param_decl *d, const char *value, const char *source, int line)
{
    char name[160], range[80];
    snprintf(name, sizeof name, "%s.%s", d->section, d->key);
    format_range(d, range, sizeof range);
    switch (d->type) {
    case HS_PARAM_INT: {
        int64_t v = 0;
        int why = parse_int(value, &v);
        if (why == NUM_SYNTAX) return hs_input_error(source, line, name, "expected an integer, got '%s'", value);
        if (why != NUM_OK) return hs_input_error(source, line, name, "value %s %s", value, number_problem(why, 1));
        if ((double)v < d->min || (double)v > d->max)
            return hs_input_error(source, line, name, "value %s is out of range %s", value, range);
        return HS_OK;
    }
    case HS_PARAM_REAL: {
        double v = 0;
        int why = parse_real(value, &v);
        if (why == NUM_SYNTAX) return hs_input_error(source, line, name, "expected a real number, got '%s'", value);
        if (why != NUM_OK) return hs_input_error(source, line, name, "value %s %s", value, number_problem(why, 0));
        if (v < d->min || v > d->max)
            return hs_input_error(source, line, name, "value %s is out of range %s", value, range);
        return HS_OK;
    }
    case HS_PARAM_BOOL: {
        int v;
        if (!parse_bool(value, &v))
            return hs_input_error(source, line, name, "expected true or false, got '%s'", value);
        return HS_OK;
    }
    case HS_PARAM_STRING:
        /* empty means unset, for keys whose default is empty; the others need a value */
        if (!*value && !(d->def && !*d->def)) return hs_input_error(source, line, name, "empty value");
        return HS_OK;
    case HS_PARAM_ENUM:
        if (!in_choices(d->choices, value))
            return hs_input_error(source, line, name, "'%s' is not one of %s", value, d->choices);
        return HS_OK;
    case HS_PARAM_INT_LIST:
    case HS_PARAM_REAL_LIST:
        return check_list(d, value, source, line, name, range);
    case HS_PARAM_NAMES: {
        const char *why = NULL;
        if (!*value && !(d->def && !*d->def)) return hs_input_error(source, line, name, "empty value");
        if (split_names(value, NULL, 0, &why) < 0) return hs_input_error(source, line, name, "%s in '%s'", why, value);
        return HS_OK;
    }
    }
    return HS_OK;
}

/* ---------------------------------------------------------------- parsing */

static entry *entry_of(hs_params *p, const hs_param_decl *d)
{
    for (int i = 0; i < p->n; i++)
        if (p->entries[i].decl == d) return &p->entries[i];
    return NULL;
}

static int unknown_section(const char *source, int line, const char *section)
{
    const char *near = nearest_section(section);
    return near ? hs_input_error(source, line, NULL, "[%s]: unknown section (did you mean [%s]?)", section, near)
                : hs_input_error(source, line, NULL, "[%s]: unknown section", section);
}

/* Store a value from the file or an override, after validating it. */
static int set_value(hs_params *p, const char *source, int line, const char *section, const char *key,
                     const char *raw, source_kind kind)
{
    char name[300];
    snprintf(name, sizeof name, "%s.%s", section, key);
    if (!section_declared(section)) {
        const char *near = nearest_section(section);
        if (kind == SRC_FILE) return unknown_section(source, line, section);
        return near ? hs_input_error(source, line, name, "unknown section '%s' (did you mean '%s'?)", section, near)
                    : hs_input_error(source, line, name, "unknown section '%s'", section);
    }
    const hs_param_decl *d = find_decl(section, key);
    if (!d) {
        char buf[300];
        const char *near = nearest_key(section, key, buf, sizeof buf);
        return near ? hs_input_error(source, line, name, "unknown key (did you mean %s?)", near)
                    : hs_input_error(source, line, name, "unknown key");
    }
    char *value = xstrdup(raw), *v = trim(value);
    size_t vl = strlen(v);
    /* a list of names keeps its quotes: they say which blanks belong to a name */
    const int keep_quotes = d->type == HS_PARAM_NAMES;
    if (!keep_quotes && vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
        v[vl - 1] = '\0';
        v++;
    } else if (!keep_quotes && v[0] == '"') { /* `path = "o` was taken as the name "o */
        free(value);
        return hs_input_error(source, line, name, "syntax error: the value's opening double quote is not closed");
    }
    entry *e = entry_of(p, d);
    int rc = HS_OK;
    if (kind == SRC_FILE && e->source == SRC_FILE)
        rc = hs_input_error(source, line, name, "duplicate key (first given at line %d)", e->line);
    if (rc == HS_OK) rc = check_value(d, v, source, line);
    if (rc == HS_OK) {
        free(e->value);
        e->value = xstrdup(v);
        e->source = kind;
        e->line = line;
        if (kind == SRC_OVERRIDE) snprintf(e->where, sizeof e->where, "%s", source);
    }
    free(value);
    return rc;
}

/* The INI reader: one line at a time, of any length.  A line is blank, a comment ('#' or ';'),
 * '[section]' or 'key = value'; a '#' or ';' after a blank starts a comment (so "a#b" survives).
 * The first problem stops the reading, reported as file:line. */
typedef struct {
    hs_params *p;
    const char *file;
    int line;          /* the current line */
    int content_lines; /* lines that are neither blank nor comments */
    char *section;     /* the latest [section], NULL before the first */
} ini_reader;

static void strip_comment(char *s)
{
    int quoted = 0; /* inside a value's double quotes a '#' or ';' is text ("o # x" became `"o`) */
    for (char *h = s; *h; h++) {
        if (*h == '"') quoted = !quoted;
        if (!quoted && (*h == '#' || *h == ';') && (h == s || h[-1] == ' ' || h[-1] == '\t')) {
            *h = '\0';
            return;
        }
    }
}

static int read_section(ini_reader *r, char *s)
{
    char *close = strchr(s, ']');
    if (!close) return hs_input_error(r->file, r->line, NULL, "syntax error: section header without its closing ']'");
    if (*trim(close + 1))
        return hs_input_error(r->file, r->line, NULL, "syntax error: text after the section header's closing ']'");
    *close = '\0';
    char *name = trim(s + 1);
    if (!*name) return hs_input_error(r->file, r->line, NULL, "syntax error: empty section name '[]'");
    if (!section_declared(name)) return unknown_section(r->file, r->line, name);
    free(r->section);
    r->section = xstrdup(name);
    return HS_OK;
}

static int read_pair(ini_reader *r, char *s)
{
    char *eq = strchr(s, '=');
    if (!eq)
        return hs_input_error(r->file, r->line, NULL, "syntax error: expected '[section]', 'key = value' or a # comment");
    *eq = '\0';
    char *key = trim(s);
    if (!*key) return hs_input_error(r->file, r->line, NULL, "syntax error: '= value' without a key");
    if (!r->section) return hs_input_error(r->file, r->line, key, "key outside any [section]");
    return set_value(r->p, r->file, r->line, r->section, key, eq + 1, SRC_FILE);
}

/* A byte no text parameter file holds: a control character other than tab, CR and LF. */
static int binary_byte(unsigned char c) { return (c < 32 && c != '\n' && c != '\r' && c != '\t') || c == 127; }

int hs_text_binary_byte(const char *s, size_t len, size_t *at)
{
    for (size_t i = 0; i < len; i++)
        if (binary_byte((unsigned char)s[i])) {
            *at = i;
            return (unsigned char)s[i];
        }
    return -1;
}

/* One line of fp into *buf (NUL-terminated, with its '\n'), like getline, but it stops right after
 * a binary byte, which read_line then refuses: getline first read the whole "line" of a binary file
 * named by mistake (all of /dev/zero, forever, growing the buffer).  Returns the bytes stored, or -1
 * at the end of the file or on a read error (ferror says which).  Lines may be of any length. */
static ssize_t get_text_line(FILE *fp, char **buf, size_t *cap)
{
    size_t n = 0;
    int c;
    while ((c = getc(fp)) != EOF) {
        if (n + 2 > *cap) {
            size_t ncap = *cap ? 2 * *cap : 256;
            char *nb = realloc(*buf, ncap);
            if (!nb) {
                errno = ENOMEM;
                return -1;
            }
            *buf = nb, *cap = ncap;
        }
        (*buf)[n++] = (char)c;
        if (c == '\n' || binary_byte((unsigned char)c)) break;
    }
    if (n == 0) return -1;
    (*buf)[n] = '\0';
    return (ssize_t)n;
}

/* One line as get_text_line returned it (len bytes, which may end in a binary byte). */
static int read_line(ini_reader *r, char *s, size_t len)
{
    r->line++;
    size_t at;
    const int c = hs_text_binary_byte(s, len, &at);
    if (c >= 0) return hs_input_error(r->file, r->line, NULL, "binary data (byte 0x%02x): not a text parameter file", c);
    if (r->line == 1 && !strncmp(s, "\xef\xbb\xbf", 3)) s += 3; /* a UTF-8 byte-order mark */
    strip_comment(s);
    s = trim(s);
    if (!*s) return HS_OK;
    r->content_lines++;
    return *s == '[' ? read_section(r, s) : read_pair(r, s);
}

static int read_file(hs_params *p, const char *file, FILE *fp)
{
    ini_reader r = {.p = p, .file = file};
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = HS_OK;
    errno = 0;
    while (rc == HS_OK && (len = get_text_line(fp, &buf, &cap)) >= 0) {
        /* a bare-CR file was one line, refused as "text after the section header" */
        for (size_t start = 0, n; rc == HS_OK && start < (size_t)len; start += n + 1) {
            n = hs_text_bare_cr_line(buf + start, (size_t)len - start);
            rc = read_line(&r, buf + start, n);
        }
    }
    if (rc == HS_OK && !feof(fp))
        rc = hs_input_error(file, r.line + 1, NULL, "cannot read parameter file: %s", strerror(errno ? errno : EIO));
    if (rc == HS_OK && r.content_lines == 0)
        rc = hs_input_error(file, r.line > 0 ? r.line : 1, NULL,
                            "empty parameter file: expected at least '[run]' and 'solver = NAME'");
    free(buf);
    free(r.section);
    return rc;
}

static hs_params *params_new(void)
{
    hs_params *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->entries = calloc((size_t)g_ndecls + 1, sizeof *p->entries);
    p->n = g_ndecls;
    for (int i = 0; i < g_ndecls; i++) {
        p->entries[i].decl = &g_decls[i];
        p->entries[i].value = g_decls[i].def ? xstrdup(g_decls[i].def) : NULL;
        p->entries[i].source = SRC_DEFAULT;
    }
    return p;
}

static int load_file(hs_params *p, const char *file)
{
    struct stat sb;
    if (stat(file, &sb) != 0) return hs_input_error(file, 0, NULL, "cannot open parameter file: %s", strerror(errno));
    if (S_ISDIR(sb.st_mode)) return hs_input_error(file, 0, NULL, "cannot read parameter file: is a directory");
    FILE *fp = fopen(file, "r");
    if (!fp) return hs_input_error(file, 0, NULL, "cannot open parameter file: %s", strerror(errno));
    int rc = read_file(p, file, fp);
    fclose(fp);
    return rc;
}

/* origin: the override's name in messages ("override N", or the option that stands for it). */
static int apply_override(hs_params *p, const char *origin, const char *arg)
{
    char *buf = xstrdup(arg), *eq = strchr(buf, '='), *dot = strchr(buf, '.');
    char src[80];
    snprintf(src, sizeof src, "command line (%s)", origin);
    int rc;
    if (!eq || !dot || dot > eq) {
        rc = hs_input_error(src, 0, NULL, "'%s': expected section.key=value", arg);
    } else {
        *eq = '\0';
        *dot = '\0';
        rc = set_value(p, src, 0, trim(buf), trim(dot + 1), eq + 1, SRC_OVERRIDE);
    }
    free(buf);
    return rc;
}

int hs_params_load(const char *file, int noverrides, char *const *overrides, hs_params **out)
{
    return hs_params_load_labeled(file, noverrides, overrides, NULL, out);
}

int hs_params_load_labeled(const char *file, int noverrides, char *const *overrides, const char *const *labels, hs_params **out)
{
    *out = NULL;
    hs_params *p = params_new();
    if (!p) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    p->file = xstrdup(file ? file : "");
    int rc = file ? load_file(p, file) : HS_OK;
    for (int i = 0, typed = 0; rc == HS_OK && i < noverrides; i++) {
        char origin[48];
        if (labels && labels[i]) snprintf(origin, sizeof origin, "%s", labels[i]);
        else snprintf(origin, sizeof origin, "override %d", ++typed);
        rc = apply_override(p, origin, overrides[i]);
    }
    for (int i = 0; rc == HS_OK && i < p->n; i++) {
        entry *e = &p->entries[i];
        if (!e->value) {
            char name[160];
            snprintf(name, sizeof name, "%s.%s", e->decl->section, e->decl->key);
            rc = hs_input_error(file ? file : "command line", 0, name, "required key is missing (%s)", e->decl->help);
        }
    }
    if (rc != HS_OK) {
        hs_params_free(p);
        return rc;
    }
    *out = p;
    return HS_OK;
}

void hs_params_free(hs_params *p)
{
    if (!p) return;
    for (int i = 0; i < p->n; i++) {
        free(p->entries[i].value);
        free(p->entries[i].resolved);
    }
    free(p->entries);
    free(p->file);
    free(p);
}

/* ---------------------------------------------------------------- access */

static const entry *lookup(const hs_params *p, const char *name, hs_param_type t1, hs_param_type t2)
{
    const char *dot = strchr(name, '.');
    for (int i = 0; dot && i < p->n; i++) {
        const hs_param_decl *d = p->entries[i].decl;
        if (strlen(d->section) == (size_t)(dot - name) && !strncmp(d->section, name, (size_t)(dot - name)) &&
            !strcmp(d->key, dot + 1)) {
            if (d->type != t1 && d->type != t2) {
                fprintf(stderr, "hpcsim: internal error: %s read as %s but declared %s\n", name, type_name(t1), type_name(d->type));
                abort();
            }
            return &p->entries[i];
        }
    }
    fprintf(stderr, "hpcsim: internal error: parameter %s is not declared\n", name);
    abort();
}

int64_t hs_params_int(const hs_params *p, const char *name)
{
    int64_t v = 0;
    parse_int(lookup(p, name, HS_PARAM_INT, HS_PARAM_INT)->value, &v);
    return v;
}

double hs_params_real(const hs_params *p, const char *name)
{
    double v = 0;
    parse_real(lookup(p, name, HS_PARAM_REAL, HS_PARAM_REAL)->value, &v);
    return v;
}

int hs_params_bool(const hs_params *p, const char *name)
{
    int v = 0;
    parse_bool(lookup(p, name, HS_PARAM_BOOL, HS_PARAM_BOOL)->value, &v);
    return v;
}

const char *hs_params_string(const hs_params *p, const char *name)
{
    return lookup(p, name, HS_PARAM_STRING, HS_PARAM_ENUM)->value;
}

int hs_params_names(const hs_params *p, const char *name, char (*out)[HS_PARAM_NAME_MAX], int max)
{
    const char *why = NULL;
    return split_names(lookup(p, name, HS_PARAM_NAMES, HS_PARAM_NAMES)->value, out, max, &why);
}

int hs_params_enum(const hs_params *p, const char *name)
{
    const entry *e = lookup(p, name, HS_PARAM_ENUM, HS_PARAM_ENUM);
    int i = hs_params_choice_index(e->decl->choices, e->value);
    if (i < 0) {
        fprintf(stderr, "hpcsim: internal error: %s = '%s' is not one of %s\n", name, e->value, e->decl->choices);
        abort();
    }
    return i;
}

int hs_params_int_list(const hs_params *p, const char *name, int64_t *out, int max)
{
    char bad[64];
    int why;
    return split_list(lookup(p, name, HS_PARAM_INT_LIST, HS_PARAM_INT_LIST)->value, 1, NULL, out, max, bad, sizeof bad, &why);
}

int hs_params_real_list(const hs_params *p, const char *name, double *out, int max)
{
    char bad[64];
    int why;
    return split_list(lookup(p, name, HS_PARAM_REAL_LIST, HS_PARAM_REAL_LIST)->value, 0, out, NULL, max, bad, sizeof bad, &why);
}

static const entry *lookup_any(const hs_params *p, const char *name)
{
    const hs_param_decl *d = NULL;
    const char *dot = strchr(name, '.');
    for (int i = 0; dot && i < p->n; i++) {
        d = p->entries[i].decl;
        if (strlen(d->section) == (size_t)(dot - name) && !strncmp(d->section, name, (size_t)(dot - name)) &&
            !strcmp(d->key, dot + 1))
            return &p->entries[i];
    }
    fprintf(stderr, "hpcsim: internal error: parameter %s is not declared\n", name);
    abort();
}

int hs_params_is_set(const hs_params *p, const char *name) { return lookup_any(p, name)->source != SRC_DEFAULT; }

const char *hs_params_first_set(const hs_params *p, const char *const *keys, const char *fallback)
{
    for (int k = 0; keys[k]; k++)
        if (lookup_any(p, keys[k])->source == SRC_OVERRIDE) return keys[k];
    for (int k = 0; keys[k]; k++)
        if (lookup_any(p, keys[k])->source == SRC_FILE) return keys[k];
    return fallback;
}

int hs_params_resolve_default(const hs_params *p, const char *name, double value)
{
    /* the set is const to its readers; a defaulted value is the one field settled after loading */
    entry *e = (entry *)lookup(p, name, HS_PARAM_REAL, HS_PARAM_INT);
    if (e->source != SRC_DEFAULT || strtod(e->value, NULL) == value) return HS_OK;
    char buf[64];
    if (e->decl->type == HS_PARAM_INT) snprintf(buf, sizeof buf, "%lld", (long long)value);
    else shortest_real(value, buf, sizeof buf);
    char *v = strdup(buf);
    if (!v) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    free(e->value);
    e->value = v;
    return HS_OK;
}

static int entry_against(const entry *e, const entry *cause)
{
    return e->source != SRC_DEFAULT && !(e->source == SRC_FILE && cause && cause->source == SRC_OVERRIDE);
}

int hs_params_set_against(const hs_params *p, const char *name, const char *cause)
{
    return entry_against(lookup_any(p, name), lookup_any(p, cause));
}

int hs_params_unused(const hs_params *p, const char *name, const char *cause)
{
    if (!hs_params_set_against(p, name, cause)) return HS_OK;
    return hs_params_error(p, name, "is not used with %s = %s", cause, lookup_any(p, cause)->value);
}

const char *hs_params_input_path(const hs_params *p, const char *name)
{
    entry *e = (entry *)lookup(p, name, HS_PARAM_STRING, HS_PARAM_STRING);
    const char *v = e->value;
    if (e->resolved) return e->resolved;
    if (!v[0] || v[0] == '/' || e->source != SRC_FILE || access(v, F_OK) == 0) return v;
    /* not found from the working directory: try beside the parameter file */
    const char *slash = strrchr(p->file, '/');
    if (!slash) return v;
    size_t dir = (size_t)(slash - p->file) + 1, len = dir + strlen(v) + 1;
    char *path = malloc(len);
    if (!path) return v;
    memcpy(path, p->file, dir);
    strcpy(path + dir, v);
    if (access(path, F_OK) != 0) {
        free(path);
        return v;
    }
    e->resolved = path;
    return path;
}

int hs_params_error(const hs_params *p, const char *name, const char *fmt, ...)
{
    const entry *e = lookup_any(p, name);
    char msg[8192]; /* a deep path can be named twice: 1024 bytes cut off the cause after it */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (e->source == SRC_FILE) return hs_input_error(p->file, e->line, name, "%s", msg);
    if (e->source == SRC_OVERRIDE) return hs_input_error(e->where, 0, name, "%s", msg);
    return hs_input_error(*p->file ? p->file : "command line", 0, name, "%s (default value)", msg);
}

const char *hs_params_file(const hs_params *p) { return p->file; }

/* Sections worth showing: the driver's, the active solver's, and any the user touched; the
 * sections of other solvers only add noise to `check` and to the files' metadata. */
static int section_relevant(const hs_params *p, const char *section)
{
    if (!strcmp(section, "run") || !strcmp(section, "output") || !strcmp(section, "checkpoint")) return 1;
    for (int i = 0; i < p->n; i++) {
        const entry *e = &p->entries[i];
        if (!strcmp(e->decl->section, "run") && !strcmp(e->decl->key, "solver") && e->value && !strcmp(e->value, section))
            return 1;
        if (!strcmp(e->decl->section, section) && e->source != SRC_DEFAULT) return 1;
    }
    return 0;
}

static entry *sorted_entries(const hs_params *p)
{
    entry *s = malloc(sizeof *s * (size_t)(p->n ? p->n : 1));
    if (!s) return NULL;
    memcpy(s, p->entries, sizeof *s * (size_t)p->n);
    /* stable by section: entries keep declaration order inside a section */
    for (int i = 1; i < p->n; i++) {
        entry t = s[i];
        int j = i - 1;
        while (j >= 0 && strcmp(s[j].decl->section, t.decl->section) > 0) {
            s[j + 1] = s[j];
            j--;
        }
        s[j + 1] = t;
    }
    return s;
}

void hs_params_print(const hs_params *p, FILE *out)
{
    entry *s = sorted_entries(p);
    if (!s) return;
    const char *cur = "";
    for (int i = 0; i < p->n; i++) {
        const entry *e = &s[i];
        if (!section_relevant(p, e->decl->section)) continue;
        if (strcmp(cur, e->decl->section)) {
            cur = e->decl->section;
            fprintf(out, "[%s]\n", cur);
        }
        char src[256];
        if (e->source == SRC_FILE) snprintf(src, sizeof src, "%s:%d", p->file, e->line);
        else if (e->source == SRC_OVERRIDE) snprintf(src, sizeof src, "override");
        else snprintf(src, sizeof src, "default");
        int width = (int)(strlen(e->decl->key) + 3 + strlen(e->value));
        fprintf(out, "%s = %s%*s # %s\n", e->decl->key, e->value, width < 40 ? 40 - width : 0, "", src);
    }
    free(s);
}

char *hs_params_to_ini(const hs_params *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    entry *s = sorted_entries(p);
    if (!mem || !s) {
        if (mem) fclose(mem);
        free(buf);
        free(s);
        return NULL;
    }
    const char *cur = "";
    for (int i = 0; i < p->n; i++) {
        if (!section_relevant(p, s[i].decl->section)) continue;
        if (strcmp(cur, s[i].decl->section)) {
            cur = s[i].decl->section;
            fprintf(mem, "[%s]\n", cur);
        }
        fprintf(mem, "%s = %s\n", s[i].decl->key, s[i].value);
    }
    free(s);
    if (fclose(mem) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

void hs_params_print_declarations(FILE *out)
{
    const char *cur = "";
    for (int i = 0; i < g_ndecls; i++) {
        const hs_param_decl *d = &g_decls[i];
        if (strcmp(cur, d->section)) {
            cur = d->section;
            fprintf(out, "[%s]\n", cur);
        }
        char extra[200] = "";
        if (d->type == HS_PARAM_ENUM) snprintf(extra, sizeof extra, " one of %s", d->choices);
        else if (d->type == HS_PARAM_INT || d->type == HS_PARAM_REAL || d->type == HS_PARAM_INT_LIST ||
                 d->type == HS_PARAM_REAL_LIST) {
            if (d->min > HS_NO_MIN || d->max < HS_NO_MAX) {
                char r[80];
                format_range(d, r, sizeof r);
                snprintf(extra, sizeof extra, " in %s", r);
            }
        }
        fprintf(out, "  %-22s %s%s, %s: %s\n", d->key, type_name(d->type), extra,
                d->def ? "default" : "required", d->def ? d->def : "");
        fprintf(out, "  %-22s   %s\n", "", d->help);
    }
}

/* Markdown-safe text: '|' escaped (a table cell), newlines as spaces. */
static void md_cell(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|') fputs("\\|", out);
        else if (*s == '\n') fputc(' ', out);
        else fputc(*s, out);
    }
}

/* A bound for people: unbounded sides (HS_NO_MIN / HS_NO_MAX) left out. */
static void md_range(FILE *out, const hs_param_decl *d)
{
    char lo[32], hi[32];
    shortest_real(d->min, lo, sizeof lo);
    shortest_real(d->max, hi, sizeof hi);
    int has_lo = d->min > HS_NO_MIN, has_hi = d->max < HS_NO_MAX;
    if (d->min > 0 && d->min <= 1e-299) snprintf(lo, sizeof lo, "0 (excluded)"); /* the "positive" bound */
    if (has_lo && has_hi) fprintf(out, "%s to %s", lo, hi);
    else if (d->min > 0 && d->min <= 1e-299) fputs("&gt; 0", out);
    else if (has_lo) fprintf(out, "&ge; %s", lo);
    else if (has_hi) fprintf(out, "&le; %s", hi);
}

int hs_params_print_markdown(FILE *out, int nsections, const char *const *sections)
{
    for (int k = 0; k < nsections; k++)
        if (!section_declared(sections[k])) {
            char known[2048] = "";
            const char *last = "";
            for (int i = 0; i < g_ndecls; i++)
                if (strcmp(last, g_decls[i].section)) {
                    last = g_decls[i].section;
                    if (!strstr(known, last)) {
                        strncat(known, known[0] ? ", " : "", sizeof known - strlen(known) - 1);
                        strncat(known, last, sizeof known - strlen(known) - 1);
                    }
                }
            return hs_input_error(NULL, 0, NULL, "unknown section '%s' (known: %s)", sections[k], known);
        }
    int first = 1;
    for (int i = 0; i < g_ndecls; i++) {
        const hs_param_decl *d = &g_decls[i];
        int wanted = nsections == 0;
        for (int k = 0; k < nsections && !wanted; k++) wanted = !strcmp(sections[k], d->section);
        if (!wanted) continue;
        if (i == 0 || strcmp(g_decls[i - 1].section, d->section)) {
            fprintf(out, "%s### [%s]\n\n| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n", first ? "" : "\n",
                    d->section);
            first = 0;
        }
        fprintf(out, "| `%s.%s` | %s | ", d->section, d->key, type_name(d->type));
        if (!d->def) fputs("(required)", out);
        else if (!*d->def) fputs("(empty)", out);
        else {
            fputc('`', out);
            md_cell(out, d->def);
            fputc('`', out);
        }
        fputs(" | ", out);
        if (d->type == HS_PARAM_ENUM) {
            const char *c = d->choices;
            while (c && *c) {
                const char *bar = strchr(c, '|');
                int n = bar ? (int)(bar - c) : (int)strlen(c);
                fprintf(out, "`%.*s`%s", n, c, bar ? ", " : "");
                c = bar ? bar + 1 : NULL;
            }
        } else if (d->type == HS_PARAM_INT || d->type == HS_PARAM_REAL || d->type == HS_PARAM_INT_LIST ||
                   d->type == HS_PARAM_REAL_LIST) {
            md_range(out, d);
            if ((d->type == HS_PARAM_INT_LIST || d->type == HS_PARAM_REAL_LIST) && d->choices) {
                /* allowed lengths "1|2|3" as "1, 2 or 3 values" */
                fputs(d->min > HS_NO_MIN || d->max < HS_NO_MAX ? "; " : "", out);
                const char *c = d->choices;
                while (c && *c) {
                    const char *bar = strchr(c, '|');
                    int n = bar ? (int)(bar - c) : (int)strlen(c);
                    const char *sep = !bar ? "" : strchr(bar + 1, '|') ? ", " : " or ";
                    fprintf(out, "%.*s%s", n, c, sep);
                    c = bar ? bar + 1 : NULL;
                }
                fputs(" values", out);
            }
        }
        fputs(" | ", out);
        md_cell(out, d->help);
        fputs(" |\n", out);
    }
    return HS_OK;
}

/* ---------------------------------------------------------------- comparing with a stored set */

/* Equal as values of the declared type: numbers compare as numbers (so "0.1" equals "1e-1"), the
 * rest as text. */
static int same_value(const hs_param_decl *d, const char *a, const char *b)
{
    switch (d->type) {
    case HS_PARAM_INT:
    case HS_PARAM_REAL: {
        double x, y;
        return parse_real(a, &x) == NUM_OK && parse_real(b, &y) == NUM_OK ? x == y : !strcmp(a, b);
    }
    case HS_PARAM_BOOL: {
        int x, y;
        return parse_bool(a, &x) && parse_bool(b, &y) ? x == y : !strcmp(a, b);
    }
    case HS_PARAM_INT_LIST:
    case HS_PARAM_REAL_LIST: {
        int ma = (int)(strlen(a) / 2 + 1), mb = (int)(strlen(b) / 2 + 1), why = NUM_OK, same = 0;
        double *xa = malloc(sizeof *xa * (size_t)ma), *xb = malloc(sizeof *xb * (size_t)mb);
        char bad[256];
        int na = xa ? split_list(a, 0, xa, NULL, ma, bad, sizeof bad, &why) : -1;
        int nb = xb ? split_list(b, 0, xb, NULL, mb, bad, sizeof bad, &why) : -1;
        if (na < 0 || nb < 0) same = !strcmp(a, b);
        else if (na == nb) {
            same = 1;
            for (int i = 0; i < na && same; i++) same = xa[i] == xb[i];
        }
        free(xa);
        free(xb);
        return same;
    }
    default: return !strcmp(a, b);
    }
}

int hs_params_diff_ini(const hs_params *p, const char *ini, hs_params_diff_fn fn, void *user)
{
    char *text = xstrdup(ini ? ini : "");
    if (!text) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory comparing parameters");
    char section[128] = "";
    int rc = HS_OK;
    /* the sections the stored text has: hs_params_to_ini leaves out a section none of whose keys
     * was set, so a section missing there held its defaults (a [shallow_water] case = wave on the
     * restart of a jet's checkpoint, whose file had no [shallow_water], escaped the comparison) */
    char *seen = calloc((size_t)p->n + 1, 1);
    if (!seen) {
        free(text);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory comparing parameters");
    }
    for (char *line = text, *next; rc == HS_OK && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        char *s = trim(line);
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (close) *close = '\0';
            snprintf(section, sizeof section, "%s", s + 1);
            for (int i = 0; i < p->n; i++)
                if (!strcmp(p->entries[i].decl->section, section)) seen[i] = 1;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq || !*section) continue;
        *eq = '\0';
        const char *key = trim(s), *stored = trim(eq + 1);
        const hs_param_decl *d = find_decl(section, key);
        if (!d) continue; /* a key this build no longer declares */
        const entry *e = NULL;
        for (int i = 0; i < p->n && !e; i++)
            if (p->entries[i].decl == d) e = &p->entries[i];
        if (!e || same_value(d, stored, e->value)) continue;
        char name[256];
        snprintf(name, sizeof name, "%s.%s", section, key);
        rc = fn(user, name, stored, e->value);
    }
    for (int i = 0; rc == HS_OK && i < p->n; i++) {
        const entry *e = &p->entries[i];
        if (seen[i] || !e->decl->def || !e->value || same_value(e->decl, e->decl->def, e->value)) continue;
        char name[256];
        snprintf(name, sizeof name, "%s.%s", e->decl->section, e->decl->key);
        rc = fn(user, name, e->decl->def, e->value);
    }
    free(seen);
    free(text);
    return rc;
}

/* Single-quoted for a POSIX shell unless the text needs no quoting. */
static void append_quoted(char **buf, size_t *len, size_t *cap, const char *s)
{
    int plain = *s != '\0';
    for (const char *c = s; *c && plain; c++)
        plain = isalnum((unsigned char)*c) || strchr("._-+=/:,@%", *c);
    size_t need = *len + 4 * strlen(s) + 4;
    if (need > *cap) {
        size_t cap2 = need * 2;
        char *nb = realloc(*buf, cap2);
        if (!nb) return;
        *buf = nb;
        *cap = cap2;
    }
    char *o = *buf + *len;
    if (*len) *o++ = ' ';
    if (plain) {
        o += sprintf(o, "%s", s);
    } else {
        *o++ = '\'';
        for (const char *c = s; *c; c++) {
            if (*c == '\'') o += sprintf(o, "'\\''");
            else *o++ = *c;
        }
        *o++ = '\'';
    }
    *o = '\0';
    *len = (size_t)(o - *buf);
}

char *hs_params_overrides_text(const hs_params *p, const char *skip)
{
    size_t len = 0, cap = 256;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    buf[0] = '\0';
    for (int i = 0; i < p->n; i++) {
        const entry *e = &p->entries[i];
        if (e->source != SRC_OVERRIDE) continue;
        char name[256];
        snprintf(name, sizeof name, "%s.%s", e->decl->section, e->decl->key);
        if (skip && !strcmp(name, skip)) continue;
        size_t n = strlen(name) + strlen(e->value) + 2;
        char *kv = malloc(n);
        if (!kv) continue;
        snprintf(kv, n, "%s=%s", name, e->value);
        append_quoted(&buf, &len, &cap, kv);
        free(kv);
    }
    return buf;
}

/* The shell quoting of one word, as hs_params_overrides_text does it (malloc'd). */
char *hs_params_shell_quote(const char *word)
{
    size_t len = 0, cap = 4 * strlen(word ? word : "") + 8;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    buf[0] = '\0';
    append_quoted(&buf, &len, &cap, word ? word : "");
    return buf;
}

/* ---------------------------------------------------------------- output paths */

int64_t hs_input_file_bytes(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || access(path, R_OK) != 0) return -1;
    if (!S_ISREG(st.st_mode)) return -2;
    return (int64_t)st.st_size;
}

static int section_set(const hs_params *p, const char *section, const entry *cause, char *name, size_t len)
{
    const entry *best = NULL;
    for (int i = 0; i < p->n; i++) {
        const entry *e = &p->entries[i];
        if (!entry_against(e, cause) || strcmp(e->decl->section, section)) continue;
        /* file lines first, in their order; overrides after them */
        if (!best || (e->source == SRC_FILE && (best->source != SRC_FILE || e->line < best->line))) best = e;
    }
    if (!best) return 0;
    snprintf(name, len, "%s.%s", best->decl->section, best->decl->key);
    return 1;
}

int hs_params_section_set(const hs_params *p, const char *section, char *name, size_t len)
{
    return section_set(p, section, NULL, name, len);
}

int hs_params_section_set_against(const hs_params *p, const char *section, const char *cause, char *name, size_t len)
{
    return section_set(p, section, lookup_any(p, cause), name, len);
}

int hs_params_declared(const char *name)
{
    const char *dot = strchr(name, '.');
    if (!dot) return 0;
    for (int i = 0; i < g_ndecls; i++)
        if (strlen(g_decls[i].section) == (size_t)(dot - name) && !strncmp(g_decls[i].section, name, (size_t)(dot - name)) &&
            !strcmp(g_decls[i].key, dot + 1))
            return 1;
    return 0;
}

int hs_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int hs_same_target(const char *a, const char *b)
{
    if (!a || !b) return 0;
    if (hs_same_file(a, b)) return 1;
    const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
    ba = ba ? ba + 1 : a, bb = bb ? bb + 1 : b;
    if (strcmp(ba, bb) != 0) return 0;
    /* the same name: in the same directory? */
    char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
    snprintf(da, sizeof da, "%.*s", ba == a ? 1 : (int)(ba - a), ba == a ? "." : a);
    snprintf(db, sizeof db, "%.*s", bb == b ? 1 : (int)(bb - b), bb == b ? "." : b);
    return realpath(da, ra) && realpath(db, rb) && !strcmp(ra, rb);
}

int hs_params_is_param_file(const hs_params *p, const char *path) { return p->file && *p->file && hs_same_file(p->file, path); }

static int has_entry(const hs_params *p, const char *name)
{
    const char *dot = strchr(name, '.');
    for (int i = 0; dot && i < p->n; i++) {
        const hs_param_decl *d = p->entries[i].decl;
        if (strlen(d->section) == (size_t)(dot - name) && !strncmp(d->section, name, (size_t)(dot - name)) && !strcmp(d->key, dot + 1))
            return 1;
    }
    return 0;
}

const char *hs_params_input_named(const hs_params *p, const char *path)
{
    for (int i = 0; i < g_ninput_keys; i++) {
        if (!has_entry(p, g_input_keys[i])) continue; /* a solver's key this set was loaded without */
        const char *v = hs_params_string(p, g_input_keys[i]);
        if (!*v || !strcmp(v, "none")) continue;
        if (hs_same_target(path, hs_params_input_path(p, g_input_keys[i]))) return g_input_keys[i];
    }
    return NULL;
}

int hs_params_inputs_used(const hs_params *p, const char **keys, int max)
{
    int n = 0;
    for (int i = 0; i < g_ninput_keys && n < max; i++) {
        if (!has_entry(p, g_input_keys[i])) continue;
        const char *v = hs_params_string(p, g_input_keys[i]);
        if (*v && strcmp(v, "none") != 0) keys[n++] = g_input_keys[i];
    }
    return n;
}

int hs_params_check_input_file(const hs_params *p, const char *key, const char *path, const char *what)
{
    const int64_t bytes = hs_input_file_bytes(path);
    if (bytes == -1) return hs_params_error(p, key, "cannot open %s %s: %s", what, path, strerror(errno));
    struct stat st;
    if (bytes == -2)
        return hs_params_error(p, key, "%s %s is not a regular file%s", what, path,
                               stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? " (a directory)" : "");
    return HS_OK;
}

int hs_params_check_name_length(const hs_params *p, const char *key, const char *path, size_t added, const char *what)
{
    const char *slash = strrchr(path, '/');
    char *copy = strdup(path);
    if (!copy) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    long name_max = pathconf(dirname(copy), _PC_NAME_MAX);
    free(copy);
    size_t len = strlen(slash ? slash + 1 : path) + added;
    if (name_max > 0 && len > (size_t)name_max)
        return hs_params_error(p, key, "the %s's file name, with the %zu characters the run adds to it (an extension, "
                                       "'.partial' or '.tmp'), is %zu characters long; its file system takes at most %ld",
                               what, added, len, name_max);
    return HS_OK;
}

/* The directory that will hold `path` must exist and be writable, and `path` must not be a directory. */
int hs_params_check_writable(const hs_params *p, const char *key, const char *path, const char *what, int exact)
{
    struct stat st;
    if (exact && stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return hs_params_error(p, key, "%s %s is a directory", what, path);
        /* a device, pipe or socket (or a link to one): the file written beside it is renamed over
         * it, and a run as root replaced /dev/zero and /dev/null with regular files that way */
        if (!S_ISREG(st.st_mode))
            return hs_params_error(p, key, "%s %s exists and is not a regular file (a device, pipe or socket): writing "
                                           "it would replace it; name a regular file", what, path);
    }
    if (hs_params_is_param_file(p, path))
        return hs_params_error(p, key, "%s %s is the parameter file: writing it would replace the input", what, path);
    const char *input = hs_params_input_named(p, path);
    if (input) return hs_params_error(p, key, "%s %s is the input file of %s: writing it would replace the input", what, path, input);
    char *copy = strdup(path);
    if (!copy) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    const char *dir = dirname(copy);
    int rc = HS_OK;
    if (stat(dir, &st) != 0)
        rc = hs_params_error(p, key, "cannot write %s %s: directory %s: %s", what, path, dir, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = hs_params_error(p, key, "cannot write %s %s: %s is not a directory", what, path, dir);
    else if (access(dir, W_OK | X_OK) != 0)
        rc = hs_params_error(p, key, "cannot write %s %s: directory %s: %s", what, path, dir, strerror(errno));
    else {
        /* access() answers from the permission bits, and for root it says yes where creating fails
         * (/proc, a root-squashed NFS export): create and remove a probe file, so that check refuses
         * what the run could not write */
        char probe[PATH_MAX];
        int fd = -1;
        if (snprintf(probe, sizeof probe, "%s/.hpcsim-probe-XXXXXX", dir) < (int)sizeof probe) fd = mkstemp(probe);
        else errno = ENAMETOOLONG; /* the message's reason, not a stale errno */
        if (fd < 0) rc = hs_params_error(p, key, "cannot write %s %s: creating a file in %s fails: %s", what, path, dir, strerror(errno));
        else close(fd), unlink(probe);
    }
    free(copy);
    /* written as PATH.partial or PATH.tmp, then renamed: a name longer than the file system holds
     * passed here and failed at the first write (exit 1) */
    if (rc == HS_OK && exact) rc = hs_params_check_name_length(p, key, path, strlen(".partial"), what);
    /* the key names a file (an extension may be added): "dir/", "." or ".." named a folder, and
     * the run wrote hidden files such as dir/.nc or ..nc */
    const char *v = hs_params_string(p, key), *slash = strrchr(v, '/'), *base = slash ? slash + 1 : v;
    if (rc == HS_OK && (!*base || !strcmp(base, ".") || !strcmp(base, "..")))
        rc = hs_params_error(p, key, "'%s' names a folder, not a file: add a file name", v);
    return rc;
}


int hs_params_dim_ints(const hs_params *p, const char *key, const char *ndim_key, int ndim, int64_t out[3], int64_t fill)
{
    int64_t v[3] = {0, 0, 0};
    int n = hs_params_int_list(p, key, v, 3);
    if (n != 1 && n != ndim) return hs_params_error(p, key, "has %d values; expected 1 or %s = %d", n, ndim_key, ndim);
    for (int d = 0; d < 3; d++) out[d] = d < ndim ? v[n == 1 ? 0 : d] : fill;
    return HS_OK;
}

int hs_params_dim_reals(const hs_params *p, const char *key, const char *ndim_key, int ndim, double out[3], double fill)
{
    double v[3] = {0, 0, 0};
    int n = hs_params_real_list(p, key, v, 3);
    if (n != 1 && n != ndim) return hs_params_error(p, key, "has %d values; expected 1 or %s = %d", n, ndim_key, ndim);
    for (int d = 0; d < 3; d++) out[d] = d < ndim ? v[n == 1 ? 0 : d] : fill;
    return HS_OK;
}

static int reraise_for_key(const hs_params *p, const char *name, int drop_where)
{
    char msg[1024];
    const char *m = hs_error_message(), *colon = drop_where ? strstr(m, ": ") : NULL;
    snprintf(msg, sizeof msg, "%s", colon ? colon + 2 : m);
    hs_error_clear();
    return hs_params_error(p, name, "%s", msg);
}

int hs_params_error_rekey(const hs_params *p, const char *name) { return reraise_for_key(p, name, 1); }

int hs_params_error_under_key(const hs_params *p, const char *name) { return reraise_for_key(p, name, 0); }
