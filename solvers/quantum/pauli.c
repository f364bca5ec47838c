/* Pauli-sum observables: file reader (Qiskit-order strings or indexed factors), MaxCut costs. */
#include "solvers/quantum/pauli.h"

#include "io/params.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "kernels/error.h"
#include "solvers/quantum/circuit.h"

/* An input error "path:line:col: message". */
static int at_error(const char *path, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int at_error(const char *path, int line, int col, const char *fmt, ...)
{
    char src[PATH_MAX + 64], msg[512];
    snprintf(src, sizeof src, "%s:%d:%d", path, line, col);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hs_input_error(src, 0, NULL, "%s", msg);
}

static int where_error(const char *path, int line, int col, const char *msg, const char *tok)
{
    return at_error(path, line, col, "%s '%s'", msg, tok);
}

hs_pauli_sum *hs_pauli_sum_new(void) { return calloc(1, sizeof(hs_pauli_sum)); }

void hs_pauli_sum_free(hs_pauli_sum *h)
{
    if (!h) return;
    free(h->c);
    free(h->xm);
    free(h->zm);
    free(h->ny);
    free(h);
}

int hs_pauli_sum_add(hs_pauli_sum *h, double c, uint64_t xm, uint64_t zm)
{
    if (h->nterms == h->cap) {
        int cap = h->cap ? 2 * h->cap : 16;
        double *nc = realloc(h->c, (size_t)cap * sizeof *nc);
        if (nc) h->c = nc;
        uint64_t *nx = realloc(h->xm, (size_t)cap * sizeof *nx);
        if (nx) h->xm = nx;
        uint64_t *nz = realloc(h->zm, (size_t)cap * sizeof *nz);
        if (nz) h->zm = nz;
        int *ny = realloc(h->ny, (size_t)cap * sizeof *ny);
        if (ny) h->ny = ny;
        if (!nc || !nx || !nz || !ny) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        h->cap = cap;
    }
    int k = h->nterms++;
    h->c[k] = c;
    h->xm[k] = xm;
    h->zm[k] = zm;
    h->ny[k] = __builtin_popcountll(xm & zm);
    for (int q = 63; q >= 0; q--)
        if ((xm | zm) >> q & 1) {
            if (q + 1 > h->nqubits) h->nqubits = q + 1;
            break;
        }
    return HS_OK;
}

static void set_factor(char p, int q, uint64_t *xm, uint64_t *zm)
{
    if (p == 'X' || p == 'Y') *xm |= 1ull << q;
    if (p == 'Z' || p == 'Y') *zm |= 1ull << q;
}

/* ---------------------------------------------------------------- line reading */
/* A text file of lines, read whole whatever their length (getline). */
typedef struct {
    const char *path;
    FILE *f;
    char *buf;
    size_t cap;
    size_t pos, len; /* the part of buf's getline line not yet handed out (bare-CR lines in it) */
    int lineno;
} line_reader;

/* Open path for reading lines; it must be a regular file.  `what` names it in messages. */
static int reader_open(line_reader *r, const char *path, const char *what)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->f = fopen(path, "r");
    if (!r->f) return hs_input_error(path, 0, NULL, "cannot open %s: %s", what, strerror(errno));
    struct stat st;
    if (fstat(fileno(r->f), &st) == 0 && S_ISREG(st.st_mode)) return HS_OK;
    fclose(r->f);
    r->f = NULL;
    return hs_input_error(path, 0, NULL, "not a regular file");
}

/* The next line without its end (LF, CRLF or a bare CR, as parameter files and QASM read them; a
 * bare-CR file was one line of "unexpected text") in *line, a UTF-8 byte-order mark dropped from the
 * first: returns 1, 0 at the end of the file, or an input error (a read failure, a NUL byte). */
