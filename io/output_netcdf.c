/* NetCDF-4 / CF-1.8 backend of the writer (rank 0 writes and the common layer gathers, or every rank writes collectively). */
#include "io/output_impl.h"
#include "io/written.h"

#if HS_HAVE_NETCDF
#include <netcdf.h>
#if HS_HAVE_NETCDF_PARALLEL
#include <netcdf_par.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int ncid;
    int time_dim, time_var;
    int dim[3]; /* dimension ids by desc index (0 = x) */
    int bnds_dim;
    int area_var;
    int station_dim;
    int xdim[HS_WRITER_MAX_XDIMS];  /* the extra grids' dimension ids */
    int xcoord[HS_WRITER_MAX_XDIMS], xbnds[HS_WRITER_MAX_XDIMS];
    int sgrid_var;
    int mesh_node_dim, mesh_cell_dim, mesh_var, mesh_coord[3], mesh_conn, mesh_types, mesh_region;
    int broken; /* the create failed part-way (a full disk): nc_close crashed in NetCDF on such a file */
} nc_state;

int hs_nc_fail(int status, const char *call, const char *path, const char *file, int line)
{
    char space[HS_IO_FS_NOTE_MAX];
    hs_io_fs_note(path, space, sizeof space);
    return hs_error_raise(HS_ERR_RUNTIME, file, line, "NetCDF call %s failed on %s: %s%s", call, path ? path : "?",
                          nc_strerror(status), space);
}

static nc_state *st(hs_writer *w) { return (nc_state *)w->bs; }

/* In a collective file, a rank other than 0 takes part in writes of rank 0's data with nothing. */
static int takes_none(const hs_writer *w) { return w->par && w->ctx->rank != 0; }

/* A collective file: every variable is written collectively (filtered variables must be, and a
 * record dimension grows only by collective writes). */
static int par_access(hs_writer *w, int varid)
{
#if HS_HAVE_NETCDF_PARALLEL
    if (w->par) HS_NC_CHECK(nc_var_par_access(st(w)->ncid, varid, NC_COLLECTIVE), w->partial);
#endif
    return HS_OK;
}

/* Write a whole (fixed-size) variable from rank 0's data, of the variable's own type; the other
 * ranks of a collective file take part with zero counts. */
static int put_whole(hs_writer *w, int varid, const void *data)
{
    static const size_t zero[NC_MAX_VAR_DIMS];
    static const double none = 0;
    if (takes_none(w)) HS_NC_CHECK(nc_put_vara(st(w)->ncid, varid, zero, zero, &none), w->partial);
    else HS_NC_CHECK(nc_put_var(st(w)->ncid, varid, data), w->partial);
    return HS_OK;
}

static int put_text(int ncid, int varid, const char *name, const char *value, const char *path)
{
    HS_NC_CHECK(nc_put_att_text(ncid, varid, name, strlen(value), value), path);
    return HS_OK;
}

static int def_time(hs_writer *w, const hs_output_desc *desc)
{
    nc_state *s = st(w);
    const char *p = w->partial;
    size_t chunk = 1024;
    HS_NC_CHECK(nc_def_dim(s->ncid, w->rec_name, NC_UNLIMITED, &s->time_dim), p);
    HS_NC_CHECK(nc_def_var(s->ncid, w->rec_name, NC_DOUBLE, 1, &s->time_dim, &s->time_var), p);
    HS_CHECK(par_access(w, s->time_var));
    HS_NC_CHECK(nc_def_var_chunking(s->ncid, s->time_var, NC_CHUNKED, &chunk), p);
    const char *lname = desc->record_long_name ? desc->record_long_name : w->rec_name;
    if (w->rec_is_time) HS_CHECK(put_text(s->ncid, s->time_var, "standard_name", "time", p));
    HS_CHECK(put_text(s->ncid, s->time_var, "long_name", lname, p));
    HS_CHECK(put_text(s->ncid, s->time_var, "units", desc->time_units, p));
    if (!w->rec_is_time) return HS_OK; /* a counter (training iterations): no calendar, not a T axis */
    HS_CHECK(put_text(s->ncid, s->time_var, "calendar", desc->calendar && *desc->calendar ? desc->calendar : "standard", p));
    HS_CHECK(put_text(s->ncid, s->time_var, "axis", "T", p));
    return HS_OK;
}

/* Spatial dimensions slowest first (z, y, x), each with its coordinate variable and its cell
 * bounds x_bnds(x, bnds). */
