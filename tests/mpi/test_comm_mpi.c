/* The communication family: every host and device-buffer collective against a reference computed
 * on the host from every rank's (known) data, at any rank count; the NCCL transport where it can run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/comm/comm.h"
#include "kernels/memory.h"
#include "test_util.h"

static const hs_dtype g_types[] = {HS_F64, HS_F32, HS_I32, HS_I64, HS_U32, HS_U64, HS_C128, HS_C64};
#define NTYPES (sizeof g_types / sizeof g_types[0])
static const size_t g_counts[] = {0, 1, 1031};
#define NCOUNTS (sizeof g_counts / sizeof g_counts[0])

static int is_cplx(hs_dtype t) { return t == HS_C128 || t == HS_C64; }
static int is_unsigned(hs_dtype t) { return t == HS_U32 || t == HS_U64; }

/* Element i of rank r's data (part 0: real, 1: imaginary): small integers, exact in every type. */
static double value(hs_dtype t, int r, size_t i, int part, int salt)
{
    long v = ((long)r * 7 + (long)i * 3 + part * 5 + salt * 11) % 23;
    return is_unsigned(t) ? (double)v : (double)(v - 11);
}

/* Store x as element i (part) of a buffer of type t. */
static void put(hs_dtype t, void *b, size_t i, int part, double x)
{
    switch (t) {
    case HS_F64: ((double *)b)[i] = x; break;
    case HS_F32: ((float *)b)[i] = (float)x; break;
    case HS_I32: ((int32_t *)b)[i] = (int32_t)x; break;
    case HS_I64: ((int64_t *)b)[i] = (int64_t)x; break;
    case HS_U32: ((uint32_t *)b)[i] = (uint32_t)x; break;
    case HS_U64: ((uint64_t *)b)[i] = (uint64_t)x; break;
    case HS_C128: ((double *)b)[2 * i + part] = x; break;
    case HS_C64: ((float *)b)[2 * i + part] = (float)x; break;
    default: break; /* 16-bit types: no collective takes them */
    }
}

/* A host buffer of n elements of rank r's data (salt picks a different pattern). */
static void *make(hs_dtype t, int r, size_t n, int salt)
{
    void *b = calloc(n + 1, hs_dtype_size(t));
    for (size_t i = 0; i < n; i++)
        for (int p = 0; p < 1 + is_cplx(t); p++) put(t, b, i, p, value(t, r, i, p, salt));
    return b;
}

static void *up(hs_ctx *ctx, const void *h, size_t bytes)
{
    void *d = NULL;
    TEST_OK(hs_mem_alloc(ctx, bytes + 16, &d));
    if (bytes) TEST_OK(hs_mem_copy(ctx, d, h, bytes, HS_COPY_H2D));
    return d;
}

static void down(hs_ctx *ctx, void *h, const void *d, size_t bytes)
{
    if (bytes) TEST_OK(hs_mem_copy(ctx, h, d, bytes, HS_COPY_D2H));
}

/* How many of the checks below failed, summed over ranks: every rank agrees on the verdict. */
static int g_bad;
static void expect_equal(const void *got, const void *want, size_t bytes, const char *what, hs_dtype t, size_t n)
{
    if (bytes && memcmp(got, want, bytes)) {
        print_error("%s %s n=%zu: differs from the host reference\n", what, hs_dtype_name(t), n);
        g_bad++;
    }
}

static void agree(hs_ctx *ctx)
{
    int bad = g_bad;
    TEST_OK(hs_host_allreduce(ctx->comm, HS_I32, HS_COMM_SUM, &bad, 1));
    g_bad = 0;
    assert_int_equal(bad, 0);
}

/* Every collective on buffers of ctx's device through comm (device = 1), or the host collectives
 * on host buffers (device = 0), against the reference. */
