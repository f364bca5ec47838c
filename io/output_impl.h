/* Internal pieces of the output layer: the writer object, the per-format backends, library checks. */
#ifndef HS_OUTPUT_IMPL_H
#define HS_OUTPUT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "io/output.h"
#include "kernels/config.h"
#include "kernels/version.h"
#include "kernels/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HS_WRITER_MAX_VARS 64
#define HS_IO_NAME_MAX 64
#define HS_SOURCE_ATTR hs_source_attribute() /* version and git hash, from kernels/version.c */

/* A variable as every rank knows it (broadcast from rank 0 after a resume). */
typedef struct hs_writer_var {
    char name[HS_IO_NAME_MAX];
    int dtype;          /* hs_dtype: HS_F64 or HS_F32 */
    int time_dependent;
    int id;             /* the backend's handle (NetCDF varid); rank 0 only (every rank in a collective file) */
    int grid;           /* 0: the desc's grid; HS_GRID_SERIES: (time) only; HS_GRID_STATIONS: (time, station) */
} hs_writer_var;

#define HS_GRID_SERIES (-1)
#define HS_GRID_STATIONS (-2)
#define HS_GRID_MESH_NODE (-3)
#define HS_GRID_MESH_CELL (-4)
#define HS_WRITER_MAX_GRIDS 8              /* extra grids; with the main one grids[0 .. 8] */
#define HS_WRITER_MAX_XDIMS (3 * HS_WRITER_MAX_GRIDS)

/* A dimension of an extra grid that the main grid does not have (a face or an own dimension). */
typedef struct hs_writer_dim {
    char name[HS_IO_NAME_MAX];
    int axis;                       /* 0 = x, 1 = y, 2 = z */
    int kind;                       /* HS_STAGGER_FACE or HS_STAGGER_OWN */
    int periodic;                   /* FACE: the last face left out */
    int64_t n;
    double *coords, *edges;         /* rank 0 (every rank in a collective file): n and n + 1 values */
    char units[HS_IO_NAME_MAX];
    char long_name[2 * HS_IO_NAME_MAX];
    char positive[16];              /* CF positive ("down"): a Z axis; "": none */
    double shift;                   /* COMODO c_grid_axis_shift (-0.5 for FACE); 0: none */
} hs_writer_dim;

/* A rectilinear grid of the file: grids[0] is the main one (desc), grids[1 ..] the extra ones. */
typedef struct hs_writer_grid {
    char name[HS_IO_NAME_MAX];
    int xdim[3];                    /* per axis: -1 the main grid's dimension, else an index into xdims */
    int64_t n[3];                   /* points per axis (1 beyond ndim) */
    const char *dim_name[3];        /* names per axis (pointers into the writer) */
    const double *edges[3];         /* rank 0 (all in a collective file): n + 1 cell edges per axis */
    const char *location;           /* its SGRID location when the file has a grid topology, else NULL */
} hs_writer_grid;

/* The unstructured mesh of a file (desc->mesh), assembled on rank 0. */
typedef struct hs_writer_mesh {
    char name[HS_IO_NAME_MAX];
    int dim;                        /* 2 triangles, 3 tetrahedra */
    int ncoord;                     /* 2 or 3 coordinates per node */
    int vtu;                        /* VTU companion at close */
    int64_t nnodes, ncells;         /* global counts (every rank) */
    char units[HS_IO_NAME_MAX];
    double *xyz;                    /* rank 0: 3 coordinates per node (z = 0 for a planar mesh) */
    int32_t *conn;                  /* rank 0: dim + 1 node indices per cell */
    int32_t *region;                /* rank 0: region per cell */
} hs_writer_mesh;

struct hs_writer_backend;

