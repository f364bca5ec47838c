// CUDA backend of the local FFT: cuFFT 64-bit plans on the context's stream, plus a scale kernel.
#include "kernels/cuda_util.h"
#include "kernels/error.h"
#include "kernels/fft/fft_impl.h"
#include "kernels/types.h"

#include <stdlib.h>

// How a plan is carried out.  cuFFT is only ever given dimensions longer than 1 (size-1
// dimensions are identities and are squeezed out), so degenerate shapes need their own modes.
enum {
    MODE_CUFFT = 0,    // one cuFFT plan, executed once per outer loop step
    MODE_IDENTITY = 1, // C2C with every size 1: a strided copy (or nothing in place)
    MODE_REAL_UNIT = 2 // R2C/C2R whose last size is 1: widen/narrow plus an optional C2C plan
};

struct cuda_fft {
    struct hs_cuda_ctx *cu;
    const hs_cufft_api *cf;  // the loaded library (kernels/cuda_libs.cu)
    hs_fft_desc d;
    int mode;
    cufftHandle h;           // MODE_CUFFT: the transform; MODE_REAL_UNIT: C2C over leading dims
    int have_h;
    cufftType type;
    int hooked;              // the desc's load hook is linked into the plan
    int64_t outer;           // cuFFT launches per execute (outer loop not folded into the batch)
    size_t in_step, out_step; // bytes between outer loop steps
};

static size_t real_bytes(hs_dtype p) { return p == HS_F64 ? sizeof(double) : sizeof(float); }

static cufftType cufft_type(int kind, hs_dtype p)
{
    if (kind == HS_FFT_DESC_R2C) return p == HS_F64 ? CUFFT_D2Z : CUFFT_R2C;
    if (kind == HS_FFT_DESC_C2R) return p == HS_F64 ? CUFFT_Z2D : CUFFT_C2R;
    return p == HS_F64 ? CUFFT_Z2Z : CUFFT_C2C;
}

// Drop size-1 dimensions, rebuilding the embed sizes from the element strides of what is left.
// Returns the new rank (0 when nothing is left).
static int squeeze(const hs_fft_desc *d, long long *n, long long *inembed, long long *onembed,
                   long long *istride, long long *ostride)
{
    int64_t si[3], so[3], pi = d->istride, po = d->ostride;
    for (int k = d->rank - 1; k >= 0; k--) {
        si[k] = pi, so[k] = po;
        pi *= d->inembed[k];
        po *= d->onembed[k];
    }
    int r = 0;
    int64_t ki[3], ko[3];
    for (int k = 0; k < d->rank; k++) {
        if (d->n[k] == 1 && !(k == d->rank - 1 && d->kind != HS_FFT_DESC_C2C)) continue;
        n[r] = d->n[k], ki[r] = si[k], ko[r] = so[k];
        r++;
    }
    if (r == 0) return 0;
    *istride = ki[r - 1], *ostride = ko[r - 1];
    inembed[0] = n[0], onembed[0] = n[0];
    for (int j = 1; j < r; j++) {
        inembed[j] = ki[j - 1] / ki[j];
        onembed[j] = ko[j - 1] / ko[j];
    }
    return r;
}

// cuFFT's load-callback type for the plan's input.
static cufftXtCallbackType load_callback_type(cufftType t)
{
    switch (t) {
    case CUFFT_Z2Z: case CUFFT_Z2D: return CUFFT_CB_LD_COMPLEX_DOUBLE;
    case CUFFT_C2C: case CUFFT_C2R: return CUFFT_CB_LD_COMPLEX;
    case CUFFT_D2Z: return CUFFT_CB_LD_REAL_DOUBLE;
    default: return CUFFT_CB_LD_REAL;
    }
}

// Link the desc's load hook and make the plan with it; 0 (the handle then unusable) when cuFFT
// refuses either step: no JIT callbacks in this cuFFT, an LTO-IR it cannot link, a plan it cannot
// make with the callback inlined.  None of these is an error of the run: the caller plans without.
static int plan_with_hook(struct cuda_fft *f, const hs_fft_desc *d, int r, long long *n, long long *inembed,
                          long long *onembed, long long istride, long long ostride, long long batch, size_t *work)
{
    if (!f->cf->XtSetJITCallback) return 0;
    void *info = d->hook_info;
    if (f->cf->XtSetJITCallback(f->h, d->hook_symbol, d->hook_ir, d->hook_ir_size, load_callback_type(f->type), &info) !=
        CUFFT_SUCCESS)
        return 0;
    return f->cf->MakePlanMany64(f->h, r, n, inembed, istride, (long long)d->idist, onembed, ostride, (long long)d->odist,
                                 f->type, batch, work) == CUFFT_SUCCESS;
}

// A fresh cuFFT handle on the context's stream.
static int new_handle(struct cuda_fft *f)
{
    HS_CUFFT_CHECK(f->cf->Create(&f->h));
    f->have_h = 1;
    HS_CUFFT_CHECK(f->cf->SetStream(f->h, f->cu->stream));
    return HS_OK;
}

