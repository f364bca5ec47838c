/* Reading NetCDF or HDF5 files back (any producer): variable shapes, whole variables, single records. */
#include "io/output.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output_impl.h"
#if HS_HAVE_NETCDF
#include <netcdf.h>
#endif

typedef enum { RD_NETCDF, RD_HDF5 } rd_kind;

struct hs_reader {
    rd_kind kind;
    char *path;
    int ncid;
#if HS_HAVE_HDF5
    hid_t file;
#endif
};

#if HS_HAVE_NETCDF && HS_HAVE_HDF5
/* The NetCDF library opens any HDF5 file but does not show every dataset as a variable: one of an
 * unnamed enum type (h5py's bool) is left out, and a mask stored so was "no variable".  1 when a
 * dataset at the file's root (not a dimension scale, which carries a CLASS attribute, nor a
 * NetCDF-4 renamed coordinate) is missing from the NetCDF view: the file is then read as HDF5. */
static int hdf5_hides_from_netcdf(hs_reader *r)
{
    if (!hs_h5_is_hdf5(r->path)) return 0;
    hid_t f = H5Fopen(r->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    H5G_info_t gi;
    int hidden = 0;
    if (f >= 0 && H5Gget_info(f, &gi) >= 0)
        for (hsize_t i = 0; i < gi.nlinks && !hidden; i++) {
            char name[256];
            ssize_t len = H5Lget_name_by_idx(f, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT);
            int v;
            if (len <= 0 || (size_t)len >= sizeof name || !strncmp(name, "_nc4_non_coord_", 15) ||
                nc_inq_varid(r->ncid, name, &v) == NC_NOERR)
                continue;
            hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
            if (ds < 0) continue; /* a group or a named type */
            hidden = H5Aexists(ds, "CLASS") == 0;
            H5Dclose(ds);
        }
    if (f >= 0) H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    return hidden;
}
#endif

static int open_any(hs_reader *r)
{
#if HS_HAVE_NETCDF
    /* NetCDF-4 files are HDF5 files too; NetCDF first keeps its dimension semantics */
    if (nc_open(r->path, NC_NOWRITE, &r->ncid) == NC_NOERR) {
        r->kind = RD_NETCDF;
#if HS_HAVE_HDF5
        /* a plain HDF5 file (h5py's; ours before they had dimension scales) opens too, but with
         * unnamed dimensions (phony_dim_N) and no coordinates: read it as HDF5, where our writer's
         * `dimensions` attributes name them.  Ours now open as netCDF-4 and stay here. */
        int ndims = 0, phony = 0;
        if (nc_inq_ndims(r->ncid, &ndims) == NC_NOERR)
            for (int d = 0; d < ndims && !phony; d++) {
                char name[NC_MAX_NAME + 1];
                phony = nc_inq_dimname(r->ncid, d, name) == NC_NOERR && !strncmp(name, "phony_dim_", 10);
            }
        if (!phony && !hdf5_hides_from_netcdf(r)) return HS_OK;
        nc_close(r->ncid);
#else
        return HS_OK;
#endif
    }
#endif
#if HS_HAVE_HDF5
    if (hs_h5_is_hdf5(r->path)) {
        r->file = H5Fopen(r->path, H5F_ACC_RDONLY, H5P_DEFAULT);
        /* an HDF5 signature that HDF5 cannot open: a truncated or damaged file is bad input */
        if (r->file < 0)
            return hs_input_error(r->path, 0, NULL, "an HDF5 (or NetCDF-4) file that cannot be opened: truncated or damaged");
        r->kind = RD_HDF5;
        return HS_OK;
    }
#endif
    return hs_input_error(r->path, 0, NULL, "not a NetCDF or HDF5 file this build can read (features: %s)", HS_FEATURES);
}

/* ---------------------------------------------------------------- NetCDF classic: truncation */

/* The netCDF library reads past the end of a classic file as if the missing bytes were zeros (a
 * model or training file cut short by a full disk or an interrupted copy was used as if whole):
 * the header says where every variable's data begins and how long it is, so the file size it
 * needs is known before any data is read.  The format (CDF-1, CDF-2, CDF-5) is the netCDF classic
 * format specification's: big-endian, 4-byte aligned, sizes and counts 8 bytes wide in CDF-5,
 * offsets 8 bytes wide in CDF-2 and CDF-5. */
typedef struct {
    const unsigned char *p, *end;
    int version;
    int bad;     /* not a header this parser understands, or it ran out of bytes: */
    int ran_out; /* the header goes on past the bytes read */
} cdf_cursor;

static uint64_t cdf_uint(cdf_cursor *c, int width)
{
    if (c->bad || c->end - c->p < width) return c->ran_out = !c->bad, c->bad = 1, 0;
    uint64_t v = 0;
    for (int i = 0; i < width; i++) v = v << 8 | c->p[i];
    c->p += width;
    return v;
}

static uint64_t cdf_count(cdf_cursor *c) { return cdf_uint(c, c->version == 5 ? 8 : 4); }

static void cdf_skip(cdf_cursor *c, uint64_t bytes)
{
    bytes = (bytes + 3) / 4 * 4;
    if (c->bad || (uint64_t)(c->end - c->p) < bytes) c->ran_out = !c->bad, c->bad = 1;
    else c->p += bytes;
}

static int cdf_type_size(uint64_t type)
{
    static const int size[12] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8}; /* NC_BYTE .. NC_UINT64 */
    return type >= 1 && type <= 11 ? size[type] : 0;
}

