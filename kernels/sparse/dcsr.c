/* Distributed CSR: layout and ghost discovery, the diagonal/off-diagonal split, the overlapped SpMV. */
#include "kernels/sparse/dcsr.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/sparse/sparse_impl.h"
#include "kernels/dispatch.h"

#define DCSR_TAG 5151

struct hs_dcsr {
    hs_ctx *ctx;
    MPI_Comm comm;
    int rank, size;
    int64_t row_start, nrows_local, nrows_global;
    int64_t *starts;              /* size + 1 first rows, the last one nrows_global */
    hs_csr *diag, *off;           /* off: NULL without ghost columns; its rows are compressed */
    int64_t nghost, nsend;
    int64_t *ghost;               /* host: global column of each ghost, ascending (so grouped by owner) */
    int nrecv_nb, nsend_nb;
    int *recv_rank, *send_rank;
    int64_t *recv_off, *send_off; /* neighbour i's part of the ghost / send buffer: [off[i], off[i+1]) */
    int32_t *send_idx;            /* device: the local rows each neighbour needs, in its ghost order */
    double *send_dev, *ghost_dev; /* device */
    double *send_host, *recv_host;/* pinned staging on CUDA; the device buffers themselves on CPU */
    MPI_Request *reqs;
    void *stream, *ev_x, *ev_ghost;
};

/* ------------------------------------------------------------------ creation: checks */

/* Every rank learns whether all ranks succeeded; a rank that did not fail itself names the one that did. */
static int agree(hs_dcsr *m, int rc)
{
    int v[2] = {rc, rc != HS_OK ? -m->rank : -m->size};
    int g[2] = {0, 0};
    HS_MPI_CHECK(MPI_Allreduce(v, g, 2, MPI_INT, MPI_MAX, m->comm));
    if (rc != HS_OK || g[0] == HS_OK) return rc;
    if (g[0] == HS_ERR_INPUT)
        return hs_input_error("hs_dcsr_create", 0, NULL, "rank %d was given invalid rows (see its message)", -g[1]);
    return HS_FAIL(g[0], "hs_dcsr_create failed on rank %d", -g[1]);
}

static int layout(hs_dcsr *m, int64_t row_start, int64_t nrows_local, int64_t ncols_global)
{
    int64_t mine[2] = {row_start, nrows_local};
    int64_t *all = malloc(sizeof *all * 2 * (size_t)m->size);
    m->starts = malloc(sizeof *m->starts * ((size_t)m->size + 1));
    if (!all || !m->starts) {
        free(all);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the row layout");
    }
    int rc = MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, m->comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        return hs_mpi_fail(rc, "MPI_Allgather", __FILE__, __LINE__);
    }
    m->starts[0] = 0;
    for (int r = 0; r < m->size && rc == HS_OK; r++) {
        if (all[2 * r] != m->starts[r] || all[2 * r + 1] < 0)
            rc = hs_input_error("hs_dcsr_create", 0, NULL,
                                "rank %d holds rows [%lld, +%lld), expected a block starting at %lld: the blocks must "
                                "tile the rows in rank order",
                                r, (long long)all[2 * r], (long long)all[2 * r + 1], (long long)m->starts[r]);
        m->starts[r + 1] = m->starts[r] + all[2 * r + 1];
    }
    free(all);
    HS_CHECK(rc);
    if (m->starts[m->size] != ncols_global)
        return hs_input_error("hs_dcsr_create", 0, "ncols_global", "%lld, but the ranks hold %lld rows (square matrices only)",
                              (long long)ncols_global, (long long)m->starts[m->size]);
    m->row_start = row_start;
    m->nrows_local = nrows_local;
    m->nrows_global = ncols_global;
    return HS_OK;
}

