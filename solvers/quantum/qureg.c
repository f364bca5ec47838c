/* The quantum register: logical-to-physical qubit maps, rank exchanges, measurement, sampling,
 * expectation values; gate work goes to the state-vector kernels (sv.h). */
#include "solvers/quantum/qureg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/comm/comm.h"
#include "kernels/memory.h"
#include "solvers/quantum/sv.h"
#include "solvers/quantum/sv_impl.h"

#define CHUNK_BYTES ((size_t)64 << 20) /* exchange staging buffers: bounded, whatever the register */

struct hs_qureg {
    hs_ctx *ctx;
    MPI_Comm comm;
    int rank, size, dist;
    int n, nloc, nglob;
    hs_dtype t;
    size_t es;
    void *a;
    int l2p[64], p2l[64];
    void *dbuf, *dbuf2;     /* exchange chunks (send, receive) in the context's memory */
    hs_comm *xc;            /* moves them between ranks: NCCL or host staging (kernels/comm/comm.h) */
    int64_t chunk;
    int64_t nexch;
};

static int log2_exact(int x)
{
    int k = 0;
    while ((1 << k) < x) k++;
    return (1 << k) == x ? k : -1;
}

double hs_qureg_bytes_needed(int nqubits, hs_dtype t, int ranks)
{
    int g = ranks > 1 ? log2_exact(ranks) : 0;
    if (g < 0) g = 0;
    double amps = ldexp((double)hs_dtype_size(t), nqubits - g);
    double stage = ranks > 1 ? 3.0 * fmin(amps / 2, (double)CHUNK_BYTES) : 0.0;
    return amps + stage;
}

double hs_qureg_bytes_available(hs_ctx *ctx) { return hs_mem_available(ctx); }

static int create(hs_ctx *ctx, int n, hs_dtype t, int distributed, int min_local, hs_qureg **out);

int hs_qureg_create(hs_ctx *ctx, int n, hs_dtype t, int distributed, hs_qureg **out)
{
    return create(ctx, n, t, distributed, HS_QUREG_MIN_LOCAL, out);
}

int hs_qureg_create_split(hs_ctx *ctx, int n, hs_dtype t, int min_local, hs_qureg **out)
{
    return create(ctx, n, t, 1, min_local < 1 ? 1 : min_local, out);
}

static int create(hs_ctx *ctx, int n, hs_dtype t, int distributed, int min_local, hs_qureg **out)
{
    if (t != HS_C128 && t != HS_C64) return HS_FAIL(HS_ERR_RUNTIME, "qureg: precision must be complex128 or complex64");
    if (n < 1 || n > HS_Q_MAX_QUBITS) return HS_FAIL(HS_ERR_RUNTIME, "qureg: %d qubits (1..%d)", n, HS_Q_MAX_QUBITS);
    hs_qureg *q = calloc(1, sizeof *q);
    if (!q) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    q->ctx = ctx;
    q->comm = ctx->comm;
    q->rank = ctx->rank;
    q->size = ctx->size;
    q->n = n;
    q->t = t;
    q->es = hs_dtype_size(t);
    q->dist = distributed && ctx->size > 1;
    if (q->dist) {
        q->nglob = log2_exact(ctx->size);
        if (q->nglob < 0) {
            free(q);
            return HS_FAIL(HS_ERR_RUNTIME, "qureg: %d ranks is not a power of two", ctx->size);
        }
        if (n - q->nglob < min_local) {
            free(q);
            return HS_FAIL(HS_ERR_RUNTIME, "qureg: %d qubits are too few for %d ranks (at least %d per rank)", n,
                           ctx->size, min_local);
        }
    }
    q->nloc = n - q->nglob;
    for (int i = 0; i < 64; i++) q->l2p[i] = q->p2l[i] = i;
    int rc = hs_mem_alloc(ctx, q->es << q->nloc, &q->a);
    if (rc == HS_OK && q->dist) {
        size_t half = q->es << (q->nloc - 1), bytes = half < CHUNK_BYTES ? half : CHUNK_BYTES;
        q->chunk = (int64_t)(bytes / q->es);
        rc = hs_mem_alloc(ctx, bytes, &q->dbuf);
        if (rc == HS_OK) rc = hs_mem_alloc(ctx, bytes, &q->dbuf2);
        if (rc == HS_OK) rc = hs_comm_create(ctx, &q->xc);
    }
    if (rc == HS_OK) rc = hs_qureg_init_basis(q, 0);
    if (rc != HS_OK) {
        hs_qureg_destroy(q);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_qureg_create");
    }
    *out = q;
    return HS_OK;
}

