/* The one random number generator of hpcsim: counter-based Philox-4x32-10, the same bits on CPU and GPU. */
#ifndef HS_RNG_H
#define HS_RNG_H

/* Philox-4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2, 3",
 * SC'11; the Random123 reference), written from the published description.  A value is a pure
 * function of (seed, stream, counter): the 64-bit seed is the Philox key, the 128-bit counter
 * block is (counter, stream).  So every rank, thread or CUDA thread can draw its own numbers with
 * no shared state, and the same (seed, stream, counter) gives the same bits on every machine and
 * backend (integers and uniforms bitwise; normals to the last few ulp of the device's log/cos).
 *
 * Streams: give each use its own stream number, and each rank its own with hs_rng_stream(use,
 * rank), so that no two draws anywhere in a run share a (stream, counter) pair.
 * Everything here is inline and usable from host and CUDA device code (HS_HD). */

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The 128 bits of one Philox block. */
typedef struct hs_rng_block {
    uint32_t v[4];
} hs_rng_block;

HS_HD uint32_t hs_rng_mulhilo_(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

/* Philox-4x32 with 10 rounds of counter c under key k (the raw permutation, as Random123's
 * philox4x32_R(10, c, k)). */
HS_HD hs_rng_block hs_philox4x32_10(hs_rng_block c, uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u; /* Weyl key schedule: golden ratio and sqrt(3) - 1 */
            k1 += 0xBB67AE85u;
        }
        uint32_t hi0, hi1;
        uint32_t lo0 = hs_rng_mulhilo_(0xD2511F53u, c.v[0], &hi0);
        uint32_t lo1 = hs_rng_mulhilo_(0xCD9E8D57u, c.v[2], &hi1);
        hs_rng_block n;
        n.v[0] = hi1 ^ c.v[1] ^ k0;
        n.v[1] = lo1;
        n.v[2] = hi0 ^ c.v[3] ^ k1;
        n.v[3] = lo0;
        c = n;
    }
    return c;
}

/* The block at (seed, stream, counter): key = seed, counter block = (counter, stream), low words first. */
HS_HD hs_rng_block hs_rng_block_at(uint64_t seed, uint64_t stream, uint64_t counter)
{
    hs_rng_block c;
    c.v[0] = (uint32_t)counter;
    c.v[1] = (uint32_t)(counter >> 32);
    c.v[2] = (uint32_t)stream;
    c.v[3] = (uint32_t)(stream >> 32);
    return hs_philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* 64 random bits: the first two words of the block (v[0] low). */
HS_HD uint64_t hs_rng_u64(uint64_t seed, uint64_t stream, uint64_t counter)
{
    hs_rng_block b = hs_rng_block_at(seed, stream, counter);
    return (uint64_t)b.v[0] | (uint64_t)b.v[1] << 32;
}

/* Uniform double in [0, 1) with 53 random bits (the top 53 of hs_rng_u64). */
HS_HD double hs_rng_u01(uint64_t seed, uint64_t stream, uint64_t counter)
{
    return (double)(hs_rng_u64(seed, stream, counter) >> 11) * 0x1.0p-53;
}

/* Standard normal by Box-Muller from the whole block: u1 in (0, 1) from words 0-1, u2 in [0, 1)
 * from words 2-3; returns sqrt(-2 ln u1) cos(2 pi u2). */
HS_HD double hs_rng_normal(uint64_t seed, uint64_t stream, uint64_t counter)
{
    hs_rng_block b = hs_rng_block_at(seed, stream, counter);
    uint64_t a = (uint64_t)b.v[0] | (uint64_t)b.v[1] << 32, c = (uint64_t)b.v[2] | (uint64_t)b.v[3] << 32;
    double u1 = ((double)(a >> 11) + 0.5) * 0x1.0p-53, u2 = (double)(c >> 11) * 0x1.0p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

/* A stream number for one use (a small constant naming what the numbers are for) on one rank. */
HS_HD uint64_t hs_rng_stream(uint32_t use, uint32_t rank) { return (uint64_t)use << 32 | rank; }

/* ---------------------------------------------------------------- sequential wrapper for host loops */

/* (seed, stream) and the next counter: draw k of a sequence is the counter-based value at k. */
typedef struct hs_rng {
    uint64_t seed, stream, counter;
} hs_rng;

/* Start the sequence of (seed, stream) at counter 0. */
HS_HD void hs_rng_seed(hs_rng *r, uint64_t seed, uint64_t stream)
{
    r->seed = seed;
    r->stream = stream;
    r->counter = 0;
}

/* Next 64 random bits. */
HS_HD uint64_t hs_rng_next(hs_rng *r) { return hs_rng_u64(r->seed, r->stream, r->counter++); }

/* Next uniform double in [0, 1). */
HS_HD double hs_rng_uniform(hs_rng *r) { return hs_rng_u01(r->seed, r->stream, r->counter++); }

/* Next standard normal (one counter per value). */
HS_HD double hs_rng_gaussian(hs_rng *r) { return hs_rng_normal(r->seed, r->stream, r->counter++); }

/* Next integer uniform in [0, n), n >= 1, without modulo bias (rejection of the short last run). */
HS_HD uint64_t hs_rng_below(hs_rng *r, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n; /* largest multiple of n, exclusive */
    for (;;) {
        uint64_t x = hs_rng_next(r);
        if (x < limit) return x % n;
    }
}

/* ---------------------------------------------------------------- filling buffers of a context */

struct hs_ctx;

/* buf[i] = hs_rng_u64(seed, stream, counter0 + i) for i < n, in the context's memory (device
 * memory on CUDA), computed on its backend; the same bits on either.  Not collective. */
int hs_rng_fill_u64(struct hs_ctx *ctx, uint64_t seed, uint64_t stream, uint64_t counter0, size_t n, uint64_t *buf);
/* buf[i] = hs_rng_u01(seed, stream, counter0 + i), the same way. */
int hs_rng_fill_uniform(struct hs_ctx *ctx, uint64_t seed, uint64_t stream, uint64_t counter0, size_t n, double *buf);

#ifdef __cplusplus
}
#endif
#endif
