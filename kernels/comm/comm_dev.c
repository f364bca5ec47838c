/* hs_comm: collectives on device buffers, through NCCL or through pinned host buffers and MPI. */
#include <stdlib.h>
#include <string.h>

#include "kernels/comm/comm.h"
#include "kernels/comm/comm_impl.h"
#include "kernels/context.h"
#include "kernels/memory.h"
#include "kernels/dispatch.h"

struct hs_comm {
    hs_ctx *ctx;
    MPI_Comm mpi;
    int rank, size;
    int on_gpu;       /* buffers are device memory */
    void *nccl;       /* NCCL communicator, or NULL: host staging */
    void *stage[2];   /* pinned host buffers (host path on the GPU), grown on demand */
    size_t stage_bytes[2];
    /* non-blocking all-reduces: requests are kept and reused (their events with them), so a
     * training step starts and waits its buckets without allocating */
    hs_comm_request *all, *idle;  /* every request made (linked by `made`); those not in flight */
    void *nstream, *queued;       /* NCCL: the stream the reductions run on; the event it waits on */
};

struct hs_comm_request {
    hs_comm *comm;
    MPI_Request mpi;              /* mpi transport */
    void *done;                   /* nccl: recorded on nstream after the reduction */
    hs_comm_request *made, *next;
};

int hs_gpu_comm_parse(const char *name)
{
    if (!name) return -1;
    if (!strcmp(name, "auto")) return HS_GPU_COMM_AUTO;
    if (!strcmp(name, "nccl")) return HS_GPU_COMM_NCCL;
    if (!strcmp(name, "host")) return HS_GPU_COMM_HOST;
    return -1;
}

const char *hs_gpu_comm_name(hs_gpu_comm mode)
{
    return mode == HS_GPU_COMM_NCCL ? "nccl" : mode == HS_GPU_COMM_HOST ? "host" : "auto";
}

/* NCCL set-up: every rank agrees whether to try, rank 0 makes the id, MPI broadcasts it, every
 * rank joins; any failure anywhere leaves every rank on host staging (or fails everywhere when
 * NCCL was demanded).  Collective. */
static int nccl_setup(hs_comm *c)
{
    int mode = c->ctx->gpu_comm;
#if HS_HAVE_CUDA && HS_HAVE_NCCL
    /* NCCL wants one GPU per rank; ranks sharing a GPU (tests) stage through the host */
    int own_gpu = c->ctx->local_size <= hs_cuda_device_count(), every = own_gpu;
    HS_CHECK(hs_host_allreduce(c->mpi, HS_I32, HS_COMM_MIN, &every, 1));
    if (mode == HS_GPU_COMM_HOST || (mode == HS_GPU_COMM_AUTO && c->size == 1)) return HS_OK; /* one rank: copies */
    if (!every) {
        if (mode == HS_GPU_COMM_NCCL)
            return hs_input_error("run", 0, "gpu_comm", "nccl needs a GPU of its own for every rank (%d ranks share %d "
                                  "GPUs on a node)", c->ctx->local_size, hs_cuda_device_count());
        return HS_OK;
    }
    char id[HS_NCCL_ID_BYTES] = {0};
    int ok = c->rank != 0 || hs_comm_id_nccl(id) == HS_OK, all = ok;
    HS_CHECK(hs_host_bcast(c->mpi, HS_U32, id, HS_NCCL_ID_BYTES / 4, 0));
    HS_CHECK(hs_host_allreduce(c->mpi, HS_I32, HS_COMM_MIN, &all, 1));
    if (all) ok = hs_comm_init_nccl(c->ctx->cuda, id, c->rank, c->size, &c->nccl) == HS_OK;
    all = ok;
    HS_CHECK(hs_host_allreduce(c->mpi, HS_I32, HS_COMM_MIN, &all, 1));
    if (!all) {
        if (mode == HS_GPU_COMM_NCCL)
            return ok ? HS_FAIL(HS_ERR_RUNTIME, "NCCL set-up failed on another rank")
                      : hs_error_trace(HS_ERR_RUNTIME, __FILE__, __LINE__, "NCCL set-up (run.gpu_comm = nccl)");
        hs_error_clear(); /* auto: host staging instead */
        hs_comm_free_nccl(c->nccl);
        c->nccl = NULL;
    }
    return HS_OK;
#else
    if (mode == HS_GPU_COMM_NCCL)
        return hs_input_error("run", 0, "gpu_comm", "nccl: this build has no NCCL (see hpcsim info)");
    return HS_OK;
#endif
}

