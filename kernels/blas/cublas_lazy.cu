// cuBLAS loaded on first use (dlopen): its libraries take 0.25-0.3 s to load at every process start.
#include "kernels/cuda_util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define HS_STR2(x) #x
#define HS_STR(x) HS_STR2(x) // expands cuBLAS's macros first: cublasCreate -> "cublasCreate_v2"

static hs_cublas_api g_api;
static int g_state; // 0 not tried, 1 loaded, -1 failed
static char g_why[512];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

template <typename F> static bool sym(void *lib, const char *name, F *out)
{
    *out = (F)dlsym(lib, name);
    if (!*out) snprintf(g_why, sizeof g_why, "symbol %s not found: %s", name, dlerror());
    return *out != nullptr;
}

static void load(void)
{
    static const char *names[] = {"libcublas.so." HS_STR(CUBLAS_VER_MAJOR), "libcublas.so"};
    void *lib = nullptr;
    for (const char *n : names)
        if ((lib = dlopen(n, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
        snprintf(g_why, sizeof g_why, "cannot load libcublas.so.%d: %s", CUBLAS_VER_MAJOR, dlerror());
        g_state = -1;
        return;
    }
    bool ok = sym(lib, HS_STR(cublasCreate), &g_api.Create) && sym(lib, HS_STR(cublasDestroy), &g_api.Destroy) &&
              sym(lib, HS_STR(cublasSetStream), &g_api.SetStream) && sym(lib, HS_STR(cublasDgemm), &g_api.Dgemm) &&
              sym(lib, HS_STR(cublasSgemm), &g_api.Sgemm) && sym(lib, HS_STR(cublasDdot_64), &g_api.Ddot_64) &&
              sym(lib, HS_STR(cublasSdot_64), &g_api.Sdot_64) && sym(lib, HS_STR(cublasDnrm2_64), &g_api.Dnrm2_64) &&
              sym(lib, HS_STR(cublasSnrm2_64), &g_api.Snrm2_64);
    g_state = ok ? 1 : -1;
}

int hs_cublas(const hs_cublas_api **api)
{
    pthread_mutex_lock(&g_lock);
    if (g_state == 0) load();
    pthread_mutex_unlock(&g_lock);
    if (g_state < 0) return HS_FAIL(HS_ERR_RUNTIME, "cuBLAS: %s", g_why);
    *api = &g_api;
    return HS_OK;
}
