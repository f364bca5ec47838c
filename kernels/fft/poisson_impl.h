/* Backend entry points of the fast Poisson solver (kernels/fft/poisson_cpu.c, poisson_cuda.cu). */
#ifndef HS_POISSON_IMPL_H
#define HS_POISSON_IMPL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* Every array is double and lives on the backend's device; "lines" are `lines` contiguous rows of
 * length n (real) or n/2+1 (complex, interleaved re, im: the R2C half spectrum).  Both backends
 * compute each output value with the same operations in the same order, so they agree to the last
 * bit where the compiler contracts nothing into an fma (the twin test allows 1e-15 relative).
 * On CUDA the kernels are queued on cu->stream.  Sizes of 0 do nothing. */

/* dst[b*dbs + c*dcs + r] = src[b*sbs + r*srs + c] for b < batch, r < rows, c < cols: the local
 * transposes between layouts (src != dst). */
int hs_poisson_transpose_cpu(int64_t batch, int64_t rows, int64_t cols, const double *src, int64_t sbs, int64_t srs,
                             double *dst, int64_t dbs, int64_t dcs);
int hs_poisson_transpose_cuda(struct hs_cuda_ctx *cu, int64_t batch, int64_t rows, int64_t cols, const double *src,
                              int64_t sbs, int64_t srs, double *dst, int64_t dbs, int64_t dcs);

/* dst[r*drs + k] = src[r*srs + k] for r < rows, k < run: packing and unpacking all-to-all blocks. */
int hs_poisson_copy_runs_cpu(int64_t rows, int64_t run, const double *src, int64_t srs, double *dst, int64_t drs);
int hs_poisson_copy_runs_cuda(struct hs_cuda_ctx *cu, int64_t rows, int64_t run, const double *src, int64_t srs,
                              double *dst, int64_t drs);

/* Real FFT spectrum (complex lines, n/2+1) to halfcomplex real lines of length n (FFTW's r2hc
 * order: r[k] = Re V_k for k <= n/2, r[n-k] = Im V_k for 0 < k < n/2), and back (Im V_0 and, for
 * even n, Im V_{n/2} set to 0). */
int hs_poisson_hc_pack_cpu(int64_t lines, int64_t n, const double *spec, double *dst);
int hs_poisson_hc_pack_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, const double *spec, double *dst);
int hs_poisson_hc_unpack_cpu(int64_t lines, int64_t n, const double *src, double *spec);
int hs_poisson_hc_unpack_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, const double *src, double *spec);

/* Makhoul's DCT-II reordering: v[j] = s_{2j} x[2j] for 2j < n, v[n-1-j] = s_{2j+1} x[2j+1] for
 * 2j+1 < n, with s_i = (-1)^i when alternate (the DST-II through the DCT-II), else 1; and its
 * inverse x[i] = s_i v[...]. */
int hs_poisson_dct_reorder_cpu(int64_t lines, int64_t n, int alternate, const double *src, double *dst);
int hs_poisson_dct_reorder_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, int alternate, const double *src,
                                double *dst);
int hs_poisson_dct_unreorder_cpu(int64_t lines, int64_t n, int alternate, const double *src, double *dst);
int hs_poisson_dct_unreorder_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, int alternate, const double *src,
                                  double *dst);

/* tw[2k], tw[2k+1] = cos, sin (pi k / (2n)), k = 0..n/2.
 * post:  X_k = Re(w_k V_k), X_{n-k} = -Im(w_k V_k) (0 < k < n-k), w_k = exp(-i pi k / (2n)):
 *        the unnormalised DCT-II X_k = sum_j x_j cos(pi k (2j+1) / (2n)) from V = rfft(v).
 * pre:   V_k = conj(w_k) (X_k - i X_{n-k}) (X_n = 0), k = 0..n/2: the exact inverse of post, so
 *        C2R(V) = n v. */
int hs_poisson_dct_post_cpu(int64_t lines, int64_t n, const double *tw, const double *spec, double *dst);
int hs_poisson_dct_post_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, const double *tw, const double *spec,
                             double *dst);
int hs_poisson_dct_pre_cpu(int64_t lines, int64_t n, const double *tw, const double *src, double *spec);
int hs_poisson_dct_pre_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, const double *tw, const double *src,
                            double *spec);

/* The diagonal solve in spectral space, on `rows` R2C lines of the last dimension (length n, n/2+1
 * complex each) in place: hs_poisson_spectral_divide_at with rev = row_ev[r]; dct = 1 for a DCT-II
 * or DST-II dimension (tw its twiddles), 0 for a real FFT one (tw unused). */
int hs_poisson_spectral_divide_cpu(int64_t rows, int64_t n, int dct, const double *tw, double scale,
                                   const double *row_ev, const double *ev, double *spec);
int hs_poisson_spectral_divide_cuda(struct hs_cuda_ctx *cu, int64_t rows, int64_t n, int dct, const double *tw,
                                    double scale, const double *row_ev, const double *ev, double *spec);

/* Thomas sweeps along the middle index of [outer][n][inner] arrays, one independent line per
 * (o, i) = line o*inner + i:  x[j-1] + (sigma[line] h2 - 2 + e_j) x[j] + x[j+1] = h2 scale src[j]
 * with e_0 = g_lo, e_{n-1} = g_hi (both on a line of one cell), g = +1 for a Neumann end (ghost =
 * cell) and -1 for a Dirichlet end (ghost = -cell), and no neighbour beyond the ends.  `work`
 * (outer*n*inner) holds the eliminated super-diagonal.  src == dst allowed; work differs from both. */
int hs_poisson_tridiag_cpu(int64_t outer, int64_t n, int64_t inner, const double *sigma, double h2, double scale,
                           int g_lo, int g_hi, const double *src, double *dst, double *work);
int hs_poisson_tridiag_cuda(struct hs_cuda_ctx *cu, int64_t outer, int64_t n, int64_t inner, const double *sigma,
                            double h2, double scale, int g_lo, int g_hi, const double *src, double *dst, double *work);

/* out[(k*n1 + j)*n0 + i] = sum_d (u[i-e_d] - 2 u[i] + u[i+e_d]) * idx2[d] over the first ndim
 * dimensions, u at local cell (0,0,0) of a field with filled ghosts (x stride 1, y stride sy,
 * z stride sz), n = the local cells, out contiguous. */
int hs_poisson_laplacian_cpu(int ndim, const int64_t n[3], const double *u, int64_t sy, int64_t sz,
                             const double idx2[3], double *out);
int hs_poisson_laplacian_cuda(struct hs_cuda_ctx *cu, int ndim, const int64_t n[3], const double *u, int64_t sy,
                              int64_t sz, const double idx2[3], double *out);

#ifdef __cplusplus
}
#endif
#endif
