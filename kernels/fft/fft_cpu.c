/* CPU backend of the FFT family: FFTW3 guru64 plans (double and float) cached per use case, scaling, the transpose's copies. */
#include "kernels/config.h"
#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "kernels/fft/fft_impl.h"

#include <stdlib.h>
#include <string.h>

int hs_fft_scale_cpu(hs_dtype precision, size_t count, double factor, void *data)
{
    if (precision == HS_F64) {
        double *x = data;
#pragma omp parallel for schedule(static) if (count > 65536)
        for (size_t i = 0; i < count; i++) x[i] *= factor;
    } else {
        float *x = data;
        float f = (float)factor;
#pragma omp parallel for schedule(static) if (count > 65536)
        for (size_t i = 0; i < count; i++) x[i] *= f;
    }
    return HS_OK;
}

int hs_dfft_copy_runs_cpu(hs_dtype precision, int64_t rows, int64_t cols, int64_t run, const void *src, int64_t src_rs,
                          int64_t src_cs, void *dst, int64_t dst_rs, int64_t dst_cs)
{
    const size_t cb = precision == HS_F64 ? 16 : 8, bytes = (size_t)run * cb;
    const char *s = src;
    char *d = dst;
#pragma omp parallel for collapse(2) schedule(static) if (rows * cols * run > 32768)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            memcpy(d + (size_t)(r * dst_rs + c * dst_cs) * cb, s + (size_t)(r * src_rs + c * src_cs) * cb, bytes);
    return HS_OK;
}

#if !HS_HAVE_FFTW

int hs_fft_create_cpu(const hs_fft_desc *d, int nthreads, int measure, void **backend)
{
    (void)d; (void)nthreads; (void)measure;
    *backend = NULL;
    return HS_FAIL(HS_ERR_RUNTIME, "FFT on the CPU backend: hpcsim was built without FFTW "
                   "(install libfftw3-dev and rebuild, or run on a CUDA device)");
}
int hs_fft_execute_cpu(void *backend, const hs_fft_desc *d, int direction, const void *in, void *out)
{
    (void)backend; (void)d; (void)direction; (void)in; (void)out;
    return HS_FAIL(HS_ERR_RUNTIME, "FFT on the CPU backend: hpcsim was built without FFTW");
}
void hs_fft_destroy_cpu(void *backend) { (void)backend; }

#else

#include <fftw3.h>
#include <pthread.h>

/* FFTW's planner keeps global state: every planning and destroy call goes through this lock. */
static pthread_mutex_t g_planner = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_threads_once = PTHREAD_ONCE_INIT;

static void init_threads(void)
{
#if HS_HAVE_OPENMP
    fftw_init_threads();
    fftwf_init_threads();
#endif
}

/* Plans indexed by [backward][in-place][unaligned]; made on first use. */
typedef struct {
    hs_fft_desc d;
    int nthreads;
    unsigned flags;
    void *plans[2][2][2];
} cpu_fft;

static size_t elem_bytes(const hs_fft_desc *d, int real)
{
    size_t s = d->precision == HS_F64 ? sizeof(double) : sizeof(float);
    return real ? s : 2 * s;
}

/* Transform and batch loops in FFTW's guru vocabulary (strides in the arrays' own elements). */
static void guru_dims(const hs_fft_desc *d, fftw_iodim64 *dims, fftw_iodim64 *loops)
{
    int64_t si = d->istride, so = d->ostride;
    for (int k = d->rank - 1; k >= 0; k--) {
        dims[k].n = d->n[k];
        dims[k].is = si;
        dims[k].os = so;
        si *= d->inembed[k];
        so *= d->onembed[k];
    }
    loops[0].n = d->outer, loops[0].is = d->outer_idist, loops[0].os = d->outer_odist;
    loops[1].n = d->batch, loops[1].is = d->idist, loops[1].os = d->odist;
}

static void *plan_f64(const hs_fft_desc *d, int sign, void *in, void *out, unsigned flags)
{
    fftw_iodim64 dims[3], loops[2];
    guru_dims(d, dims, loops);
    if (d->kind == HS_FFT_DESC_R2C) return fftw_plan_guru64_dft_r2c(d->rank, dims, 2, loops, in, out, flags);
    if (d->kind == HS_FFT_DESC_C2R) return fftw_plan_guru64_dft_c2r(d->rank, dims, 2, loops, in, out, flags);
    return fftw_plan_guru64_dft(d->rank, dims, 2, loops, in, out, sign, flags);
}

static void *plan_f32(const hs_fft_desc *d, int sign, void *in, void *out, unsigned flags)
{
    fftw_iodim64 dims[3], loops[2]; /* one struct type serves every precision in fftw3.h */
    guru_dims(d, dims, loops);
    if (d->kind == HS_FFT_DESC_R2C) return fftwf_plan_guru64_dft_r2c(d->rank, dims, 2, loops, in, out, flags);
    if (d->kind == HS_FFT_DESC_C2R) return fftwf_plan_guru64_dft_c2r(d->rank, dims, 2, loops, in, out, flags);
    return fftwf_plan_guru64_dft(d->rank, dims, 2, loops, in, out, sign, flags);
}

