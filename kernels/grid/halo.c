/* Halo exchange of structured-grid fields: face by face over MPI through pinned buffers, overlapped with interior work. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/grid/grid.h"
#include "kernels/grid/grid_impl.h"
#include "kernels/memory.h"
#include "kernels/dispatch.h"

/* One face of one dimension: what goes to (and comes from) the neighbour on that side. */
typedef struct {
    int dim, side;       /* side 0: low, 1: high */
    int peer;            /* neighbour rank, MPI_PROC_NULL at a non-periodic edge */
    int self;            /* the neighbour is this rank (periodic, one rank): a device copy */
    size_t cap;          /* elements the buffers hold (the corners-on size, the larger) */
    void *dsend, *drecv; /* device staging (the host buffers themselves on the CPU backend) */
    void *hsend, *hrecv; /* pinned host buffers for MPI */
    void *packed;        /* event: the send data has reached hsend */
    MPI_Request sreq, rreq;
    int sent;
} face_t;

typedef struct {
    face_t face[3][2];
    int corners;
    int in_flight;       /* between begin and end */
    int group;           /* the exchange in flight is a group's, led by this field (hs_halo_exchange_group_begin) */
    int tag0;            /* tag base of the exchange in flight (from the decomposition's sequence of begins) */
    void *stream;        /* high-priority stream of the exchange */
    void *ev_ready;      /* context stream work before begin */
    void *ev_done;       /* exchange's device work finished */
} plan_t;

static hs_ctx *ctx_of(const hs_field *f) { return f->d->ctx; }
static MPI_Datatype mpi_type(hs_dtype t) { return t == HS_F64 ? MPI_DOUBLE : t == HS_F16 ? MPI_UINT16_T : MPI_FLOAT; }

/* A face exchanges when the dimension has a halo and a neighbour on that side. */
static int face_active(const hs_field *f, const face_t *fc) { return f->hw[fc->dim] > 0 && fc->peer != MPI_PROC_NULL; }

/* The box a phase of dimension d sends (send = 1: interior layers) or receives (halo layers), in
 * local cell coordinates: transverse dimensions span the interior, plus the halos of dimensions
 * exchanged before when corners are on. */
static void face_region(const hs_field *f, int d, int side, int send, int corners, int64_t start[3], int64_t ext[3])
{
    const int64_t *l = f->local;
    for (int e = 0; e < 3; e++) {
        int wide = corners && e < d;
        start[e] = wide ? -f->hw[e] : 0;
        ext[e] = l[e] + (wide ? 2 * f->hw[e] : 0);
    }
    int64_t h = f->hw[d];
    ext[d] = h;
    if (send) start[d] = side ? l[d] - h : 0;
    else start[d] = side ? l[d] : -h;
}

static size_t region_count(const int64_t ext[3]) { return (size_t)(ext[0] * ext[1] * ext[2]); }

static char *field_at(const hs_field *f, const int64_t start[3])
{
    return (char *)f->data + hs_field_index(f, start[0], start[1], start[2]) * hs_field_esize(f);
}

/* Box between the field (strided) and a contiguous buffer; to_field picks the direction. */
static hs_grid_copy buffer_box(const hs_field *f, const int64_t ext[3], int to_field)
{
    hs_grid_copy b = {ext[0], ext[1], ext[2], 0, 0, 0, 0};
    int64_t fy = hs_field_stride_y(f), fz = hs_field_stride_z(f), by = ext[0], bz = ext[0] * ext[1];
    b.src_sy = to_field ? by : fy;
    b.src_sz = to_field ? bz : fz;
    b.dst_sy = to_field ? fy : by;
    b.dst_sz = to_field ? fz : bz;
    return b;
}

static int copy_box(hs_field *f, void *stream, const void *src, void *dst, const hs_grid_copy *b)
{
    hs_ctx *ctx = ctx_of(f);
    return HS_DISPATCH(ctx, hs_grid_copy_box_cpu(hs_field_esize(f), src, dst, b),
                       hs_grid_copy_box_cuda(ctx->cuda, stream, hs_field_esize(f), src, dst, b));
}

static int event_done(hs_ctx *ctx, void *event, int *done)
{
    *done = 1;
    return HS_DISPATCH(ctx, HS_OK, hs_grid_event_done_cuda(event, done));
}

static int event_create(hs_ctx *ctx, void **event)
{
    *event = NULL;
    return HS_DISPATCH(ctx, HS_OK, hs_grid_event_create_cuda(event));
}

