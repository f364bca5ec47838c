/* CPU (OpenMP) kernels of the fast Poisson solver: transposes, transform pre/post steps, the divide and the tridiagonal sweeps. */
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "kernels/fft/poisson_impl.h"
#include "kernels/fft/poisson_point.h"

int hs_poisson_transpose_cpu(int64_t batch, int64_t rows, int64_t cols, const double *src, int64_t sbs, int64_t srs,
                             double *dst, int64_t dbs, int64_t dcs)
{
    if (batch <= 0 || rows <= 0 || cols <= 0) return HS_OK;
    /* 32 x 32 tiles: both the rows read and the rows written stay in L1 while a tile is moved */
    const int64_t T = 32, tr = (rows + T - 1) / T, tc = (cols + T - 1) / T;
#pragma omp parallel for collapse(3) schedule(static) if (batch * rows * cols > HS_CPU_SERIAL_BELOW)
    for (int64_t b = 0; b < batch; b++)
        for (int64_t ti = 0; ti < tr; ti++)
            for (int64_t tj = 0; tj < tc; tj++) {
                const double *s = src + b * sbs;
                double *d = dst + b * dbs;
                int64_t r1 = (ti + 1) * T < rows ? (ti + 1) * T : rows, c1 = (tj + 1) * T < cols ? (tj + 1) * T : cols;
                for (int64_t c = tj * T; c < c1; c++)
                    for (int64_t r = ti * T; r < r1; r++) d[c * dcs + r] = s[r * srs + c];
            }
    return HS_OK;
}

int hs_poisson_copy_runs_cpu(int64_t rows, int64_t run, const double *src, int64_t srs, double *dst, int64_t drs)
{
    if (rows <= 0 || run <= 0) return HS_OK;
#pragma omp parallel for schedule(static) if (rows * run > HS_CPU_SERIAL_BELOW)
    for (int64_t r = 0; r < rows; r++) memcpy(dst + r * drs, src + r * srs, (size_t)run * sizeof(double));
    return HS_OK;
}

int hs_poisson_hc_pack_cpu(int64_t lines, int64_t n, const double *spec, double *dst)
{
    const int64_t h = n / 2 + 1;
#pragma omp parallel for schedule(static) if (lines * n > HS_CPU_SERIAL_BELOW)
    for (int64_t l = 0; l < lines; l++)
        for (int64_t k = 0; k < h; k++) hs_poisson_hc_pack_at(n, k, spec + 2 * l * h, dst + l * n);
    return HS_OK;
}

int hs_poisson_hc_unpack_cpu(int64_t lines, int64_t n, const double *src, double *spec)
{
    const int64_t h = n / 2 + 1;
#pragma omp parallel for schedule(static) if (lines * n > HS_CPU_SERIAL_BELOW)
    for (int64_t l = 0; l < lines; l++)
        for (int64_t k = 0; k < h; k++) hs_poisson_hc_unpack_at(n, k, src + l * n, spec + 2 * l * h);
    return HS_OK;
}

int hs_poisson_dct_reorder_cpu(int64_t lines, int64_t n, int alternate, const double *src, double *dst)
{
#pragma omp parallel for schedule(static) if (lines * n > HS_CPU_SERIAL_BELOW)
    for (int64_t l = 0; l < lines; l++) {
        const double *x = src + l * n;
        double *v = dst + l * n;
        for (int64_t j = 0; j < n; j++) {
            int64_t i = hs_poisson_reorder_source(n, j);
            v[j] = hs_poisson_sign(alternate, i) * x[i];
        }
    }
    return HS_OK;
}

int hs_poisson_dct_unreorder_cpu(int64_t lines, int64_t n, int alternate, const double *src, double *dst)
{
#pragma omp parallel for schedule(static) if (lines * n > HS_CPU_SERIAL_BELOW)
    for (int64_t l = 0; l < lines; l++) {
        const double *v = src + l * n;
        double *x = dst + l * n;
        for (int64_t j = 0; j < n; j++) {
            int64_t i = hs_poisson_reorder_source(n, j);
            x[i] = hs_poisson_sign(alternate, i) * v[j];
        }
    }
    return HS_OK;
}

int hs_poisson_dct_post_cpu(int64_t lines, int64_t n, const double *tw, const double *spec, double *dst)
{
    const int64_t h = n / 2 + 1;
#pragma omp parallel for schedule(static) if (lines * n > HS_CPU_SERIAL_BELOW)
    for (int64_t l = 0; l < lines; l++)
        for (int64_t k = 0; k < h; k++) hs_poisson_dct_post_at(n, k, tw, spec + 2 * l * h, dst + l * n);
    return HS_OK;
}

int hs_poisson_dct_pre_cpu(int64_t lines, int64_t n, const double *tw, const double *src, double *spec)
{
    const int64_t h = n / 2 + 1;
#pragma omp parallel for schedule(static) if (lines * n > HS_CPU_SERIAL_BELOW)
    for (int64_t l = 0; l < lines; l++)
        for (int64_t k = 0; k < h; k++) hs_poisson_dct_pre_at(n, k, tw, src + l * n, spec + 2 * l * h);
    return HS_OK;
}

int hs_poisson_spectral_divide_cpu(int64_t rows, int64_t n, int dct, const double *tw, double scale,
                                   const double *row_ev, const double *ev, double *spec)
{
    const int64_t h = n / 2 + 1;
#pragma omp parallel for schedule(static) if (rows * n > HS_CPU_SERIAL_BELOW)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < h; k++) hs_poisson_spectral_divide_at(n, k, dct, tw, scale, row_ev[r], ev, spec + 2 * r * h);
    return HS_OK;
}

int hs_poisson_tridiag_cpu(int64_t outer, int64_t n, int64_t inner, const double *sigma, double h2, double scale,
                           int g_lo, int g_hi, const double *src, double *dst, double *work)
{
    if (outer <= 0 || n <= 0 || inner <= 0) return HS_OK;
    const double rs = h2 * scale;
#pragma omp parallel for collapse(2) schedule(static) if (outer * n * inner > HS_CPU_SERIAL_BELOW)
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            hs_poisson_tridiag_line(n, inner, sigma[o * inner + i] * h2 - 2.0, rs, g_lo, g_hi, src + base, dst + base,
                                    work + base);
        }
    return HS_OK;
}

int hs_poisson_laplacian_cpu(int ndim, const int64_t n[3], const double *u, int64_t sy, int64_t sz,
                             const double idx2[3], double *out)
{
    const int64_t stride[3] = {1, sy, sz};
#pragma omp parallel for collapse(2) schedule(static) if (n[0] * n[1] * n[2] > HS_CPU_SERIAL_BELOW)
    for (int64_t k = 0; k < n[2]; k++)
        for (int64_t j = 0; j < n[1]; j++)
            for (int64_t i = 0; i < n[0]; i++)
                out[(k * n[1] + j) * n[0] + i] = hs_poisson_laplacian_at(ndim, u, k * sz + j * sy + i, stride, idx2);
    return HS_OK;
}