static int make_cufft(struct cuda_fft *f, const hs_fft_desc *d, int r, long long *n, long long *inembed,
                      long long *onembed, long long istride, long long ostride, long long batch, int hook)
{
    size_t work = 0;
    f->type = cufft_type(d->kind, d->precision);
    HS_CHECK(hs_cufft(&f->cf));
    HS_CHECK(new_handle(f));
    if (hook && d->hook_symbol) {
        if (plan_with_hook(f, d, r, n, inembed, onembed, istride, ostride, batch, &work)) {
            f->hooked = 1;
            return HS_OK;
        }
        // a handle with a JIT callback set keeps it: start again on a fresh one
        f->cf->Destroy(f->h);
        f->have_h = 0;
        HS_CHECK(new_handle(f));
    }
    HS_CUFFT_CHECK(f->cf->MakePlanMany64(f->h, r, n, inembed, istride, (long long)d->idist, onembed, ostride,
                                       (long long)d->odist, f->type, batch, &work));
    return HS_OK;
}

// The C2C plan over the leading dimensions of an R2C/C2R plan whose last size is 1.
static int make_leading_c2c(struct cuda_fft *f)
{
    hs_fft_desc c = f->d;
    c.kind = HS_FFT_DESC_C2C;
    c.rank = f->d.rank - 1;
    if (c.rank == 0) return HS_OK;
    c.idist = c.odist = f->d.total;
    for (int k = 0; k < c.rank; k++) c.inembed[k] = c.onembed[k] = c.n[k];
    long long n[3], ie[3], oe[3], is, os;
    int r = squeeze(&c, n, ie, oe, &is, &os);
    if (r == 0) return HS_OK;
    HS_CHECK(make_cufft(f, &c, r, n, ie, oe, is, os, (long long)c.batch, 0));
    return HS_OK;
}

extern "C" int hs_fft_create_cuda(struct hs_cuda_ctx *cu, const hs_fft_desc *d, void **backend)
{
    *backend = NULL;
    struct cuda_fft *f = (struct cuda_fft *)calloc(1, sizeof *f);
    if (!f) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a cuFFT plan");
    f->cu = cu;
    f->d = *d;
    *backend = f;
    HS_CUDA_CHECK(cudaSetDevice(cu->device));
    hs_fft_desc e = *d;
    // fold the outer loop into the batch when the two loops are one arithmetic progression
    if (e.outer > 1 && (e.batch == 1 || (e.outer_idist == e.batch * e.idist && e.outer_odist == e.batch * e.odist))) {
        if (e.batch == 1) e.idist = e.outer_idist, e.odist = e.outer_odist;
        e.batch *= e.outer;
        e.outer = 1;
    }
    // cuFFT takes one batch loop: give it the longer one and walk the other from the host
    if (e.outer > e.batch) {
        int64_t b = e.batch, i = e.idist, o = e.odist;
        e.batch = e.outer, e.idist = e.outer_idist, e.odist = e.outer_odist;
        e.outer = b, e.outer_idist = i, e.outer_odist = o;
    }
    size_t ib = real_bytes(d->precision) * (d->kind == HS_FFT_DESC_R2C ? 1 : 2);
    size_t ob = real_bytes(d->precision) * (d->kind == HS_FFT_DESC_C2R ? 1 : 2);
    f->outer = e.outer;
    f->in_step = (size_t)e.outer_idist * ib;
    f->out_step = (size_t)e.outer_odist * ob;
    f->d = e;
    if (d->kind != HS_FFT_DESC_C2C && d->n[d->rank - 1] == 1) {
        f->mode = MODE_REAL_UNIT;
        HS_CHECK(make_leading_c2c(f));
        return HS_OK;
    }
    long long n[3], ie[3], oe[3], is, os;
    int r = squeeze(&e, n, ie, oe, &is, &os);
    if (r == 0) {
        f->mode = MODE_IDENTITY;
        return HS_OK;
    }
    // a hook sees offsets from the execute's input: only where one launch covers the whole input
    HS_CHECK(make_cufft(f, &e, r, n, ie, oe, is, os, (long long)e.batch, e.outer == 1));
    return HS_OK;
}

extern "C" int hs_fft_hooked_cuda(const void *backend) { return backend && ((const struct cuda_fft *)backend)->hooked; }

