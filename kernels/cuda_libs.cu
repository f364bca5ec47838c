// The CUDA math libraries (cuBLAS, cuSPARSE, cuFFT) loaded on first use with dlopen, not linked:
// mapping and relocating them costs every process at start (cuBLAS 0.25-0.3 s, cuSPARSE and cuFFT
// 0.02 s together), and most runs call none of them.
#include "kernels/cuda_util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define HS_STR2(x) #x
#define HS_STR(x) HS_STR2(x) // expands the libraries' macros first: cublasCreate -> "cublasCreate_v2"

namespace {

// One library: the file names tried in order, and what loading it gave.
struct lazy_lib {
    const char *what;
    const char *files[2];
    pthread_mutex_t lock;
    int state; // 0 not tried, 1 loaded, -1 failed
    char why[512];
};

template <typename F> bool sym(lazy_lib *lib, void *handle, const char *name, F *out)
{
    *out = (F)dlsym(handle, name);
    if (!*out) snprintf(lib->why, sizeof lib->why, "symbol %s not found: %s", name, dlerror());
    return *out != nullptr;
}

// Loads the library once (later calls return what the first found); bind looks up its functions.
int lazy_load(lazy_lib *lib, bool (*bind)(lazy_lib *, void *))
{
    pthread_mutex_lock(&lib->lock);
    if (lib->state == 0) {
        void *handle = nullptr;
        for (const char *f : lib->files)
            if (f && (handle = dlopen(f, RTLD_NOW | RTLD_LOCAL))) break;
        if (!handle) snprintf(lib->why, sizeof lib->why, "cannot load %s: %s", lib->files[0], dlerror());
        lib->state = handle && bind(lib, handle) ? 1 : -1;
    }
    int state = lib->state;
    pthread_mutex_unlock(&lib->lock);
    if (state < 0) return HS_FAIL(HS_ERR_RUNTIME, "%s: %s", lib->what, lib->why);
    return HS_OK;
}

hs_cublas_api cublas_api;
lazy_lib cublas_lib = {"cuBLAS", {"libcublas.so." HS_STR(CUBLAS_VER_MAJOR), "libcublas.so"}, PTHREAD_MUTEX_INITIALIZER, 0, ""};

bool bind_cublas(lazy_lib *l, void *h)
{
    hs_cublas_api *a = &cublas_api;
    return sym(l, h, HS_STR(cublasCreate), &a->Create) && sym(l, h, HS_STR(cublasDestroy), &a->Destroy) &&
           sym(l, h, HS_STR(cublasSetStream), &a->SetStream) && sym(l, h, HS_STR(cublasDgemm), &a->Dgemm) &&
           sym(l, h, HS_STR(cublasSgemm), &a->Sgemm) && sym(l, h, HS_STR(cublasDdot_64), &a->Ddot_64) &&
           sym(l, h, HS_STR(cublasSdot_64), &a->Sdot_64) && sym(l, h, HS_STR(cublasDnrm2_64), &a->Dnrm2_64) &&
           sym(l, h, HS_STR(cublasSnrm2_64), &a->Snrm2_64);
}

hs_cusparse_api cusparse_api;
lazy_lib cusparse_lib = {"cuSPARSE", {"libcusparse.so." HS_STR(CUSPARSE_VER_MAJOR), "libcusparse.so"}, PTHREAD_MUTEX_INITIALIZER, 0, ""};

bool bind_cusparse(lazy_lib *l, void *h)
{
    hs_cusparse_api *a = &cusparse_api;
    return sym(l, h, "cusparseCreate", &a->Create) && sym(l, h, "cusparseDestroy", &a->Destroy) &&
           sym(l, h, "cusparseSetStream", &a->SetStream) && sym(l, h, "cusparseSetPointerMode", &a->SetPointerMode) &&
           sym(l, h, "cusparseCreateCsr", &a->CreateCsr) && sym(l, h, "cusparseDestroySpMat", &a->DestroySpMat) &&
           sym(l, h, "cusparseCreateDnVec", &a->CreateDnVec) && sym(l, h, "cusparseDestroyDnVec", &a->DestroyDnVec) &&
           sym(l, h, "cusparseDnVecSetValues", &a->DnVecSetValues) &&
           sym(l, h, "cusparseSpMV_bufferSize", &a->SpMV_bufferSize) &&
           sym(l, h, "cusparseSpMV_preprocess", &a->SpMV_preprocess) && sym(l, h, "cusparseSpMV", &a->SpMV);
}

hs_cufft_api cufft_api;

// cufftXtSetJITCallback with CUDA 13's signature (the symbol name first); a cuFFT without it runs
// every plan without load hooks (kernels/fft/fft.h).
bool optional_callbacks(void *h, hs_cufft_api *a)
{
    // the same major version as the headers: cuFFT 11 (CUDA 12) exports the name with the old
    // signature, without the symbol argument
    typedef cufftResult (*get_version_fn)(int *);
    get_version_fn get_version = (get_version_fn)dlsym(h, "cufftGetVersion");
    int v = 0;
    a->XtSetJITCallback = nullptr;
    if (get_version && get_version(&v) == CUFFT_SUCCESS && v / 1000 == CUFFT_VER_MAJOR)
        a->XtSetJITCallback = (decltype(a->XtSetJITCallback))dlsym(h, "cufftXtSetJITCallback");
    return true;
}
lazy_lib cufft_lib = {"cuFFT", {"libcufft.so." HS_STR(CUFFT_VER_MAJOR), "libcufft.so"}, PTHREAD_MUTEX_INITIALIZER, 0, ""};

bool bind_cufft(lazy_lib *l, void *h)
{
    hs_cufft_api *a = &cufft_api;
    return sym(l, h, "cufftCreate", &a->Create) && sym(l, h, "cufftDestroy", &a->Destroy) &&
           sym(l, h, "cufftSetStream", &a->SetStream) && sym(l, h, "cufftMakePlanMany64", &a->MakePlanMany64) &&
           sym(l, h, "cufftExecC2C", &a->ExecC2C) && sym(l, h, "cufftExecZ2Z", &a->ExecZ2Z) &&
           sym(l, h, "cufftExecR2C", &a->ExecR2C) && sym(l, h, "cufftExecD2Z", &a->ExecD2Z) &&
           sym(l, h, "cufftExecC2R", &a->ExecC2R) && sym(l, h, "cufftExecZ2D", &a->ExecZ2D) && optional_callbacks(h, a);
}

} // namespace

int hs_cublas(const hs_cublas_api **api)
{
    HS_CHECK(lazy_load(&cublas_lib, bind_cublas));
    *api = &cublas_api;
    return HS_OK;
}

int hs_cusparse(const hs_cusparse_api **api)
{
    HS_CHECK(lazy_load(&cusparse_lib, bind_cusparse));
    *api = &cusparse_api;
    return HS_OK;
}

int hs_cufft(const hs_cufft_api **api)
{
    HS_CHECK(lazy_load(&cufft_lib, bind_cufft));
    *api = &cufft_api;
    return HS_OK;
}