static int reader_next(line_reader *r, char **line, int *rc)
{
    *rc = HS_OK;
    if (r->pos >= r->len) {
        errno = 0;
        ssize_t n = getline(&r->buf, &r->cap, r->f);
        if (n < 0) {
            if (ferror(r->f) || (!feof(r->f) && errno))
                *rc = hs_input_error(r->path, r->lineno + 1, NULL, "cannot read: %s", strerror(errno ? errno : EIO));
            return 0;
        }
        if (r->lineno == INT_MAX || n > INT_MAX) {
            *rc = r->lineno == INT_MAX ? hs_input_error(r->path, 0, NULL, "more than %d lines", INT_MAX)
                                       : hs_input_error(r->path, r->lineno + 1, NULL, "line longer than %d characters", INT_MAX);
            return 0;
        }
        const char *nul = memchr(r->buf, '\0', (size_t)n);
        if (nul) {
            size_t at = (size_t)(nul - r->buf), start;
            const int64_t part = hs_text_bare_cr_part(r->buf, at, &start);
            *rc = at_error(r->path, r->lineno + 1 + (int)part, (int)(at - start) + 1, "NUL byte: not a text file");
            return 0;
        }
        r->pos = 0;
        r->len = (size_t)n;
    }
    char *part = r->buf + r->pos;
    size_t len = hs_text_bare_cr_line(part, r->len - r->pos);
    r->pos += len + 1;
    r->lineno++;
    if (len && part[len - 1] == '\n') part[--len] = '\0';
    if (len && part[len - 1] == '\r') part[--len] = '\0';
    part[len] = '\0';
    if (r->lineno == 1 && !strncmp(part, "\xef\xbb\xbf", 3)) part += 3;
    *line = part;
    return 1;
}

static void reader_close(line_reader *r)
{
    if (r->f) fclose(r->f);
    free(r->buf);
}

/* [s, end) shown in a message: at most 60 characters, then "...". */
static void show(const char *s, const char *end, char *buf, size_t n)
{
    int len = (int)(end - s);
    if (len > 60) snprintf(buf, n, "%.60s...", s);
    else snprintf(buf, n, "%.*s", len, s);
}

/* The whole of [s, end) as a decimal integer in [lo, hi] (digits with an optional sign). */
static int parse_integer(const char *s, const char *end, long long lo, long long hi, long long *v)
{
    if (s == end || isspace((unsigned char)*s)) return -1;
    char *e;
    errno = 0;
    long long x = strtoll(s, &e, 10);
    if (e != end || errno == ERANGE || x < lo || x > hi) return -1;
    *v = x;
    return 0;
}

/* The whole of [s, end) as a finite double written as in parameter files (decimal: strtod alone
 * took "0x1p-1", and a coefficient glued to its term, "0.5ZZ"). */
static int parse_finite(const char *s, const char *end, double *v)
{
    char buf[128];
    if (s == end || end - s >= (ptrdiff_t)sizeof buf) return -1;
    memcpy(buf, s, (size_t)(end - s));
    buf[end - s] = '\0';
    return hs_parse_real(buf, v) ? -1 : 0;
}

/* The next whitespace-separated token of [*p, end): [*tok, *p). */
static int next_token(const char **p, const char *end, const char **tok)
{
    while (*p < end && isspace((unsigned char)**p)) (*p)++;
    *tok = *p;
    while (*p < end && !isspace((unsigned char)**p)) (*p)++;
    return *p > *tok;
}

/* ---------------------------------------------------------------- Pauli sums */
/* Parse the term [s, end) after the coefficient (line_start: the line, for columns).  *width: the
 * qubits it is written for (see hs_pauli_sum.width), *wcol the column that names the highest. */
