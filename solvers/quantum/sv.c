/* State-vector kernels: argument checks, gate index layout, dispatch on the context's device. */
#include "solvers/quantum/sv.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/memory.h"
#include "solvers/quantum/sv_impl.h"

int hs_sv_mma_mode(void)
{
    const char *e = getenv("HS_QSV_MMA");
    int mode = e && *e ? atoi(e) : HS_SV_MMA_DEFAULT;
    return mode == HS_SV_MMA_NEVER || mode == HS_SV_MMA_ALWAYS ? mode : HS_SV_MMA_DEFAULT;
}

int hs_sv_model_device(hs_ctx *ctx) { return HS_DISPATCH(ctx, 0, hs_sv_model_device_cuda(ctx->cuda)); }

static int check_type(hs_dtype t)
{
    if (t != HS_C128 && t != HS_C64) return HS_FAIL(HS_ERR_RUNTIME, "state vector: type %s is not complex", hs_dtype_name(t));
    return HS_OK;
}

static int check_qubits(int nloc, int nt, const int *targets, uint64_t cmask)
{
    if (nloc < 0 || nloc > 62) return HS_FAIL(HS_ERR_RUNTIME, "state vector: %d local qubits", nloc);
    if (nt < 1 || nt > HS_Q_MAX_TARGETS) return HS_FAIL(HS_ERR_RUNTIME, "state vector: %d targets", nt);
    if (nloc < 64 && (cmask >> nloc)) return HS_FAIL(HS_ERR_RUNTIME, "state vector: control beyond qubit %d", nloc - 1);
    uint64_t seen = 0;
    for (int j = 0; j < nt; j++) {
        if (targets[j] < 0 || targets[j] >= nloc)
            return HS_FAIL(HS_ERR_RUNTIME, "state vector: target %d outside %d local qubits", targets[j], nloc);
        uint64_t b = 1ull << targets[j];
        if ((seen | cmask) & b) return HS_FAIL(HS_ERR_RUNTIME, "state vector: qubit %d used twice in a gate", targets[j]);
        seen |= b;
    }
    return HS_OK;
}

void hs_sv_gate_layout(hs_sv_gate *g, int nloc, int nt, const int *targets, uint64_t cmask, uint64_t cval,
                       const double *m, int mk)
{
    memset(g, 0, sizeof *g);
    g->nloc = nloc;
    g->nt = nt;
    g->cmask = cmask;
    g->cval = cval & cmask;
    uint64_t all = cmask;
    for (int j = 0; j < nt; j++) all |= 1ull << targets[j], g->tbit[j] = targets[j];
    for (int b = 0; b < 64; b++)
        if (all >> b & 1) g->pos[g->npos++] = b;
    int d = 1 << nt;
    for (int k = 0; k < d; k++) {
        uint64_t o = 0;
        for (int j = 0; j < nt; j++) o |= (uint64_t)(k >> j & 1) << targets[j];
        g->offs[k] = o;
    }
    if (mk == HS_QMAT_DIAG) {
        for (int k = 0; k < d; k++) g->ph[2 * k] = m[2 * (k * d + k)], g->ph[2 * k + 1] = m[2 * (k * d + k) + 1];
    } else if (mk == HS_QMAT_PERM) {
        for (int r = 0; r < d; r++)
            for (int c = 0; c < d; c++)
                if (m[2 * (r * d + c)] != 0.0 || m[2 * (r * d + c) + 1] != 0.0) {
                    g->src[r] = c;
                    g->ph[2 * r] = m[2 * (r * d + c)];
                    g->ph[2 * r + 1] = m[2 * (r * d + c) + 1];
                }
    }
}

int hs_sv_apply(hs_ctx *ctx, hs_dtype t, void *a, int nloc, int nt, const int *targets, uint64_t cmask,
                uint64_t cval, const double *m, hs_qmat_kind mk)
{
    HS_CHECK(check_type(t));
    HS_CHECK(check_qubits(nloc, nt, targets, cmask));
    hs_sv_gate g;
    hs_sv_gate_layout(&g, nloc, nt, targets, cmask, cval, m, mk);
    return HS_DISPATCH(ctx, hs_sv_apply_cpu(t, a, &g, m, mk), hs_sv_apply_cuda(ctx->cuda, t, a, &g, m, mk));
}

