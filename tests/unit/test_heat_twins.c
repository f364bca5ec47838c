/* The heat stencil's CPU and CUDA backends on the same fields: 2D and 3D, orders 2 and 4, constant
 * and variable conductivity, every boundary kind, every GPU kernel variant, field and contiguous output. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "solvers/heat/heat_stencil.h"
#include "solvers/heat/heat_stencil_impl.h"
#include "test_util.h"

/* Boundary choices per dimension: periodic, Dirichlet on both sides, Neumann on both sides, and
 * Dirichlet below with Neumann above.  Case r gives dimension d the choice (r + d) % 4, so over
 * four cases every choice meets every dimension. */
enum { BC_P, BC_D, BC_N, BC_DN, NBC };

typedef struct {
    int ndim, order, kfield, qfield, kernel, bc[3];
    int64_t n[3];
} hcase;

/* What one backend computed for a case: the inputs' raw layout (so the CUDA run reads exactly the
 * CPU's ghosts) and the two outputs. */
typedef struct {
    size_t count;              /* elements of each field's allocation from data on */
    int64_t pitch;
    double *T, *k, *q;         /* raw field arrays (ghosts included) */
    double *out_field;         /* raw output field: interior box written, the rest the sentinel */
    double *out_contig;        /* contiguous output of the inner box */
    size_t ncontig;
} hresult;

static const double g_a = 0.75, g_b = 3.0e-5, g_c = 0.4, g_sentinel = -123.25;
static const double g_dx[3] = {0.011, 0.017, 0.013};

static hs_bc_kind kind_low(int choice) { return choice == BC_P ? HS_BC_PERIODIC : choice == BC_N ? HS_BC_NEUMANN : HS_BC_DIRICHLET; }
static hs_bc_kind kind_high(int choice) { return choice == BC_P ? HS_BC_PERIODIC : choice == BC_D ? HS_BC_DIRICHLET : HS_BC_NEUMANN; }

static double *download_raw(hs_ctx *ctx, const hs_field *f)
{
    double *h = malloc(f->count * sizeof *h);
    assert_non_null(h);
    TEST_OK(hs_mem_copy(ctx, h, f->data, f->count * sizeof *h, HS_COPY_D2H));
    return h;
}

/* A field with seeded interior values, halos exchanged and walls filled per the case (cpu_raw NULL),
 * or holding the CPU run's raw array exactly (the CUDA run).  mirror: every wall a homogeneous
 * Neumann one, ghosts copying the interior, as the solver fills its conductivity (which stays
 * positive there). */
static hs_field *make_input(hs_ctx *ctx, hs_decomp *d, const hcase *c, uint64_t seed, double lo, double hi,
                            int mirror, const double *cpu_raw)
{
    hs_field *f = NULL;
    TEST_OK(hs_field_create(d, HS_F64, c->order / 2, &f));
    if (cpu_raw) {
        TEST_OK(hs_mem_copy(ctx, f->data, cpu_raw, f->count * sizeof(double), HS_COPY_H2D));
        return f;
    }
    size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]);
    double *v = malloc(n * sizeof *v);
    test_fill_f64(v, n, seed, lo, hi);
    TEST_OK(hs_field_set_interior(f, v));
    free(v);
    hs_bc bc[3][2];
    memset(bc, 0, sizeof bc);
    for (int e = 0; e < 3; e++) {
        int ch = e < c->ndim ? c->bc[e] : BC_P;
        hs_bc_kind lo_kind = mirror && ch != BC_P ? HS_BC_NEUMANN : kind_low(ch);
        hs_bc_kind hi_kind = mirror && ch != BC_P ? HS_BC_NEUMANN : kind_high(ch);
        bc[e][0] = (hs_bc){lo_kind, 0.5 + 0.25 * e, NULL, NULL};
        bc[e][1] = (hs_bc){hi_kind, -1.5 + 0.5 * e, NULL, NULL};
    }
    TEST_OK(hs_halo_exchange(f));
    TEST_OK(hs_field_fill_ghosts(f, bc, g_dx, mirror));
    return f;
}

