/* BLAS family, CPU twin: OpenMP loops, fixed-chunk deterministic dots, OpenBLAS GEMM. */
#include <stdlib.h>

#include "kernels/blas/blas_impl.h"
#include "kernels/config.h"
#include "kernels/error.h"
#if HS_HAVE_OPENBLAS
#include <cblas.h>
#endif

/* Dots are summed in chunks of fixed size whose partials are combined pairwise in index order,
 * so the result does not depend on the number of threads (bitwise reproducible). */
#define CHUNK 4096

#define ELEMENTWISE(T)                                                                              \
    static void elementwise_##T(hs_blas_op op, size_t n, T a, const T *x, T b, T *y, const T *w)    \
    {                                                                                               \
        switch (op) {                                                                               \
        case HS_BLAS_AXPBY:                                                                         \
            if (b == (T)1) {                                                                        \
                _Pragma("omp parallel for simd schedule(static) if (n > 32768)")                                   \
                for (size_t i = 0; i < n; i++) y[i] += a * x[i];                                    \
            } else {                                                                                \
                _Pragma("omp parallel for simd schedule(static) if (n > 32768)")                                   \
                for (size_t i = 0; i < n; i++) y[i] = a * x[i] + b * y[i];                          \
            }                                                                                       \
            break;                                                                                  \
        case HS_BLAS_SCAL:                                                                          \
            _Pragma("omp parallel for simd schedule(static) if (n > 32768)")                                       \
            for (size_t i = 0; i < n; i++) y[i] *= a;                                               \
            break;                                                                                  \
        case HS_BLAS_COPY:                                                                          \
            _Pragma("omp parallel for simd schedule(static) if (n > 32768)")                                       \
            for (size_t i = 0; i < n; i++) y[i] = x[i];                                             \
            break;                                                                                  \
        case HS_BLAS_FILL:                                                                          \
            _Pragma("omp parallel for simd schedule(static) if (n > 32768)")                                       \
            for (size_t i = 0; i < n; i++) y[i] = a;                                                \
            break;                                                                                  \
        case HS_BLAS_MULT:                                                                          \
            _Pragma("omp parallel for simd schedule(static) if (n > 32768)")                                       \
            for (size_t i = 0; i < n; i++) y[i] = x[i] * w[i];                                      \
            break;                                                                                  \
        }                                                                                           \
    }
ELEMENTWISE(double)
ELEMENTWISE(float)

int hs_blas_elementwise_cpu(hs_blas_op op, hs_dtype t, size_t n, double a, const void *x, double b, void *y,
                            const void *w)
{
    if (t == HS_F64) elementwise_double(op, n, a, x, b, y, w);
    else elementwise_float(op, n, (float)a, x, (float)b, y, w);
    return HS_OK;
}

/* Pairwise sum of partials in index order (fixed tree). */
static double pairwise(double *v, size_t n)
{
    while (n > 1) {
        size_t half = n / 2;
        for (size_t i = 0; i < half; i++) v[i] = v[2 * i] + v[2 * i + 1];
        if (n & 1) v[half] = v[n - 1];
        n = half + (n & 1);
    }
    return n ? v[0] : 0.0;
}

int hs_blas_dot_cpu(hs_dtype t, size_t n, const void *x, const void *y, double *result)
{
    size_t nchunks = (n + CHUNK - 1) / CHUNK;
    double stack[256], *part = nchunks <= 256 ? stack : malloc(nchunks * sizeof *part);
    if (!part) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
#pragma omp parallel for schedule(static) if (nchunks > 8)
    for (size_t c = 0; c < nchunks; c++) {
        size_t lo = c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
        double s = 0;
        if (t == HS_F64) {
            const double *a = x, *b = y;
#pragma omp simd reduction(+ : s)
            for (size_t i = lo; i < hi; i++) s += a[i] * b[i];
        } else {
            const float *a = x, *b = y;
#pragma omp simd reduction(+ : s)
            for (size_t i = lo; i < hi; i++) s += (double)a[i] * (double)b[i];
        }
        part[c] = s;
    }
    *result = pairwise(part, nchunks);
    if (part != stack) free(part);
    return HS_OK;
}

