/* The execution context: MPI start-up, node-local rank to GPU mapping, backend choice, report. */
#include "kernels/context.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if HS_HAVE_CUDA
#include <pthread.h>
#endif
#if HS_HAVE_OPENMP
#include <omp.h>
#endif

#include "kernels/cuda_backend.h"
#include "kernels/dispatch.h"
#include "kernels/memory.h"
#include "kernels/version.h"

const char *hs_device_name(hs_device d) { return d == HS_DEVICE_CUDA ? "cuda" : "cpu"; }

#if HS_HAVE_CUDA
/* The CUDA driver's initialisation (0.10 s on the H200 machine, in the first device count) needs
 * neither MPI nor the parameters: a thread started with the first context does it while the
 * parameters are parsed, and the first caller that needs the count waits for it.  It starts only
 * after MPI_Init: Open MPI's start-up (and our singleton defaults) call setenv, and glibc's getenv,
 * which cuInit calls, may read a freed environment array meanwhile (the H200 machine's runs
 * crashed so, now and then, in getenv under cuInit while MPI_Init ran).  The thread makes
 * no device context, so a process that stays on the CPU holds no GPU memory for it.  Only the
 * main thread starts, joins and reads this (MPI_THREAD_FUNNELED). */
static struct {
    pthread_t thread;
    int state; /* 0 not started, 1 counting in the thread, 2 counted */
    int count;
} g_devices;

static void *count_devices(void *unused)
{
    (void)unused;
    hs_ctx_count_cuda(&g_devices.count);
    return NULL;
}
#endif

/* Before the process ends: the thread must not be inside the driver while the runtime unloads. */
static void join_counting_devices(void)
{
#if HS_HAVE_CUDA
    if (g_devices.state == 1 && pthread_join(g_devices.thread, NULL) == 0) g_devices.state = 2;
#endif
}

static void start_counting_devices(void)
{
#if HS_HAVE_CUDA
    if (g_devices.state == 0 && pthread_create(&g_devices.thread, NULL, count_devices, NULL) == 0) {
        g_devices.state = 1;
        /* also on the exits that pass no finaliser (out of memory, an error with MPI not ours) */
        atexit(join_counting_devices);
    }
#endif
}

int hs_cuda_device_count(void)
{
#if HS_HAVE_CUDA
    join_counting_devices();
    if (g_devices.state != 2) hs_ctx_count_cuda(&g_devices.count);
    g_devices.state = 2;
    return g_devices.count;
#else
    return 0;
#endif
}

/* Set when this process is an isolated singleton (no launcher, no runtime daemon): one rank alone. */
static int g_isolated_singleton;

static void finalize_mpi(int abort_code)
{
    join_counting_devices();
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin) return;
    /* an isolated singleton has no other rank to stop and no daemon to tell: MPI_Abort would only
     * add Open MPI's seven-line MPI_ABORT banner under our message, so it ends as MPI_Abort would
     * (no MPI_Finalize, no exit handlers: HDF5's crashed after a failed close) without the banner */
    if (abort_code && g_isolated_singleton) {
        fflush(NULL);
        _exit(abort_code);
    }
    if (abort_code) MPI_Abort(MPI_COMM_WORLD, abort_code);
    else MPI_Finalize();
}