void hs_qureg_destroy(hs_qureg *q)
{
    if (!q) return;
    hs_mem_free(q->ctx, q->a);
    hs_mem_free(q->ctx, q->dbuf);
    hs_mem_free(q->ctx, q->dbuf2);
    hs_comm_destroy(q->xc);
    free(q);
}

int hs_qureg_nqubits(const hs_qureg *q) { return q->n; }
hs_dtype hs_qureg_dtype(const hs_qureg *q) { return q->t; }
int hs_qureg_distributed(const hs_qureg *q) { return q->dist; }
int64_t hs_qureg_exchanges(const hs_qureg *q) { return q->nexch; }

static int rank_bit(const hs_qureg *q, int phys) { return (q->rank >> (phys - q->nloc)) & 1; }

static void swap_maps(hs_qureg *q, int p1, int p2)
{
    int l1 = q->p2l[p1], l2 = q->p2l[p2];
    q->p2l[p1] = l2;
    q->p2l[p2] = l1;
    q->l2p[l1] = p2;
    q->l2p[l2] = p1;
}

/* Physical swap of global qubit G with local qubit L: each rank trades the half of its slice whose
 * bit L differs from its own bit G with the partner rank across G. */
static int exchange_swap(hs_qureg *q, int G, int L)
{
    int gb = G - q->nloc, partner = q->rank ^ (1 << gb), v = !((q->rank >> gb) & 1);
    int64_t half = (int64_t)1 << (q->nloc - 1);
    for (int64_t start = 0; start < half; start += q->chunk) {
        int64_t cnt = half - start < q->chunk ? half - start : q->chunk;
        HS_CHECK(hs_sv_pack(q->ctx, q->t, q->a, q->nloc, L, v, start, cnt, q->dbuf, 0));
        HS_CHECK(hs_comm_sendrecv(q->xc, q->t, q->dbuf, q->dbuf2, (size_t)cnt, partner));
        HS_CHECK(hs_sv_pack(q->ctx, q->t, q->a, q->nloc, L, v, start, cnt, q->dbuf2, 1));
    }
    swap_maps(q, G, L);
    q->nexch++;
    return HS_OK;
}

static const double g_swap_m[32] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
                                    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};

/* Swap two physical qubits, whichever side of the rank boundary they are on. */
static int swap_phys(hs_qureg *q, int p1, int p2)
{
    if (p1 == p2) return HS_OK;
    if (p1 > p2) {
        int t = p1;
        p1 = p2;
        p2 = t;
    }
    if (p2 < q->nloc) {
        int t[2] = {p1, p2};
        HS_CHECK(hs_sv_apply(q->ctx, q->t, q->a, q->nloc, 2, t, 0, 0, g_swap_m, HS_QMAT_PERM));
        swap_maps(q, p1, p2);
        return HS_OK;
    }
    if (p1 < q->nloc) return exchange_swap(q, p2, p1);
    /* both global: through local qubit 0, (p1 0)(0 p2)(p1 0) = (p1 p2) */
    HS_CHECK(exchange_swap(q, p1, 0));
    HS_CHECK(exchange_swap(q, p2, 0));
    return exchange_swap(q, p1, 0);
}

