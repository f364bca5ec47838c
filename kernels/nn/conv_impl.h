/* Backend entry points of the convolution family (kernels/nn/conv_cpu.c, kernels/nn/conv_cuda.cu). */
#ifndef HS_CONV_IMPL_H
#define HS_CONV_IMPL_H

#include <stddef.h>

#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;
struct hs_ctx;

/* The convolution object, shared by conv.c and the backends; impl is the backend's state (work
 * buffers on the CPU; cuDNN descriptors and chosen algorithms on CUDA). */
struct hs_conv {
    struct hs_ctx *ctx;
    hs_dtype t;
    int cin, cout, kh, kw, h, w;
    int deterministic; /* the context's: fixed algorithm choices (CUDA) */
    void *impl;
};

int hs_conv_create_cpu(struct hs_conv *c);
void hs_conv_destroy_cpu(struct hs_conv *c);
int hs_conv_forward_cpu(struct hs_conv *c, int n, const void *x, const void *w, double beta, void *y);
int hs_conv_backward_data_cpu(struct hs_conv *c, int n, const void *dy, const void *w, double beta, void *dx);
int hs_conv_backward_filter_cpu(struct hs_conv *c, int n, const void *x, const void *dy, double beta, void *dw);
int hs_conv_bias_add_cpu(hs_dtype t, int n, int ch, int hw, const void *b, void *y);
int hs_conv_bias_grad_cpu(hs_dtype t, int n, int ch, int hw, const void *dy, double beta, void *db);
int hs_conv_cast_cpu(hs_dtype st, hs_dtype dt, size_t n, const void *src, int accumulate, void *dst);
int hs_conv_lstm_forward_cpu(hs_dtype t, int n, int ch, int hw, void *z, const void *zadd, const void *b,
                             const void *c_prev, void *c, void *h);
int hs_conv_lstm_backward_cpu(hs_dtype t, int n, int ch, int hw, void *gates, const void *c_prev, const void *c,
                              const void *dh, void *dc);

int hs_conv_create_cuda(struct hs_cuda_ctx *cu, struct hs_conv *c);
void hs_conv_destroy_cuda(struct hs_cuda_ctx *cu, struct hs_conv *c);
int hs_conv_forward_cuda(struct hs_cuda_ctx *cu, struct hs_conv *c, int n, const void *x, const void *w, double beta,
                         void *y);
int hs_conv_backward_data_cuda(struct hs_cuda_ctx *cu, struct hs_conv *c, int n, const void *dy, const void *w,
                               double beta, void *dx);
int hs_conv_backward_filter_cuda(struct hs_cuda_ctx *cu, struct hs_conv *c, int n, const void *x, const void *dy,
                                 double beta, void *dw);
int hs_conv_bias_add_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int n, int ch, int hw, const void *b, void *y);
int hs_conv_bias_grad_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int n, int ch, int hw, const void *dy, double beta,
                           void *db);
int hs_conv_cast_cuda(struct hs_cuda_ctx *cu, hs_dtype st, hs_dtype dt, size_t n, const void *src, int accumulate,
                      void *dst);
int hs_conv_lstm_forward_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int n, int ch, int hw, void *z, const void *zadd,
                              const void *b, const void *c_prev, void *c, void *h);
int hs_conv_lstm_backward_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int n, int ch, int hw, void *gates,
                               const void *c_prev, const void *c, const void *dh, void *dc);
/* "cudnn" or "im2col+cublas": what the CUDA backend convolves with (im2col + cuBLAS in a build
 * without cuDNN, or when the environment sets HS_CONV_IM2COL=1, which the twin test uses). */
const char *hs_conv_engine_cuda(void);

#ifdef __cplusplus
}
#endif
#endif
