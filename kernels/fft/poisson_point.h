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

/* Place and source along a dimension in order o (0 natural, 1 Makhoul's, 2 Makhoul's with the sine
 * transform's signs: see hs_poisson_ordered): element i goes to hs_poisson_order_position, and place j
 * holds element hs_poisson_order_source. */
HS_HD int64_t hs_poisson_order_position(int o, int64_t n, int64_t i) { return o ? hs_poisson_reorder_position(n, i) : i; }
HS_HD int64_t hs_poisson_order_source(int o, int64_t n, int64_t j) { return o ? hs_poisson_reorder_source(n, j) : j; }

/* The extension of a line (HS_POISSON_EXT_*, poisson_impl.h): its length, the element of the
 * line that element e (0..2n-1) of the extended line copies and that copy's sign, and where element
 * i of the line sits, unsigned, in the extended one. */
HS_HD int64_t hs_poisson_ext_len(int x, int64_t n) { return x ? 2 * n : n; }
HS_HD int64_t hs_poisson_ext_source(int x, int64_t n, int64_t e)
{
    if (x == HS_POISSON_EXT_HIGH) return e < n ? e : 2 * n - 1 - e;
    if (x == HS_POISSON_EXT_LOW) return e < n ? n - 1 - e : e - n;
    return e;
}
HS_HD double hs_poisson_ext_sign(int x, int64_t n, int64_t e)
{
    return (x == HS_POISSON_EXT_HIGH && e >= n) || (x == HS_POISSON_EXT_LOW && e < n) ? -1.0 : 1.0;
}
HS_HD int64_t hs_poisson_ext_at(int x, int64_t n, int64_t i) { return x == HS_POISSON_EXT_LOW ? n + i : i; }

/* One element of hs_poisson_order along one dimension: the value that place j of the ordered
 * (extended) line takes from the line, as its index (returned) and sign; and the place that element
 * i of the line is read back from, with its sign. */
HS_HD int64_t hs_poisson_order_gather(int o, int x, int64_t n, int64_t j, double *sign)
{
    const int64_t e = hs_poisson_order_source(o, hs_poisson_ext_len(x, n), j);
    *sign = hs_poisson_ext_sign(x, n, e) * hs_poisson_sign(o == HS_POISSON_ROWS_MAKHOUL_ALT, e);
    return hs_poisson_ext_source(x, n, e);
}
HS_HD int64_t hs_poisson_order_back(int o, int x, int64_t n, int64_t i, double *sign)
{
    const int64_t e = hs_poisson_ext_at(x, n, i);
    *sign = hs_poisson_sign(o == HS_POISSON_ROWS_MAKHOUL_ALT, e);
    return hs_poisson_order_position(o, hs_poisson_ext_len(x, n), e);
}

/* The plane solve's diagonal step (2D, one rank, both dimensions cosine/sine transforms, dct = 1, or
 * both periodic, dct = 0), in place on the R2C spectrum V[k1][k2] of the whole plane (n1 rows of the
 * slow dimension, h0 = n0/2+1 entries of the fast one), for the rows k1 and m1 = (n1 - k1) mod n1 at
 * column k2 together (k1 <= m1; the pair's two entries are read and written by this call alone).
 * Periodic: each entry divided by its eigenvalue sum ev1[row] + ev0[k2].  Cosine/sine: with the
 * plane in Makhoul's order along both dimensions, A = V(k1, k2), B = V(m1, k2), a = exp(-i pi k1 /
 * (2 n1)), b = exp(-i pi k2 / (2 n0)), P = a b A and Q = a conj(b) conj(B), the DCT-II coefficients
 * (hs_poisson_coef_at along each dimension) of the four modes the pair carries are
 *   X(k1, k2) = (Re P + Re Q) / 2        X(n1-k1, k2) = -(Im P + Im Q) / 2
 *   X(k1, n0-k2) = (Im Q - Im P) / 2     X(n1-k1, n0-k2) = (Re Q - Re P) / 2
 * (an index n1 or n0 names no mode: its value is dropped and 0 goes back); each is divided by its
 * eigenvalue sum (ev1, ev0 by stored index, scale the 1/n's), and with those Y the pair becomes
 *   P' = (Y00 - Y11) - i (Y10 + Y01),  Q' = (Y00 + Y11) + i (Y01 - Y10),
 *   A' = conj(a b) P',  B' = a conj(b) conj(Q')
 * so that the C2R gives n0 n1 times the solution in the same order (the exact inverse of the
 * above; where m1 = k1, A' and B' are the same entry and A' is written).  tw1, tw0: the twiddles
 * cos, sin (pi k / (2n)) for k = 0..n/2 of each dimension.  plane_pair maps the values A, B to
 * A', B'; plane_divide_pair does so in place in the spectrum. */