int hs_qureg_canonical(hs_qureg *q)
{
    if (!q->dist) return HS_OK;
    for (int p = q->n - 1; p >= 0; p--)
        if (q->p2l[p] != p) HS_CHECK(swap_phys(q, p, q->l2p[p]));
    return HS_OK;
}

/* Make the physical places of the logical qubits in `want` local, not disturbing `keep` (physical
 * local qubits that must stay). */
static int localise(hs_qureg *q, uint64_t want, uint64_t keep)
{
    for (int l = 0; l < q->n; l++) {
        if (!(want >> l & 1) || q->l2p[l] < q->nloc) continue;
        uint64_t busy = keep;
        for (int j = 0; j < q->n; j++)
            if (want >> j & 1 && q->l2p[j] < q->nloc) busy |= 1ull << q->l2p[j];
        int L = q->nloc - 1;
        while (L >= 0 && (busy >> L & 1)) L--;
        if (L < 0) return HS_FAIL(HS_ERR_RUNTIME, "qureg: no free local qubit to swap with");
        HS_CHECK(exchange_swap(q, q->l2p[l], L));
    }
    return HS_OK;
}

static int apply_kind(hs_qureg *q, int nt, const int *t, uint64_t cmask, uint64_t cval, const double *m,
                      hs_qmat_kind mk)
{
    uint64_t tm = 0;
    for (int j = 0; j < nt; j++) {
        if (t[j] < 0 || t[j] >= q->n || (tm >> t[j] & 1) || (cmask >> t[j] & 1))
            return HS_FAIL(HS_ERR_RUNTIME, "qureg: bad target qubit %d of %d", t[j], q->n);
        tm |= 1ull << t[j];
    }
    if (q->n < 64 && (cmask >> q->n)) return HS_FAIL(HS_ERR_RUNTIME, "qureg: control beyond qubit %d", q->n - 1);
    uint64_t keep = 0;
    for (int l = 0; l < q->n; l++)
        if (cmask >> l & 1 && q->l2p[l] < q->nloc) keep |= 1ull << q->l2p[l];
    if (q->dist) HS_CHECK(localise(q, tm, keep));
    int pt[HS_Q_MAX_TARGETS];
    for (int j = 0; j < nt; j++) pt[j] = q->l2p[t[j]];
    uint64_t pcm = 0, pcv = 0;
    for (int l = 0; l < q->n; l++) {
        if (!(cmask >> l & 1)) continue;
        int p = q->l2p[l], want = (int)(cval >> l & 1);
        if (p >= q->nloc) {
            if (rank_bit(q, p) != want) return HS_OK; /* this rank's amplitudes are not controlled */
        } else {
            pcm |= 1ull << p;
            pcv |= (uint64_t)want << p;
        }
    }
    return hs_sv_apply(q->ctx, q->t, q->a, q->nloc, nt, pt, pcm, pcv, m, mk);
}

int hs_qureg_apply_matrix(hs_qureg *q, int nt, const int *t, uint64_t cmask, uint64_t cval, const double *m)
{
    if (nt < 1 || nt > HS_Q_MAX_TARGETS) return HS_FAIL(HS_ERR_RUNTIME, "qureg: %d targets (1..%d)", nt, HS_Q_MAX_TARGETS);
    return apply_kind(q, nt, t, cmask, cval, m, hs_qmat_classify(1 << nt, m));
}

int hs_qureg_gate(hs_qureg *q, const char *name, const double *params, const int *qubits)
{
    const hs_qgate_def *d = hs_qgate_find(name);
    if (!d) return HS_FAIL(HS_ERR_RUNTIME, "qureg: unknown gate '%s'", name);
    double m[32];
    d->build(params, m);
    uint64_t cm = 0;
    for (int j = 0; j < d->nctrl; j++) {
        if (qubits[j] < 0 || qubits[j] >= q->n) return HS_FAIL(HS_ERR_RUNTIME, "qureg: bad control qubit %d", qubits[j]);
        cm |= 1ull << qubits[j];
    }
    return hs_qureg_apply_matrix(q, d->ntarg, qubits + d->nctrl, cm, cm, m);
}

