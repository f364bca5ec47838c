// The Poisson solver's spectral divide as cuFFT's load callback of the last dimension's C2R, compiled to LTO-IR (not into the library's objects).
//
// Built by the Makefile with `nvcc -dc -fatbin -gencode arch=compute_XX,code=lto_XX` and embedded
// as a C array (bin2c) in poisson_cuda.cu, which hands it to cuFFT (hs_fft_plan_create_hooked).
// cuFFT declares the callback by name with its own signature and links it into its C2R kernels,
// so the divide rides on the C2R's read of the spectrum instead of a read and a write of its own.
#include <cufftXt.h>

#include "kernels/fft/poisson_impl.h"
#include "kernels/fft/poisson_point.h"

// Entry `offset` of the R2C lines (row = offset / half, k = offset % half), divided as
// hs_poisson_spectral_divide_cuda divides it in place: the same function, so the two agree bitwise.
__device__ cufftDoubleComplex hs_poisson_divide_hook(void *in, unsigned long long offset, void *info, void *shared)
{
    const hs_poisson_hook_info *h = (const hs_poisson_hook_info *)info;
    unsigned long long row, k;
    if (offset <= 0xffffffffull && h->half <= 0xffffffffll) { // 32-bit division: a few instructions, not tens
        unsigned o = (unsigned)offset, hf = (unsigned)h->half, r = o / hf;
        row = r, k = o - r * hf;
    } else {
        row = offset / (unsigned long long)h->half;
        k = offset - row * (unsigned long long)h->half;
    }
    const double2 v = ((const double2 *)in)[offset];
    double out[2];
    hs_poisson_spectral_divided(h->n, (int64_t)k, h->dct, h->tw, h->scale, h->row_ev[row], h->ev, v.x, v.y, out);
    return make_cuDoubleComplex(out[0], out[1]);
}