static void check_all(hs_ctx *ctx, hs_comm *comm, int device)
{
    int R = ctx->size, me = ctx->rank;
    for (size_t k = 0; k < NTYPES; k++)
        for (size_t c = 0; c < NCOUNTS; c++) {
            hs_dtype t = g_types[k];
            size_t n = g_counts[c], es = hs_dtype_size(t), bytes = n * es;
            /* all-reduce: sum, and min and max for real types */
            for (int op = 0; op < 3; op++) {
                if (is_cplx(t) && op != HS_COMM_SUM) continue;
                void *want = make(t, me, n, 0), *got = make(t, me, n, 0);
                for (size_t i = 0; i < n; i++)
                    for (int p = 0; p < 1 + is_cplx(t); p++) {
                        double acc = value(t, 0, i, p, 0);
                        for (int r = 1; r < R; r++) {
                            double v = value(t, r, i, p, 0);
                            acc = op == HS_COMM_SUM ? acc + v : op == HS_COMM_MIN ? (v < acc ? v : acc) : (v > acc ? v : acc);
                        }
                        put(t, want, i, p, acc);
                    }
                if (device) {
                    void *d = up(ctx, got, bytes);
                    TEST_OK(hs_comm_allreduce(comm, t, (hs_comm_op)op, d, n));
                    down(ctx, got, d, bytes);
                    hs_mem_free(ctx, d);
                } else {
                    TEST_OK(hs_host_allreduce(ctx->comm, t, (hs_comm_op)op, got, n));
                }
                expect_equal(got, want, bytes, op == 0 ? "allreduce sum" : op == 1 ? "allreduce min" : "allreduce max", t, n);
                if (device) { /* started without waiting: two in flight, a blocking collective between, waited out of order */
                    void *h = make(t, me, n, 0), *d1 = up(ctx, h, bytes), *d2 = up(ctx, h, bytes);
                    hs_comm_request *r1 = NULL, *r2 = NULL;
                    TEST_OK(hs_comm_allreduce_begin(comm, t, (hs_comm_op)op, d1, n, &r1));
                    TEST_OK(hs_comm_allreduce_begin(comm, t, (hs_comm_op)op, d2, n, &r2));
                    int one = 1;
                    TEST_OK(hs_host_allreduce(ctx->comm, HS_I32, HS_COMM_SUM, &one, 1));
                    if (one != R) g_bad++;
                    TEST_OK(hs_comm_wait(&r2));
                    TEST_OK(hs_comm_wait(&r1));
                    if (r1 || r2) g_bad++;
                    down(ctx, h, d1, bytes);
                    expect_equal(h, want, bytes, "allreduce_begin (first)", t, n);
                    down(ctx, h, d2, bytes);
                    expect_equal(h, want, bytes, "allreduce_begin (second)", t, n);
                    hs_mem_free(ctx, d1), hs_mem_free(ctx, d2);
                    free(h);
                }
                free(want), free(got);
            }
            /* all-gather, out of place and in place; all-to-all */
            {
                char *want = calloc((size_t)R * n + 1, es), *got = calloc((size_t)R * n + 1, es);
                void *mine = make(t, me, n, 1);
                for (int r = 0; r < R; r++) {
                    void *b = make(t, r, n, 1);
                    memcpy(want + (size_t)r * bytes, b, bytes);
                    free(b);
                }
                for (int inplace = 0; inplace < 2; inplace++) {
                    memset(got, 0, (size_t)R * bytes);
                    if (inplace) memcpy(got + (size_t)me * bytes, mine, bytes);
                    if (device) {
                        void *ds = up(ctx, mine, bytes), *dr = up(ctx, got, (size_t)R * bytes);
                        TEST_OK(hs_comm_allgather(comm, t, inplace ? (char *)dr + (size_t)me * bytes : ds, dr, n));
                        down(ctx, got, dr, (size_t)R * bytes);
                        hs_mem_free(ctx, ds), hs_mem_free(ctx, dr);
                    } else {
                        TEST_OK(hs_host_allgather(ctx->comm, t, inplace ? got + (size_t)me * bytes : mine, got, n));
                    }
                    expect_equal(got, want, (size_t)R * bytes, inplace ? "allgather in place" : "allgather", t, n);
                }
                /* all-to-all: block r of rank s's send is value(s, r * n + i) */
                char *send = calloc((size_t)R * n + 1, es);
                for (int r = 0; r < R; r++) {
                    void *b = make(t, me, (size_t)R * n, 2);
                    memcpy(send + (size_t)r * bytes, (char *)b + (size_t)r * bytes, bytes);
                    free(b);
                }
                for (int s = 0; s < R; s++) {
                    char *b = make(t, s, (size_t)R * n, 2);
                    memcpy(want + (size_t)s * bytes, b + (size_t)me * bytes, bytes);
                    free(b);
                }
                if (device) {
                    void *ds = up(ctx, send, (size_t)R * bytes), *dr = up(ctx, NULL, 0);
                    hs_mem_free(ctx, dr);
                    TEST_OK(hs_mem_alloc(ctx, (size_t)R * bytes + 16, &dr));
                    TEST_OK(hs_comm_alltoall(comm, t, ds, dr, n));
                    down(ctx, got, dr, (size_t)R * bytes);
                    hs_mem_free(ctx, ds), hs_mem_free(ctx, dr);
                } else {
                    TEST_OK(hs_host_alltoall(ctx->comm, t, send, got, n));
                }
                expect_equal(got, want, (size_t)R * bytes, "alltoall", t, n);
                free(want), free(got), free(mine), free(send);
            }
            /* broadcast from every root; exchange with a partner (self on one rank) */
            for (int root = 0; root < R; root++) {
                void *want = make(t, root, n, 3), *got = make(t, me, n, 3);
                if (device) {
                    void *d = up(ctx, got, bytes);
                    TEST_OK(hs_comm_bcast(comm, t, d, n, root));
                    down(ctx, got, d, bytes);
                    hs_mem_free(ctx, d);
                } else {
                    TEST_OK(hs_host_bcast(ctx->comm, t, got, n, root));
                }
                expect_equal(got, want, bytes, "bcast", t, n);
                free(want), free(got);
            }
            {
                int peer = R > 1 ? me ^ 1 : me;
                if (peer >= R) peer = me;
                void *send = make(t, me, n, 4), *want = make(t, peer, n, 4), *got = calloc(n + 1, es);
                if (device) {
                    void *ds = up(ctx, send, bytes), *dr = up(ctx, got, bytes);
                    TEST_OK(hs_comm_sendrecv(comm, t, ds, dr, n, peer));
                    down(ctx, got, dr, bytes);
                    hs_mem_free(ctx, ds), hs_mem_free(ctx, dr);
                } else {
                    TEST_OK(hs_host_sendrecv(ctx->comm, t, send, got, n, peer));
                }
                expect_equal(got, want, bytes, "sendrecv", t, n);
                free(send), free(want), free(got);
            }
        }
    agree(ctx);
}

