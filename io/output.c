/* The gridded-output writer: argument checks, PATH.partial / rename policy, gathering to rank 0 or collective files, format dispatch. */
#include "io/output.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/output_impl.h"
#include "io/written.h"
#include "kernels/comm/comm.h"

/* ------------------------------------------------------------------ small shared helpers */

int hs_io_strdup(const char *s, char **out)
{
    *out = strdup(s ? s : "");
    return *out ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory copying a string");
}

int hs_io_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int hs_io_fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return HS_FAIL(HS_ERR_RUNTIME, "cannot reopen %s to sync it: %s", path, strerror(errno));
    int bad = fsync(fd) != 0 && errno != EINVAL; /* EINVAL: a file system without fsync (pipes, some FUSE) */
    int err = errno;
    close(fd);
    return bad ? HS_FAIL(HS_ERR_RUNTIME, "fsync of %s failed: %s", path, strerror(err)) : HS_OK;
}

char *hs_io_history_line(const char *command)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const char *cmd = command && *command ? command : "hpcsim";
    size_t len = strlen(stamp) + strlen(cmd) + 3;
    char *s = malloc(len);
    if (s) snprintf(s, len, "%s: %s", stamp, cmd);
    return s;
}

void hs_io_chunk_dims(const int64_t *file_dims, int rank, int has_time, size_t elem, size_t *chunk)
{
    const size_t limit = (size_t)1 << 30; /* well below HDF5's 4 GiB per chunk */
    size_t bytes = elem;
    for (int i = 0; i < rank; i++) {
        chunk[i] = (has_time && i == 0) ? 1 : (size_t)(file_dims[i] > 0 ? file_dims[i] : 1);
        bytes *= chunk[i];
    }
    for (int i = has_time ? 1 : 0; i < rank && bytes > limit; i++) {
        while (chunk[i] > 1 && bytes > limit) {
            bytes = bytes / chunk[i] * ((chunk[i] + 1) / 2);
            chunk[i] = (chunk[i] + 1) / 2;
        }
    }
}

int64_t hs_writer_plane_size(const hs_writer *w)
{
    int64_t n = 1;
    for (int d = 0; d < w->ndim; d++) n *= w->n[d];
    return n;
}

int hs_writer_var_space(const hs_writer *w, const hs_writer_var *v, int64_t len[3])
{
    if (v->grid == HS_GRID_SERIES) return 0;
    if (v->grid == HS_GRID_STATIONS) {
        len[0] = w->nstations;
        return 1;
    }
    if (v->grid == HS_GRID_MESH_NODE || v->grid == HS_GRID_MESH_CELL) {
        len[0] = v->grid == HS_GRID_MESH_NODE ? w->mesh.nnodes : w->mesh.ncells;
        return 1;
    }
    int rank = 0;
    const int64_t *n = v->grid > 0 ? w->grids[v->grid].n : w->n;
    for (int d = w->ndim - 1; d >= 0; d--) len[rank++] = n[d];
    return rank;
}

int64_t hs_writer_max_var_size(const hs_writer *w)
{
    int64_t m = hs_writer_plane_size(w);
    for (int g = 1; g < w->ngrids; g++) {
        int64_t n = w->grids[g].n[0] * w->grids[g].n[1] * w->grids[g].n[2];
        if (n > m) m = n;
    }
    if (w->has_mesh && w->mesh.nnodes > m) m = w->mesh.nnodes;
    if (w->has_mesh && w->mesh.ncells > m) m = w->mesh.ncells;
    if (w->nstations > m) m = w->nstations;
    return m;
}

int64_t hs_writer_var_size(const hs_writer *w, const hs_writer_var *v)
{
    int64_t len[3], n = 1;
    int rank = hs_writer_var_space(w, v, len);
    for (int i = 0; i < rank; i++) n *= len[i];
    return n;
}

void hs_writer_station_name(const hs_writer *w, const char *what, char *buf, size_t len)
{
    snprintf(buf, len, "%s_%s", w->st_dim, what);
}

void hs_writer_station_coords(const hs_writer *w, char *buf, size_t len)
{
    char one[HS_IO_NAME_MAX + 8];
    buf[0] = 0;
    for (int c = 0; c <= w->st_ncoord; c++) {
        const char *what = c < w->st_ncoord ? (const char *[]){"x", "y", "z"}[c] : "name";
        hs_writer_station_name(w, what, one, sizeof one);
        size_t u = strlen(buf);
        snprintf(buf + u, len - u, "%s%s", u ? " " : "", one);
    }
}

int hs_writer_is_own_name(const hs_writer *w, const char *name)
{
    if (w->nstations > 0) {
        static const char *const what[] = {"name", "x", "y", "z", "strlen"};
        if (strcmp(name, w->st_dim) == 0) return 1;
        for (int i = 0; i < 5; i++) {
            char b[HS_IO_NAME_MAX + 8];
            hs_writer_station_name(w, what[i], b, sizeof b);
            if (strcmp(name, b) == 0) return 1;
        }
    }
    if (hs_writer_grid_owns_name(w, name)) return 1;
    if (w->has_time && strcmp(name, w->rec_name) == 0) return 1;
    if (w->ndim > 0 && strcmp(name, "bnds") == 0) return 1;
    if (w->has_area && strcmp(name, HS_CELL_AREA) == 0) return 1;
    for (int d = 0; d < w->ndim; d++) {
        char b[HS_IO_NAME_MAX + 8];
        hs_writer_bounds_name(w, d, b, sizeof b);
        if (strcmp(name, w->dim_names[d]) == 0 || strcmp(name, b) == 0) return 1;
    }
    return 0;
}

void hs_writer_bounds_name(const hs_writer *w, int d, char *buf, size_t len)
{
    snprintf(buf, len, "%s_bnds", w->dim_names[d]);
}

double *hs_writer_bounds(const hs_writer *w, int d)
{
    double *b = malloc((size_t)w->n[d] * 2 * sizeof *b);
    for (int64_t i = 0; b && i < w->n[d]; i++) {
        b[2 * i] = w->edges[d][i];
        b[2 * i + 1] = w->edges[d][i + 1];
    }
    return b;
}

double *hs_writer_cell_area(const hs_writer *w)
{
    double *a = malloc((size_t)(w->n[0] * w->n[1]) * sizeof *a);
    for (int64_t j = 0; a && j < w->n[1]; j++)
        for (int64_t i = 0; i < w->n[0]; i++)
            a[j * w->n[0] + i] = fabs((w->edges[0][i + 1] - w->edges[0][i]) * (w->edges[1][j + 1] - w->edges[1][j]));
    return a;
}

/* Rank 0: the cell edges of every dimension, given or midway between the coordinates. */
static int make_edges(hs_writer *w, const hs_output_desc *desc)
{
    for (int d = 0; d < w->ndim; d++) {
        int64_t n = w->n[d];
        double *e = malloc((size_t)(n + 1) * sizeof *e);
        if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the cell edges of %s", w->path);
        w->edges[d] = e;
        if (desc->edges[d]) {
            memcpy(e, desc->edges[d], (size_t)(n + 1) * sizeof *e);
            continue;
        }
        const double *c = desc->coords[d];
#define HS_COORD(i) (c ? c[i] : (double)(i)) /* no coordinates: grid indices, as the backends write */
        if (n == 1) {
            e[0] = HS_COORD(0) - 0.5;
            e[1] = HS_COORD(0) + 0.5;
            continue;
        }
        for (int64_t i = 1; i < n; i++) e[i] = 0.5 * (HS_COORD(i - 1) + HS_COORD(i));
        e[0] = HS_COORD(0) - (e[1] - HS_COORD(0));
        e[n] = HS_COORD(n - 1) + (HS_COORD(n - 1) - e[n - 1]);
#undef HS_COORD
    }
    return HS_OK;
}

