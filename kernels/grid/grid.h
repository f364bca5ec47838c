/* Structured grids: Cartesian domain decomposition, cell- and face-centred fields with halos, boundary
 * conditions and ghost filling, halo exchange, interior/shell split, reductions, gather/scatter. */
#ifndef HS_GRID_H
#define HS_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/context.h"

/* Widest halo a field may have (the seismic code's 8th-order stencil needs 4). */
#define HS_FIELD_MAX_HALO 8

/* A Cartesian split of a global grid of cells over the ranks of a context.
 * Dimension 0 is x and varies fastest in memory; 1D and 2D grids have size 1 (and halo 0) in the
 * unused dimensions.  Ranks are numbered as in ctx->comm (the Cartesian communicator is created
 * without reordering, so rank r of ctx->comm is rank r of cart). */
typedef struct hs_decomp {
    hs_ctx *ctx;
    int ndim;              /* 1, 2 or 3 */
    int64_t global[3];     /* cells of the whole grid per dimension */
    int procs[3];          /* ranks per dimension */
    int coords[3];         /* this rank's position in the process grid */
    int periodic[3];
    int64_t local[3];      /* cells owned by this rank */
    int64_t offset[3];     /* global index of this rank's first cell */
    int neighbor[3][2];    /* ranks in cart below [0] and above [1]; MPI_PROC_NULL at a non-periodic edge */
    MPI_Comm cart;
    unsigned halo_seq;     /* halo exchanges begun on this decomposition: their messages carry it in the tag, so
                            * that exchanges of several fields in flight at once cannot take each other's */
    int64_t *starts[3];    /* NULL: the even split of hs_decomp_create; else procs[e] + 1 box boundaries along
                            * dimension e (hs_decomp_create_split), owned by the decomposition */
} hs_decomp;

/* Split a global grid of ndim (1..3) dimensions over the ranks of ctx->comm.
 * global[ndim]: cells per dimension (>= 1).  periodic[ndim] (NULL: none) marks wrapping dimensions.
 * procs[ndim] (NULL: all 0) fixes the ranks per dimension; 0 lets MPI_Dims_create choose (and, if
 * its choice leaves a rank too few cells, the split with the smallest surface that does not).
 * min_cells (>= 1; usually the halo width) is the fewest cells a rank may own per dimension.
 * The first (global % procs) ranks of a dimension get one extra cell.
 * An impossible request is an input error saying what was asked and what would work.
 * Collective over ctx->comm. */
int hs_decomp_create(hs_ctx *ctx, int ndim, const int64_t *global, const int *periodic, const int *procs,
                     int min_cells, hs_decomp **d);
/* The same with the boxes given instead of the even split: procs[ndim] fixed (each >= 1, product
 * ctx->size) and, per used dimension e, starts[e] NULL (the even split) or procs[e] + 1 boundaries
 * 0 = starts[e][0] < starts[e][1] < ... < starts[e][procs[e]] = global[e]: the rank at process
 * coordinate c owns cells [starts[e][c], starts[e][c+1]) (the array is copied).  Every rank must
 * pass the same arguments.  Multigrid hierarchies (kernels/mg) make their coarse levels this way,
 * aligned with the fine boxes.  Collective over ctx->comm. */
int hs_decomp_create_split(hs_ctx *ctx, int ndim, const int64_t *global, const int *periodic, const int *procs,
                           const int64_t *const starts[3], hs_decomp **d);
/* The box boundaries of dimension e (0..2): starts[c] is the first cell of process coordinate c, for
 * c = 0..procs[e] (starts[procs[e]] = global[e]).  Not collective. */
void hs_decomp_starts(const hs_decomp *d, int e, int64_t *starts);
/* Collective over ctx->comm (frees the Cartesian communicator). */
void hs_decomp_destroy(hs_decomp *d);

/* The box (offset, local size) that rank `rank` of the decomposition owns.  Not collective. */
int hs_decomp_rank_box(const hs_decomp *d, int rank, int64_t offset[3], int64_t local[3]);

/* A field on a decomposition, with `halo` ghost layers on each side of each used dimension, in the
 * context's device memory.  Cell-centred (face_dim = -1): one point per cell.  Face-centred
 * (staggered, face_dim = 0, 1 or 2: the x-, y- or z-faces of a MAC grid): one point per cell face
 * normal to face_dim, so that dimension has global[face_dim] + 1 points when it is not periodic and
 * global[face_dim] when it is (the last face is the first one's periodic image).  Point p of the face
 * dimension sits at p * dx (cell p's low face); each rank owns the low face of each of its cells, and
 * the last rank of a non-periodic face dimension also owns the global high face.  The face shared by
 * two ranks is therefore owned by the upper one and is the lower one's first high ghost.
 * Layout: x fastest, then y, then z, over the allocated box (local + 2 halo in used dimensions).
 * Rows are `pitch` elements apart and the allocation starts early enough that every row's interior
 * point x = 0 lies on a 128-byte boundary (a warp's loads and stores of a row then touch whole cache
 * lines), unless that padding would cost more than an eighth of the field. */
