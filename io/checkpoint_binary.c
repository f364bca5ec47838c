/* Our own self-describing checkpoint format, used when HDF5 is not built in (or HS_CHECKPOINT_FORMAT=binary).
 *
 * Layout (native byte order, checked by a marker):
 *   "\x89HSCKPT\n"  u32 version=1  u32 0x01020304  u32 nranks  u32 0  i64 step  f64 time
 *   u32 len + solver name   u64 len + parameter text
 *   per array:  u32 tag=1  u32 len + name  u32 dtype  u32 0  i64 counts[nranks]  data (sum of counts elements)
 *   end:        u32 tag=0  u64 FNV-1a hash of every byte before it
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "io/checkpoint_impl.h"
#include "kernels/error.h"

static const char MAGIC[8] = {'\x89', 'H', 'S', 'C', 'K', 'P', 'T', '\n'};
#define BIN_VERSION 1u
#define BIN_ORDER 0x01020304u

typedef struct {
    char name[256];
    hs_dtype t;
    int64_t total;
    int64_t *counts;
    off_t data;
} bin_array;

typedef struct {
    FILE *f;
    off_t size;      /* reading: the file's bytes, which bound every length and count in it */
    uint64_t hash;
    bin_array *arr;
    int narr, cap;
    int64_t written; /* elements of the current array written so far */
    int cur;         /* array being written or read */
} bin_state;

static bin_state *st(hs_checkpoint *c) { return (bin_state *)c->bs; }

static void fnv(uint64_t *h, const void *p, size_t n) { *h = hs_fnv1a64(*h, p, n); }

static int wr(hs_checkpoint *c, const void *p, size_t n)
{
    if (n == 0) return HS_OK;
    if (fwrite(p, 1, n, st(c)->f) != n)
        return HS_FAIL(HS_ERR_RUNTIME, "writing checkpoint %s failed: %s", c->tmp, strerror(errno));
    fnv(&st(c)->hash, p, n);
    return HS_OK;
}

static int wr_u32(hs_checkpoint *c, uint32_t v) { return wr(c, &v, sizeof v); }
static int wr_u64(hs_checkpoint *c, uint64_t v) { return wr(c, &v, sizeof v); }

static int rd(hs_checkpoint *c, void *p, size_t n)
{
    if (n && fread(p, 1, n, st(c)->f) != n)
        return hs_input_error(c->path, 0, NULL, "checkpoint is truncated or damaged (unexpected end of file)");
    fnv(&st(c)->hash, p, n);
    return HS_OK;
}

static int rd_u32(hs_checkpoint *c, uint32_t *v) { return rd(c, v, sizeof *v); }
static int rd_u64(hs_checkpoint *c, uint64_t *v) { return rd(c, v, sizeof *v); }

static int new_state(hs_checkpoint *c, const char *file, const char *mode)
{
    bin_state *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    s->hash = HS_FNV1A64_INIT;
    s->cur = -1;
    s->f = fopen(file, mode);
    if (!s->f) {
        int e = errno;
        free(s);
        if (mode[0] == 'r') return hs_input_error(file, 0, NULL, "cannot open the checkpoint: %s", strerror(e));
        return HS_FAIL(HS_ERR_RUNTIME, "cannot create checkpoint %s: %s", file, strerror(e));
    }
    c->bs = s;
    return HS_OK;
}

static int bin_create(hs_checkpoint *c, const char *solver, const char *params, int64_t step, double time)
{
    HS_CHECK(new_state(c, c->tmp, "wb"));
    HS_CHECK(wr(c, MAGIC, sizeof MAGIC));
    HS_CHECK(wr_u32(c, BIN_VERSION));
    HS_CHECK(wr_u32(c, BIN_ORDER));
    HS_CHECK(wr_u32(c, (uint32_t)c->nranks));
    HS_CHECK(wr_u32(c, 0));
    HS_CHECK(wr(c, &step, sizeof step));
    HS_CHECK(wr(c, &time, sizeof time));
    HS_CHECK(wr_u32(c, (uint32_t)strlen(solver)));
    HS_CHECK(wr(c, solver, strlen(solver)));
    HS_CHECK(wr_u64(c, strlen(params)));
    HS_CHECK(wr(c, params, strlen(params)));
    return HS_OK;
}

static int add_array(hs_checkpoint *c, const char *name, hs_dtype t, int64_t **counts)
{
    bin_state *s = st(c);
    if (s->narr == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        bin_array *p = realloc(s->arr, (size_t)cap * sizeof *p);
        if (!p) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        s->arr = p;
        s->cap = cap;
    }
    bin_array *a = &s->arr[s->narr];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->t = t;
    a->counts = calloc((size_t)c->nranks, sizeof *a->counts);
    if (!a->counts) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    *counts = a->counts;
    s->cur = s->narr++;
    return HS_OK;
}

