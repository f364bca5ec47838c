/* The spectral CFD model's pointwise operations on one Fourier mode or grid point, shared verbatim by the CPU and CUDA kernels. */
#ifndef HS_SPECTRAL_POINT_H
#define HS_SPECTRAL_POINT_H

#include <math.h>

#include "kernels/hd.h"
#include "kernels/rng/rng.h"
#include "solvers/cfd/spectral_impl.h"

/* The signed wavenumber index of position i (0..n-1) of a full FFT axis. */
HS_HD int64_t hs_spectral_signed(int64_t i, int64_t n) { return i <= n / 2 ? i : i - n; }

/* The 2/3 rule (Orszag 1971): a mode is kept when 3 |k| < n along both axes, so that the aliases
 * of a quadratic product of kept modes (at |k| >= n - 2 max|k| > max|k|) all fall on dropped
 * modes and the kept part of the product is exact.  It also drops the Nyquist modes. */
HS_HD int hs_spectral_kept(int64_t kx, int64_t ky, int64_t nx, int64_t ny)
{
    int64_t ax = kx < 0 ? -kx : kx, ay = ky < 0 ? -ky : ky;
    return 3 * ax < nx && 3 * ay < ny;
}

/* The amplitude of the random field's vorticity at wavenumber kappa (in units of 2 pi / Lx):
 * |w| ~ sqrt(kappa E(kappa)) with the energy spectrum E(k) ~ k^4 exp(-2 (k/k0)^2), which peaks at
 * k0 (a 2D shell of radius k holds ~ 2 pi k modes, each with energy |w|^2 / (2 k^2)).  The
 * exponent is taken relative to shift = (kappa_min / k0)^2 of the smallest mode on the grid (the
 * field is scaled to its energy afterwards, so a constant factor changes nothing): with a peak k0
 * well below the lowest mode, exp(-r^2) underflowed to 0 on every mode (k0 = 0.01 gave a field of
 * zero energy, silently). */
HS_HD double hs_spectral_shape(double kappa, double k0, double shift)
{
    double r = kappa / k0;
    return kappa * kappa * sqrt(kappa) * exp(shift - r * r);
}

/* u^ = i ky psi^, v^ = -i kx psi^ with psi^ = w^ / k^2, times s (only products: the same bits
 * wherever it is inlined, fused multiply-adds or not). */
HS_HD void hs_spectral_velocity(double wr, double wi, double kx, double ky, double k2, double s, double *uh, double *vh)
{
    if (k2 == 0.0) {
        uh[0] = uh[1] = vh[0] = vh[1] = 0.0;
        return;
    }
    double f = s / k2, pr = wr * f, pi = wi * f;
    uh[0] = -ky * pi;
    uh[1] = ky * pr;
    vh[0] = kx * pi;
    vh[1] = -kx * pr;
}

/* The mode's wavenumbers and what the operations share. */
typedef struct hs_spectral_mode {
    int64_t e, kxi, kyi;
    double kx, ky, k2;
    int kept;
} hs_spectral_mode;

HS_HD hs_spectral_mode hs_spectral_mode_at(const hs_spectral_launch *L, int64_t plane, int64_t i)
{
    hs_spectral_mode m;
    m.e = plane * L->ny + i;
    m.kxi = L->kx0 + plane;
    m.kyi = hs_spectral_signed(i, L->ny);
    m.kx = (double)m.kxi * L->kxs;
    m.ky = (double)m.kyi * L->kys;
    m.k2 = m.kx * m.kx + m.ky * m.ky;
    m.kept = hs_spectral_kept(m.kxi, m.kyi, L->nx, L->ny);
    return m;
}

/* The advection term N = -u.grad w in Basdevant's form (J. Comput. Phys. 50, 1983): for a
 * divergence-free 2D velocity  u.grad w = (d_xx - d_yy)(u v) + d_xy (v^2 - u^2),  so
 * N^ = (kx^2 - ky^2) FFT(u v) + kx ky FFT(v^2 - u^2): two products and four transforms per
 * evaluation instead of five.  Zero on dropped modes; plus the forcing. */
HS_HD void hs_spectral_advection(const hs_spectral_launch *L, const hs_spectral_mode *m, double *n)
{
    n[0] = n[1] = 0.0;
    if (m->kept) {
        const double *P = L->a + 2 * m->e, *Q = L->b + 2 * m->e;
        double c1 = m->kx * m->kx - m->ky * m->ky, c2 = m->kx * m->ky;
        n[0] = c1 * P[0] + c2 * Q[0];
        n[1] = c1 * P[1] + c2 * Q[1];
    }
    if (L->force_mode > 0 && m->kxi == 0 && (m->kyi == L->force_mode || m->kyi == -L->force_mode)) {
        n[0] += L->force_re;
        n[1] += m->kyi > 0 ? L->force_im : -L->force_im;
    }
}

/* One stage of the integrating-factor RK4 (the classical RK4 applied to exp(-L t) w, L = -(nu k^2
 * + drag), so that the linear decay is exact and sets no step limit).  With E = exp(L h / 2) and the
 * stage values a, b, c, d of N:
 *   w1 = E (w + h/2 a),  w2 = E w + h/2 b,  w3 = E^2 w + h E c,
 *   w(t+h) = E^2 w + h/6 (E^2 a + 2 E (b + c) + d),
 * accumulated in acc as the stages arrive.  a, b (the launch's) receive u^, v^ of the next stage's
 * vorticity (of w(t+h) after stage 4, for the next step's first evaluation). */
