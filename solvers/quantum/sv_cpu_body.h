/* OpenMP state-vector kernels for one precision; included twice by sv_cpu.c with R (real type),
 * CT (complex type) and FN(name) (name with the precision suffix) defined. */

/* Complex products written out: C's operator calls __muldc3 (NaN/Inf recovery) unless the whole
 * build uses -fcx-limited-range, and that call dominates a memory-bound kernel. */
static inline CT FN(mul)(CT a, CT b)
{
    R ar = crealf_or(a), ai = cimagf_or(a), br = crealf_or(b), bi = cimagf_or(b);
    return MKC(ar * br - ai * bi, ar * bi + ai * br);
}

static inline uint64_t FN(insert_zeros)(uint64_t g, const int *pos, int npos)
{
    for (int j = 0; j < npos; j++) {
        uint64_t lo = g & ((1ull << pos[j]) - 1);
        g = ((g >> pos[j]) << (pos[j] + 1)) | lo;
    }
    return g;
}

static void FN(apply_dense)(CT *a, const hs_sv_gate *g, const double *m)
{
    int d = 1 << g->nt;
    CT mm[1 << (2 * HS_Q_MAX_TARGETS)];
    for (int i = 0; i < d * d; i++) mm[i] = MKC((R)m[2 * i], (R)m[2 * i + 1]);
    int64_t ng = (int64_t)1 << (g->nloc - g->npos);
    if (d == 2) { /* the common case, unrolled */
        R m0r = crealf_or(mm[0]), m0i = cimagf_or(mm[0]), m1r = crealf_or(mm[1]), m1i = cimagf_or(mm[1]);
        R m2r = crealf_or(mm[2]), m2i = cimagf_or(mm[2]), m3r = crealf_or(mm[3]), m3i = cimagf_or(mm[3]);
        uint64_t o1 = g->offs[1];
#pragma omp parallel for schedule(static)
        for (int64_t gi = 0; gi < ng; gi++) {
            uint64_t base = FN(insert_zeros)((uint64_t)gi, g->pos, g->npos) | g->cval;
            R xr = crealf_or(a[base]), xi = cimagf_or(a[base]), yr = crealf_or(a[base + o1]), yi = cimagf_or(a[base + o1]);
            a[base] = MKC(m0r * xr - m0i * xi + m1r * yr - m1i * yi, m0r * xi + m0i * xr + m1r * yi + m1i * yr);
            a[base + o1] = MKC(m2r * xr - m2i * xi + m3r * yr - m3i * yi, m2r * xi + m2i * xr + m3r * yi + m3i * yr);
        }
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t gi = 0; gi < ng; gi++) {
        uint64_t base = FN(insert_zeros)((uint64_t)gi, g->pos, g->npos) | g->cval;
        R inr[1 << HS_Q_MAX_TARGETS], ini[1 << HS_Q_MAX_TARGETS];
        for (int k = 0; k < d; k++) inr[k] = crealf_or(a[base + g->offs[k]]), ini[k] = cimagf_or(a[base + g->offs[k]]);
        for (int r = 0; r < d; r++) {
            R sr = 0, si = 0;
            for (int k = 0; k < d; k++) {
                R mr = crealf_or(mm[r * d + k]), mi = cimagf_or(mm[r * d + k]);
                sr += mr * inr[k] - mi * ini[k];
                si += mr * ini[k] + mi * inr[k];
            }
            a[base + g->offs[r]] = MKC(sr, si);
        }
    }
}

static void FN(apply_perm)(CT *a, const hs_sv_gate *g)
{
    int d = 1 << g->nt;
    CT ph[1 << HS_Q_MAX_TARGETS];
    for (int k = 0; k < d; k++) ph[k] = MKC((R)g->ph[2 * k], (R)g->ph[2 * k + 1]);
    int64_t ng = (int64_t)1 << (g->nloc - g->npos);
#pragma omp parallel for schedule(static)
    for (int64_t gi = 0; gi < ng; gi++) {
        uint64_t base = FN(insert_zeros)((uint64_t)gi, g->pos, g->npos) | g->cval;
        CT in[1 << HS_Q_MAX_TARGETS];
        for (int k = 0; k < d; k++) in[k] = a[base + g->offs[k]];
        for (int r = 0; r < d; r++) a[base + g->offs[r]] = FN(mul)(ph[r], in[g->src[r]]);
    }
}

static void FN(apply_diag)(CT *a, const hs_sv_gate *g)
{
    int d = 1 << g->nt;
    CT ph[1 << HS_Q_MAX_TARGETS];
    for (int k = 0; k < d; k++) ph[k] = MKC((R)g->ph[2 * k], (R)g->ph[2 * k + 1]);
    int64_t n = (int64_t)1 << g->nloc;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        if (((uint64_t)i & g->cmask) != g->cval) continue;
        int k = 0;
        for (int j = 0; j < g->nt; j++) k |= (int)((uint64_t)i >> g->tbit[j] & 1) << j;
        a[i] = FN(mul)(a[i], ph[k]);
    }
}