int hs_qureg_init_basis(hs_qureg *q, uint64_t index)
{
    if (q->n < 64 && (index >> q->n)) return HS_FAIL(HS_ERR_RUNTIME, "qureg: basis state out of range");
    uint64_t phys = 0;
    for (int l = 0; l < q->n; l++)
        if (index >> l & 1) phys |= 1ull << q->l2p[l];
    uint64_t mine = phys >> q->nloc;
    int64_t local = (q->dist && (int)mine != q->rank) ? -1 : (int64_t)(phys & ((1ull << q->nloc) - 1));
    return hs_sv_set_basis(q->ctx, q->t, q->a, q->nloc, local);
}

/* Host staging of the local slice as complex128 (malloc'd). */
static int local_to_host(hs_qureg *q, double **out)
{
    size_t nl = (size_t)1 << q->nloc;
    double *h = malloc(2 * nl * sizeof(double));
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory (%zu amplitudes)", nl);
    if (q->t == HS_C128) {
        HS_CHECK(hs_mem_copy(q->ctx, h, q->a, 2 * nl * sizeof(double), HS_COPY_D2H));
    } else {
        float *f = (float *)h + 2 * nl; /* second half of the same buffer, expanded from the front */
        HS_CHECK(hs_mem_copy(q->ctx, f, q->a, 2 * nl * sizeof(float), HS_COPY_D2H));
        for (size_t i = 0; i < 2 * nl; i++) h[i] = (double)f[i];
    }
    *out = h;
    return HS_OK;
}

int hs_qureg_get_amplitudes(hs_qureg *q, double *amps)
{
    HS_CHECK(hs_qureg_canonical(q));
    double *h = NULL;
    HS_CHECK(local_to_host(q, &h));
    size_t nl = (size_t)1 << q->nloc;
    if (q->dist) {
        int rc = hs_host_allgather(q->comm, HS_F64, h, amps, 2 * nl);
        free(h);
        HS_CHECK(rc);
    } else {
        memcpy(amps, h, 2 * nl * sizeof(double));
        free(h);
    }
    return HS_OK;
}

int hs_qureg_set_amplitudes(hs_qureg *q, const double *amps)
{
    for (int i = 0; i < 64; i++) q->l2p[i] = q->p2l[i] = i;
    size_t nl = (size_t)1 << q->nloc, off = q->dist ? (size_t)q->rank * nl : 0;
    if (q->t == HS_C128) return hs_mem_copy(q->ctx, q->a, amps + 2 * off, 2 * nl * sizeof(double), HS_COPY_H2D);
    float *f = malloc(2 * nl * sizeof(float));
    if (!f) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (size_t i = 0; i < 2 * nl; i++) f[i] = (float)amps[2 * off + i];
    int rc = hs_mem_copy(q->ctx, q->a, f, 2 * nl * sizeof(float), HS_COPY_H2D);
    free(f);
    return rc;
}

int hs_qureg_copy(hs_qureg *dst, const hs_qureg *src)
{
    if (dst->n != src->n || dst->t != src->t || dst->dist != src->dist)
        return HS_FAIL(HS_ERR_RUNTIME, "qureg: copy between different registers");
    memcpy(dst->l2p, src->l2p, sizeof dst->l2p);
    memcpy(dst->p2l, src->p2l, sizeof dst->p2l);
    return hs_mem_copy(dst->ctx, dst->a, src->a, src->es << src->nloc, HS_COPY_D2D);
}

static int allsum(hs_qureg *q, double *v, int count)
{
    if (q->dist) return hs_allreduce_sum(q->comm, v, count);
    return HS_OK;
}

static int local_norm(hs_qureg *q, double *s)
{
    return hs_sv_prob_blocks(q->ctx, q->t, q->a, q->nloc, q->nloc, s);
}