typedef struct hs_field {
    hs_decomp *d;
    hs_dtype dtype;     /* HS_F64 or HS_F32 */
    int halo;           /* ghost layers requested */
    int face_dim;       /* -1: cell-centred; 0, 1, 2: face-centred normal to that dimension */
    int hw[3];          /* ghost layers per dimension: halo in used dimensions, 0 in unused ones */
    int64_t global[3];  /* points of the whole grid: d->global, + 1 along a non-periodic face_dim */
    int64_t local[3];   /* points this rank owns: d->local, + 1 along face_dim on the last rank of a non-periodic one */
    int64_t offset[3];  /* global index of this rank's first point (d->offset) */
    int64_t alloc[3];   /* local + 2*hw */
    int64_t pitch;      /* elements from one row to the next (>= alloc[0]) */
    size_t count;       /* elements from data on: pitch*alloc[1]*alloc[2] (row padding included) */
    void *data;         /* device; element (-hw, -hw, -hw) */
    void *base;         /* the allocation (data minus the alignment lead) */
    void *impl;         /* exchange buffers, requests, streams, events */
} hs_field;

/* Allocate a field of type t (HS_F64 or HS_F32) with halo (0..HS_FIELD_MAX_HALO) ghost layers,
 * zero-filled, halos included.  A halo wider than some rank's cells in a dimension that exchanges
 * (several ranks, or periodic) is an input error.  Collective over the decomposition (it is a
 * local operation, but every rank must agree on the arguments). */
int hs_field_create(hs_decomp *d, hs_dtype t, int halo, hs_field **f);
/* The same for a face-centred field: face_dim = -1 is hs_field_create, 0..ndim-1 the faces normal to
 * that dimension (see hs_field).  Everything below (exchange, corners, interior copies, reductions,
 * gather/scatter, ghost filling) works on the points the field has.  Collective as hs_field_create. */
int hs_field_create_staggered(hs_decomp *d, hs_dtype t, int halo, int face_dim, hs_field **f);
void hs_field_destroy(hs_field *f);
/* What hs_field_create_staggered(d, t, halo, face_dim) allocates on this rank, added to *device and
 * *host in bytes as the allocators take them (hs_mem_footprint): the storage (halos, row padding and
 * alignment lead) and the halo plan's buffers (pinned host, and device staging on a GPU), for
 * estimates made before anything is allocated.  The arguments must be valid.  Not collective. */
void hs_field_footprint(hs_decomp *d, hs_dtype t, int halo, int face_dim, double *device, double *host);
/* The storage bytes such a field will have on this rank (its hs_field_storage_bytes), before it exists. */
size_t hs_field_layout_bytes(hs_decomp *d, hs_dtype t, int halo, int face_dim);

/* The points (offset, local size) of the field that rank `rank` owns.  Not collective. */
int hs_field_rank_box(const hs_field *f, int rank, int64_t offset[3], int64_t local[3]);

/* Linear element index of local point (i, j, k); each index may range over -hw..local+hw-1. */
static inline size_t hs_field_index(const hs_field *f, int64_t i, int64_t j, int64_t k)
{
    return (size_t)(((k + f->hw[2]) * f->alloc[1] + (j + f->hw[1])) * f->pitch + (i + f->hw[0]));
}

/* Element strides of the allocated layout in y and z (x stride is 1). */
static inline int64_t hs_field_stride_y(const hs_field *f) { return f->pitch; }
static inline int64_t hs_field_stride_z(const hs_field *f) { return f->pitch * f->alloc[1]; }

/* Bytes per element. */
static inline size_t hs_field_esize(const hs_field *f) { return hs_dtype_size(f->dtype); }

/* Copy the local interior (the points this rank owns, f->local) to/from a host array of
 * local[0]*local[1]*local[2] elements (x fastest).  Return when the host data may be reused / is
 * complete.  Not collective. */
int hs_field_set_interior(hs_field *f, const void *host);
int hs_field_get_interior(hs_field *f, void *host);
/* Copy a contiguous device array of the local interior (x fastest, the field's type) into the
 * field's interior, on the context's stream (no host wait).  Not collective. */
int hs_field_load_interior(hs_field *f, const void *contiguous);
/* The converse: the field's interior into a contiguous device array (x fastest), on the context's
 * stream.  Not collective. */
int hs_field_store_interior(hs_field *f, void *contiguous);

/* Fill the whole allocation (halos too) with one value, on the context's stream.  Not collective. */
int hs_field_fill(hs_field *f, double value);