static int parse_term(const char *path, int line, const char *line_start, const char *s, const char *end, uint64_t *xm,
                      uint64_t *zm, int *width, int *wcol)
{
    *xm = *zm = 0;
    *width = 0;
    *wcol = 0;
    while (s < end && isspace((unsigned char)*s)) s++;
    while (end > s && isspace((unsigned char)end[-1])) end--;
    size_t len = (size_t)(end - s);
    if (len == 0) return HS_OK;
    int indexed = 0;
    for (size_t i = 0; i < len; i++) indexed |= isdigit((unsigned char)s[i]);
    char buf[80];
    if (!indexed) {
        for (size_t i = 0; i < len; i++)
            if (!strchr("IXYZ", s[i]) || !s[i]) {
                char tok[2] = {s[i], 0};
                return where_error(path, line, (int)(s + i - line_start) + 1, "not a Pauli letter (I, X, Y, Z):", tok);
            }
        if (len > HS_Q_MAX_QUBITS) {
            snprintf(buf, sizeof buf, "%.*s...", 20, s);
            return where_error(path, line, (int)(s - line_start) + 1, "Pauli string longer than 50 qubits:", buf);
        }
        for (size_t i = 0; i < len; i++) set_factor(s[i], (int)(len - 1 - i), xm, zm);
        *width = (int)len;
        *wcol = (int)(s - line_start) + 1;
        return HS_OK;
    }
    const char *p = s, *tok;
    while (next_token(&p, end, &tok)) {
        /* a letter and the qubit number, digits only: X0, Z12 */
        long long q = -1;
        int ok = strchr("IXYZ", tok[0]) && tok[0] && p - tok >= 2 && isdigit((unsigned char)tok[1]) &&
                 parse_integer(tok + 1, p, 0, HS_Q_MAX_QUBITS - 1, &q) == 0;
        show(tok, p, buf, sizeof buf);
        if (!ok) return where_error(path, line, (int)(tok - line_start) + 1, "expected a factor like X0 or Z12, got", buf);
        if ((*xm | *zm) >> q & 1)
            return where_error(path, line, (int)(tok - line_start) + 1, "qubit given twice in one term:", buf);
        set_factor(tok[0], (int)q, xm, zm);
        if (q + 1 > *width) *width = (int)q + 1, *wcol = (int)(tok - line_start) + 1;
    }
    return HS_OK;
}

/* One line "COEFFICIENT TERM [# comment]" into h (blank and comment lines add nothing); *sum
 * accumulates the coefficients' magnitudes, which must stay finite. */
static int pauli_line(const char *path, int lineno, char *line, hs_pauli_sum *h, double *sum)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    const char *s = line, *end = line + strlen(line), *tok, *p = s;
    if (!next_token(&p, end, &tok)) return HS_OK;
    char buf[80];
    double c;
    if (parse_finite(tok, p, &c)) {
        char *e;
        double x = strtod(tok, &e);
        show(tok, p, buf, sizeof buf);
        return where_error(path, lineno, (int)(tok - line) + 1,
                           e == p && !isfinite(x) ? "expected a finite coefficient, got" : "expected a coefficient (a decimal number), got", buf);
    }
    const char *e = p;
    *sum += fabs(c);
    if (!isfinite(*sum)) {
        return at_error(path, lineno, (int)(tok - line) + 1, "the coefficients' magnitudes add up to more than the largest double");
    }
    uint64_t xm, zm;
    int width, wcol;
    HS_CHECK(parse_term(path, lineno, line, e, end, &xm, &zm, &width, &wcol));
    if (width > h->width) h->width = width, h->width_line = lineno, h->width_col = wcol;
    return hs_pauli_sum_add(h, c, xm, zm);
}

int hs_pauli_sum_read(const char *path, hs_pauli_sum **out)
{
    line_reader r;
    HS_CHECK(reader_open(&r, path, "Pauli-sum file"));
    hs_pauli_sum *h = hs_pauli_sum_new();
    int rc = h ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    double sum = 0;
    char *line;
    while (rc == HS_OK && reader_next(&r, &line, &rc)) rc = pauli_line(path, r.lineno, line, h, &sum);
    reader_close(&r);
    if (rc == HS_OK && h->nterms == 0) rc = hs_input_error(path, 0, NULL, "no terms in Pauli-sum file");
    if (rc != HS_OK) {
        hs_pauli_sum_free(h);
        return rc;
    }
    *out = h;
    return HS_OK;
}

/* ---------------------------------------------------------------- MaxCut graphs */
enum { MAX_EDGES = 1 << 20 };

/* The vertex count: one integer 1..50 on the line. */
static int graph_header(const char *path, int lineno, const char *line, const char *end, int *n)
{
    const char *p = line, *tok, *extra;
    char buf[80];
    long long v;
    next_token(&p, end, &tok);
    if (parse_integer(tok, p, 1, HS_Q_MAX_QUBITS, &v)) {
        show(tok, p, buf, sizeof buf);
        return where_error(path, lineno, (int)(tok - line) + 1, "expected the number of vertices (1..50), got", buf);
    }
    const char *q = p;
    if (next_token(&q, end, &extra)) {
        show(extra, q, buf, sizeof buf);
        return where_error(path, lineno, (int)(extra - line) + 1, "unexpected text after the vertex count:", buf);
    }
    *n = (int)v;
    return HS_OK;
}