static int def_space(hs_writer *w, const hs_output_desc *desc, int *coord_var, int *bnds_var)
{
    nc_state *s = st(w);
    const char *p = w->partial;
    if (w->ndim > 0) HS_NC_CHECK(nc_def_dim(s->ncid, "bnds", 2, &s->bnds_dim), p);
    for (int d = w->ndim - 1; d >= 0; d--) {
        const char *nm = w->dim_names[d];
        char axis[2] = {desc->coord_positive[d] ? 'Z' : "XYZ"[d], 0}, lname[HS_IO_NAME_MAX + 16];
        snprintf(lname, sizeof lname, "%s coordinate", nm);
        HS_NC_CHECK(nc_def_dim(s->ncid, nm, (size_t)w->n[d], &s->dim[d]), p);
        HS_NC_CHECK(nc_def_var(s->ncid, nm, NC_DOUBLE, 1, &s->dim[d], &coord_var[d]), p);
        HS_CHECK(par_access(w, coord_var[d]));
        HS_CHECK(put_text(s->ncid, coord_var[d], "units", desc->coord_units[d] ? desc->coord_units[d] : "1", p));
        HS_CHECK(put_text(s->ncid, coord_var[d], "long_name",
                          desc->coord_long_names[d] ? desc->coord_long_names[d] : lname, p));
        HS_CHECK(put_text(s->ncid, coord_var[d], "axis", axis, p));
        if (desc->coord_positive[d]) HS_CHECK(put_text(s->ncid, coord_var[d], "positive", desc->coord_positive[d], p));
        char bn[HS_IO_NAME_MAX + 8];
        hs_writer_bounds_name(w, d, bn, sizeof bn);
        int bd[2] = {s->dim[d], s->bnds_dim};
        HS_NC_CHECK(nc_def_var(s->ncid, bn, NC_DOUBLE, 2, bd, &bnds_var[d]), p);
        HS_CHECK(par_access(w, bnds_var[d]));
        HS_CHECK(put_text(s->ncid, coord_var[d], "bounds", bn, p));
    }
    if (!w->has_area) return HS_OK;
    int ad[2] = {s->dim[1], s->dim[0]};
    HS_NC_CHECK(nc_def_var(s->ncid, HS_CELL_AREA, NC_DOUBLE, 2, ad, &s->area_var), p);
    HS_CHECK(par_access(w, s->area_var));
    HS_CHECK(put_text(s->ncid, s->area_var, "units", "m2", p));
    HS_CHECK(put_text(s->ncid, s->area_var, "standard_name", "cell_area", p));
    HS_CHECK(put_text(s->ncid, s->area_var, "long_name", "area of the cell in the x-y plane", p));
    return HS_OK;
}

static int put_coords(hs_writer *w, const hs_output_desc *desc, const int *coord_var, const int *bnds_var)
{
    for (int d = 0; d < w->ndim; d++) {
        const double *c = desc->coords[d];
        double *idx = NULL;
        if (takes_none(w)) { /* rank 0 writes them (the cell bounds too: every rank has the edges) */
            HS_CHECK(put_whole(w, coord_var[d], NULL));
            HS_CHECK(put_whole(w, bnds_var[d], NULL));
            continue;
        }
        if (!c) { /* no coordinates given: grid indices */
            idx = malloc((size_t)w->n[d] * sizeof *idx);
            if (!idx) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for coordinates");
            for (int64_t i = 0; i < w->n[d]; i++) idx[i] = (double)i;
            c = idx;
        }
        int rc = put_whole(w, coord_var[d], c);
        free(idx);
        HS_CHECK(rc);
        double *b = hs_writer_bounds(w, d);
        if (!b) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for cell bounds");
        rc = put_whole(w, bnds_var[d], b);
        free(b);
        HS_CHECK(rc);
    }
    if (w->has_area) {
        double *a = takes_none(w) ? NULL : hs_writer_cell_area(w);
        if (!a && !takes_none(w)) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for cell areas");
        int rc = put_whole(w, st(w)->area_var, a);
        free(a);
        HS_CHECK(rc);
    }
    return HS_OK;
}

static int def_globals(hs_writer *w, const hs_output_desc *desc)
{
    int id = st(w)->ncid;
    const char *p = w->partial;
    HS_CHECK(put_text(id, NC_GLOBAL, "Conventions", hs_writer_conventions(w), p));
    HS_CHECK(put_text(id, NC_GLOBAL, "title", desc->title ? desc->title : "hpcsim output", p));
    HS_CHECK(put_text(id, NC_GLOBAL, "source", HS_SOURCE_ATTR, p));
    HS_CHECK(put_text(id, NC_GLOBAL, "history", w->history, p));
    if (desc->params_ini) HS_CHECK(put_text(id, NC_GLOBAL, "hpcsim_parameters", desc->params_ini, p));
    if (desc->run_id) HS_CHECK(put_text(id, NC_GLOBAL, "hpcsim_run_id", desc->run_id, p));
    return HS_OK;
}

/* ------------------------------------------------------------------ extra grids and the mesh */

static int put_int_att(int ncid, int varid, const char *name, int value, const char *path)
{
    HS_NC_CHECK(nc_put_att_int(ncid, varid, name, NC_INT, 1, &value), path);
    return HS_OK;
}

/* The extra grids' dimensions (coordinate variables, bounds, COMODO shift on faces) and the SGRID topology. */
static int def_extra(hs_writer *w)
{
    nc_state *s = st(w);
    const char *p = w->partial;
    /* extra grids need a main grid, whose def_space made the bnds dimension */
    for (int k = 0; k < w->nxdims; k++) {
        const hs_writer_dim *x = &w->xdims[k];
        char axis[2] = {x->positive[0] ? 'Z' : "XYZ"[x->axis], 0}, bn[HS_IO_NAME_MAX + 8];
        snprintf(bn, sizeof bn, "%s_bnds", x->name);
        HS_NC_CHECK(nc_def_dim(s->ncid, x->name, (size_t)x->n, &s->xdim[k]), p);
        HS_NC_CHECK(nc_def_var(s->ncid, x->name, NC_DOUBLE, 1, &s->xdim[k], &s->xcoord[k]), p);
        HS_CHECK(par_access(w, s->xcoord[k]));
        HS_CHECK(put_text(s->ncid, s->xcoord[k], "units", x->units, p));
        HS_CHECK(put_text(s->ncid, s->xcoord[k], "long_name", x->long_name, p));
        HS_CHECK(put_text(s->ncid, s->xcoord[k], "axis", axis, p));
        if (x->positive[0]) HS_CHECK(put_text(s->ncid, s->xcoord[k], "positive", x->positive, p));
        if (x->shift != 0) { /* COMODO (xgcm reads it): a face is its cell's low face, -0.5 */
            double shift = x->shift;
            HS_NC_CHECK(nc_put_att_double(s->ncid, s->xcoord[k], "c_grid_axis_shift", NC_DOUBLE, 1, &shift), p);
        }
        int bd[2] = {s->xdim[k], s->bnds_dim};
        HS_NC_CHECK(nc_def_var(s->ncid, bn, NC_DOUBLE, 2, bd, &s->xbnds[k]), p);
        HS_CHECK(par_access(w, s->xbnds[k]));
        HS_CHECK(put_text(s->ncid, s->xcoord[k], "bounds", bn, p));
    }
    if (!w->sgrid) return HS_OK;
    HS_NC_CHECK(nc_def_var(s->ncid, "grid", NC_INT, 0, NULL, &s->sgrid_var), p);
    HS_CHECK(par_access(w, s->sgrid_var));
    HS_CHECK(put_text(s->ncid, s->sgrid_var, "cf_role", "grid_topology", p));
    HS_CHECK(put_text(s->ncid, s->sgrid_var, "long_name", "staggered grid topology (SGRID)", p));
    HS_CHECK(put_int_att(s->ncid, s->sgrid_var, "topology_dimension", w->ndim, p));
    const char *an;
    char value[8 * HS_IO_NAME_MAX];
    for (int i = 0; hs_writer_sgrid_attr(w, i, &an, value, sizeof value); i++)
        HS_CHECK(put_text(s->ncid, s->sgrid_var, an, value, p));
    return HS_OK;
}