int hs_comm_create(hs_ctx *ctx, hs_comm **out)
{
    if (!ctx || !out) return hs_input_error("hs_comm_create", 0, NULL, "context or result is NULL");
    hs_comm *c = calloc(1, sizeof *c);
    if (!c) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    c->ctx = ctx;
    c->mpi = ctx->comm;
    c->rank = ctx->rank;
    c->size = ctx->size;
    c->on_gpu = HS_ON_GPU(ctx);
    int rc = c->on_gpu ? nccl_setup(c) : HS_OK;
    if (rc != HS_OK) {
        hs_comm_destroy(c);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_comm_create");
    }
    *out = c;
    return HS_OK;
}

void hs_comm_destroy(hs_comm *c)
{
    if (!c) return;
    if (c->nstream) hs_stream_sync(c->ctx, c->nstream); /* no reduction still reads its buffer */
    for (hs_comm_request *r = c->all, *n; r; r = n) {
        n = r->made;
        if (r->done) hs_event_destroy(c->ctx, r->done);
        free(r);
    }
    if (c->queued) hs_event_destroy(c->ctx, c->queued);
    if (c->nstream) hs_stream_destroy(c->ctx, c->nstream);
#if HS_HAVE_CUDA && HS_HAVE_NCCL
    hs_comm_free_nccl(c->nccl);
#endif
    for (int i = 0; i < 2; i++) hs_host_free_pinned(c->ctx, c->stage[i]);
    free(c);
}

int hs_comm_uses_nccl(const hs_comm *c) { return c && c->nccl != NULL; }

const char *hs_comm_transport(const hs_comm *c) { return c->nccl ? "nccl" : c->on_gpu ? "host-staged" : "mpi"; }

/* Pinned staging buffer i of at least `bytes`. */
static int stage(hs_comm *c, int i, size_t bytes, void **buf)
{
    if (bytes > c->stage_bytes[i]) {
        hs_host_free_pinned(c->ctx, c->stage[i]);
        c->stage[i] = NULL;
        c->stage_bytes[i] = 0;
        HS_CHECK(hs_host_alloc_pinned(c->ctx, bytes, &c->stage[i]));
        c->stage_bytes[i] = bytes;
    }
    *buf = c->stage[i];
    return HS_OK;
}

static int d2h(hs_comm *c, void *h, const void *d, size_t bytes)
{
    return bytes ? hs_mem_copy(c->ctx, h, d, bytes, HS_COPY_D2H) : HS_OK;
}

static int h2d(hs_comm *c, void *d, const void *h, size_t bytes)
{
    return bytes ? hs_mem_copy(c->ctx, d, h, bytes, HS_COPY_H2D) : HS_OK;
}

static int check_dtype(hs_dtype t, const char *fn)
{
    if (hs_dtype_size(t) == 0) return hs_input_error(fn, 0, "dtype", "unknown element type %d", (int)t);
    return HS_OK;
}

int hs_comm_allreduce(hs_comm *c, hs_dtype t, hs_comm_op op, void *buf, size_t count)
{
    HS_CHECK(check_dtype(t, "hs_comm_allreduce"));
    if (!c->on_gpu) return hs_host_allreduce(c->mpi, t, op, buf, count);
    if ((t == HS_C128 || t == HS_C64) && op != HS_COMM_SUM)
        return hs_input_error("hs_comm_allreduce", 0, "op", "min and max are not defined for %s", hs_dtype_name(t));
#if HS_HAVE_CUDA && HS_HAVE_NCCL
    if (c->nccl) return hs_comm_allreduce_nccl(c->ctx->cuda, c->nccl, t, op, buf, count, NULL);
#endif
    size_t bytes = count * hs_dtype_size(t);
    void *h = NULL;
    HS_CHECK(stage(c, 0, bytes, &h));
    HS_CHECK(d2h(c, h, buf, bytes));
    HS_CHECK(hs_host_allreduce(c->mpi, t, op, h, count));
    return h2d(c, buf, h, bytes);
}