/* One edge "i j [weight]" of a graph of n vertices; *sum accumulates the weights' magnitudes. */
static int graph_edge(const char *path, int lineno, const char *line, const char *end, int n, int *ij, double *w,
                      double *sum)
{
    const char *p = line, *tok, *first = NULL;
    char buf[80], what[64];
    snprintf(what, sizeof what, "expected a vertex number 0..%d, got", n - 1);
    for (int k = 0; k < 2; k++) {
        long long v;
        if (!next_token(&p, end, &tok)) {
            return at_error(path, lineno, (int)(p - line) + 1, "%s end of line", what);
        }
        if (!first) first = tok;
        if (parse_integer(tok, p, 0, n - 1, &v)) {
            show(tok, p, buf, sizeof buf);
            return where_error(path, lineno, (int)(tok - line) + 1, what, buf);
        }
        ij[k] = (int)v;
    }
    if (ij[0] == ij[1]) {
        show(first, p, buf, sizeof buf);
        return where_error(path, lineno, (int)(first - line) + 1, "an edge needs two different vertices, got", buf);
    }
    *w = 1.0;
    if (next_token(&p, end, &tok)) {
        if (parse_finite(tok, p, w)) {
            show(tok, p, buf, sizeof buf);
            return where_error(path, lineno, (int)(tok - line) + 1, "expected a finite edge weight, got", buf);
        }
        *sum += fabs(*w);
        if (!isfinite(*sum)) {
            return at_error(path, lineno, (int)(tok - line) + 1, "the edge weights' magnitudes add up to more than the largest double");
        }
    }
    if (next_token(&p, end, &tok)) {
        show(tok, p, buf, sizeof buf);
        return where_error(path, lineno, (int)(tok - line) + 1, "unexpected text after the edge:", buf);
    }
    return HS_OK;
}

int hs_maxcut_read(const char *path, int *nv, int *ne, int **edges, double **weights)
{
    line_reader r;
    HS_CHECK(reader_open(&r, path, "graph file"));
    int n = -1, m = 0, cap = 0, rc = HS_OK;
    int *e = NULL;
    double *w = NULL, sum = 0;
    char *line;
    while (rc == HS_OK && reader_next(&r, &line, &rc)) {
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        const char *end = line + strlen(line), *p = line, *tok;
        if (!next_token(&p, end, &tok)) continue; /* blank or comment */
        if (n < 0) {
            rc = graph_header(path, r.lineno, line, end, &n);
            continue;
        }
        if (m == MAX_EDGES) {
            rc = hs_input_error(path, r.lineno, NULL, "more than %d edges", MAX_EDGES);
            break;
        }
        if (m == cap) {
            cap = cap ? 2 * cap : 32;
            int *ne2 = realloc(e, 2 * (size_t)cap * sizeof *e);
            if (ne2) e = ne2;
            double *nw = realloc(w, (size_t)cap * sizeof *w);
            if (nw) w = nw;
            if (!ne2 || !nw) {
                rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
                break;
            }
        }
        rc = graph_edge(path, r.lineno, line, end, n, &e[2 * m], &w[m], &sum);
        if (rc == HS_OK) m++;
    }
    reader_close(&r);
    if (rc == HS_OK && (n < 0 || m == 0)) rc = hs_input_error(path, 0, NULL, "graph file has no edges");
    if (rc != HS_OK) {
        free(e);
        free(w);
        return rc;
    }
    *nv = n;
    *ne = m;
    *edges = e;
    *weights = w;
    return HS_OK;
}

int hs_maxcut_hamiltonian(int ne, const int *edges, const double *w, hs_pauli_sum **out)
{
    hs_pauli_sum *h = hs_pauli_sum_new();
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    double shift = 0;
    for (int k = 0; k < ne; k++) {
        HS_CHECK(hs_pauli_sum_add(h, 0.5 * w[k], 0, (1ull << edges[2 * k]) | (1ull << edges[2 * k + 1])));
        shift -= 0.5 * w[k];
    }
    HS_CHECK(hs_pauli_sum_add(h, shift, 0, 0));
    *out = h;
    return HS_OK;
}
