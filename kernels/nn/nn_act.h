/* Activation functions and their first three derivatives, shared by the CPU and CUDA backends. */
#ifndef HS_NN_ACT_H
#define HS_NN_ACT_H

#include <math.h>

#include "kernels/hd.h"

/* s[0..3] = sigma, sigma', sigma'', sigma''' at z; act is an hs_activation value. */
HS_HD void hs_nn_act_eval(int act, double z, double s[4])
{
    switch (act) {
    case 0: { /* tanh */
        double y = tanh(z), d = 1.0 - y * y;
        s[0] = y, s[1] = d, s[2] = -2.0 * y * d, s[3] = -2.0 * d * (d - 2.0 * y * y);
        break;
    }
    case 1: { /* sin */
        double sn = sin(z), cs = cos(z);
        s[0] = sn, s[1] = cs, s[2] = -sn, s[3] = -cs;
        break;
    }
    case 2: { /* sigmoid, written to avoid exp overflow for large |z| */
        double e = exp(-fabs(z)), y = z >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
        double d = y * (1.0 - y), d2 = d * (1.0 - 2.0 * y);
        s[0] = y, s[1] = d, s[2] = d2, s[3] = d2 * (1.0 - 2.0 * y) - 2.0 * d * d;
        break;
    }
    case 3: /* relu: the derivatives of the kink are taken as zero */
        s[0] = z > 0 ? z : 0.0, s[1] = z > 0 ? 1.0 : 0.0, s[2] = 0.0, s[3] = 0.0;
        break;
    default: /* identity */
        s[0] = z, s[1] = 1.0, s[2] = 0.0, s[3] = 0.0;
        break;
    }
}

/* The same from z and the stored value y = sigma(z): tanh and sigmoid need no transcendental
 * function again (the backward pass would otherwise recompute every activation). */
HS_HD void hs_nn_act_eval_y(int act, double z, double y, double s[4])
{
    if (act == 0) {
        double d = 1.0 - y * y;
        s[0] = y, s[1] = d, s[2] = -2.0 * y * d, s[3] = -2.0 * d * (d - 2.0 * y * y);
    } else if (act == 2) {
        double d = y * (1.0 - y), d2 = d * (1.0 - 2.0 * y);
        s[0] = y, s[1] = d, s[2] = d2, s[3] = d2 * (1.0 - 2.0 * y) - 2.0 * d * d;
    } else {
        hs_nn_act_eval(act, z, s);
    }
}

#endif