int hs_ctx_set_device(hs_ctx *ctx, const char *device, int allow_shared_gpu)
{
    const char *want = device && *device ? device : "auto";
    if (strcmp(want, "auto") && strcmp(want, "cpu") && strcmp(want, "cuda"))
        return hs_input_error("run.device", 0, NULL, "unknown device '%s' (expected auto, cpu or cuda)", want);
#if HS_HAVE_CUDA
    if (ctx->cuda) {
        hs_ctx_destroy_cuda(ctx->cuda);
        ctx->cuda = NULL;
    }
#endif
    ctx->device = HS_DEVICE_CPU;
    ctx->gpu = -1;
    ctx->t_device_init = 0;
    if (!strcmp(want, "cpu")) return HS_OK;
    const double t0 = hs_wtime();
    int gpus = hs_cuda_device_count();
#if HS_HAVE_CUDA
    hs_timeline("CUDA driver initialised"); /* a build without CUDA has no driver to wait for */
#endif
    if (gpus == 0) {
        if (!strcmp(want, "auto")) return HS_OK;
#if HS_HAVE_CUDA
        return HS_FAIL(HS_ERR_RUNTIME, "device = cuda requested but no usable GPU was found on rank %d", ctx->rank);
#else
        return HS_FAIL(HS_ERR_RUNTIME, "device = cuda requested but this build has no CUDA backend (rebuild with nvcc on PATH or CUDA=1)");
#endif
    }
    /* One rank per GPU: refuse silent sharing, which halves every rank's speed without a word. */
    int shared = ctx->local_size > gpus;
    int any_shared = shared;
    HS_CHECK(hs_allreduce_int_max(ctx->comm, &any_shared, 1));
    if (any_shared && !allow_shared_gpu) {
        if (!strcmp(want, "auto")) return HS_OK; /* stay on the CPU rather than oversubscribe */
        return HS_FAIL(HS_ERR_RUNTIME, "%d ranks on a node share %d GPU(s); start one rank per GPU "
                       "(or set run.allow_shared_gpu = true)", ctx->local_size, gpus);
    }
    ctx->gpu = ctx->local_rank % gpus;
#if HS_HAVE_CUDA
    HS_CHECK(hs_ctx_create_cuda(ctx->gpu, &ctx->cuda));
    hs_timeline("device context created");
#endif
    ctx->device = HS_DEVICE_CUDA;
    ctx->t_device_init = hs_wtime() - t0; /* with what is left of the driver's initialisation */
    return HS_OK;
}

/* A process that no launcher started (`hpcsim run x.ini`, not under mpirun or srun) is an MPI
 * singleton: one rank.  Open MPI 4 then starts its runtime and probes UCX for networks it will
 * never use, 0.35-0.6 s of MPI_Init on the machines measured (0.1 s without).  Unless the user set
 * them, such a process asks for an isolated singleton with the in-node transports only.  hwloc's
 * topology discovery in MPI_Init also loads its GPU plugins (CUDA, NVML, ...), which initialise
 * the driver and NVML only to describe GPUs a single rank never places anything on: on the H200
 * machine MPI_Init took 0.23-0.35 s with them and 0.02 s without (the driver is initialised once
 * either way, by us, when the device is chosen). */
static int singleton_mpi_defaults(void)
{
#if defined(OPEN_MPI) && OPEN_MPI && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION == 4
    static const char *launched[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"};
    for (size_t i = 0; i < sizeof launched / sizeof launched[0]; i++)
        if (getenv(launched[i])) return 0;
    if (getenv("HS_MPI_SINGLETON_DEFAULTS") && !strcmp(getenv("HS_MPI_SINGLETON_DEFAULTS"), "0")) return 0;
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_btl", "self,vader", 0);
    setenv("OMPI_MCA_osc", "^ucx", 0);
    setenv("HWLOC_COMPONENTS", "-cuda,-nvml,-opencl,-rsmi,-levelzero,-gl", 0);
    return 1;
#else
    return 0;
#endif
}

#if HS_HAVE_OPENMP
/* OpenMP's default team is every CPU this process may run on.  Ranks that mpirun does not bind
 * (it binds none under --oversubscribe, and some sites switch binding off) then each start a team
 * of all the node's cores: 4 ranks on 2 cores ran 8 spinning threads, and the QAOA example took
 * over 400 s instead of 0.7 s.  Unless the user set OMP_NUM_THREADS, the ranks of one node share
 * its cores: a team of min(CPUs this rank may use, CPUs online / ranks on the node), at least 1.
 * Where the user did set it above 1 and ranks x threads exceed the node's CPUs, rank 0 says so once. */
static void share_cores_among_local_ranks(hs_ctx *ctx)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 1) online = 1;
    int mine = (int)online;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) mine = CPU_COUNT(&set);
