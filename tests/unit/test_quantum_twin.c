/* The state-vector gate kernels on CUDA against their CPU twins (1-6 targets, low/high/spread, controls, dense/diagonal/permutation, the tensor-core blocks); skipped (77) without a GPU. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/rng/rng.h"
#include "solvers/quantum/circuit.h"
#include "solvers/quantum/sv_impl.h"

#include "quantum_ref.h"

#if HS_HAVE_CUDA

/* The GPU contracts products into fma and sums 64 terms in another order: complex128 differs from
 * the CPU in the last bits (a state of norm 1); complex64 by float round-off over up to 64 terms. */
#define TOL128 1e-13
#define TOL64 2e-6

/* A matrix of the kind asked for on d = 2^nt: a random unitary, diagonal phases, or a permutation
 * with phases. */
static void make_matrix(int d, hs_qmat_kind mk, hs_rng *g, double *m)
{
    if (mk == HS_QMAT_DENSE) {
        random_unitary(d, g, m);
        return;
    }
    memset(m, 0, sizeof(double) * 2 * (size_t)d * (size_t)d);
    int perm[64];
    for (int k = 0; k < d; k++) perm[k] = k;
    for (int k = d - 1; mk == HS_QMAT_PERM && k > 0; k--) {
        int r = (int)(hs_rng_next(g) % (uint64_t)(k + 1)), t = perm[k];
        perm[k] = perm[r];
        perm[r] = t;
    }
    for (int r = 0; r < d; r++) {
        double ph[1];
        test_fill_f64(ph, 1, hs_rng_next(g), -M_PI, M_PI);
        m[2 * (r * d + perm[r])] = cos(ph[0]);
        m[2 * (r * d + perm[r]) + 1] = sin(ph[0]);
    }
}

/* One gate on both backends from the same state; the largest difference of the results. */
static double twin(hs_dtype t, int nloc, int nt, const int *tg, uint64_t cmask, uint64_t cval, const double *m,
                   hs_qmat_kind mk, uint64_t seed)
{
    size_t N = (size_t)1 << nloc, es = hs_dtype_size(t);
    double *x = malloc(2 * N * sizeof *x), s = 0;
    test_fill_f64(x, 2 * N, seed, -1, 1);
    for (size_t i = 0; i < 2 * N; i++) s += x[i] * x[i];
    void *h = malloc(N * es);
    for (size_t i = 0; i < 2 * N; i++) {
        double v = x[i] / sqrt(s);
        if (t == HS_C128) ((double *)h)[i] = v;
        else ((float *)h)[i] = (float)v;
    }
    void *d = test_upload(h, N * es);
    hs_sv_gate g;
    hs_sv_gate_layout(&g, nloc, nt, tg, cmask, cval, m, mk);
    TEST_OK(hs_sv_apply_cpu(t, h, &g, m, mk));
    TEST_OK(hs_sv_apply_cuda(test_ctx()->cuda, t, d, &g, m, mk));
    void *back = test_download_new(d, N * es);
    double e = 0;
    for (size_t i = 0; i < 2 * N; i++) {
        double a = t == HS_C128 ? ((double *)h)[i] : ((float *)h)[i];
        double b = t == HS_C128 ? ((double *)back)[i] : ((float *)back)[i];
        e = fmax(e, fabs(a - b));
    }
    free(back);
    hs_mem_free(test_ctx(), d);
    free(h);
    free(x);
    return e;
}

/* Every kernel path: 1-6 targets on the lowest qubits (shared-memory tiles; the shuffle kernel for
 * one target), the highest (straight from global memory), spread and random ones, with 0-2
 * controls on 0 or 1, for dense, diagonal and permutation matrices, on registers of 6 to 16 qubits
 * (below nt + 5 the tile does not fit and the global-memory kernel takes every case). */
