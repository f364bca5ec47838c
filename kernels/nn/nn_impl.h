/* Backend entry points of the dense-network family (kernels/nn/nn_cpu.c, kernels/nn/nn_cuda.cu). */
#ifndef HS_NN_IMPL_H
#define HS_NN_IMPL_H

#include <stddef.h>

#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* The jet layout as the element-wise kernels need it: sidx[k] is the first-derivative channel
 * (0-based among the first derivatives) whose input direction second-derivative k differentiates. */
typedef struct hs_nn_jet_layout {
    int nfirst, nsecond;
    int first[4], sidx[4];
} hs_nn_jet_layout;

/* h0 = [x, e_first[0], ..., 0, ...]: the input jet of n points with `in` inputs. */
int hs_nn_input_jet_cpu(hs_dtype t, int in, size_t n, const hs_nn_jet_layout *j, const void *x, void *h0);
/* z(channel 0) += b; h = act(z) propagated through every channel (rows x C*n). */
int hs_nn_act_forward_cpu(hs_dtype t, int act, int rows, size_t n, const hs_nn_jet_layout *j, const void *b, void *z,
                          void *h);
/* dh (d loss / d h, rows x C*n) is replaced in place by d loss / d z; h is the forward output
 * (its value channel spares recomputing the activation). */
int hs_nn_act_backward_cpu(hs_dtype t, int act, int rows, size_t n, const hs_nn_jet_layout *j, const void *z,
                           const void *h, void *dh);
/* out(channel 0) += b. */
int hs_nn_bias_cpu(hs_dtype t, int rows, size_t n, const void *b, void *out);
/* dst = src converted between f64 and f32 (or copied when the types agree). */
int hs_nn_cast_cpu(hs_dtype src_t, hs_dtype dst_t, size_t n, const void *src, void *dst);

int hs_nn_input_jet_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int in, size_t n, const hs_nn_jet_layout *j,
                         const void *x, void *h0);
int hs_nn_act_forward_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int act, int rows, size_t n,
                           const hs_nn_jet_layout *j, const void *b, void *z, void *h);
int hs_nn_act_backward_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int act, int rows, size_t n,
                            const hs_nn_jet_layout *j, const void *z, const void *h, void *dh);
int hs_nn_bias_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int rows, size_t n, const void *b, void *out);
int hs_nn_cast_cuda(struct hs_cuda_ctx *cu, hs_dtype src_t, hs_dtype dst_t, size_t n, const void *src, void *dst);

#ifdef __cplusplus
}
#endif
#endif