static int check_local(const hs_dcsr *m, const int64_t *rowptr, const int64_t *colind, const double *val)
{
    const char *fn = "hs_dcsr_create";
    int64_t n = m->nrows_local;
    if (!rowptr) return n ? hs_input_error(fn, 0, "rowptr", "is NULL on rank %d", m->rank) : HS_OK;
    if (rowptr[0] != 0) return hs_input_error(fn, 0, "rowptr", "rowptr[0] = %lld on rank %d, must be 0", (long long)rowptr[0], m->rank);
    for (int64_t i = 0; i < n; i++)
        if (rowptr[i + 1] < rowptr[i])
            return hs_input_error(fn, 0, "rowptr", "rowptr[%lld] < rowptr[%lld] on rank %d: row pointers must not decrease",
                                  (long long)(i + 1), (long long)i, m->rank);
    if (rowptr[n] > INT32_MAX)
        return hs_input_error(fn, 0, NULL, "rank %d holds %lld entries, more than the 32-bit range", m->rank, (long long)rowptr[n]);
    if (rowptr[n] > 0 && (!colind || !val)) return hs_input_error(fn, 0, NULL, "colind or val is NULL on rank %d", m->rank);
    for (int64_t k = 0; k < rowptr[n]; k++)
        if (colind[k] < 0 || colind[k] >= m->nrows_global)
            return hs_input_error(fn, 0, "colind", "colind[%lld] = %lld on rank %d is outside the columns [0, %lld)",
                                  (long long)k, (long long)colind[k], m->rank, (long long)m->nrows_global);
    return HS_OK;
}

/* ------------------------------------------------------------------ creation: ghosts and blocks */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Index of the last entry <= v in the ascending array a[0..n) (-1 when none). */
static int64_t last_at_or_below(const int64_t *a, int64_t n, int64_t v)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] <= v) lo = mid + 1;
        else hi = mid;
    }
    return lo - 1;
}

static int is_local(const hs_dcsr *m, int64_t col) { return col >= m->row_start && col < m->row_start + m->nrows_local; }

/* The distinct off-rank columns, ascending: they are the ghost vector's layout. */
static int find_ghosts(hs_dcsr *m, const int64_t *rowptr, const int64_t *colind)
{
    int64_t nnz = m->nrows_local ? rowptr[m->nrows_local] : 0, count = 0;
    for (int64_t k = 0; k < nnz; k++) count += !is_local(m, colind[k]);
    m->ghost = malloc(sizeof *m->ghost * (size_t)(count ? count : 1));
    if (!m->ghost) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for %lld ghost columns", (long long)count);
    count = 0;
    for (int64_t k = 0; k < nnz; k++)
        if (!is_local(m, colind[k])) m->ghost[count++] = colind[k];
    qsort(m->ghost, (size_t)count, sizeof *m->ghost, cmp_i64);
    int64_t u = 0;
    for (int64_t k = 0; k < count; k++)
        if (u == 0 || m->ghost[k] != m->ghost[u - 1]) m->ghost[u++] = m->ghost[k];
    m->nghost = u;
    return HS_OK;
}

typedef struct {
    int64_t nrows, ncols, nnz;
    int32_t *rowptr, *colind, *rowmap;
    double *val;
} host_block;

static void block_free(host_block *b)
{
    free(b->rowptr), free(b->colind), free(b->rowmap), free(b->val);
    memset(b, 0, sizeof *b);
}

static int block_alloc(host_block *b, int64_t nrows, int64_t nnz, int with_rowmap)
{
    b->rowptr = malloc(sizeof *b->rowptr * (size_t)(nrows + 1));
    b->colind = malloc(sizeof *b->colind * (size_t)(nnz ? nnz : 1));
    b->val = malloc(sizeof *b->val * (size_t)(nnz ? nnz : 1));
    b->rowmap = with_rowmap ? malloc(sizeof *b->rowmap * (size_t)(nrows ? nrows : 1)) : NULL;
    if (!b->rowptr || !b->colind || !b->val || (with_rowmap && !b->rowmap))
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a %lld-entry matrix block", (long long)nnz);
    b->rowptr[0] = 0;
    return HS_OK;
}

