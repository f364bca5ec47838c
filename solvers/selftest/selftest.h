/* Self-check cases contributed by the kernel families (solvers/selftest/cases_*.c). */
#ifndef HS_SELFTEST_H
#define HS_SELFTEST_H

#include <stdint.h>

#include "kernels/context.h"

typedef struct {
    double error;      /* measured relative error (0 = exact) */
    double tolerance;  /* in: the fp64 tolerance from the parameters; out: the one applied */
    uint64_t seed;
} hs_selftest_result;

typedef struct {
    const char *name;
    int (*run)(hs_ctx *ctx, int64_t n, hs_selftest_result *r);
} hs_selftest_case;

/* Cases from the families, listed in solvers/selftest/cases.c. */
int hs_selftest_extra_count(void);
const hs_selftest_case *hs_selftest_extra(int i);

#endif