static int find(bin_state *s, const char *name)
{
    for (int i = 0; i < s->narr; i++)
        if (strcmp(s->arr[i].name, name) == 0) return i;
    return -1;
}

static int bin_begin(hs_checkpoint *c, const char *name, hs_dtype t, const int64_t *counts)
{
    if (find(st(c), name) >= 0) return HS_FAIL(HS_ERR_RUNTIME, "checkpoint %s: array %s written twice", c->tmp, name);
    int64_t *mine;
    HS_CHECK(add_array(c, name, t, &mine));
    bin_array *a = &st(c)->arr[st(c)->cur];
    for (int r = 0; r < c->nranks; r++) a->total += (mine[r] = counts[r]);
    st(c)->written = 0;
    HS_CHECK(wr_u32(c, 1));
    HS_CHECK(wr_u32(c, (uint32_t)strlen(name)));
    HS_CHECK(wr(c, name, strlen(name)));
    HS_CHECK(wr_u32(c, (uint32_t)t));
    HS_CHECK(wr_u32(c, 0));
    return wr(c, counts, (size_t)c->nranks * sizeof *counts);
}

static int bin_write(hs_checkpoint *c, int64_t offset, int64_t n, const void *data)
{
    bin_array *a = &st(c)->arr[st(c)->cur];
    if (offset != st(c)->written || offset + n > a->total)
        return HS_FAIL(HS_ERR_RUNTIME, "checkpoint %s: array %s written out of order", c->tmp, a->name);
    st(c)->written += n;
    return wr(c, data, (size_t)n * hs_dtype_size(a->t));
}

static int bin_end(hs_checkpoint *c)
{
    bin_array *a = &st(c)->arr[st(c)->cur];
    if (st(c)->written != a->total)
        return HS_FAIL(HS_ERR_RUNTIME, "checkpoint %s: array %s incomplete", c->tmp, a->name);
    return HS_OK;
}

static void free_state(hs_checkpoint *c)
{
    bin_state *s = st(c);
    if (!s) return;
    for (int i = 0; i < s->narr; i++) free(s->arr[i].counts);
    free(s->arr);
    if (s->f) fclose(s->f);
    free(s);
    c->bs = NULL;
}

static int bin_close(hs_checkpoint *c)
{
    int rc = HS_OK;
    if (c->writing) {
        rc = wr_u32(c, 0);
        uint64_t h = st(c)->hash;
        if (rc == HS_OK) rc = wr_u64(c, h);
        FILE *f = st(c)->f;
        st(c)->f = NULL;
        if (fclose(f) != 0 && rc == HS_OK)
            rc = HS_FAIL(HS_ERR_RUNTIME, "writing checkpoint %s failed: %s", c->tmp, strerror(errno));
    }
    free_state(c);
    return rc;
}

static void bin_discard(hs_checkpoint *c) { free_state(c); }

/* ------------------------------------------------------------------ reading */

/* Bytes after the read position (0 when it cannot be told). */
static uint64_t bytes_left(hs_checkpoint *c)
{
    off_t at = ftello(st(c)->f);
    return at >= 0 && at < st(c)->size ? (uint64_t)(st(c)->size - at) : 0;
}

static int rd_text(hs_checkpoint *c, uint64_t len, char **out)
{
    /* a damaged length asked for up to 16 EiB before the read found the end of the file */
    if (len > bytes_left(c)) return hs_input_error(c->path, 0, NULL, "checkpoint header is damaged");
    *out = calloc(len + 1, 1);
    if (!*out) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    return rd(c, *out, len);
}

static int rd_header(hs_checkpoint *c, char **solver, char **params, int64_t *step, double *time, int *nranks)
{
    char magic[8];
    uint32_t v, order, nr, pad, slen;
    uint64_t plen;
    HS_CHECK(rd(c, magic, sizeof magic));
    if (memcmp(magic, MAGIC, sizeof magic) != 0) return hs_input_error(c->path, 0, NULL, "not an hpcsim checkpoint");
    HS_CHECK(rd_u32(c, &v));
    HS_CHECK(rd_u32(c, &order));
    if (v != BIN_VERSION) return hs_input_error(c->path, 0, NULL, "checkpoint format version %u, this build reads %u", v, BIN_VERSION);
    if (order != BIN_ORDER) return hs_input_error(c->path, 0, NULL, "checkpoint written on a machine of the other byte order");
    HS_CHECK(rd_u32(c, &nr));
    HS_CHECK(rd_u32(c, &pad));
    if (nr < 1 || nr > (1u << 24)) return hs_input_error(c->path, 0, NULL, "checkpoint header is damaged");
    *nranks = (int)nr;
    c->nranks = (int)nr;
    HS_CHECK(rd(c, step, sizeof *step));
    HS_CHECK(rd(c, time, sizeof *time));
    HS_CHECK(rd_u32(c, &slen));
    HS_CHECK(rd_text(c, slen, solver));
    HS_CHECK(rd_u64(c, &plen));
    return rd_text(c, plen, params);
}

