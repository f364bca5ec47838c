/* HDF5 checkpoint format: root attributes (format, solver, step, time, nranks, parameters,
 * header_checksum) and one 1-D dataset per array holding every rank's part in rank order, with
 * `dtype`, `counts` and `checksum` (FNV-1a of its bytes) attributes. */
#include "io/checkpoint_impl.h"
#include "io/output_impl.h"

#if HS_HAVE_HDF5
#include <stdlib.h>
#include <string.h>

typedef struct {
    hid_t file;
    hid_t ds;       /* the current array */
    hs_dtype t;
    uint64_t hash;  /* of the current array's bytes written so far */
} ck_state;

/* The header's checksum: solver and parameter text (each with its NUL), then step, time and rank
 * count as 8-byte little-endian values. */
static uint64_t header_hash(const char *solver, const char *params, int64_t step, double time, int64_t nranks)
{
    uint64_t h = hs_fnv1a64(HS_FNV1A64_INIT, solver, strlen(solver) + 1);
    h = hs_fnv1a64(h, params, strlen(params) + 1);
    h = hs_fnv1a64(h, &step, sizeof step);
    h = hs_fnv1a64(h, &time, sizeof time);
    return hs_fnv1a64(h, &nranks, sizeof nranks);
}

/* A checksum is stored as the int64 with the same bits (HDF5 attributes of our helpers are signed). */
static int write_checksum(hid_t obj, const char *name, uint64_t h, const char *path)
{
    int64_t bits;
    memcpy(&bits, &h, sizeof bits);
    return hs_h5_attr_int64(obj, name, bits, path);
}

static ck_state *st(hs_checkpoint *c) { return (ck_state *)c->bs; }

/* File and memory types of one element; complex numbers are stored as (re, im) pairs. */
static int h5_types(hs_dtype t, hid_t *ftype, hid_t *mtype, int *mult)
{
    *mult = 1;
    switch (t) {
    case HS_F64: *ftype = H5T_IEEE_F64LE; *mtype = H5T_NATIVE_DOUBLE; break;
    case HS_F32: *ftype = H5T_IEEE_F32LE; *mtype = H5T_NATIVE_FLOAT; break;
    case HS_I32: *ftype = H5T_STD_I32LE; *mtype = H5T_NATIVE_INT32; break;
    case HS_I64: *ftype = H5T_STD_I64LE; *mtype = H5T_NATIVE_INT64; break;
    case HS_U32: *ftype = H5T_STD_U32LE; *mtype = H5T_NATIVE_UINT32; break;
    case HS_U64: *ftype = H5T_STD_U64LE; *mtype = H5T_NATIVE_UINT64; break;
    case HS_C128: *ftype = H5T_IEEE_F64LE; *mtype = H5T_NATIVE_DOUBLE; *mult = 2; break;
    case HS_C64: *ftype = H5T_IEEE_F32LE; *mtype = H5T_NATIVE_FLOAT; *mult = 2; break;
    default: return HS_FAIL(HS_ERR_RUNTIME, "checkpoint: unknown type %d", (int)t);
    }
    return HS_OK;
}

static int new_state(hs_checkpoint *c)
{
    ck_state *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    s->file = s->ds = -1;
    c->bs = s;
    return HS_OK;
}