/* What the NetCDF library keeps of a gridded variable whose records are `plane` bytes, written
 * through rank 0: HDF5's chunk cache holds whole records (a chunk is a record, below) up to
 * its size, netCDF 4.9's default of 16 MiB per variable, raised to 64 MiB for records above 16 MiB,
 * and passes a record larger than itself straight to the file.  Measured: a 1000 x 1000 elastic run
 * on 4 ranks held 4 MB more on rank 0 at each record until the cache was full (4 records of vx and
 * of vz, 40 MB). */
double hs_output_netcdf_cache_bytes(double plane, double records)
{
    const double mib = 1048576.0, cache = plane <= 16 * mib ? 16 * mib : 64 * mib;
    if (plane > cache) return 0;
    return fmin(floor(cache / plane), records) * plane;
}

double hs_time_unit_seconds(const char *units)
{
    static const struct {
        const char *name;
        double seconds;
    } unit[] = {{"seconds", 1},  {"second", 1},  {"secs", 1},   {"sec", 1},     {"s", 1},      {"minutes", 60},
                {"minute", 60},  {"mins", 60},   {"min", 60},   {"hours", 3600}, {"hour", 3600}, {"hrs", 3600},
                {"hr", 3600},    {"h", 3600},    {"days", 86400}, {"day", 86400}, {"d", 86400}};
    char word[32] = "", since[16] = "";
    int used = 0;
    if (!units || sscanf(units, " %31s %15s %n", word, since, &used) != 2 || strcmp(since, "since") != 0 ||
        !isdigit((unsigned char)units[used]))
        return 0;
    for (size_t i = 0; i < sizeof unit / sizeof unit[0]; i++)
        if (!strcmp(word, unit[i].name)) return unit[i].seconds;
    return 0;
}

/* Digits at *s (1 to maxd of them, and no digit after) as *v, s advanced past them; 0 when none or too many. */
static int date_digits(const char **s, int maxd, long *v)
{
    int n = 0;
    *v = 0;
    while (isdigit((unsigned char)**s) && n < maxd) *v = 10 * *v + (**s - '0'), (*s)++, n++;
    return n > 0 && !isdigit((unsigned char)**s);
}

/* Days in month m (1..12) of year y in CF's standard calendar: Julian leap years (every 4th)
 * before the switch of 1582-10-15, Gregorian ones (not centuries unless divisible by 400) after.
 * 1582 itself is no leap year either way, so the year alone decides. */
static int month_days(long y, long m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const int leap = y % 4 == 0 && (y < 1582 || y % 100 != 0 || y % 400 == 0);
    return days[m - 1] + (m == 2 && leap);
}

/* 0, with the reason in why (when there is room for one). */
static int refuse(char *why, size_t size, const char *fmt, ...)
{
    if (why && size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
    }
    return 0;
}

int hs_time_units_writable(const char *units, char *why, size_t why_size)
{
    if (why && why_size) *why = '\0';
    if (!(hs_time_unit_seconds(units) > 0)) return 0;
    const char *s = strstr(units, "since") + 5;
    while (*s == ' ') s++;
    /* the syntax first (a refusal without a reason: the caller says what the form is), then the
     * ranges, each with its reason: "seconds since 2000-13-45 99:99" and "hours since 1e300" passed
     * the check and went into every file, which CF readers (xarray, cftime, CDO) then could not place
     * in time; so did "days since 2001-02-29", which cftime refuses as "invalid day number" */
    long y, mo, d, h = 0, mi = 0, sec = 0, zh = 0, zm = 0;
    if (!date_digits(&s, 9, &y) || *s++ != '-' || !date_digits(&s, 2, &mo) || *s++ != '-' || !date_digits(&s, 2, &d))
        return 0;
    if ((*s == ' ' || *s == 'T') && isdigit((unsigned char)s[1])) {
        s++;
        if (!date_digits(&s, 2, &h) || *s++ != ':' || !date_digits(&s, 2, &mi)) return 0;
        if (*s == ':') {
            s++;
            if (!date_digits(&s, 2, &sec)) return 0;
            if (*s == '.') {
                s++;
                if (!isdigit((unsigned char)*s)) return 0;
                while (isdigit((unsigned char)*s)) s++;
            }
        }
    }
    while (*s == ' ') s++;
    if (*s == 'Z') s++;
    else if (!strncmp(s, "UTC", 3)) s += 3;
    else if (*s == '+' || *s == '-') { /* +hh, +hhmm or +hh:mm, as cftime reads them */
        s++;
        if (!isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[1])) return 0;
        zh = (s[0] - '0') * 10 + (s[1] - '0');
        s += 2;
        const int colon = *s == ':';
        s += colon;
        if (isdigit((unsigned char)*s)) {
            if (!isdigit((unsigned char)s[1]) || isdigit((unsigned char)s[2])) return 0;
            zm = (s[0] - '0') * 10 + (s[1] - '0');
            s += 2;
        } else if (colon)
            return 0;
    }
    while (*s == ' ') s++;
    if (*s != '\0') return 0;

    /* the date in the calendar the files declare (calendar = "standard"), as cftime decodes it */
    static const char *const month[12] = {"January", "February", "March",     "April",   "May",      "June",
                                          "July",    "August",   "September", "October", "November", "December"};
    if (y == 0) return refuse(why, why_size, "year 0 is not in CF's standard calendar (1 BC is followed by AD 1)");
    if (mo < 1 || mo > 12) return refuse(why, why_size, "month %ld is not 1..12", mo);
    const int last = month_days(y, mo);
    if (d < 1 || d > last)
        return refuse(why, why_size, "day %ld is not 1..%d in %s %ld (CF's standard calendar: Gregorian leap years from "
                                     "1582-10-15, Julian ones before)", d, last, month[mo - 1], y);
    if (y == 1582 && mo == 10 && d >= 5 && d <= 14)
        return refuse(why, why_size, "1582-10-%02ld is not in CF's standard calendar (Julian 1582-10-04 is followed by "
                                     "Gregorian 1582-10-15)", d);
    if (h > 23) return refuse(why, why_size, "hour %ld is not 0..23", h);
    if (mi > 59) return refuse(why, why_size, "minute %ld is not 0..59", mi);
    if (sec > 59)
        return refuse(why, why_size, "second %ld is not 0..59%s", sec, sec == 60 ? " (CF's standard calendar has no leap seconds)" : "");
    if (zh > 23) return refuse(why, why_size, "time zone offset of %ld hours is not 0..23", zh);
    if (zm > 59) return refuse(why, why_size, "time zone offset's minute %ld is not 0..59", zm);
    return 1;
}

int hs_writer_push_time(hs_writer *w, double t)
{
    if (w->nrec >= w->times_cap) {
        int64_t cap = w->times_cap ? 2 * w->times_cap : 64;
        double *p = realloc(w->times, (size_t)cap * sizeof *p);
        if (!p) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for record times of %s", w->path);
        w->times = p;
        w->times_cap = cap;
    }
    w->times[w->nrec++] = t;
    return HS_OK;
}

/* ------------------------------------------------------------------ writer life cycle */

static const hs_writer_backend *pick_backend(const hs_output_desc *desc)
{
    if (desc->format == HS_FORMAT_NETCDF) {
#if HS_HAVE_NETCDF
        return &hs_writer_netcdf;
#endif
    } else if (desc->format == HS_FORMAT_HDF5) {
#if HS_HAVE_HDF5
        return &hs_writer_hdf5;
#endif
    }
    return NULL;
}

static const hs_writer_backend *pick_hdf5(void)
{
#if HS_HAVE_HDF5
    return &hs_writer_hdf5;
#else
    return NULL;
#endif
}

