/* NCCL backend of the communication family (kernels/comm/comm_nccl.cu, built with HS_HAVE_NCCL). */
#ifndef HS_COMM_IMPL_H
#define HS_COMM_IMPL_H

#include <stddef.h>

#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* Bytes of an NCCL unique id as carried over MPI (at least sizeof(ncclUniqueId)). */
#define HS_NCCL_ID_BYTES 128

/* Make a unique id on one rank (the caller broadcasts it). */
int hs_comm_id_nccl(void *id);
/* Join the communicator of `size` ranks named by id as `rank`, on the context's GPU. */
int hs_comm_init_nccl(struct hs_cuda_ctx *cu, const void *id, int rank, int size, void **nccl);
void hs_comm_free_nccl(void *nccl);
/* Collectives on the context's stream; op: hs_comm_op; counts in elements of t.  The all-reduce
 * goes on `stream` (NULL: the context's; the non-blocking form passes the hs_comm's own). */
int hs_comm_allreduce_nccl(struct hs_cuda_ctx *cu, void *nccl, hs_dtype t, int op, void *buf, size_t count, void *stream);
int hs_comm_allgather_nccl(struct hs_cuda_ctx *cu, void *nccl, hs_dtype t, const void *send, void *recv, size_t count);
int hs_comm_alltoall_nccl(struct hs_cuda_ctx *cu, void *nccl, hs_dtype t, const void *send, void *recv, size_t count,
                     int rank, int size);
int hs_comm_bcast_nccl(struct hs_cuda_ctx *cu, void *nccl, hs_dtype t, void *buf, size_t count, int root);
int hs_comm_sendrecv_nccl(struct hs_cuda_ctx *cu, void *nccl, hs_dtype t, const void *send, void *recv, size_t count,
                     int peer);

#ifdef __cplusplus
}
#endif
#endif
