/* Backend entry points of the fast Poisson solver (kernels/fft/poisson_cpu.c, poisson_cuda.cu). */
#ifndef HS_POISSON_IMPL_H
#define HS_POISSON_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/hd.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* Every array is double and lives on the backend's device; "lines" are `lines` contiguous rows of
 * length n (real) or n/2+1 (complex, interleaved re, im: the R2C half spectrum).  Both backends
 * compute each output value with the same operations in the same order, so they agree to the last
 * bit where the compiler contracts nothing into an fma (the twin test allows 1e-14 relative).
 * On CUDA the kernels are queued on cu->stream.  Sizes of 0 do nothing. */

/* What the columns of a transposition's source hold: real values, or the coefficients of R2C
 * spectra of lines of n columns (halfcomplex, or DCT-II of Makhoul-ordered lines: see
 * hs_poisson_coef_at in poisson_point.h). */
enum { HS_POISSON_COLS_REAL = 0, HS_POISSON_COLS_HALFCOMPLEX = 1, HS_POISSON_COLS_DCT = 2 };
/* Where its rows go along the destination's lines: in order, or in Makhoul's DCT-II order (with
 * the signs (-1)^i of the DST-II through the DCT-II for MAKHOUL_ALT: see hs_poisson_order). */
enum { HS_POISSON_ROWS_NATURAL = 0, HS_POISSON_ROWS_MAKHOUL = 1, HS_POISSON_ROWS_MAKHOUL_ALT = 2 };
/* Not a row order but the layout of x in the plane solve's DCT4 kind (hs_poisson_ordered's order[0]):
 * rows of n0/2 packed, twisted complex values (hs_poisson_dct4_pack_at). */
enum { HS_POISSON_ROWS_DCT4 = 3 };

/* A local transposition [batch][rows][cols] -> [batch][cols][rows] that also finishes the transform
 * of its source's lines and starts the one of its destination's lines, so that neither needs a
 * pass of its own:
 *   forward:  dst[b*dbs + c*dcs + pos(r)] = sgn(r) * X(b, r, c)
 *   back:     the inverse, from dst's layout into src's (spectra rebuilt from the coefficients)
 * for b < batch, r < rows, c < cols, where X(b, r, c) = src[b*sbs + r*srs + c] for REAL columns;
 * for spectra, row (b, r) at src + b*sbs + r*srs holds cols / n spectra of 2(n/2+1) doubles and
 * X(b, r, q*n + j) is coefficient j of spectrum q.  pos(r) is the place of element roff + r in a
 * line of rn (itself when NATURAL, its Makhoul position otherwise) and sgn its sign (-1 only for
 * odd elements under MAKHOUL_ALT): the rows may be a block (roff..) of longer lines, as in the
 * blocks of a global transpose.  src != dst; strides in doubles. */
typedef struct hs_poisson_tpose {
    int64_t batch, rows, cols;
    int64_t sbs, srs, dbs, dcs;
    int kind;           /* HS_POISSON_COLS_* */
    int64_t n;          /* the spectra's line length (cols a multiple of it); REAL: cols */
    const double *tw;   /* DCT: the twiddles of length n (device) */
    int order;          /* HS_POISSON_ROWS_* */
    int64_t rn, roff;
} hs_poisson_tpose;

int hs_poisson_transpose_cpu(const hs_poisson_tpose *t, const double *src, double *dst);
int hs_poisson_transpose_cuda(struct hs_cuda_ctx *cu, const hs_poisson_tpose *t, const double *src, double *dst);
/* The back direction of t: `from` in the layout of t's dst, `to` in the layout of t's src. */
int hs_poisson_transpose_back_cpu(const hs_poisson_tpose *t, const double *from, double *to);
int hs_poisson_transpose_back_cuda(struct hs_cuda_ctx *cu, const hs_poisson_tpose *t, const double *from, double *to);

/* dst[r*drs + k] = src[r*srs + k] for r < rows, k < run: packing and unpacking all-to-all blocks. */
int hs_poisson_copy_runs_cpu(int64_t rows, int64_t run, const double *src, int64_t srs, double *dst, int64_t drs);
int hs_poisson_copy_runs_cuda(struct hs_cuda_ctx *cu, int64_t rows, int64_t run, const double *src, int64_t srs,
                              double *dst, int64_t drs);