static int check_desc(const hs_output_desc *desc)
{
    if (!desc || !desc->path || !*desc->path) return hs_input_error("output", 0, "path", "no output file name given");
    const char *p = desc->path;
    if (desc->format != HS_FORMAT_NETCDF && desc->format != HS_FORMAT_HDF5)
        return hs_input_error(p, 0, NULL, "unknown output format %d", (int)desc->format);
    if (desc->ndim < 0 || desc->ndim > 3) return hs_input_error(p, 0, NULL, "ndim = %d, must be 0..3", desc->ndim);
    const char *rec = desc->record_name ? desc->record_name : "time";
    if (!*rec || strlen(rec) >= HS_IO_NAME_MAX - 8 || strchr(rec, '/'))
        return hs_input_error(p, 0, NULL, "bad record dimension name \"%s\"", rec);
    for (int d = 0; d < desc->ndim; d++) {
        if (desc->n[d] < 1) return hs_input_error(p, 0, NULL, "dimension %d has size %lld, must be >= 1", d, (long long)desc->n[d]);
        const char *nm = desc->dim_names[d];
        if (!nm || !*nm || strlen(nm) >= HS_IO_NAME_MAX - 8 || strcmp(nm, rec) == 0 || strcmp(nm, "bnds") == 0)
            return hs_input_error(p, 0, NULL, "dimension %d needs a name (not \"%s\" or \"bnds\", under %d characters)", d,
                                  rec, HS_IO_NAME_MAX - 8);
    }
    if (desc->deflate_level < 0 || desc->deflate_level > 9)
        return hs_input_error(p, 0, NULL, "deflate level %d, must be 0..9", desc->deflate_level);
    if (!pick_backend(desc)) {
        if (desc->format == HS_FORMAT_NETCDF)
            return hs_input_error(p, 0, NULL, "NetCDF output requested but this build has no NetCDF (format = hdf5 works)");
        return hs_input_error(p, 0, NULL, "HDF5 output requested but this build has no HDF5 (rebuild with HDF5=1)");
    }
    return HS_OK;
}

static void writer_free(hs_writer *w)
{
    if (!w) return;
    if (w->bs && w->be && w->be->discard) w->be->discard(w);
    free(w->path);
    free(w->partial);
    free(w->history);
    free(w->times);
    for (int d = 0; d < 3; d++) free(w->edges[d]);
    hs_writer_free_grids(w);
    free(w->gather);
    free(w->scratch);
    free(w);
}

int hs_io_mpiio_name_too_long(const char *name)
{
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
    /* Open MPI 4's MPI-IO (OMPIO) writes a lock-file name made from the file name into a 256-byte
     * buffer (sharedfp/lockedfile) and aborts on a buffer overflow from about 240 characters on */
    return strlen(name) > HS_MPIIO_NAME_MAX;
#else
    (void)name;
    return 0;
#endif
}

/* A string of rank 0 on every rank (*s replaced; malloc'd). */
static int bcast_text(hs_ctx *ctx, char **s)
{
    int64_t len = ctx->rank == 0 ? (int64_t)strlen(*s) : 0;
    HS_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT64_T, 0, ctx->comm));
    if (len > INT32_MAX) return HS_FAIL(HS_ERR_RUNTIME, "a text of %lld bytes is too long to share", (long long)len);
    if (ctx->rank != 0) {
        char *t = realloc(*s, (size_t)len + 1);
        if (!t) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a text");
        *s = t;
    }
    HS_MPI_CHECK(MPI_Bcast(*s, (int)len + 1, MPI_CHAR, 0, ctx->comm));
    return HS_OK;
}

/* A collective file: every rank writes the same metadata, so rank 0's history line (its time
 * stamp) and cell edges (computed from coordinates only rank 0 needs to have) go to all. */
static int share_root_data(hs_writer *w, int rc)
{
    hs_ctx *ctx = w->ctx;
    int code = rc;
    HS_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, 0, ctx->comm));
    if (code != HS_OK) return ctx->rank == 0 ? rc : HS_FAIL(code, "preparing %s failed on rank 0", w->path);
    HS_CHECK(bcast_text(ctx, &w->history));
    for (int d = 0; d < w->ndim; d++) {
        if (ctx->rank != 0 && !(w->edges[d] = malloc((size_t)(w->n[d] + 1) * sizeof(double))))
            rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the cell edges of %s", w->path);
        int bad = rc != HS_OK, anybad = 0;
        HS_MPI_CHECK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ctx->comm));
        if (anybad) return rc != HS_OK ? rc : HS_FAIL(HS_ERR_RUNTIME, "out of host memory on another rank");
        HS_MPI_CHECK(MPI_Bcast(w->edges[d], (int)(w->n[d] + 1), MPI_DOUBLE, 0, ctx->comm));
    }
    return HS_OK;
}

/* Everything but the file: common to open and resume. */
static int writer_new(hs_ctx *ctx, const hs_output_desc *desc, hs_writer **out)
{
    *out = NULL;
    if (!ctx) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_open: no context");
    HS_CHECK(check_desc(desc));
    hs_writer *w = calloc(1, sizeof *w);
    if (!w) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a writer");
    w->ctx = ctx;
    w->be = pick_backend(desc);
    w->ndim = desc->ndim;
    w->has_time = desc->time_units != NULL;
    snprintf(w->rec_name, sizeof w->rec_name, "%s", desc->record_name ? desc->record_name : "time");
    w->rec_is_time = w->has_time && strstr(desc->time_units, " since ") != NULL;
    /* CDO weights field means by cell_measures; an area needs two horizontal lengths (on an x-z
     * section, z vertical, CDO took z for levels, expected an area per x and crashed: double free) */
    w->has_area = w->ndim >= 2 && desc->coord_units[0] && desc->coord_units[1] && !strcmp(desc->coord_units[0], "m") &&
                  !strcmp(desc->coord_units[1], "m") && !desc->coord_positive[0] && !desc->coord_positive[1];
    w->deflate = desc->deflate_level;
    for (int d = 0; d < 3; d++) w->n[d] = d < w->ndim ? desc->n[d] : 1;
    for (int d = 0; d < w->ndim; d++) snprintf(w->dim_names[d], HS_IO_NAME_MAX, "%s", desc->dim_names[d]);
    size_t len = strlen(desc->path) + sizeof ".partial";
    w->path = strdup(desc->path);
    w->partial = malloc(len);
    w->history = hs_io_history_line(desc->history);
    if (!w->path || !w->partial || !w->history) {
        writer_free(w);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a writer");
    }
    snprintf(w->partial, len, "%s.partial", desc->path);
    /* rank 0's choice counts: ranks that disagreed would wait in different calls */
    int want = w->be->parallel && desc->parallel != HS_OUTPUT_PARALLEL_OFF && !hs_io_mpiio_name_too_long(w->partial);
    HS_MPI_CHECK(MPI_Bcast(&want, 1, MPI_INT, 0, ctx->comm));
    w->par = want;
    int rc = ctx->rank == 0 ? make_edges(w, desc) : HS_OK;
    if (w->par) rc = share_root_data(w, rc);
    /* the extra grids' names and sizes are alike on every rank: each finds the same input errors */
    if (rc == HS_OK) rc = hs_writer_setup_grids(w, desc);
    if (rc == HS_OK && w->par && w->nxdims > 0) rc = hs_writer_share_grids(w);
    if (rc == HS_OK && w->has_mesh) rc = hs_writer_gather_mesh(w, desc);
    if (rc != HS_OK) {
        writer_free(w);
        return rc;
    }
    *out = w;
    return HS_OK;
}

/* The status of a library call on a collective file (MPI-IO): one that failed on this rank may have
 * left the others inside it, waiting in a collective this rank will not enter (a full disk: rank 0
 * in the agreement below, rank 1 in H5Dset_extent's barrier, until the batch job's end).  No
 * agreement can be had then: this rank ends the job with its message (exit 1).  Every library call
 * on such a file goes through here: create (a full disk at 40 kB left rank 1 in the create's
 * barrier), definitions, attributes, records, sync, close, reopen.  Our own checks (a block outside
 * the grid) fail before any library call and are agreed on as before. */
