// Bulk-copy engine (cp.async.bulk, sm_90 and up) and shared-memory barriers (mbarrier) as inline PTX.
//
// A bulk load moves a contiguous block of global memory into shared memory without occupying the
// threads; its completion is counted in bytes on an mbarrier, which threads then wait on by phase
// parity.  A bulk store moves shared memory to global memory and is tracked per issuing thread in
// commit groups.  Addresses and sizes must be multiples of 16 bytes.  Callers compile these only
// for __CUDA_ARCH__ >= 900, and take such a path only in a build for compute_90 or later
// (HS_CUDA_ARCH) on a device of compute capability 9 or more.
#ifndef HS_CUDA_BULK_CUH
#define HS_CUDA_BULK_CUH

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define HS_HAVE_BULK_COPY 1
#else
#define HS_HAVE_BULK_COPY 0
#endif

#if HS_HAVE_BULK_COPY
namespace hs_bulk {

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// One arrival expected per phase (the thread that issues the load); bytes complete the phase.
__device__ __forceinline__ void barrier_init(unsigned long long *bar)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); // visible to the copy engine
}

__device__ __forceinline__ bool barrier_try_wait(unsigned long long *bar, unsigned parity)
{
    unsigned done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
    return done != 0;
}

__device__ __forceinline__ void barrier_wait(unsigned long long *bar, unsigned parity)
{
    while (!barrier_try_wait(bar, parity)) {
    }
}

// The arrival of a phase that several copy_part calls (any lanes, before or after it) complete:
// the phase ends when this arrival has come and `bytes` in all have landed.
__device__ __forceinline__ void expect(unsigned long long *bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

// Global -> shared, one part of a phase announced by expect (no arrival of its own).
__device__ __forceinline__ void copy_part(void *smem_dst, const void *gmem_src, unsigned bytes, unsigned long long *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_addr(smem_dst)),
                 "l"(gmem_src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}

// Global -> shared, completing `bytes` on bar's current phase (arrives once on bar).
__device__ __forceinline__ void load(void *smem_dst, const void *gmem_src, unsigned bytes, unsigned long long *bar)
{
    expect(bar, bytes);
    copy_part(smem_dst, gmem_src, bytes, bar);
}

// Orders this thread's ordinary shared-memory accesses before its (or, after a warp or block
// barrier, its peers') later bulk copies: writes that a bulk store is to read, reads done before
// a bulk load overwrites the same bytes.
__device__ __forceinline__ void fence_async_proxy() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// Shared -> global, as one commit group of the calling thread.
__device__ __forceinline__ void store(void *gmem_dst, const void *smem_src, unsigned bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem_dst), "r"(smem_addr(smem_src)),
                 "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Waits until at most N of this thread's store groups still read shared memory.
template <int N> __device__ __forceinline__ void wait_stores_read() { asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory"); }

// Waits until all of this thread's store groups are complete.
__device__ __forceinline__ void wait_stores() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

} // namespace hs_bulk
#endif
#endif
