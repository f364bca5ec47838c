/* The per-element pieces of the fast Poisson solver, shared verbatim by its CPU and CUDA kernels. */
#ifndef HS_POISSON_POINT_H
#define HS_POISSON_POINT_H

#include <stdint.h>

#include "kernels/fft/poisson_impl.h"
#include "kernels/hd.h"

/* Makhoul's order: v[j] comes from x[2j] in the first half (2j < n), from x[2(n-1-j)+1] after. */
HS_HD int64_t hs_poisson_reorder_source(int64_t n, int64_t j) { return 2 * j < n ? 2 * j : 2 * (n - 1 - j) + 1; }

/* The converse: the place j in Makhoul's order of element i. */
HS_HD int64_t hs_poisson_reorder_position(int64_t n, int64_t i) { return (i & 1) ? n - 1 - i / 2 : i / 2; }

/* (-1)^i when alternate, else 1: the DST-II of x is the DCT-II of (-1)^i x read with mode n - m. */
HS_HD double hs_poisson_sign(int alternate, int64_t i) { return (alternate && (i & 1)) ? -1.0 : 1.0; }

/* Coefficient c (0..n-1) of a real line transform from the line's R2C spectrum V (n/2+1 complex).
 * dct = 0: halfcomplex (FFTW's r2hc order), Re V_c for c <= n - c, Im V_{n-c} after.
 * dct = 1: the unnormalised DCT-II X_c = sum_j x_j cos(pi c (2j+1) / (2n)) of x when V is the
 * spectrum of x in Makhoul's order: X_k = Re(w_k V_k), X_{n-k} = -Im(w_k V_k) for 0 < k < n - k,
 * w_k = exp(-i pi k / (2n)), tw[2k], tw[2k+1] = cos, sin (pi k / (2n)), k = 0..n/2. */
HS_HD double hs_poisson_coef_at(int64_t n, int64_t c, int dct, const double *tw, const double *spec)
{
    int low = c <= n - c;
    int64_t k = low ? c : n - c;
    double re = spec[2 * k], im = spec[2 * k + 1];
    if (!dct) return low ? re : im;
    double co = tw[2 * k], s = tw[2 * k + 1];
    /* (co - i s)(re + i im) */
    return low ? co * re + s * im : -(co * im - s * re);
}

/* Entry k (0..n/2) of the R2C spectrum from the coefficients a = X_k and b = X_{n-k} (b is not
 * used for k = 0, where X_n would be): the exact inverse of hs_poisson_coef_at, so that C2R gives
 * n times the line (in Makhoul's order for the DCT).  Halfcomplex: V_k = a + i b, with 0 for the
 * imaginary parts C2R does not read (k = 0, k = n/2 of an even n).  DCT: V_k = conj(w_k)(a - i b).
 * spec_pair writes V_k to v[0], v[1]; spec_at into the spectrum. */
HS_HD void hs_poisson_spec_pair(int64_t n, int64_t k, int dct, const double *tw, double a, double b, double v[2])
{
    if (!dct) {
        v[0] = a;
        v[1] = (k > 0 && k < n - k) ? b : 0.0;
        return;
    }
    double co = tw[2 * k], s = tw[2 * k + 1];
    if (k == 0) b = 0.0;
    v[0] = co * a + s * b;
    v[1] = s * a - co * b;
}
HS_HD void hs_poisson_spec_at(int64_t n, int64_t k, int dct, const double *tw, double a, double b, double *spec)
{
    hs_poisson_spec_pair(n, k, dct, tw, a, b, spec + 2 * k);
}

/* Value X(b, r, q*n + j) of a transposition's source row `row` = src + b*sbs + r*srs (see
 * hs_poisson_tpose): the real value, or coefficient j of the row's spectrum q. */
HS_HD double hs_poisson_tpose_get(const hs_poisson_tpose *t, const double *row, int64_t q, int64_t j)
{
    if (t->kind == HS_POISSON_COLS_REAL) return row[q * t->n + j];
    return hs_poisson_coef_at(t->n, j, t->kind == HS_POISSON_COLS_DCT, t->tw, row + 2 * q * (t->n / 2 + 1));
}

/* Where row r of a transposition lies along the destination's lines, and its sign. */
HS_HD int64_t hs_poisson_tpose_pos(const hs_poisson_tpose *t, int64_t r)
{
    return t->order == HS_POISSON_ROWS_NATURAL ? t->roff + r : hs_poisson_reorder_position(t->rn, t->roff + r);
}
HS_HD double hs_poisson_tpose_sign(const hs_poisson_tpose *t, int64_t r)
{
    return hs_poisson_sign(t->order == HS_POISSON_ROWS_MAKHOUL_ALT, t->roff + r);
}

/* One spectral coefficient divided by its eigenvalue; the null mode (den exactly 0) becomes 0. */
HS_HD double hs_poisson_divide_at(double scale, double den, double v) { return den != 0.0 ? scale * v / den : 0.0; }

/* The diagonal solve of the last dimension done inside its transform, between the R2C and the C2R:
 * entry k (0..n/2) of one R2C line.  Real FFT: V_k / (rev + ev[k]) (both halfcomplex entries of
 * mode k share it).  DCT (dct = 1): the coefficients X_k, X_{n-k} of hs_poisson_coef_at, each
 * divided by its own eigenvalue, turned back into V_k by hs_poisson_spec_at.  rev is the row's
 * eigenvalue sum of the other dimensions, ev[j] that of stored coefficient j, scale the 1/n's.
 * spectral_divided maps V_k = (re, im) to v; spectral_divide_at does so in place in the spectrum:
 * each entry on its own, so the solve can also run as cuFFT's load callback (poisson_hook_lto.cu). */
HS_HD void hs_poisson_spectral_divided(int64_t n, int64_t k, int dct, const double *tw, double scale, double rev,
                                       const double *ev, double re, double im, double v[2])
{
    if (!dct) {
        double den = rev + ev[k];
        v[0] = hs_poisson_divide_at(scale, den, re);
        v[1] = hs_poisson_divide_at(scale, den, im);
        return;
    }
    /* X_k and X_{n-k} of hs_poisson_coef_at, both from V_k */
    double co = tw[2 * k], s = tw[2 * k + 1];
    double a = hs_poisson_divide_at(scale, rev + ev[k], co * re + s * im), b;
    if (k == 0) b = 0.0;
    else if (k < n - k) b = hs_poisson_divide_at(scale, rev + ev[n - k], -(co * im - s * re));
    else b = a; /* k = n/2 of an even n: X_{n-k} is X_k */
    hs_poisson_spec_pair(n, k, 1, tw, a, b, v);
}
HS_HD void hs_poisson_spectral_divide_at(int64_t n, int64_t k, int dct, const double *tw, double scale, double rev,
                                         const double *ev, double *spec)
{
    hs_poisson_spectral_divided(n, k, dct, tw, scale, rev, ev, spec[2 * k], spec[2 * k + 1], spec + 2 * k);
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