static int collective_call(hs_writer *w, int rc)
{
    if (w->par && w->ctx->size > 1 && rc != HS_OK && rc != HS_ERR_INPUT) hs_exit(rc);
    return rc;
}

/* Rank 0 did the work (all: every rank did); every rank returns its status.  The ranks that did
 * not fail name the file and the first rank that did. */
static int agree_among(hs_writer *w, int rc, const char *what, int all)
{
    hs_ctx *ctx = w->ctx;
    int code = rc, first = 0;
    if (all) {
        int mine = rc != HS_OK ? ctx->rank : ctx->size;
        HS_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, ctx->comm));
        if (first == ctx->size) return HS_OK;
    }
    HS_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, first, ctx->comm));
    if (rc != HS_OK || code == HS_OK) return rc;
    if (code == HS_ERR_INPUT) return code; /* the failing rank holds the message; rank 0 prints input errors */
    return HS_FAIL(code, "%s of %s failed on rank %d", what, w->path, first);
}

/* The file work was done by the backend ranks (rank 0, or every rank of a collective file). */
static int agree(hs_writer *w, int rc, const char *what) { return agree_among(w, rc, what, w->par); }
/* Rank 0 alone did the work (renaming, companion files, fsync), in any file. */
static int agree_rank0(hs_writer *w, int rc, const char *what) { return agree_among(w, rc, what, 0); }
/* The status of a backend (library) call made by the backend ranks: collective_call, then agree. */
static int agree_call(hs_writer *w, int rc, const char *what) { return agree(w, collective_call(w, rc), what); }

/* The ranks that drive the backend: rank 0, or every rank in a collective file. */
static int io_rank(const hs_writer *w) { return w->par || w->ctx->rank == 0; }

int hs_writer_parallel(const hs_writer *w) { return w ? w->par : 0; }

const char *hs_output_parallel_summary(void)
{
#define HS_PAR_WORDS(have, par, name, lib) \
    (have ? (par ? name " collective (parallel " lib ")" : name " through rank 0 (serial " lib ")") : name " not built in")
    static char line[160];
    snprintf(line, sizeof line, "%s, %s%s", HS_PAR_WORDS(HS_HAVE_NETCDF, HS_HAVE_NETCDF_PARALLEL, "NetCDF", "NetCDF-4"),
             HS_PAR_WORDS(HS_HAVE_HDF5, HS_HAVE_HDF5_PARALLEL, "HDF5", "HDF5"),
             HS_HAVE_NETCDF_PARALLEL || HS_HAVE_HDF5_PARALLEL ? "; output.parallel = off gathers through rank 0" : "");
#undef HS_PAR_WORDS
    return line;
}

int hs_writer_open(hs_ctx *ctx, const hs_output_desc *desc, hs_writer **out)
{
    if (!out) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_open: no result pointer");
    hs_writer *w;
    HS_CHECK(writer_new(ctx, desc, &w));
    int rc = agree_call(w, io_rank(w) ? w->be->create(w, desc) : HS_OK, "creating the output file");
    if (rc != HS_OK) {
        if (io_rank(w)) w->be->discard(w);
        if (ctx->rank == 0) remove(w->partial);
        writer_free(w);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_writer_open");
    }
    *out = w;
    return HS_OK;
}

static int find_var(const hs_writer *w, const char *name)
{
    for (int i = 0; i < w->nvars; i++)
        if (strcmp(w->vars[i].name, name) == 0) return i;
    return -1;
}

int hs_writer_var_id(hs_writer *w, const char *name) { return w && name ? find_var(w, name) : -1; }

static int def_any(hs_writer *w, const char *name, const char *units, const char *long_name,
                   const char *standard_name, hs_dtype dtype, int time_dependent, int grid, int *varid);

int hs_writer_def_var(hs_writer *w, const char *name, const char *units, const char *long_name,
                      const char *standard_name, hs_dtype dtype, int time_dependent, int *varid)
{
    if (!w || !name || !varid) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_def_var: null argument");
    if (w->nstations > 0 && w->ndim == 0)
        return hs_input_error(w->path, 0, name, "a station file holds station variables only (hs_writer_def_station_var)");
    return def_any(w, name, units, long_name, standard_name, dtype, time_dependent, 0, varid);
}

int hs_writer_def_grid_var(hs_writer *w, const char *grid, const char *name, const char *units, const char *long_name,
                           const char *standard_name, hs_dtype dtype, int time_dependent, int *varid)
{
    if (!w || !name || !varid) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_def_grid_var: null argument");
    if (!grid || !*grid) return hs_writer_def_var(w, name, units, long_name, standard_name, dtype, time_dependent, varid);
    for (int g = 1; g < w->ngrids; g++)
        if (strcmp(w->grids[g].name, grid) == 0)
            return def_any(w, name, units, long_name, standard_name, dtype, time_dependent, g, varid);
    return hs_input_error(w->path, 0, name, "no grid named %s in this file", grid);
}

int hs_writer_def_mesh_var(hs_writer *w, const char *name, const char *units, const char *long_name,
                           const char *standard_name, hs_mesh_location where, hs_dtype dtype, int time_dependent,
                           int *varid)
{
    if (!w || !name || !varid) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_def_mesh_var: null argument");
    if (!w->has_mesh) return hs_input_error(w->path, 0, name, "a mesh variable in a file without a mesh");
    if (where != HS_MESH_NODE && where != HS_MESH_CELL) return hs_input_error(w->path, 0, name, "unknown mesh location %d", (int)where);
    return def_any(w, name, units, long_name, standard_name, dtype, time_dependent,
                   where == HS_MESH_NODE ? HS_GRID_MESH_NODE : HS_GRID_MESH_CELL, varid);
}

int hs_writer_def_series(hs_writer *w, const char *name, const char *units, const char *long_name,
                         const char *standard_name, int *varid)
{
    if (!w || !name || !varid) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_def_series: null argument");
    if (w->nstations > 0)
        return hs_input_error(w->path, 0, name, "a station file holds station variables only (CF featureType timeSeries)");
    return def_any(w, name, units, long_name, standard_name, HS_F64, 1, HS_GRID_SERIES, varid);
}

int hs_writer_def_station_var(hs_writer *w, const char *name, const char *units, const char *long_name,
                              const char *standard_name, hs_dtype dtype, int *varid)
{
    if (!w || !name || !varid) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_def_station_var: null argument");
    if (w->nstations == 0)
        return hs_input_error(w->path, 0, name, "station variable before hs_writer_def_stations");
    return def_any(w, name, units, long_name, standard_name, dtype, 1, HS_GRID_STATIONS, varid);
}

static int def_any(hs_writer *w, const char *name, const char *units, const char *long_name,
                   const char *standard_name, hs_dtype dtype, int time_dependent, int grid, int *varid)
{
    const char *p = w->path;
    time_dependent = time_dependent != 0;
    if (dtype != HS_F64 && dtype != HS_F32)
        return hs_input_error(p, 0, name, "output variables are f64 or f32, not %s", hs_dtype_name(dtype));
    if (time_dependent && !w->has_time)
        return hs_input_error(p, 0, name, "time-dependent variable in a file without time units");
    int id = find_var(w, name);
    if (id >= 0) {
        /* a resumed writer: the solver defines its variables again */
        const hs_writer_var *v = &w->vars[id];
        /* without a grid, a series and a variable of grid 0 are both (time) only: the file cannot tell them apart */
        int series = w->ndim == 0 && (v->grid == 0 || v->grid == HS_GRID_SERIES) && (grid == 0 || grid == HS_GRID_SERIES);
        if (v->grid != grid && !series)
            return hs_input_error(p, 0, name, "variable exists in the file with other dimensions");
        if (v->dtype != (int)dtype || v->time_dependent != time_dependent)
            return hs_input_error(p, 0, name, "variable exists in the file as %s%s, redefined as %s%s",
                                  hs_dtype_name((hs_dtype)v->dtype), v->time_dependent ? " (time-dependent)" : "",
                                  hs_dtype_name(dtype), time_dependent ? " (time-dependent)" : "");
        *varid = id;
        return HS_OK;
    }
    if (!*name || strlen(name) >= HS_IO_NAME_MAX || hs_writer_is_own_name(w, name) || strchr(name, '/') ||
        (w->be == pick_hdf5() && strcmp(name, "xdmf") == 0))
        return hs_input_error(p, 0, name, "bad variable name (empty, too long, '/', a dimension, bounds or \"xdmf\")");
    if (w->nvars >= HS_WRITER_MAX_VARS)
        return hs_input_error(p, 0, name, "more than %d variables in one file", HS_WRITER_MAX_VARS);
    hs_writer_var *v = &w->vars[w->nvars];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->dtype = (int)dtype;
    v->time_dependent = time_dependent;
    v->grid = grid;
    HS_CHECK(agree_call(w, io_rank(w) ? w->be->def_var(w, v, units, long_name, standard_name) : HS_OK, "defining a variable"));
    *varid = w->nvars++;
    return HS_OK;
}