/* What the divide of the pair (k1, m1 = (n1 - k1) mod n1) at column k2 reads from the tables: the
 * stored eigenvalues of rows k1 and m1 and of columns k2 and (n0 - k2) mod n0, and (cosine/sine
 * only) the twiddles a = (ar, ai), b = (br, bi).  Loaded by hs_poisson_plane_tables (on the GPU
 * through the read-only cache), so that the CUDA column kernel can load a few pairs' worth before
 * it divides any. */
typedef struct {
    double e1, e1p, e0, e0p;
    double ar, ai, br, bi; /* DCT4: b is its p_k */
} hs_poisson_pair_tables;

#ifdef __CUDA_ARCH__
#define HS_POISSON_LOAD(p) __ldg(p)
#else
#define HS_POISSON_LOAD(p) (*(p))
#endif

HS_HD void hs_poisson_plane_tables(int64_t n1, int64_t n0, int64_t k1, int64_t k2, int dct, const double *tw1,
                                   const double *tw0, const double *ev1, const double *ev0, hs_poisson_pair_tables *t)
{
    t->e1 = HS_POISSON_LOAD(ev1 + k1), t->e1p = HS_POISSON_LOAD(ev1 + (k1 > 0 ? n1 - k1 : 0));
    t->ar = t->ai = t->br = t->bi = 0.0;
    if (dct == HS_POISSON_PLANE_DCT4) { /* column k2 carries the DCT-IV coefficients 2 k2 and n0 - 1 - 2 k2 */
        t->e0 = HS_POISSON_LOAD(ev0 + 2 * k2), t->e0p = HS_POISSON_LOAD(ev0 + (n0 - 1 - 2 * k2));
        t->ar = HS_POISSON_LOAD(tw1 + 2 * k1), t->ai = -HS_POISSON_LOAD(tw1 + 2 * k1 + 1);
        t->br = HS_POISSON_LOAD(tw0 + 4 * k2), t->bi = -HS_POISSON_LOAD(tw0 + 4 * k2 + 1);
        return;
    }
    t->e0 = HS_POISSON_LOAD(ev0 + k2), t->e0p = HS_POISSON_LOAD(ev0 + (k2 > 0 ? n0 - k2 : 0));
    if (dct) {
        t->ar = HS_POISSON_LOAD(tw1 + 2 * k1), t->ai = -HS_POISSON_LOAD(tw1 + 2 * k1 + 1);
        t->br = HS_POISSON_LOAD(tw0 + 2 * k2), t->bi = -HS_POISSON_LOAD(tw0 + 2 * k2 + 1);
    }
}

/* DCT4's pair (k1, m1) at column k (see HS_POISSON_PLANE_DCT4 and hs_poisson_plane_pair): with
 * A = G(k1, k), B = G(m1, k) the column FFT of the rows' C2C, H = p_k A and K = p_k B, the
 * y-spectra of the two real lines the column packs (a = X_{2k}, b = X_{n0-1-2k}, as a - i b) are
 * Fa = (H + conj K) / 2, Fb = (conj K - H) / (2i); each gives its two DCT-II coefficients along y
 * (Re, -Im of c Fa with c = exp(-i pi k1 / (2 n1)), the second only for k1 > 0), which are divided
 * by their eigenvalue sums; the way back rebuilds Fa', Fb' = conj(c)(Y0 - i Y1) and writes
 * A' = (Fa' - i Fb') conj(p_k), B' = (conj Fa' - i conj Fb') conj(p_k): the conjugates, at each
 * other's rows and times exp(-i pi / (4 n0)), of the values (Fa' + i Fb') q_k and (conj Fa' +
 * i conj Fb') q_k whose column IFFT and row C2C forward would give the solution's DCT-IV; so the
 * column IFFT and the rows' C2C backward give the solution packed and twisted as f was (n0/2
 * times it, folded into scale), and the pack's inverse unpacks it. */