/* The coefficients of R2C spectra as real lines of length n (hs_poisson_coef_at: halfcomplex for
 * dct = 0, in FFTW's r2hc order; DCT-II for dct = 1, tw its twiddles), and back (the spectra from
 * the coefficients, hs_poisson_spec_at: the exact inverse, so that C2R gives n times the line):
 * the finishing and starting steps of a line transform that no transposition does. */
int hs_poisson_line_post_cpu(int64_t lines, int64_t n, int dct, const double *tw, const double *spec, double *dst);
int hs_poisson_line_post_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, int dct, const double *tw,
                              const double *spec, double *dst);
int hs_poisson_line_pre_cpu(int64_t lines, int64_t n, int dct, const double *tw, const double *src, double *spec);
int hs_poisson_line_pre_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, int dct, const double *tw,
                             const double *src, double *spec);

/* The antisymmetric extension of a line of n cells with Neumann at one face and Dirichlet at the
 * other (the plane solve's mixed dimension): continued past its Dirichlet face by its mirror image
 * with the opposite sign, it is a line of 2n cells with Neumann at both faces, whose cosine
 * transform holds the mixed line's modes cos(pi (m + 1/2)(j + 1/2) / n) at the odd coefficients
 * k = 2m + 1, with the same eigenvalues, and zeros at the even ones.  HIGH: the Dirichlet face is
 * the line's high one (the line is the first half of the extended one), LOW: its low one (the
 * second half); NONE: no extension.  See hs_poisson_ext_source in poisson_point.h. */
enum { HS_POISSON_EXT_NONE = 0, HS_POISSON_EXT_HIGH = 1, HS_POISSON_EXT_LOW = 2 };

/* Makhoul's DCT-II reordering, of the lines of one dimension (the line transforms: planes = 1,
 * o1 = 0) or of two (the plane solve): orders o1, o0 (HS_POISSON_ROWS_*: 0 natural, 1 Makhoul's
 * v[j] = x[2j] for 2j < n, v[n-1-j] = x[2j+1] for 2j+1 < n; 2 the same times (-1)^i, the DST-II
 * through the DCT-II) of the two fastest dimensions of [planes][n1][n0] arrays: to_ordered puts
 * every element (j, i) at (hs_poisson_order_position(o1, n1, j), ..(o0, n0, i)) times its signs,
 * else the converse.  With an extension x1 or x0 (HS_POISSON_EXT_*) that dimension's ordered lines
 * are those of the extended line (2 n1 or 2 n0 long: to_ordered writes each element twice, once
 * with its sign turned, and back reads the half that is the line).  src != dst. */
int hs_poisson_order_cpu(int64_t planes, int64_t n1, int64_t n0, int o1, int o0, int x1, int x0, int to_ordered,
                         const double *src, double *dst);
int hs_poisson_order_cuda(struct hs_cuda_ctx *cu, int64_t planes, int64_t n1, int64_t n0, int o1, int o0, int x1,
                          int x0, int to_ordered, const double *src, double *dst);

/* The plane solve's kinds (its functions' `dct` argument): both dimensions periodic (FFT), both
 * cosine/sine transforms (DCT), or x mixed (Neumann at one end, Dirichlet at the other; n0 even)
 * and y a cosine/sine transform (DCT4).  DCT4 diagonalises x by the DCT-IV, whose modes
 * cos(pi (k + 1/2)(j + 1/2) / n0) are the mixed line's, through a complex FFT of n0/2 (the
 * classical algorithm: pack x_{2j} + i x_{n0-1-2j}, twist by q_j = exp(-i pi (4j + 1) / (4 n0)),
 * C2C, twist by p_k = exp(-i pi k / n0): X_{2k} = Re, X_{n0-1-2k} = -Im); the DCT-IV is its own
 * inverse up to n0/2, and the divide writes the conjugate spectrum so that a C2C backward leaves the
 * solution packed and twisted as f was (hs_poisson_plane_pair4): the input and the output of an
 * ordered solve share one layout.  Its spectrum has n0/2 columns
 * (hs_poisson_plane_cols) where the R2C's has n0/2 + 1, and twice fewer bytes than the extension of
 * a mixed dimension (HS_POISSON_EXT_*), which the plane solve takes for a mixed y or an odd n0. */
enum { HS_POISSON_PLANE_FFT = 0, HS_POISSON_PLANE_DCT = 1, HS_POISSON_PLANE_DCT4 = 2 };