static void test_gates(void **st)
{
    (void)st;
    hs_rng g;
    hs_rng_seed(&g, 2026, 0);
    static double m[2 * 64 * 64];
    /* 10: a 5-qubit block's tile is the whole register (two units) */
    const int nlocs[5] = {6, 9, 10, 12, 16};
    int cases = 0;
    double worst[2] = {0, 0};
    /* complex128 once; complex64 four times: dense 4-6 qubit gates on the tensor cores where they
     * go by default (HS_QSV_MMA unset), never (0: the CUDA-core kernels), and always (2), with the
     * 5-qubit blocks' units loaded by the warps (HS_QSV_TMA 0) and by the copy engine (1) */
    static const struct { int prec; const char *mma, *tma, *label; } runs[] = {
        {0, NULL, NULL, "c128"},
        {1, NULL, NULL, "c64 (HS_QSV_MMA unset)"},
        {1, "0", NULL, "c64 (HS_QSV_MMA 0)"},
        {1, "2", "0", "c64 (HS_QSV_MMA 2, HS_QSV_TMA 0)"},
        {1, "2", "1", "c64 (HS_QSV_MMA 2, HS_QSV_TMA 1)"},
    };
    for (size_t run = 0; run < sizeof runs / sizeof runs[0]; run++) {
        int prec = runs[run].prec;
        if (runs[run].mma) setenv("HS_QSV_MMA", runs[run].mma, 1);
        else unsetenv("HS_QSV_MMA");
        if (runs[run].tma) setenv("HS_QSV_TMA", runs[run].tma, 1);
        else unsetenv("HS_QSV_TMA");
        hs_dtype t = prec ? HS_C64 : HS_C128;
        double tol = prec ? TOL64 : TOL128;
        for (int li = 0; li < 5; li++) {
            int nloc = nlocs[li];
            for (int nt = 1; nt <= HS_Q_MAX_TARGETS && nt <= nloc; nt++)
                for (int where = 0; where < 4; where++)
                    for (int nc = 0; nc <= 2 && nt + nc <= nloc; nc++)
                        for (int mk = 0; mk < 3; mk++) {
                            int q[16];
                            if (where == 0) for (int j = 0; j < nt + nc; j++) q[j] = j;
                            else if (where == 1) for (int j = 0; j < nt + nc; j++) q[j] = nloc - 1 - j;
                            else if (where == 2) for (int j = 0; j < nt + nc; j++) q[j] = (j * (nloc - 1)) / (nt + nc - 1 > 0 ? nt + nc - 1 : 1);
                            else pick(nloc, nt + nc, &g, q);
                            uint64_t cm = 0, cv = 0;
                            for (int j = 0; j < nc; j++) {
                                cm |= 1ull << q[nt + j];
                                cv |= (hs_rng_next(&g) & 1ull) << q[nt + j];
                            }
                            make_matrix(1 << nt, (hs_qmat_kind)mk, &g, m);
                            hs_qmat_kind kind = hs_qmat_classify(1 << nt, m);
                            double e = twin(t, nloc, nt, q, cm, cv, m, kind, hs_rng_next(&g));
                            if (e > tol)
                                fprintf(stderr, "%s nloc %d nt %d where %d nc %d kind %d: %.3g\n", runs[run].label, nloc,
                                        nt, where, nc, (int)kind, e);
                            TEST_LE(e, tol);
                            worst[prec] = fmax(worst[prec], e);
                            cases++;
                        }
        }
    }
    unsetenv("HS_QSV_MMA");
    unsetenv("HS_QSV_TMA");
    printf("%d gates: CUDA vs CPU at most %.2g (complex128), %.2g (complex64, tensor-core blocks by default, never, "
           "always, with and without the bulk-copy kernel)\n", cases, worst[0], worst[1]);
}

/* The tensor-core blocks on registers large enough that every warp walks several units (the grid
 * is one wave of resident blocks): 4-6 targets, low, high, spread and random, complex64; then the
 * bulk-copy kernel with rings of 2, 3 and 8 stages (a warp reuses each stage several times). */
static void test_mma_many_units(void **st)
{
    (void)st;
    hs_rng g;
    hs_rng_seed(&g, 77, 0);
    static double m[2 * 64 * 64];
    const int nloc = 21;
    double worst = 0;
    setenv("HS_QSV_MMA", "2", 1);
    static const char *stages[4] = {NULL, "2", "3", "8"};
    for (int sv = 0; sv < 4; sv++) {
        setenv("HS_QSV_TMA", stages[sv] ? "1" : "0", 1);
        if (stages[sv]) setenv("HS_QSV_TMA_STAGES", stages[sv], 1);
        for (int nt = 4; nt <= HS_Q_MAX_TARGETS; nt++)
            for (int where = 0; where < 4; where++) {
                int q[HS_Q_MAX_TARGETS];
                if (where == 3) pick(nloc, nt, &g, q);
                else
                    for (int j = 0; j < nt; j++)
                        q[j] = where == 0 ? j : where == 1 ? nloc - 1 - j : (j * (nloc - 1)) / (nt - 1);
                make_matrix(1 << nt, HS_QMAT_DENSE, &g, m);
                double e = twin(HS_C64, nloc, nt, q, 0, 0, m, HS_QMAT_DENSE, hs_rng_next(&g));
                if (e > TOL64)
                    fprintf(stderr, "nloc %d nt %d where %d stages %s: %.3g\n", nloc, nt, where,
                            stages[sv] ? stages[sv] : "-", e);
                TEST_LE(e, TOL64);
                worst = fmax(worst, e);
            }
    }
    unsetenv("HS_QSV_MMA");
    unsetenv("HS_QSV_TMA");
    unsetenv("HS_QSV_TMA_STAGES");
    printf("tensor-core blocks on %d qubits: CUDA vs CPU at most %.2g\n", nloc, worst);
}

static int setup_cuda(void **st)
{
    (void)st;
    return hs_ctx_set_device(test_ctx(), "cuda", 1) == HS_OK ? 0 : -1;
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_gates, setup_cuda),
    cmocka_unit_test_setup(test_mma_many_units, setup_cuda),
};
#endif

int main(void)
{
#if HS_HAVE_CUDA
    if (hs_cuda_device_count() > 0) return test_run_group("quantum_twin", tests, sizeof tests / sizeof tests[0]);
    printf("SKIP: no GPU here: the CUDA gate kernels are not compared with their CPU twins\n");
#else
    printf("SKIP: built without CUDA: the gate kernels have no CUDA twin to compare\n");
#endif
    return 77;
}