/* Exchange the halo cells of every face with the neighbours: periodic images where periodic;
 * halos at non-periodic global edges are left untouched for boundary conditions.
 * begin packs the faces on the device (on the field's own high-priority stream, after the work
 * already queued on the context's stream), copies them to pinned host buffers (no CUDA-aware MPI
 * is assumed) and posts MPI_Irecv/MPI_Isend; it returns without waiting so that the caller can
 * queue interior work on the context stream meanwhile (that work must not write the cells being
 * sent, i.e. the outer `halo` layers of the interior).  end waits for the messages, copies them
 * back and unpacks; work queued on the context stream afterwards sees valid halos.
 * With corners on (hs_field_set_corners), edges and corners are filled too by exchanging one
 * dimension after another, each including the halos received before (9/27-point stencils); then
 * begin only starts the first dimension and end does the rest.
 * A periodic dimension with one rank is handled by a device copy, without MPI.
 * Several fields may be in flight at once (begin h, begin u, ..., interior work, end h, end u, ...):
 * each exchange's messages are tagged with its place in the decomposition's sequence of begins.
 * Collective over the decomposition: every rank calls begin/end for the same fields in the same
 * order. */
int hs_halo_exchange_begin(hs_field *f);
int hs_halo_exchange_end(hs_field *f);
/* begin + end. */
int hs_halo_exchange(hs_field *f);
/* The exchange of n fields at once (the populations of a lattice, the components of a velocity).
 * Where they share one layout, type, halo and corner setting and every exchanging face is a periodic
 * image on this rank, the faces of a dimension move for all of them in one copy launch (with corners,
 * one launch a dimension); 19 fields of six faces had been 114 launches of a few microseconds of work
 * each, a third of a periodic lattice Boltzmann step on the GPU.  Otherwise it is begin / end of each
 * field in turn.  The same rules as begin / end otherwise: collective, interior work between. */
int hs_halo_exchange_group_begin(hs_field *const *fs, int n);
int hs_halo_exchange_group_end(hs_field *const *fs, int n);
/* Whether exchanges also fill edges and corners (default off).  Not collective, but every rank must
 * use the same setting.  Not allowed while an exchange is in flight. */
int hs_field_set_corners(hs_field *f, int on);

/* Reductions over the interior points of all ranks (each point once: a face shared by two ranks
 * counts on its owner only), accumulated in double with compensated
 * summation and combined over the ranks in rank order: every rank gets the same value, and the
 * value is bitwise the same run to run on the same rank count and device.  Collective. */
typedef enum { HS_FIELD_SUM, HS_FIELD_MIN, HS_FIELD_MAX, HS_FIELD_NORM2, HS_FIELD_MAXABS } hs_field_op;
int hs_field_reduce(hs_field *f, hs_field_op op, double *result);
int hs_field_sum(hs_field *f, double *result);
int hs_field_max(hs_field *f, double *result);
int hs_field_min(hs_field *f, double *result);
/* sqrt(sum x^2) */
int hs_field_norm2(hs_field *f, double *result);
/* max |x| */
int hs_field_maxabs(hs_field *f, double *result);

/* Gather the global interior (x fastest, f->global[0]*f->global[1]*f->global[2] points: the cells,
 * or the faces of a face-centred field) into host memory on rank `root` (global_host is ignored
 * elsewhere), and the converse.  Collective. */
int hs_field_gather(hs_field *f, int root, void *global_host);
int hs_field_scatter(hs_field *f, int root, const void *global_host);

/* ------------------------------------------------------------------ boxes, boundaries, ghosts */

/* A box of local points [lo, hi) per dimension (indices as in hs_field_index). */
typedef struct hs_box {
    int64_t lo[3], hi[3];
} hs_box;

/* The whole local interior of a field: [0, local). */
static inline hs_box hs_field_interior_box(const hs_field *f)
{
    hs_box b = {{0, 0, 0}, {f->local[0], f->local[1], f->local[2]}};
    return b;
}

/* The points of a box (0 when it is empty along some dimension). */
static inline int64_t hs_box_points(const hs_box *b)
{
    int64_t n = 1;
    for (int d = 0; d < 3; d++) n *= b->hi[d] > b->lo[d] ? b->hi[d] - b->lo[d] : 0;
    return n;
}

/* hs_field_store_interior and hs_field_load_interior for a box of local points (ghosts allowed):
 * the box to/from a contiguous device array (x fastest), on the context's stream.  Not collective. */
int hs_field_store_box(hs_field *f, const hs_box *box, void *contiguous);
int hs_field_load_box(hs_field *f, const hs_box *box, const void *contiguous);

