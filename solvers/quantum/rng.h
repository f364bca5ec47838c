/* Seeded random numbers for sampling and measurement: xoshiro256** (Blackman & Vigna 2018). */
#ifndef HS_QRNG_H
#define HS_QRNG_H

#include <stdint.h>

typedef struct hs_rng {
    uint64_t s[4];
} hs_rng;

/* Seed the state from one 64-bit seed (expanded with splitmix64) and a stream number, so that
 * (seed, stream) pairs give independent sequences. */
void hs_rng_seed(hs_rng *r, uint64_t seed, uint64_t stream);
/* Next 64 random bits. */
uint64_t hs_rng_next(hs_rng *r);
/* Uniform double in [0, 1) with 53 random bits. */
double hs_rng_uniform(hs_rng *r);

#endif