int hs_writer_begin_step(hs_writer *w, double t)
{
    if (!w) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_begin_step: no writer");
    if (!w->has_time) return hs_input_error(w->path, 0, NULL, "time record in a file without time units");
    int rc = HS_OK;
    if (w->par) HS_MPI_CHECK(MPI_Bcast(&t, 1, MPI_DOUBLE, 0, w->ctx->comm)); /* rank 0's time, as in a gathered file */
    if (io_rank(w)) {
        rc = collective_call(w, w->be->put_time(w, w->nrec, t));
        if (rc == HS_OK) rc = hs_writer_push_time(w, t);
    } else {
        w->nrec++;
    }
    return agree(w, rc, "writing a time record");
}

static int check_put(hs_writer *w, int varid)
{
    if (!w) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_put: no writer");
    if (varid < 0 || varid >= w->nvars) return HS_FAIL(HS_ERR_RUNTIME, "%s: no variable with id %d", w->path, varid);
    if (w->vars[varid].time_dependent && w->nrec == 0)
        return HS_FAIL(HS_ERR_RUNTIME, "%s: variable %s written before hs_writer_begin_step", w->path, w->vars[varid].name);
    return HS_OK;
}

int64_t hs_writer_records(const hs_writer *w) { return w ? w->nrec : 0; }
int hs_writer_nonfinite(const hs_writer *w) { return w ? w->nonfinite : 0; }

/* The first NaN or Inf among n values of dtype (its index, or -1) and its value. */
static int64_t first_nonfinite(int dtype, const void *data, int64_t n, double *value)
{
    if (dtype == HS_F64) {
        const double *d = data;
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(d[i])) return *value = d[i], i;
    } else {
        const float *f = data;
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(f[i])) return *value = f[i], i;
    }
    return -1;
}

/* A NaN or Inf at linear index `bad` of variable v, as a runtime error naming the point. */
static int report_nonfinite(hs_writer *w, const hs_writer_var *v, int64_t bad, double value)
{
    w->nonfinite = 1;
    char where[256] = "";
    size_t len = 0;
    if (v->grid == HS_GRID_STATIONS) snprintf(where, sizeof where, " at %s = %lld", w->st_dim, (long long)bad);
    if (v->grid == HS_GRID_MESH_NODE || v->grid == HS_GRID_MESH_CELL)
        snprintf(where, sizeof where, " at %s %lld", v->grid == HS_GRID_MESH_NODE ? "node" : "cell", (long long)bad);
    for (int d = 0; v->grid >= 0 && d < w->ndim; d++) {
        const hs_writer_grid *G = &w->grids[v->grid];
        len += (size_t)snprintf(where + len, sizeof where - len, "%s%s = %lld", d ? ", " : " at ", G->dim_name[d],
                                (long long)(bad % G->n[d]));
        bad /= G->n[d];
    }
    return HS_FAIL(HS_ERR_RUNTIME, "%s: %s is %g%s (index from 0) in record %lld, t = %.9g", w->path, v->name, value,
                   where, (long long)(v->time_dependent ? w->nrec - 1 : -1),
                   v->time_dependent && w->times ? w->times[w->nrec - 1] : 0.0);
}

/* Rank 0: the first NaN or Inf of a whole variable, as a runtime error naming the point. */
static int check_finite(hs_writer *w, const hs_writer_var *v, const void *data)
{
    double value = 0;
    int64_t bad = first_nonfinite(v->dtype, data, hs_writer_var_size(w, v), &value);
    return bad < 0 ? HS_OK : report_nonfinite(w, v, bad, value);
}

/* Rank 0 wrote a whole variable: every rank learns its status and whether it was finite. */
static int agree_put(hs_writer *w, int rc)
{
    int nf = w->nonfinite;
    HS_MPI_CHECK(MPI_Bcast(&nf, 1, MPI_INT, 0, w->ctx->comm));
    w->nonfinite = nf;
    return agree(w, rc, "writing a variable");
}

/* The backend ranks: write rank 0's data (the others of a collective file take part with
 * nothing), then rank 0 reports a non-finite value (the record is kept: it shows what went wrong). */
static int put_root(hs_writer *w, const hs_writer_var *v, const void *data)
{
    int root = w->ctx->rank == 0;
    HS_CHECK(w->be->put(w, v, root ? data : NULL));
    return root ? check_finite(w, v, data) : HS_OK;
}

/* Rank 0's status before a write from rank 0: in a collective file every rank must learn it
 * before the collective write, so that none waits in it alone. */
static int agree_root(hs_writer *w, int rc, const char *what) { return w->par ? agree(w, rc, what) : rc; }

int hs_writer_put(hs_writer *w, int varid, const void *global)
{
    HS_CHECK(check_put(w, varid));
    int rc = HS_OK;
    if (w->ctx->rank == 0 && !global) rc = HS_FAIL(HS_ERR_RUNTIME, "hs_writer_put: %s: rank 0 passed no data", w->vars[varid].name);
    rc = agree_root(w, rc, "writing a variable");
    if (rc == HS_OK && io_rank(w)) rc = put_root(w, &w->vars[varid], global);
    return agree_put(w, rc);
}

/* ------------------------------------------------------------------ put_block: gather to rank 0 */

static int grow(void **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return HS_OK;
    void *p = realloc(*buf, need);
    if (!p) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory (%zu bytes) gathering output", need);
    *buf = p;
    *cap = need;
    return HS_OK;
}

/* Block geometry of one rank: [offset, offset + count) in x, y, z; unused dims are 0 / 1. */
typedef struct { int64_t off[3], cnt[3]; } block_t;

static int64_t block_size(const block_t *b) { return b->cnt[0] * b->cnt[1] * b->cnt[2]; }

static int check_block(const hs_writer *w, const int64_t *n, const block_t *b, int rank)
{
    for (int d = 0; d < 3; d++)
        if (b->off[d] < 0 || b->cnt[d] < 0 || b->off[d] + b->cnt[d] > n[d])
            return HS_FAIL(HS_ERR_RUNTIME, "%s: rank %d's block [%lld, +%lld) lies outside dimension %d of size %lld",
                           w->path, rank, (long long)b->off[d], (long long)b->cnt[d], d, (long long)n[d]);
    return HS_OK;
}

/* Copy a block (x fastest) into the global array. */
static void place_block(const int64_t *n, const block_t *b, const char *src, char *dst, size_t es)
{
    size_t row = (size_t)b->cnt[0] * es;
    if (row == 0) return;
    for (int64_t k = 0; k < b->cnt[2]; k++)
        for (int64_t j = 0; j < b->cnt[1]; j++) {
            int64_t g = ((b->off[2] + k) * n[1] + (b->off[1] + j)) * n[0] + b->off[0];
            memcpy(dst + (size_t)g * es, src + ((size_t)(k * b->cnt[1] + j)) * row, row);
        }
}

