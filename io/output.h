/* Gridded output files: CF-1.8 NetCDF-4 and HDF5 (+ XDMF companion), written by every solver. */
#ifndef HS_OUTPUT_H
#define HS_OUTPUT_H

#include <math.h>
#include <stdint.h>

#include "kernels/context.h"

typedef enum { HS_FORMAT_NETCDF = 0, HS_FORMAT_HDF5 = 1 } hs_output_format;

/* The CF version the files claim: the newest that cfchecker 4.1 validates; nothing later is used. */
#define HS_CF_CONVENTIONS "CF-1.8"

/* An extra rectilinear grid beside the main one (hs_output_desc.grids): the faces of a MAC grid
 * (hs_field_create_staggered: x-faces have n[0] + 1 points along x when x is not periodic) or a
 * grid of other sizes (a coarser one).  It has the main grid's number of dimensions; along each
 * axis it takes the main grid's dimension, the main grid's cell faces, or a dimension of its own. */
typedef enum {
    HS_STAGGER_CELL = 0,  /* the main grid's dimension itself (its name, coordinates and bounds) */
    HS_STAGGER_FACE = 1,  /* the main grid's cell faces: its n + 1 cell edges (n when periodic) */
    HS_STAGGER_OWN = 2    /* a dimension of its own: size, coordinates and edges as given */
} hs_stagger;

typedef struct hs_grid_desc {
    const char *name;              /* the grid's name (letters, digits, '_'): its XDMF grid ("u_faces") */
    hs_stagger stagger[3];         /* per axis, 0 = x */
    const char *dim_names[3];      /* FACE, OWN: the new dimension's name ("x_face", "xc"); the name of a
                                    * dimension that an earlier extra grid declared shares it (same kind,
                                    * size and coordinates); CELL: ignored */
    int periodic[3];               /* FACE: 1 for a periodic axis: n points, the last face (the first one's
                                    * periodic image) left out, as hs_field_create_staggered stores it */
    int64_t n[3];                  /* OWN: the size (>= 1) */
    const double *coords[3];       /* OWN (rank 0 is enough): coordinates, NULL: grid indices */
    const double *edges[3];        /* OWN (rank 0 is enough): cell edges (n + 1), NULL: midway */
    const char *coord_units[3];    /* FACE, OWN: NULL: the main dimension's units */
    const char *coord_long_names[3]; /* FACE, OWN: NULL: "x_face coordinate" */
    const char *coord_positive[3]; /* FACE, OWN: CF `positive` of a vertical dimension ("down" for depth, as
                                    * the main grid's coord_positive), which makes it a Z axis; NULL: none */
    double axis_shift[3];          /* OWN: the COMODO c_grid_axis_shift written on the dimension (0.5: each
                                    * point half a main cell beyond the main grid's point of the same
                                    * index, as xgcm reads it); 0: none.  FACE dimensions always say -0.5 */
} hs_grid_desc;

/* An unstructured mesh of triangles (dim 2) or tetrahedra (dim 3) with a region id per cell
 * (hs_output_desc.mesh; a file of its own: ndim = 0).  Every rank passes the nodes and cells it
 * owns, with their global indices: each node and each cell is given by exactly one rank, the
 * indices of all ranks together are 0 .. N-1 (nodes) and 0 .. M-1 (cells), and a cell names its
 * corners by global node index, so the file is the same whatever the rank count.  At most
 * 2^31 - 1 nodes (the connectivity is stored as 32-bit integers). */
typedef struct hs_mesh_desc {
    const char *name;              /* the topology variable and the prefix of the mesh's names; NULL: "mesh" */
    int dim;                       /* 2: triangles (3 corners), 3: tetrahedra (4 corners, VTK order) */
    const char *units;             /* node coordinate units; NULL: "m" */
    int64_t nnodes;                /* nodes this rank owns */
    const int64_t *node_index;     /* their global indices */
    const double *x, *y, *z;       /* their coordinates; z NULL for a planar triangle mesh */
    int64_t ncells;                /* cells this rank owns */
    const int64_t *cell_index;     /* their global indices */
    const int64_t *cell_nodes;     /* corners: dim + 1 global node indices per cell (anticlockwise for a triangle) */
    const int32_t *region;         /* region id per cell; NULL: all 0 */
    int vtu;                       /* 1: also write VTU files at close (see the mesh file layouts below) */
} hs_mesh_desc;

