/* VTU companion of a mesh file: one VTK XML UnstructuredGrid per record (raw appended binary) and a .pvd collection, from the finished file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output_impl.h"
#include "io/written.h"

/* PATH without its .nc/.h5/.hdf5/.hdf/.nc4 extension (malloc'd). */
static char *stem_of(const char *path)
{
    char *s = strdup(path);
    if (!s) return NULL;
    char *dot = strrchr(s, '.');
    if (dot && !strchr(dot, '/') &&
        (!strcmp(dot, ".nc") || !strcmp(dot, ".nc4") || !strcmp(dot, ".h5") || !strcmp(dot, ".hdf5") || !strcmp(dot, ".hdf")))
        *dot = 0;
    return s;
}

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void xml_name(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '&') fputs("&amp;", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

/* One block of the appended data: its byte count as UInt64, then the bytes. */
typedef struct {
    const void *data;
    uint64_t bytes;
} vtu_block;

/* One record's values of every mesh variable (as the file's type: f64 or f32), read back. */
typedef struct {
    int var;            /* index in w->vars */
    void *values;
    uint64_t bytes;
} vtu_field;

static int read_field(hs_writer *w, hs_reader *r, const hs_writer_var *v, int64_t record, vtu_field *out)
{
    int64_t n = v->grid == HS_GRID_MESH_NODE ? w->mesh.nnodes : w->mesh.ncells;
    double *d = malloc((size_t)n * sizeof *d);
    if (!d) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory writing VTU files");
    int rc = v->time_dependent ? hs_reader_read_record(r, v->name, record, d) : hs_reader_read(r, v->name, d);
    if (rc != HS_OK) {
        free(d);
        return rc;
    }
    if (v->dtype == HS_F32) { /* back to the file's type: the values are floats, exactly */
        float *f = (float *)d;
        for (int64_t i = 0; i < n; i++) f[i] = (float)d[i];
    }
    out->values = d;
    out->bytes = (uint64_t)n * (v->dtype == HS_F32 ? 4 : 8);
    return HS_OK;
}

static void data_array(FILE *f, const char *type, const char *name, int ncomp, uint64_t *offset, uint64_t bytes)
{
    fprintf(f, "        <DataArray type=\"%s\" Name=\"", type);
    xml_name(f, name);
    fprintf(f, "\"%s format=\"appended\" offset=\"%llu\"/>\n", ncomp > 1 ? " NumberOfComponents=\"3\"" : "",
            (unsigned long long)*offset);
    *offset += 8 + bytes;
}

/* One .vtu: the mesh with the given fields. */
static int write_vtu(hs_writer *w, const char *path, const vtu_field *fields, int nf, const int64_t *conn64,
                     const int64_t *offsets, const unsigned char *types)
{
    const hs_writer_mesh *m = &w->mesh;
    int nv = m->dim + 1;
    hs_io_whole file; /* a full disk left a piece half-written under its final name */
    HS_CHECK(hs_io_whole_open(&file, "VTU", path, "wb"));
    FILE *f = file.f;
    vtu_block blocks[HS_WRITER_MAX_VARS + 8];
    int nb = 0;
    uint64_t off = 0;
    fputs("<?xml version=\"1.0\"?>\n"
          "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
          "  <UnstructuredGrid>\n",
          f);
    fprintf(f, "    <Piece NumberOfPoints=\"%lld\" NumberOfCells=\"%lld\">\n", (long long)m->nnodes, (long long)m->ncells);
    fputs("      <PointData>\n", f);
    for (int i = 0; i < nf; i++) {
        const hs_writer_var *v = &w->vars[fields[i].var];
        if (v->grid != HS_GRID_MESH_NODE) continue;
        data_array(f, v->dtype == HS_F32 ? "Float32" : "Float64", v->name, 1, &off, fields[i].bytes);
        blocks[nb++] = (vtu_block){fields[i].values, fields[i].bytes};
    }
    fputs("      </PointData>\n      <CellData>\n", f);
    data_array(f, "Int32", "region", 1, &off, (uint64_t)m->ncells * 4);
    blocks[nb++] = (vtu_block){m->region, (uint64_t)m->ncells * 4};
    for (int i = 0; i < nf; i++) {
        const hs_writer_var *v = &w->vars[fields[i].var];
        if (v->grid != HS_GRID_MESH_CELL) continue;
        data_array(f, v->dtype == HS_F32 ? "Float32" : "Float64", v->name, 1, &off, fields[i].bytes);
        blocks[nb++] = (vtu_block){fields[i].values, fields[i].bytes};
    }
    fputs("      </CellData>\n      <Points>\n", f);
    data_array(f, "Float64", "Points", 3, &off, (uint64_t)m->nnodes * 24);
    blocks[nb++] = (vtu_block){m->xyz, (uint64_t)m->nnodes * 24};
    fputs("      </Points>\n      <Cells>\n", f);
    data_array(f, "Int64", "connectivity", 1, &off, (uint64_t)m->ncells * (uint64_t)nv * 8);
    blocks[nb++] = (vtu_block){conn64, (uint64_t)m->ncells * (uint64_t)nv * 8};
    data_array(f, "Int64", "offsets", 1, &off, (uint64_t)m->ncells * 8);
    blocks[nb++] = (vtu_block){offsets, (uint64_t)m->ncells * 8};
    data_array(f, "UInt8", "types", 1, &off, (uint64_t)m->ncells);
    blocks[nb++] = (vtu_block){types, (uint64_t)m->ncells};
    fputs("      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n  <AppendedData encoding=\"raw\">\n   _", f);
    /* the numbers are written as this host stores them: the header says little-endian */
    for (int i = 0; i < nb; i++) {
        fwrite(&blocks[i].bytes, sizeof blocks[i].bytes, 1, f);
        if (blocks[i].bytes) fwrite(blocks[i].data, 1, (size_t)blocks[i].bytes, f);
    }
    fputs("\n  </AppendedData>\n</VTKFile>\n", f);
    return hs_io_whole_commit(&file, 1);
}

/* Record r's .vtu (r < 0: the single file of a file without records). */
static int write_record(hs_writer *w, hs_reader *rd, const char *stem, int64_t r, const int64_t *conn64,
                        const int64_t *offsets, const unsigned char *types)
{
    vtu_field fields[HS_WRITER_MAX_VARS];
    int nf = 0, rc = HS_OK;
    for (int i = 0; rc == HS_OK && i < w->nvars; i++) {
        const hs_writer_var *v = &w->vars[i];
        if (v->grid != HS_GRID_MESH_NODE && v->grid != HS_GRID_MESH_CELL) continue;
        if (v->time_dependent && r < 0) continue;
        fields[nf].var = i;
        rc = read_field(w, rd, v, r, &fields[nf]);
        if (rc == HS_OK) nf++;
    }
    size_t len = strlen(stem) + 32;
    char *path = malloc(len);
    if (rc == HS_OK && !path) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory writing VTU files");
    if (rc == HS_OK) {
        if (r < 0) snprintf(path, len, "%s.vtu", stem);
        else snprintf(path, len, "%s_%06lld.vtu", stem, (long long)r);
        rc = write_vtu(w, path, fields, nf, conn64, offsets, types);
    }
    free(path);
    for (int i = 0; i < nf; i++) free(fields[i].values);
    return rc;
}

static int write_pvd(hs_writer *w, const char *stem)
{
    size_t len = strlen(stem) + 16;
    char *path = malloc(len);
    if (!path) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory writing VTU files");
    snprintf(path, len, "%s.pvd", stem);
    hs_io_whole file;
    int rc = hs_io_whole_open(&file, "VTU", path, "w");
    FILE *f = file.f;
    if (rc == HS_OK) {
        fputs("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
              "  <Collection>\n",
              f);
        for (int64_t r = 0; r < w->nrec; r++) {
            fprintf(f, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"", w->times[r]);
            xml_name(f, base_of(stem));
            fprintf(f, "_%06lld.vtu\"/>\n", (long long)r);
        }
        fputs("  </Collection>\n</VTKFile>\n", f);
        rc = hs_io_whole_commit(&file, 1);
    }
    free(path);
    return rc;
}

/* Record files of an earlier, longer run of this file (a resumed one that stopped sooner). */
static void remove_stale(const char *stem, int64_t from)
{
    size_t len = strlen(stem) + 32;
    char *path = malloc(len);
    for (int64_t r = from; path; r++) {
        snprintf(path, len, "%s_%06lld.vtu", stem, (long long)r);
        if (remove(path) != 0) break;
    }
    free(path);
}

int hs_writer_write_vtu(hs_writer *w)
{
    const hs_writer_mesh *m = &w->mesh;
    int nv = m->dim + 1;
    char *stem = stem_of(w->path);
    int64_t *conn64 = malloc((size_t)m->ncells * (size_t)nv * sizeof *conn64);
    int64_t *offsets = malloc((size_t)m->ncells * sizeof *offsets);
    unsigned char *types = malloc((size_t)m->ncells);
    hs_reader *rd = NULL;
    int rc = stem && conn64 && offsets && types ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory writing VTU files");
    for (int64_t c = 0; rc == HS_OK && c < m->ncells; c++) {
        for (int k = 0; k < nv; k++) conn64[c * nv + k] = m->conn[c * nv + k];
        offsets[c] = (c + 1) * nv;
        types[c] = m->dim == 3 ? 10 : 5; /* VTK_TETRA, VTK_TRIANGLE */
    }
    if (rc == HS_OK) rc = hs_reader_open(w->partial, &rd); /* closed, not yet renamed */
    if (rc == HS_OK && (!w->has_time || w->nrec == 0)) {
        rc = write_record(w, rd, stem, -1, conn64, offsets, types);
    } else if (rc == HS_OK) {
        for (int64_t r = 0; rc == HS_OK && r < w->nrec; r++) rc = write_record(w, rd, stem, r, conn64, offsets, types);
        if (rc == HS_OK) rc = write_pvd(w, stem);
        if (rc == HS_OK) remove_stale(stem, w->nrec);
    }
    hs_reader_close(rd);
    free(stem);
    free(conn64);
    free(offsets);
    free(types);
    return rc;
}