struct hs_writer {
    hs_ctx *ctx;
    const struct hs_writer_backend *be;
    void *bs;                       /* backend state, rank 0 only (every rank in a collective file) */
    int par;                        /* 1: a collective file: every rank has it open through the parallel
                                     * library and calls every backend function with the same arguments;
                                     * put_block writes each rank's own block.  0: rank 0 alone */
    int64_t ncollective;            /* collective block writes done (HDF5: those the library reports it did
                                     * collectively); tests check that the collective path was taken */
    char *path, *partial;
    char *history;                  /* the full `history` line written at open */
    int ndim;
    int64_t n[3];
    char dim_names[3][HS_IO_NAME_MAX];
    int has_time;                   /* a record dimension exists */
    char rec_name[HS_IO_NAME_MAX];  /* its name ("time", "iteration") */
    int rec_is_time;                /* its units are CF time units ("UNIT since DATE") */
    double *edges[3];               /* rank 0 (every rank in a collective file): cell edges (n[d] + 1) for the
                                     * bounds and the XDMF nodes */
    int has_area;                   /* x and y are lengths in m: a cell_area(y, x) variable, CF cell_measures */
    int deflate;
    int nvars;
    hs_writer_var vars[HS_WRITER_MAX_VARS];
    int64_t nrec;                   /* records begun; the current one is nrec - 1 */
    double *times;                  /* rank 0 (every rank in a collective file): the time of every record */
    int64_t times_cap;
    void *gather;                   /* rank 0: the assembled global array for put_block */
    void *scratch;                  /* rank 0: one rank's block while assembling */
    size_t gather_size, scratch_size;
    int nonfinite;                  /* every rank: a record held NaN or Inf (the run stops) */
    int64_t nstations;              /* stations declared (0: none) */
    char st_dim[HS_IO_NAME_MAX];    /* their dimension name ("station") */
    int st_ncoord;                  /* 1..3: S_x, S_y, S_z */
    int ngrids;                     /* rectilinear grids: the main one (when ndim > 0) and the extra ones */
    hs_writer_grid grids[HS_WRITER_MAX_GRIDS + 1];
    int nxdims;
    hs_writer_dim xdims[HS_WRITER_MAX_XDIMS];
    int sgrid;                      /* the file carries the SGRID topology variable "grid" */
    int has_mesh;
    hs_writer_mesh mesh;
};

/* One file format, driven on rank 0 only; every function returns an hs status.  In a collective
 * file (w->par) every rank calls every function with the same arguments, and the data of create
 * (coordinates), def_stations, put_time and put are written from rank 0: the other ranks take part
 * in the collective writes with nothing (put's data is NULL there); put_block writes every rank's
 * own block. */
typedef struct hs_writer_backend {
    const char *name;
    /* Create w->partial and write dimensions, coordinates and global attributes. */
    int (*create)(hs_writer *w, const hs_output_desc *desc);
    /* Reopen w->partial, drop records with time > `time`, fill w->vars, w->nvars, w->times, w->nrec. */
    int (*reopen)(hs_writer *w, const hs_output_desc *desc, double time);
    int (*def_var)(hs_writer *w, hs_writer_var *v, const char *units, const char *long_name,
                   const char *standard_name);
    int (*put_time)(hs_writer *w, int64_t record, double t);
    /* Write a whole variable (the current record when time-dependent). */
    int (*put)(hs_writer *w, const hs_writer_var *v, const void *data);
    int (*attr_text)(hs_writer *w, const char *name, const char *value);
    /* Dimensions, names and coordinates of the stations, global featureType (w->st_* are set). */
    int (*def_stations)(hs_writer *w, const hs_station_desc *sd);
    int (*attr_real)(hs_writer *w, const char *name, double value);
    /* Make everything written so far durable and readable as it stands (library buffers and
     * metadata to the file; the driver then fsyncs it), so that a process killed later leaves a
     * file that a restart can reopen at this state. */
    int (*sync)(hs_writer *w);
    /* Close the file; it stays at w->partial. */
    int (*close)(hs_writer *w);
    /* After the rename to w->path: companion files (the .xmf); may be NULL. */
    int (*finish)(hs_writer *w);
    /* Close without reporting errors (error paths). */
    void (*discard)(hs_writer *w);
    /* 1 when built on the library's MPI-parallel flavour: the file can be collective (w->par). */
    int parallel;
    /* Collective files only: this rank's block [off, off + cnt) (x, y, z; unused dimensions 0 and
     * 1) of grid variable v, the current record when time-dependent; an empty block takes part in
     * the collective write with nothing. */
    int (*put_block)(hs_writer *w, const hs_writer_var *v, const int64_t off[3], const int64_t cnt[3], const void *data);
} hs_writer_backend;

#if HS_HAVE_NETCDF
extern const hs_writer_backend hs_writer_netcdf;
#endif
#if HS_HAVE_HDF5
extern const hs_writer_backend hs_writer_hdf5;
#endif

/* Extra grids and meshes (io/output_grids.c). */
/* Rank 0 (every rank in a collective file, after hs_writer_share_grids): validate desc->grids and
 * desc->mesh shape data, fill w->grids, w->xdims (coordinates and edges) and w->sgrid; every rank
 * calls it (the names and sizes are the same on all). */
