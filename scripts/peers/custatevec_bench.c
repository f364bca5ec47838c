/* Runs a circuit in qsim's format through cuStateVec gate by gate and times it (the peer of hpcsim's quantum solver). */
/*
 * usage: custatevec_bench CIRCUIT.qsim [c64|c128]
 * Built on the GPU machine by scripts/peers/run_peers.sh against the custatevec-cu13 wheel:
 *   cc -O2 custatevec_bench.c -I$CUDA/include -I$CUSV/include -L$CUSV/lib -L$CUDA/lib64 -lcustatevec -lcudart -lm
 * Gates: those scripts/peers/qasm_to_qsim.py writes (h x y z s t x_1_2 rx ry rz cx cz cp sw); controlled
 * gates use cuStateVec's controls.  Prints the times of state creation (allocation and |0>), of the
 * gates (device events), and the first amplitudes, so that runs can be compared with hpcsim's.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <custatevec.h>

#define CK(call)                                                                                     \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            fprintf(stderr, "custatevec_bench: %s: %s\n", #call, cudaGetErrorString(e_));            \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)
#define CS(call)                                                                                     \
    do {                                                                                             \
        custatevecStatus_t s_ = (call);                                                              \
        if (s_ != CUSTATEVEC_STATUS_SUCCESS) {                                                       \
            fprintf(stderr, "custatevec_bench: %s: %s\n", #call, custatevecGetErrorString(s_));      \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

typedef struct {
    int nt, nc, t[2], c[1];
    double complex m[16];
} gate;

static void set1(gate *g, double complex a, double complex b, double complex c, double complex d)
{
    g->m[0] = a, g->m[1] = b, g->m[2] = c, g->m[3] = d;
}

/* One line of the circuit to a gate (targets, controls, row-major matrix); 0 when not a gate. */
static int parse(const char *line, int nq, gate *g)
{
    char name[32];
    int time, q0 = -1, q1 = -1, used = 0;
    double p = 0;
    if (sscanf(line, "%d %31s %d%n", &time, name, &q0, &used) < 3) return 0;
    const char *rest = line + used;
    int two = !strcmp(name, "cx") || !strcmp(name, "cz") || !strcmp(name, "cp") || !strcmp(name, "sw");
    if (two && sscanf(rest, "%d%n", &q1, &used) == 1) rest += used;
    if (!strcmp(name, "rx") || !strcmp(name, "ry") || !strcmp(name, "rz") || !strcmp(name, "cp"))
        if (sscanf(rest, "%lf", &p) != 1) return -1;
    if (q0 < 0 || q0 >= nq || (two && (q1 < 0 || q1 >= nq || q1 == q0))) return -1;
    memset(g, 0, sizeof *g);
    g->nt = 1;
    g->t[0] = q0;
    double r = M_SQRT1_2, c = cos(p / 2), s = sin(p / 2);
    if (!strcmp(name, "h")) set1(g, r, r, r, -r);
    else if (!strcmp(name, "x")) set1(g, 0, 1, 1, 0);
    else if (!strcmp(name, "y")) set1(g, 0, -I, I, 0);
    else if (!strcmp(name, "z")) set1(g, 1, 0, 0, -1);
    else if (!strcmp(name, "s")) set1(g, 1, 0, 0, I);
    else if (!strcmp(name, "t")) set1(g, 1, 0, 0, cexp(I * M_PI / 4));
    else if (!strcmp(name, "x_1_2")) set1(g, (1 + I) / 2, (1 - I) / 2, (1 - I) / 2, (1 + I) / 2);
    else if (!strcmp(name, "rx")) set1(g, c, -I * s, -I * s, c);
    else if (!strcmp(name, "ry")) set1(g, c, -s, s, c);
    else if (!strcmp(name, "rz")) set1(g, cexp(-I * p / 2), 0, 0, cexp(I * p / 2));
    else if (!strcmp(name, "cx") || !strcmp(name, "cz") || !strcmp(name, "cp")) {
        g->nc = 1, g->c[0] = q0, g->t[0] = q1;
        if (!strcmp(name, "cx")) set1(g, 0, 1, 1, 0);
        else if (!strcmp(name, "cz")) set1(g, 1, 0, 0, -1);
        else set1(g, 1, 0, 0, cexp(I * p));
    } else if (!strcmp(name, "sw")) {
        g->nt = 2, g->t[0] = q0, g->t[1] = q1;
        g->m[0] = g->m[6] = g->m[9] = g->m[15] = 1;
    } else {
        fprintf(stderr, "custatevec_bench: gate '%s' is not supported\n", name);
        return -1;
    }
    return 1;
}