static void test_host_collectives(void **state)
{
    (void)state;
    check_all(test_ctx(), NULL, 0);
}

/* hs_comm on the test context's backend: MPI directly on the CPU, host staging where the test
 * ranks share a GPU. */
static void test_device_collectives(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    hs_comm *comm = NULL;
    TEST_OK(hs_comm_create(ctx, &comm));
    if (ctx->device == HS_DEVICE_CPU) assert_string_equal(hs_comm_transport(comm), "mpi");
    assert_false(hs_comm_uses_nccl(comm) && ctx->local_size > hs_cuda_device_count());
    check_all(ctx, comm, 1);
    hs_comm_destroy(comm);
}

static void test_errors(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    hs_comm *comm = NULL;
    TEST_OK(hs_comm_create(ctx, &comm));
    double x[4] = {0};
    assert_int_equal(hs_host_allreduce(ctx->comm, HS_C128, HS_COMM_MAX, x, 1), HS_ERR_INPUT);
    assert_int_equal(hs_comm_allreduce(comm, HS_C64, HS_COMM_MIN, x, 1), HS_ERR_INPUT);
    assert_int_equal(hs_host_sendrecv(ctx->comm, HS_F64, x, x, 1, ctx->rank), HS_ERR_INPUT);
    assert_int_equal(hs_comm_sendrecv(comm, HS_F64, x, x + 1, 1, ctx->size), HS_ERR_INPUT);
    assert_int_equal(hs_comm_alltoall(comm, HS_F64, x, x, 1), HS_ERR_INPUT);
    assert_int_equal(hs_comm_bcast(comm, HS_F64, x, 1, -1), HS_ERR_INPUT);
    hs_comm_request *req = (hs_comm_request *)x; /* begin clears it, even when it refuses */
    assert_int_equal(hs_comm_allreduce_begin(comm, HS_C128, HS_COMM_MAX, x, 1, &req), HS_ERR_INPUT);
    assert_null(req);
    TEST_OK(hs_comm_wait(&req));
    assert_int_equal(hs_host_bcast(ctx->comm, HS_F64, x, (size_t)1 << 31, 0), HS_ERR_INPUT);
    hs_error_clear();
    assert_int_equal(hs_gpu_comm_parse("nccl"), HS_GPU_COMM_NCCL);
    assert_int_equal(hs_gpu_comm_parse("host"), HS_GPU_COMM_HOST);
    assert_int_equal(hs_gpu_comm_parse("auto"), HS_GPU_COMM_AUTO);
    assert_int_equal(hs_gpu_comm_parse("mpi"), -1);
    hs_comm_destroy(comm);
}

