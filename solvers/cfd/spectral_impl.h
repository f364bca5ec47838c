/* Backend entry point of the spectral CFD model's pointwise kernels (spectral_cpu.c / spectral_cuda.cu): one launch record per call. */
#ifndef HS_SPECTRAL_IMPL_H
#define HS_SPECTRAL_IMPL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* What a launch computes.  Spectral operations run over this rank's half spectrum in the layout of
 * the distributed FFT's output (kernels/fft/dfft.h): `planes` planes of kx (global kx index kx0 +
 * plane), each ny complex values along ky (index i: ky = i for i <= ny/2, i - ny above), complex
 * values interleaved (re, im).  Physical operations run over `count` contiguous reals. */
typedef enum {
    HS_SP_VELOCITY = 0, /* a, b = u^, v^ of w0 (times 1/N, ready for the unnormalised backward FFT) */
    HS_SP_PRODUCTS,     /* physical, in place: a = u v, b = v^2 - u^2 (a holds u, b holds v on entry) */
    HS_SP_STAGE,        /* stage `stage` (1..4) of IF-RK4 from a, b = FFT(u v), FFT(v^2 - u^2): acc (and
                         * w0 at stage 4) updated on kept modes, a, b = u^, v^ of the next stage's
                         * vorticity (0 on dropped modes, where w0 and acc are left alone) */
    HS_SP_FIELD,        /* out = `which` (HS_SP_U..HS_SP_DIV) of w0, times 1/N */
    HS_SP_DIAG,         /* out[e] = weight |w|^2 / k^2, out[count + e] = weight |w|^2 (Parseval sums) */
    HS_SP_RANDOM,       /* w0 = the random field of the launch's spectrum (phases from the counter-based RNG) */
    HS_SP_MASK,         /* w0 = 0 outside the 2/3 rule and at k = 0 */
    HS_SP_TENDENCY      /* out = (N(w0) + L w0) / N from a, b = FFT(u v), FFT(v^2 - u^2) (tests) */
} hs_spectral_op;

/* HS_SP_FIELD's fields. */
enum { HS_SP_U = 0, HS_SP_V = 1, HS_SP_VORT = 2, HS_SP_PSI = 3, HS_SP_DIV = 4 };

typedef struct hs_spectral_launch {
    int op;
    int stage;         /* HS_SP_STAGE: 1..4 */
    int which;         /* HS_SP_FIELD */
    int64_t planes;    /* spectral: local kx planes */
    int64_t count;     /* spectral: planes * ny; physical: reals */
    int64_t nx, ny;    /* global grid */
    int64_t kx0;       /* global kx index of local plane 0 */
    double kxs, kys;   /* 2 pi / Lx, 2 pi / Ly: wavenumber per index */
    double inv_n;      /* 1 / (nx ny) */
    double nu, drag;   /* L = -(nu k^2 + drag) */
    double h;          /* the step */
    /* forcing of the vorticity equation at (kx, ky) = (0, +-force_mode) (0: none): N += force (conjugate at -force_mode) */
    int64_t force_mode;
    double force_re, force_im;
    /* HS_SP_RANDOM: w = scale g(kappa) exp(i theta), g = kappa^(5/2) exp(shape_shift - (kappa/k0)^2), kappa = |k| / kxs,
     * theta = 2 pi hs_rng_u01(seed, stream, kx * ny + i) (ky < 0 on kx = 0: minus the phase of -ky) */
    double scale, k0, shape_shift;
    uint64_t seed, stream;
    double *w0, *acc, *a, *b, *out;
} hs_spectral_launch;

int hs_spectral_launch_cpu(const hs_spectral_launch *L);
int hs_spectral_launch_cuda(struct hs_cuda_ctx *cu, const hs_spectral_launch *L);

#ifdef __cplusplus
}
#endif
#endif