static int event_wait(hs_ctx *ctx, void *event)
{
    return HS_DISPATCH(ctx, HS_OK, hs_grid_event_sync_cuda(event));
}

/* ------------------------------------------------------------------ setup */

size_t hs_halo_plan_bytes(void) { return sizeof(plan_t); }

size_t hs_halo_face_elems(const hs_field *f, int d, int side)
{
    face_t fc = {.dim = d, .side = side, .peer = f->d->neighbor[d][side]};
    if (!face_active(f, &fc) || fc.peer == ctx_of(f)->rank) return 0;
    int64_t start[3], ext[3];
    face_region(f, d, side, 1, 1, start, ext);
    return region_count(ext);
}

static int face_setup(hs_field *f, plan_t *p, int d, int side)
{
    hs_ctx *ctx = ctx_of(f);
    face_t *fc = &p->face[d][side];
    fc->dim = d, fc->side = side;
    fc->peer = f->d->neighbor[d][side];
    fc->sreq = fc->rreq = MPI_REQUEST_NULL;
    fc->self = fc->peer == ctx->rank;
    if (!face_active(f, fc) || fc->self) return HS_OK;
    fc->cap = hs_halo_face_elems(f, d, side);
    if (fc->cap > INT_MAX)
        return HS_FAIL(HS_ERR_RUNTIME, "a halo face of %zu elements is too large for one MPI message", fc->cap);
    size_t bytes = fc->cap * hs_field_esize(f);
    HS_CHECK(hs_host_alloc_pinned(ctx, bytes, &fc->hsend));
    HS_CHECK(hs_host_alloc_pinned(ctx, bytes, &fc->hrecv));
    HS_CHECK(event_create(ctx, &fc->packed));
    if (HS_ON_GPU(ctx)) {
        HS_CHECK(hs_mem_alloc(ctx, bytes, &fc->dsend));
        HS_CHECK(hs_mem_alloc(ctx, bytes, &fc->drecv));
    } else {
        fc->dsend = fc->hsend;
        fc->drecv = fc->hrecv;
    }
    return HS_OK;
}

static int plan_stream(hs_ctx *ctx, void **stream)
{
    *stream = NULL;
    return HS_DISPATCH(ctx, HS_OK, hs_grid_stream_create_cuda(stream));
}

int hs_halo_setup(hs_field *f)
{
    hs_ctx *ctx = ctx_of(f);
    plan_t *p = calloc(1, sizeof *p);
    if (!p) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a halo plan");
    f->impl = p;
    HS_CHECK(plan_stream(ctx, &p->stream));
    HS_CHECK(event_create(ctx, &p->ev_ready));
    HS_CHECK(event_create(ctx, &p->ev_done));
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) HS_CHECK(face_setup(f, p, d, s));
    return HS_OK;
}

void hs_halo_teardown(hs_field *f)
{
    plan_t *p = f->impl;
    hs_ctx *ctx = ctx_of(f);
    if (!p) return;
    if (p->stream) hs_stream_sync(ctx, p->stream);
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            face_t *fc = &p->face[d][s];
            if (HS_ON_GPU(ctx)) {
                hs_mem_free(ctx, fc->dsend);
                hs_mem_free(ctx, fc->drecv);
            }
            hs_host_free_pinned(ctx, fc->hsend);
            hs_host_free_pinned(ctx, fc->hrecv);
            hs_event_destroy(ctx, fc->packed);
        }
    hs_event_destroy(ctx, p->ev_ready);
    hs_event_destroy(ctx, p->ev_done);
    hs_stream_destroy(ctx, p->stream);
    free(p);
    f->impl = NULL;
}

int hs_field_set_corners(hs_field *f, int on)
{
    plan_t *p = f->impl;
    if (p->in_flight) return hs_input_error("field", 0, NULL, "corners cannot change while a halo exchange is in flight");
    p->corners = on != 0;
    return HS_OK;
}

/* ------------------------------------------------------------------ one phase: dimensions dlo..dhi */

/* Tags name the exchange (tag0, a multiple of 8 below 32768, the least MPI_TAG_UB MPI allows) and
 * the direction a message travels: 2d for towards low, 2d + 1 for towards high.  The sends of
 * several fields in flight are posted as their packs finish, in any order; the exchange's tag keeps
 * each message to the receive of its own field. */