HS_HD void hs_poisson_plane_pair4(int64_t k1, double scale, const hs_poisson_pair_tables *t, const double A[2],
                                  const double B[2], double Aout[2], double Bout[2])
{
    const double pr = t->br, pi = t->bi, ar = t->ar, ai = t->ai;
    const double Hr = pr * A[0] - pi * A[1], Hi = pr * A[1] + pi * A[0];
    const double Kr = pr * B[0] - pi * B[1], Ki = pr * B[1] + pi * B[0];
    const double far_ = 0.5 * (Hr + Kr), fai = 0.5 * (Hi - Ki); /* Fa */
    const double fbr = -0.5 * (Hi + Ki), fbi = 0.5 * (Hr - Kr); /* Fb */
    const double par = ar * far_ - ai * fai, pai = ar * fai + ai * far_; /* c Fa */
    const double pbr = ar * fbr - ai * fbi, pbi = ar * fbi + ai * fbr; /* c Fb */
    const int has1 = k1 > 0;
    const double ya0 = hs_poisson_divide_at(scale, t->e1 + t->e0, par);
    const double ya1 = has1 ? hs_poisson_divide_at(scale, t->e1p + t->e0, -pai) : 0.0;
    const double yb0 = hs_poisson_divide_at(scale, t->e1 + t->e0p, pbr);
    const double yb1 = has1 ? hs_poisson_divide_at(scale, t->e1p + t->e0p, -pbi) : 0.0;
    /* conj(c) (Y0 - i Y1) */
    const double gar = ar * ya0 - ai * ya1, gai = -ar * ya1 - ai * ya0;
    const double gbr = ar * yb0 - ai * yb1, gbi = -ar * yb1 - ai * yb0;
    const double ur = gar + gbi, ui = gai - gbr; /* Fa' - i Fb' */
    const double vr = gar - gbi, vi = -gai - gbr; /* conj Fa' - i conj Fb' */
    /* times conj(p) = (pr, -pi) */
    Aout[0] = ur * pr + ui * pi, Aout[1] = ui * pr - ur * pi;
    Bout[0] = vr * pr + vi * pi, Bout[1] = vi * pr - vr * pi;
}

/* The pair's solve from its table values: A = V(k1, k2), B = V(m1, k2) to A', B' (above). */
HS_HD void hs_poisson_plane_pair(int dct, int64_t k1, int64_t k2, double scale, const hs_poisson_pair_tables *t,
                                 const double A[2], const double B[2], double Aout[2], double Bout[2])
{
    if (dct == HS_POISSON_PLANE_DCT4) {
        hs_poisson_plane_pair4(k1, scale, t, A, B, Aout, Bout);
        return;
    }
    const double d00 = t->e1 + t->e0, d10 = t->e1p + t->e0; /* rows k1 and m1 at column k2 */
    if (!dct) {
        Aout[0] = hs_poisson_divide_at(scale, d00, A[0]);
        Aout[1] = hs_poisson_divide_at(scale, d00, A[1]);
        Bout[0] = hs_poisson_divide_at(scale, d10, B[0]);
        Bout[1] = hs_poisson_divide_at(scale, d10, B[1]);
        return;
    }
    const double d01 = t->e1 + t->e0p, d11 = t->e1p + t->e0p; /* the partner column n0 - k2 */
    const int has1 = k1 > 0, has2 = k2 > 0;                    /* modes n1 - k1, n0 - k2 exist */
    const double ar = t->ar, ai = t->ai, br = t->br, bi = t->bi;
    const double abr = ar * br - ai * bi, abi = ar * bi + ai * br;  /* a b */
    const double acr = ar * br + ai * bi, aci = ai * br - ar * bi;  /* a conj(b) */
    const double Ar = A[0], Ai = A[1], Br = B[0], Bi = -B[1];       /* A, conj(B) */
    const double Pr = abr * Ar - abi * Ai, Pi = abr * Ai + abi * Ar;
    const double Qr = acr * Br - aci * Bi, Qi = acr * Bi + aci * Br;
    const double y00 = hs_poisson_divide_at(scale, d00, 0.5 * (Pr + Qr));
    const double y10 = has1 ? hs_poisson_divide_at(scale, d10, -0.5 * (Pi + Qi)) : 0.0;
    const double y01 = has2 ? hs_poisson_divide_at(scale, d01, 0.5 * (Qi - Pi)) : 0.0;
    const double y11 = has1 && has2 ? hs_poisson_divide_at(scale, d11, 0.5 * (Qr - Pr)) : 0.0;
    const double Ppr = y00 - y11, Ppi = -(y10 + y01), Qpr = y00 + y11, Qpi = y01 - y10;
    Aout[0] = abr * Ppr + abi * Ppi; /* A' = conj(a b) P' */
    Aout[1] = abr * Ppi - abi * Ppr;
    Bout[0] = acr * Qpr + aci * Qpi; /* B' = a conj(b) conj(Q') */
    Bout[1] = aci * Qpr - acr * Qpi;
}

