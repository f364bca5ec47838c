/* Dense neural networks (multilayer perceptrons) whose forward pass also carries input derivatives
 * ("jets": u, du/dx_j, d2u/dx_j^2) and whose backward pass gives the parameter gradient of any loss
 * of those outputs.  Used by the PINN and by the surrogate's dense layers.
 *
 * Layout.  All parameters are one contiguous fp64 vector on the context's device (what an optimiser
 * updates): for each layer l, W_l (out_l x in_l, column-major) then b_l (out_l).  Activations are
 * column-major too: a batch of n points with C jet channels is a (width x C*n) matrix whose channel
 * c occupies columns [c*n, (c+1)*n), so one GEMM per layer moves every channel at once.
 * In fp32 mode the network computes in float from a float copy of the fp64 parameters (refreshed by
 * every forward pass) and the gradient is accumulated in float and returned in fp64.
 * Nothing here is collective: all-reduce the gradient for data parallelism. */
#ifndef HS_NN_H
#define HS_NN_H

#include <stdint.h>

#include "kernels/context.h"

typedef enum { HS_ACT_TANH = 0, HS_ACT_SIN = 1, HS_ACT_SIGMOID = 2, HS_ACT_RELU = 3, HS_ACT_IDENTITY = 4 } hs_activation;

/* "tanh", "sin", "sigmoid", "relu", "identity" <-> enum.  Parse returns HS_ERR_INPUT for others
 * (no message: the caller reports it against its parameter). */
int hs_activation_parse(const char *name, hs_activation *act);
const char *hs_activation_name(hs_activation act);
/* The names accepted by hs_activation_parse, as "a|b|c" (for an ENUM parameter). */
#define HS_ACTIVATION_CHOICES "tanh|sin|sigmoid|relu|identity"

/* Which input derivatives a forward pass carries.  Channels, in order: the value; d/dx_first[k]
 * for k < nfirst; d2/dx_second[k]^2 for k < nsecond (each second[k] must also be in first[]). */
#define HS_JET_MAX 4
typedef struct hs_jet {
    int nfirst, first[HS_JET_MAX];
    int nsecond, second[HS_JET_MAX];
} hs_jet;
/* Number of channels 1 + nfirst + nsecond. */
int hs_jet_channels(const hs_jet *jet);

typedef struct hs_mlp {
    hs_ctx *ctx;
    hs_dtype dtype;          /* compute precision: HS_F64 or HS_F32 */
    int nlayers;             /* dense layers (hidden layers + the linear output layer) */
    int *width;              /* nlayers + 1 entries: inputs, hidden widths..., outputs */
    int max_width;
    hs_activation act;       /* after every layer but the last */
    size_t nparams;
    size_t *w_off, *b_off;   /* offsets of W_l and b_l in the parameter vector */
    double *params, *grad;   /* device, fp64, nparams each: what the optimiser sees */
    void *params_c, *grad_c; /* device, compute precision (alias params/grad in fp64) */
} hs_mlp;

/* A network with nlayers dense layers; width[0] inputs, width[nlayers] outputs.  Parameters are
 * zero until hs_mlp_init_xavier or a copy into mlp->params.  Input errors (HS_ERR_INPUT, with a
 * message) for fewer than one layer or a width < 1. */
int hs_mlp_create(hs_ctx *ctx, hs_dtype dtype, int nlayers, const int *width, hs_activation act, hs_mlp **mlp);
void hs_mlp_destroy(hs_mlp *mlp);

/* Glorot/Xavier normal initialisation: W ~ N(0, 2 / (in + out)) truncated at two standard
 * deviations, b = 0.  Seeded: the same parameters on every rank, device and run. */
int hs_mlp_init_xavier(hs_mlp *mlp, uint64_t seed);

/* Working memory of one batch: activations kept for the backward pass.  Capacity for n points. */
typedef struct hs_mlp_batch {
    hs_mlp *mlp;
    hs_jet jet;
    int channels;
    size_t cap;        /* points */
    size_t n;          /* points of the last forward pass */
    void **h;          /* h[l]: input of layer l, width[l] x C*cap (h[0] is the input jet) */
    void **z;          /* z[l]: pre-activation of hidden layer l (bias included) */
    void *out;         /* outputs: width[nlayers] x C*cap */
    void *dout;        /* the loss's derivative with respect to out, filled by the caller */
    void *buf[2];      /* backward ping-pong, max_width x C*cap */
    void *ones;        /* cap ones, for the bias gradient */
} hs_mlp_batch;

int hs_mlp_batch_create(hs_mlp *mlp, const hs_jet *jet, size_t cap, hs_mlp_batch **batch);
void hs_mlp_batch_destroy(hs_mlp_batch *batch);

/* Forward pass of n <= cap points: x is width[0] x n (column-major, compute precision, device).
 * Fills batch->out: output o, channel c, point p at out[(c*n + p)*width[nlayers] + o]. */
int hs_mlp_forward(hs_mlp_batch *batch, size_t n, const void *x);

/* Set the accumulated gradient to zero (call before the backward passes of one evaluation). */
int hs_mlp_zero_grad(hs_mlp *mlp);
/* Accumulate d(loss)/d(params) given batch->dout (same layout as out) from the last forward pass. */
int hs_mlp_backward(hs_mlp_batch *batch);
/* Make mlp->grad (fp64) hold the accumulated gradient (a cast in fp32 mode, nothing in fp64). */
int hs_mlp_finish_grad(hs_mlp *mlp);

/* Copy between a compute-precision device array and fp64 host values (tests, outputs). */
int hs_nn_to_host(hs_ctx *ctx, hs_dtype t, size_t n, const void *dev, double *host);
int hs_nn_from_host(hs_ctx *ctx, hs_dtype t, size_t n, const double *host, void *dev);

#endif