/* A field's storage apart from the field (checkpoints that are copied back, or swapped back in on
 * their last use without a copy): hs_field_storage_bytes is the size of the field's allocation
 * (alignment lead included) that hs_mem_alloc must give; hs_field_storage_copy copies the field's
 * whole allocation to (to_storage) or from such a buffer; hs_field_storage_swap exchanges the
 * field's allocation with *storage (the field keeps its layout and halo plan, which read the data
 * where it is at each exchange).  On the context's stream; not collective. */
size_t hs_field_storage_bytes(const hs_field *f);
int hs_field_storage_copy(hs_field *f, void *storage, int to_storage);
void hs_field_storage_swap(hs_field *f, void **storage);

/* Boundary kinds per face of the global domain. */
typedef enum {
    HS_BC_PERIODIC = 0,  /* the dimension wraps: halo exchange fills the ghosts (the decomposition must be periodic there) */
    HS_BC_DIRICHLET = 1, /* value g on the boundary */
    HS_BC_NEUMANN = 2,   /* outward normal derivative g (value units per length unit) */
    HS_BC_CUSTOM = 3     /* the solver's hook fills the ghosts */
} hs_bc_kind;

struct hs_bc;
/* A solver-specific boundary: fill the ghost layers of face (dim, side) of f (hs_field_ghost_box
 * names them) on the field's backend, with homogeneous as given to hs_field_fill_ghosts.  Called on
 * the host, only on ranks that touch that face, in the order of hs_field_fill_ghosts.  Returns 0 or
 * an hs error code. */
typedef int (*hs_bc_hook)(hs_field *f, int dim, int side, const struct hs_bc *bc, int homogeneous, void *user);

/* One face's boundary condition. */
typedef struct hs_bc {
    hs_bc_kind kind;
    double value;        /* g: Dirichlet value or Neumann outward derivative (unused for periodic) */
    hs_bc_hook hook;     /* HS_BC_CUSTOM only */
    void *user;          /* handed to hook */
} hs_bc;

/* The ghost layers outside face (dim, side) of the local box: hw[dim] layers, spanning the whole
 * allocation (ghosts included) in the other dimensions.  Not collective. */
hs_box hs_field_ghost_box(const hs_field *f, int dim, int side);

/* Fill the ghost layers of f at the non-periodic faces of the global domain (faces inside the
 * domain are left to halo exchange), dimension 0 first, low side first, each face over the whole
 * allocation in the other dimensions (so edges and corners get ghosts of ghosts).  g is bc.value,
 * or 0 when homogeneous = 1 (the linear part, for implicit operators).  For the m-th ghost layer
 * (m = 0 next to the face), with dx[dim] the point spacing (length units):
 *   cell-centred dimension (the wall halfway between points): mirror u(-1-m) of u(m);
 *     Dirichlet u(-1-m) = 2 g - u(m);  Neumann u(-1-m) = u(m) + (2 m + 1) dx g;
 *   face dimension of a face-centred field (the wall on point 0, resp. the last point):
 *     Dirichlet u(0) = g and u(-1-m) = 2 g - u(1+m);  Neumann u(-1-m) = u(1+m) + 2 (m + 1) dx g;
 *   (the high side alike, mirrored).  These read up to hw (cell) or hw + 1 (face) points from the
 *   wall: on a rank that owns fewer, fill after the halo exchange.
 * HS_BC_CUSTOM calls bc.hook for that face.  A periodic kind on a non-periodic decomposition
 * dimension (or the converse), or CUSTOM without a hook, is an input error.  On the context's
 * stream.  Not collective. */
int hs_field_fill_ghosts(hs_field *f, const hs_bc bc[3][2], const double dx[3], int homogeneous);

/* Overlapping halo exchange with interior work: the box of local points at least `margin` from
 * every face that exchanges (a neighbour rank or a periodic image), and the shell around it (up to
 * 6 disjoint slabs, z faces first, which together with the interior cover the local box once).
 * Returns the number of shell boxes; when a dimension is too thin to have an inside, the interior
 * is empty and the one shell box is the whole local box.  Not collective. */
int hs_field_split_boxes(const hs_field *f, int margin, hs_box *interior, hs_box shell[6]);

/* Benchmark hook: pack the faces of dimension dim (-1: all) that an exchange would send or copy
 * into the field's send buffers (or halos, for self copies), on the context's stream so that the
 * context timer brackets it; *bytes is what the packing reads plus writes.  peer = 1 packs with
 * cudaMemcpy3DAsync instead of our kernels (the peer version for the benchmark; CUDA only,
 * HS_ERR_RUNTIME elsewhere).  Not collective. */
int hs_halo_bench_pack(hs_field *f, int dim, int peer, double *bytes);
/* Bytes this rank sends plus receives over MPI in one exchange (self copies excluded). */
double hs_halo_message_bytes(const hs_field *f);

#endif