/* An idle request (made, with its event on the NCCL path, the first time more are in flight than
 * ever before). */
static int request(hs_comm *c, hs_comm_request **out)
{
    hs_comm_request *r = c->idle;
    if (r) {
        c->idle = r->next;
    } else {
        r = calloc(1, sizeof *r);
        if (!r) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        r->comm = c;
        r->made = c->all, c->all = r;
        if (c->nccl) HS_CHECK(hs_event_create(c->ctx, &r->done));
    }
    r->mpi = MPI_REQUEST_NULL;
    r->next = NULL;
    *out = r;
    return HS_OK;
}

static void release(hs_comm_request *r)
{
    r->next = r->comm->idle, r->comm->idle = r;
}

int hs_comm_allreduce_begin(hs_comm *c, hs_dtype t, hs_comm_op op, void *buf, size_t count, hs_comm_request **req)
{
    *req = NULL;
    HS_CHECK(check_dtype(t, "hs_comm_allreduce_begin"));
    if ((t == HS_C128 || t == HS_C64) && op != HS_COMM_SUM)
        return hs_input_error("hs_comm_allreduce_begin", 0, "op", "min and max are not defined for %s", hs_dtype_name(t));
    if (c->size == 1 || count == 0) return HS_OK; /* the sum over one rank is buf itself */
    if (c->on_gpu && !c->nccl) return hs_comm_allreduce(c, t, op, buf, count); /* host-staged: complete here */
    hs_comm_request *r = NULL;
    HS_CHECK(request(c, &r));
    int rc;
    if (!c->on_gpu) {
        rc = hs_host_iallreduce(c->mpi, t, op, buf, buf, count, &r->mpi);
    } else {
#if HS_HAVE_CUDA && HS_HAVE_NCCL
        /* the reduction stream waits for what the context's stream has queued so far (the
         * gradient's last writer), not for what comes after: that is the overlap */
        rc = c->nstream ? HS_OK : hs_stream_create(c->ctx, &c->nstream);
        if (rc == HS_OK && !c->queued) rc = hs_event_create(c->ctx, &c->queued);
        if (rc == HS_OK) rc = hs_event_record(c->ctx, c->queued, NULL);
        if (rc == HS_OK) rc = hs_stream_wait_event(c->ctx, c->nstream, c->queued);
        if (rc == HS_OK) rc = hs_comm_allreduce_nccl(c->ctx->cuda, c->nccl, t, op, buf, count, c->nstream);
        if (rc == HS_OK) rc = hs_event_record(c->ctx, r->done, c->nstream);
#else
        rc = HS_FAIL(HS_ERR_RUNTIME, "NCCL transport without NCCL in the build");
#endif
    }
    if (rc != HS_OK) {
        release(r);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_comm_allreduce_begin");
    }
    *req = r;
    return HS_OK;
}

int hs_comm_wait(hs_comm_request **req)
{
    hs_comm_request *r = req ? *req : NULL;
    if (!r) return HS_OK;
    *req = NULL;
    hs_comm *c = r->comm;
    /* the context's stream, not the host, waits on the NCCL path: the optimiser queued after this
     * runs once the sum has arrived, and the host goes on queueing */
    int rc = r->done ? hs_stream_wait_event(c->ctx, NULL, r->done) : hs_host_wait(&r->mpi);
    release(r);
    if (rc != HS_OK) return hs_error_trace(rc, __FILE__, __LINE__, "hs_comm_wait");
    return HS_OK;
}