HS_HD void hs_spectral_stage(const hs_spectral_launch *L, int64_t plane, int64_t i)
{
    hs_spectral_mode m = hs_spectral_mode_at(L, plane, i);
    if (!m.kept) {
        /* the vorticity stays 0 on a dropped mode (5/9 of the half spectrum): w0 and acc are
         * neither read nor written there, only the next transforms' inputs are cleared */
        L->a[2 * m.e] = L->a[2 * m.e + 1] = L->b[2 * m.e] = L->b[2 * m.e + 1] = 0.0;
        return;
    }
    double n[2];
    hs_spectral_advection(L, &m, n);
    double *w0 = L->w0 + 2 * m.e, *acc = L->acc + 2 * m.e;
    const double h = L->h, lam = L->nu * m.k2 + L->drag;
    const double E = exp(-0.5 * h * lam), E2 = E * E;
    double ws[2];
    for (int c = 0; c < 2; c++) {
        const double w = w0[c];
        switch (L->stage) {
        case 1:
            acc[c] = E2 * w + (h / 6.0) * E2 * n[c];
            ws[c] = E * (w + 0.5 * h * n[c]);
            break;
        case 2:
            acc[c] += (h / 3.0) * E * n[c];
            ws[c] = E * w + 0.5 * h * n[c];
            break;
        case 3:
            acc[c] += (h / 3.0) * E * n[c];
            ws[c] = E2 * w + h * E * n[c];
            break;
        default:
            ws[c] = acc[c] + (h / 6.0) * n[c];
            w0[c] = ws[c];
            break;
        }
    }
    hs_spectral_velocity(ws[0], ws[1], m.kx, m.ky, m.k2, L->inv_n, L->a + 2 * m.e, L->b + 2 * m.e);
}

/* The phase of the random field at global mode (kxi, position i): from the counter of the mode
 * itself, so that it does not depend on how the spectrum is split; on the kx = 0 line the modes
 * with ky < 0 take minus the phase of -ky (a real field's spectrum is Hermitian there). */
HS_HD void hs_spectral_random(const hs_spectral_launch *L, const hs_spectral_mode *m, int64_t i, double *w)
{
    w[0] = w[1] = 0.0;
    if (!m->kept || m->k2 == 0.0) return;
    int64_t pos = i;
    double sign = 1.0;
    if (m->kxi == 0 && m->kyi < 0) pos = -m->kyi, sign = -1.0;
    double theta = 6.283185307179586476925 * hs_rng_u01(L->seed, L->stream, (uint64_t)(m->kxi * L->ny + pos));
    double g = L->scale * hs_spectral_shape(sqrt(m->k2) / L->kxs, L->k0, L->shape_shift);
    w[0] = g * cos(theta);
    w[1] = sign * g * sin(theta);
}

/* Every spectral operation but the stage at mode (plane, i). */
HS_HD void hs_spectral_point(const hs_spectral_launch *L, int64_t plane, int64_t i)
{
    hs_spectral_mode m = hs_spectral_mode_at(L, plane, i);
    const int64_t e = m.e;
    double *w0 = L->w0 + 2 * e;
    switch (L->op) {
    case HS_SP_VELOCITY:
        hs_spectral_velocity(w0[0], w0[1], m.kx, m.ky, m.k2, L->inv_n, L->a + 2 * e, L->b + 2 * e);
        break;
    case HS_SP_FIELD: {
        double *o = L->out + 2 * e, uh[2], vh[2];
        hs_spectral_velocity(w0[0], w0[1], m.kx, m.ky, m.k2, L->inv_n, uh, vh);
        if (L->which == HS_SP_U) o[0] = uh[0], o[1] = uh[1];
        else if (L->which == HS_SP_V) o[0] = vh[0], o[1] = vh[1];
        else if (L->which == HS_SP_VORT) o[0] = w0[0] * L->inv_n, o[1] = w0[1] * L->inv_n;
        else if (L->which == HS_SP_PSI) {
            double f = m.k2 > 0.0 ? L->inv_n / m.k2 : 0.0;
            o[0] = w0[0] * f, o[1] = w0[1] * f;
        } else { /* i kx u^ + i ky v^ of the velocity as the model represents it */
            o[0] = -m.kx * uh[1] - m.ky * vh[1];
            o[1] = m.kx * uh[0] + m.ky * vh[0];
        }
        break;
    }
    case HS_SP_DIAG: {
        /* the half spectrum stands for the whole: kx > 0 twice (its conjugate -kx is not stored) */
        double weight = m.kxi == 0 || 2 * m.kxi == L->nx ? 1.0 : 2.0, m2 = w0[0] * w0[0] + w0[1] * w0[1];
        L->out[e] = m.k2 > 0.0 ? weight * m2 / m.k2 : 0.0;
        L->out[L->count + e] = weight * m2;
        break;
    }
    case HS_SP_RANDOM:
        hs_spectral_random(L, &m, i, w0);
        break;
    case HS_SP_MASK:
        if (!m.kept || m.k2 == 0.0) w0[0] = w0[1] = 0.0;
        break;
    case HS_SP_TENDENCY: {
        double n[2], lam = L->nu * m.k2 + L->drag;
        hs_spectral_advection(L, &m, n);
        L->out[2 * e] = (n[0] - lam * w0[0]) * L->inv_n;
        L->out[2 * e + 1] = (n[1] - lam * w0[1]) * L->inv_n;
        break;
    }
    default:
        break;
    }
}

/* HS_SP_PRODUCTS at grid point e: u v and v^2 - u^2 in place of u and v. */
HS_HD void hs_spectral_products(const hs_spectral_launch *L, int64_t e)
{
    const double u = L->a[e], v = L->b[e];
    L->a[e] = u * v;
    L->b[e] = (v - u) * (v + u);
}

#endif