static int send_tag(const plan_t *p, const face_t *fc) { return p->tag0 + 2 * fc->dim + fc->side; }
static int recv_tag(const plan_t *p, const face_t *fc) { return p->tag0 + 2 * fc->dim + 1 - fc->side; }

static int post_send(hs_field *f, face_t *fc, int count)
{
    const plan_t *p = f->impl;
    HS_MPI_CHECK(MPI_Isend(fc->hsend, count, mpi_type(f->dtype), fc->peer, send_tag(p, fc), f->d->cart, &fc->sreq));
    fc->sent = 1;
    return HS_OK;
}

/* Queue the pack of a remote face and its copy to the host; or, for a self face, the whole copy. */
static int face_start(hs_field *f, plan_t *p, face_t *fc)
{
    int64_t sstart[3], rstart[3], ext[3];
    int d = fc->dim, s = fc->side;
    if (fc->self) {
        /* my low halo is what my low neighbour (me) sends from its high side, and vice versa */
        face_region(f, d, 1 - s, 1, p->corners, sstart, ext);
        face_region(f, d, s, 0, p->corners, rstart, ext);
        hs_grid_copy b = {ext[0], ext[1], ext[2], hs_field_stride_y(f), hs_field_stride_z(f), hs_field_stride_y(f),
                    hs_field_stride_z(f)};
        return copy_box(f, p->stream, field_at(f, sstart), field_at(f, rstart), &b);
    }
    face_region(f, d, s, 1, p->corners, sstart, ext);
    hs_grid_copy b = buffer_box(f, ext, 0);
    HS_CHECK(copy_box(f, p->stream, field_at(f, sstart), fc->dsend, &b));
    HS_CHECK(hs_mem_copy_async(ctx_of(f), fc->hsend, fc->dsend, region_count(ext) * hs_field_esize(f), HS_COPY_D2H,
                               p->stream));
    return hs_event_record(ctx_of(f), fc->packed, p->stream);
}

/* Post the sends whose data is on the host; wait for it first when `block`. */
static int send_ready(hs_field *f, plan_t *p, int dlo, int dhi, int block)
{
    for (int d = dlo; d <= dhi; d++)
        for (int s = 0; s < 2; s++) {
            face_t *fc = &p->face[d][s];
            if (!face_active(f, fc) || fc->self || fc->sent) continue;
            int done = 1;
            if (block) HS_CHECK(event_wait(ctx_of(f), fc->packed));
            else HS_CHECK(event_done(ctx_of(f), fc->packed, &done));
            if (!done) continue;
            int64_t st[3], ext[3];
            face_region(f, d, s, 1, p->corners, st, ext);
            HS_CHECK(post_send(f, fc, (int)region_count(ext)));
        }
    return HS_OK;
}

static int phase_begin(hs_field *f, plan_t *p, int dlo, int dhi)
{
    for (int d = dlo; d <= dhi; d++)
        for (int s = 0; s < 2; s++) {
            face_t *fc = &p->face[d][s];
            fc->sent = 0;
            if (!face_active(f, fc) || fc->self) continue;
            int64_t st[3], ext[3];
            face_region(f, d, s, 0, p->corners, st, ext);
            HS_MPI_CHECK(MPI_Irecv(fc->hrecv, (int)region_count(ext), mpi_type(f->dtype), fc->peer, recv_tag(p, fc),
                                   f->d->cart, &fc->rreq));
        }
    for (int d = dlo; d <= dhi; d++)
        for (int s = 0; s < 2; s++)
            if (face_active(f, &p->face[d][s])) HS_CHECK(face_start(f, p, &p->face[d][s]));
    return send_ready(f, p, dlo, dhi, 0);
}

static int phase_end(hs_field *f, plan_t *p, int dlo, int dhi)
{
    HS_CHECK(send_ready(f, p, dlo, dhi, 1));
    for (int d = dlo; d <= dhi; d++)
        for (int s = 0; s < 2; s++) {
            face_t *fc = &p->face[d][s];
            if (!face_active(f, fc) || fc->self) continue;
            HS_MPI_CHECK(MPI_Wait(&fc->rreq, MPI_STATUS_IGNORE));
            int64_t st[3], ext[3];
            face_region(f, d, s, 0, p->corners, st, ext);
            HS_CHECK(hs_mem_copy_async(ctx_of(f), fc->drecv, fc->hrecv, region_count(ext) * hs_field_esize(f),
                                       HS_COPY_H2D, p->stream));
            hs_grid_copy b = buffer_box(f, ext, 1);
            HS_CHECK(copy_box(f, p->stream, fc->drecv, field_at(f, st), &b));
        }
    for (int d = dlo; d <= dhi; d++)
        for (int s = 0; s < 2; s++)
            if (p->face[d][s].sent) HS_MPI_CHECK(MPI_Wait(&p->face[d][s].sreq, MPI_STATUS_IGNORE));
    return HS_OK;
}