/* Hash the data of an array without keeping it. */
static int skip_data(hs_checkpoint *c, uint64_t bytes)
{
    char buf[1 << 16];
    while (bytes > 0) {
        size_t n = bytes < sizeof buf ? (size_t)bytes : sizeof buf;
        HS_CHECK(rd(c, buf, n));
        bytes -= n;
    }
    return HS_OK;
}

static int rd_array(hs_checkpoint *c)
{
    uint32_t len, t, pad;
    char name[256];
    HS_CHECK(rd_u32(c, &len));
    if (len == 0 || len >= sizeof name) return hs_input_error(c->path, 0, NULL, "checkpoint is damaged (array name)");
    HS_CHECK(rd(c, name, len));
    name[len] = 0;
    HS_CHECK(rd_u32(c, &t));
    HS_CHECK(rd_u32(c, &pad));
    if (hs_dtype_size((hs_dtype)t) == 0) return hs_input_error(c->path, 0, name, "checkpoint is damaged (type %u)", t);
    int64_t *counts;
    HS_CHECK(add_array(c, name, (hs_dtype)t, &counts));
    bin_array *a = &st(c)->arr[st(c)->cur];
    HS_CHECK(rd(c, counts, (size_t)c->nranks * sizeof *counts));
    size_t es = hs_dtype_size(a->t);
    HS_CHECK(hs_ckpt_check_counts(c, name, counts, (int64_t)(bytes_left(c) / es), &a->total));
    a->data = ftello(st(c)->f);
    return skip_data(c, (uint64_t)a->total * es);
}

static int bin_open(hs_checkpoint *c, char **solver, char **params, int64_t *step, double *time, int *nranks)
{
    HS_CHECK(new_state(c, c->path, "rb"));
    struct stat sb;
    if (fstat(fileno(st(c)->f), &sb) != 0)
        return HS_FAIL(HS_ERR_RUNTIME, "fstat of checkpoint %s failed: %s", c->path, strerror(errno));
    st(c)->size = sb.st_size;
    HS_CHECK(rd_header(c, solver, params, step, time, nranks));
    for (;;) {
        uint32_t tag;
        HS_CHECK(rd_u32(c, &tag));
        if (tag == 0) break;
        if (tag != 1) return hs_input_error(c->path, 0, NULL, "checkpoint is damaged (record tag %u)", tag);
        HS_CHECK(rd_array(c));
    }
    uint64_t want = st(c)->hash, got;
    HS_CHECK(rd_u64(c, &got));
    if (got != want) return hs_input_error(c->path, 0, NULL, "checkpoint is damaged (checksum mismatch)");
    return HS_OK;
}

static int bin_find(hs_checkpoint *c, const char *name, int *found, hs_dtype *t, int64_t *counts)
{
    int i = find(st(c), name);
    *found = i >= 0;
    if (i < 0) return HS_OK;
    st(c)->cur = i;
    *t = st(c)->arr[i].t;
    memcpy(counts, st(c)->arr[i].counts, (size_t)c->nranks * sizeof *counts);
    return HS_OK;
}

static int bin_read(hs_checkpoint *c, int64_t offset, int64_t n, void *data)
{
    bin_array *a = &st(c)->arr[st(c)->cur];
    size_t es = hs_dtype_size(a->t);
    if (fseeko(st(c)->f, a->data + (off_t)(offset * (int64_t)es), SEEK_SET) != 0 ||
        fread(data, es, (size_t)n, st(c)->f) != (size_t)n)
        return HS_FAIL(HS_ERR_RUNTIME, "reading array %s of checkpoint %s failed", a->name, c->path);
    return HS_OK;
}

int hs_ckpt_is_binary(const char *path)
{
    char magic[8];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(magic, 1, sizeof magic, f);
    fclose(f);
    return n == sizeof magic && memcmp(magic, MAGIC, sizeof magic) == 0;
}

const hs_ckpt_backend hs_ckpt_binary = {
    .name = "binary",
    .create = bin_create,
    .open = bin_open,
    .begin_array = bin_begin,
    .write_part = bin_write,
    .end_array = bin_end,
    .find_array = bin_find,
    .read_part = bin_read,
    .close = bin_close,
    .discard = bin_discard,
};