/* Rank 0: are the blocks inside the grid, and do they add up to it?  Sizes in `es` bytes. */
static int check_blocks(const hs_writer *w, const int64_t *n, const block_t *blocks, size_t es)
{
    int64_t total = 0, size = n[0] * n[1] * n[2];
    for (int r = 0; r < w->ctx->size; r++) {
        HS_CHECK(check_block(w, n, &blocks[r], r));
        total += block_size(&blocks[r]);
        if (block_size(&blocks[r]) * (int64_t)es > INT32_MAX)
            return HS_FAIL(HS_ERR_RUNTIME, "%s: rank %d's block exceeds 2 GiB (MPI count limit)", w->path, r);
    }
    if (total != size)
        return HS_FAIL(HS_ERR_RUNTIME, "%s: the ranks' blocks hold %lld values, the grid %lld", w->path,
                       (long long)total, (long long)size);
    return HS_OK;
}

/* Receive every other rank's block and place it; `mine` is rank 0's own. */
static int assemble(hs_writer *w, const int64_t *n, const block_t *blocks, const void *mine, size_t es)
{
    int64_t maxb = 1;
    for (int r = 1; r < w->ctx->size; r++)
        if (block_size(&blocks[r]) > maxb) maxb = block_size(&blocks[r]);
    HS_CHECK(grow(&w->gather, &w->gather_size, (size_t)(n[0] * n[1] * n[2]) * es));
    HS_CHECK(grow(&w->scratch, &w->scratch_size, (size_t)maxb * es));
    if (block_size(&blocks[0]) > 0) place_block(n, &blocks[0], mine, w->gather, es);
    for (int r = 1; r < w->ctx->size; r++) {
        int64_t s = block_size(&blocks[r]);
        if (s == 0) continue;
        HS_MPI_CHECK(MPI_Recv(w->scratch, (int)(s * (int64_t)es), MPI_BYTE, r, 7701, w->ctx->comm, MPI_STATUS_IGNORE));
        place_block(n, &blocks[r], w->scratch, w->gather, es);
    }
    return HS_OK;
}

/* A collective file: every rank writes its own block; the first NaN or Inf in the grid's order
 * (the one a gathered file reports) is found by a reduction and reported by rank 0. */
static int put_block_collective(hs_writer *w, const hs_writer_var *v, const block_t *b, const void *local)
{
    hs_ctx *ctx = w->ctx;
    int rc = agree_call(w, w->be->put_block(w, v, b->off, b->cnt, local), "writing a variable");
    if (rc != HS_OK) return rc;
    double value = 0;
    int64_t i = first_nonfinite(v->dtype, local, block_size(b), &value), bad = INT64_MAX, mine = INT64_MAX;
    if (i >= 0) { /* local index (x fastest in the block) to the grid's linear index */
        int64_t x = i % b->cnt[0], y = i / b->cnt[0] % b->cnt[1], z = i / b->cnt[0] / b->cnt[1];
        const int64_t *n = w->grids[v->grid].n;
        mine = ((b->off[2] + z) * n[1] + (b->off[1] + y)) * n[0] + b->off[0] + x;
    }
    HS_MPI_CHECK(MPI_Allreduce(&mine, &bad, 1, MPI_INT64_T, MPI_MIN, ctx->comm));
    if (bad == INT64_MAX) return HS_OK;
    int owner = mine == bad ? ctx->rank : ctx->size, first = 0; /* blocks are disjoint: one owner */
    HS_MPI_CHECK(MPI_Allreduce(&owner, &first, 1, MPI_INT, MPI_MIN, ctx->comm));
    HS_MPI_CHECK(MPI_Bcast(&value, 1, MPI_DOUBLE, first, ctx->comm));
    w->nonfinite = 1;
    if (ctx->rank == 0) return report_nonfinite(w, v, bad, value);
    return HS_FAIL(HS_ERR_RUNTIME, "writing a variable of %s failed on rank 0", w->path); /* as agree words it */
}

int hs_writer_put_block(hs_writer *w, int varid, const int64_t offset[3], const int64_t count[3], const void *local)
{
    HS_CHECK(check_put(w, varid));
    if (!offset || !count) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_put_block: null offset or count");
    if (w->vars[varid].grid < 0 || w->ndim == 0)
        return HS_FAIL(HS_ERR_RUNTIME, "%s: hs_writer_put_block of %s, which is not on a grid", w->path, w->vars[varid].name);
    const int64_t *n = w->grids[w->vars[varid].grid].n;
    block_t me;
    for (int d = 0; d < 3; d++) {
        me.off[d] = d < w->ndim ? offset[d] : 0;
        me.cnt[d] = d < w->ndim ? count[d] : 1;
    }
    size_t es = hs_dtype_size((hs_dtype)w->vars[varid].dtype);
    hs_ctx *ctx = w->ctx;
    block_t *blocks = ctx->rank == 0 ? malloc((size_t)ctx->size * sizeof *blocks) : NULL;
    if (ctx->rank == 0 && !blocks) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory gathering output");
    HS_MPI_CHECK(MPI_Gather(&me, 6, MPI_INT64_T, blocks, 6, MPI_INT64_T, 0, ctx->comm));
    /* the layout is agreed on before any data moves, so a bad block never leaves a send hanging */
    int rc = ctx->rank == 0 ? check_blocks(w, n, blocks, es) : HS_OK;
    rc = agree(w, rc, "gathering a variable");
    if (rc != HS_OK) {
        free(blocks);
        return rc;
    }
    if (w->par) {
        free(blocks);
        return put_block_collective(w, &w->vars[varid], &me, local);
    }
    if (ctx->rank == 0) {
        rc = assemble(w, n, blocks, local, es);
        if (rc == HS_OK) rc = put_root(w, &w->vars[varid], w->gather);
        free(blocks);
    } else if (block_size(&me) > 0) {
        HS_MPI_CHECK(MPI_Send(local, (int)(block_size(&me) * (int64_t)es), MPI_BYTE, 0, 7701, ctx->comm));
    }
    return agree_put(w, rc);
}

/* ------------------------------------------------------------------ series and stations */

int hs_writer_put_scalar(hs_writer *w, int varid, double value)
{
    HS_CHECK(check_put(w, varid));
    const hs_writer_var *v = &w->vars[varid];
    if (!(v->grid == HS_GRID_SERIES || (v->grid == 0 && w->ndim == 0)) || !v->time_dependent)
        return HS_FAIL(HS_ERR_RUNTIME, "%s: hs_writer_put_scalar of %s, which is not a time series", w->path, v->name);
    int rc = HS_OK;
    if (io_rank(w)) {
        float f = (float)value;
        rc = put_root(w, v, v->dtype == HS_F32 ? (const void *)&f : (const void *)&value);
    }
    return agree_put(w, rc);
}

/* A collective file: the station names and coordinates (rank 0 is enough) are made known to
 * every rank, which all define the same metadata; rank 0 writes the values. */