/* The non-blocking all-reduce against a reference summed (or maxed) here from every rank's known
 * data, with a blocking collective between start and wait, and in place; the byte broadcast from
 * two roots. */
static void test_host_nonblocking_and_bytes(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    const size_t n = 517;
    const hs_dtype types[] = {HS_I32, HS_F64};
    for (int k = 0; k < 2; k++)
        for (int op = HS_COMM_SUM; op <= HS_COMM_MAX; op++) {
            hs_dtype t = types[k];
            void *send = make(t, ctx->rank, n, 3), *recv = calloc(n + 1, hs_dtype_size(t));
            void *want = calloc(n + 1, hs_dtype_size(t));
            for (size_t i = 0; i < n; i++) {
                double acc = value(t, 0, i, 0, 3);
                for (int r = 1; r < ctx->size; r++) {
                    double v = value(t, r, i, 0, 3);
                    acc = op == HS_COMM_SUM ? acc + v : op == HS_COMM_MIN ? (v < acc ? v : acc) : (v > acc ? v : acc);
                }
                put(t, want, i, 0, acc);
            }
            MPI_Request req;
            TEST_OK(hs_host_iallreduce(ctx->comm, t, (hs_comm_op)op, send, recv, n, &req));
            int other = ctx->rank + 1;
            TEST_OK(hs_host_allreduce(ctx->comm, HS_I32, HS_COMM_SUM, &other, 1));
            if (other != ctx->size * (ctx->size + 1) / 2) g_bad++;
            TEST_OK(hs_host_wait(&req));
            expect_equal(recv, want, n * hs_dtype_size(t), "iallreduce", t, n);
            free(send), free(recv), free(want);
        }
    MPI_Request none = MPI_REQUEST_NULL;
    TEST_OK(hs_host_wait(&none));
    for (int root = 0; root < ctx->size; root += ctx->size > 1 ? ctx->size - 1 : 1) {
        char text[64];
        snprintf(text, sizeof text, "from rank %d of %d", ctx->rank, ctx->size);
        TEST_OK(hs_host_bcast_bytes(ctx->comm, text, sizeof text, root));
        char want[64];
        snprintf(want, sizeof want, "from rank %d of %d", root, ctx->size);
        if (strcmp(text, want)) {
            print_error("bcast_bytes from %d: got '%s'\n", root, text);
            g_bad++;
        }
    }
    TEST_OK(hs_host_barrier(ctx->comm));
    double x[2] = {ctx->rank + 1.0, 0};
    MPI_Request req;
    TEST_OK(hs_host_iallreduce(ctx->comm, HS_F64, HS_COMM_SUM, x, x, 1, &req)); /* in place */
    TEST_OK(hs_host_wait(&req));
    assert_true(x[0] == ctx->size * (ctx->size + 1) / 2.0);
    assert_int_equal(hs_host_iallreduce(ctx->comm, HS_C128, HS_COMM_MAX, x, x + 1, 1, &req), HS_ERR_INPUT);
    assert_int_equal(hs_host_bcast_bytes(ctx->comm, x, (size_t)1 << 31, 0), HS_ERR_INPUT);
    hs_error_clear();
    agree(ctx);
}