int hs_qureg_norm2(hs_qureg *q, double *norm2)
{
    HS_CHECK(local_norm(q, norm2));
    return allsum(q, norm2, 1);
}

/* P(qubit = 1) and the total norm. */
static int prob_one(hs_qureg *q, int qubit, double *p1, double *norm)
{
    int p = q->l2p[qubit];
    double v[2];
    if (p < q->nloc) {
        double m[2];
        HS_CHECK(hs_sv_marginal(q->ctx, q->t, q->a, q->nloc, 1, &p, m));
        v[0] = m[1];
        v[1] = m[0] + m[1];
    } else {
        HS_CHECK(local_norm(q, &v[1]));
        v[0] = rank_bit(q, p) ? v[1] : 0.0;
    }
    HS_CHECK(allsum(q, v, 2));
    *p1 = v[0];
    *norm = v[1];
    return HS_OK;
}

int hs_qureg_measure(hs_qureg *q, int qubit, double u, int *outcome, double *prob)
{
    if (qubit < 0 || qubit >= q->n) return HS_FAIL(HS_ERR_RUNTIME, "qureg: measure of qubit %d", qubit);
    double p1 = 0, norm = 0;
    HS_CHECK(prob_one(q, qubit, &p1, &norm));
    double P1 = norm > 0 ? p1 / norm : 0;
    int b = u < P1;
    double pb = b ? P1 : 1 - P1;
    if (pb <= 0) return HS_FAIL(HS_ERR_RUNTIME, "qureg: measured an outcome of probability 0");
    double scale = 1.0 / sqrt(pb * norm);
    int p = q->l2p[qubit];
    if (p < q->nloc) HS_CHECK(hs_sv_collapse(q->ctx, q->t, q->a, q->nloc, 1ull << p, (uint64_t)b << p, scale));
    else HS_CHECK(hs_sv_collapse(q->ctx, q->t, q->a, q->nloc, 0, 0, rank_bit(q, p) == b ? scale : 0.0));
    *outcome = b;
    if (prob) *prob = pb;
    return HS_OK;
}

int hs_qureg_reset(hs_qureg *q, int qubit, double u)
{
    int b;
    HS_CHECK(hs_qureg_measure(q, qubit, u, &b, NULL));
    if (b) HS_CHECK(hs_qureg_gate(q, "x", NULL, &qubit));
    return HS_OK;
}

static int cond_holds(const hs_qop *op, const uint64_t *clbits)
{
    if (!op->cond) return 1;
    uint64_t v = 0;
    for (int j = 0; j < op->cond_len; j++) {
        int b = op->cond_off + j;
        v |= (clbits ? (clbits[b / 64] >> (b % 64) & 1) : 0) << j;
    }
    return v == op->cond_value;
}

int hs_qureg_apply_op(hs_qureg *q, const hs_qop *op, hs_rng *rng, uint64_t *clbits)
{
    if (!cond_holds(op, clbits)) return HS_OK;
    if ((op->kind == HS_QOP_MEASURE || op->kind == HS_QOP_RESET) && !rng)
        return HS_FAIL(HS_ERR_RUNTIME, "qureg: a measurement or reset needs a random number generator");
    switch (op->kind) {
    case HS_QOP_GATE: return apply_kind(q, op->nt, op->t, op->cmask, op->cval, op->m, op->mk);
    case HS_QOP_MEASURE: {
        int b;
        HS_CHECK(hs_qureg_measure(q, op->t[0], hs_rng_uniform(rng), &b, NULL));
        if (clbits && op->cbit >= 0) {
            uint64_t bit = 1ull << (op->cbit % 64);
            clbits[op->cbit / 64] = b ? clbits[op->cbit / 64] | bit : clbits[op->cbit / 64] & ~bit;
        }
        return HS_OK;
    }
    case HS_QOP_RESET: return hs_qureg_reset(q, op->t[0], hs_rng_uniform(rng));
    default: return HS_OK;
    }
}