static int ck_create(hs_checkpoint *c, const char *solver, const char *params, int64_t step, double time)
{
    hid_t fapl;
    HS_CHECK(new_state(c));
    HS_CHECK(hs_h5_fapl(&fapl, c->tmp));
    st(c)->file = H5Fcreate(c->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (st(c)->file < 0) return hs_h5_fail("H5Fcreate", c->tmp, __FILE__, __LINE__);
    hid_t f = st(c)->file;
    HS_CHECK(hs_h5_attr_text(f, "format", HS_CKPT_FORMAT_NAME, c->tmp));
    HS_CHECK(hs_h5_attr_text(f, "source", HS_SOURCE_ATTR, c->tmp));
    HS_CHECK(hs_h5_attr_text(f, "solver", solver, c->tmp));
    HS_CHECK(hs_h5_attr_text(f, "parameters", params, c->tmp));
    HS_CHECK(hs_h5_attr_int64(f, "step", step, c->tmp));
    HS_CHECK(hs_h5_attr_double(f, "time", time, c->tmp));
    HS_CHECK(hs_h5_attr_int64(f, "nranks", c->nranks, c->tmp));
    return write_checksum(f, "header_checksum", header_hash(solver, params, step, time, c->nranks), c->tmp);
}

static int counts_attr(hs_checkpoint *c, hid_t ds, const char *name, const int64_t *counts)
{
    hsize_t n = (hsize_t)c->nranks;
    hid_t sp, a;
    HS_H5_ID(sp, H5Screate_simple(1, &n, NULL), c->tmp);
    HS_H5_ID(a, H5Acreate2(ds, "counts", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT), c->tmp);
    herr_t rc = H5Awrite(a, H5T_NATIVE_INT64, counts);
    H5Aclose(a);
    H5Sclose(sp);
    HS_H5_CHECK_AS(rc, c->tmp, "H5Awrite (attribute counts of %s)", name);
    return HS_OK;
}

static int ck_begin(hs_checkpoint *c, const char *name, hs_dtype t, const int64_t *counts)
{
    hid_t ftype = -1, mtype = -1, sp = -1;
    int mult;
    HS_CHECK(h5_types(t, &ftype, &mtype, &mult));
    htri_t e = H5Lexists(st(c)->file, name, H5P_DEFAULT);
    HS_H5_CHECK_AS(e, c->tmp, "H5Lexists (dataset %s)", name);
    if (e > 0) return HS_FAIL(HS_ERR_RUNTIME, "checkpoint %s: array %s written twice", c->tmp, name);
    hsize_t total = 0;
    for (int r = 0; r < c->nranks; r++) total += (hsize_t)counts[r] * (hsize_t)mult;
    HS_H5_ID(sp, H5Screate_simple(1, &total, NULL), c->tmp);
    st(c)->ds = H5Dcreate2(st(c)->file, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(sp);
    if (st(c)->ds < 0) return hs_h5_fail("H5Dcreate2", c->tmp, __FILE__, __LINE__);
    st(c)->t = t;
    st(c)->hash = HS_FNV1A64_INIT;
    HS_CHECK(hs_h5_attr_text(st(c)->ds, "dtype", hs_dtype_name(t), c->tmp));
    return counts_attr(c, st(c)->ds, name, counts);
}

/* Select elements [offset, offset + n) of the current array in file and memory spaces. */
static int select_part(hs_checkpoint *c, const char *file, int64_t offset, int64_t n, hid_t *fsp, hid_t *msp, hid_t *mtype)
{
    hid_t ftype;
    int mult;
    HS_CHECK(h5_types(st(c)->t, &ftype, mtype, &mult));
    hsize_t start = (hsize_t)offset * (hsize_t)mult, count = (hsize_t)n * (hsize_t)mult;
    HS_H5_ID(*fsp, H5Dget_space(st(c)->ds), file);
    HS_H5_CHECK(H5Sselect_hyperslab(*fsp, H5S_SELECT_SET, &start, NULL, &count, NULL), file);
    HS_H5_ID(*msp, H5Screate_simple(1, &count, NULL), file);
    return HS_OK;
}

static int ck_write(hs_checkpoint *c, int64_t offset, int64_t n, const void *data)
{
    hid_t fsp = -1, msp = -1, mtype = -1;
    int rc = select_part(c, c->tmp, offset, n, &fsp, &msp, &mtype);
    if (rc == HS_OK && H5Dwrite(st(c)->ds, mtype, msp, fsp, H5P_DEFAULT, data) < 0)
        rc = hs_h5_fail("H5Dwrite", c->tmp, __FILE__, __LINE__);
    /* parts arrive in order (checkpoint.c writes rank after rank), so the hash runs over the array */
    if (rc == HS_OK) st(c)->hash = hs_fnv1a64(st(c)->hash, data, (size_t)n * hs_dtype_size(st(c)->t));
    if (fsp >= 0) H5Sclose(fsp);
    if (msp >= 0) H5Sclose(msp);
    return rc;
}

static int close_ds(hs_checkpoint *c, const char *file)
{
    if (st(c)->ds < 0) return HS_OK;
    herr_t rc = H5Dclose(st(c)->ds);
    st(c)->ds = -1;
    HS_H5_CHECK_AS(rc, file, "H5Dclose");
    return HS_OK;
}

static int ck_end(hs_checkpoint *c)
{
    HS_CHECK(write_checksum(st(c)->ds, "checksum", st(c)->hash, c->tmp));
    return close_ds(c, c->tmp);
}

static int ck_close(hs_checkpoint *c)
{
    const char *file = c->writing ? c->tmp : c->path;
    int rc = close_ds(c, file);
    herr_t e = st(c)->file >= 0 ? H5Fclose(st(c)->file) : 0;
    free(c->bs);
    c->bs = NULL;
    HS_CHECK(rc);
    HS_H5_CHECK_AS(e, file, "H5Fclose");
    return HS_OK;
}

static void ck_discard(hs_checkpoint *c)
{
    if (!st(c)) return;
    if (st(c)->ds >= 0) H5Dclose(st(c)->ds);
    if (st(c)->file >= 0) H5Fclose(st(c)->file);
    H5Eclear2(H5E_DEFAULT);
    free(c->bs);
    c->bs = NULL;
}

/* ------------------------------------------------------------------ reading */

static int read_num(hs_checkpoint *c, hid_t obj, const char *name, hid_t mtype, void *out)
{
    htri_t e = H5Aexists(obj, name);
    HS_H5_CHECK_AS(e, c->path, "H5Aexists (attribute %s)", name);
    if (!e) return hs_input_error(c->path, 0, name, "checkpoint lacks this attribute");
    hid_t a;
    HS_H5_ID(a, H5Aopen(obj, name, H5P_DEFAULT), c->path);
    herr_t rc = H5Aread(a, mtype, out);
    H5Aclose(a);
    HS_H5_CHECK_AS(rc, c->path, "H5Aread (attribute %s)", name);
    return HS_OK;
}

static int read_checksum(hs_checkpoint *c, hid_t obj, const char *name, uint64_t *h)
{
    htri_t e = H5Aexists(obj, name);
    if (e <= 0) return hs_input_error(c->path, 0, NULL, "checkpoint is damaged (no %s attribute)", name);
    int64_t bits;
    HS_CHECK(read_num(c, obj, name, H5T_NATIVE_INT64, &bits));
    memcpy(h, &bits, sizeof *h);
    return HS_OK;
}

static int ck_header(hs_checkpoint *c, char **solver, char **params, int64_t *step, double *time, int *nranks)
{
    hid_t f = st(c)->file;
    char *format;
    HS_CHECK(hs_h5_read_text(f, "format", &format, c->path));
    int ok = format && strcmp(format, HS_CKPT_FORMAT_NAME) == 0;
    free(format);
    if (!ok) return hs_input_error(c->path, 0, NULL, "an HDF5 file, but not an hpcsim checkpoint");
    HS_CHECK(hs_h5_read_text(f, "solver", solver, c->path));
    HS_CHECK(hs_h5_read_text(f, "parameters", params, c->path));
    if (!*solver || !*params) return hs_input_error(c->path, 0, NULL, "checkpoint lacks its solver or parameters");
    int64_t nr;
    HS_CHECK(read_num(c, f, "step", H5T_NATIVE_INT64, step));
    HS_CHECK(read_num(c, f, "time", H5T_NATIVE_DOUBLE, time));
    HS_CHECK(read_num(c, f, "nranks", H5T_NATIVE_INT64, &nr));
    if (nr < 1 || nr > (1 << 24)) return hs_input_error(c->path, 0, NULL, "checkpoint is damaged (nranks)");
    uint64_t stored;
    HS_CHECK(read_checksum(c, f, "header_checksum", &stored));
    if (stored != header_hash(*solver, *params, *step, *time, nr))
        return hs_input_error(c->path, 0, NULL, "checkpoint is damaged (header checksum mismatch)");
    *nranks = c->nranks = (int)nr;
    return HS_OK;
}

/* A file HDF5 cannot read (truncated, overwritten) is bad input, with HDF5's reason. */
static int damaged(hs_checkpoint *c, const char *what)
{
    char why[256];
    hs_h5_reason(why, sizeof why);
    return hs_input_error(c->path, 0, NULL, "checkpoint is damaged (%s%s%s)", what, *why ? ": " : "", why);
}

/* A failed HDF5 call while a checkpoint is read is the file's damage, bad input like the checksums'
 * findings (a flipped byte in its metadata ended check and run with exit 1 and HDF5's raw "H5Aexists
 * failed ... incorrect metadata checksum"); other failures (memory) stay what they are. */
static int as_damage(hs_checkpoint *c, int rc)
{
    const char *m = hs_error_message();
    if (rc != HS_ERR_RUNTIME || !m || strncmp(m, "HDF5 call ", 10) != 0) return rc;
    char what[512];
    snprintf(what, sizeof what, "%s", m + 10);
    char *where = strrchr(what, '['); /* the source location: an input error names the file alone */
    if (where && where > what && where[-1] == ' ' && strchr(where, ']')) where[-1] = '\0';
    hs_error_clear();
    return hs_input_error(c->path, 0, NULL, "checkpoint is damaged (HDF5 %s)", what);
}

static int ck_open(hs_checkpoint *c, char **solver, char **params, int64_t *step, double *time, int *nranks)
{
    if (!hs_h5_is_hdf5(c->path)) return hs_input_error(c->path, 0, NULL, "not an hpcsim checkpoint (neither HDF5 nor our binary format)");
    HS_CHECK(new_state(c));
    st(c)->file = H5Fopen(c->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (st(c)->file < 0) return damaged(c, "HDF5 cannot open it");
    return as_damage(c, ck_header(c, solver, params, step, time, nranks));
}

static int ck_counts(hs_checkpoint *c, const char *name, int64_t *counts)
{
    hid_t a, sp;
    HS_H5_ID(a, H5Aopen(st(c)->ds, "counts", H5P_DEFAULT), c->path);
    sp = H5Aget_space(a);
    hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (sp >= 0) H5Sclose(sp);
    herr_t rc = n == c->nranks ? H5Aread(a, H5T_NATIVE_INT64, counts) : -1;
    H5Aclose(a);
    if (n != c->nranks) return hs_input_error(c->path, 0, NULL, "checkpoint is damaged (counts of %lld ranks)", (long long)n);
    HS_H5_CHECK_AS(rc, c->path, "H5Aread (attribute counts of %s)", name);
    return HS_OK;
}

static int read_elems(hs_checkpoint *c, int64_t offset, int64_t n, void *data);

/* Read the whole array once and compare its hash with the stored one (before any of it is used). */
static int verify_array(hs_checkpoint *c, const char *name, const int64_t *counts)
{
    uint64_t want;
    HS_CHECK(read_checksum(c, st(c)->ds, "checksum", &want));
    hid_t sp = H5Dget_space(st(c)->ds);
    hssize_t have = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (sp >= 0) H5Sclose(sp);
    int mult = st(c)->t == HS_C128 || st(c)->t == HS_C64 ? 2 : 1;
    int64_t total;
    HS_CHECK(hs_ckpt_check_counts(c, name, counts, have > 0 ? (int64_t)have / mult : 0, &total));
    if (have != total * mult) return hs_input_error(c->path, 0, name, "checkpoint is damaged (size differs from counts)");
    size_t es = hs_dtype_size(st(c)->t);
    int64_t piece = ((int64_t)1 << 24) / (int64_t)es;
    void *buf = malloc((size_t)(total < piece ? (total ? total : 1) : piece) * es);
    if (!buf) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory verifying checkpoint %s", c->path);
    uint64_t h = HS_FNV1A64_INIT;
    int rc = HS_OK;
    for (int64_t off = 0; rc == HS_OK && off < total; off += piece) {
        int64_t n = total - off < piece ? total - off : piece;
        rc = read_elems(c, off, n, buf);
        if (rc == HS_OK) h = hs_fnv1a64(h, buf, (size_t)n * es);
    }
    free(buf);
    HS_CHECK(rc);
    if (h != want) return hs_input_error(c->path, 0, name, "checkpoint is damaged (checksum mismatch)");
    return HS_OK;
}

static int find_array(hs_checkpoint *c, const char *name, int *found, hs_dtype *t, int64_t *counts)
{
    HS_CHECK(close_ds(c, c->path));
    htri_t e = H5Lexists(st(c)->file, name, H5P_DEFAULT);
    HS_H5_CHECK_AS(e, c->path, "H5Lexists (dataset %s)", name);
    *found = e > 0;
    if (!*found) return HS_OK;
    HS_H5_ID(st(c)->ds, H5Dopen2(st(c)->file, name, H5P_DEFAULT), c->path);
    char *tn;
    HS_CHECK(hs_h5_read_text(st(c)->ds, "dtype", &tn, c->path));
    int k = -1;
    for (int i = 0; tn && i < 8; i++)
        if (strcmp(tn, hs_dtype_name((hs_dtype)i)) == 0) k = i;
    free(tn);
    if (k < 0) return hs_input_error(c->path, 0, name, "checkpoint array has no valid dtype attribute");
    *t = st(c)->t = (hs_dtype)k;
    HS_CHECK(ck_counts(c, name, counts));
    return verify_array(c, name, counts);
}

static int ck_find(hs_checkpoint *c, const char *name, int *found, hs_dtype *t, int64_t *counts)
{
    return as_damage(c, find_array(c, name, found, t, counts));
}

static int read_elems(hs_checkpoint *c, int64_t offset, int64_t n, void *data)
{
    hid_t fsp = -1, msp = -1, mtype = -1;
    int rc = select_part(c, c->path, offset, n, &fsp, &msp, &mtype);
    if (rc == HS_OK && H5Dread(st(c)->ds, mtype, msp, fsp, H5P_DEFAULT, data) < 0) rc = damaged(c, "its data cannot be read");
    if (fsp >= 0) H5Sclose(fsp);
    if (msp >= 0) H5Sclose(msp);
    return rc;
}

const hs_ckpt_backend hs_ckpt_hdf5 = {
    .name = "hdf5",
    .create = ck_create,
    .open = ck_open,
    .begin_array = ck_begin,
    .write_part = ck_write,
    .end_array = ck_end,
    .find_array = ck_find,
    .read_part = read_elems,
    .close = ck_close,
    .discard = ck_discard,
};

#endif
