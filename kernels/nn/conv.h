/* 2D convolutions (forward, backward data, backward filter, bias) and the ConvLSTM cell's fused
 * gates, on either backend: the building blocks of convolutional recurrent networks (the surrogate).
 *
 * Layout and types.  Images are NCHW (image, channel, row, column; the column fastest) and filters
 * cout x cin x kh x kw, PyTorch's Conv2d layouts, so weights move between the two unchanged.  The
 * element type t of images and filters is HS_F64, HS_F32, HS_BF16 or HS_F16; 16-bit data are
 * computed in float (products and sums in fp32) and rounded once when stored.  Gradient sums that
 * leave the family (bias gradients) and the cell state are kept in the accumulation type
 * hs_conv_acc_type(t): fp64 for fp64 data, fp32 otherwise.
 *
 * Backends.  CPU: im2col + GEMM (OpenBLAS through the BLAS family) one image at a time, OpenMP in
 * the rearrangements.  CUDA: cuDNN where the build has it (feature +cudnn; algorithms from cuDNN's
 * heuristics, deterministic ones for the backward passes when ctx->deterministic, else the fastest
 * cudnnFind measures), otherwise im2col + cuBLAS.  Both compute cross-correlation as PyTorch does.
 * Accuracy: each output is a sum of cin kh kw (backward filter: n h w) products, accumulated in the
 * accumulation type; the backends differ by summation order only (about 1e-15 relative in fp64,
 * 1e-6 in fp32, and one unit of the 16-bit format's last place).
 * Nothing here is collective; everything is queued on the context's stream. */
#ifndef HS_CONV_H
#define HS_CONV_H

#include "kernels/context.h"

typedef struct hs_conv hs_conv;

/* fp64 for HS_F64, fp32 for the other element types. */
hs_dtype hs_conv_acc_type(hs_dtype t);

/* A convolution of cin -> cout channels with a kh x kw kernel (odd sizes), stride 1 and zero
 * padding (kh/2, kw/2), so that outputs are h x w like the inputs ("same").  Runtime errors for
 * bad sizes or types. */
int hs_conv_create(hs_ctx *ctx, hs_dtype t, int cin, int cout, int kh, int kw, int h, int w, hs_conv **conv);
void hs_conv_destroy(hs_conv *conv);
/* Weights of the filter: cout * cin * kh * kw. */
size_t hs_conv_weights(const hs_conv *conv);

/* y = conv(x, w) + beta y over n images (x: n x cin x h x w, y: n x cout x h x w).  beta is 0 or 1;
 * with 0 the old y is not read. */
int hs_conv_forward(hs_conv *conv, int n, const void *x, const void *w, double beta, void *y);
/* dx = (d conv / d x)^T dy + beta dx: the gradient of the inputs given that of the outputs. */
int hs_conv_backward_data(hs_conv *conv, int n, const void *dy, const void *w, double beta, void *dx);
/* dw = sum over the n images of the correlation of x with dy, + beta dw (type t). */
int hs_conv_backward_filter(hs_conv *conv, int n, const void *x, const void *dy, double beta, void *dw);

/* y[i, c, p] += b[c] for n images of ch channels and hw pixels (y, b of type t). */
int hs_conv_bias_add(hs_ctx *ctx, hs_dtype t, int n, int ch, int hw, const void *b, void *y);
/* db[c] = sum over images and pixels of dy[i, c, p] + beta db[c]; db of the accumulation type,
 * summed in fp64 in an order fixed by the sizes (bitwise reproducible). */
int hs_conv_bias_grad(hs_ctx *ctx, hs_dtype t, int n, int ch, int hw, const void *dy, double beta, void *db);

/* dst[i] = src[i] (accumulate = 0) or dst[i] + src[i] (accumulate = 1), converted between any two
 * of HS_F64, HS_F32, HS_BF16, HS_F16 (the sum in the wider of double and dst's type). */
int hs_conv_cast(hs_ctx *ctx, hs_dtype src_t, hs_dtype dst_t, size_t n, const void *src, int accumulate, void *dst);

/* ConvLSTM cell (Shi et al. 2015, without peephole terms), forward, fused in one pass.
 * z: n images of 4 ch channels, the gate pre-activations without bias in the blocks i, f, g, o
 * (channel q*ch + c of block q); zadd (same shape, NULL = none): a second part of them, added here
 * (the hidden state's convolution, written apart: accumulating it onto z in the convolution costs
 * cuDNN's 16-bit kernels a layout transpose of z in and out); b: the 4 ch biases (type t).  With
 * z_q the sum (z + zadd)_q, computes
 *   i = sigmoid(z_i + b_i), f = sigmoid(z_f + b_f), g = tanh(z_g + b_g), o = sigmoid(z_o + b_o),
 *   c = f c_prev + i g,  h = o tanh(c)
 * and overwrites z with the activations (i, f, g, o), which the backward pass reads.  c_prev and c
 * (n x ch x hw) are of the accumulation type; c_prev NULL means zero; h is of type t. */
int hs_conv_lstm_forward(hs_ctx *ctx, hs_dtype t, int n, int ch, int hw, void *z, const void *zadd, const void *b,
                         const void *c_prev, void *c, void *h);
/* ConvLSTM cell, backward.  gates: the forward pass's activations, overwritten by the gradients of
 * the pre-activations z; c_prev (NULL = zero) and c: the forward pass's cell states; dh (type t;
 * NULL = zero): the gradient of h; dc (accumulation type): on entry the gradient reaching c from
 * later steps, on return the gradient of c_prev. */
int hs_conv_lstm_backward(hs_ctx *ctx, hs_dtype t, int n, int ch, int hw, void *gates, const void *c_prev,
                          const void *c, const void *dh, void *dc);

/* Which implementation convolves on this context: "im2col+openblas" (CPU), "cudnn", "im2col+cublas". */
const char *hs_conv_engine(const hs_ctx *ctx);

#endif