int hs_sv_set_basis(hs_ctx *ctx, hs_dtype t, void *a, int nloc, int64_t index)
{
    HS_CHECK(check_type(t));
    size_t es = hs_dtype_size(t);
    HS_CHECK(hs_mem_zero(ctx, a, es << nloc));
    if (index < 0) return HS_OK;
    if ((uint64_t)index >> nloc) return HS_FAIL(HS_ERR_RUNTIME, "state vector: basis index out of range");
    double one[2] = {1.0, 0.0};
    float onef[2] = {1.0f, 0.0f};
    return hs_mem_copy(ctx, (char *)a + es * (size_t)index, t == HS_C128 ? (void *)one : (void *)onef, es, HS_COPY_H2D);
}

int hs_sv_prob_blocks(hs_ctx *ctx, hs_dtype t, const void *a, int nloc, int bbits, double *out)
{
    HS_CHECK(check_type(t));
    if (bbits < 0 || bbits > nloc) return HS_FAIL(HS_ERR_RUNTIME, "state vector: block of 2^%d in 2^%d", bbits, nloc);
    return HS_DISPATCH(ctx, hs_sv_prob_blocks_cpu(t, a, nloc, bbits, out),
                       hs_sv_prob_blocks_cuda(ctx->cuda, t, a, nloc, bbits, out));
}

int hs_sv_marginal(hs_ctx *ctx, hs_dtype t, const void *a, int nloc, int nm, const int *q, double *out)
{
    HS_CHECK(check_type(t));
    if (nm < 0 || nm > HS_SV_MAX_MARGINAL) return HS_FAIL(HS_ERR_RUNTIME, "state vector: marginal of %d qubits", nm);
    for (int j = 0; j < nm; j++)
        if (q[j] < 0 || q[j] >= nloc) return HS_FAIL(HS_ERR_RUNTIME, "state vector: marginal qubit %d", q[j]);
    return HS_DISPATCH(ctx, hs_sv_marginal_cpu(t, a, nloc, nm, q, out),
                       hs_sv_marginal_cuda(ctx->cuda, t, a, nloc, nm, q, out));
}

int hs_sv_collapse(hs_ctx *ctx, hs_dtype t, void *a, int nloc, uint64_t mask, uint64_t val, double scale)
{
    HS_CHECK(check_type(t));
    return HS_DISPATCH(ctx, hs_sv_collapse_cpu(t, a, nloc, mask, val & mask, scale),
                       hs_sv_collapse_cuda(ctx->cuda, t, a, nloc, mask, val & mask, scale));
}

int hs_sv_pauli_expect(hs_ctx *ctx, hs_dtype t, const void *a, int nloc, uint64_t xm, uint64_t zm, double out[2])
{
    HS_CHECK(check_type(t));
    if (nloc < 64 && ((xm | zm) >> nloc)) return HS_FAIL(HS_ERR_RUNTIME, "state vector: Pauli beyond local qubits");
    return HS_DISPATCH(ctx, hs_sv_pauli_expect_cpu(t, a, nloc, xm, zm, out),
                       hs_sv_pauli_expect_cuda(ctx->cuda, t, a, nloc, xm, zm, out));
}

int hs_sv_inner(hs_ctx *ctx, hs_dtype t, const void *a, const void *b, int nloc, double out[2])
{
    HS_CHECK(check_type(t));
    return HS_DISPATCH(ctx, hs_sv_inner_cpu(t, a, b, nloc, out), hs_sv_inner_cuda(ctx->cuda, t, a, b, nloc, out));
}

int hs_sv_pauli_axpy(hs_ctx *ctx, hs_dtype t, void *y, const void *x, int nloc, uint64_t xm, uint64_t zm,
                     const double c[2])
{
    HS_CHECK(check_type(t));
    if (nloc < 64 && ((xm | zm) >> nloc)) return HS_FAIL(HS_ERR_RUNTIME, "state vector: Pauli beyond local qubits");
    return HS_DISPATCH(ctx, hs_sv_pauli_axpy_cpu(t, y, x, nloc, xm, zm, c),
                       hs_sv_pauli_axpy_cuda(ctx->cuda, t, y, x, nloc, xm, zm, c));
}

int hs_sv_pack(hs_ctx *ctx, hs_dtype t, void *a, int nloc, int q, int v, int64_t start, int64_t count, void *buf,
               int unpack)
{
    HS_CHECK(check_type(t));
    if (q < 0 || q >= nloc || start < 0 || count < 0 || start + count > ((int64_t)1 << (nloc - 1)))
        return HS_FAIL(HS_ERR_RUNTIME, "state vector: bad pack range");
    if (count == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_sv_pack_cpu(t, a, nloc, q, v, start, count, buf, unpack),
                       hs_sv_pack_cuda(ctx->cuda, t, a, nloc, q, v, start, count, buf, unpack));
}
