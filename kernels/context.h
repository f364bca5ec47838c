/* The execution context every kernel call receives: MPI, the chosen backend and its GPU handles. */
#ifndef HS_CONTEXT_H
#define HS_CONTEXT_H

#include <stdio.h>

#include "kernels/comm/comm.h"
#include "kernels/types.h"

struct hs_cuda_ctx; /* CUDA stream and library handles; defined in kernels/cuda_util.h */

typedef struct hs_ctx {
    hs_device device;        /* backend for objects created with this context */
    MPI_Comm comm;           /* private duplicate of MPI_COMM_WORLD */
    int rank, size;          /* in comm */
    MPI_Comm node_comm;      /* ranks sharing this node */
    int local_rank, local_size;
    int gpu;                 /* CUDA device ordinal used by this rank, -1 on CPU */
    int deterministic;       /* 1: reductions bitwise reproducible run to run (default 1) */
    int gpu_comm;            /* hs_gpu_comm (kernels/comm/comm.h): how hs_comm moves device data (default auto) */
    int nthreads;            /* OpenMP threads (1 without OpenMP) */
    int owns_mpi;            /* this context called MPI_Init and will finalize */
    int mpi_singleton;       /* 1: MPI started as a singleton with hpcsim's start-up defaults (context.c) */
    struct hs_cuda_ctx *cuda;
    double t_mpi_init;       /* seconds in MPI_Init (0 when MPI was already up) */
    double t_device_init;    /* seconds the last hs_ctx_set_device took to start a GPU (the wait for the driver, context, stream); 0 on the CPU */
} hs_ctx;

/* Initialise MPI (if nobody has), and choose the backend: device is "auto" (CUDA when a GPU is
 * usable, else CPU), "cpu" or "cuda" (an error when no GPU can be used).  Each rank takes the GPU
 * of its node-local rank; more ranks on a node than GPUs is refused unless allow_shared_gpu.
 * Collective over MPI_COMM_WORLD. */
int hs_ctx_create(int *argc, char ***argv, const char *device, int allow_shared_gpu, hs_ctx **ctx);

/* Switch the backend of an existing context ("cpu" or "cuda"); used by tests and `hpcsim info`. */
int hs_ctx_set_device(hs_ctx *ctx, const char *device, int allow_shared_gpu);

/* Release handles and, if this context initialised MPI, finalize it.  Collective. */
void hs_ctx_destroy(hs_ctx *ctx);

/* A context over the ranks of ctx with the same `color` (ranks ordered as in ctx), sharing ctx's
 * device, stream and handles: work split between groups of ranks (the seismic solver's shot
 * groups).  Collective over ctx; hs_ctx_destroy_group releases it (not ctx's handles). */
int hs_ctx_create_group(hs_ctx *ctx, int color, hs_ctx **group);
void hs_ctx_destroy_group(hs_ctx *group);

/* Wait until all work queued on the context's stream is done (no-op on CPU). */
int hs_ctx_sync(hs_ctx *ctx);

/* Print, on rank 0, features, MPI size and every rank's GPU (name, memory).  Collective. */
int hs_ctx_report(hs_ctx *ctx, FILE *out);

/* Name of the backend ("cpu" / "cuda"). */
const char *hs_device_name(hs_device d);

/* Number of CUDA devices usable by this process (0 without CUDA or without a driver).  The first
 * call waits for the driver's initialisation, which hs_ctx_create starts in a thread (after
 * MPI_Init): a program that calls setenv, putenv or unsetenv after hs_ctx_create and before its
 * device is chosen calls this first (glibc's getenv, which the driver's initialisation calls, is
 * not safe against them). */
int hs_cuda_device_count(void);

#endif