/* Split the rows: local columns renumbered from 0 into d, ghost columns into o (non-empty rows only). */
static int split_rows(const hs_dcsr *m, const int64_t *rowptr, const int64_t *colind, const double *val,
                      host_block *d, host_block *o)
{
    int64_t nd = 0, no = 0, orows = 0;
    for (int64_t i = 0; i < m->nrows_local; i++) {
        int64_t before = no;
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) is_local(m, colind[k]) ? nd++ : no++;
        orows += no > before;
    }
    HS_CHECK(block_alloc(d, m->nrows_local, nd, 0));
    HS_CHECK(block_alloc(o, orows, no, 1));
    d->nrows = m->nrows_local, d->ncols = m->nrows_local, d->nnz = nd;
    o->nrows = orows, o->ncols = m->nghost, o->nnz = no;
    nd = no = orows = 0;
    for (int64_t i = 0; i < m->nrows_local; i++) {
        int64_t before = no;
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) {
            if (is_local(m, colind[k])) {
                d->colind[nd] = (int32_t)(colind[k] - m->row_start);
                d->val[nd++] = val[k];
            } else {
                o->colind[no] = (int32_t)last_at_or_below(m->ghost, m->nghost, colind[k]);
                o->val[no++] = val[k];
            }
        }
        d->rowptr[i + 1] = (int32_t)nd;
        if (no > before) {
            o->rowmap[orows] = (int32_t)i;
            o->rowptr[++orows] = (int32_t)no;
        }
    }
    return HS_OK;
}

static int make_blocks(hs_dcsr *m, const host_block *d, const host_block *o)
{
    HS_CHECK(hs_csr_create(m->ctx, d->nrows, d->ncols, d->nnz, d->rowptr, d->colind, d->val, &m->diag));
    if (m->nghost == 0) return HS_OK;
    HS_CHECK(hs_csr_create(m->ctx, o->nrows, o->ncols, o->nnz, o->rowptr, o->colind, o->val, &m->off));
    HS_CHECK(hs_csr_set_rowmap(m->off, m->nrows_local, o->rowmap));
    /* the CSR-stream kernel: ghost-column blocks have short rows */
    return hs_csr_set_spmv_kernel(m->off, HS_SPMV_NATIVE, 0);
}

static int build_blocks(hs_dcsr *m, const int64_t *rowptr, const int64_t *colind, const double *val)
{
    host_block d = {0}, o = {0};
    int64_t zero = 0;
    if (!rowptr) rowptr = &zero; /* a rank without rows */
    int rc = split_rows(m, rowptr, colind, val, &d, &o);
    if (rc == HS_OK) rc = make_blocks(m, &d, &o);
    block_free(&d);
    block_free(&o);
    return rc;
}

/* ------------------------------------------------------------------ creation: communication lists */

/* Neighbours with a non-zero count, and the offsets of their parts. */
static int neighbours(const int *counts, int size, int *nnb, int **ranks, int64_t **off)
{
    int n = 0;
    for (int p = 0; p < size; p++) n += counts[p] > 0;
    *ranks = malloc(sizeof **ranks * (size_t)(n ? n : 1));
    *off = malloc(sizeof **off * (size_t)(n + 1));
    if (!*ranks || !*off) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the neighbour lists");
    (*off)[0] = 0;
    n = 0;
    for (int p = 0; p < size; p++)
        if (counts[p] > 0) {
            (*ranks)[n] = p;
            (*off)[n + 1] = (*off)[n] + counts[p];
            n++;
        }
    *nnb = n;
    return HS_OK;
}