int hs_qureg_run(hs_qureg *q, const hs_circuit *c, hs_rng *rng, uint64_t *clbits)
{
    if (c->nqubits > q->n) return HS_FAIL(HS_ERR_RUNTIME, "qureg: circuit of %d qubits on %d", c->nqubits, q->n);
    for (int i = 0; i < c->nops; i++) HS_CHECK(hs_qureg_apply_op(q, &c->ops[i], rng, clbits));
    return HS_OK;
}

int hs_qureg_probabilities(hs_qureg *q, double *p)
{
    size_t nn = (size_t)1 << q->n;
    double *a = malloc(2 * nn * sizeof(double));
    if (!a) return HS_FAIL(HS_ERR_RUNTIME, "out of memory (2^%d amplitudes)", q->n);
    int rc = hs_qureg_get_amplitudes(q, a);
    if (rc == HS_OK)
        for (size_t i = 0; i < nn; i++) p[i] = a[2 * i] * a[2 * i] + a[2 * i + 1] * a[2 * i + 1];
    free(a);
    return rc;
}

int hs_qureg_marginal(hs_qureg *q, int nm, const int *qs, double *p)
{
    if (nm < 1 || nm > HS_SV_MAX_MARGINAL) return HS_FAIL(HS_ERR_RUNTIME, "qureg: marginal of %d qubits", nm);
    uint64_t want = 0;
    for (int j = 0; j < nm; j++) {
        if (qs[j] < 0 || qs[j] >= q->n || (want >> qs[j] & 1))
            return HS_FAIL(HS_ERR_RUNTIME, "qureg: bad marginal qubit %d", qs[j]);
        want |= 1ull << qs[j];
    }
    if (q->dist) HS_CHECK(localise(q, want, 0));
    int pq[HS_SV_MAX_MARGINAL];
    for (int j = 0; j < nm; j++) pq[j] = q->l2p[qs[j]];
    HS_CHECK(hs_sv_marginal(q->ctx, q->t, q->a, q->nloc, nm, pq, p));
    return allsum(q, p, 1 << nm);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Index within the local slice for the cumulative probability u, walking block sums then one
 * block's amplitudes (fetched to the host once per block). */
typedef struct {
    hs_qureg *q;
    int bbits;
    int64_t nb, cached;
    double *cum;  /* cumulative block sums, nb + 1 */
    double *blk;  /* |a|^2 of the cached block */
    void *raw;
} sampler;

static int sample_local(sampler *s, double u, uint64_t *idx)
{
    int64_t lo = 0, hi = s->nb - 1;
    while (lo < hi) { /* first block whose cumulative end exceeds u */
        int64_t mid = (lo + hi) / 2;
        if (s->cum[mid + 1] > u) hi = mid;
        else lo = mid + 1;
    }
    while (lo > 0 && s->cum[lo + 1] == s->cum[lo]) lo--; /* never land in an empty block */
    int64_t bs = (int64_t)1 << s->bbits;
    if (s->cached != lo) {
        hs_qureg *q = s->q;
        HS_CHECK(hs_mem_copy(q->ctx, s->raw, (char *)q->a + (size_t)lo * bs * q->es, (size_t)bs * q->es, HS_COPY_D2H));
        for (int64_t i = 0; i < bs; i++) {
            double re = q->t == HS_C128 ? ((double *)s->raw)[2 * i] : ((float *)s->raw)[2 * i];
            double im = q->t == HS_C128 ? ((double *)s->raw)[2 * i + 1] : ((float *)s->raw)[2 * i + 1];
            s->blk[i] = re * re + im * im;
        }
        s->cached = lo;
    }
    double r = u - s->cum[lo];
    int64_t last = 0;
    for (int64_t i = 0; i < bs; i++) {
        if (s->blk[i] > 0) last = i;
        if (r < s->blk[i]) {
            *idx = (uint64_t)(lo * bs + i);
            return HS_OK;
        }
        r -= s->blk[i];
    }
    *idx = (uint64_t)(lo * bs + last); /* rounding at the very end */
    return HS_OK;
}

int hs_qureg_sample(hs_qureg *q, int64_t shots, hs_rng *rng, uint64_t *outcomes)
{
    if (shots <= 0) return HS_OK;
    HS_CHECK(hs_qureg_canonical(q)); /* index order, so that every rank count draws the same samples */
    sampler s = {q, q->nloc < 12 ? q->nloc : 12, 0, -1, NULL, NULL, NULL};
    s.nb = (int64_t)1 << (q->nloc - s.bbits);
    double *u = malloc((size_t)shots * sizeof *u);
    double *blocks = malloc((size_t)s.nb * sizeof *blocks);
    s.cum = malloc((size_t)(s.nb + 1) * sizeof *s.cum);
    s.blk = malloc(sizeof(double) << s.bbits);
    s.raw = malloc(q->es << s.bbits);
    double *tot = calloc((size_t)q->size + 1, sizeof *tot);
    int rc = HS_OK;
    if (!u || !blocks || !s.cum || !s.blk || !s.raw || !tot) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    if (rc == HS_OK) rc = hs_sv_prob_blocks(q->ctx, q->t, q->a, q->nloc, s.bbits, blocks);
    if (rc == HS_OK) {
        s.cum[0] = 0;
        for (int64_t b = 0; b < s.nb; b++) s.cum[b + 1] = s.cum[b] + blocks[b];
        double mine = s.cum[s.nb];
        if (q->dist) rc = hs_host_allgather(q->comm, HS_F64, &mine, tot + 1, 1);
        else tot[1] = mine;
    }
    if (rc == HS_OK) {
        int nr = q->dist ? q->size : 1, me = q->dist ? q->rank : 0;
        for (int r = 0; r < nr; r++) tot[r + 1] += tot[r];
        for (int64_t k = 0; k < shots; k++) u[k] = hs_rng_uniform(rng) * tot[nr];
        qsort(u, (size_t)shots, sizeof *u, cmp_double);
        for (int64_t k = 0; k < shots && rc == HS_OK; k++) {
            outcomes[k] = 0;
            int owner = 0;
            while (owner < nr - 1 && u[k] >= tot[owner + 1]) owner++;
            while (owner > 0 && tot[owner + 1] == tot[owner]) owner--;
            if (owner != me) continue;
            uint64_t li = 0;
            rc = sample_local(&s, u[k] - tot[owner], &li);
            uint64_t phys = li | ((uint64_t)me << q->nloc), logical = 0;
            for (int p = 0; p < q->n; p++)
                if (phys >> p & 1) logical |= 1ull << q->p2l[p];
            outcomes[k] = logical;
        }
        if (rc == HS_OK && q->dist) rc = hs_host_allreduce(q->comm, HS_U64, HS_COMM_SUM, outcomes, (size_t)shots);
    }
    free(u);
    free(blocks);
    free(s.cum);
    free(s.blk);
    free(s.raw);
    free(tot);
    return rc;
}

/* i^k (a + ib), real part. */
static double times_ipow_re(int k, const double v[2])
{
    switch (k & 3) {
    case 0: return v[0];
    case 1: return -v[1];
    case 2: return -v[0];
    default: return v[1];
    }
}

static void phys_masks(const hs_qureg *q, uint64_t xm, uint64_t zm, uint64_t *pxm, uint64_t *pzm)
{
    *pxm = *pzm = 0;
    for (int l = 0; l < q->n; l++) {
        if (xm >> l & 1) *pxm |= 1ull << q->l2p[l];
        if (zm >> l & 1) *pzm |= 1ull << q->l2p[l];
    }
}

static uint64_t local_mask(const hs_qureg *q) { return q->nloc >= 64 ? ~0ull : (1ull << q->nloc) - 1; }

int hs_qureg_expect_pauli(hs_qureg *q, uint64_t xm, uint64_t zm, double *value)
{
    if (q->n < 64 && ((xm | zm) >> q->n)) return HS_FAIL(HS_ERR_RUNTIME, "qureg: Pauli string beyond qubit %d", q->n - 1);
    if (q->dist) HS_CHECK(localise(q, xm, 0));
    uint64_t pxm, pzm;
    phys_masks(q, xm, zm, &pxm, &pzm);
    double v[2];
    HS_CHECK(hs_sv_pauli_expect(q->ctx, q->t, q->a, q->nloc, pxm, pzm & local_mask(q), v));
    if (q->dist && (__builtin_popcountll((pzm >> q->nloc) & (uint64_t)q->rank) & 1)) v[0] = -v[0], v[1] = -v[1];
    HS_CHECK(allsum(q, v, 2));
    *value = times_ipow_re(__builtin_popcountll(xm & zm), v);
    return HS_OK;
}

int hs_qureg_expect(hs_qureg *q, const hs_pauli_sum *h, double *value)
{
    double s = 0;
    for (int k = 0; k < h->nterms; k++) {
        double v;
        HS_CHECK(hs_qureg_expect_pauli(q, h->xm[k], h->zm[k], &v));
        s += h->c[k] * v;
    }
    *value = s;
    return HS_OK;
}

static int same_layout(hs_qureg *a, hs_qureg *b)
{
    if (a->n != b->n || a->t != b->t || a->dist != b->dist)
        return HS_FAIL(HS_ERR_RUNTIME, "qureg: registers of different shapes");
    if (memcmp(a->l2p, b->l2p, sizeof a->l2p)) {
        HS_CHECK(hs_qureg_canonical(a));
        HS_CHECK(hs_qureg_canonical(b));
    }
    return HS_OK;
}

int hs_qureg_inner(hs_qureg *a, hs_qureg *b, double out[2])
{
    HS_CHECK(same_layout(a, b));
    HS_CHECK(hs_sv_inner(a->ctx, a->t, a->a, b->a, a->nloc, out));
    return allsum(a, out, 2);
}

int hs_qureg_apply_pauli_sum(hs_qureg *out, hs_qureg *in, const hs_pauli_sum *h)
{
    if (out == in) return HS_FAIL(HS_ERR_RUNTIME, "qureg: H|psi> needs two registers");
    HS_CHECK(same_layout(out, in));
    HS_CHECK(hs_sv_set_basis(out->ctx, out->t, out->a, out->nloc, -1));
    for (int k = 0; k < h->nterms; k++) {
        uint64_t pxm, pzm;
        phys_masks(in, h->xm[k], h->zm[k], &pxm, &pzm);
        if (in->dist && (pxm & ~local_mask(in))) { /* move X factors local in both, identically */
            HS_CHECK(hs_qureg_canonical(in));
            HS_CHECK(hs_qureg_canonical(out));
            HS_CHECK(localise(in, h->xm[k], 0));
            for (int p = 0; p < in->n; p++)
                if (out->p2l[p] != in->p2l[p]) HS_CHECK(swap_phys(out, p, out->l2p[in->p2l[p]]));
            phys_masks(in, h->xm[k], h->zm[k], &pxm, &pzm);
        }
        double v[2] = {h->c[k], 0}, c[2];
        int ny = h->ny[k] & 3;
        c[0] = ny == 0 ? v[0] : ny == 2 ? -v[0] : 0;
        c[1] = ny == 1 ? v[0] : ny == 3 ? -v[0] : 0;
        if (in->dist && (__builtin_popcountll((pzm >> in->nloc) & (uint64_t)in->rank) & 1)) c[0] = -c[0], c[1] = -c[1];
        HS_CHECK(hs_sv_pauli_axpy(in->ctx, in->t, out->a, in->a, in->nloc, pxm, pzm & local_mask(in), c));
    }
    return HS_OK;
}