/* The columns of the plane solve's spectrum: the R2C's n0/2 + 1, or DCT4's n0/2. */
HS_HD int64_t hs_poisson_plane_cols(int64_t n0, int dct) { return dct == HS_POISSON_PLANE_DCT4 ? n0 / 2 : n0 / 2 + 1; }

/* DCT4's first and last passes: f (n1 x n0, natural) -> the packed, twisted rows in the y order
 * o1 (HS_POISSON_ROWS_*), n1 x n0/2 complex in spec; and the converse, the solution (which the
 * solve leaves in the same layout, scale folded in by the divide) back to p.  side:
 * HS_POISSON_EXT_HIGH (Dirichlet at x's high face) or _LOW (at its low face: the rows are read and
 * written reversed).  tw4: per k < n0/2 the cos, sin of pi k / n0 and of pi (4k + 1) / (4 n0). */
int hs_poisson_dct4_pack_cpu(int64_t n1, int64_t n0, int o1, int side, const double *tw4, const double *f, double *spec);
int hs_poisson_dct4_pack_cuda(struct hs_cuda_ctx *cu, int64_t n1, int64_t n0, int o1, int side, const double *tw4,
                              const double *f, double *spec);
int hs_poisson_dct4_unpack_cpu(int64_t n1, int64_t n0, int o1, int side, const double *tw4, const double *spec, double *p);
int hs_poisson_dct4_unpack_cuda(struct hs_cuda_ctx *cu, int64_t n1, int64_t n0, int o1, int side, const double *tw4,
                                const double *spec, double *p);

/* The plane solve's divide on the spectrum [n1][hs_poisson_plane_cols(n0, dct)] of a whole 2D
 * plane, in place: hs_poisson_plane_divide_pair for every row pair k1 <= n1 - k1 and column. */
int hs_poisson_plane_divide_cpu(int64_t n1, int64_t n0, int dct, const double *tw1, const double *tw0, double scale,
                                const double *ev1, const double *ev0, double *spec);
int hs_poisson_plane_divide_cuda(struct hs_cuda_ctx *cu, int64_t n1, int64_t n0, int dct, const double *tw1,
                                 const double *tw0, double scale, const double *ev1, const double *ev0, double *spec);

/* The plane solve's column work in one CUDA kernel, in place on the spectrum
 * [n1][hs_poisson_plane_cols] of the rows' transforms: for each column, the forward C2C of length
 * n1, hs_poisson_plane_divide_pair on its row pairs and the backward C2C (unnormalised), in shared
 * memory: the same as the column transforms
 * of kernels/fft/fft.h and hs_poisson_plane_divide around them (the CPU's way, its twin), in one
 * pass over the spectrum.  col_tw: exp(-2 pi i t / n1) for t < n1, interleaved.  Only for the
 * lengths hs_poisson_column_fits takes (powers of two from 16 to 4096). */
int hs_poisson_column_solve_cuda(struct hs_cuda_ctx *cu, int64_t n1, int64_t n0, int dct, const double *col_tw,
                                 const double *tw1, const double *tw0, double scale, const double *ev1,
                                 const double *ev0, double *spec);
static inline int hs_poisson_column_fits(int64_t n1) { return n1 >= 16 && n1 <= 4096 && (n1 & (n1 - 1)) == 0; }

/* The diagonal solve in spectral space, on `rows` R2C lines of the last dimension (length n, n/2+1
 * complex each) in place: hs_poisson_spectral_divide_at with rev = row_ev[r]; dct = 1 for a DCT-II
 * or DST-II dimension (tw its twiddles), 0 for a real FFT one (tw unused). */
int hs_poisson_spectral_divide_cpu(int64_t rows, int64_t n, int dct, const double *tw, double scale,
                                   const double *row_ev, const double *ev, double *spec);
int hs_poisson_spectral_divide_cuda(struct hs_cuda_ctx *cu, int64_t rows, int64_t n, int dct, const double *tw,
                                    double scale, const double *row_ev, const double *ev, double *spec);

/* The same divide inside cuFFT's C2R of those lines, as its load callback (poisson_hook_lto.cu):
 * what the callback reads, in device memory (the arguments above; half = n/2+1), and the callback's
 * symbol and LTO-IR for hs_fft_plan_create_hooked (*size 0 in a build without it). */
typedef struct hs_poisson_hook_info {
    int64_t n, half;
    int dct;
    const double *tw;
    double scale;
    const double *row_ev, *ev;
} hs_poisson_hook_info;
int hs_poisson_divide_hook_cuda(const char **symbol, const void **lto_ir, size_t *size);

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