HS_HD void hs_poisson_plane_divide_pair(int64_t n1, int64_t n0, int64_t k1, int64_t k2, int dct, const double *tw1,
                                        const double *tw0, double scale, const double *ev1, const double *ev0,
                                        double *spec)
{
    const int64_t h0 = hs_poisson_plane_cols(n0, dct), m1 = k1 == 0 ? 0 : n1 - k1;
    double *va = spec + 2 * (k1 * h0 + k2), *vb = spec + 2 * (m1 * h0 + k2);
    const double A[2] = {va[0], va[1]}, B[2] = {vb[0], vb[1]};
    double a[2], b[2];
    hs_poisson_pair_tables t;
    hs_poisson_plane_tables(n1, n0, k1, k2, dct, tw1, tw0, ev1, ev0, &t);
    hs_poisson_plane_pair(dct, k1, k2, scale, &t, A, B, a, b);
    if (m1 != k1) vb[0] = b[0], vb[1] = b[1];
    va[0] = a[0], va[1] = a[1];
}

/* DCT4's pack of element (row place jp, column j): z_j = s (x_{2j} + i x_{n0-1-2j}) q_j with x
 * the row y's source row (reversed for side LOW) and s its y order's sign; and its inverse, the
 * unpack of element (row y, i): Re or Im of s z_k conj(q_k).  The solve's input and output are in
 * this layout (hs_poisson_ordered's HS_POISSON_ROWS_DCT4). */
HS_HD void hs_poisson_dct4_pack_values(double s, double a, double b, const double *tw4, int64_t j, double out[2])
{
    const double xr = s * a, xi = s * b; /* a = x_{2j}, b = x_{n0-1-2j} */
    const double qr = HS_POISSON_LOAD(tw4 + 4 * j + 2), qi = -HS_POISSON_LOAD(tw4 + 4 * j + 3);
    out[0] = xr * qr - xi * qi, out[1] = xr * qi + xi * qr;
}
/* Where x_e (e the DCT-IV's index) lies in the natural row: reversed for side LOW. */
HS_HD int64_t hs_poisson_dct4_cell(int side, int64_t n0, int64_t e) { return side == HS_POISSON_EXT_LOW ? n0 - 1 - e : e; }
HS_HD void hs_poisson_dct4_pack_at(int64_t n1, int64_t n0, int o1, int side, const double *tw4, const double *f,
                                   int64_t jp, int64_t j, double out[2])
{
    double s;
    const double *row = f + hs_poisson_order_gather(o1, 0, n1, jp, &s) * n0;
    hs_poisson_dct4_pack_values(s, row[hs_poisson_dct4_cell(side, n0, 2 * j)], row[hs_poisson_dct4_cell(side, n0, n0 - 1 - 2 * j)],
                                tw4, j, out);
}
HS_HD double hs_poisson_dct4_unpack_at(int64_t n1, int64_t n0, int o1, int side, const double *tw4, const double *spec,
                                       int64_t y, int64_t i)
{
    double s;
    const int64_t jp = hs_poisson_order_back(o1, 0, n1, y, &s), h = n0 / 2;
    const int64_t e = hs_poisson_dct4_cell(side, n0, i); /* the DCT-IV's index of element i */
    const int odd = (int)(e & 1);
    const int64_t k = odd ? (n0 - 1 - e) / 2 : e / 2;
    const double *v = spec + 2 * (jp * h + k);
    const double qr = HS_POISSON_LOAD(tw4 + 4 * k + 2), qi = HS_POISSON_LOAD(tw4 + 4 * k + 3); /* conj(q_k) */
    return odd ? s * (v[0] * qi + v[1] * qr) : s * (v[0] * qr - v[1] * qi);
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