static void cdf_skip_attributes(cdf_cursor *c)
{
    uint64_t tag = cdf_uint(c, 4), n = cdf_count(c);
    if (tag != 0x0C && !(tag == 0 && n == 0)) c->bad = 1;
    for (uint64_t a = 0; a < n && !c->bad; a++) {
        cdf_skip(c, cdf_count(c));
        int size = cdf_type_size(cdf_uint(c, 4));
        uint64_t count = cdf_count(c);
        if (!size) c->bad = 1;
        else if (count > (uint64_t)(c->end - c->p)) c->ran_out = !c->bad, c->bad = 1;
        else cdf_skip(c, count * (uint64_t)size);
    }
}

/* The size a classic file's header says it has (0 where it is not one, or cannot be told; *short_read
 * set when the header runs past the `len` bytes given). */
static uint64_t cdf_needed_size(const unsigned char *head, size_t len, int *short_read)
{
    *short_read = 0;
    if (len < 8 || memcmp(head, "CDF", 3) || (head[3] != 1 && head[3] != 2 && head[3] != 5)) return 0;
    cdf_cursor c = {head + 4, head + len, head[3], 0, 0};
    uint64_t numrecs = cdf_count(&c);
    int streaming = numrecs == (c.version == 5 ? UINT64_MAX : 0xFFFFFFFFu);
    enum { MAXD = 1024 };
    uint64_t dimlen[MAXD];
    uint64_t tag = cdf_uint(&c, 4), ndims = cdf_count(&c);
    if ((tag != 0x0A && !(tag == 0 && ndims == 0)) || ndims > MAXD) return *short_read = c.ran_out, 0;
    for (uint64_t d = 0; d < ndims && !c.bad; d++) {
        cdf_skip(&c, cdf_count(&c));
        dimlen[d] = cdf_count(&c);
    }
    cdf_skip_attributes(&c);
    tag = cdf_uint(&c, 4);
    uint64_t nvars = cdf_count(&c);
    if (c.bad || (tag != 0x0B && !(tag == 0 && nvars == 0))) return *short_read = c.ran_out, 0;
    /* pass 0: the non-record variables' ends and the record size; pass 1: the record variables' ends */
    uint64_t need = 0, recsize = 0, nrecvars = 0, last_rec_size = 0;
    const unsigned char *vars = c.p;
    for (int pass = 0; pass < 2; pass++) {
        c.p = vars;
        for (uint64_t v = 0; v < nvars && !c.bad; v++) {
            cdf_skip(&c, cdf_count(&c));
            uint64_t rank = cdf_count(&c), size = 1;
            int record = 0;
            if (rank > MAXD) return *short_read = c.ran_out, 0;
            for (uint64_t r = 0; r < rank && !c.bad; r++) {
                uint64_t id = cdf_count(&c);
                if (id >= ndims) return *short_read = c.ran_out, 0;
                if (dimlen[id] == 0 && r == 0) record = 1;
                else if (dimlen[id] && size <= UINT64_MAX / dimlen[id]) size *= dimlen[id];
                else size = 0;
            }
            cdf_skip_attributes(&c);
            int tsize = cdf_type_size(cdf_uint(&c, 4));
            cdf_count(&c); /* vsize: redundant, and capped for variables over 4 GiB */
            uint64_t begin = cdf_uint(&c, c.version == 1 ? 4 : 8);
            if (c.bad || !tsize) return *short_read = c.ran_out, 0;
            size = size <= UINT64_MAX / 8 ? size * (uint64_t)tsize : 0;
            if (!record) {
                if (pass == 0 && size) need = need > begin + size ? need : begin + size;
            } else if (pass == 0) {
                nrecvars++, recsize += (size + 3) / 4 * 4;
                last_rec_size = size;
            } else if (numrecs > 0 && !streaming && size) {
                /* one record variable alone is not padded (the format's special case) */
                uint64_t stride = nrecvars == 1 ? last_rec_size : recsize;
                uint64_t end = begin + (numrecs - 1) * stride + size;
                need = need > end ? need : end;
            }
        }
    }
    *short_read = c.ran_out;
    return c.bad ? 0 : need;
}

/* Input error when a classic file is shorter than its header says. */
static int check_classic_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return HS_OK;
    unsigned char magic[4] = {0};
    long size = -1;
    uint64_t need = 0;
    if (fread(magic, 1, 4, f) == 4 && !memcmp(magic, "CDF", 3) && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0) {
        /* a header is rarely over 1 MiB; a larger one (thousands of attributes) is read up to 64 MiB */
        for (long want = 1L << 20; want <= (64L << 20); want *= 64) {
            size_t len = (size_t)(size < want ? size : want);
            unsigned char *head = malloc(len);
            int short_read = 0;
            if (head && fseek(f, 0, SEEK_SET) == 0 && fread(head, 1, len, f) == len) need = cdf_needed_size(head, len, &short_read);
            free(head);
            if (!short_read || (long)len == size) break;
        }
    }
    fclose(f);
    if (need > (uint64_t)size && size > 0)
        return hs_input_error(path, 0, NULL,
                              "a truncated NetCDF file: its header places data up to byte %llu, the file has %ld bytes "
                              "(an interrupted copy or a full disk?)",
                              (unsigned long long)need, size);
    return HS_OK;
}

