/* The list of self-check cases the kernel families provide (each family adds its entries here). */
#include <stddef.h>

#include "solvers/selftest/selftest.h"

static const hs_selftest_case g_extra[] = {
    {NULL, NULL},
};

int hs_selftest_extra_count(void) { return (int)(sizeof g_extra / sizeof g_extra[0]) - 1; }
const hs_selftest_case *hs_selftest_extra(int i) { return &g_extra[i]; }