/* What a file holds: a rectilinear grid of 1..3 spatial dimensions (dimension 0 is x and varies
 * fastest in memory), an unlimited time dimension, and global metadata. */
typedef struct hs_output_desc {
    const char *path;              /* file name, extension included (.nc / .h5) */
    hs_output_format format;
    const char *title;             /* CF global attribute `title` */
    const char *history;           /* the command line that made the file */
    const char *params_ini;        /* resolved parameters (hs_params_to_ini), stored as an attribute */
    const char *run_id;            /* NULL or the run's identity (global attribute hpcsim_run_id; a restart keeps it) */
    int ndim;                      /* 1..3 spatial dimensions; 0 for time series only */
    const char *dim_names[3];      /* e.g. "x", "y", "z" */
    int64_t n[3];                  /* global sizes */
    const double *coords[3];       /* coordinate values (host, length n[d]; rank 0 is enough) */
    const char *coord_units[3];    /* e.g. "m" */
    const char *coord_long_names[3];
    const char *coord_positive[3]; /* CF `positive` of a vertical coordinate ("down" for depth), which also
                                    * makes it the Z axis; NULL: none (axes X, Y, Z in order) */
    const double *edges[3];        /* cell edges (n[d] + 1 values; rank 0 is enough), written as the CF bounds
                                    * `x_bnds`; NULL: midway between coordinates, end cells as wide as their
                                    * neighbours (a single cell is 1 wide) */
    const char *time_units;        /* units of the record coordinate; NULL: no record dimension.  CF time units
                                    * ("seconds since 2000-01-01 00:00:00") make it a time axis (calendar, axis
                                    * T, standard_name time); any other ("1") a plain counter coordinate */
    const char *calendar;          /* the time axis's CF calendar; NULL: "standard" */
    const char *record_name;       /* name of the record dimension and coordinate; NULL: "time" ("iteration"
                                    * for a record axis that counts training iterations) */
    const char *record_long_name;  /* its long_name; NULL: the record name */
    int deflate_level;             /* 0 = none, 1..9 zlib level (NetCDF/HDF5 chunked) */
    int parallel;                  /* hs_output_parallel (rank 0's value counts): how the ranks write */
    int ngrids;                    /* extra grids beside the main one (needs ndim >= 1), at most 8; 0: none */
    const hs_grid_desc *grids;     /* their descriptions (the same on every rank, coordinates on rank 0) */
    const hs_mesh_desc *mesh;      /* an unstructured mesh (needs ndim = 0); NULL: none */
} hs_output_desc;

/* How the ranks write a file.  AUTO (0, the default): collectively, every rank its own blocks, where
 * the build links the MPI-parallel library of the format (features hdf5_parallel, netcdf_parallel),
 * else through rank 0.  OFF: through rank 0 (gathered) in any build.  The file's contents are the
 * same either way. */
typedef enum { HS_OUTPUT_PARALLEL_AUTO = 0, HS_OUTPUT_PARALLEL_OFF = 1 } hs_output_parallel;
#define HS_OUTPUT_PARALLEL_CHOICES "auto|off"

typedef struct hs_writer hs_writer;

/* File layouts (both formats carry the same attributes):
 *  NetCDF-4 (CF-1.8): dimensions time (unlimited; or the record_name), z, y, x (slowest first;
 *    desc dimension 0 is the last) and bnds = 2; coordinate variables with units, long_name, axis
 *    and bounds = "x_bnds" (x_bnds(x, bnds): the cell edges); time with units, calendar =
 *    "standard", axis = "T", standard_name (a counter record axis such as `iteration` has units
 *    and long_name only); data variables (time, z, y, x) or (z, y, x) with units, long_name,
 *    standard_name, chunked one record per chunk; global Conventions, title, source ("hpcsim
 *    VERSION (git HASH)"), history ("ISO-TIME: command line"), hpcsim_parameters.
 *  HDF5: the same as datasets in the root group (data variables [time, z, y, x], extendible in
 *    time, each with a `dimensions` attribute such as "time z y x"), plus a group /xdmf for the
 *    viewers: x, y, z as cell edges (n + 1 nodes) and, per time-dependent variable, one virtual
 *    dataset per record (/xdmf/T/0, /xdmf/T/1, ...: views of T[r], no copy of the data), and
 *    PATH-without-.h5.xmf: XDMF 3 with a temporal collection of uniform grids, each a 3DRectMesh
 *    of node dimensions cells + 1 (a 2-D grid is one layer of cells between two equal z nodes,
 *    a 1-D grid also one cell wide in y) with VXVYVZ geometry, and cell-centred scalar
 *    attributes; references are "FILE.h5:/path", FILE without a directory (relative to the
 *    .xmf).  Written at close through PATH.xmf.tmp; ParaView's XDMF 3 readers (Xdmf3ReaderS/T)
 *    and its legacy XDMF reader show it in 2-D and 3-D. */