/* ------------------------------------------------------------------ the exchange */

int hs_halo_exchange_begin(hs_field *f)
{
    plan_t *p = f->impl;
    hs_ctx *ctx = ctx_of(f);
    if (p->in_flight) return hs_input_error("field", 0, NULL, "halo exchange begun twice without an end");
    /* the previous exchange's copies out of the receive buffers must be over before messages land there */
    HS_CHECK(hs_stream_sync(ctx, p->stream));
    HS_CHECK(hs_event_record(ctx, p->ev_ready, NULL));
    HS_CHECK(hs_stream_wait_event(ctx, p->stream, p->ev_ready));
    p->in_flight = 1;
    p->tag0 = 8 * (int)(f->d->halo_seq++ % 4096u);
    return p->corners ? phase_begin(f, p, 0, 0) : phase_begin(f, p, 0, f->d->ndim - 1);
}

int hs_halo_exchange_end(hs_field *f)
{
    plan_t *p = f->impl;
    hs_ctx *ctx = ctx_of(f);
    if (!p->in_flight) return hs_input_error("field", 0, NULL, "halo exchange ended without a begin");
    p->in_flight = 0;
    if (p->corners) {
        HS_CHECK(phase_end(f, p, 0, 0));
        for (int d = 1; d < f->d->ndim; d++) {
            HS_CHECK(phase_begin(f, p, d, d));
            HS_CHECK(phase_end(f, p, d, d));
        }
    } else {
        HS_CHECK(phase_end(f, p, 0, f->d->ndim - 1));
    }
    /* later work on the context stream sees the halos without the host waiting for them */
    HS_CHECK(hs_event_record(ctx, p->ev_done, p->stream));
    return hs_stream_wait_event(ctx, NULL, p->ev_done);
}

int hs_halo_exchange(hs_field *f)
{
    HS_CHECK(hs_halo_exchange_begin(f));
    return hs_halo_exchange_end(f);
}

/* ------------------------------------------------------------------ groups of fields */

/* Whether the fields move as one: the same layout, type, halo widths and corner setting as the first,
 * none in flight, and every face that exchanges a periodic image on this rank (no MPI). */
static int group_self(hs_field *const *fs, int n)
{
    const hs_field *f0 = fs[0];
    const plan_t *p0 = f0->impl;
    for (int i = 0; i < n; i++) {
        const hs_field *f = fs[i];
        const plan_t *p = f->impl;
        if (f->d != f0->d || f->dtype != f0->dtype || p->in_flight || p->corners != p0->corners ||
            hs_field_stride_y(f) != hs_field_stride_y(f0) || hs_field_stride_z(f) != hs_field_stride_z(f0))
            return 0;
        for (int d = 0; d < 3; d++) {
            if (f->hw[d] != f0->hw[d] || f->local[d] != f0->local[d]) return 0;
            for (int s = 0; s < 2; s++)
                if (face_active(f, &p->face[d][s]) && !p->face[d][s].self) return 0;
        }
    }
    return 1;
}