/* Run one case on the context's current backend; cpu != NULL hands the CPU run's inputs over. */
static void run_case(const hcase *c, const hresult *cpu, hresult *res)
{
    hs_ctx *ctx = test_ctx();
    int periodic[3];
    for (int e = 0; e < 3; e++) periodic[e] = c->bc[e] == BC_P;
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(ctx, c->ndim, c->n, periodic, NULL, c->order / 2, &d));
    hs_field *T = make_input(ctx, d, c, 11, -1.0, 1.0, 0, cpu ? cpu->T : NULL);
    hs_field *K = c->kfield ? make_input(ctx, d, c, 12, 0.5, 3.0, 1, cpu ? cpu->k : NULL) : NULL;
    hs_field *Q = c->qfield ? make_input(ctx, d, c, 13, -2.0, 2.0, 0, cpu ? cpu->q : NULL) : NULL;
    hs_field *out = NULL;
    TEST_OK(hs_field_create(d, HS_F64, c->order / 2, &out));
    TEST_OK(hs_field_fill(out, g_sentinel));

    hs_heat_op op;
    memset(&op, 0, sizeof op);
    op.ndim = c->ndim;
    op.order = c->order;
    for (int e = 0; e < 3; e++) {
        op.dx[e] = g_dx[e];
        op.inv_dx2[e] = e < c->ndim ? 1.0 / (g_dx[e] * g_dx[e]) : 0.0;
    }
    op.alpha = 1.7;
    op.inv_rhoc = 0.6;
    op.k = K ? K->data : NULL;
    op.q = Q ? Q->data : NULL;
    op.q_const = 2.5;
    op.gpu_kernel = c->kernel;

    hs_box all = hs_field_interior_box(T), inner = all;
    for (int e = 0; e < c->ndim; e++) inner.lo[e] = 1, inner.hi[e] = T->local[e] - 1;
    res->ncontig = (size_t)(T->local[0] * T->local[1] * T->local[2]);
    void *contig = NULL;
    TEST_OK(hs_mem_alloc(ctx, res->ncontig * sizeof(double), &contig));
    double *fill = malloc(res->ncontig * sizeof *fill);
    for (size_t i = 0; i < res->ncontig; i++) fill[i] = g_sentinel;
    TEST_OK(hs_mem_copy(ctx, contig, fill, res->ncontig * sizeof *fill, HS_COPY_H2D));
    free(fill);

    TEST_OK(hs_heat_apply(T, &op, g_a, g_b, g_c, &all, out->data, 0));
    TEST_OK(hs_heat_apply(T, &op, g_a, g_b, g_c, &inner, contig, 1));
    TEST_OK(hs_ctx_sync(ctx));

    res->count = T->count;
    res->pitch = T->pitch;
    res->T = download_raw(ctx, T);
    res->k = K ? download_raw(ctx, K) : NULL;
    res->q = Q ? download_raw(ctx, Q) : NULL;
    res->out_field = download_raw(ctx, out);
    res->out_contig = malloc(res->ncontig * sizeof(double));
    TEST_OK(hs_mem_copy(ctx, res->out_contig, contig, res->ncontig * sizeof(double), HS_COPY_D2H));
    hs_mem_free(ctx, contig);
    hs_field_destroy(T);
    hs_field_destroy(K);
    hs_field_destroy(Q);
    hs_field_destroy(out);
    hs_decomp_destroy(d);
}

static void free_result(hresult *r)
{
    free(r->T), free(r->k), free(r->q), free(r->out_field), free(r->out_contig);
    memset(r, 0, sizeof *r);
}

static double max_abs(const double *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(x[i]) > m) m = fabs(x[i]);
    return m;
}

/* The size of the largest term either backend adds up in one cell: |a| max|T| + |b| max|L| bound +
 * |c| max|q|, with the stencil's absolute weights (2nd order 1 + 2 + 1 = 4, 4th order
 * (1 + 16 + 30 + 16 + 1) / 12 = 64 / 12 per dimension).  The backends evaluate the same formula
 * (heat_point.h) and may differ only by rounding, fused multiply-adds on the GPU included, so
 * |cuda - cpu| <= 32 eps times this scale: a few roundings of the largest term, whatever the
 * cancellation in a cell. */
static double term_scale(const hcase *c, const hresult *r)
{
    double w = c->order == 2 ? 4.0 : 64.0 / 12.0, sum = 0;
    for (int e = 0; e < c->ndim; e++) sum += w / (g_dx[e] * g_dx[e]);
    double coef = c->kfield ? 0.6 * max_abs(r->k, r->count) : 1.7;
    double q = c->qfield ? max_abs(r->q, r->count) : 2.5;
    return fabs(g_a) * max_abs(r->T, r->count) + fabs(g_b) * coef * sum * max_abs(r->T, r->count) + fabs(g_c) * q;
}