/* Create the file (replacing any old one only at hs_writer_close time: data go to PATH.partial
 * first and are renamed at close, so a failed run leaves no half-written file under the final
 * name).  Collective over ctx->comm.  Where the build links the format's MPI-parallel library and
 * desc->parallel is AUTO, every rank opens the file (MPI-IO) and writes its own blocks
 * collectively (a collective file); otherwise rank 0 alone has it open and the blocks are
 * gathered to it.  In a collective file every metadata call is collective in the library too, so
 * names, units and desc's texts must be the same on every rank (values documented as "rank 0 is
 * enough", the history time stamp, attribute values and record times are taken from rank 0).  A
 * missing library (NetCDF or HDF5 not built in) is an input error naming the build feature.
 * Under Open MPI 4 a file whose PATH.partial is longer than 200 characters is gathered (its MPI-IO
 * crashes on longer names). */
int hs_writer_open(hs_ctx *ctx, const hs_output_desc *desc, hs_writer **w);

/* 1 when the file is collective (every rank writes its own blocks), 0 when it goes through rank 0.
 * The same on every rank. */
int hs_writer_parallel(const hs_writer *w);
/* One line for `hpcsim info`: how each format built in writes under output.parallel = auto
 * ("NetCDF collective (parallel NetCDF-4), HDF5 through rank 0 (serial HDF5)" and the like). */
const char *hs_output_parallel_summary(void);

/* Declare a variable on the grid (time-dependent or not) before the first hs_writer_put.
 * standard_name may be NULL.  dtype HS_F64 or HS_F32.  Returns its id. Collective. */
int hs_writer_def_var(hs_writer *w, const char *name, const char *units, const char *long_name,
                      const char *standard_name, hs_dtype dtype, int time_dependent, int *varid);

/* Seconds in one unit of a CF time coordinate "UNIT since DATE" (UNIT: seconds, minutes, hours,
 * days or their UDUNITS abbreviations; DATE starting with a digit): 60 for "minutes since 2000-01-01";
 * 0 when `units` is not one.  Lenient about the date, for the time axes of files it reads. */
double hs_time_unit_seconds(const char *units);
/* Whether `units` is a CF time unit whose reference time CF readers decode: hs_time_unit_seconds's
 * UNIT since Y-M-D, then optionally (after a blank or 'T') h:m[:s[.frac]], then optionally a zone:
 * Z, UTC or +-hh[[:]mm].  The date must exist in CF's standard calendar, the one this program's
 * time axes declare (calendar = "standard"): no year 0, month 1..12, day 1..the month's length
 * (Gregorian leap years from 1582-10-15, Julian ones before), not 1582-10-05..14; h < 24, m < 60,
 * s < 60 (no leap seconds); a zone of at most 23:59.  For the units this program writes.  When it
 * returns 0 and `why` is not NULL, `why` (why_size bytes) holds the reason for a date or time out
 * of range ("day 29 is not 1..28 in February 2001 (...)"), or "" when the form itself is wrong. */
int hs_time_units_writable(const char *units, char *why, size_t why_size);

/* Bytes the NetCDF library keeps of a gridded variable written through rank 0, `records` records
 * of `plane` bytes each (its chunk cache), for the solvers' memory estimates. */
double hs_output_netcdf_cache_bytes(double plane, double records);

/* Append a time record with simulated time `t` (in the file's time units). Collective. */
int hs_writer_begin_step(hs_writer *w, double t);