static int put_extra(hs_writer *w)
{
    nc_state *s = st(w);
    for (int k = 0; k < w->nxdims; k++) {
        if (takes_none(w)) {
            HS_CHECK(put_whole(w, s->xcoord[k], NULL));
            HS_CHECK(put_whole(w, s->xbnds[k], NULL));
            continue;
        }
        HS_CHECK(put_whole(w, s->xcoord[k], w->xdims[k].coords));
        double *b = hs_writer_xdim_bounds(w, k);
        if (!b) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for cell bounds");
        int rc = put_whole(w, s->xbnds[k], b);
        free(b);
        HS_CHECK(rc);
    }
    static const int zero = 0;
    if (w->sgrid) HS_CHECK(put_whole(w, s->sgrid_var, &zero));
    return HS_OK;
}

/* UGRID-1.0: the topology variable, node coordinates, connectivity, shape types (3-D), regions. */
static int def_mesh(hs_writer *w)
{
    nc_state *s = st(w);
    const hs_writer_mesh *m = &w->mesh;
    const char *p = w->partial, *cells = hs_writer_mesh_cells(w);
    char nm[HS_IO_NAME_MAX + 24], conn[HS_IO_NAME_MAX + 24], types[HS_IO_NAME_MAX + 24], lname[HS_IO_NAME_MAX + 64];
    char coords[3 * (HS_IO_NAME_MAX + 24)] = "";
    int corner_dim;
    hs_writer_mesh_name(w, "node_dim", nm, sizeof nm);
    HS_NC_CHECK(nc_def_dim(s->ncid, nm, (size_t)m->nnodes, &s->mesh_node_dim), p);
    hs_writer_mesh_name(w, "cell_dim", nm, sizeof nm);
    HS_NC_CHECK(nc_def_dim(s->ncid, nm, (size_t)m->ncells, &s->mesh_cell_dim), p);
    hs_writer_mesh_name(w, "corner_dim", nm, sizeof nm);
    HS_NC_CHECK(nc_def_dim(s->ncid, nm, (size_t)m->dim + 1, &corner_dim), p);
    for (int c = 0; c < m->ncoord; c++) {
        const char *ax = (const char *[]){"x", "y", "z"}[c];
        hs_writer_mesh_name(w, ax, nm, sizeof nm);
        HS_NC_CHECK(nc_def_var(s->ncid, nm, NC_DOUBLE, 1, &s->mesh_node_dim, &s->mesh_coord[c]), p);
        HS_CHECK(par_access(w, s->mesh_coord[c]));
        snprintf(lname, sizeof lname, "%s coordinate of the mesh nodes", ax);
        HS_CHECK(put_text(s->ncid, s->mesh_coord[c], "units", m->units, p));
        HS_CHECK(put_text(s->ncid, s->mesh_coord[c], "long_name", lname, p));
        size_t u = strlen(coords);
        snprintf(coords + u, sizeof coords - u, "%s%s", u ? " " : "", nm);
    }
    hs_writer_mesh_name(w, "conn", conn, sizeof conn);
    int cd[2] = {s->mesh_cell_dim, corner_dim};
    HS_NC_CHECK(nc_def_var(s->ncid, conn, NC_INT, 2, cd, &s->mesh_conn), p);
    HS_CHECK(par_access(w, s->mesh_conn));
    snprintf(lname, sizeof lname, "%s_node_connectivity", cells);
    HS_CHECK(put_text(s->ncid, s->mesh_conn, "cf_role", lname, p));
    snprintf(lname, sizeof lname, "the corner nodes of every %s", m->dim == 3 ? "tetrahedron" : "triangle");
    HS_CHECK(put_text(s->ncid, s->mesh_conn, "long_name", lname, p));
    HS_CHECK(put_int_att(s->ncid, s->mesh_conn, "start_index", 0, p));
    if (m->dim == 3) {
        hs_writer_mesh_name(w, "types", types, sizeof types);
        HS_NC_CHECK(nc_def_var(s->ncid, types, NC_BYTE, 1, &s->mesh_cell_dim, &s->mesh_types), p);
        HS_CHECK(par_access(w, s->mesh_types));
        signed char flag = 0;
        HS_CHECK(put_text(s->ncid, s->mesh_types, "cf_role", "volume_shape_type", p));
        HS_CHECK(put_text(s->ncid, s->mesh_types, "long_name", "the shape of every volume", p));
        HS_NC_CHECK(nc_put_att_schar(s->ncid, s->mesh_types, "flag_values", NC_BYTE, 1, &flag), p);
        HS_CHECK(put_text(s->ncid, s->mesh_types, "flag_meanings", "tetrahedron", p));
    }
    hs_writer_mesh_name(w, "region", nm, sizeof nm);
    HS_NC_CHECK(nc_def_var(s->ncid, nm, NC_INT, 1, &s->mesh_cell_dim, &s->mesh_region), p);
    HS_CHECK(par_access(w, s->mesh_region));
    HS_CHECK(put_text(s->ncid, s->mesh_region, "units", "1", p));
    HS_CHECK(put_text(s->ncid, s->mesh_region, "long_name", "region id of the cell", p));
    HS_CHECK(put_text(s->ncid, s->mesh_region, "mesh", m->name, p));
    HS_CHECK(put_text(s->ncid, s->mesh_region, "location", cells, p));
    /* the topology */
    int t;
    HS_NC_CHECK(nc_def_var(s->ncid, m->name, NC_INT, 0, NULL, &s->mesh_var), p);
    HS_CHECK(par_access(w, s->mesh_var));
    t = s->mesh_var;
    HS_CHECK(put_text(s->ncid, t, "cf_role", "mesh_topology", p));
    snprintf(lname, sizeof lname, "topology of the %s mesh", m->dim == 3 ? "tetrahedral" : "triangular");
    HS_CHECK(put_text(s->ncid, t, "long_name", lname, p));
    HS_CHECK(put_int_att(s->ncid, t, "topology_dimension", m->dim, p));
    HS_CHECK(put_text(s->ncid, t, "node_coordinates", coords, p));
    snprintf(lname, sizeof lname, "%s_node_connectivity", cells);
    HS_CHECK(put_text(s->ncid, t, lname, conn, p));
    snprintf(lname, sizeof lname, "%s_dimension", cells);
    hs_writer_mesh_name(w, "cell_dim", nm, sizeof nm);
    HS_CHECK(put_text(s->ncid, t, lname, nm, p));
    if (m->dim == 3) HS_CHECK(put_text(s->ncid, t, "volume_shape_type", types, p));
    return HS_OK;
}