/* Node-shared host memory: the node's writer fills it, and after the publication every rank of the
 * node reads the same bytes at its own address (one block in the node's memory when the node has
 * several ranks); three sizes (0 bytes, one, a few MB), and MPI_COMM_NULL / MPI_COMM_SELF (plain
 * memory, every rank its own writer). */
static void test_node_shared(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    const size_t sizes[] = {0, 1, (size_t)3 << 20};
    for (int k = 0; k < 3; k++) {
        hs_node_shared *s;
        unsigned char *p;
        int writer = -1;
        TEST_OK(hs_node_shared_alloc(ctx->node_comm, sizes[k], &s, (void **)&p, &writer));
        assert_true(p != NULL);
        assert_int_equal(writer, ctx->local_rank == 0);
        if (writer)
            for (size_t i = 0; i < sizes[k]; i++) p[i] = (unsigned char)((i * 131 + 7) % 251);
        TEST_OK(hs_node_shared_publish(s));
        for (size_t i = 0; i < sizes[k]; i++)
            if (p[i] != (unsigned char)((i * 131 + 7) % 251)) {
                print_error("node-shared byte %zu of %zu on rank %d: %u\n", i, sizes[k], ctx->rank, p[i]);
                g_bad++;
                break;
            }
        hs_node_shared_free(s);
    }
    const MPI_Comm alone[2] = {MPI_COMM_NULL, MPI_COMM_SELF};
    for (int k = 0; k < 2; k++) {
        hs_node_shared *s;
        double *p;
        int writer = -1;
        TEST_OK(hs_node_shared_alloc(alone[k], 100 * sizeof *p, &s, (void **)&p, &writer));
        assert_int_equal(writer, 1);
        for (int i = 0; i < 100; i++) p[i] = ctx->rank + i;
        TEST_OK(hs_node_shared_publish(s));
        for (int i = 0; i < 100; i++) assert_true(p[i] == ctx->rank + i);
        hs_node_shared_free(s);
    }
    agree(ctx);
}

/* The NCCL transport, demanded (run.gpu_comm = nccl): needs the build's NCCL and a GPU per rank. */
static void test_nccl(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    int own = HS_HAVE_NCCL && hs_cuda_device_count() > 0 && ctx->local_size <= hs_cuda_device_count();
    int all = own;
    TEST_OK(hs_host_allreduce(ctx->comm, HS_I32, HS_COMM_MIN, &all, 1));
    if (!all) {
        if (ctx->rank == 0)
            print_message(HS_HAVE_NCCL ? "no GPU of its own for every rank here: the NCCL transport is not run\n"
                                       : "built without NCCL: the NCCL transport is not run\n");
        skip();
    }
    const char *was = hs_device_name(ctx->device);
    int mode = ctx->gpu_comm;
    TEST_OK(hs_ctx_set_device(ctx, "cuda", 0));
    ctx->gpu_comm = HS_GPU_COMM_NCCL;
    hs_comm *comm = NULL;
    TEST_OK(hs_comm_create(ctx, &comm));
    assert_true(hs_comm_uses_nccl(comm));
    assert_string_equal(hs_comm_transport(comm), "nccl");
    check_all(ctx, comm, 1);
    hs_comm_destroy(comm);
    /* host staging on the same GPUs, demanded */
    ctx->gpu_comm = HS_GPU_COMM_HOST;
    TEST_OK(hs_comm_create(ctx, &comm));
    assert_string_equal(hs_comm_transport(comm), "host-staged");
    check_all(ctx, comm, 1);
    hs_comm_destroy(comm);
    ctx->gpu_comm = mode;
    TEST_OK(hs_ctx_set_device(ctx, was, 1));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_host_collectives),
    cmocka_unit_test(test_device_collectives),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_host_nonblocking_and_bytes),
    cmocka_unit_test(test_node_shared),
    cmocka_unit_test(test_nccl),
};

TEST_MAIN("comm_mpi", tests)