/* Write a variable's values for the current record: `global` is the whole grid in host memory
 * on rank 0 (x fastest); other ranks pass NULL.  Rank 0 writes it (in a collective file too, where
 * the other ranks take part with nothing).  Collective. */
int hs_writer_put(hs_writer *w, int varid, const void *global);

/* Write a block: this rank's part [offset, offset+count) of the global grid (x fastest).  Every
 * rank calls it with its own part; the writer gathers or writes in parallel.  Collective.
 * `local` is host memory; entries of offset/count beyond ndim are ignored; a rank may own an
 * empty block.  The blocks must lie inside the grid and add up to it (checked on rank 0: a
 * runtime error on every rank otherwise).  In a collective file every rank writes its block
 * itself (HDF5: hyperslab selections, H5FD_MPIO_COLLECTIVE; NetCDF: nc_put_vara in NC_COLLECTIVE
 * access, zero counts for an empty block), and no rank holds more than its own block; otherwise
 * every block goes through rank 0 (point-to-point, one block in flight), which writes the record. */
int hs_writer_put_block(hs_writer *w, int varid, const int64_t offset[3], const int64_t count[3], const void *local);

/* ------------------------------------------------------------------ extra grids
 * Variables on an extra grid (desc->grids) are written with hs_writer_put and hs_writer_put_block
 * in that grid's shape (x fastest), like those of the main grid.  File layouts, beside the main
 * grid's (which stays as it was):
 *  NetCDF: each new dimension (x_face ...) with its coordinate variable (units, long_name, axis and
 *    bounds x_face_bnds(x_face, bnds): a face's bounds are the half cells on either side of it,
 *    clipped at a wall) and, on a face dimension, the COMODO attribute c_grid_axis_shift = -0.5 (the
 *    face is its cell's low side: xgcm reads it); data variables (time, z, y_face, x) and so on.
 *    When the file has a face dimension along every axis of a 2-D or 3-D main grid it also carries an
 *    SGRID-0.3 grid topology: `int grid` with cf_role = "grid_topology", topology_dimension,
 *    node_dimensions (the face dimensions), face_dimensions (2-D) or volume_dimensions (3-D) with
 *    padding "none" ("high" when periodic), edge1/edge2 (2-D) or face1..3 and edge1..3 (3-D)
 *    dimensions and node/face(/volume) coordinates; each variable of a grid at an SGRID location
 *    carries grid = "grid" and location ("face", "edge1", "node", "volume", "face1" ...), and the
 *    Conventions attribute reads "CF-1.8 SGRID-0.3".
 *  HDF5: the same datasets and attributes (`dimensions` names each variable's dimensions), and in
 *    the XDMF companion one temporal collection of 3DRectMesh grids per extra grid, named after it,
 *    beside the main grid's (nodes /xdmf/x_face ...: the edges of the face's half cells). */
/* A variable on the grid named `grid` (NULL or "": the main grid), as hs_writer_def_var.  After a
 * resume an existing variable must be on the same grid.  Collective. */
int hs_writer_def_grid_var(hs_writer *w, const char *grid, const char *name, const char *units, const char *long_name,
                           const char *standard_name, hs_dtype dtype, int time_dependent, int *varid);