static int put_mesh(hs_writer *w)
{
    nc_state *s = st(w);
    const hs_writer_mesh *m = &w->mesh;
    int rc = HS_OK, root = !takes_none(w);
    double *c = NULL;
    signed char *types = NULL;
    static const int zero = 0;
    if (root) {
        c = malloc((size_t)m->nnodes * sizeof *c);
        types = calloc((size_t)m->ncells, 1);
        if (!c || !types) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory writing the mesh");
    }
    for (int k = 0; rc == HS_OK && k < m->ncoord; k++) {
        for (int64_t i = 0; root && i < m->nnodes; i++) c[i] = m->xyz[3 * i + k];
        rc = put_whole(w, s->mesh_coord[k], c);
    }
    if (rc == HS_OK) rc = put_whole(w, s->mesh_conn, root ? m->conn : NULL);
    if (rc == HS_OK && m->dim == 3) rc = put_whole(w, s->mesh_types, types);
    if (rc == HS_OK) rc = put_whole(w, s->mesh_region, root ? m->region : NULL);
    if (rc == HS_OK) rc = put_whole(w, s->mesh_var, &zero);
    free(c);
    free(types);
    return rc;
}

/* The data variable's dimensions (file order) and lengths. */
static int var_dims(hs_writer *w, const hs_writer_var *v, int *dims, int64_t *len)
{
    nc_state *s = st(w);
    int rank = 0;
    if (v->time_dependent) { dims[rank] = s->time_dim; len[rank++] = 1; }
    if (v->grid == HS_GRID_STATIONS) { dims[rank] = s->station_dim; len[rank++] = w->nstations; }
    if (v->grid == HS_GRID_MESH_NODE) { dims[rank] = s->mesh_node_dim; len[rank++] = w->mesh.nnodes; }
    if (v->grid == HS_GRID_MESH_CELL) { dims[rank] = s->mesh_cell_dim; len[rank++] = w->mesh.ncells; }
    for (int d = w->ndim - 1; v->grid >= 0 && d >= 0; d--) {
        int k = w->grids[v->grid].xdim[d];
        dims[rank] = k < 0 ? s->dim[d] : s->xdim[k];
        len[rank++] = w->grids[v->grid].n[d];
    }
    return rank;
}

/* SGRID or UGRID attributes of a data variable. */
static int topology_atts(hs_writer *w, const hs_writer_var *v)
{
    nc_state *s = st(w);
    const char *p = w->partial;
    if (v->grid >= 0 && w->sgrid && w->grids[v->grid].location) {
        HS_CHECK(put_text(s->ncid, v->id, "grid", "grid", p));
        HS_CHECK(put_text(s->ncid, v->id, "location", w->grids[v->grid].location, p));
    }
    if (v->grid == HS_GRID_MESH_NODE || v->grid == HS_GRID_MESH_CELL) {
        HS_CHECK(put_text(s->ncid, v->id, "mesh", w->mesh.name, p));
        HS_CHECK(put_text(s->ncid, v->id, "location", v->grid == HS_GRID_MESH_NODE ? "node" : hs_writer_mesh_cells(w), p));
        if (v->grid == HS_GRID_MESH_NODE) {
            char c[3 * (HS_IO_NAME_MAX + 24)] = "", nm[HS_IO_NAME_MAX + 24];
            for (int k = 0; k < w->mesh.ncoord; k++) {
                hs_writer_mesh_name(w, (const char *[]){"x", "y", "z"}[k], nm, sizeof nm);
                size_t u = strlen(c);
                snprintf(c + u, sizeof c - u, "%s%s", u ? " " : "", nm);
            }
            HS_CHECK(put_text(s->ncid, v->id, "coordinates", c, p));
        }
    }
    return HS_OK;
}