static void FN(prob_blocks)(const CT *a, int nloc, int bbits, double *out)
{
    int64_t nb = (int64_t)1 << (nloc - bbits), bs = (int64_t)1 << bbits;
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        double s = 0;
        for (int64_t i = b * bs; i < (b + 1) * bs; i++) {
            double re = (double)crealf_or(a[i]), im = (double)cimagf_or(a[i]);
            s += re * re + im * im;
        }
        out[b] = s;
    }
}

/* Fixed chunking keeps the sums independent of the thread count. */
static void FN(marginal)(const CT *a, int nloc, int nm, const int *q, double *out)
{
    int64_t n = (int64_t)1 << nloc, nch = n < NCHUNK ? n : NCHUNK, nb = (int64_t)1 << nm;
    double *part = calloc((size_t)(nch * nb), sizeof(double));
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < nch; c++) {
        for (int64_t i = c * n / nch; i < (c + 1) * n / nch; i++) {
            int k = 0;
            for (int j = 0; j < nm; j++) k |= (int)((uint64_t)i >> q[j] & 1) << j;
            double re = (double)crealf_or(a[i]), im = (double)cimagf_or(a[i]);
            part[c * nb + k] += re * re + im * im;
        }
    }
    for (int64_t k = 0; k < nb; k++) out[k] = 0;
    for (int64_t c = 0; c < nch; c++)
        for (int64_t k = 0; k < nb; k++) out[k] += part[c * nb + k];
    free(part);
}

static void FN(collapse)(CT *a, int nloc, uint64_t mask, uint64_t val, double scale)
{
    int64_t n = (int64_t)1 << nloc;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) a[i] = (((uint64_t)i & mask) == val) ? MKC(crealf_or(a[i]) * (R)scale, cimagf_or(a[i]) * (R)scale) : MKC(0, 0);
}

static void FN(pauli_expect)(const CT *a, int nloc, uint64_t xm, uint64_t zm, double out[2])
{
    int64_t n = (int64_t)1 << nloc, nch = n < NCHUNK ? n : NCHUNK;
    double pr[NCHUNK], pi[NCHUNK];
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < nch; c++) {
        double sr = 0, si = 0;
        for (int64_t i = c * n / nch; i < (c + 1) * n / nch; i++) {
            CT v = FN(mul)(conj_or(a[(uint64_t)i ^ xm]), a[i]);
            double sg = __builtin_popcountll((uint64_t)i & zm) & 1 ? -1.0 : 1.0;
            sr += sg * (double)crealf_or(v);
            si += sg * (double)cimagf_or(v);
        }
        pr[c] = sr;
        pi[c] = si;
    }
    out[0] = out[1] = 0;
    for (int64_t c = 0; c < nch; c++) out[0] += pr[c], out[1] += pi[c];
}

static void FN(inner)(const CT *a, const CT *b, int nloc, double out[2])
{
    int64_t n = (int64_t)1 << nloc, nch = n < NCHUNK ? n : NCHUNK;
    double pr[NCHUNK], pi[NCHUNK];
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < nch; c++) {
        double sr = 0, si = 0;
        for (int64_t i = c * n / nch; i < (c + 1) * n / nch; i++) {
            CT v = FN(mul)(conj_or(a[i]), b[i]);
            sr += (double)crealf_or(v);
            si += (double)cimagf_or(v);
        }
        pr[c] = sr;
        pi[c] = si;
    }
    out[0] = out[1] = 0;
    for (int64_t c = 0; c < nch; c++) out[0] += pr[c], out[1] += pi[c];
}

static void FN(pauli_axpy)(CT *y, const CT *x, int nloc, uint64_t xm, uint64_t zm, const double c[2])
{
    int64_t n = (int64_t)1 << nloc;
    CT cc = MKC((R)c[0], (R)c[1]);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        CT v = FN(mul)(cc, x[i]);
        y[(uint64_t)i ^ xm] += (__builtin_popcountll((uint64_t)i & zm) & 1) ? -v : v;
    }
}

static void FN(pack)(CT *a, int q, int v, int64_t start, int64_t count, CT *buf, int unpack)
{
    uint64_t lo = (1ull << q) - 1;
#pragma omp parallel for schedule(static)
    for (int64_t j = start; j < start + count; j++) {
        uint64_t i = (((uint64_t)j & ~lo) << 1) | ((uint64_t)v << q) | ((uint64_t)j & lo);
        if (unpack) a[i] = buf[j - start];
        else buf[j - start] = a[i];
    }
}