/* Send the requested ghost columns to their owners; each rank learns which of its rows to send. */
static int exchange_requests(hs_dcsr *m, const int *rcount, const int *scount, int64_t **requested)
{
    int *rdisp = malloc(sizeof *rdisp * (size_t)m->size), *sdisp = malloc(sizeof *sdisp * (size_t)m->size);
    int64_t total = 0;
    for (int p = 0; p < m->size; p++) total += scount[p];
    *requested = malloc(sizeof **requested * (size_t)(total ? total : 1));
    if (!rdisp || !sdisp || !*requested) {
        free(rdisp), free(sdisp);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the ghost requests");
    }
    rdisp[0] = sdisp[0] = 0;
    for (int p = 1; p < m->size; p++) rdisp[p] = rdisp[p - 1] + rcount[p - 1], sdisp[p] = sdisp[p - 1] + scount[p - 1];
    int rc = MPI_Alltoallv(m->ghost, rcount, rdisp, MPI_INT64_T, *requested, scount, sdisp, MPI_INT64_T, m->comm);
    free(rdisp), free(sdisp);
    if (rc != MPI_SUCCESS) return hs_mpi_fail(rc, "MPI_Alltoallv", __FILE__, __LINE__);
    m->nsend = total;
    return HS_OK;
}

static int upload_send_idx(hs_dcsr *m, const int64_t *requested)
{
    int32_t *idx = malloc(sizeof *idx * (size_t)(m->nsend ? m->nsend : 1));
    if (!idx) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the send list");
    for (int64_t k = 0; k < m->nsend; k++) idx[k] = (int32_t)(requested[k] - m->row_start);
    int rc = hs_mem_alloc(m->ctx, (size_t)m->nsend * sizeof *idx, (void **)&m->send_idx);
    if (rc == HS_OK && m->nsend) rc = hs_mem_copy(m->ctx, m->send_idx, idx, (size_t)m->nsend * sizeof *idx, HS_COPY_H2D);
    free(idx);
    return rc;
}

static int build_lists(hs_dcsr *m)
{
    int *rcount = calloc((size_t)m->size, sizeof *rcount), *scount = calloc((size_t)m->size, sizeof *scount);
    int64_t *requested = NULL;
    int rc = rcount && scount ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the neighbour counts");
    for (int64_t g = 0; rc == HS_OK && g < m->nghost; g++) rcount[last_at_or_below(m->starts, m->size, m->ghost[g])]++;
    if (rc == HS_OK) {
        int e = MPI_Alltoall(rcount, 1, MPI_INT, scount, 1, MPI_INT, m->comm);
        if (e != MPI_SUCCESS) rc = hs_mpi_fail(e, "MPI_Alltoall", __FILE__, __LINE__);
    }
    if (rc == HS_OK) rc = exchange_requests(m, rcount, scount, &requested);
    if (rc == HS_OK) rc = neighbours(rcount, m->size, &m->nrecv_nb, &m->recv_rank, &m->recv_off);
    if (rc == HS_OK) rc = neighbours(scount, m->size, &m->nsend_nb, &m->send_rank, &m->send_off);
    if (rc == HS_OK) rc = upload_send_idx(m, requested);
    free(rcount), free(scount), free(requested);
    return rc;
}

static int alloc_buffers(hs_dcsr *m)
{
    hs_ctx *ctx = m->ctx;
    m->reqs = malloc(sizeof *m->reqs * (size_t)(m->nrecv_nb + m->nsend_nb + 1));
    if (!m->reqs) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for MPI requests");
    HS_CHECK(hs_mem_alloc(ctx, (size_t)m->nsend * sizeof(double), (void **)&m->send_dev));
    HS_CHECK(hs_mem_alloc(ctx, (size_t)m->nghost * sizeof(double), (void **)&m->ghost_dev));
    if (!HS_ON_GPU(ctx)) { /* host memory already: MPI reads and writes the buffers directly */
        m->send_host = m->send_dev;
        m->recv_host = m->ghost_dev;
        return HS_OK;
    }
    HS_CHECK(hs_host_alloc_pinned(ctx, (size_t)m->nsend * sizeof(double), (void **)&m->send_host));
    HS_CHECK(hs_host_alloc_pinned(ctx, (size_t)m->nghost * sizeof(double), (void **)&m->recv_host));
    HS_CHECK(hs_stream_create(ctx, &m->stream));
    HS_CHECK(hs_event_create(ctx, &m->ev_x));
    HS_CHECK(hs_event_create(ctx, &m->ev_ghost));
    return HS_OK;
}