/* The new file's definitions and coordinates (nc_create_file). */
static int create_contents(hs_writer *w, const hs_output_desc *desc, int *coord_var, int *bnds_var)
{
    if (w->has_time) HS_CHECK(def_time(w, desc));
    HS_CHECK(def_space(w, desc, coord_var, bnds_var));
    HS_CHECK(def_extra(w));
    if (w->has_mesh) HS_CHECK(def_mesh(w));
    HS_CHECK(def_globals(w, desc));
    HS_NC_CHECK(nc_enddef(st(w)->ncid), w->partial);
    HS_CHECK(put_coords(w, desc, coord_var, bnds_var));
    HS_CHECK(put_extra(w));
    if (w->has_mesh) HS_CHECK(put_mesh(w));
    return HS_OK;
}

static int nc_create_file(hs_writer *w, const hs_output_desc *desc)
{
    nc_state *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a NetCDF writer");
    int coord_var[3], bnds_var[3];
#if HS_HAVE_NETCDF_PARALLEL
    int rc = w->par ? nc_create_par(w->partial, NC_NETCDF4 | NC_CLOBBER, w->ctx->comm, MPI_INFO_NULL, &s->ncid)
                    : nc_create(w->partial, NC_NETCDF4 | NC_CLOBBER, &s->ncid);
#else
    int rc = w->par ? NC_ENOPAR : nc_create(w->partial, NC_NETCDF4 | NC_CLOBBER, &s->ncid);
#endif
    if (rc != NC_NOERR) {
        free(s);
        return hs_nc_fail(rc, w->par ? "nc_create_par" : "nc_create", w->partial, __FILE__, __LINE__);
    }
    w->bs = s;
    int err = create_contents(w, desc, coord_var, bnds_var);
    if (err != HS_OK) s->broken = 1;
    return err;
}

static int nc_def(hs_writer *w, hs_writer_var *v, const char *units, const char *long_name, const char *standard_name)
{
    nc_state *s = st(w);
    const char *p = w->partial;
    int dims[4];
    int64_t len[4];
    int rank = var_dims(w, v, dims, len);
    HS_NC_CHECK(nc_def_var(s->ncid, v->name, v->dtype == HS_F32 ? NC_FLOAT : NC_DOUBLE, rank, dims, &v->id), p);
    HS_CHECK(par_access(w, v->id));
    if (rank > 0) {
        size_t chunk[4];
        hs_io_chunk_dims(len, rank, v->time_dependent, hs_dtype_size((hs_dtype)v->dtype), chunk);
        HS_NC_CHECK(nc_def_var_chunking(s->ncid, v->id, NC_CHUNKED, chunk), p);
        if (w->deflate > 0) HS_NC_CHECK(nc_def_var_deflate(s->ncid, v->id, 1, 1, w->deflate), p);
    }
    HS_CHECK(put_text(s->ncid, v->id, "units", units ? units : "1", p));
    HS_CHECK(put_text(s->ncid, v->id, "long_name", long_name ? long_name : v->name, p));
    if (standard_name) HS_CHECK(put_text(s->ncid, v->id, "standard_name", standard_name, p));
    if (w->has_area && v->grid == 0) HS_CHECK(put_text(s->ncid, v->id, "cell_measures", "area: " HS_CELL_AREA, p));
    if (v->grid == HS_GRID_STATIONS) {
        char c[5 * HS_IO_NAME_MAX];
        hs_writer_station_coords(w, c, sizeof c);
        HS_CHECK(put_text(s->ncid, v->id, "coordinates", c, p));
    }
    return topology_atts(w, v);
}

/* The stations: S(S) dimension, S_name(S, S_strlen) as the timeseries_id, S_x, S_y, S_z. */
static int nc_def_stations(hs_writer *w, const hs_station_desc *sd)
{
    nc_state *s = st(w);
    const char *p = w->partial;
    size_t slen = 1;
    for (int64_t i = 0; i < sd->n; i++)
        if (strlen(sd->names[i]) > slen) slen = strlen(sd->names[i]);
    char nm[HS_IO_NAME_MAX + 8], lname[HS_IO_NAME_MAX + 32];
    int sdim, dims[2], name_var, cvar[3];
    hs_writer_station_name(w, "strlen", nm, sizeof nm);
    HS_NC_CHECK(nc_def_dim(s->ncid, w->st_dim, (size_t)sd->n, &s->station_dim), p);
    HS_NC_CHECK(nc_def_dim(s->ncid, nm, slen, &sdim), p);
    dims[0] = s->station_dim;
    dims[1] = sdim;
    hs_writer_station_name(w, "name", nm, sizeof nm);
    HS_NC_CHECK(nc_def_var(s->ncid, nm, NC_CHAR, 2, dims, &name_var), p);
    HS_CHECK(par_access(w, name_var));
    snprintf(lname, sizeof lname, "%s name", w->st_dim);
    HS_CHECK(put_text(s->ncid, name_var, "long_name", lname, p));
    HS_CHECK(put_text(s->ncid, name_var, "cf_role", "timeseries_id", p));
    for (int c = 0; c < w->st_ncoord; c++) {
        const char *ax = (const char *[]){"x", "y", "z"}[c];
        hs_writer_station_name(w, ax, nm, sizeof nm);
        HS_NC_CHECK(nc_def_var(s->ncid, nm, NC_DOUBLE, 1, &s->station_dim, &cvar[c]), p);
        HS_CHECK(par_access(w, cvar[c]));
        snprintf(lname, sizeof lname, "%s coordinate of the %s", ax, w->st_dim);
        HS_CHECK(put_text(s->ncid, cvar[c], "units", sd->units ? sd->units : "m", p));
        HS_CHECK(put_text(s->ncid, cvar[c], "long_name", lname, p));
    }
    HS_CHECK(put_text(s->ncid, NC_GLOBAL, "featureType", "timeSeries", p));
    char *names = calloc((size_t)sd->n, slen);
    if (!names) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for station names");
    for (int64_t i = 0; i < sd->n; i++) memcpy(names + (size_t)i * slen, sd->names[i], strlen(sd->names[i]));
    int rc = put_whole(w, name_var, names);
    free(names);
    HS_CHECK(rc);
    const double *cv[3] = {sd->x, sd->y, sd->z};
    for (int c = 0; c < w->st_ncoord; c++) HS_CHECK(put_whole(w, cvar[c], cv[c]));
    return HS_OK;
}

