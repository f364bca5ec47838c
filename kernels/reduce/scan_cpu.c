/* OpenMP scans: fixed chunks (totals in parallel, a short sequential carry scan, then chunk scans). */
#include <stdint.h>
#include <stdlib.h>

#include "kernels/error.h"
#include "kernels/reduce/scan_impl.h"

#define CHUNK 65536 /* fixed, so float results do not depend on the thread count */

/* One scan per (element type, accumulator type).  Integers accumulate unsigned so overflow wraps. */
#define DEFINE_SCAN(NAME, T, ACC)                                                     \
    static int NAME(int exclusive, size_t n, const void *inv, void *outv)            \
    {                                                                                 \
        const T *in = (const T *)inv;                                                 \
        T *out = (T *)outv;                                                           \
        size_t nchunks = (n + CHUNK - 1) / CHUNK;                                     \
        ACC *carry = malloc(nchunks * sizeof *carry);                                 \
        if (!carry) return HS_FAIL(HS_ERR_RUNTIME, "out of memory for scan carries"); \
        _Pragma("omp parallel if (nchunks > 1)")                                      \
        {                                                                             \
            _Pragma("omp for schedule(static)")                                       \
            for (size_t c = 0; c < nchunks; c++) {                                    \
                size_t lo = c * CHUNK, hi = n - lo < CHUNK ? n : lo + CHUNK;          \
                ACC s = 0;                                                            \
                for (size_t i = lo; i < hi; i++) s += (ACC)in[i];                     \
                carry[c] = s;                                                         \
            }                                                                         \
            _Pragma("omp single")                                                     \
            {                                                                         \
                ACC s = 0;                                                            \
                for (size_t c = 0; c < nchunks; c++) {                                \
                    ACC t_ = carry[c];                                                \
                    carry[c] = s;                                                     \
                    s += t_;                                                          \
                }                                                                     \
            }                                                                         \
            _Pragma("omp for schedule(static)")                                       \
            for (size_t c = 0; c < nchunks; c++) {                                    \
                size_t lo = c * CHUNK, hi = n - lo < CHUNK ? n : lo + CHUNK;          \
                ACC s = carry[c];                                                     \
                if (exclusive)                                                        \
                    for (size_t i = lo; i < hi; i++) {                                \
                        ACC v = (ACC)in[i];                                           \
                        out[i] = (T)s;                                                \
                        s += v;                                                       \
                    }                                                                 \
                else                                                                  \
                    for (size_t i = lo; i < hi; i++) {                                \
                        s += (ACC)in[i];                                              \
                        out[i] = (T)s;                                                \
                    }                                                                 \
            }                                                                         \
        }                                                                             \
        free(carry);                                                                  \
        return HS_OK;                                                                 \
    }

DEFINE_SCAN(scan_f64, double, double)
DEFINE_SCAN(scan_f32, float, double)
DEFINE_SCAN(scan_i32, int32_t, uint32_t)
DEFINE_SCAN(scan_i64, int64_t, uint64_t)
DEFINE_SCAN(scan_u32, uint32_t, uint32_t)
DEFINE_SCAN(scan_u64, uint64_t, uint64_t)

int hs_scan_apply_cpu(hs_dtype t, int exclusive, size_t n, const void *in, void *out)
{
    switch (t) {
    case HS_F64: return scan_f64(exclusive, n, in, out);
    case HS_F32: return scan_f32(exclusive, n, in, out);
    case HS_I32: return scan_i32(exclusive, n, in, out);
    case HS_I64: return scan_i64(exclusive, n, in, out);
    case HS_U32: return scan_u32(exclusive, n, in, out);
    case HS_U64: return scan_u64(exclusive, n, in, out);
    default: return HS_FAIL(HS_ERR_RUNTIME, "scan: unsupported dtype %s", hs_dtype_name(t));
    }
}
