/* Pauli-sum observables: file reader (Qiskit-order strings or indexed factors), MaxCut costs. */
#include "solvers/quantum/pauli.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/error.h"
#include "solvers/quantum/circuit.h"

static int where_error(const char *path, int line, int col, const char *msg, const char *tok)
{
    char src[1200];
    snprintf(src, sizeof src, "%s:%d:%d", path, line, col);
    return hs_input_error(src, 0, NULL, "%s '%s'", msg, tok);
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

/* Parse the term text after the coefficient (s points into the line; col0 its column). */
static int parse_term(const char *path, int line, const char *line_start, const char *s, uint64_t *xm, uint64_t *zm)
{
    *xm = *zm = 0;
    while (isspace((unsigned char)*s)) s++;
    size_t len = strcspn(s, "#\r\n");
    while (len && isspace((unsigned char)s[len - 1])) len--;
    if (len == 0) return HS_OK;
    int indexed = 0;
    for (size_t i = 0; i < len; i++) indexed |= isdigit((unsigned char)s[i]);
    if (!indexed) {
        for (size_t i = 0; i < len; i++)
            if (!strchr("IXYZ", s[i])) {
                char tok[2] = {s[i], 0};
                return where_error(path, line, (int)(s + i - line_start) + 1, "not a Pauli letter (I, X, Y, Z):", tok);
            }
        if (len > HS_Q_MAX_QUBITS) {
            char tok[64];
            snprintf(tok, sizeof tok, "%.*s...", 20, s);
            return where_error(path, line, (int)(s - line_start) + 1, "Pauli string longer than 50 qubits:", tok);
        }
        for (size_t i = 0; i < len; i++) set_factor(s[i], (int)(len - 1 - i), xm, zm);
        return HS_OK;
    }
    const char *p = s, *end = s + len;
    while (p < end) {
        while (p < end && isspace((unsigned char)*p)) p++;
        if (p >= end) break;
        const char *tok = p;
        while (p < end && !isspace((unsigned char)*p)) p++;
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)(p - tok), tok);
        char *e;
        long q = strchr("IXYZ", buf[0]) && buf[0] ? strtol(buf + 1, &e, 10) : -1;
        if (q < 0 || buf[1] == '\0' || *e || q >= HS_Q_MAX_QUBITS)
            return where_error(path, line, (int)(tok - line_start) + 1, "expected a factor like X0 or Z12, got", buf);
        if ((*xm | *zm) >> q & 1)
            return where_error(path, line, (int)(tok - line_start) + 1, "qubit given twice in one term:", buf);
        set_factor(buf[0], (int)q, xm, zm);
    }
    return HS_OK;
}

int hs_pauli_sum_read(const char *path, hs_pauli_sum **out)
{
    FILE *f = fopen(path, "r");
    if (!f) return hs_input_error(path, 0, NULL, "cannot open Pauli-sum file: %s", strerror(errno));
    hs_pauli_sum *h = hs_pauli_sum_new();
    char line[4096];
    int lineno = 0, rc = HS_OK;
    while (rc == HS_OK && fgets(line, sizeof line, f)) {
        lineno++;
        const char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (*s == '#' || *s == '\0') continue;
        char *e;
        errno = 0;
        double c = strtod(s, &e);
        if (e == s || errno) {
            char tok[64];
            snprintf(tok, sizeof tok, "%.*s", (int)strcspn(s, " \t\r\n"), s);
            rc = where_error(path, lineno, (int)(s - line) + 1, "expected a coefficient, got", tok);
            break;
        }
        uint64_t xm, zm;
        rc = parse_term(path, lineno, line, e, &xm, &zm);
        if (rc == HS_OK) rc = hs_pauli_sum_add(h, c, xm, zm);
    }
    fclose(f);
    if (rc == HS_OK && h->nterms == 0) rc = hs_input_error(path, 0, NULL, "no terms in Pauli-sum file");
    if (rc != HS_OK) {
        hs_pauli_sum_free(h);
        return rc;
    }
    *out = h;
    return HS_OK;
}

int hs_maxcut_read(const char *path, int *nv, int *ne, int **edges, double **weights)
{
    FILE *f = fopen(path, "r");
    if (!f) return hs_input_error(path, 0, NULL, "cannot open graph file: %s", strerror(errno));
    char line[1024];
    int lineno = 0, n = -1, m = 0, cap = 0, rc = HS_OK;
    int *e = NULL;
    double *w = NULL;
    while (rc == HS_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (*s == '#' || *s == '\0') continue;
        if (n < 0) {
            char *end;
            n = (int)strtol(s, &end, 10);
            if (end == s || n < 1 || n > HS_Q_MAX_QUBITS) {
                rc = where_error(path, lineno, (int)(s - line) + 1, "expected the number of vertices (1..50), got", s);
                break;
            }
            continue;
        }
        int i, j, used = 0;
        double wt = 1.0;
        int got = sscanf(s, "%d %d%n %lf", &i, &j, &used, &wt);
        if (got < 2 || i < 0 || j < 0 || i >= n || j >= n || i == j) {
            char tok[128];
            snprintf(tok, sizeof tok, "%.*s", (int)strcspn(s, "\r\n"), s);
            rc = where_error(path, lineno, (int)(s - line) + 1, "expected an edge 'i j [weight]' with 0 <= i != j < n, got", tok);
            break;
        }
        if (m == cap) {
            cap = cap ? 2 * cap : 32;
            e = realloc(e, 2 * (size_t)cap * sizeof *e);
            w = realloc(w, (size_t)cap * sizeof *w);
            if (!e || !w) {
                rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
                break;
            }
        }
        e[2 * m] = i;
        e[2 * m + 1] = j;
        w[m++] = wt;
    }
    fclose(f);
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