static int nc_time(hs_writer *w, int64_t record, double t)
{
    size_t start = (size_t)record, count = takes_none(w) ? 0 : 1;
    HS_NC_CHECK(nc_put_vara_double(st(w)->ncid, st(w)->time_var, &start, &count, &t), w->partial);
    return HS_OK;
}

/* One record (or the whole static variable) at `record`. */
static int put_record(hs_writer *w, int ncid, const hs_writer_var *v, int64_t record, const void *data)
{
    size_t start[4] = {0}, count[4];
    int rank = 0;
    int64_t len[3];
    if (v->time_dependent) { start[rank] = (size_t)record; count[rank++] = 1; }
    for (int i = 0, sr = hs_writer_var_space(w, v, len); i < sr; i++) count[rank++] = (size_t)len[i];
    static const double none = 0;
    if (takes_none(w)) { /* rank 0 writes the record of a collective file */
        for (int i = 0; i < rank; i++) start[i] = count[i] = 0;
        data = &none;
    }
    if (v->dtype == HS_F32)
        HS_NC_CHECK(nc_put_vara_float(ncid, v->id, start, count, data), w->partial);
    else
        HS_NC_CHECK(nc_put_vara_double(ncid, v->id, start, count, data), w->partial);
    return HS_OK;
}

#if HS_HAVE_NETCDF_PARALLEL
/* A collective file: this rank's block of the current record (zero counts when empty). */
static int nc_put_block(hs_writer *w, const hs_writer_var *v, const int64_t off[3], const int64_t cnt[3], const void *data)
{
    static const double none = 0;
    size_t start[4] = {0}, count[4] = {0};
    int k = 0, empty = 0;
    if (v->time_dependent) { start[k] = (size_t)(w->nrec - 1); count[k++] = 1; }
    for (int d = w->ndim - 1; d >= 0; d--, k++) {
        start[k] = (size_t)off[d];
        count[k] = (size_t)cnt[d];
        empty |= cnt[d] == 0;
    }
    if (empty || !data) {
        for (int i = 0; i < k; i++) start[i] = count[i] = 0;
        data = &none;
    }
    if (v->dtype == HS_F32)
        HS_NC_CHECK(nc_put_vara_float(st(w)->ncid, v->id, start, count, data), w->partial);
    else
        HS_NC_CHECK(nc_put_vara_double(st(w)->ncid, v->id, start, count, data), w->partial);
    w->ncollective++; /* every variable of a collective file has NC_COLLECTIVE access */
    return HS_OK;
}
#endif

static int nc_put(hs_writer *w, const hs_writer_var *v, const void *data)
{
    return put_record(w, st(w)->ncid, v, w->nrec - 1, data);
}

static int nc_attr_text(hs_writer *w, const char *name, const char *value)
{
    return put_text(st(w)->ncid, NC_GLOBAL, name, value, w->partial);
}

static int nc_attr_real(hs_writer *w, const char *name, double value)
{
    HS_NC_CHECK(nc_put_att_double(st(w)->ncid, NC_GLOBAL, name, NC_DOUBLE, 1, &value), w->partial);
    return HS_OK;
}

static int nc_sync_file(hs_writer *w)
{
    HS_NC_CHECK(nc_sync(st(w)->ncid), w->partial);
    return HS_OK;
}

static int nc_close_file(hs_writer *w)
{
    nc_state *s = st(w);
    if (!s) return HS_OK;
    int rc = nc_close(s->ncid);
    /* a NetCDF-4 file is HDF5's: a close whose flush failed (a full disk) leaves it to HDF5's own
     * shutdown, which crashed at MPI_Finalize (exit 139): end by MPI_Abort instead (exit 1) */
    if (rc != NC_NOERR) hs_error_abort_at_exit();
    free(s);
    w->bs = NULL;
    if (rc != NC_NOERR) return hs_nc_fail(rc, "nc_close", w->partial, __FILE__, __LINE__);
    return HS_OK;
}

static void nc_discard(hs_writer *w)
{
    if (!st(w)) return;
    /* a file whose create failed part-way is not closed (nc_close crashed in NetCDF's report of the
     * objects left open, exit 139): the process ends without the libraries' shutdown instead */
    if (st(w)->broken) hs_error_abort_at_exit();
    else if (nc_close(st(w)->ncid) != NC_NOERR) hs_error_abort_at_exit(); /* as nc_close_file */
    free(w->bs);
    w->bs = NULL;
}

/* ------------------------------------------------------------------ resume: copy the kept records */

