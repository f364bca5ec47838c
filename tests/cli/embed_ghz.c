/* Embedding example and install test: a GHZ state through the installed C API (pkg-config hpcsim). */
#include <math.h>
#include <stdio.h>
#include "solvers/quantum/qureg.h"
int main(int argc, char **argv)
{
    hs_ctx *ctx;
    if (hs_ctx_create(&argc, &argv, "cpu", 0, &ctx)) return 1;
    hs_qureg *q;
    if (hs_qureg_create(ctx, 3, HS_C128, 1, &q)) return 1;
    hs_qureg_gate(q, "h", NULL, (int[]){0});
    hs_qureg_gate(q, "cx", NULL, (int[]){0, 1});
    hs_qureg_gate(q, "cx", NULL, (int[]){1, 2});
    double p[2];
    hs_qureg_marginal(q, 1, (int[]){2}, p);
    printf("P(q2=1) = %.15f\n", p[1]);
    hs_qureg_destroy(q);
    hs_ctx_destroy(ctx);
    return fabs(p[1] - 0.5) > 1e-12;
}