int hs_reader_open(const char *path, hs_reader **out)
{
    if (!path || !out) return HS_FAIL(HS_ERR_RUNTIME, "hs_reader_open: null argument");
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return hs_input_error(path, 0, NULL, "cannot open the file (missing or unreadable)");
    fclose(f);
    int rc = check_classic_size(path);
    if (rc != HS_OK) return rc;
    hs_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory opening %s", path);
    }
    rc = open_any(r);
    if (rc != HS_OK) {
        free(r->path);
        free(r);
        return rc;
    }
    *out = r;
    return HS_OK;
}

/* The value that marks a missing point of variable `var`: its _FillValue attribute, or in a NetCDF
 * file without one the library's default fill of the variable's type (what a record never written
 * holds; not for bytes); *found = 0 when there is none. */
static int fill_value(hs_reader *r, const char *var, double *value, int *found)
{
    HS_CHECK(hs_reader_attr_real(r, var, "_FillValue", value, found));
#if HS_HAVE_NETCDF
    if (!*found && r->kind == RD_NETCDF && var) {
        /* no attribute: the library's default fill of the type marks what was never written (CF);
         * not for bytes, whose default CF says not to take as missing */
        int v;
        nc_type type;
        if (nc_inq_varid(r->ncid, var, &v) != NC_NOERR || nc_inq_vartype(r->ncid, v, &type) != NC_NOERR) return HS_OK;
        switch (type) {
        case NC_SHORT: *value = NC_FILL_SHORT, *found = 1; break;
        case NC_USHORT: *value = NC_FILL_USHORT, *found = 1; break;
        case NC_INT: *value = NC_FILL_INT, *found = 1; break;
        case NC_UINT: *value = NC_FILL_UINT, *found = 1; break;
        case NC_INT64: *value = (double)NC_FILL_INT64, *found = 1; break;
        case NC_UINT64: *value = (double)NC_FILL_UINT64, *found = 1; break;
        case NC_FLOAT: *value = NC_FILL_FLOAT, *found = 1; break;
        case NC_DOUBLE: *value = NC_FILL_DOUBLE, *found = 1; break;
        default: break;
        }
    }
#endif
    return HS_OK;
}

void hs_reader_close(hs_reader *r)
{
    if (!r) return;
#if HS_HAVE_NETCDF
    if (r->kind == RD_NETCDF) nc_close(r->ncid);
#endif
#if HS_HAVE_HDF5
    if (r->kind == RD_HDF5) H5Fclose(r->file);
#endif
    free(r->path);
    free(r);
}

/* ------------------------------------------------------------------ NetCDF */
#if HS_HAVE_NETCDF
static int nc_var(hs_reader *r, const char *name, int *varid)
{
    if (nc_inq_varid(r->ncid, name, varid) != NC_NOERR)
        return hs_input_error(r->path, 0, name, "no such variable in the file");
    return HS_OK;
}

static int nc_shape(hs_reader *r, const char *name, int64_t shape[8], int *rank)
{
    int v, nd, dims[NC_MAX_VAR_DIMS];
    HS_CHECK(nc_var(r, name, &v));
    HS_NC_CHECK(nc_inq_varndims(r->ncid, v, &nd), r->path);
    if (nd > 8) return hs_input_error(r->path, 0, name, "%d dimensions (at most 8 supported)", nd);
    HS_NC_CHECK(nc_inq_vardimid(r->ncid, v, dims), r->path);
    for (int i = 0; i < nd; i++) {
        size_t len;
        HS_NC_CHECK(nc_inq_dimlen(r->ncid, dims[i], &len), r->path);
        shape[i] = (int64_t)len;
    }
    *rank = nd;
    return HS_OK;
}

static int nc_read(hs_reader *r, const char *name, const int64_t *start, const int64_t *count, int rank, double *out)
{
    int v;
    size_t st[8] = {0}, ct[8] = {0};
    HS_CHECK(nc_var(r, name, &v));
    for (int i = 0; i < rank; i++) st[i] = (size_t)start[i], ct[i] = (size_t)count[i];
    HS_NC_CHECK(nc_get_vara_double(r->ncid, v, st, ct, out), r->path);
    return HS_OK;
}
#endif