/* Count the elements where the two runs differ by more than tol (the sentinel must match exactly). */
static long compare(const double *gpu, const double *cpu, size_t n, double tol, const char *what, double *worst)
{
    long bad = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(gpu[i] - cpu[i]);
        if (!(e <= tol) || ((gpu[i] == g_sentinel) != (cpu[i] == g_sentinel))) {
            if (bad < 3) print_error("%s: element %zu cuda %.17g cpu %.17g\n", what, i, gpu[i], cpu[i]);
            bad++;
        }
        if (e > *worst) *worst = e;
    }
    return bad;
}

static int make_cases(hcase *cs)
{
    int n = 0;
    for (int ndim = 2; ndim <= 3; ndim++)
        for (int order = 2; order <= 4; order += 2)
            for (int kfield = 0; kfield <= (order == 2); kfield++)
                for (int r = 0; r < NBC; r++) {
                    int nk = ndim == 3 && order == 2 && !kfield ? 4 : 1; /* the 7-point kernel variants */
                    for (int kern = 0; kern < nk; kern++) {
                        hcase c;
                        memset(&c, 0, sizeof c);
                        c.ndim = ndim, c.order = order, c.kfield = kfield, c.qfield = r % 2 == 0, c.kernel = kern;
                        for (int e = 0; e < 3; e++) c.bc[e] = (r + e) % NBC;
                        /* an even row for vec2 in half the 3D cases, odd rows elsewhere (its fallback) */
                        const int64_t n2[3] = {37, 22, 1}, n3a[3] = {32, 13, 9}, n3b[3] = {33, 10, 7};
                        memcpy(c.n, ndim == 2 ? n2 : (r % 2 ? n3b : n3a), sizeof c.n);
                        cs[n++] = c;
                    }
                }
    return n;
}

static void test_heat_twins(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    const char *was = hs_device_name(ctx->device);
    hcase cs[64];
    int nc = make_cases(cs);
    hresult *cpu = calloc((size_t)nc, sizeof *cpu), *gpu = calloc((size_t)nc, sizeof *gpu);
    /* every CPU run first, then every CUDA run: one backend switch each way */
    TEST_OK(hs_ctx_set_device(ctx, "cpu", 1));
    for (int i = 0; i < nc; i++) run_case(&cs[i], NULL, &cpu[i]);
    TEST_OK(hs_ctx_set_device(ctx, "cuda", 1));
    for (int i = 0; i < nc; i++) run_case(&cs[i], &cpu[i], &gpu[i]);
    TEST_OK(hs_ctx_set_device(ctx, was, 1));
    long bad = 0;
    double worst_rel = 0;
    static const char *const bcname[] = {"periodic", "dirichlet", "neumann", "dirichlet/neumann"};
    for (int i = 0; i < nc; i++) {
        const hcase *c = &cs[i];
        char what[160];
        snprintf(what, sizeof what, "%dD order %d %s k, %s q, kernel %d, bc %s/%s/%s", c->ndim, c->order,
                 c->kfield ? "field" : "constant", c->qfield ? "field" : "constant", c->kernel, bcname[c->bc[0]],
                 bcname[c->bc[1]], c->ndim == 3 ? bcname[c->bc[2]] : "-");
        assert_int_equal(gpu[i].count, cpu[i].count);
        assert_int_equal(gpu[i].pitch, cpu[i].pitch);
        double scale = term_scale(c, &cpu[i]), tol = 32 * DBL_EPSILON * scale, worst = 0;
        bad += compare(gpu[i].T, cpu[i].T, cpu[i].count, 0.0, what, &worst); /* the inputs were copied */
        bad += compare(gpu[i].out_field, cpu[i].out_field, cpu[i].count, tol, what, &worst);
        bad += compare(gpu[i].out_contig, cpu[i].out_contig, cpu[i].ncontig, tol, what, &worst);
        if (worst / scale > worst_rel) worst_rel = worst / scale;
        free_result(&cpu[i]);
        free_result(&gpu[i]);
    }
    print_message("%d cases: largest |cuda - cpu| %.2e of the term scale (tolerance %.2e)\n", nc, worst_rel,
                  32 * DBL_EPSILON);
    free(cpu);
    free(gpu);
    assert_int_equal(bad, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_heat_twins),
};

int main(void)
{
    /* the comparison needs both backends: without a GPU (or without CUDA in the build) nothing is compared */
    if (!HS_HAVE_CUDA || hs_cuda_device_count() == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    return test_run_group("heat_twins", tests, sizeof tests / sizeof tests[0]);
}
