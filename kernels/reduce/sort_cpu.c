/* OpenMP LSD radix sort: 8-bit digits, per-thread histograms over contiguous chunks, stable scatter. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/error.h"
#include "kernels/reduce/sort_impl.h"

#define RADIX 256
#define SERIAL_BELOW 65536 /* threads cost more than they save below this */

/* Offsets for each (thread, digit) in digit-major order, so each thread's run of a digit follows
 * the previous thread's: that is what makes the scatter stable.  Returns 1 when one digit holds
 * every key (the pass would not move anything). */
static int offsets(size_t *hist, int nt, size_t n)
{
    size_t run = 0;
    int trivial = 0;
    for (int d = 0; d < RADIX; d++) {
        size_t start = run;
        for (int t = 0; t < nt; t++) {
            size_t c = hist[(size_t)t * RADIX + d];
            hist[(size_t)t * RADIX + d] = run;
            run += c;
        }
        if (run - start == n) trivial = 1;
    }
    return trivial;
}

#define DEFINE_SORT(NAME, KT, VT, ORD)                                                 \
    static int NAME(int kind, size_t n, KT *keys, VT *vals, int nt)                   \
    {                                                                                 \
        const int with_vals = vals != NULL;                                           \
        KT *ktmp = malloc(n * sizeof(KT));                                            \
        VT *vtmp = with_vals ? malloc(n * sizeof(VT)) : NULL;                         \
        size_t *hist = malloc((size_t)nt * RADIX * sizeof(size_t));                   \
        if (!ktmp || !hist || (with_vals && !vtmp)) {                                 \
            free(ktmp); free(vtmp); free(hist);                                       \
            return HS_FAIL(HS_ERR_RUNTIME, "out of memory for the radix sort of %zu keys", n); \
        }                                                                             \
        KT *ks = keys, *kd = ktmp;                                                    \
        VT *vs = vals, *vd = vtmp;                                                    \
        int trivial = 0;                                                              \
        for (unsigned shift = 0; shift < 8 * sizeof(KT); shift += 8) {                \
            _Pragma("omp parallel num_threads(nt)")                                   \
            {                                                                         \
                int t = 0;                                                            \
                NT_ID(t);                                                             \
                size_t lo = n * (size_t)t / nt, hi = n * (size_t)(t + 1) / nt;        \
                size_t *h = hist + (size_t)t * RADIX;                                 \
                memset(h, 0, RADIX * sizeof *h);                                      \
                for (size_t i = lo; i < hi; i++) h[(ORD(ks[i], kind) >> shift) & 0xFF]++; \
                _Pragma("omp barrier")                                                \
                _Pragma("omp single")                                                 \
                trivial = offsets(hist, nt, n);                                       \
                if (!trivial) {                                                       \
                    for (size_t i = lo; i < hi; i++) {                                \
                        size_t p = h[(ORD(ks[i], kind) >> shift) & 0xFF]++;           \
                        kd[p] = ks[i];                                                \
                        if (with_vals) vd[p] = vs[i];                                 \
                    }                                                                 \
                }                                                                     \
            }                                                                         \
            if (!trivial) {                                                           \
                KT *k = ks; ks = kd; kd = k;                                          \
                VT *v = vs; vs = vd; vd = v;                                          \
            }                                                                         \
        }                                                                             \
        if (ks != keys) {                                                             \
            memcpy(keys, ks, n * sizeof(KT));                                         \
            if (with_vals) memcpy(vals, vs, n * sizeof(VT));                          \
        }                                                                             \
        free(ktmp); free(vtmp); free(hist);                                           \
        return HS_OK;                                                                 \
    }

#ifdef _OPENMP
#define NT_ID(t) (t) = omp_get_thread_num()
#else
#define NT_ID(t) (void)(t)
#endif

DEFINE_SORT(sort_k32_v32, uint32_t, uint32_t, hs_sort_ord32)
DEFINE_SORT(sort_k32_v64, uint32_t, uint64_t, hs_sort_ord32)
DEFINE_SORT(sort_k64_v32, uint64_t, uint32_t, hs_sort_ord64)
DEFINE_SORT(sort_k64_v64, uint64_t, uint64_t, hs_sort_ord64)

int hs_sort_apply_cpu(int key_kind, size_t key_bytes, size_t value_bytes, size_t n, void *keys, void *values)
{
    int nt = 1;
#ifdef _OPENMP
    if (n >= SERIAL_BELOW) nt = omp_get_max_threads();
#endif
    if (value_bytes == 0) values = NULL;
    if (key_bytes == 4)
        return value_bytes == 8 ? sort_k32_v64(key_kind, n, keys, values, nt) : sort_k32_v32(key_kind, n, keys, values, nt);
    return value_bytes == 8 ? sort_k64_v64(key_kind, n, keys, values, nt) : sort_k64_v32(key_kind, n, keys, values, nt);
}