/* ------------------------------------------------------------------ HDF5 */
#if HS_HAVE_HDF5
static int h5_dataset(hs_reader *r, const char *name, hid_t *ds)
{
    htri_t e = H5Lexists(r->file, name, H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
    if (e <= 0) return hs_input_error(r->path, 0, name, "no such variable in the file");
    HS_H5_ID(*ds, H5Dopen2(r->file, name, H5P_DEFAULT), r->path);
    return HS_OK;
}

static int h5_shape(hs_reader *r, const char *name, int64_t shape[8], int *rank)
{
    hid_t ds = -1, sp;
    hsize_t dims[H5S_MAX_RANK];
    HS_CHECK(h5_dataset(r, name, &ds));
    sp = H5Dget_space(ds);
    int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (nd >= 0 && nd <= 8) H5Sget_simple_extent_dims(sp, dims, NULL);
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(ds);
    if (nd < 0) return hs_h5_fail("H5Dget_space", r->path, __FILE__, __LINE__);
    if (nd > 8) return hs_input_error(r->path, 0, name, "%d dimensions (at most 8 supported)", nd);
    for (int i = 0; i < nd; i++) shape[i] = (int64_t)dims[i];
    *rank = nd;
    return HS_OK;
}

/* Read a selection as doubles.  HDF5 converts integers and floats itself but has no conversion
 * from an enumeration (h5py stores numpy bools as an enum of int8 FALSE = 0, TRUE = 1): such a
 * dataset is read in its native enum type and its integer values are widened here. */
static herr_t h5_read_values(hid_t ds, hid_t msp, hid_t fsp, int rank, const hsize_t *ct, double *out)
{
    hid_t ft = H5Dget_type(ds);
    if (ft < 0) return -1;
    if (H5Tget_class(ft) != H5T_ENUM) {
        H5Tclose(ft);
        return H5Dread(ds, H5T_NATIVE_DOUBLE, msp, fsp, H5P_DEFAULT, out);
    }
    herr_t rc = -1;
    hid_t mt = H5Tget_native_type(ft, H5T_DIR_ASCEND), base = mt >= 0 ? H5Tget_super(mt) : -1;
    size_t n = 1, size = base >= 0 ? H5Tget_size(base) : 0;
    int is_signed = base >= 0 && H5Tget_sign(base) == H5T_SGN_2;
    for (int i = 0; i < rank; i++) n *= (size_t)ct[i];
    unsigned char *buf = size == 1 || size == 2 || size == 4 || size == 8 ? malloc(n * size + 1) : NULL;
    if (buf && (rc = H5Dread(ds, mt, msp, fsp, H5P_DEFAULT, buf)) >= 0)
        for (size_t i = 0; i < n; i++) {
            const unsigned char *e = buf + i * size;
            switch (size) {
            case 1: out[i] = is_signed ? (double)*(const int8_t *)e : (double)*e; break;
            case 2: out[i] = is_signed ? (double)*(const int16_t *)e : (double)*(const uint16_t *)e; break;
            case 4: out[i] = is_signed ? (double)*(const int32_t *)e : (double)*(const uint32_t *)e; break;
            default: out[i] = is_signed ? (double)*(const int64_t *)e : (double)*(const uint64_t *)e; break;
            }
        }
    free(buf);
    if (base >= 0) H5Tclose(base);
    if (mt >= 0) H5Tclose(mt);
    H5Tclose(ft);
    return rc;
}

static int h5_read(hs_reader *r, const char *name, const int64_t *start, const int64_t *count, int rank, double *out)
{
    hid_t ds = -1, fsp = -1, msp = -1;
    HS_CHECK(h5_dataset(r, name, &ds));
    hsize_t st[8] = {0}, ct[8] = {0};
    for (int i = 0; i < rank; i++) st[i] = (hsize_t)start[i], ct[i] = (hsize_t)count[i];
    herr_t rc = -1;
    const char *call = "H5Dget_space";
    if ((fsp = H5Dget_space(ds)) >= 0) {
        call = "H5Sselect_hyperslab";
        if (rank == 0 || H5Sselect_hyperslab(fsp, H5S_SELECT_SET, st, NULL, ct, NULL) >= 0) {
            call = "H5Screate";
            msp = rank ? H5Screate_simple(rank, ct, NULL) : H5Screate(H5S_SCALAR);
            if (msp >= 0) {
                call = "H5Dread";
                rc = h5_read_values(ds, msp, fsp, rank, ct, out);
            }
        }
    }
    if (msp >= 0) H5Sclose(msp);
    if (fsp >= 0) H5Sclose(fsp);
    H5Dclose(ds);
    if (rc < 0) return hs_h5_fail(call, r->path, __FILE__, __LINE__);
    return HS_OK;
}
#endif

/* ------------------------------------------------------------------ dispatch */

int hs_reader_var_shape(hs_reader *r, const char *name, int64_t shape[8], int *rank)
{
    if (!r || !name || !shape || !rank) return HS_FAIL(HS_ERR_RUNTIME, "hs_reader_var_shape: null argument");
#if HS_HAVE_NETCDF
    if (r->kind == RD_NETCDF) return nc_shape(r, name, shape, rank);
#endif
#if HS_HAVE_HDF5
    if (r->kind == RD_HDF5) return h5_shape(r, name, shape, rank);
#endif
    return HS_FAIL(HS_ERR_RUNTIME, "%s: reader in an unknown state", r->path);
}

/* The block [start, start + count) (rank values each, checked against the shape). */
static int read_block(hs_reader *r, const char *name, const int64_t *shape, int rank, const int64_t *start, const int64_t *count,
                      double *out)
{
    for (int i = 0; i < rank; i++)
        if (start[i] < 0 || count[i] < 0 || start[i] > shape[i] || count[i] > shape[i] - start[i])
            return hs_input_error(r->path, 0, name, "dimension %d: the block %lld..%lld is outside its %lld values", i + 1,
                                  (long long)start[i], (long long)(start[i] + count[i] - 1), (long long)shape[i]);
#if HS_HAVE_NETCDF
    if (r->kind == RD_NETCDF) return nc_read(r, name, start, count, rank, out);
#endif
#if HS_HAVE_HDF5
    if (r->kind == RD_HDF5) return h5_read(r, name, start, count, rank, out);
#endif
    (void)out;
    return HS_FAIL(HS_ERR_RUNTIME, "%s: reader in an unknown state", r->path);
}

/* The whole variable (record < 0) or its record `record` along the first dimension. */
static int read_any(hs_reader *r, const char *name, int64_t record, double *out)
{
    int64_t shape[8] = {0}, start[8] = {0};
    int rank = 0;
    HS_CHECK(hs_reader_var_shape(r, name, shape, &rank));
    if (record >= 0 && (rank == 0 || record >= shape[0]))
        return hs_input_error(r->path, 0, name, "record %lld out of range (the variable has %lld)", (long long)record,
                              (long long)(rank ? shape[0] : 0));
    int64_t count[8];
    for (int i = 0; i < rank; i++) count[i] = shape[i];
    if (record >= 0) start[0] = record, count[0] = 1;
    return read_block(r, name, shape, rank, start, count, out);
}

int hs_reader_read(hs_reader *r, const char *name, double *out)
{
    if (!r || !name || !out) return HS_FAIL(HS_ERR_RUNTIME, "hs_reader_read: null argument");
    return read_any(r, name, -1, out);
}

int hs_reader_packing_of(hs_reader *r, const char *var, hs_reader_packing *pk)
{
    memset(pk, 0, sizeof *pk);
    pk->scale = 1;
    int has = 0;
    HS_CHECK(hs_reader_attr_real(r, var, "scale_factor", &pk->scale, &has));
    if (!has) pk->scale = 1;
    HS_CHECK(hs_reader_attr_real(r, var, "add_offset", &pk->offset, &has));
    if (!has) pk->offset = 0;
    HS_CHECK(fill_value(r, var, &pk->fill, &pk->has_fill));
    /* CF 2.5.1: missing_value may be a vector (every value of it marks missing data), and values
     * outside valid_min / valid_max / valid_range are missing too (compared as stored, as the
     * netCDF conventions say).  More missing values than kept, or a range that is not two
     * numbers, is refused rather than cut short: the values left out would pass as data. */
    double missing[HS_READER_MISSING_MAX + 1];
    HS_CHECK(hs_reader_attr_reals(r, var, "missing_value", missing, HS_READER_MISSING_MAX + 1, &pk->nmissing));
    if (pk->nmissing > HS_READER_MISSING_MAX)
        return hs_input_error(r->path, 0, var, "missing_value has more than %d values (at most %d are read)", HS_READER_MISSING_MAX,
                              HS_READER_MISSING_MAX);
    memcpy(pk->missing, missing, (size_t)pk->nmissing * sizeof *missing);
    double range[3];
    int nr = 0;
    HS_CHECK(hs_reader_attr_reals(r, var, "valid_range", range, 3, &nr));
    if (nr == 1 || nr == 3) return hs_input_error(r->path, 0, var, "valid_range must be two numbers (min, max)%s", nr == 1 ? ", it has one" : ", it has more");
    if (nr == 2) pk->valid_min = range[0], pk->valid_max = range[1], pk->has_valid_min = pk->has_valid_max = 1;
    if (!pk->has_valid_min) HS_CHECK(hs_reader_attr_real(r, var, "valid_min", &pk->valid_min, &pk->has_valid_min));
    if (!pk->has_valid_max) HS_CHECK(hs_reader_attr_real(r, var, "valid_max", &pk->valid_max, &pk->has_valid_max));
    char u[16];
    HS_CHECK(hs_reader_attr_text(r, var, "_Unsigned", u, sizeof u, &has));
#if HS_HAVE_NETCDF
    if (has && !strcmp(u, "true") && r->kind == RD_NETCDF) {
        int v;
        nc_type type;
        if (nc_inq_varid(r->ncid, var, &v) == NC_NOERR && nc_inq_vartype(r->ncid, v, &type) == NC_NOERR)
            pk->unsigned_bits = type == NC_BYTE ? 8 : type == NC_SHORT ? 16 : type == NC_INT ? 32 : 0;
    }
#endif
    /* The missing-value attributes are of the variable's type and unsigned with it (NUG; netCDF4-python
     * reads them so): valid_range (10, -56) on _Unsigned bytes is 10..200, not an empty range. */
    pk->fill = hs_reader_stored_unsigned(pk, pk->fill);
    for (int i = 0; i < pk->nmissing; i++) pk->missing[i] = hs_reader_stored_unsigned(pk, pk->missing[i]);
    pk->valid_min = hs_reader_stored_unsigned(pk, pk->valid_min);
    pk->valid_max = hs_reader_stored_unsigned(pk, pk->valid_max);
    return HS_OK;
}

int hs_reader_read_cf(hs_reader *r, const char *name, double *out)
{
    if (!r || !name || !out) return HS_FAIL(HS_ERR_RUNTIME, "hs_reader_read_cf: null argument");
    int64_t shape[8] = {0};
    int rank = 0;
    HS_CHECK(hs_reader_var_shape(r, name, shape, &rank));
    HS_CHECK(read_any(r, name, -1, out));
    hs_reader_packing pk;
    HS_CHECK(hs_reader_packing_of(r, name, &pk));
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= shape[i];
    hs_reader_apply_cf(&pk, out, n);
    return HS_OK;
}

int hs_reader_read_record(hs_reader *r, const char *name, int64_t record, double *out)
{
    if (!r || !name || !out || record < 0) return HS_FAIL(HS_ERR_RUNTIME, "hs_reader_read_record: bad argument");
    return read_any(r, name, record, out);
}

int hs_reader_read_slab(hs_reader *r, const char *name, const int64_t *start, const int64_t *count, double *out)
{
    if (!r || !name || !start || !count || !out) return HS_FAIL(HS_ERR_RUNTIME, "hs_reader_read_slab: null argument");
    int64_t shape[8] = {0};
    int rank = 0;
    HS_CHECK(hs_reader_var_shape(r, name, shape, &rank));
    return read_block(r, name, shape, rank, start, count, out);
}

/* ------------------------------------------------------------------ listing */

#if HS_HAVE_NETCDF || HS_HAVE_HDF5
static int push_name(char ***names, int *count, int *cap, const char *name)
{
    if (*count == *cap) {
        int c = *cap ? 2 * *cap : 16;
        char **p = realloc(*names, (size_t)c * sizeof *p);
        if (!p) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory listing variables");
        *names = p;
        *cap = c;
    }
    if (!((*names)[*count] = strdup(name))) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory listing variables");
    (*count)++;
    return HS_OK;
}
#endif

void hs_reader_free_names(char **names, int count)
{
    for (int i = 0; names && i < count; i++) free(names[i]);
    free(names);
}

#if HS_HAVE_NETCDF
static int nc_names(hs_reader *r, char ***names, int *count, int *cap, int *ntext)
{
    int nv;
    HS_NC_CHECK(nc_inq_nvars(r->ncid, &nv), r->path);
    for (int v = 0; v < nv; v++) {
        char name[NC_MAX_NAME + 1];
        nc_type t;
        HS_NC_CHECK(nc_inq_varname(r->ncid, v, name), r->path);
        HS_NC_CHECK(nc_inq_vartype(r->ncid, v, &t), r->path);
        if (t == NC_CHAR || t == NC_STRING || t > NC_STRING) (*ntext)++;
        else HS_CHECK(push_name(names, count, cap, name));
    }
    return HS_OK;
}
#endif

#if HS_HAVE_HDF5
/* Datasets of the root group by creation order where tracked (our files), else by name; netCDF-4's
 * dimensions without a coordinate variable (scales that hold no data, such as bnds) are none. */
static int h5_names(hs_reader *r, char ***names, int *count, int *cap, int *ntext)
{
    H5G_info_t gi;
    HS_H5_CHECK(H5Gget_info(r->file, &gi), r->path);
    H5_index_t order = H5_INDEX_CRT_ORDER;
    char probe[256];
    if (gi.nlinks > 0 && H5Lget_name_by_idx(r->file, ".", order, H5_ITER_INC, 0, probe, sizeof probe, H5P_DEFAULT) < 0) {
        H5Eclear2(H5E_DEFAULT);
        order = H5_INDEX_NAME;
    }
    for (hsize_t i = 0; i < gi.nlinks; i++) {
        char name[256];
        ssize_t len = H5Lget_name_by_idx(r->file, ".", order, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT);
        HS_H5_CHECK_AS(len, r->path, "H5Lget_name_by_idx (link %llu of /)", (unsigned long long)i);
        if ((size_t)len >= sizeof name) continue;
        hid_t obj;
        HS_H5_ID(obj, H5Oopen(r->file, name, H5P_DEFAULT), r->path);
        int is_ds = H5Iget_type(obj) == H5I_DATASET;
        H5T_class_t cls = H5T_NO_CLASS;
        if (is_ds) {
            hid_t t = H5Dget_type(obj);
            if (t >= 0) cls = H5Tget_class(t), H5Tclose(t);
            is_ds = !hs_h5_is_dim_only(obj);
        }
        H5Oclose(obj);
        if (!is_ds) continue;
        if (cls == H5T_INTEGER || cls == H5T_FLOAT || cls == H5T_ENUM) HS_CHECK(push_name(names, count, cap, name));
        else (*ntext)++;
    }
    return HS_OK;
}
#endif

int hs_reader_var_names(hs_reader *r, char ***names, int *count, int *ntext)
{
    if (!r || !names || !count || !ntext) return HS_FAIL(HS_ERR_RUNTIME, "hs_reader_var_names: null argument");
    *names = NULL;
    *count = *ntext = 0;
    int cap = 0, rc = -1;
    (void)cap;
#if HS_HAVE_NETCDF
    if (r->kind == RD_NETCDF) rc = nc_names(r, names, count, &cap, ntext);
#endif
#if HS_HAVE_HDF5
    if (r->kind == RD_HDF5) rc = h5_names(r, names, count, &cap, ntext);
#endif
    if (rc == -1) rc = HS_FAIL(HS_ERR_RUNTIME, "%s: reader in an unknown state", r->path);
    if (rc != HS_OK) {
        hs_reader_free_names(*names, *count);
        *names = NULL;
        *count = 0;
    }
    return rc;
}

int hs_reader_var_is_record(hs_reader *r, const char *name)
{
    if (!r || !name) return HS_FAIL(HS_ERR_RUNTIME, "hs_reader_var_is_record: null argument");
#if HS_HAVE_NETCDF
    if (r->kind == RD_NETCDF) {
        int v, nd, unlim = -1, dims[NC_MAX_VAR_DIMS];
        HS_CHECK(nc_var(r, name, &v));
        HS_NC_CHECK(nc_inq_varndims(r->ncid, v, &nd), r->path);
        HS_NC_CHECK(nc_inq_vardimid(r->ncid, v, dims), r->path);
        HS_NC_CHECK(nc_inq_unlimdim(r->ncid, &unlim), r->path);
        return nd > 0 && unlim >= 0 && dims[0] == unlim;
    }
#endif
#if HS_HAVE_HDF5
    if (r->kind == RD_HDF5) {
        hid_t ds = -1, sp;
        hsize_t dims[H5S_MAX_RANK], maxd[H5S_MAX_RANK];
        HS_CHECK(h5_dataset(r, name, &ds));
        sp = H5Dget_space(ds);
        int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
        if (nd > 0) H5Sget_simple_extent_dims(sp, dims, maxd);
        if (sp >= 0) H5Sclose(sp);
        H5Dclose(ds);
        if (nd < 0) return hs_h5_fail("H5Dget_space", r->path, __FILE__, __LINE__);
        return nd > 0 && maxd[0] == H5S_UNLIMITED;
    }
#endif
    return HS_FAIL(HS_ERR_RUNTIME, "%s: reader in an unknown state", r->path);
}

/* ------------------------------------------------------------------ names and attributes */

int hs_reader_has_var(hs_reader *r, const char *name)
{
    if (!r || !name) return 0;
#if HS_HAVE_NETCDF
    int v;
    if (r->kind == RD_NETCDF) return nc_inq_varid(r->ncid, name, &v) == NC_NOERR;
#endif
#if HS_HAVE_HDF5
    if (r->kind == RD_HDF5) {
        htri_t e = H5Lexists(r->file, name, H5P_DEFAULT);
        H5Eclear2(H5E_DEFAULT);
        return e > 0;
    }
#endif
    return 0;
}

#if HS_HAVE_HDF5
/* The name of the last dimension scale attached to an axis (as netCDF-C and h5netcdf take it). */
static herr_t last_scale(hid_t did, unsigned dim, hid_t dsid, void *data)
{
    char path[256];
    (void)did, (void)dim;
    ssize_t len = H5Iget_name(dsid, path, sizeof path);
    if (len > 0 && (size_t)len < sizeof path) {
        const char *base = strrchr(path, '/');
        snprintf((char *)data, HS_READER_NAME_MAX, "%.*s", HS_READER_NAME_MAX - 1, base ? base + 1 : path);
    }
    return 0;
}

/* Dimension names from the dimension scales attached to a dataset (a netCDF-4 file written by
 * h5netcdf or netCDF read without the NetCDF library); axes without one keep dimN. */
static int h5_scale_dims(hs_reader *r, const char *name, char dims[8][HS_READER_NAME_MAX], int rank)
{
    hid_t ds = -1;
    HS_CHECK(h5_dataset(r, name, &ds));
    for (int i = 0; i < rank; i++)
        if (H5DSget_num_scales(ds, (unsigned)i) > 0) H5DSiterate_scales(ds, (unsigned)i, NULL, last_scale, dims[i]);
    H5Eclear2(H5E_DEFAULT);
    H5Dclose(ds);
    return HS_OK;
}
#endif

int hs_reader_var_dims(hs_reader *r, const char *name, char dims[8][HS_READER_NAME_MAX], int *rank)
{
    int64_t shape[8];
    HS_CHECK(hs_reader_var_shape(r, name, shape, rank));
    for (int i = 0; i < *rank; i++) snprintf(dims[i], HS_READER_NAME_MAX, "dim%d", i);
#if HS_HAVE_NETCDF
    if (r->kind == RD_NETCDF) {
        int v, ids[NC_MAX_VAR_DIMS];
        char nm[NC_MAX_NAME + 1];
        HS_CHECK(nc_var(r, name, &v));
        HS_NC_CHECK(nc_inq_vardimid(r->ncid, v, ids), r->path);
        for (int i = 0; i < *rank; i++) {
            HS_NC_CHECK(nc_inq_dimname(r->ncid, ids[i], nm), r->path);
            snprintf(dims[i], HS_READER_NAME_MAX, "%.63s", nm);
        }
        return HS_OK;
    }
#endif
    char words[512];
    int found = 0;
    HS_CHECK(hs_reader_attr_text(r, name, "dimensions", words, sizeof words, &found));
#if HS_HAVE_HDF5
    if (!found && r->kind == RD_HDF5) return h5_scale_dims(r, name, dims, *rank);
#endif
    if (!found) return HS_OK;
    char *save = NULL, *w = strtok_r(words, " ", &save);
    for (int i = 0; w && i < *rank; i++, w = strtok_r(NULL, " ", &save)) snprintf(dims[i], HS_READER_NAME_MAX, "%s", w);
    return HS_OK;
}

#if HS_HAVE_NETCDF
/* A failed read of attribute var:attr (var NULL: a global one), the call and the attribute named. */
static int nc_attr_fail(const hs_reader *r, int status, const char *call, const char *var, const char *attr, int line)
{
    char what[2 * HS_READER_NAME_MAX + 64];
    snprintf(what, sizeof what, "%s (attribute %s:%s)", call, var ? var : "", attr);
    return hs_nc_fail(status, what, r->path, __FILE__, line);
}
#endif

int hs_reader_attr_text(hs_reader *r, const char *var, const char *attr, char *buf, size_t len, int *found)
{
    if (!r || !attr || !buf || len == 0 || !found) return HS_FAIL(HS_ERR_RUNTIME, "hs_reader_attr_text: bad argument");
    *found = 0;
    buf[0] = 0;
#if HS_HAVE_NETCDF
    if (r->kind == RD_NETCDF) {
        int v = NC_GLOBAL;
        if (var && nc_inq_varid(r->ncid, var, &v) != NC_NOERR) return HS_OK;
        nc_type type;
        size_t n;
        if (nc_inq_att(r->ncid, v, attr, &type, &n) != NC_NOERR || (type != NC_CHAR && type != NC_STRING)) return HS_OK;
        if (type == NC_STRING) { /* a NetCDF-4 string attribute (xarray, setncattr_string): its first string */
            if (n < 1) return HS_OK;
            char **strs = calloc(n, sizeof *strs);
            if (!strs) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
            int rc = nc_get_att_string(r->ncid, v, attr, strs);
            if (rc == NC_NOERR) {
                if (strs[0]) snprintf(buf, len, "%s", strs[0]), *found = 1;
                nc_free_string(n, strs);
            }
            free(strs);
            if (rc != NC_NOERR) return nc_attr_fail(r, rc, "nc_get_att_string", var, attr, __LINE__);
            return HS_OK;
        }
        char *s = calloc(n + 1, 1);
        if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        int rc = nc_get_att_text(r->ncid, v, attr, s);
        if (rc == NC_NOERR) snprintf(buf, len, "%s", s), *found = 1;
        free(s);
        if (rc != NC_NOERR) return nc_attr_fail(r, rc, "nc_get_att_text", var, attr, __LINE__);
        return HS_OK;
    }
#endif
#if HS_HAVE_HDF5
    if (r->kind == RD_HDF5) {
        hid_t obj = r->file;
        int opened = 0;
        if (var) {
            if (!hs_reader_has_var(r, var)) return HS_OK;
            HS_H5_ID(obj, H5Oopen(r->file, var, H5P_DEFAULT), r->path);
            opened = 1;
        }
        char *s = NULL;
        int rc = hs_h5_read_text(obj, attr, &s, r->path);
        if (opened) H5Oclose(obj);
        HS_CHECK(rc);
        if (s) snprintf(buf, len, "%s", s), *found = 1;
        free(s);
    }
#endif
    return HS_OK;
}

int hs_reader_attr_reals(hs_reader *r, const char *var, const char *attr, double *values, int max, int *count)
{
    if (!r || !attr || !values || max < 1 || !count) return HS_FAIL(HS_ERR_RUNTIME, "hs_reader_attr_reals: bad argument");
    *count = 0;
#if HS_HAVE_NETCDF
    if (r->kind == RD_NETCDF) {
        int v = NC_GLOBAL;
        if (var && nc_inq_varid(r->ncid, var, &v) != NC_NOERR) return HS_OK;
        nc_type type;
        size_t n;
        if (nc_inq_att(r->ncid, v, attr, &type, &n) != NC_NOERR || n < 1 || type == NC_CHAR || type == NC_STRING) return HS_OK;
        double *vals = malloc(n * sizeof *vals);
        if (!vals) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        int rc = nc_get_att_double(r->ncid, v, attr, vals);
        if (rc == NC_NOERR) {
            *count = n < (size_t)max ? (int)n : max;
            memcpy(values, vals, (size_t)*count * sizeof *vals);
        }
        free(vals);
        if (rc != NC_NOERR) return nc_attr_fail(r, rc, "nc_get_att_double", var, attr, __LINE__);
        return HS_OK;
    }
#endif
#if HS_HAVE_HDF5
    if (r->kind == RD_HDF5) {
        hid_t obj = r->file;
        if (var) {
            if (!hs_reader_has_var(r, var)) return HS_OK;
            HS_H5_ID(obj, H5Oopen(r->file, var, H5P_DEFAULT), r->path);
        }
        htri_t e = H5Aexists(obj, attr);
        int rc = HS_OK;
        if (e > 0) {
            hid_t a = H5Aopen(obj, attr, H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
            H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
            hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : 0;
            if ((cls == H5T_FLOAT || cls == H5T_INTEGER) && n >= 1) {
                double *vals = malloc((size_t)n * sizeof *vals);
                if (!vals) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
                else if (H5Aread(a, H5T_NATIVE_DOUBLE, vals) < 0) rc = hs_h5_fail("H5Aread", r->path, __FILE__, __LINE__);
                else {
                    *count = n < max ? (int)n : max;
                    memcpy(values, vals, (size_t)*count * sizeof *vals);
                }
                free(vals);
            }
            if (sp >= 0) H5Sclose(sp);
            if (t >= 0) H5Tclose(t);
            if (a >= 0) H5Aclose(a);
        }
        H5Eclear2(H5E_DEFAULT);
        if (var) H5Oclose(obj);
        return rc;
    }
#endif
    return HS_OK;
}

int hs_reader_attr_real(hs_reader *r, const char *var, const char *attr, double *value, int *found)
{
    if (!r || !attr || !value || !found) return HS_FAIL(HS_ERR_RUNTIME, "hs_reader_attr_real: bad argument");
    int n = 0;
    HS_CHECK(hs_reader_attr_reals(r, var, attr, value, 1, &n));
    *found = n > 0;
    return HS_OK;
}
