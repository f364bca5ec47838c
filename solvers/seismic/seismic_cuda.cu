// The seismic solver's kernels on the GPU (placeholder until written).
#include "kernels/cuda_util.h"
#include "solvers/seismic/seismic_impl.h"

extern "C" int hs_seis_launch_cuda(struct hs_cuda_ctx *cu, const hs_seis_launch *L)
{
    (void)cu, (void)L;
    return HS_FAIL(HS_ERR_RUNTIME, "seismic: CUDA kernels not written yet");
}