/* ------------------------------------------------------------------ unstructured meshes
 * File layouts of desc->mesh named M (default "mesh"), dim 2 (triangles, "face") or 3 (tetrahedra,
 * "volume"):
 *  NetCDF (UGRID-1.0; Conventions "CF-1.8 UGRID-1.0"): dimensions nM_node, nM_face (nM_volume),
 *    nM_face_nodes = 3 (nM_volume_nodes = 4); `int M` with cf_role = "mesh_topology",
 *    topology_dimension, node_coordinates = "M_node_x M_node_y [M_node_z]",
 *    face_node_connectivity = "M_face_nodes" and face_dimension (3-D: volume_node_connectivity =
 *    "M_volume_nodes", volume_shape_type = "M_volume_types", volume_dimension); double
 *    M_node_x(nM_node) ... with units and long_name; int M_face_nodes(nM_face, nM_face_nodes) with
 *    cf_role and start_index = 0; byte M_volume_types(nM_volume) (flag 0 = tetrahedron); int
 *    M_region(nM_face) with mesh and location; data variables (time, nM_node) or (time, nM_face)
 *    with mesh = "M", location = "node" / "face" / "volume" and, on nodes, coordinates.
 *  HDF5: the same datasets and attributes, plus /xdmf/M_nodes [N, 3] (the node coordinates
 *    interleaved, z = 0 for a planar mesh), and an XDMF companion whose grids have Topology
 *    Triangle or Tetrahedron (M_face_nodes), Geometry XYZ, attribute `region` and node- (Center
 *    "Node") and cell-centred (Center "Cell") fields.
 *  VTU (mesh->vtu = 1, either format; written by rank 0 at close from the finished file): PATH
 *    without extension + "_NNNNNN.vtu" for every record (VTK XML UnstructuredGrid, raw appended
 *    binary, UInt64 headers: Points, Cells, CellData region and the cell fields, PointData the node
 *    fields; static fields in every record) and PATH-stem.pvd, a collection with each record's time;
 *    a file without records: PATH-stem.vtu alone. */
typedef enum { HS_MESH_NODE = 0, HS_MESH_CELL = 1 } hs_mesh_location;
/* A variable on the mesh's nodes or cells (triangles or tetrahedra).  dtype HS_F64 or HS_F32.
 * Collective. */
int hs_writer_def_mesh_var(hs_writer *w, const char *name, const char *units, const char *long_name,
                           const char *standard_name, hs_mesh_location where, hs_dtype dtype, int time_dependent,
                           int *varid);
/* A mesh variable's values (the current record when time-dependent): every rank passes the values
 * of the nodes (cells) it owns, by global index; rank 0 gathers and writes them (in a collective
 * file too).  Every node (cell) exactly once, else a runtime error on every rank.  hs_writer_put
 * also takes a mesh variable (rank 0's values in global order).  Collective. */
int hs_writer_put_mesh(hs_writer *w, int varid, int64_t nlocal, const int64_t *index, const void *values);

/* ------------------------------------------------------------------ scalar time series
 * A diagnostic (energy, mass, a residual) with dimensions (time) only, beside the gridded fields
 * of the file or alone (a desc with ndim = 0).  NetCDF: `double NAME(time)` with units,
 * long_name and standard_name (when given), no cell_measures; HDF5: dataset NAME [time],
 * extendible, `dimensions` = "time".  Not drawn in the XDMF companion (it has no grid).  Needs a
 * record dimension (time_units).  Collective. */
int hs_writer_def_series(hs_writer *w, const char *name, const char *units, const char *long_name,
                         const char *standard_name, int *varid);
/* The current record's value of a series: rank 0's `value` is written (the others' is ignored).
 * Also takes a time-dependent variable of a file without a grid (ndim = 0).  Collective. */
int hs_writer_put_scalar(hs_writer *w, int varid, double value);

/* ------------------------------------------------------------------ station data
 * Receivers (stations) sampled every record, as a CF discrete-sampling-geometry collection of
 * featureType timeSeries (orthogonal multidimensional representation).  Only in a file without a
 * grid (desc ndim = 0, with time_units): CF allows one featureType per file and no gridded data
 * beside it.  With dimension name S (default "station"):
 *  NetCDF: dimensions time (unlimited), S, S_strlen; char S_name(S, S_strlen) with cf_role =
 *    "timeseries_id"; double S_x(S), S_y(S)[, S_z(S)] with units and long_name; data variables
 *    NAME(time, S) with coordinates = "S_x S_y [S_z] S_name"; global featureType = "timeSeries".
 *  HDF5: the same datasets (S_name a fixed-length string dataset [S]), each with `dimensions`. */
typedef struct hs_station_desc {
    const char *dim_name;          /* "station" when NULL; "receiver" for a seismic code */
    int64_t n;                     /* number of stations, >= 1 */
    const char *const *names;      /* n unique, non-empty names (rank 0 is enough) */
    const double *x, *y, *z;       /* n coordinates each (rank 0 is enough); y and z may be NULL */
    const char *units;             /* coordinate units; NULL: "m" */
} hs_station_desc;
/* Declare the stations (once, before any station variable).  Collective. */
int hs_writer_def_stations(hs_writer *w, const hs_station_desc *sd);
/* A time-dependent variable over (time, station).  dtype HS_F64 or HS_F32.  Collective. */
int hs_writer_def_station_var(hs_writer *w, const char *name, const char *units, const char *long_name,
                              const char *standard_name, hs_dtype dtype, int *varid);