int hs_writer_setup_grids(hs_writer *w, const hs_output_desc *desc);
/* A collective file: rank 0's extra coordinates and edges to every rank. */
int hs_writer_share_grids(hs_writer *w);
/* Collective: gather desc->mesh to rank 0 (w->mesh), checked (every node and cell once, corners in range). */
int hs_writer_gather_mesh(hs_writer *w, const hs_output_desc *desc);
void hs_writer_free_grids(hs_writer *w);
/* 1 when `name` is a dimension, coordinate, bounds or topology name of the extra grids or the mesh. */
int hs_writer_grid_owns_name(const hs_writer *w, const char *name);
/* The names the mesh defines ("nmesh_node", "mesh_node_x" ...): what = "node_dim", "cell_dim",
 * "corner_dim", "x", "y", "z", "conn", "types", "region", "xdmf_nodes". */
void hs_writer_mesh_name(const hs_writer *w, const char *what, char *buf, size_t len);
/* "face" (dim 2) or "volume" (dim 3): the UGRID location of the cells. */
const char *hs_writer_mesh_cells(const hs_writer *w);
/* SGRID attribute text of w->grids (name: "node_dimensions", "face_dimensions" ...; NULL when the
 * topology has no such attribute); `i` walks the attributes: returns 0 past the last. */
int hs_writer_sgrid_attr(const hs_writer *w, int i, const char **name, char *value, size_t len);
/* Coordinates of extra dimension k (n values) and its bounds (n x 2, malloc'd). */
double *hs_writer_xdim_bounds(const hs_writer *w, int k);
/* The Conventions attribute: CF, plus SGRID or UGRID when the file uses them. */
const char *hs_writer_conventions(const hs_writer *w);
/* Grid index of a variable's rectilinear grid (0 main, 1.. extra), or -1 for other variables. */
static inline int hs_writer_var_rgrid(const hs_writer_var *v) { return v->grid >= 0 ? v->grid : -1; }
/* Classify a variable of an old file by its dimension names (file order, record dimension left
 * out): the grid index, HS_GRID_MESH_NODE/CELL, or -100 when no extra grid or mesh matches. */
int hs_writer_match_dims(const hs_writer *w, int rank, const char *const *names);
/* VTU companion of a mesh file (rank 0, after the rename). */
int hs_writer_write_vtu(hs_writer *w);

/* Shared helpers (io/output.c). */
/* Elements of one spatial slab (all spatial dims; 1 when ndim = 0). */
int64_t hs_writer_plane_size(const hs_writer *w);
/* Spatial extent of a variable in file order (slowest first, no record): a grid variable's z, y,
 * x; a station variable's stations; a series none.  Returns the rank (0..3). */
int hs_writer_var_space(const hs_writer *w, const hs_writer_var *v, int64_t len[3]);
/* Elements of the largest record a variable of the file can have (grids, mesh, stations). */
int64_t hs_writer_max_var_size(const hs_writer *w);
/* Elements of one record of a variable. */
int64_t hs_writer_var_size(const hs_writer *w, const hs_writer_var *v);
/* Station variable names: "S_name", "S_x" ... (what = "name", "x", "y", "z", "strlen"). */
void hs_writer_station_name(const hs_writer *w, const char *what, char *buf, size_t len);
/* "S_x S_y S_name": the coordinates attribute of station variables. */
void hs_writer_station_coords(const hs_writer *w, char *buf, size_t len);
/* 1 when `name` is one the writer defines itself: the record coordinate, a dimension or its
 * coordinate, a bounds variable (x_bnds) or the bounds dimension (bnds). */
int hs_writer_is_own_name(const hs_writer *w, const char *name);
/* The name of dimension d's bounds variable ("x_bnds") in buf. */
void hs_writer_bounds_name(const hs_writer *w, int d, char *buf, size_t len);
/* Cell bounds of dimension d as n[d] x 2 values (malloc'd; NULL when out of memory). */
double *hs_writer_bounds(const hs_writer *w, int d);
/* Rank 0: the x-y area of every cell (m2), n[1] x n[0] values with x fastest (malloc'd). */
double *hs_writer_cell_area(const hs_writer *w);
#define HS_CELL_AREA "cell_area"
/* Append a record time on rank 0. */
int hs_writer_push_time(hs_writer *w, double t);
/* "2026-01-02T03:04:05Z: <command line>" (malloc'd). */
char *hs_io_history_line(const char *command);
/* strdup that raises a runtime error on failure. */
int hs_io_strdup(const char *s, char **out);
/* Chunk shape for a record: one record in time, the whole plane otherwise, shrunk along the
 * slowest spatial dimensions until a chunk stays below HDF5's 4 GiB limit (dims in file order). */
