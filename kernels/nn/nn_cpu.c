/* Dense-network family, OpenMP backend: input jets, activation jets forward and backward, bias, casts. */
#include "kernels/error.h"
#include "kernels/nn/nn_act.h"
#include "kernels/nn/nn_impl.h"


/* Per-element kernels, generated for double and float. */
#define NN_KERNELS(T, SFX)                                                                                        \
    static void input_jet_##SFX(int in, size_t n, const hs_nn_jet_layout *j, const T *x, T *h0)                  \
    {                                                                                                            \
        size_t M = (size_t)in * n;                                                                               \
        int C = 1 + j->nfirst + j->nsecond;                                                                      \
        _Pragma("omp parallel for schedule(static) if (M > 32768)") for (size_t idx = 0; idx < M; idx++)             \
        {                                                                                                        \
            int r = (int)(idx % (size_t)in);                                                                     \
            h0[idx] = x[idx];                                                                                    \
            for (int k = 0; k < j->nfirst; k++) h0[(1 + k) * M + idx] = (T)(r == j->first[k]);                  \
            for (int k = 1 + j->nfirst; k < C; k++) h0[k * M + idx] = 0;                                         \
        }                                                                                                        \
    }                                                                                                            \
    static void act_forward_##SFX(int act, int rows, size_t n, const hs_nn_jet_layout *j, const T *b, T *z, T *h) \
    {                                                                                                            \
        size_t M = (size_t)rows * n;                                                                             \
        int nf = j->nfirst, ns = j->nsecond;                                                                     \
        _Pragma("omp parallel for schedule(static) if (M > 32768)") for (size_t idx = 0; idx < M; idx++)             \
        {                                                                                                        \
            double s[4];                                                                                         \
            T z0 = z[idx] + b[idx % (size_t)rows];                                                               \
            z[idx] = z0;                                                                                         \
            hs_nn_act_eval(act, (double)z0, s);                                                                  \
            h[idx] = (T)s[0];                                                                                    \
            for (int k = 0; k < nf; k++) h[(1 + k) * M + idx] = (T)(s[1] * z[(1 + k) * M + idx]);               \
            for (int k = 0; k < ns; k++) {                                                                       \
                double zf = z[(1 + j->sidx[k]) * M + idx], zs = z[(1 + nf + k) * M + idx];                      \
                h[(1 + nf + k) * M + idx] = (T)(s[2] * zf * zf + s[1] * zs);                                     \
            }                                                                                                    \
        }                                                                                                        \
    }                                                                                                            \
    static void act_backward_##SFX(int act, int rows, size_t n, const hs_nn_jet_layout *j, const T *z, const T *h, \
                                   T *dh)                                                                    \
    {                                                                                                            \
        size_t M = (size_t)rows * n;                                                                             \
        int nf = j->nfirst, ns = j->nsecond;                                                                     \
        _Pragma("omp parallel for schedule(static) if (M > 32768)") for (size_t idx = 0; idx < M; idx++)             \
        {                                                                                                        \
            double s[4], zf[4], dzf[4];                                                                          \
            hs_nn_act_eval_y(act, (double)z[idx], (double)h[idx], s);                                            \
            double dz0 = dh[idx] * s[1];                                                                         \
            for (int k = 0; k < nf; k++) {                                                                       \
                zf[k] = z[(1 + k) * M + idx];                                                                    \
                double d = dh[(1 + k) * M + idx];                                                                \
                dz0 += d * s[2] * zf[k];                                                                         \
                dzf[k] = d * s[1];                                                                               \
            }                                                                                                    \
            for (int k = 0; k < ns; k++) {                                                                       \
                size_t o = (1 + nf + k) * M + idx;                                                               \
                double d = dh[o], zs = z[o], a = zf[j->sidx[k]];                                                \
                dz0 += d * (s[3] * a * a + s[2] * zs);                                                           \
                dzf[j->sidx[k]] += d * 2.0 * s[2] * a;                                                           \
                dh[o] = (T)(d * s[1]);                                                                           \
            }                                                                                                    \
            dh[idx] = (T)dz0;                                                                                    \
            for (int k = 0; k < nf; k++) dh[(1 + k) * M + idx] = (T)dzf[k];                                      \
        }                                                                                                        \
    }                                                                                                            \
    static void bias_##SFX(int rows, size_t n, const T *b, T *out)                                              \
    {                                                                                                            \
        size_t M = (size_t)rows * n;                                                                             \
        for (size_t idx = 0; idx < M; idx++) out[idx] += b[idx % (size_t)rows];                                  \
    }

NN_KERNELS(double, f64)
NN_KERNELS(float, f32)

int hs_nn_input_jet_cpu(hs_dtype t, int in, size_t n, const hs_nn_jet_layout *j, const void *x, void *h0)
{
    if (t == HS_F64) input_jet_f64(in, n, j, x, h0);
    else input_jet_f32(in, n, j, x, h0);
    return HS_OK;
}

int hs_nn_act_forward_cpu(hs_dtype t, int act, int rows, size_t n, const hs_nn_jet_layout *j, const void *b, void *z,
                          void *h)
{
    if (t == HS_F64) act_forward_f64(act, rows, n, j, b, z, h);
    else act_forward_f32(act, rows, n, j, b, z, h);
    return HS_OK;
}

int hs_nn_act_backward_cpu(hs_dtype t, int act, int rows, size_t n, const hs_nn_jet_layout *j, const void *z,
                           const void *h, void *dh)
{
    if (t == HS_F64) act_backward_f64(act, rows, n, j, z, h, dh);
    else act_backward_f32(act, rows, n, j, z, h, dh);
    return HS_OK;
}

int hs_nn_bias_cpu(hs_dtype t, int rows, size_t n, const void *b, void *out)
{
    if (t == HS_F64) bias_f64(rows, n, b, out);
    else bias_f32(rows, n, b, out);
    return HS_OK;
}

int hs_nn_cast_cpu(hs_dtype src_t, hs_dtype dst_t, size_t n, const void *src, void *dst)
{
    if (src_t == HS_F64 && dst_t == HS_F32) {
        const double *s = src;
        float *d = dst;
        for (size_t i = 0; i < n; i++) d[i] = (float)s[i];
    } else if (src_t == HS_F32 && dst_t == HS_F64) {
        const float *s = src;
        double *d = dst;
        for (size_t i = 0; i < n; i++) d[i] = s[i];
    } else {
        const char *s = src;
        char *d = dst;
        size_t bytes = n * hs_dtype_size(src_t);
        for (size_t i = 0; i < bytes; i++) d[i] = s[i];
    }
    return HS_OK;
}