/* Everything after the layout; local steps agree before the collective ones so no rank waits alone. */
static int build(hs_dcsr *m, const int64_t *rowptr, const int64_t *colind, const double *val)
{
    HS_CHECK(agree(m, check_local(m, rowptr, colind, val)));
    int rc = find_ghosts(m, rowptr, colind);
    if (rc == HS_OK) rc = build_blocks(m, rowptr, colind, val);
    HS_CHECK(agree(m, rc));
    HS_CHECK(agree(m, build_lists(m)));
    return alloc_buffers(m);
}

int hs_dcsr_create(hs_ctx *ctx, MPI_Comm comm, int64_t row_start, int64_t nrows_local, int64_t ncols_global,
                   const int64_t *rowptr, const int64_t *colind, const double *val, hs_dcsr **A)
{
    if (!A || !ctx) return hs_input_error("hs_dcsr_create", 0, NULL, "ctx or A is NULL");
    *A = NULL;
    hs_dcsr *m = calloc(1, sizeof *m);
    if (!m) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a distributed matrix");
    m->ctx = ctx;
    m->comm = comm;
    int rc = MPI_Comm_rank(comm, &m->rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm, &m->size);
    if (rc != MPI_SUCCESS) {
        free(m);
        return hs_mpi_fail(rc, "MPI_Comm_rank/size", __FILE__, __LINE__);
    }
    rc = layout(m, row_start, nrows_local, ncols_global);
    if (rc == HS_OK) rc = build(m, rowptr, colind, val);
    if (rc != HS_OK) {
        hs_dcsr_destroy(m);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_dcsr_create");
    }
    *A = m;
    return HS_OK;
}

void hs_dcsr_destroy(hs_dcsr *A)
{
    if (!A) return;
    hs_ctx *ctx = A->ctx;
    if (A->stream) hs_stream_sync(ctx, A->stream);
    hs_csr_destroy(A->diag);
    hs_csr_destroy(A->off);
    if (A->send_host != A->send_dev) hs_host_free_pinned(ctx, A->send_host);
    if (A->recv_host != A->ghost_dev) hs_host_free_pinned(ctx, A->recv_host);
    hs_mem_free(ctx, A->send_dev);
    hs_mem_free(ctx, A->ghost_dev);
    hs_mem_free(ctx, A->send_idx);
    if (A->ev_x) hs_event_destroy(ctx, A->ev_x);
    if (A->ev_ghost) hs_event_destroy(ctx, A->ev_ghost);
    if (A->stream) hs_stream_destroy(ctx, A->stream);
    free(A->starts), free(A->ghost), free(A->reqs);
    free(A->recv_rank), free(A->send_rank), free(A->recv_off), free(A->send_off);
    free(A);
}

/* ------------------------------------------------------------------ SpMV */

/* Gather the values the neighbours need (on the side stream after x is ready, then to the host). */
static int pack(hs_dcsr *A, const double *x)
{
    hs_ctx *ctx = A->ctx;
    /* on the CPU send_dev is send_host; on the GPU the side stream also orders this call's ghost
     * upload after the previous call's off-diagonal SpMV */
    HS_CHECK(hs_event_record(ctx, A->ev_x, NULL));
    HS_CHECK(hs_stream_wait_event(ctx, A->stream, A->ev_x));
    if (A->nsend == 0) return HS_OK;
    HS_CHECK(HS_DISPATCH(ctx, hs_dcsr_gather_cpu(A->nsend, A->send_idx, x, A->send_dev),
                         hs_dcsr_gather_cuda(ctx->cuda, A->stream, A->nsend, A->send_idx, x, A->send_dev)));
    return hs_mem_copy_async(ctx, A->send_host, A->send_dev, (size_t)A->nsend * sizeof(double), HS_COPY_D2H, A->stream);
}

