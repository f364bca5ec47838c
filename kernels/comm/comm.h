/* Communication family: MPI (or its single-rank stand-in) for host data and control, and hs_comm
 * collectives on device buffers through NCCL or pinned host buffers. */
#ifndef HS_COMM_H
#define HS_COMM_H

#include <stddef.h>

#include "kernels/config.h"
#include "kernels/error.h"
#include "kernels/types.h"
#if HS_HAVE_MPI
#include <mpi.h>
#else
#include "kernels/comm/mpiuni.h"
#endif

/* Turn an MPI status into an hs runtime error naming the call. */
int hs_mpi_fail(int status, const char *call, const char *file, int line);

#define HS_MPI_CHECK(call)                                                            \
    do {                                                                              \
        int hs_mpi_rc_ = (call);                                                      \
        if (hs_mpi_rc_ != MPI_SUCCESS) return hs_mpi_fail(hs_mpi_rc_, #call, __FILE__, __LINE__); \
    } while (0)

/* Global reductions of one or a few host values (collective over comm). */
int hs_allreduce_sum(MPI_Comm comm, double *values, int count);
int hs_allreduce_max(MPI_Comm comm, double *values, int count);
int hs_allreduce_min(MPI_Comm comm, double *values, int count);
int hs_allreduce_int_max(MPI_Comm comm, int *values, int count);

/* ---------------------------------------------------------------- host collectives */

/* The MPI datatype of an element type (complex as its MPI complex type). */
MPI_Datatype hs_mpi_dtype(hs_dtype t);

/* Host-buffer collectives over comm (collective; every rank passes the same t, op, count, root).
 * allreduce is in place on buf; a complex sum is the sum of real and imaginary parts, and min/max
 * are refused for complex types.  allgather: recv holds size * count elements, rank r's block at
 * r * count; send may be recv + rank * count (in place).  alltoall: block r of send goes to rank r,
 * block r of recv comes from rank r (count elements each).  bcast: root's buf to every rank.
 * Counts above INT_MAX elements are an error.  Results are the same on every rank. */
int hs_host_allreduce(MPI_Comm comm, hs_dtype t, hs_comm_op op, void *buf, size_t count);
int hs_host_allgather(MPI_Comm comm, hs_dtype t, const void *send, void *recv, size_t count);
int hs_host_alltoall(MPI_Comm comm, hs_dtype t, const void *send, void *recv, size_t count);
int hs_host_bcast(MPI_Comm comm, hs_dtype t, void *buf, size_t count, int root);
/* Exchange with one peer: send count elements to peer and receive count from it (send != recv). */
int hs_host_sendrecv(MPI_Comm comm, hs_dtype t, const void *send, void *recv, size_t count, int peer);
/* Root's `bytes` raw bytes (a file name, a packed record) to every rank. */
int hs_host_bcast_bytes(MPI_Comm comm, void *buf, size_t bytes, int root);
/* Every rank waits here until all have arrived. */
int hs_host_barrier(MPI_Comm comm);

/* Host memory held once per node: `bytes` that every rank of node_comm (ranks that share memory,
 * hs_ctx's node_comm) sees at *ptr, an MPI-3 shared-memory window (plain memory where node_comm has
 * one rank, is MPI_COMM_NULL, or the build has no MPI).  Only the rank given *writer = 1 (the node's
 * first) writes it; then every rank calls hs_node_shared_publish before reading.  Read-mostly data
 * that every rank needs whole (training frames) then costs a node one copy, not one per rank.
 * Allocation, publication and freeing are collective over node_comm. */
typedef struct hs_node_shared hs_node_shared;
int hs_node_shared_alloc(MPI_Comm node_comm, size_t bytes, hs_node_shared **out, void **ptr, int *writer);
int hs_node_shared_publish(hs_node_shared *s);
void hs_node_shared_free(hs_node_shared *s);
/* The all-reduce above started without waiting, from send into recv, or in place when send == recv
 * (MPI_IN_PLACE); neither buffer may be touched until hs_host_wait returns; *req completes it.
 * Collective like hs_host_allreduce (every rank starts its non-blocking collectives in the same
 * order). */
int hs_host_iallreduce(MPI_Comm comm, hs_dtype t, hs_comm_op op, const void *send, void *recv, size_t count,
                       MPI_Request *req);
/* Complete a request started by hs_host_iallreduce (MPI_REQUEST_NULL: returns at once). */
int hs_host_wait(MPI_Request *req);

/* ---------------------------------------------------------------- device-buffer collectives */

/* How device data moves between ranks (run.gpu_comm): AUTO takes NCCL where the build has it, the
 * backend is CUDA and every rank has a GPU of its own, else pinned host buffers and MPI; NCCL
 * insists on it (an error where it cannot be had); HOST always stages through the host.  On the
 * CPU backend buffers are host memory and MPI is used directly, whatever the mode. */
typedef enum { HS_GPU_COMM_AUTO = 0, HS_GPU_COMM_NCCL = 1, HS_GPU_COMM_HOST = 2 } hs_gpu_comm;

/* Parse "auto" | "nccl" | "host"; -1 for anything else. */
int hs_gpu_comm_parse(const char *name);
const char *hs_gpu_comm_name(hs_gpu_comm mode);

struct hs_ctx;
typedef struct hs_comm hs_comm;

/* A communicator over the ranks of ctx->comm for buffers of ctx's device, with the transport
 * chosen by ctx->gpu_comm: an NCCL communicator (its unique id made on rank 0 and broadcast over
 * MPI), or host staging through pinned buffers that grow on demand.  Every rank ends with the same
 * transport; a failure to set up NCCL in AUTO mode falls back to host staging everywhere.
 * Collective over ctx->comm.  The context's device must not change while the hs_comm lives. */
int hs_comm_create(struct hs_ctx *ctx, hs_comm **comm);
/* Release (collective where NCCL is used). */
void hs_comm_destroy(hs_comm *comm);
/* 1 when device data moves through NCCL. */
int hs_comm_uses_nccl(const hs_comm *comm);
/* "nccl", "host-staged" (CUDA backend through pinned host buffers) or "mpi" (CPU backend). */
const char *hs_comm_transport(const hs_comm *comm);

/* The host collectives above on buffers of the context's device, same contracts, collective over
 * the communicator.  They are ordered after the work already queued on the context's stream and
 * complete before they return (on the host path) or before later work on that stream runs (NCCL).
 * sendrecv needs distinct buffers; the others accept the in-place forms described above.
 * Reductions are deterministic: the same inputs give the same bits on every rank and every run
 * (NCCL's reduction order is fixed for a given communicator size). */
int hs_comm_allreduce(hs_comm *comm, hs_dtype t, hs_comm_op op, void *buf, size_t count);
int hs_comm_allgather(hs_comm *comm, hs_dtype t, const void *send, void *recv, size_t count);
int hs_comm_alltoall(hs_comm *comm, hs_dtype t, const void *send, void *recv, size_t count);
int hs_comm_bcast(hs_comm *comm, hs_dtype t, void *buf, size_t count, int root);
int hs_comm_sendrecv(hs_comm *comm, hs_dtype t, const void *send, void *recv, size_t count, int peer);

/* A started all-reduce of hs_comm_allreduce_begin; owned by the hs_comm until hs_comm_wait. */
typedef struct hs_comm_request hs_comm_request;

/* hs_comm_allreduce in place on buf, started without waiting, so that the caller's work goes on
 * while the data move (data-parallel training: one layer's gradient is summed while the backward
 * pass computes the next).  Collective: every rank starts the same sequence of all-reduces (same
 * t, op, count, in the same order) and waits for each.  buf must not be read or written, by the
 * host or by work on the context's stream, until hs_comm_wait(req) returns.  By transport:
 *   mpi (CPU backend)  MPI_Iallreduce in place; the host returns at once.
 *   nccl               ncclAllReduce on the hs_comm's own stream, which first waits (event) for
 *                      the work already queued on the context's stream; that stream keeps running.
 *   host-staged        the blocking hs_comm_allreduce: complete when begin returns (it needs the
 *                      host to copy and to call MPI, so nothing would overlap).
 *   one rank           nothing to do (*req = NULL).
 * Deterministic like hs_comm_allreduce: the same calls give the same bits on every rank and run.
 * The order of each element's sum may differ from that of a blocking hs_comm_allreduce of another
 * count (MPI and NCCL pick their algorithm by count and by kind of call: seen with Open MPI 4.1 at 3
 * ranks), so a caller whose bits must not depend on overlap makes the same begin calls whether it
 * overlaps or not (ml_surrogate/surrogate_train.c). */
int hs_comm_allreduce_begin(hs_comm *comm, hs_dtype t, hs_comm_op op, void *buf, size_t count, hs_comm_request **req);
/* Complete a started all-reduce and release *req (set to NULL; NULL returns at once): mpi waits on
 * the host; nccl makes the context's stream wait for the reduction, so later work queued there
 * sees the sum, and the host does not wait.  Every started request is waited before
 * hs_comm_destroy. */
int hs_comm_wait(hs_comm_request **req);

#endif