int hs_comm_allgather(hs_comm *c, hs_dtype t, const void *send, void *recv, size_t count)
{
    HS_CHECK(check_dtype(t, "hs_comm_allgather"));
    if (!c->on_gpu) return hs_host_allgather(c->mpi, t, send, recv, count);
    size_t block = count * hs_dtype_size(t);
#if HS_HAVE_CUDA && HS_HAVE_NCCL
    if (c->nccl) return hs_comm_allgather_nccl(c->ctx->cuda, c->nccl, t, send, recv, count);
#endif
    void *h = NULL;
    HS_CHECK(stage(c, 0, block * (size_t)c->size, &h));
    char *mine = (char *)h + (size_t)c->rank * block;
    HS_CHECK(d2h(c, mine, send, block));
    HS_CHECK(hs_host_allgather(c->mpi, t, mine, h, count));
    return h2d(c, recv, h, block * (size_t)c->size);
}

int hs_comm_alltoall(hs_comm *c, hs_dtype t, const void *send, void *recv, size_t count)
{
    HS_CHECK(check_dtype(t, "hs_comm_alltoall"));
    if (count > 0 && send == recv) return hs_input_error("hs_comm_alltoall", 0, NULL, "send and recv must be distinct buffers");
    if (count == 0) return HS_OK; /* nothing moves (and empty staging buffers are both NULL) */
    if (!c->on_gpu) return hs_host_alltoall(c->mpi, t, send, recv, count);
#if HS_HAVE_CUDA && HS_HAVE_NCCL
    if (c->nccl) return hs_comm_alltoall_nccl(c->ctx->cuda, c->nccl, t, send, recv, count, c->rank, c->size);
#endif
    size_t bytes = count * hs_dtype_size(t) * (size_t)c->size;
    void *hs = NULL, *hr = NULL;
    HS_CHECK(stage(c, 0, bytes, &hs));
    HS_CHECK(stage(c, 1, bytes, &hr));
    HS_CHECK(d2h(c, hs, send, bytes));
    HS_CHECK(hs_host_alltoall(c->mpi, t, hs, hr, count));
    return h2d(c, recv, hr, bytes);
}

int hs_comm_bcast(hs_comm *c, hs_dtype t, void *buf, size_t count, int root)
{
    HS_CHECK(check_dtype(t, "hs_comm_bcast"));
    if (root < 0 || root >= c->size)
        return hs_input_error("hs_comm_bcast", 0, "root", "root %d is not a rank of %d", root, c->size);
    if (!c->on_gpu) return hs_host_bcast(c->mpi, t, buf, count, root);
#if HS_HAVE_CUDA && HS_HAVE_NCCL
    if (c->nccl) return hs_comm_bcast_nccl(c->ctx->cuda, c->nccl, t, buf, count, root);
#endif
    size_t bytes = count * hs_dtype_size(t);
    void *h = NULL;
    HS_CHECK(stage(c, 0, bytes, &h));
    if (c->rank == root) HS_CHECK(d2h(c, h, buf, bytes));
    HS_CHECK(hs_host_bcast(c->mpi, t, h, count, root));
    return c->rank == root ? HS_OK : h2d(c, buf, h, bytes);
}

int hs_comm_sendrecv(hs_comm *c, hs_dtype t, const void *send, void *recv, size_t count, int peer)
{
    HS_CHECK(check_dtype(t, "hs_comm_sendrecv"));
    if (count > 0 && send == recv) return hs_input_error("hs_comm_sendrecv", 0, NULL, "send and recv must be distinct buffers");
    if (peer < 0 || peer >= c->size)
        return hs_input_error("hs_comm_sendrecv", 0, "peer", "peer %d is not a rank of %d", peer, c->size);
    if (!c->on_gpu) return hs_host_sendrecv(c->mpi, t, send, recv, count, peer);
#if HS_HAVE_CUDA && HS_HAVE_NCCL
    if (c->nccl) return hs_comm_sendrecv_nccl(c->ctx->cuda, c->nccl, t, send, recv, count, peer);
#endif
    size_t bytes = count * hs_dtype_size(t);
    void *hs = NULL, *hr = NULL;
    HS_CHECK(stage(c, 0, bytes, &hs));
    HS_CHECK(stage(c, 1, bytes, &hr));
    HS_CHECK(d2h(c, hs, send, bytes));
    HS_CHECK(hs_host_sendrecv(c->mpi, t, hs, hr, count, peer));
    return h2d(c, recv, hr, bytes);
}