static int def_stations_collective(hs_writer *w, const hs_station_desc *sd)
{
    hs_ctx *ctx = w->ctx;
    int64_t n = w->nstations, text = 0;
    if (ctx->rank == 0)
        for (int64_t i = 0; i < n; i++) text += (int64_t)strlen(sd->names[i]) + 1;
    HS_MPI_CHECK(MPI_Bcast(&text, 1, MPI_INT64_T, 0, ctx->comm));
    char *chars = malloc((size_t)text);
    const char **names = malloc((size_t)n * sizeof *names);
    double *xyz = calloc((size_t)n * 3, sizeof *xyz);
    int rc = chars && names && xyz && text <= INT32_MAX && 3 * n <= INT32_MAX
                 ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory sharing the stations of %s", w->path);
    rc = agree(w, rc, "declaring stations");
    if (rc == HS_OK) {
        const double *c[3] = {sd->x, sd->y, sd->z};
        if (ctx->rank == 0) {
            char *t = chars;
            for (int64_t i = 0; i < n; i++) t = stpcpy(t, sd->names[i]) + 1;
            for (int k = 0; k < w->st_ncoord; k++) memcpy(xyz + k * n, c[k], (size_t)n * sizeof *xyz);
        }
        HS_MPI_CHECK(MPI_Bcast(chars, (int)text, MPI_CHAR, 0, ctx->comm));
        HS_MPI_CHECK(MPI_Bcast(xyz, (int)(3 * n), MPI_DOUBLE, 0, ctx->comm));
        const char *t = chars;
        for (int64_t i = 0; i < n; i++, t += strlen(t) + 1) names[i] = t;
        hs_station_desc all = *sd;
        all.names = names;
        all.x = xyz;
        all.y = w->st_ncoord > 1 ? xyz + n : NULL;
        all.z = w->st_ncoord > 2 ? xyz + 2 * n : NULL;
        rc = agree_call(w, w->be->def_stations(w, &all), "declaring stations");
    }
    free(chars);
    free(names);
    free(xyz);
    return rc;
}

int hs_writer_def_stations(hs_writer *w, const hs_station_desc *sd)
{
    if (!w || !sd) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_def_stations: null argument");
    const char *p = w->path, *dim = sd->dim_name ? sd->dim_name : "station";
    if (w->nstations > 0) return hs_input_error(p, 0, dim, "stations declared twice");
    if (w->has_mesh) return hs_input_error(p, 0, dim, "stations go in a file of their own, not beside a mesh");
    if (w->ndim != 0 || !w->has_time)
        return hs_input_error(p, 0, dim, "stations go in a file of their own: no grid (ndim = 0), with time units");
    if (w->nvars > 0) return hs_input_error(p, 0, dim, "stations declared after variables");
    if (sd->n < 1 || sd->n > INT32_MAX) return hs_input_error(p, 0, dim, "%lld stations (1 .. 2^31 - 1)", (long long)sd->n);
    if (!*dim || strlen(dim) + 8 >= HS_IO_NAME_MAX || strchr(dim, '/') || hs_writer_is_own_name(w, dim))
        return hs_input_error(p, 0, dim, "bad station dimension name");
    int rc = HS_OK;
    if (w->ctx->rank == 0) {
        if (!sd->names || !sd->x || (sd->z && !sd->y)) rc = HS_FAIL(HS_ERR_RUNTIME, "%s: stations without names or x (or z without y)", p);
        for (int64_t i = 0; rc == HS_OK && i < sd->n; i++) {
            if (!sd->names[i] || !*sd->names[i]) rc = hs_input_error(p, 0, dim, "station %lld has no name", (long long)i);
            for (int64_t j = 0; rc == HS_OK && j < i; j++)
                if (strcmp(sd->names[i], sd->names[j]) == 0)
                    rc = hs_input_error(p, 0, sd->names[i], "two stations have this name (%lld and %lld)", (long long)j, (long long)i);
            double c[3] = {sd->x[i], sd->y ? sd->y[i] : 0, sd->z ? sd->z[i] : 0};
            if (rc == HS_OK && !(isfinite(c[0]) && isfinite(c[1]) && isfinite(c[2])))
                rc = hs_input_error(p, 0, sd->names[i], "station coordinates are not finite");
        }
    }
    HS_CHECK(agree(w, rc, "declaring stations"));
    snprintf(w->st_dim, sizeof w->st_dim, "%s", dim);
    w->st_ncoord = sd->z ? 3 : sd->y ? 2 : 1;
    int nc = w->st_ncoord;
    HS_MPI_CHECK(MPI_Bcast(&nc, 1, MPI_INT, 0, w->ctx->comm)); /* rank 0's pointers decide */
    w->st_ncoord = nc;
    w->nstations = sd->n;
    if (w->par) {
        rc = def_stations_collective(w, sd);
    } else {
        rc = w->ctx->rank == 0 ? w->be->def_stations(w, sd) : HS_OK;
        rc = agree(w, rc, "declaring stations");
    }
    if (rc != HS_OK) w->nstations = 0;
    return rc;
}

/* Rank 0: place the gathered (index, value) pairs; every one of the ns stations (mesh nodes or
 * cells: `what`) exactly once. */
static int place_stations(hs_writer *w, int64_t ns, const char *what, int64_t total, const int64_t *idx, const char *vals,
                          size_t es)
{
    HS_CHECK(grow(&w->gather, &w->gather_size, (size_t)ns * es));
    unsigned char *seen = calloc((size_t)ns, 1);
    if (!seen) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory gathering stations");
    int rc = HS_OK;
    for (int64_t k = 0; rc == HS_OK && k < total; k++) {
        if (idx[k] < 0 || idx[k] >= ns)
            rc = HS_FAIL(HS_ERR_RUNTIME, "%s: %s index %lld outside 0 .. %lld", w->path, what, (long long)idx[k], (long long)ns - 1);
        else if (seen[idx[k]]++)
            rc = HS_FAIL(HS_ERR_RUNTIME, "%s: %s %lld given twice", w->path, what, (long long)idx[k]);
        else
            memcpy((char *)w->gather + (size_t)idx[k] * es, vals + (size_t)k * es, es);
    }
    for (int64_t i = 0; rc == HS_OK && i < ns; i++)
        if (!seen[i]) rc = HS_FAIL(HS_ERR_RUNTIME, "%s: no rank gave %s %lld", w->path, what, (long long)i);
    free(seen);
    return rc;
}

/* Every rank's (index, value) pairs of v gathered to rank 0, placed and written. */
static int put_indexed(hs_writer *w, const hs_writer_var *v, int64_t ns, const char *what, int64_t nlocal,
                       const int64_t *index, const void *values)
{
    hs_ctx *ctx = w->ctx;
    size_t es = hs_dtype_size((hs_dtype)v->dtype);
    int bad = nlocal < 0 || nlocal > ns || (nlocal > 0 && (!index || !values));
    int n = bad ? 0 : (int)nlocal, anybad = 0;
    HS_MPI_CHECK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ctx->comm));
    if (anybad) return HS_FAIL(HS_ERR_RUNTIME, "%s: %s: a rank passed a bad %s count or no data", w->path, v->name, what);
    int *counts = NULL, *displs = NULL, *bcounts = NULL, *bdispls = NULL;
    int64_t total = 0, *idx = NULL;
    char *vals = NULL;
    int rc = HS_OK;
    if (ctx->rank == 0) {
        counts = malloc(4 * (size_t)ctx->size * sizeof(int));
        if (!counts) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory gathering stations");
    }
    rc = agree(w, rc, "gathering stations");
    if (rc != HS_OK) {
        free(counts);
        return rc;
    }
    HS_MPI_CHECK(MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, ctx->comm));
    if (ctx->rank == 0) {
        displs = counts + ctx->size;
        bcounts = displs + ctx->size;
        bdispls = bcounts + ctx->size;
        for (int r = 0; r < ctx->size; r++) total += counts[r];
        if (total > INT32_MAX / (int64_t)es) rc = HS_FAIL(HS_ERR_RUNTIME, "%s: too many station values", w->path);
        for (int r = 0, off = 0; rc == HS_OK && r < ctx->size; off += counts[r], r++) {
            displs[r] = off;
            bcounts[r] = counts[r] * (int)es;
            bdispls[r] = off * (int)es;
        }
        idx = malloc((size_t)(total ? total : 1) * sizeof *idx);
        vals = malloc((size_t)(total ? total : 1) * es);
        if (rc == HS_OK && (!idx || !vals)) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory gathering stations");
    }
    rc = agree(w, rc, "gathering stations");
    if (rc == HS_OK) {
        HS_MPI_CHECK(MPI_Gatherv(index, n, MPI_INT64_T, idx, counts, displs, MPI_INT64_T, 0, ctx->comm));
        HS_MPI_CHECK(MPI_Gatherv(values, n * (int)es, MPI_BYTE, vals, bcounts, bdispls, MPI_BYTE, 0, ctx->comm));
        if (ctx->rank == 0) rc = place_stations(w, ns, what, total, idx, vals, es);
        rc = agree_root(w, rc, "gathering stations");
        if (rc == HS_OK && io_rank(w)) rc = put_root(w, v, w->gather);
        rc = agree_put(w, rc);
    }
    free(counts);
    free(idx);
    free(vals);
    return rc;
}