static int post(hs_dcsr *A)
{
    int n = 0;
    for (int i = 0; i < A->nrecv_nb; i++)
        HS_MPI_CHECK(MPI_Irecv(A->recv_host + A->recv_off[i], (int)(A->recv_off[i + 1] - A->recv_off[i]), MPI_DOUBLE,
                               A->recv_rank[i], DCSR_TAG, A->comm, &A->reqs[n++]));
    for (int i = 0; i < A->nsend_nb; i++)
        HS_MPI_CHECK(MPI_Isend(A->send_host + A->send_off[i], (int)(A->send_off[i + 1] - A->send_off[i]), MPI_DOUBLE,
                               A->send_rank[i], DCSR_TAG, A->comm, &A->reqs[n++]));
    return HS_OK;
}

/* Wait for the ghosts and make them visible to the context stream (the ghost vector is contiguous
 * in receive order, so unpacking is one copy). */
static int finish(hs_dcsr *A)
{
    hs_ctx *ctx = A->ctx;
    HS_MPI_CHECK(MPI_Waitall(A->nrecv_nb + A->nsend_nb, A->reqs, MPI_STATUSES_IGNORE));
    if (!HS_ON_GPU(ctx) || A->nghost == 0) return HS_OK;
    HS_CHECK(hs_mem_copy_async(ctx, A->ghost_dev, A->recv_host, (size_t)A->nghost * sizeof(double), HS_COPY_H2D, A->stream));
    HS_CHECK(hs_event_record(ctx, A->ev_ghost, A->stream));
    return hs_stream_wait_event(ctx, NULL, A->ev_ghost);
}

int hs_dcsr_spmv(hs_dcsr *A, double alpha, const double *x, double beta, double *y)
{
    if (!A) return hs_input_error("hs_dcsr_spmv", 0, "A", "is NULL");
    if (A->nrecv_nb == 0 && A->nsend_nb == 0) return hs_csr_spmv(A->diag, alpha, x, beta, y);
    int gpu = HS_ON_GPU(A->ctx);
    HS_CHECK(pack(A, x));
    /* on the GPU the diagonal block is queued first and runs while the host talks to MPI; the side
     * stream's sync also retires the previous call's ghost upload before recv_host is reused */
    if (gpu) HS_CHECK(hs_csr_spmv(A->diag, alpha, x, beta, y));
    if (gpu) HS_CHECK(hs_stream_sync(A->ctx, A->stream));
    HS_CHECK(post(A));
    if (!gpu) HS_CHECK(hs_csr_spmv(A->diag, alpha, x, beta, y));
    HS_CHECK(finish(A));
    if (A->off) HS_CHECK(hs_csr_spmv(A->off, alpha, A->ghost_dev, 1.0, y));
    return HS_OK;
}

/* ------------------------------------------------------------------ operator and queries */

static int dcsr_apply(void *data, const double *x, double *y) { return hs_dcsr_spmv(data, 1.0, x, 0.0, y); }
static int dcsr_diag(void *data, double *d) { return hs_csr_diagonal(((hs_dcsr *)data)->diag, d); }

hs_linop hs_dcsr_linop(hs_dcsr *A)
{
    hs_linop op = {A ? A->ctx : NULL, A ? A->comm : MPI_COMM_NULL, A ? A->nrows_local : 0, A, dcsr_apply, dcsr_diag};
    return op;
}

void hs_dcsr_get_info(const hs_dcsr *A, hs_dcsr_info *info)
{
    memset(info, 0, sizeof *info);
    if (!A) return;
    info->row_start = A->row_start;
    info->nrows_local = A->nrows_local;
    info->nrows_global = A->nrows_global;
    info->nghost = A->nghost;
    info->nsend = A->nsend;
    info->nnz_diag = A->diag ? A->diag->nnz : 0;
    info->nnz_off = A->off ? A->off->nnz : 0;
    info->off_rows = A->off ? A->off->nrows : 0;
    info->nrecv_neighbours = A->nrecv_nb;
    info->nsend_neighbours = A->nsend_nb;
}

hs_csr *hs_dcsr_diag_block(hs_dcsr *A) { return A ? A->diag : NULL; }