#endif
    const char *env = getenv("OMP_NUM_THREADS");
    if (env && *env) {
        int want = omp_get_max_threads();
        /* one thread per rank leaves nothing to shrink: there the ranks outnumber the CPUs, as the
         * user asked (mpirun --oversubscribe), and the advice read "OMP_NUM_THREADS=1 would not" */
        if (ctx->local_size > 1 && want > 1 && (long)want * ctx->local_size > online && ctx->local_rank == 0)
            fprintf(stderr, "hpcsim: warning: %d ranks x OMP_NUM_THREADS=%d threads on a node of %ld CPUs: the threads "
                            "will wait on one another (OMP_NUM_THREADS=%ld would not)\n",
                    ctx->local_size, want, online, online / ctx->local_size > 0 ? online / ctx->local_size : 1);
        return;
    }
    if (ctx->local_size <= 1) return;
    long share = online / ctx->local_size;
    int team = (int)(share < mine ? share : mine);
    if (team < 1) team = 1;
    if (team < omp_get_max_threads()) omp_set_num_threads(team);
}
#endif

int hs_ctx_create(int *argc, char ***argv, const char *device, int allow_shared_gpu, hs_ctx **out)
{
    hs_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    *out = ctx;
    int init = 0;
    MPI_Initialized(&init);
    if (!init) {
        int provided = 0;
        ctx->mpi_singleton = singleton_mpi_defaults();
        double t0 = hs_wtime();
        HS_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
        ctx->t_mpi_init = hs_wtime() - t0;
        ctx->owns_mpi = 1;
        const char *iso = getenv("OMPI_MCA_ess_singleton_isolated");
        g_isolated_singleton = ctx->mpi_singleton && iso && !strcmp(iso, "1");
        hs_error_set_finalizer(finalize_mpi);
    }
    start_counting_devices();
    HS_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &ctx->comm));
    HS_MPI_CHECK(MPI_Comm_rank(ctx->comm, &ctx->rank));
    HS_MPI_CHECK(MPI_Comm_size(ctx->comm, &ctx->size));
    hs_error_set_rank(ctx->rank, ctx->size);
    HS_MPI_CHECK(MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &ctx->node_comm));
    HS_MPI_CHECK(MPI_Comm_rank(ctx->node_comm, &ctx->local_rank));
    HS_MPI_CHECK(MPI_Comm_size(ctx->node_comm, &ctx->local_size));
    ctx->deterministic = 1;
#if HS_HAVE_OPENMP
    share_cores_among_local_ranks(ctx);
    ctx->nthreads = omp_get_max_threads();
#else
    ctx->nthreads = 1;
#endif
    ctx->gpu = -1;
    return hs_ctx_set_device(ctx, device, allow_shared_gpu);
}

int hs_ctx_create_group(hs_ctx *ctx, int color, hs_ctx **group)
{
    *group = NULL;
    hs_ctx *g = malloc(sizeof *g);
    if (!g) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    *g = *ctx;
    g->owns_mpi = 0;
    g->node_comm = MPI_COMM_NULL;
    int rc = MPI_Comm_split(ctx->comm, color, ctx->rank, &g->comm);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(g->comm, &g->rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(g->comm, &g->size);
    if (rc != MPI_SUCCESS) {
        free(g);
        return HS_FAIL(HS_ERR_RUNTIME, "MPI_Comm_split failed (%d)", rc);
    }
    *group = g;
    return HS_OK;
}

void hs_ctx_destroy_group(hs_ctx *group)
{
    if (!group) return;
    if (group->comm != MPI_COMM_NULL) MPI_Comm_free(&group->comm);
    free(group);
}

void hs_ctx_destroy(hs_ctx *ctx)
{
    if (!ctx) return;
    join_counting_devices();
#if HS_HAVE_CUDA
    hs_ctx_destroy_cuda(ctx->cuda);
    if (ctx->cuda) hs_timeline("device context released");
#endif
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) {
        if (ctx->node_comm != MPI_COMM_NULL) MPI_Comm_free(&ctx->node_comm);
        if (ctx->comm != MPI_COMM_NULL) MPI_Comm_free(&ctx->comm);
        if (ctx->owns_mpi) MPI_Finalize();
    }
    free(ctx);
}