int main(int argc, char **argv)
{
    double t0 = now();
    if (argc < 2) {
        fprintf(stderr, "usage: custatevec_bench CIRCUIT.qsim [c64|c128]\n");
        return 2;
    }
    int c128 = argc > 2 && !strcmp(argv[2], "c128");
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    char line[512];
    int nq = 0, ng = 0, cap = 1024;
    gate *gs = malloc(sizeof(gate) * (size_t)cap);
    if (!fgets(line, sizeof line, f) || sscanf(line, "%d", &nq) != 1 || nq < 1 || nq > 40) {
        fprintf(stderr, "custatevec_bench: %s: bad qubit count\n", argv[1]);
        return 2;
    }
    for (int ln = 2; fgets(line, sizeof line, f); ln++) {
        if (ng == cap) gs = realloc(gs, sizeof(gate) * (size_t)(cap *= 2));
        int r = parse(line, nq, &gs[ng]);
        if (r < 0) {
            fprintf(stderr, "custatevec_bench: %s:%d: cannot read '%s'\n", argv[1], ln, line);
            return 2;
        }
        ng += r;
    }
    fclose(f);

    cudaDataType_t sv_t = c128 ? CUDA_C_64F : CUDA_C_32F;
    size_t es = c128 ? 16 : 8, n = (size_t)1 << nq;
    double t1 = now();
    custatevecHandle_t h;
    CS(custatevecCreate(&h));
    void *sv;
    CK(cudaMalloc(&sv, es * n));
    CS(custatevecInitializeStateVector(h, sv, sv_t, (uint32_t)nq, CUSTATEVEC_STATE_VECTOR_TYPE_ZERO));
    CK(cudaDeviceSynchronize());
    double t2 = now();

    void *work = NULL;
    size_t work_bytes = 0;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0, 0));
    for (int i = 0; i < ng; i++) {
        gate *g = &gs[i];
        int d = 1 << g->nt;
        double complex m128[16];
        float complex m64[16];
        for (int k = 0; k < d * d; k++) m128[k] = g->m[k], m64[k] = (float complex)g->m[k];
        const void *m = c128 ? (const void *)m128 : (const void *)m64;
        int vals[1] = {1};
        size_t need = 0;
        CS(custatevecApplyMatrixGetWorkspaceSize(h, sv_t, (uint32_t)nq, m, sv_t, CUSTATEVEC_MATRIX_LAYOUT_ROW, 0,
                                                 (uint32_t)g->nt, (uint32_t)g->nc, CUSTATEVEC_COMPUTE_DEFAULT, &need));
        if (need > work_bytes) {
            CK(cudaDeviceSynchronize());
            if (work) CK(cudaFree(work));
            CK(cudaMalloc(&work, need));
            work_bytes = need;
        }
        CS(custatevecApplyMatrix(h, sv, sv_t, (uint32_t)nq, m, sv_t, CUSTATEVEC_MATRIX_LAYOUT_ROW, 0, g->t,
                                 (uint32_t)g->nt, g->nc ? g->c : NULL, g->nc ? vals : NULL, (uint32_t)g->nc,
                                 CUSTATEVEC_COMPUTE_DEFAULT, work, work_bytes));
    }
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    double amp[8][2];
    size_t show = n < 8 ? n : 8;
    for (size_t i = 0; i < show; i++) {
        if (c128) CK(cudaMemcpy(amp[i], (char *)sv + i * es, es, cudaMemcpyDeviceToHost));
        else {
            float a[2];
            CK(cudaMemcpy(a, (char *)sv + i * es, es, cudaMemcpyDeviceToHost));
            amp[i][0] = a[0], amp[i][1] = a[1];
        }
    }
    double t3 = now();
    printf("cuStateVec %d.%d.%d: %s, %d qubits, %s, %d gates\n", CUSTATEVEC_VER_MAJOR, CUSTATEVEC_VER_MINOR,
           CUSTATEVEC_VER_PATCH, argv[1], nq, c128 ? "complex128" : "complex64", ng);
    printf("read %.3f s, handle + state + |0> %.3f s, gates %.4f s (%.3f ms per gate), whole %.3f s\n", t1 - t0,
           t2 - t1, ms * 1e-3, ms / (ng ? ng : 1), t3 - t0);
    for (size_t i = 0; i < show; i++) printf("amplitude %zu: %.8e %.8e\n", i, amp[i][0], amp[i][1]);
    if (work) cudaFree(work);
    cudaFree(sv);
    custatevecDestroy(h);
    free(gs);
    return 0;
}