static int exec_handle(const struct cuda_fft *f, int direction, const void *in, void *out)
{
    void *src = const_cast<void *>(in);
    const hs_cufft_api *cf = f->cf;
    cufftHandle h = f->h;
    switch (f->type) {
    case CUFFT_Z2Z: HS_CUFFT_CHECK(cf->ExecZ2Z(h, (cufftDoubleComplex *)src, (cufftDoubleComplex *)out, direction)); break;
    case CUFFT_C2C: HS_CUFFT_CHECK(cf->ExecC2C(h, (cufftComplex *)src, (cufftComplex *)out, direction)); break;
    case CUFFT_D2Z: HS_CUFFT_CHECK(cf->ExecD2Z(h, (cufftDoubleReal *)src, (cufftDoubleComplex *)out)); break;
    case CUFFT_R2C: HS_CUFFT_CHECK(cf->ExecR2C(h, (cufftReal *)src, (cufftComplex *)out)); break;
    case CUFFT_Z2D: HS_CUFFT_CHECK(cf->ExecZ2D(h, (cufftDoubleComplex *)src, (cufftDoubleReal *)out)); break;
    case CUFFT_C2R: HS_CUFFT_CHECK(cf->ExecC2R(h, (cufftComplex *)src, (cufftReal *)out)); break;
    default: return HS_FAIL(HS_ERR_RUNTIME, "unknown cuFFT type %d", (int)f->type);
    }
    return HS_OK;
}

// out[i] = (in[i], 0): the R2C transform along a last dimension of size 1.
template <typename T, typename T2>
__global__ void widen_kernel(size_t count, const T *__restrict__ in, T2 *__restrict__ out)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        T2 v;
        v.x = in[i];
        v.y = 0;
        out[i] = v;
    }
}

// out[i] = re(in[i]): the C2R transform along a last dimension of size 1.
template <typename T, typename T2>
__global__ void narrow_kernel(size_t count, const T2 *__restrict__ in, T *__restrict__ out)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i].x;
}

static int exec_real_unit(struct cuda_fft *f, int direction, const void *in, void *out)
{
    struct hs_cuda_ctx *cu = f->cu;
    size_t count = (size_t)(f->d.batch * f->d.total);
    int blocks = hs_cuda_blocks(cu, count, 256);
    int f64 = f->d.precision == HS_F64;
    if (f->d.kind == HS_FFT_DESC_R2C) {
        if (f64) widen_kernel<<<blocks, 256, 0, cu->stream>>>(count, (const double *)in, (double2 *)out);
        else widen_kernel<<<blocks, 256, 0, cu->stream>>>(count, (const float *)in, (float2 *)out);
        HS_CUDA_LAUNCH_CHECK("widen_kernel");
        if (f->have_h) HS_CHECK(exec_handle(f, direction, out, out));
        return HS_OK;
    }
    // C2R may overwrite its input (documented), so the leading C2C runs in place on it
    if (f->have_h) HS_CHECK(exec_handle(f, direction, in, const_cast<void *>(in)));
    if (f64) narrow_kernel<<<blocks, 256, 0, cu->stream>>>(count, (const double2 *)in, (double *)out);
    else narrow_kernel<<<blocks, 256, 0, cu->stream>>>(count, (const float2 *)in, (float *)out);
    HS_CUDA_LAUNCH_CHECK("narrow_kernel");
    return HS_OK;
}

static int exec_identity(struct cuda_fft *f, const void *in, void *out)
{
    if (in == out) return HS_OK;
    const hs_fft_desc *d = &f->d;
    HS_CHECK(hs_dfft_copy_runs_cuda(f->cu, d->precision, d->outer, d->batch, 1, in, d->outer_idist, d->idist, out,
                                    d->outer_odist, d->odist));
    return HS_OK;
}

extern "C" int hs_fft_execute_cuda(void *backend, int direction, const void *in, void *out)
{
    struct cuda_fft *f = (struct cuda_fft *)backend;
    if (f->mode == MODE_CUFFT && f->outer == 1) return exec_handle(f, direction, in, out);
    if (f->mode == MODE_IDENTITY) return exec_identity(f, in, out);
    if (f->mode == MODE_REAL_UNIT) return exec_real_unit(f, direction, in, out);
    for (int64_t o = 0; o < f->outer; o++)
        HS_CHECK(exec_handle(f, direction, (const char *)in + o * f->in_step, (char *)out + o * f->out_step));
    return HS_OK;
}

extern "C" void hs_fft_destroy_cuda(void *backend)
{
    struct cuda_fft *f = (struct cuda_fft *)backend;
    if (!f) return;
    if (f->have_h) {
        // the plan's work area may still be in use by queued transforms
        cudaStreamSynchronize(f->cu->stream);
        f->cf->Destroy(f->h);
    }
    free(f);
}

template <typename T>
__global__ void scale_kernel(size_t count, T factor, T *__restrict__ x)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        x[i] *= factor;
}

extern "C" int hs_fft_scale_cuda(struct hs_cuda_ctx *cu, hs_dtype precision, size_t count, double factor, void *data)
{
    if (count == 0) return HS_OK;
    int blocks = hs_cuda_blocks(cu, count, 256);
    if (precision == HS_F64) scale_kernel<<<blocks, 256, 0, cu->stream>>>(count, factor, (double *)data);
    else scale_kernel<<<blocks, 256, 0, cu->stream>>>(count, (float)factor, (float *)data);
    HS_CUDA_LAUNCH_CHECK("scale_kernel");
    return HS_OK;
}