int hs_halo_exchange_group_begin(hs_field *const *fs, int n)
{
    if (n <= 0) return HS_OK;
    if (!group_self(fs, n)) {
        for (int i = 0; i < n; i++) HS_CHECK(hs_halo_exchange_begin(fs[i]));
        return HS_OK;
    }
    hs_field *f0 = fs[0];
    plan_t *p0 = f0->impl;
    hs_ctx *ctx = ctx_of(f0);
    const void **src = malloc(2 * (size_t)n * sizeof *src);
    void **dst = malloc(2 * (size_t)n * sizeof *dst);
    if (!src || !dst) {
        free(src);
        free(dst);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a halo group of %d fields", n);
    }
    HS_CHECK(hs_stream_sync(ctx, p0->stream));
    HS_CHECK(hs_event_record(ctx, p0->ev_ready, NULL));
    HS_CHECK(hs_stream_wait_event(ctx, p0->stream, p0->ev_ready));
    for (int i = 0; i < n; i++) ((plan_t *)fs[i]->impl)->in_flight = 1;
    p0->group = 1;
    /* the faces of a dimension, both sides and every field, as one copy of one box shape; with corners
     * the dimensions one after another on one stream, each after the halos of those before */
    int rc = HS_OK;
    for (int d = 0; d < f0->d->ndim && rc == HS_OK; d++) {
        int m = 0;
        hs_grid_copy b = {0, 0, 0, hs_field_stride_y(f0), hs_field_stride_z(f0), hs_field_stride_y(f0), hs_field_stride_z(f0)};
        for (int s = 0; s < 2; s++) {
            if (!face_active(f0, &p0->face[d][s])) continue;
            /* my low halo is what my low neighbour (me) sends from its high side, and vice versa */
            int64_t sstart[3], rstart[3], ext[3];
            face_region(f0, d, 1 - s, 1, p0->corners, sstart, ext);
            face_region(f0, d, s, 0, p0->corners, rstart, ext);
            b.ex = ext[0], b.ey = ext[1], b.ez = ext[2];
            for (int i = 0; i < n; i++) src[m] = field_at(fs[i], sstart), dst[m++] = field_at(fs[i], rstart);
        }
        if (m == 0) continue;
        rc = HS_DISPATCH(ctx, hs_grid_copy_boxes_cpu(hs_field_esize(f0), m, src, dst, &b),
                         hs_grid_copy_boxes_cuda(ctx->cuda, p0->stream, hs_field_esize(f0), m, src, dst, &b));
    }
    free(src);
    free(dst);
    return rc;
}

int hs_halo_exchange_group_end(hs_field *const *fs, int n)
{
    if (n <= 0) return HS_OK;
    plan_t *p0 = fs[0]->impl;
    if (!p0->group) {
        for (int i = 0; i < n; i++) HS_CHECK(hs_halo_exchange_end(fs[i]));
        return HS_OK;
    }
    hs_ctx *ctx = ctx_of(fs[0]);
    for (int i = 0; i < n; i++) ((plan_t *)fs[i]->impl)->in_flight = 0;
    p0->group = 0;
    HS_CHECK(hs_event_record(ctx, p0->ev_done, p0->stream));
    return hs_stream_wait_event(ctx, NULL, p0->ev_done);
}

/* ------------------------------------------------------------------ benchmark hooks */

static int copy_box_peer(hs_field *f, const void *src, void *dst, const hs_grid_copy *b)
{
    hs_ctx *ctx = ctx_of(f);
    return HS_DISPATCH(ctx, HS_FAIL(HS_ERR_RUNTIME, "the cudaMemcpy3D peer of halo packing needs the CUDA backend"),
                       hs_grid_copy_box_memcpy3d_cuda(ctx->cuda, NULL, hs_field_esize(f), src, dst, b));
}

int hs_halo_bench_pack(hs_field *f, int dim, int peer, double *bytes)
{
    plan_t *p = f->impl;
    *bytes = 0;
    for (int d = 0; d < f->d->ndim; d++)
        for (int s = 0; s < 2; s++) {
            face_t *fc = &p->face[d][s];
            if (!face_active(f, fc) || (dim >= 0 && d != dim)) continue;
            int64_t sstart[3], rstart[3], ext[3];
            face_region(f, d, fc->self ? 1 - s : s, 1, p->corners, sstart, ext);
            face_region(f, d, s, 0, p->corners, rstart, ext);
            hs_grid_copy b = buffer_box(f, ext, 0);
            void *dst = fc->dsend;
            if (fc->self) {
                b.dst_sy = hs_field_stride_y(f), b.dst_sz = hs_field_stride_z(f);
                dst = field_at(f, rstart);
            }
            if (peer) HS_CHECK(copy_box_peer(f, field_at(f, sstart), dst, &b));
            else HS_CHECK(copy_box(f, NULL, field_at(f, sstart), dst, &b));
            *bytes += 2.0 * (double)region_count(ext) * (double)hs_field_esize(f);
        }
    return HS_OK;
}

double hs_halo_message_bytes(const hs_field *f)
{
    const plan_t *p = f->impl;
    double bytes = 0;
    for (int d = 0; d < f->d->ndim; d++)
        for (int s = 0; s < 2; s++) {
            const face_t *fc = &p->face[d][s];
            if (!face_active(f, fc) || fc->self) continue;
            int64_t st[3], ext[3];
            face_region(f, d, s, 1, p->corners, st, ext);
            bytes += 2.0 * (double)region_count(ext) * (double)hs_field_esize(f);
        }
    return bytes;
}