/* The current record's values: every rank passes the values (of the variable's dtype) of the
 * stations it owns, by station index; rank 0 gathers them and writes (in a collective file too:
 * one record of stations is small).  Every station must be given
 * by exactly one rank (a runtime error on every rank otherwise).  Collective. */
int hs_writer_put_stations(hs_writer *w, int varid, int64_t nlocal, const int64_t *index, const void *values);

/* Add a global text or number attribute (before the first put). */
int hs_writer_attr_text(hs_writer *w, const char *name, const char *value);
int hs_writer_attr_real(hs_writer *w, const char *name, double value);

/* Make the records written so far durable: library buffers and metadata flushed, the file
 * fsynced.  A process killed after this call leaves PATH.partial readable with at least these
 * records, so the driver calls it before each checkpoint it writes.  Collective. */
int hs_writer_sync(hs_writer *w);

/* Flush, close and rename to the final name.  Collective. */
int hs_writer_close(hs_writer *w);

/* Close without renaming (the run stopped on a signal: the file stays PATH.partial), and reopen
 * such a file to continue after a restart: records with time > `time` are dropped (overwritten
 * by the records the restarted run writes), variables are looked up by name.  Collective.
 * After a resume, hs_writer_def_var of an existing name returns its id (the same ids as the first
 * run) after checking dtype and time dependence; `history` gains the restarted run's line.  A
 * finished PATH (no PATH.partial) is moved back to PATH.partial and continued; with neither, a
 * new file is started.  A grid that differs from the file's is an input error, and the
 * suspended file is left as it was. */
int hs_writer_suspend(hs_writer *w);
int hs_writer_resume(hs_ctx *ctx, const hs_output_desc *desc, double time, hs_writer **w);
/* Give up on a file (error paths): close it and delete PATH.partial; PATH is left untouched.  Not
 * collective (every rank should call it, but none waits for the others), except in a collective
 * file, whose close is collective in the library: there every rank must call it. */
void hs_writer_discard(hs_writer *w);
/* Records in the file so far (every rank). */
int64_t hs_writer_records(const hs_writer *w);
/* 1 once a put met a NaN or Inf value (every rank alike).  Such a put still writes the record,
 * then fails with a runtime error naming the variable, the first bad point and the record, so
 * that the caller can keep the file for inspection (hs_writer_close) and stop. */
int hs_writer_nonfinite(const hs_writer *w);
/* Id of an already defined variable (after resume), or -1. */
int hs_writer_var_id(hs_writer *w, const char *name);

/* Reading back (solvers' file inputs, the surrogate, restarts): open a NetCDF or HDF5 file made by
 * any tool, look up a variable's shape and read it whole (as double), one time record or a block. */
typedef struct hs_reader hs_reader;
int hs_reader_open(const char *path, hs_reader **r);
/* Shape in file order (slowest first, as ncdump shows it); returns the rank. */
int hs_reader_var_shape(hs_reader *r, const char *name, int64_t shape[8], int *rank);
int hs_reader_read(hs_reader *r, const char *name, double *out);                /* whole variable */
/* The whole variable with the CF conventions applied (hs_reader_packing_of, hs_reader_apply_cf):
 * packed values unpacked (stored * scale_factor + add_offset) and missing points (_FillValue, any
 * value of missing_value, outside valid_min/valid_max/valid_range) returned as NaN, so that a
 * caller's check for finite values refuses them.  For fields that solvers take as input. */
int hs_reader_read_cf(hs_reader *r, const char *name, double *out);
int hs_reader_read_record(hs_reader *r, const char *name, int64_t record, double *out); /* first dim fixed */
/* The block [start, start + count) of a variable, one start and count per dimension (file order, as
 * many as the variable has), into out (count's product, the last dimension fastest); a block outside
 * the variable is an input error naming the file and variable. */