int hs_writer_put_stations(hs_writer *w, int varid, int64_t nlocal, const int64_t *index, const void *values)
{
    HS_CHECK(check_put(w, varid));
    const hs_writer_var *v = &w->vars[varid];
    if (v->grid != HS_GRID_STATIONS)
        return HS_FAIL(HS_ERR_RUNTIME, "%s: hs_writer_put_stations of %s, which is not a station variable", w->path, v->name);
    return put_indexed(w, v, w->nstations, "station", nlocal, index, values);
}

int hs_writer_put_mesh(hs_writer *w, int varid, int64_t nlocal, const int64_t *index, const void *values)
{
    HS_CHECK(check_put(w, varid));
    const hs_writer_var *v = &w->vars[varid];
    if (v->grid != HS_GRID_MESH_NODE && v->grid != HS_GRID_MESH_CELL)
        return HS_FAIL(HS_ERR_RUNTIME, "%s: hs_writer_put_mesh of %s, which is not a mesh variable", w->path, v->name);
    int nodes = v->grid == HS_GRID_MESH_NODE;
    return put_indexed(w, v, nodes ? w->mesh.nnodes : w->mesh.ncells, nodes ? "mesh node" : "mesh cell", nlocal, index,
                       values);
}

/* ------------------------------------------------------------------ attributes, close */

int hs_writer_attr_text(hs_writer *w, const char *name, const char *value)
{
    if (!w || !name || !*name || !value) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_attr_text: null argument");
    if (!w->par) return agree(w, w->ctx->rank == 0 ? w->be->attr_text(w, name, value) : HS_OK, "writing an attribute");
    char *v0; /* rank 0's value, as in a gathered file */
    HS_CHECK(hs_io_strdup(value, &v0));
    int rc = bcast_text(w->ctx, &v0);
    if (rc == HS_OK) rc = agree_call(w, w->be->attr_text(w, name, v0), "writing an attribute");
    free(v0);
    return rc;
}

int hs_writer_attr_real(hs_writer *w, const char *name, double value)
{
    if (!w || !name || !*name) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_attr_real: null argument");
    if (w->par) HS_MPI_CHECK(MPI_Bcast(&value, 1, MPI_DOUBLE, 0, w->ctx->comm)); /* rank 0's value */
    return agree_call(w, io_rank(w) ? w->be->attr_real(w, name, value) : HS_OK, "writing an attribute");
}

/* Rank 0, after the file is closed: the companion files (XDMF, the VTU pieces read back from the
 * closed file), then the final name and the list of files written.  Companions first: one that
 * failed (a full disk) had left the main file under its final name, finished, beside exit 1. */
static int rename_and_finish(hs_writer *w)
{
    if (w->be->finish) HS_CHECK(w->be->finish(w));
    if (w->has_mesh && w->mesh.vtu) HS_CHECK(hs_writer_write_vtu(w));
    if (rename(w->partial, w->path) != 0)
        return HS_FAIL(HS_ERR_RUNTIME, "renaming %s to %s failed: %s", w->partial, w->path, strerror(errno));
    hs_io_written_add(w->path, w->has_time ? w->nrec : -1);
    return HS_OK;
}

static int close_and_rename(hs_writer *w)
{
    HS_CHECK(w->be->close(w));
    return rename_and_finish(w);
}

int hs_writer_close(hs_writer *w)
{
    if (!w) return HS_OK;
    int rc;
    if (w->par) { /* the close is collective; rank 0 renames once every rank has closed */
        rc = agree_call(w, w->be->close(w), "closing the output file");
        if (rc == HS_OK && w->ctx->rank == 0) rc = rename_and_finish(w);
    } else {
        rc = w->ctx->rank == 0 ? close_and_rename(w) : HS_OK;
    }
    rc = agree_rank0(w, rc, "closing the output file");
    writer_free(w);
    return rc;
}

static int sync_root(hs_writer *w)
{
    HS_CHECK(w->be->sync(w));
    return hs_io_fsync_path(w->partial);
}

int hs_writer_sync(hs_writer *w)
{
    if (!w) return HS_OK;
    int rc;
    if (w->par) { /* the library's flush is collective; rank 0 fsyncs the file after it */
        rc = agree_call(w, w->be->sync(w), "syncing the output file");
        if (rc != HS_OK) return rc;
        rc = w->ctx->rank == 0 ? hs_io_fsync_path(w->partial) : HS_OK;
        return agree_rank0(w, rc, "syncing the output file");
    }
    rc = w->ctx->rank == 0 ? sync_root(w) : HS_OK;
    return agree(w, rc, "syncing the output file");
}

int hs_writer_suspend(hs_writer *w)
{
    if (!w) return HS_OK;
    int rc = agree_call(w, io_rank(w) ? w->be->close(w) : HS_OK, "suspending the output file");
    writer_free(w);
    return rc;
}

void hs_writer_discard(hs_writer *w)
{
    if (!w) return;
    if (io_rank(w)) w->be->discard(w);
    if (w->ctx->rank == 0) remove(w->partial);
    writer_free(w);
}

/* Rank 0: find the file to continue.  A finished file (the run had ended) is moved back to
 * PATH.partial; with neither, the restarted run starts a new file (*exists = 0). */
static int find_partial(hs_writer *w, int *exists)
{
    if (!hs_io_file_exists(w->partial) && hs_io_file_exists(w->path) && rename(w->path, w->partial) != 0)
        return HS_FAIL(HS_ERR_RUNTIME, "renaming %s to %s failed: %s", w->path, w->partial, strerror(errno));
    *exists = hs_io_file_exists(w->partial);
    return HS_OK;
}

/* The backend ranks: reopen PATH.partial or start a new file (rank 0 found which). */
static int reopen_file(hs_writer *w, const hs_output_desc *desc, double time)
{
    int exists = 0, rc = w->ctx->rank == 0 ? find_partial(w, &exists) : HS_OK;
    if (w->par) {
        HS_CHECK(agree(w, rc, "reopening the output file"));
        HS_MPI_CHECK(MPI_Bcast(&exists, 1, MPI_INT, 0, w->ctx->comm));
    }
    HS_CHECK(rc);
    return exists ? w->be->reopen(w, desc, time) : w->be->create(w, desc);
}

int hs_writer_resume(hs_ctx *ctx, const hs_output_desc *desc, double time, hs_writer **out)
{
    if (!out) return HS_FAIL(HS_ERR_RUNTIME, "hs_writer_resume: no result pointer");
    hs_writer *w;
    HS_CHECK(writer_new(ctx, desc, &w));
    int rc = agree_call(w, io_rank(w) ? reopen_file(w, desc, time) : HS_OK, "reopening the output file");
    if (rc == HS_OK) {
        int64_t meta[2] = {w->nvars, w->nrec};
        HS_MPI_CHECK(MPI_Bcast(meta, 2, MPI_INT64_T, 0, ctx->comm));
        w->nvars = (int)meta[0];
        w->nrec = meta[1];
        HS_MPI_CHECK(MPI_Bcast(w->vars, (int)sizeof w->vars, MPI_BYTE, 0, ctx->comm));
    }
    if (rc != HS_OK) {
        if (io_rank(w)) w->be->discard(w);
        writer_free(w);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_writer_resume");
    }
    *out = w;
    return HS_OK;
}
