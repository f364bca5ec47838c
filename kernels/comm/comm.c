/* MPI status translation and the host collectives of the communication family. */
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include "kernels/comm/comm.h"

int hs_mpi_fail(int status, const char *call, const char *file, int line)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(status, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", status);
    return hs_error_raise(HS_ERR_RUNTIME, file, line, "MPI call %s failed: %s", call, text);
}

int hs_allreduce_sum(MPI_Comm comm, double *v, int n)
{ HS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, comm)); return HS_OK; }
int hs_allreduce_max(MPI_Comm comm, double *v, int n)
{ HS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, comm)); return HS_OK; }
int hs_allreduce_min(MPI_Comm comm, double *v, int n)
{ HS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MIN, comm)); return HS_OK; }
int hs_allreduce_int_max(MPI_Comm comm, int *v, int n)
{ HS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_MAX, comm)); return HS_OK; }

/* ---------------------------------------------------------------- host collectives */

MPI_Datatype hs_mpi_dtype(hs_dtype t)
{
    switch (t) {
    case HS_F32: return MPI_FLOAT;
    case HS_I32: return MPI_INT;
    case HS_I64: return MPI_INT64_T;
    case HS_U32: return MPI_UNSIGNED;
    case HS_U64: return MPI_UINT64_T;
    case HS_C128: return MPI_C_DOUBLE_COMPLEX;
    case HS_C64: return MPI_C_FLOAT_COMPLEX;
    case HS_F64:
    default: return MPI_DOUBLE;
    }
}

/* Element count as MPI's int, and the type checks every collective shares. */
static int mpi_count(hs_dtype t, size_t count, const char *fn, int *n)
{
    if (hs_dtype_size(t) == 0) return hs_input_error(fn, 0, "dtype", "unknown element type %d", (int)t);
    if (count > (size_t)INT_MAX)
        return hs_input_error(fn, 0, "count", "%zu elements exceed MPI's int count (%d)", count, INT_MAX);
    *n = (int)count;
    return HS_OK;
}

static int is_complex(hs_dtype t) { return t == HS_C128 || t == HS_C64; }

int hs_host_allreduce(MPI_Comm comm, hs_dtype t, hs_comm_op op, void *buf, size_t count)
{
    int n = 0;
    HS_CHECK(mpi_count(t, count, "hs_host_allreduce", &n));
    if (is_complex(t) && op != HS_COMM_SUM)
        return hs_input_error("hs_host_allreduce", 0, "op", "min and max are not defined for %s", hs_dtype_name(t));
    MPI_Op mop = op == HS_COMM_MIN ? MPI_MIN : op == HS_COMM_MAX ? MPI_MAX : MPI_SUM;
    if (n == 0) return HS_OK;
    HS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, buf, n, hs_mpi_dtype(t), mop, comm));
    return HS_OK;
}

int hs_host_allgather(MPI_Comm comm, hs_dtype t, const void *send, void *recv, size_t count)
{
    int n = 0, rank = 0;
    HS_CHECK(mpi_count(t, count, "hs_host_allgather", &n));
    HS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    if (n == 0) return HS_OK;
    const void *s = send == (const char *)recv + (size_t)rank * count * hs_dtype_size(t) ? MPI_IN_PLACE : send;
    HS_MPI_CHECK(MPI_Allgather(s, n, hs_mpi_dtype(t), recv, n, hs_mpi_dtype(t), comm));
    return HS_OK;
}

int hs_host_alltoall(MPI_Comm comm, hs_dtype t, const void *send, void *recv, size_t count)
{
    int n = 0;
    HS_CHECK(mpi_count(t, count, "hs_host_alltoall", &n));
    if (count > 0 && send == recv) return hs_input_error("hs_host_alltoall", 0, NULL, "send and recv must be distinct buffers");
    if (n == 0) return HS_OK;
    HS_MPI_CHECK(MPI_Alltoall(send, n, hs_mpi_dtype(t), recv, n, hs_mpi_dtype(t), comm));
    return HS_OK;
}

int hs_host_bcast(MPI_Comm comm, hs_dtype t, void *buf, size_t count, int root)
{
    int n = 0;
    HS_CHECK(mpi_count(t, count, "hs_host_bcast", &n));
    if (n == 0) return HS_OK;
    HS_MPI_CHECK(MPI_Bcast(buf, n, hs_mpi_dtype(t), root, comm));
    return HS_OK;
}

int hs_host_sendrecv(MPI_Comm comm, hs_dtype t, const void *send, void *recv, size_t count, int peer)
{
    int n = 0;
    HS_CHECK(mpi_count(t, count, "hs_host_sendrecv", &n));
    if (count > 0 && send == recv) return hs_input_error("hs_host_sendrecv", 0, NULL, "send and recv must be distinct buffers");
    if (n == 0) return HS_OK;
    MPI_Request req[2];
    HS_MPI_CHECK(MPI_Irecv(recv, n, hs_mpi_dtype(t), peer, 71, comm, &req[0]));
    HS_MPI_CHECK(MPI_Isend(send, n, hs_mpi_dtype(t), peer, 71, comm, &req[1]));
    HS_MPI_CHECK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    return HS_OK;
}