void hs_io_chunk_dims(const int64_t *file_dims, int rank, int has_time, size_t elem, size_t *chunk);
int hs_io_file_exists(const char *path);
/* 1 when the MPI library cannot open a file of this name through MPI-IO (Open MPI 4: names over
 * HS_MPIIO_NAME_MAX characters); such a file is written through rank 0 instead. */
#define HS_MPIIO_NAME_MAX 200
int hs_io_mpiio_name_too_long(const char *name);
/* fsync a file by name (data on disk before a rename or a checkpoint refers to it). */
int hs_io_fsync_path(const char *path);

/* Library checks: every NetCDF/HDF5 call goes through one of these; the message names the call
 * and the file. */
#if HS_HAVE_NETCDF
int hs_nc_fail(int status, const char *call, const char *path, const char *file, int line);
#define HS_NC_CHECK(call, path)                                                           \
    do {                                                                                  \
        int hs_nc_rc_ = (call);                                                           \
        if (hs_nc_rc_ != 0) return hs_nc_fail(hs_nc_rc_, #call, (path), __FILE__, __LINE__); \
    } while (0)
#endif

#if HS_HAVE_HDF5
#include <hdf5.h>
#include <hdf5_hl.h> /* H5DS: dimension scales (the netCDF-4 dimensions of our HDF5 output) */
/* Turn HDF5's automatic error printing off (once per process). */
void hs_h5_quiet(void);
/* The innermost description of HDF5's pending error ("" when none), and the stack cleared. */
void hs_h5_reason(char *buf, size_t len);
/* The failure as one message, with the innermost HDF5 error description when there is one:
 * "HDF5 call CALL failed on PATH: REASON". */
int hs_h5_fail(const char *call, const char *path, const char *file, int line);
/* hs_h5_fail with CALL made from a printf format (the call and the object it worked on). */
int hs_h5_failf(const char *path, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* For calls returning herr_t / htri_t / ssize_t: negative is failure.  `call` is the call itself,
 * whose text the message quotes: a status kept in a variable goes to HS_H5_CHECK_AS. */
#define HS_H5_CHECK(call, path)                                                           \
    do {                                                                                  \
        if ((call) < 0) return hs_h5_fail(#call, (path), __FILE__, __LINE__);             \
    } while (0)
/* For a status kept from an earlier call (its value is used too, or objects are closed before the
 * check): the format after `path` names that call, and its object where it helps, e.g.
 * HS_H5_CHECK_AS(e, path, "H5Aexists (attribute %s)", name).  HS_H5_CHECK(e, path) named the
 * variable: "HDF5 call e failed on out.h5". */
#define HS_H5_CHECK_AS(status, path, ...)                                                 \
    do {                                                                                  \
        if ((status) < 0) return hs_h5_failf((path), __FILE__, __LINE__, __VA_ARGS__);    \
    } while (0)
/* For calls returning an hid_t: assign and check. */
#define HS_H5_ID(var, call, path)                                                         \
    do {                                                                                  \
        if (((var) = (call)) < 0) return hs_h5_fail(#call, (path), __FILE__, __LINE__);  \
    } while (0)
#endif

#if HS_HAVE_HDF5
/* Attributes on an HDF5 object (a file id means its root group); an existing one is replaced.
 * Text is stored as a fixed-length, NUL-terminated string. */
int hs_h5_attr_text(hid_t obj, const char *name, const char *value, const char *path);
int hs_h5_attr_double(hid_t obj, const char *name, double value, const char *path);
int hs_h5_attr_int64(hid_t obj, const char *name, int64_t value, const char *path);
/* A text attribute (fixed or variable length) as a malloc'd string in *out (NULL when absent). */
int hs_h5_read_text(hid_t obj, const char *name, char **out, const char *path);
/* 1 when `path` is an HDF5 file we can open (never prints). */
int hs_h5_is_hdf5(const char *path);
/* File access properties shared by our writers (format bounds that allow large attributes). */
int hs_h5_fapl(hid_t *fapl, const char *path);
/* The NAME that netCDF-4 (netCDF-C, h5netcdf) gives the dimension scale of a dimension without a
 * coordinate variable (followed by its length in 10 characters): such a dataset holds no data and
 * is no variable. */
#define HS_H5_DIM_ONLY "This is a netCDF dimension but not a netCDF variable."
/* 1 when dataset `ds` is such a dimension-only scale (never prints). */
int hs_h5_is_dim_only(hid_t ds);
#endif

#ifdef __cplusplus
}
#endif
#endif