/* Plan on scratch arrays so that FFTW_MEASURE never touches the caller's data. */
static void *make_plan(cpu_fft *c, int sign, int inplace, int unaligned)
{
    const hs_fft_desc *d = &c->d;
    size_t ib = (size_t)d->in_span * elem_bytes(d, d->kind == HS_FFT_DESC_R2C);
    size_t ob = (size_t)d->out_span * elem_bytes(d, d->kind == HS_FFT_DESC_C2R);
    void *in = fftw_malloc(inplace && ob > ib ? ob : ib);
    void *out = inplace ? in : fftw_malloc(ob);
    unsigned flags = c->flags | (unaligned ? FFTW_UNALIGNED : 0);
    void *p = NULL;
    if (in && out) {
        if (d->precision == HS_F64) {
            fftw_plan_with_nthreads(c->nthreads);
            p = plan_f64(d, sign, in, out, flags);
        } else {
            fftwf_plan_with_nthreads(c->nthreads);
            p = plan_f32(d, sign, in, out, flags);
        }
    }
    fftw_free(in);
    if (!inplace) fftw_free(out);
    return p;
}

int hs_fft_create_cpu(const hs_fft_desc *d, int nthreads, int measure, void **backend)
{
    pthread_once(&g_threads_once, init_threads);
    cpu_fft *c = calloc(1, sizeof *c);
    if (!c) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for an FFTW plan");
    c->d = *d;
    c->nthreads = nthreads < 1 || !HS_HAVE_OPENMP ? 1 : nthreads;
    /* A transform of fewer than 8 HS_CPU_SERIAL_BELOW elements (all batches together) on one
     * thread: FFTW's estimate-mode planner splits even small ones across the team, and its threads
     * paid off only above that (the cavity's transforms on 2 cores: 257^2 stepped 1.6x faster with
     * them serial, 513^2 1.15x slower). */
    if (d->total * (d->batch > 0 ? d->batch : 1) * (d->outer > 0 ? d->outer : 1) < 8 * HS_CPU_SERIAL_BELOW) c->nthreads = 1;
    c->flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    *backend = c;
    return HS_OK;
}

static int misaligned(hs_dtype precision, const void *p)
{
    return precision == HS_F64 ? fftw_alignment_of((double *)p) != 0 : fftwf_alignment_of((float *)p) != 0;
}

static int get_plan(cpu_fft *c, int direction, const void *in, const void *out, void **plan)
{
    int back = direction == +1, inplace = in == out;
    int unal = misaligned(c->d.precision, in) || misaligned(c->d.precision, out);
    pthread_mutex_lock(&g_planner);
    void **slot = &c->plans[back][inplace][unal];
    if (!*slot) *slot = make_plan(c, direction, inplace, unal);
    *plan = *slot;
    pthread_mutex_unlock(&g_planner);
    if (!*plan)
        return HS_FAIL(HS_ERR_RUNTIME, "FFTW could not plan a rank-%d %s transform (n[0] = %lld, batch %lld)",
                       c->d.rank, c->d.kind == 0 ? "C2C" : c->d.kind == 1 ? "R2C" : "C2R",
                       (long long)c->d.n[0], (long long)c->d.batch);
    return HS_OK;
}

/* FFTW's new-array execute takes non-const input; out-of-place C2C and R2C leave it intact. */
int hs_fft_execute_cpu(void *backend, const hs_fft_desc *d, int direction, const void *in, void *out)
{
    cpu_fft *c = backend;
    void *plan;
    HS_CHECK(get_plan(c, direction, in, out, &plan));
    void *src = (void *)(uintptr_t)in;
    if (d->precision == HS_F64) {
        if (d->kind == HS_FFT_DESC_R2C) fftw_execute_dft_r2c(plan, src, out);
        else if (d->kind == HS_FFT_DESC_C2R) fftw_execute_dft_c2r(plan, src, out);
        else fftw_execute_dft(plan, src, out);
    } else {
        if (d->kind == HS_FFT_DESC_R2C) fftwf_execute_dft_r2c(plan, src, out);
        else if (d->kind == HS_FFT_DESC_C2R) fftwf_execute_dft_c2r(plan, src, out);
        else fftwf_execute_dft(plan, src, out);
    }
    return HS_OK;
}

void hs_fft_destroy_cpu(void *backend)
{
    cpu_fft *c = backend;
    if (!c) return;
    pthread_mutex_lock(&g_planner);
    for (int i = 0; i < 8; i++) {
        void *p = c->plans[i >> 2][(i >> 1) & 1][i & 1];
        if (!p) continue;
        if (c->d.precision == HS_F64) fftw_destroy_plan(p);
        else fftwf_destroy_plan(p);
    }
    pthread_mutex_unlock(&g_planner);
    free(c);
}

#endif