int hs_host_bcast_bytes(MPI_Comm comm, void *buf, size_t bytes, int root)
{
    if (bytes > (size_t)INT_MAX)
        return hs_input_error("hs_host_bcast_bytes", 0, "bytes", "%zu bytes exceed MPI's int count (%d)", bytes, INT_MAX);
    if (bytes == 0) return HS_OK;
    HS_MPI_CHECK(MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, comm));
    return HS_OK;
}

int hs_host_barrier(MPI_Comm comm)
{
    HS_MPI_CHECK(MPI_Barrier(comm));
    return HS_OK;
}

struct hs_node_shared {
    void *mem;
    int shared; /* an MPI window (else mem is malloc's) */
#if HS_HAVE_MPI
    MPI_Comm comm;
    MPI_Win win;
#endif
};

int hs_node_shared_alloc(MPI_Comm node_comm, size_t bytes, hs_node_shared **out, void **ptr, int *writer)
{
    *out = NULL, *ptr = NULL, *writer = 1;
    hs_node_shared *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    int size = 1, rank = 0;
#if HS_HAVE_MPI
    if (node_comm != MPI_COMM_NULL) {
        HS_MPI_CHECK(MPI_Comm_size(node_comm, &size));
        HS_MPI_CHECK(MPI_Comm_rank(node_comm, &rank));
    }
    if (size > 1) {
        /* the whole block on the node's first rank, nothing on the others: they address its memory
         * (8 bytes more here and below, so that a block of 0 bytes is still an address) */
        void *base = NULL;
        MPI_Aint got = 0;
        int unit = 1, rc = MPI_Win_allocate_shared(rank == 0 ? (MPI_Aint)bytes + 8 : 0, 1, MPI_INFO_NULL, node_comm, &base, &s->win);
        if (rc == MPI_SUCCESS) rc = MPI_Win_shared_query(s->win, 0, &got, &unit, &s->mem);
        if (rc == MPI_SUCCESS) rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
        if (rc != MPI_SUCCESS) {
            free(s);
            return HS_FAIL(HS_ERR_RUNTIME, "MPI_Win_allocate_shared of %zu bytes on the node's ranks failed (%d)", bytes, rc);
        }
        s->shared = 1, s->comm = node_comm;
        *writer = rank == 0;
    }
#else
    (void)node_comm, (void)rank;
#endif
    if (!s->shared && !(s->mem = malloc(bytes + 8))) {
        free(s);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory (%zu bytes)", bytes);
    }
    *out = s, *ptr = s->mem;
    return HS_OK;
}

int hs_node_shared_publish(hs_node_shared *s)
{
#if HS_HAVE_MPI
    if (s && s->shared) {
        /* the writer's stores complete before the barrier, the readers' loads start after it */
        HS_MPI_CHECK(MPI_Win_sync(s->win));
        HS_MPI_CHECK(MPI_Barrier(s->comm));
        HS_MPI_CHECK(MPI_Win_sync(s->win));
    }
#else
    (void)s;
#endif
    return HS_OK;
}

void hs_node_shared_free(hs_node_shared *s)
{
    if (!s) return;
#if HS_HAVE_MPI
    if (s->shared) {
        MPI_Win_unlock_all(s->win);
        MPI_Win_free(&s->win);
    } else
#endif
        free(s->mem);
    free(s);
}

int hs_host_iallreduce(MPI_Comm comm, hs_dtype t, hs_comm_op op, const void *send, void *recv, size_t count,
                       MPI_Request *req)
{
    int n = 0;
    *req = MPI_REQUEST_NULL;
    HS_CHECK(mpi_count(t, count, "hs_host_iallreduce", &n));
    if (is_complex(t) && op != HS_COMM_SUM)
        return hs_input_error("hs_host_iallreduce", 0, "op", "min and max are not defined for %s", hs_dtype_name(t));
    MPI_Op mop = op == HS_COMM_MIN ? MPI_MIN : op == HS_COMM_MAX ? MPI_MAX : MPI_SUM;
    if (n == 0) return HS_OK;
    /* MPI forbids aliased send and receive buffers: the in-place form says so with MPI_IN_PLACE */
    HS_MPI_CHECK(MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, n, hs_mpi_dtype(t), mop, comm, req));
    return HS_OK;
}

int hs_host_wait(MPI_Request *req)
{
    HS_MPI_CHECK(MPI_Wait(req, MPI_STATUS_IGNORE));
    return HS_OK;
}