int hs_blas_cg_update_cpu(size_t n, double alpha, const double *p, const double *q, const double *dinv, double *x,
                     double *r, double *z, double sums[2])
{
    size_t nchunks = (n + CHUNK - 1) / CHUNK;
    double stack[512], *part = 2 * nchunks <= 512 ? stack : malloc(2 * nchunks * sizeof *part);
    if (!part) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    double *part_rr = part + nchunks;
#pragma omp parallel for schedule(static) if (nchunks > 8)
    for (size_t c = 0; c < nchunks; c++) {
        size_t lo = c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
        double s = 0, s2 = 0;
        if (dinv) {
#pragma omp simd reduction(+ : s, s2)
            for (size_t i = lo; i < hi; i++) {
                x[i] += alpha * p[i];
                double ri = r[i] - alpha * q[i];
                double zi = dinv[i] * ri;
                r[i] = ri;
                z[i] = zi;
                s += ri * zi;
                s2 += ri * ri;
            }
        } else {
#pragma omp simd reduction(+ : s)
            for (size_t i = lo; i < hi; i++) {
                x[i] += alpha * p[i];
                double ri = r[i] - alpha * q[i];
                r[i] = ri;
                s += ri * ri;
            }
            s2 = s;
        }
        part[c] = s;
        part_rr[c] = s2;
    }
    sums[0] = pairwise(part, nchunks);
    sums[1] = pairwise(part_rr, nchunks);
    if (part != stack) free(part);
    return HS_OK;
}

#if !HS_HAVE_OPENBLAS
/* Plain blocked GEMM for builds without OpenBLAS: correct, not fast. */
#define GEMM_REF(T)                                                                                  \
    static void gemm_ref_##T(int ta, int tb, int m, int n, int k, T alpha, const T *A, int lda,     \
                             const T *B, int ldb, T beta, T *C, int ldc)                             \
    {                                                                                                \
        _Pragma("omp parallel for schedule(static)")                                                 \
        for (int j = 0; j < n; j++)                                                                  \
            for (int i = 0; i < m; i++) {                                                            \
                double s = 0;                                                                        \
                for (int l = 0; l < k; l++) {                                                        \
                    T a = ta ? A[l + (size_t)i * lda] : A[i + (size_t)l * lda];                      \
                    T b = tb ? B[j + (size_t)l * ldb] : B[l + (size_t)j * ldb];                      \
                    s += (double)a * b;                                                              \
                }                                                                                    \
                T *c = &C[i + (size_t)j * ldc];                                                      \
                *c = (T)(alpha * s + (beta == 0 ? 0 : beta * *c));                                   \
            }                                                                                        \
    }
GEMM_REF(double)
GEMM_REF(float)
#endif

int hs_blas_gemm_cpu(hs_dtype t, int ta, int tb, int m, int n, int k, double alpha, const void *A, int lda,
                const void *B, int ldb, double beta, void *C, int ldc)
{
#if HS_HAVE_OPENBLAS
    enum CBLAS_TRANSPOSE opa = ta ? CblasTrans : CblasNoTrans, opb = tb ? CblasTrans : CblasNoTrans;
    if (t == HS_F64)
        cblas_dgemm(CblasColMajor, opa, opb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        cblas_sgemm(CblasColMajor, opa, opb, m, n, k, (float)alpha, A, lda, B, ldb, (float)beta, C, ldc);
#else
    if (t == HS_F64) gemm_ref_double(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    else gemm_ref_float(ta, tb, m, n, k, (float)alpha, A, lda, B, ldb, (float)beta, C, ldc);
#endif
    return HS_OK;
}
