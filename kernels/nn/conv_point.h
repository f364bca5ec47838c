/* The ConvLSTM cell's pointwise forward and backward, shared verbatim by the CPU and CUDA backends. */
#ifndef HS_CONV_POINT_H
#define HS_CONV_POINT_H

#include <math.h>

#include "kernels/hd.h"

/* One element of the cell, in the compute type R (double for fp64 data, float otherwise).
 * Forward: pre-activations (bias included) and c_prev -> the gates i, f, g, o, c and h.
 * Backward: the gates, c_prev and c, the gradient dh of h and *dc, the gradient reaching c from
 * later steps -> the gradients of the four pre-activations, and *dc := the gradient of c_prev.
 * Written out (not through the activations' generic table) so that fp32 stays in fp32. */
#define HS_CONV_LSTM_POINT(R, SFX, EXP, TANH)                                                               \
    HS_HD void hs_conv_lstm_fwd_##SFX(R zi, R zf, R zg, R zo, R cp, R *i, R *f, R *g, R *o, R *c, R *h)       \
    {                                                                                                       \
        const R one = (R)1;                                                                                 \
        *i = one / (one + EXP(-zi));                                                                        \
        *f = one / (one + EXP(-zf));                                                                        \
        *g = TANH(zg);                                                                                      \
        *o = one / (one + EXP(-zo));                                                                        \
        *c = *f * cp + *i * *g;                                                                             \
        *h = *o * TANH(*c);                                                                                 \
    }                                                                                                       \
    HS_HD void hs_conv_lstm_bwd_##SFX(R i, R f, R g, R o, R cp, R c, R dh, R *dc, R *di, R *df, R *dg, R *dout) \
    {                                                                                                       \
        const R one = (R)1;                                                                                 \
        R tc = TANH(c);                                                                                     \
        R dct = *dc + dh * o * (one - tc * tc);                                                             \
        *dout = dh * tc * o * (one - o);                                                                    \
        *di = dct * g * i * (one - i);                                                                      \
        *df = dct * cp * f * (one - f);                                                                     \
        *dg = dct * i * (one - g * g);                                                                      \
        *dc = dct * f;                                                                                      \
    }

HS_CONV_LSTM_POINT(double, d, exp, tanh)
HS_CONV_LSTM_POINT(float, f, expf, tanhf)

#endif