int hs_ctx_sync(hs_ctx *ctx) { return HS_DISPATCH(ctx, HS_OK, hs_ctx_sync_cuda(ctx->cuda)); }

int hs_ctx_report(hs_ctx *ctx, FILE *out)
{
    /* Each rank describes itself in a fixed-size record; rank 0 prints them in order. */
    enum { REC = 320 };
    char mine[REC];
#if HS_HAVE_CUDA
    if (ctx->gpu >= 0) {
        char name[128];
        size_t tot = 0, fr = 0;
        int ma = 0, mi = 0;
        HS_CHECK(hs_ctx_describe_cuda(ctx->gpu, name, sizeof name, &tot, &fr, &ma, &mi));
        /* the host's threads too: they pack halos, write output and run the CPU-only stages */
        snprintf(mine, REC, "rank %d (node-local %d/%d): GPU %d %s, sm_%d%d, %.1f GiB (%.1f GiB free), %d OpenMP thread(s)",
                 ctx->rank, ctx->local_rank, ctx->local_size, ctx->gpu, name, ma, mi,
                 tot / 1073741824.0, fr / 1073741824.0, ctx->nthreads);
    } else
#endif
        snprintf(mine, REC, "rank %d (node-local %d/%d): CPU, %d OpenMP thread(s)", ctx->rank,
                 ctx->local_rank, ctx->local_size, ctx->nthreads);
    char *all = ctx->rank == 0 ? malloc((size_t)REC * ctx->size) : NULL;
    HS_MPI_CHECK(MPI_Gather(mine, REC, MPI_CHAR, all, REC, MPI_CHAR, 0, ctx->comm));
    if (ctx->rank == 0) {
        fprintf(out, "hpcsim %s (git %s)\n", hs_version(), hs_git_hash());
        fprintf(out, "features: %s\n", HS_FEATURES);
        fprintf(out, "MPI ranks: %d\n", ctx->size);
        if (ctx->owns_mpi) {
            const char *hw = getenv("HWLOC_COMPONENTS");
            fprintf(out, "MPI start-up: %.3f s", ctx->t_mpi_init);
            if (ctx->mpi_singleton) /* what a user who set any of these gets instead: their own values */
                fprintf(out, " (a singleton: in-node transports, HWLOC_COMPONENTS=%s; HS_MPI_SINGLETON_DEFAULTS=0 "
                        "keeps Open MPI's own)", hw ? hw : "");
            fputc('\n', out);
        }
        fprintf(out, "backend: %s\n", hs_device_name(ctx->device));
#if HS_HAVE_CUDA
        int n = hs_cuda_device_count();
        fprintf(out, "GPUs visible to rank 0: %d\n", n);
        for (int i = 0; i < n; i++) {
            char name[128];
            size_t tot = 0, fr = 0;
            int ma = 0, mi = 0;
            if (hs_ctx_describe_cuda(i, name, sizeof name, &tot, &fr, &ma, &mi) == HS_OK)
                fprintf(out, "  GPU %d: %s, compute capability %d.%d, %.1f GiB\n", i, name, ma, mi, tot / 1073741824.0);
        }
#else
        fprintf(out, "GPUs: none (built without CUDA)\n");
#endif
        for (int r = 0; r < ctx->size; r++) fprintf(out, "  %s\n", all + (size_t)r * REC);
        free(all);
    }
    return HS_OK;
}
