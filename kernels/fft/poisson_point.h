/* The per-element pieces of the fast Poisson solver, shared verbatim by its CPU and CUDA kernels. */
#ifndef HS_POISSON_POINT_H
#define HS_POISSON_POINT_H

#include <stdint.h>

#include "kernels/hd.h"

/* Halfcomplex from one R2C line: r[k] = Re V_k and, for 0 < k < n - k, r[n-k] = Im V_k. */
HS_HD void hs_poisson_hc_pack_at(int64_t n, int64_t k, const double *spec, double *r)
{
    r[k] = spec[2 * k];
    if (k > 0 && k < n - k) r[n - k] = spec[2 * k + 1];
}

/* The converse; the imaginary parts C2R does not read (k = 0, k = n/2 for even n) are set to 0. */
HS_HD void hs_poisson_hc_unpack_at(int64_t n, int64_t k, const double *r, double *spec)
{
    spec[2 * k] = r[k];
    spec[2 * k + 1] = (k > 0 && k < n - k) ? r[n - k] : 0.0;
}

/* Makhoul's order: v[j] comes from x[2j] in the first half (2j < n), from x[2(n-1-j)+1] after. */
HS_HD int64_t hs_poisson_reorder_source(int64_t n, int64_t j) { return 2 * j < n ? 2 * j : 2 * (n - 1 - j) + 1; }

/* (-1)^i when alternate, else 1: the DST-II of x is the DCT-II of (-1)^i x read with mode n - m. */
HS_HD double hs_poisson_sign(int alternate, int64_t i) { return (alternate && (i & 1)) ? -1.0 : 1.0; }

/* DCT-II coefficients k and n-k from V_k of the reordered line (see poisson_impl.h). */
HS_HD void hs_poisson_dct_post_at(int64_t n, int64_t k, const double *tw, const double *spec, double *X)
{
    double c = tw[2 * k], s = tw[2 * k + 1], re = spec[2 * k], im = spec[2 * k + 1];
    /* (c - i s)(re + i im) */
    X[k] = c * re + s * im;
    if (k > 0 && k < n - k) X[n - k] = -(c * im - s * re);
}

/* V_k = (c + i s)(X_k - i X_{n-k}), X_n = 0: the inverse of hs_poisson_dct_post_at. */
HS_HD void hs_poisson_dct_pre_at(int64_t n, int64_t k, const double *tw, const double *X, double *spec)
{
    double c = tw[2 * k], s = tw[2 * k + 1], a = X[k], b = k > 0 ? X[n - k] : 0.0;
    spec[2 * k] = c * a + s * b;
    spec[2 * k + 1] = s * a - c * b;
}

/* One spectral coefficient divided by its eigenvalue; the null mode (den exactly 0) becomes 0. */
HS_HD double hs_poisson_divide_at(double scale, double den, double v) { return den != 0.0 ? scale * v / den : 0.0; }

/* The diagonal solve of the last dimension done inside its transform, between the R2C and the C2R:
 * entry k (0..n/2) of one R2C line.  Real FFT: V_k / (rev + ev[k]) (both halfcomplex entries of
 * mode k share it).  DCT (dct = 1): the coefficients X_k, X_{n-k} of hs_poisson_dct_post_at, each
 * divided by its own eigenvalue, turned back into V_k by hs_poisson_dct_pre_at.  rev is the row's
 * eigenvalue sum of the other dimensions, ev[j] that of stored coefficient j, scale the 1/n's. */
HS_HD void hs_poisson_spectral_divide_at(int64_t n, int64_t k, int dct, const double *tw, double scale, double rev,
                                         const double *ev, double *spec)
{
    double re = spec[2 * k], im = spec[2 * k + 1];
    if (!dct) {
        double den = rev + ev[k];
        spec[2 * k] = hs_poisson_divide_at(scale, den, re);
        spec[2 * k + 1] = hs_poisson_divide_at(scale, den, im);
        return;
    }
    double c = tw[2 * k], s = tw[2 * k + 1];
    double a = hs_poisson_divide_at(scale, rev + ev[k], c * re + s * im), b;
    if (k == 0) b = 0.0;
    else if (k < n - k) b = hs_poisson_divide_at(scale, rev + ev[n - k], -(c * im - s * re));
    else b = a; /* k = n/2 of an even n: X_{n-k} is X_k */
    spec[2 * k] = c * a + s * b;
    spec[2 * k + 1] = s * a - c * b;
}

/* The Thomas algorithm along one line of n values `stride` apart (see hs_poisson_tridiag_*):
 * off-diagonals 1, diagonal d0 + e_j (e_0 = g_lo, e_{n-1} = g_hi).  The system is diagonally
 * dominant (|d0| >= 2, and the mixed dimension has a Dirichlet end), so it needs no pivoting; its
 * residual is at the rounding of p itself (one step of iterative refinement was measured to gain
 * nothing).  work holds the eliminated super-diagonal c'_j = 1 / (b_j - c'_{j-1}); src may be dst. */
HS_HD void hs_poisson_tridiag_line(int64_t n, int64_t stride, double d0, double rhs_scale, int g_lo, int g_hi,
                                   const double *src, double *dst, double *work)
{
    double c = 0.0, y = 0.0;
    for (int64_t j = 0; j < n; j++) {
        int64_t at = j * stride;
        c = 1.0 / (d0 + (j == 0 ? g_lo : 0) + (j == n - 1 ? g_hi : 0) - c);
        y = (rhs_scale * src[at] - y) * c;
        work[at] = c;
        dst[at] = y;
    }
    for (int64_t j = n - 2; j >= 0; j--) {
        int64_t at = j * stride;
        y = dst[at] - work[at] * y;
        dst[at] = y;
    }
}

/* The second-order Laplacian at element idx of a field with filled ghosts. */
HS_HD double hs_poisson_laplacian_at(int ndim, const double *u, int64_t idx, const int64_t stride[3],
                                     const double idx2[3])
{
    double c = u[idx], s = 0.0;
    for (int d = 0; d < ndim; d++) s += (u[idx - stride[d]] - 2.0 * c + u[idx + stride[d]]) * idx2[d];
    return s;
}

#endif