/* A text attribute of the old file, malloc'd and terminated; NULL when absent. */
static char *get_text(int ncid, int varid, const char *name)
{
    size_t len;
    nc_type t;
    if (nc_inq_att(ncid, varid, name, &t, &len) != NC_NOERR || t != NC_CHAR) return NULL;
    char *s = malloc(len + 1);
    if (s && nc_get_att_text(ncid, varid, name, s) != NC_NOERR) { free(s); return NULL; }
    if (s) s[len] = 0;
    return s;
}

/* Global attributes carry over; `history` gains this run's line (CF appends to it). */
static int copy_globals(hs_writer *w, int in, const char *old)
{
    int out = st(w)->ncid, natts;
    char name[NC_MAX_NAME + 1];
    HS_NC_CHECK(nc_inq_natts(in, &natts), old);
    for (int i = 0; i < natts; i++) {
        HS_NC_CHECK(nc_inq_attname(in, NC_GLOBAL, i, name), old);
        if (strcmp(name, "history") != 0) HS_NC_CHECK(nc_copy_att(in, NC_GLOBAL, name, out, NC_GLOBAL), w->partial);
    }
    char *h = get_text(in, NC_GLOBAL, "history");
    if (!h) return HS_OK;
    size_t len = strlen(h) + strlen(w->history) + 2;
    char *both = malloc(len);
    if (both) snprintf(both, len, "%s\n%s", h, w->history);
    free(h);
    if (!both) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    int rc = put_text(out, NC_GLOBAL, "history", both, w->partial);
    free(both);
    return rc;
}

/* Define the old file's data variable `vin` in the new file, attributes included. */
static int copy_var_def(hs_writer *w, int in, int vin, const char *old, hs_writer_var *v)
{
    int ndims, dims[NC_MAX_VAR_DIMS], natts, unlim;
    nc_type t;
    HS_NC_CHECK(nc_inq_var(in, vin, v->name, &t, &ndims, dims, &natts), old);
    HS_NC_CHECK(nc_inq_unlimdim(in, &unlim), old);
    if (t != NC_DOUBLE && t != NC_FLOAT)
        return HS_FAIL(HS_ERR_RUNTIME, "%s: variable %s is neither double nor float", old, v->name);
    v->dtype = t == NC_FLOAT ? HS_F32 : HS_F64;
    v->time_dependent = ndims > 0 && dims[0] == unlim && unlim >= 0;
    /* on an extra grid or the mesh: known by its dimension names */
    char dn[NC_MAX_VAR_DIMS][NC_MAX_NAME + 1];
    const char *names[NC_MAX_VAR_DIMS];
    int first = v->time_dependent, nsp = ndims - first;
    for (int i = 0; i < nsp && i < 4; i++) {
        HS_NC_CHECK(nc_inq_dimname(in, dims[first + i], dn[i]), old);
        names[i] = dn[i];
    }
    int g = nsp <= 4 ? hs_writer_match_dims(w, nsp, names) : -100;
    if (g != -100) {
        int64_t want[3];
        v->grid = g;
        for (int i = 0, r = hs_writer_var_space(w, v, want); i < r; i++) {
            size_t len;
            HS_NC_CHECK(nc_inq_dimlen(in, dims[first + i], &len), old);
            if (len != (size_t)want[i])
                return hs_input_error(old, 0, v->name, "the file's %s has %zu points, the run's %lld", names[i], len, (long long)want[i]);
        }
        HS_CHECK(nc_def(w, v, NULL, NULL, NULL));
        char an[NC_MAX_NAME + 1];
        for (int i = 0; i < natts; i++) {
            HS_NC_CHECK(nc_inq_attname(in, vin, i, an), old);
            HS_NC_CHECK(nc_copy_att(in, vin, an, st(w)->ncid, v->id), w->partial);
        }
        return HS_OK;
    }
    v->grid = w->ndim > 0 && v->time_dependent && ndims == 1 ? HS_GRID_SERIES : 0;
    if (v->grid == HS_GRID_SERIES) {
        HS_CHECK(nc_def(w, v, NULL, NULL, NULL));
        char an[NC_MAX_NAME + 1];
        for (int i = 0; i < natts; i++) {
            HS_NC_CHECK(nc_inq_attname(in, vin, i, an), old);
            HS_NC_CHECK(nc_copy_att(in, vin, an, st(w)->ncid, v->id), w->partial);
        }
        return HS_OK;
    }
    if (ndims != w->ndim + v->time_dependent)
        return hs_input_error(old, 0, v->name, "the file's variable has %d dimensions, the run's grid %d", ndims, w->ndim);
    for (int d = 0; d < w->ndim; d++) {
        size_t len;
        HS_NC_CHECK(nc_inq_dimlen(in, dims[ndims - 1 - d], &len), old);
        if (len != (size_t)w->n[d])
            return hs_input_error(old, 0, v->name, "the file's grid has %zu points along %s, the run's %lld", len,
                                  w->dim_names[d], (long long)w->n[d]);
    }
    HS_CHECK(nc_def(w, v, NULL, NULL, NULL));
    char an[NC_MAX_NAME + 1];
    for (int i = 0; i < natts; i++) {
        HS_NC_CHECK(nc_inq_attname(in, vin, i, an), old);
        HS_NC_CHECK(nc_copy_att(in, vin, an, st(w)->ncid, v->id), w->partial);
    }
    return HS_OK;
}

static int copy_var_data(hs_writer *w, int in, int vin, const char *old, const hs_writer_var *v, int64_t nkeep, void *buf)
{
    size_t start[4] = {0}, count[4];
    int rank = 0;
    int64_t len[3];
    if (v->time_dependent) count[rank++] = 1;
    for (int i = 0, sr = hs_writer_var_space(w, v, len); i < sr; i++) count[rank++] = (size_t)len[i];
    int64_t nrec = v->time_dependent ? nkeep : 1;
    for (int64_t r = 0; r < nrec; r++) {
        start[0] = (size_t)r;
        if (!takes_none(w)) HS_NC_CHECK(nc_get_vara(in, vin, start, count, buf), old); /* rank 0 writes it */
        HS_CHECK(put_record(w, st(w)->ncid, v, r, buf));
    }
    return HS_OK;
}

