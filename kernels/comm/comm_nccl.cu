// NCCL transport of the communication family: communicator set-up and device-buffer collectives.
#include "kernels/config.h"
#if HS_HAVE_NCCL
#include <cstring>

#include <nccl.h>

#include "kernels/comm/comm_impl.h"
#include "kernels/cuda_util.h"

#define HS_NCCL_CHECK(call)                                                                          \
    do {                                                                                             \
        ncclResult_t hs_r_ = (call);                                                                 \
        if (hs_r_ != ncclSuccess)                                                                    \
            return hs_error_raise(HS_ERR_RUNTIME, __FILE__, __LINE__, "NCCL call %s failed: %s", #call, \
                                  ncclGetErrorString(hs_r_));                                        \
    } while (0)

static_assert(sizeof(ncclUniqueId) <= HS_NCCL_ID_BYTES, "NCCL id size");

/* NCCL's element type for t and the element multiplier (complex moves as pairs of reals). */
static ncclDataType_t nccl_type(hs_dtype t, size_t *mult)
{
    *mult = 1;
    switch (t) {
    case HS_F32: return ncclFloat32;
    case HS_I32: return ncclInt32;
    case HS_I64: return ncclInt64;
    case HS_U32: return ncclUint32;
    case HS_U64: return ncclUint64;
    case HS_C128: *mult = 2; return ncclFloat64;
    case HS_C64: *mult = 2; return ncclFloat32;
    case HS_F64:
    default: return ncclFloat64;
    }
}

extern "C" int hs_comm_id_nccl(void *id)
{
    ncclUniqueId u;
    HS_NCCL_CHECK(ncclGetUniqueId(&u));
    memset(id, 0, HS_NCCL_ID_BYTES);
    memcpy(id, &u, sizeof u);
    return HS_OK;
}

extern "C" int hs_comm_init_nccl(struct hs_cuda_ctx *cu, const void *id, int rank, int size, void **nccl)
{
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    ncclComm_t c;
    HS_CUDA_CHECK(cudaSetDevice(cu->device));
    HS_NCCL_CHECK(ncclCommInitRank(&c, size, u, rank));
    *nccl = (void *)c;
    return HS_OK;
}

extern "C" void hs_comm_free_nccl(void *nccl)
{
    if (nccl) ncclCommDestroy((ncclComm_t)nccl);
}

extern "C" int hs_comm_allreduce_nccl(struct hs_cuda_ctx *cu, void *nccl, hs_dtype t, int op, void *buf, size_t count,
                                      void *stream)
{
    size_t m;
    ncclDataType_t nt = nccl_type(t, &m);
    ncclRedOp_t ro = op == HS_COMM_MIN ? ncclMin : op == HS_COMM_MAX ? ncclMax : ncclSum;
    cudaStream_t s = stream ? (cudaStream_t)stream : cu->stream;
    HS_NCCL_CHECK(ncclAllReduce(buf, buf, count * m, nt, ro, (ncclComm_t)nccl, s));
    return HS_OK;
}

extern "C" int hs_comm_allgather_nccl(struct hs_cuda_ctx *cu, void *nccl, hs_dtype t, const void *send, void *recv,
                                 size_t count)
{
    size_t m;
    ncclDataType_t nt = nccl_type(t, &m);
    HS_NCCL_CHECK(ncclAllGather(send, recv, count * m, nt, (ncclComm_t)nccl, cu->stream));
    return HS_OK;
}

extern "C" int hs_comm_alltoall_nccl(struct hs_cuda_ctx *cu, void *nccl, hs_dtype t, const void *send, void *recv,
                                size_t count, int rank, int size)
{
    size_t m, block = count * hs_dtype_size(t);
    ncclDataType_t nt = nccl_type(t, &m);
    ncclComm_t c = (ncclComm_t)nccl;
    HS_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < size; r++) {
        HS_NCCL_CHECK(ncclSend((const char *)send + r * block, count * m, nt, r, c, cu->stream));
        HS_NCCL_CHECK(ncclRecv((char *)recv + r * block, count * m, nt, r, c, cu->stream));
    }
    HS_NCCL_CHECK(ncclGroupEnd());
    (void)rank;
    return HS_OK;
}

extern "C" int hs_comm_bcast_nccl(struct hs_cuda_ctx *cu, void *nccl, hs_dtype t, void *buf, size_t count, int root)
{
    size_t m;
    ncclDataType_t nt = nccl_type(t, &m);
    HS_NCCL_CHECK(ncclBroadcast(buf, buf, count * m, nt, root, (ncclComm_t)nccl, cu->stream));
    return HS_OK;
}

extern "C" int hs_comm_sendrecv_nccl(struct hs_cuda_ctx *cu, void *nccl, hs_dtype t, const void *send, void *recv,
                                size_t count, int peer)
{
    size_t m;
    ncclDataType_t nt = nccl_type(t, &m);
    ncclComm_t c = (ncclComm_t)nccl;
    HS_NCCL_CHECK(ncclGroupStart());
    HS_NCCL_CHECK(ncclSend(send, count * m, nt, peer, c, cu->stream));
    HS_NCCL_CHECK(ncclRecv(recv, count * m, nt, peer, c, cu->stream));
    HS_NCCL_CHECK(ncclGroupEnd());
    return HS_OK;
}
#endif
