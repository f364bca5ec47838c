/* PINN losses, OpenMP backend. */
#include "kernels/error.h"
#include "physics/pde1d.h"
#include "solvers/pinn/pinn_loss_impl.h"

#define LOSS_KERNELS(T, SFX)                                                                                      \
    static void residual_##SFX(int kind, double coef, double st, double sx, size_t n, double scale, const T *out, T *dout, double *sq) \
    {                                                                                                            \
        _Pragma("omp parallel for schedule(static) if (n > 4096)") for (size_t i = 0; i < n; i++)               \
        {                                                                                                        \
            double dr[4];                                                                                        \
            double r = hs_pde1d_residual(kind, coef, out[i], st * out[n + i], sx * out[2 * n + i], sx * sx * out[3 * n + i], dr);   \
            sq[i] = r * r;                                                                                       \
            dr[1] *= st, dr[2] *= sx, dr[3] *= sx * sx; /* chain rule of the input scaling */ \
            for (int c = 0; c < 4; c++) dout[c * n + i] = (T)(2.0 * scale * r * dr[c]);                          \
        }                                                                                                        \
    }                                                                                                            \
    static void data_##SFX(size_t n, double scale, const T *out, const double *target, T *dout, double *sq)      \
    {                                                                                                            \
        for (size_t i = 0; i < n; i++) {                                                                         \
            double e = (double)out[i] - target[i];                                                               \
            sq[i] = e * e;                                                                                       \
            dout[i] = (T)(2.0 * scale * e);                                                                      \
        }                                                                                                        \
    }

LOSS_KERNELS(double, f64)
LOSS_KERNELS(float, f32)

int hs_pinn_residual_loss_cpu(hs_dtype dt, int kind, double coef, double st, double sx, size_t n, double scale, const void *out, void *dout,
                              double *sq)
{
    if (dt == HS_F64) residual_f64(kind, coef, st, sx, n, scale, out, dout, sq);
    else residual_f32(kind, coef, st, sx, n, scale, out, dout, sq);
    return HS_OK;
}

int hs_pinn_data_loss_cpu(hs_dtype dt, size_t n, double scale, const void *out, const double *target, void *dout,
                          double *sq)
{
    if (dt == HS_F64) data_f64(n, scale, out, target, dout, sq);
    else data_f32(n, scale, out, target, dout, sq);
    return HS_OK;
}