static int read_times(const hs_writer *w, int in, const char *old, double **times, size_t *nt)
{
    int tv, td;
    *times = NULL;
    *nt = 0;
    if (!w->has_time || nc_inq_varid(in, w->rec_name, &tv) != NC_NOERR) return HS_OK;
    HS_NC_CHECK(nc_inq_vardimid(in, tv, &td), old);
    HS_NC_CHECK(nc_inq_dimlen(in, td, nt), old);
    *times = malloc((*nt ? *nt : 1) * sizeof **times);
    if (!*times) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    if (*nt) HS_NC_CHECK(nc_get_var_double(in, tv, *times), old);
    return HS_OK;
}

static int copy_file(hs_writer *w, const hs_output_desc *desc, double time, int in, const char *old, void *buf)
{
    double *times;
    size_t nt, nkeep = 0;
    if (nc_inq_att(in, NC_GLOBAL, "featureType", NULL, NULL) == NC_NOERR)
        return hs_input_error(old, 0, NULL, "a station (featureType) file cannot be resumed; start a new one");
    HS_CHECK(read_times(w, in, old, &times, &nt));
    while (nkeep < nt && times[nkeep] <= time) nkeep++;
    int rc = nc_create_file(w, desc);
    if (rc == HS_OK) rc = copy_globals(w, in, old);
    for (size_t r = 0; rc == HS_OK && r < nkeep; r++) {
        rc = nc_time(w, (int64_t)r, times[r]);
        if (rc == HS_OK) rc = hs_writer_push_time(w, times[r]);
    }
    free(times);
    HS_CHECK(rc);
    int nv;
    HS_NC_CHECK(nc_inq_nvars(in, &nv), old);
    for (int vin = 0; vin < nv; vin++) {
        char name[NC_MAX_NAME + 1];
        HS_NC_CHECK(nc_inq_varname(in, vin, name), old);
        if (hs_writer_is_own_name(w, name)) continue; /* coordinates and bounds: written by create */
        if (w->nvars >= HS_WRITER_MAX_VARS) return HS_FAIL(HS_ERR_RUNTIME, "%s: too many variables", old);
        hs_writer_var *v = &w->vars[w->nvars];
        memset(v, 0, sizeof *v);
        HS_CHECK(copy_var_def(w, in, vin, old, v));
        HS_CHECK(copy_var_data(w, in, vin, old, v, (int64_t)nkeep, buf));
        w->nvars++;
    }
    return HS_OK;
}

/* Rank 0 renamed (or put back) a file: in a collective file every rank learns whether it worked. */
static int rank0_status(hs_writer *w, int rc)
{
    if (!w->par) return rc;
    int code = rc;
    HS_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, 0, w->ctx->comm));
    if (w->ctx->rank == 0 || code == HS_OK) return rc;
    return HS_FAIL(code, "resuming %s failed on rank 0", w->path);
}

/* NetCDF cannot shrink an unlimited dimension, so the kept records are copied into a new file.
 * In a collective file every rank reads the old file's metadata (rank 0 also its data) and
 * defines the new file alike. */
static int nc_reopen(hs_writer *w, const hs_output_desc *desc, double time)
{
    size_t len = strlen(w->partial) + sizeof ".old";
    char *old = malloc(len);
    void *buf = malloc(takes_none(w) ? sizeof(double) : (size_t)hs_writer_max_var_size(w) * sizeof(double));
    if (!old || !buf) {
        free(old);
        free(buf);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory resuming %s", w->path);
    }
    snprintf(old, len, "%s.old", w->partial);
    int in = -1, rc = HS_OK;
    if (w->ctx->rank == 0 && rename(w->partial, old) != 0) rc = HS_FAIL(HS_ERR_RUNTIME, "renaming %s to %s failed", w->partial, old);
    rc = rank0_status(w, rc);
    if (rc == HS_OK) {
        int s = nc_open(old, NC_NOWRITE, &in);
        rc = s == NC_NOERR ? copy_file(w, desc, time, in, old, buf) : hs_nc_fail(s, "nc_open", old, __FILE__, __LINE__);
    }
    if (in >= 0) nc_close(in);
    if (rc == HS_OK) {
        if (w->ctx->rank == 0) remove(old);
    } else {
        int back = w->ctx->rank == 0 && hs_io_file_exists(old);
        if (w->par) MPI_Bcast(&back, 1, MPI_INT, 0, w->ctx->comm);
        if (back) { /* put the old file back: a corrected restart can still use it */
            nc_discard(w);
            if (w->ctx->rank == 0) {
                remove(w->partial);
                rename(old, w->partial);
            }
        }
    }
    free(old);
    free(buf);
    return rc;
}

const hs_writer_backend hs_writer_netcdf = {
    .name = "netcdf",
    .create = nc_create_file,
    .reopen = nc_reopen,
    .def_var = nc_def,
    .put_time = nc_time,
    .put = nc_put,
    .attr_text = nc_attr_text,
    .def_stations = nc_def_stations,
    .attr_real = nc_attr_real,
    .sync = nc_sync_file,
    .close = nc_close_file,
    .finish = NULL,
    .discard = nc_discard,
    .parallel = HS_HAVE_NETCDF_PARALLEL,
#if HS_HAVE_NETCDF_PARALLEL
    .put_block = nc_put_block,
#endif
};

#endif