int hs_reader_read_slab(hs_reader *r, const char *name, const int64_t *start, const int64_t *count, double *out);
/* 1 when the file has a variable (dataset) `name`, else 0 (no error raised). */
int hs_reader_has_var(hs_reader *r, const char *name);
/* The names of a variable's dimensions in file order (NetCDF: its dimensions; HDF5: the words of
 * its `dimensions` attribute, as our writer stores them, else "dim0", "dim1", ...); returns the rank. */
#define HS_READER_NAME_MAX 64
int hs_reader_var_dims(hs_reader *r, const char *name, char dims[8][HS_READER_NAME_MAX], int *rank);
/* A text attribute of variable `var` (NULL: a global attribute) into buf (truncated to len - 1
 * characters); *found = 0 and buf = "" when there is none.  Errors only for unreadable files. */
int hs_reader_attr_text(hs_reader *r, const char *var, const char *attr, char *buf, size_t len, int *found);
/* A numeric attribute of variable `var` (NULL: global), its first value as double (scale_factor,
 * add_offset, _FillValue); *found = 0 when there is none or it is not numeric. */
int hs_reader_attr_real(hs_reader *r, const char *var, const char *attr, double *value, int *found);
/* A numeric attribute's values (up to max of them, as double) into values; *count = how many were
 * taken (0 when there is none or it is not numeric).  Errors only for unreadable files. */
int hs_reader_attr_reals(hs_reader *r, const char *var, const char *attr, double *values, int max, int *count);
/* How a variable's stored values become physical ones (CF): missing values (compared as stored:
 * _FillValue, every value of missing_value, and anything outside valid_min / valid_max /
 * valid_range), _Unsigned = "true" on a signed integer type (stored negatives are 2^bits above,
 * in the data and in those attributes alike), packing. */
#define HS_READER_MISSING_MAX 8
typedef struct hs_reader_packing {
    double scale, offset, fill, missing[HS_READER_MISSING_MAX], valid_min, valid_max;
    int has_fill, nmissing, has_valid_min, has_valid_max;
    int unsigned_bits; /* the bits of the stored type under _Unsigned = "true"; 0 otherwise */
} hs_reader_packing;
int hs_reader_packing_of(hs_reader *r, const char *var, hs_reader_packing *pk);
/* A stored value as its type reads it: under _Unsigned, negatives are 2^bits above. */
static inline double hs_reader_stored_unsigned(const hs_reader_packing *pk, double stored)
{
    return pk->unsigned_bits && stored < 0 ? stored + (double)(1ULL << pk->unsigned_bits) : stored;
}
static inline int hs_reader_is_missing(const hs_reader_packing *pk, double stored)
{
    stored = hs_reader_stored_unsigned(pk, stored); /* the attributes were made unsigned alike (hs_reader_packing_of) */
    if (pk->has_fill && stored == pk->fill) return 1;
    for (int i = 0; i < pk->nmissing; i++)
        if (stored == pk->missing[i]) return 1;
    return (pk->has_valid_min && stored < pk->valid_min) || (pk->has_valid_max && stored > pk->valid_max);
}
static inline double hs_reader_unpack(const hs_reader_packing *pk, double stored)
{
    stored = hs_reader_stored_unsigned(pk, stored);
    return pk->scale == 1 && pk->offset == 0 ? stored : stored * pk->scale + pk->offset; /* unpacked: as stored, -0 kept */
}
/* Stored values in place to what a CF reader sees: missing ones NaN, the others unpacked. */
static inline void hs_reader_apply_cf(const hs_reader_packing *pk, double *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) v[i] = hs_reader_is_missing(pk, v[i]) ? (double)NAN : hs_reader_unpack(pk, v[i]);
}
void hs_reader_close(hs_reader *r);
/* The numeric variables of the file (NetCDF: all but text; HDF5: the numeric datasets of the root
 * group), in file order: *names is a malloc'd array of *count malloc'd names (free with
 * hs_reader_free_names); text variables are counted in *ntext and left out. */
int hs_reader_var_names(hs_reader *r, char ***names, int *count, int *ntext);
void hs_reader_free_names(char **names, int count);
/* 1 when the variable's first dimension is the record (unlimited) one, 0 when not, < 0 on error. */
int hs_reader_var_is_record(hs_reader *r, const char *name);

#endif
