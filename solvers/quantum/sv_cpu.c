/* OpenMP state-vector kernels (complex128 and complex64), the CPU twins of sv_cuda.cu. */
#include <complex.h>
#include <stdlib.h>

#include "kernels/error.h"
#include "solvers/quantum/circuit.h"
#include "solvers/quantum/sv_impl.h"

#define NCHUNK 256

#define R double
#define CT double complex
#define FN(name) name##_c128
#define crealf_or creal
#define cimagf_or cimag
#define conj_or conj
#define MKC CMPLX
#include "solvers/quantum/sv_cpu_body.h"
#undef R
#undef CT
#undef FN
#undef crealf_or
#undef cimagf_or
#undef conj_or
#undef MKC

#define R float
#define CT float complex
#define FN(name) name##_c64
#define crealf_or crealf
#define cimagf_or cimagf
#define conj_or conjf
#define MKC CMPLXF
#include "solvers/quantum/sv_cpu_body.h"

#define BOTH(t, call, ...) ((t) == HS_C128 ? call##_c128(__VA_ARGS__) : call##_c64(__VA_ARGS__))

int hs_sv_apply_cpu(hs_dtype t, void *a, const hs_sv_gate *g, const double *m, int mk)
{
    if (mk == HS_QMAT_DIAG) BOTH(t, apply_diag, a, g);
    else if (mk == HS_QMAT_PERM) BOTH(t, apply_perm, a, g);
    else BOTH(t, apply_dense, a, g, m);
    return HS_OK;
}

int hs_sv_prob_blocks_cpu(hs_dtype t, const void *a, int nloc, int bbits, double *out)
{
    BOTH(t, prob_blocks, a, nloc, bbits, out);
    return HS_OK;
}

int hs_sv_marginal_cpu(hs_dtype t, const void *a, int nloc, int nm, const int *q, double *out)
{
    BOTH(t, marginal, a, nloc, nm, q, out);
    return HS_OK;
}

int hs_sv_collapse_cpu(hs_dtype t, void *a, int nloc, uint64_t mask, uint64_t val, double scale)
{
    BOTH(t, collapse, a, nloc, mask, val, scale);
    return HS_OK;
}

int hs_sv_pauli_expect_cpu(hs_dtype t, const void *a, int nloc, uint64_t xm, uint64_t zm, double out[2])
{
    BOTH(t, pauli_expect, a, nloc, xm, zm, out);
    return HS_OK;
}

int hs_sv_inner_cpu(hs_dtype t, const void *a, const void *b, int nloc, double out[2])
{
    BOTH(t, inner, a, b, nloc, out);
    return HS_OK;
}

int hs_sv_pauli_axpy_cpu(hs_dtype t, void *y, const void *x, int nloc, uint64_t xm, uint64_t zm, const double c[2])
{
    BOTH(t, pauli_axpy, y, x, nloc, xm, zm, c);
    return HS_OK;
}

int hs_sv_pack_cpu(hs_dtype t, void *a, int nloc, int q, int v, int64_t start, int64_t count, void *buf, int unpack)
{
    BOTH(t, pack, a, q, v, start, count, buf, unpack);
    return HS_OK;
}
