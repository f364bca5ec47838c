#!/usr/bin/env python3
"""Independent Python reimplementation of kernels/rng/rng.h (Philox-4x32-10, Salmon et al. SC'11).

Checks itself against the Random123 known-answer vectors (kat_vectors, philox4x32 10), then prints
the values that tests/unit/test_rng.c asserts:  python3 scripts/rng_philox.py
scripts/pinn_pytorch.py imports it to start the PyTorch peer from the same weights as hpcsim.
"""
import math

M32 = 0xFFFFFFFF


def philox4x32_10(c, k):
    c, (k0, k1) = list(c), k
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & M32, (p0 >> 32) ^ c[3] ^ k1, p0 & M32]
    return c


def block(seed, stream, counter):
    return philox4x32_10([counter & M32, counter >> 32 & M32, stream & M32, stream >> 32 & M32],
                         (seed & M32, seed >> 32 & M32))


def u64(seed, stream, counter):
    b = block(seed, stream, counter)
    return b[0] | b[1] << 32


def u01(seed, stream, counter):
    return (u64(seed, stream, counter) >> 11) * 2.0 ** -53


def normal(seed, stream, counter):
    b = block(seed, stream, counter)
    a, c = b[0] | b[1] << 32, b[2] | b[3] << 32
    u1, u2 = ((a >> 11) + 0.5) * 2.0 ** -53, (c >> 11) * 2.0 ** -53
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2)


class Rng:
    """The sequential wrapper hs_rng: draw k of (seed, stream) is the counter-based value at k."""

    def __init__(self, seed, stream=0):
        self.seed, self.stream, self.counter = seed, stream, 0

    def next(self):
        self.counter += 1
        return u64(self.seed, self.stream, self.counter - 1)

    def uniform(self):
        self.counter += 1
        return u01(self.seed, self.stream, self.counter - 1)

    def gaussian(self):
        self.counter += 1
        return normal(self.seed, self.stream, self.counter - 1)


# Random123 1.14 kat_vectors, "philox4x32 10": counter words, key words, expected output words.
KAT = [
    ([0, 0, 0, 0], (0, 0), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
    ([M32] * 4, (M32, M32), [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]),
    ([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], (0xa4093822, 0x299f31d0),
     [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]),
]

if __name__ == "__main__":
    for c, k, want in KAT:
        got = philox4x32_10(c, k)
        assert got == want, (c, k, [hex(x) for x in got])
    print("# Random123 known answers reproduced")
    for seed, stream, counter in [(0, 0, 0), (12345, 1, 0), (12345, 1, 1), (2**64 - 1, 2**64 - 1, 2**64 - 1),
                                  (0xDEADBEEFCAFEF00D, 0x0000000700000003, 123456789)]:
        print("u64  seed=%#x stream=%#x counter=%#x -> 0x%016xull" % (seed, stream, counter, u64(seed, stream, counter)))
    for seed, stream, counter in [(12345, 1, 0), (7, 0, 42)]:
        print("u01  seed=%d stream=%d counter=%d -> %.17g" % (seed, stream, counter, u01(seed, stream, counter)))
        print("norm seed=%d stream=%d counter=%d -> %.17g" % (seed, stream, counter, normal(seed, stream, counter)))
