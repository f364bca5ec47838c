/* Checkpoint files: the collective part (gather to rank 0 / scatter from it), checks, PATH.tmp -> PATH. */
#include "io/checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/checkpoint_impl.h"
#include "io/output_impl.h"
#include "kernels/comm/comm.h"

#define CKPT_MSG_BYTES ((int64_t)1 << 30) /* MPI counts are int: move data in pieces */
#define CKPT_TAG 7702

uint64_t hs_fnv1a64(uint64_t hash, const void *data, size_t bytes)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < bytes; i++) hash = (hash ^ b[i]) * 0x100000001b3ull;
    return hash;
}

/* checkpoint.format: auto is HDF5 when built in; binary is our own format in any build. */
static const hs_ckpt_backend *pick_writer(int format)
{
#if HS_HAVE_HDF5
    if (format != HS_CKPT_FORMAT_BINARY) return &hs_ckpt_hdf5;
#endif
    if (format == HS_CKPT_FORMAT_HDF5) return NULL;
    return &hs_ckpt_binary;
}

static void ckpt_free(hs_checkpoint *c)
{
    if (!c) return;
    if (c->bs && c->be && c->be->discard) c->be->discard(c);
    free(c->path);
    free(c->tmp);
    free(c->params);
    free(c->buf);
    free(c);
}

static int ckpt_new(hs_ctx *ctx, const char *path, hs_checkpoint **out)
{
    *out = NULL;
    if (!ctx || !path || !*path) return HS_FAIL(HS_ERR_RUNTIME, "checkpoint: no context or file name");
    hs_checkpoint *c = calloc(1, sizeof *c);
    size_t len = strlen(path) + sizeof ".tmp";
    if (c) {
        c->ctx = ctx;
        c->path = strdup(path);
        c->tmp = malloc(len);
    }
    if (!c || !c->path || !c->tmp) {
        ckpt_free(c);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a checkpoint");
    }
    snprintf(c->tmp, len, "%s.tmp", path);
    *out = c;
    return HS_OK;
}

/* Every rank returns rank 0's status (input errors are printed by rank 0 alone). */
static int agree(hs_checkpoint *c, int rc, const char *what)
{
    int code = rc;
    HS_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, 0, c->ctx->comm));
    if (c->ctx->rank == 0 || code == HS_OK) return rc;
    if (code == HS_ERR_INPUT) return code;
    return HS_FAIL(code, "%s of checkpoint %s failed on rank 0", what, c->path);
}

static int bcast_text(MPI_Comm comm, char **s)
{
    int64_t len = *s ? (int64_t)strlen(*s) : -1;
    HS_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT64_T, 0, comm));
    if (len < 0) return HS_OK;
    if (!*s && !(*s = calloc((size_t)len + 1, 1))) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (int64_t off = 0; off < len; off += CKPT_MSG_BYTES) {
        int64_t n = len - off < CKPT_MSG_BYTES ? len - off : CKPT_MSG_BYTES;
        HS_MPI_CHECK(MPI_Bcast(*s + off, (int)n, MPI_CHAR, 0, comm));
    }
    return HS_OK;
}

int hs_checkpoint_create(hs_ctx *ctx, const char *path, const char *solver, const char *params_ini, int64_t step,
                         double time, int format, hs_checkpoint **out)
{
    if (!out || !solver) return HS_FAIL(HS_ERR_RUNTIME, "hs_checkpoint_create: null argument");
    hs_checkpoint *c;
    HS_CHECK(ckpt_new(ctx, path, &c));
    c->writing = 1;
    c->be = pick_writer(format);
    if (!c->be) {
        ckpt_free(c);
        return HS_FAIL(HS_ERR_RUNTIME, "checkpoint %s: this build has no HDF5 (checkpoint.format = hdf5)", path);
    }
    c->nranks = ctx->size;
    c->step = step, c->time = time;
    c->params = strdup(params_ini ? params_ini : "");
    int rc = c->params ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    if (rc == HS_OK && ctx->rank == 0) rc = c->be->create(c, solver, c->params, step, time);
    rc = agree(c, rc, "creating");
    if (rc != HS_OK) {
        if (ctx->rank == 0) {
            if (c->bs) c->be->discard(c);
            remove(c->tmp);
        }
        ckpt_free(c);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_checkpoint_create");
    }
    *out = c;
    return HS_OK;
}

static int grow_buf(hs_checkpoint *c, size_t need)
{
    if (need <= c->buf_size) return HS_OK;
    void *p = realloc(c->buf, need);
    if (!p) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory (%zu bytes) for checkpoint %s", need, c->path);
    c->buf = p;
    c->buf_size = need;
    return HS_OK;
}

/* Elements per message for type size `es`. */
static int64_t piece(size_t es) { return CKPT_MSG_BYTES / (int64_t)es; }
/* The next message's element count: what remains, capped at one piece. */
static int64_t piece_len(int64_t remaining, size_t es) { return remaining < piece(es) ? remaining : piece(es); }

/* Rank 0's staging buffer, large enough for the largest piece another rank sends or receives. */
static int grow_for_pieces(hs_checkpoint *c, const int64_t *counts, size_t es)
{
    int64_t maxn = 1;
    for (int r = 1; r < c->ctx->size; r++)
        if (counts[r] > maxn) maxn = piece_len(counts[r], es);
    return grow_buf(c, (size_t)maxn * es);
}

/* Rank 0: receive (or take) every rank's part and write it.  After a write failure it keeps
 * receiving, so that no rank is left waiting in a send. */
static int gather_write(hs_checkpoint *c, const int64_t *counts, size_t es, const void *local)
{
    int rc = HS_OK;
    int64_t off = 0;
    HS_CHECK(grow_for_pieces(c, counts, es));
    for (int r = 0; r < c->ctx->size; r++) {
        for (int64_t done = 0; done < counts[r];) {
            int64_t n = piece_len(counts[r] - done, es);
            const void *src = (const char *)local + (size_t)done * es;
            if (r > 0) {
                HS_MPI_CHECK(MPI_Recv(c->buf, (int)(n * (int64_t)es), MPI_BYTE, r, CKPT_TAG, c->ctx->comm,
                                      MPI_STATUS_IGNORE));
                src = c->buf;
            }
            if (rc == HS_OK) rc = c->be->write_part(c, off + done, n, src);
            done += n;
        }
        off += counts[r];
    }
    return rc;
}

static int send_parts(hs_checkpoint *c, int64_t count, size_t es, const void *local)
{
    for (int64_t done = 0; done < count;) {
        int64_t n = piece_len(count - done, es);
        HS_MPI_CHECK(MPI_Send((const char *)local + (size_t)done * es, (int)(n * (int64_t)es), MPI_BYTE, 0, CKPT_TAG,
                              c->ctx->comm));
        done += n;
    }
    return HS_OK;
}

static int check_array_args(const hs_checkpoint *c, const char *name, hs_dtype t, int64_t count, const void *p)
{
    if (!c || !name || !*name || strlen(name) > 255 || strchr(name, '/'))
        return HS_FAIL(HS_ERR_RUNTIME, "checkpoint array: bad name");
    if (hs_dtype_size(t) == 0) return HS_FAIL(HS_ERR_RUNTIME, "checkpoint array %s: unknown type %d", name, (int)t);
    if (count < 0 || (count > 0 && !p)) return HS_FAIL(HS_ERR_RUNTIME, "checkpoint array %s: bad count or data", name);
    return HS_OK;
}

int hs_checkpoint_write(hs_checkpoint *c, const char *name, hs_dtype t, int64_t count, const void *local)
{
    HS_CHECK(check_array_args(c, name, t, count, local));
    if (!c->writing) return HS_FAIL(HS_ERR_RUNTIME, "%s: checkpoint opened for reading, not writing", c->path);
    hs_ctx *ctx = c->ctx;
    size_t es = hs_dtype_size(t);
    int64_t *counts = ctx->rank == 0 ? malloc((size_t)ctx->size * sizeof *counts) : NULL;
    if (ctx->rank == 0 && !counts) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    HS_MPI_CHECK(MPI_Gather(&count, 1, MPI_INT64_T, counts, 1, MPI_INT64_T, 0, ctx->comm));
    int rc = ctx->rank == 0 ? c->be->begin_array(c, name, t, counts) : HS_OK;
    rc = agree(c, rc, "writing an array");
    if (rc != HS_OK) {
        free(counts);
        return rc;
    }
    if (ctx->rank == 0) {
        rc = gather_write(c, counts, es, local);
        if (rc == HS_OK) rc = c->be->end_array(c);
    } else {
        rc = send_parts(c, count, es, local);
    }
    free(counts);
    return agree(c, rc, "writing an array");
}

/* The first NaN or infinity of a floating-point array (a complex one counts its real and imaginary
 * parts), -1 where there is none or it holds integers (checkpoints store no 16-bit floats). */
static int64_t first_nonfinite(hs_dtype t, int64_t count, const void *v)
{
    const int parts = t == HS_C128 || t == HS_C64 ? 2 : 1;
    for (int64_t i = 0; i < count * parts; i++) {
        int bad;
        switch (t) {
        case HS_F64: case HS_C128: bad = !isfinite(((const double *)v)[i]); break;
        case HS_F32: case HS_C64: bad = !isfinite(((const float *)v)[i]); break;
        default: return -1;
        }
        if (bad) return i / parts;
    }
    return -1;
}

/* Every rank's part finite: HS_OK, or the error naming the array, the rank and the element (a
 * runtime error while writing, an input error about the file while reading). */
static int state_finite(hs_checkpoint *c, const char *name, hs_dtype t, int64_t count, const void *v, int reading)
{
    const int64_t bad = first_nonfinite(t, count, v);
    int who = bad >= 0 ? c->ctx->rank : -1;
    HS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MAX, c->ctx->comm));
    if (who < 0) return HS_OK;
    int64_t at = bad;
    HS_MPI_CHECK(MPI_Bcast(&at, 1, MPI_INT64_T, who, c->ctx->comm));
    if (reading)
        return hs_input_error(c->path, 0, NULL, "the state '%s' holds a NaN or an infinity (element %lld of rank %d's part): "
                              "a checkpoint of a run that had blown up", name, (long long)at, who);
    return HS_FAIL(HS_ERR_RUNTIME, "at step %lld (t = %.9g) the state '%s' holds a NaN or an infinity (element %lld of rank %d's "
                   "part): the run has blown up (a time step or a source beyond what the scheme holds?); checkpoint %s not "
                   "written, the last one kept", (long long)c->step, c->time, name, (long long)at, who, c->path);
}

int hs_checkpoint_write_state(hs_checkpoint *c, const char *name, hs_dtype t, int64_t count, const void *local)
{
    HS_CHECK(check_array_args(c, name, t, count, local));
    HS_CHECK(state_finite(c, name, t, count, local, 0));
    return hs_checkpoint_write(c, name, t, count, local);
}

/* Rank 0: the input error for a file that does not belong to this run. */
static int check_header(hs_checkpoint *c, const char *want, const char *solver, int nranks)
{
    if (strcmp(want, solver) != 0)
        return hs_input_error(c->path, 0, NULL, "checkpoint was written by solver '%s', not '%s'", solver, want);
    if (nranks != c->ctx->size)
        return hs_input_error(c->path, 0, NULL,
                              "checkpoint was written by %d MPI rank%s, this run has %d (restart on %d rank%s)", nranks,
                              nranks == 1 ? "" : "s", c->ctx->size, nranks, nranks == 1 ? "" : "s");
    return HS_OK;
}

static int open_root(hs_checkpoint *c, const char *want, int64_t *step, double *time)
{
    if (access(c->path, R_OK) != 0) return hs_input_error(c->path, 0, NULL, "cannot read the checkpoint: %s", strerror(errno));
    c->be = hs_ckpt_is_binary(c->path) ? &hs_ckpt_binary : NULL;
#if HS_HAVE_HDF5
    if (!c->be) c->be = &hs_ckpt_hdf5;
#endif
    if (!c->be) return hs_input_error(c->path, 0, NULL, "not an hpcsim checkpoint this build can read (no HDF5)");
    char *solver = NULL;
    int rc = c->be->open(c, &solver, &c->params, step, time, &c->nranks);
    if (rc == HS_OK) rc = check_header(c, want, solver, c->nranks);
    free(solver);
    return rc;
}

int hs_checkpoint_open(hs_ctx *ctx, const char *path, const char *solver, hs_checkpoint **out, int64_t *step,
                       double *time)
{
    if (!out || !solver || !step || !time) return HS_FAIL(HS_ERR_RUNTIME, "hs_checkpoint_open: null argument");
    hs_checkpoint *c;
    HS_CHECK(ckpt_new(ctx, path, &c));
    int rc = ctx->rank == 0 ? open_root(c, solver, step, time) : HS_OK;
    rc = agree(c, rc, "opening");
    if (rc == HS_OK) {
        HS_MPI_CHECK(MPI_Bcast(step, 1, MPI_INT64_T, 0, ctx->comm));
        HS_MPI_CHECK(MPI_Bcast(time, 1, MPI_DOUBLE, 0, ctx->comm));
        HS_MPI_CHECK(MPI_Bcast(&c->nranks, 1, MPI_INT, 0, ctx->comm));
        rc = bcast_text(ctx->comm, &c->params);
    }
    if (rc != HS_OK) {
        ckpt_free(c);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_checkpoint_open");
    }
    *out = c;
    return HS_OK;
}

int hs_checkpoint_open_key(hs_ctx *ctx, const hs_params *p, const char *key, const char *what, const char *path,
                           const char *solver, hs_checkpoint **c, int64_t *step, double *time)
{
    int code = ctx->rank == 0 ? hs_params_check_input_file(p, key, path, what) : HS_OK;
    HS_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, 0, ctx->comm));
    if (code != HS_OK) return code; /* HS_ERR_INPUT, reported by rank 0 */
    int opened = hs_checkpoint_open(ctx, path, solver, c, step, time);
    return opened == HS_ERR_INPUT ? hs_params_error_under_key(p, key) : opened;
}

const char *hs_checkpoint_params(const hs_checkpoint *c) { return c && c->params ? c->params : ""; }

int hs_ckpt_check_counts(const hs_checkpoint *c, const char *name, const int64_t *counts, int64_t room, int64_t *total)
{
    int64_t sum = 0;
    for (int r = 0; r < c->nranks; r++) {
        if (counts[r] < 0)
            return hs_input_error(c->path, 0, name, "checkpoint is damaged (rank %d's count is negative)", r);
        if (counts[r] > room - sum)
            return hs_input_error(c->path, 0, name, "checkpoint is damaged (the ranks' counts add up to more than the file holds)");
        sum += counts[r];
    }
    *total = sum;
    return HS_OK;
}

/* Rank 0: is the array there, of this type, with these counts? */
static int lookup(hs_checkpoint *c, const char *name, hs_dtype t, const int64_t *want)
{
    int found;
    hs_dtype st;
    int64_t *counts = malloc((size_t)c->nranks * sizeof *counts);
    if (!counts) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    int rc = c->be->find_array(c, name, &found, &st, counts);
    if (rc == HS_OK && !found) rc = hs_input_error(c->path, 0, name, "no such array in the checkpoint");
    if (rc == HS_OK && st != t)
        rc = hs_input_error(c->path, 0, name, "stored as %s, read as %s", hs_dtype_name(st), hs_dtype_name(t));
    for (int r = 0; rc == HS_OK && r < c->nranks; r++)
        if (counts[r] != want[r])
            rc = hs_input_error(c->path, 0, name, "rank %d stored %lld values and now asks for %lld", r,
                                (long long)counts[r], (long long)want[r]);
    free(counts);
    return rc;
}

static int read_scatter(hs_checkpoint *c, const int64_t *counts, size_t es, void *local)
{
    int64_t off = 0;
    HS_CHECK(grow_for_pieces(c, counts, es));
    for (int r = 0; r < c->ctx->size; r++) {
        for (int64_t done = 0; done < counts[r];) {
            int64_t n = piece_len(counts[r] - done, es);
            void *dst = r == 0 ? (char *)local + (size_t)done * es : c->buf;
            HS_CHECK(c->be->read_part(c, off + done, n, dst));
            if (r > 0) HS_MPI_CHECK(MPI_Send(dst, (int)(n * (int64_t)es), MPI_BYTE, r, CKPT_TAG, c->ctx->comm));
            done += n;
        }
        off += counts[r];
    }
    return HS_OK;
}

static int recv_parts(hs_checkpoint *c, int64_t count, size_t es, void *local)
{
    for (int64_t done = 0; done < count;) {
        int64_t n = piece_len(count - done, es);
        HS_MPI_CHECK(MPI_Recv((char *)local + (size_t)done * es, (int)(n * (int64_t)es), MPI_BYTE, 0, CKPT_TAG,
                              c->ctx->comm, MPI_STATUS_IGNORE));
        done += n;
    }
    return HS_OK;
}

int hs_checkpoint_has(hs_checkpoint *c, const char *name, int *found)
{
    *found = 0;
    if (c->writing) return HS_FAIL(HS_ERR_RUNTIME, "%s: checkpoint opened for writing, not reading", c->path);
    int rc = HS_OK;
    if (c->ctx->rank == 0) {
        hs_dtype t;
        int64_t *counts = malloc((size_t)c->nranks * sizeof *counts);
        rc = counts ? c->be->find_array(c, name, found, &t, counts) : HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        free(counts);
    }
    HS_CHECK(agree(c, rc, "looking up an array"));
    HS_MPI_CHECK(MPI_Bcast(found, 1, MPI_INT, 0, c->ctx->comm));
    return HS_OK;
}

int hs_checkpoint_read(hs_checkpoint *c, const char *name, hs_dtype t, int64_t count, void *local)
{
    HS_CHECK(check_array_args(c, name, t, count, local));
    if (c->writing) return HS_FAIL(HS_ERR_RUNTIME, "%s: checkpoint opened for writing, not reading", c->path);
    hs_ctx *ctx = c->ctx;
    int64_t *counts = ctx->rank == 0 ? malloc((size_t)ctx->size * sizeof *counts) : NULL;
    if (ctx->rank == 0 && !counts) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    HS_MPI_CHECK(MPI_Gather(&count, 1, MPI_INT64_T, counts, 1, MPI_INT64_T, 0, ctx->comm));
    int rc = ctx->rank == 0 ? lookup(c, name, t, counts) : HS_OK;
    rc = agree(c, rc, "reading an array");
    if (rc == HS_OK) {
        /* a failure on rank 0 midway aborts the job (runtime error), so no rank waits forever */
        rc = ctx->rank == 0 ? read_scatter(c, counts, hs_dtype_size(t), local)
                            : recv_parts(c, count, hs_dtype_size(t), local);
    }
    free(counts);
    return rc;
}

int hs_checkpoint_read_state(hs_checkpoint *c, const char *name, hs_dtype t, int64_t count, void *local)
{
    HS_CHECK(hs_checkpoint_read(c, name, t, count, local));
    return state_finite(c, name, t, count, local, 1);
}

static int finish_root(hs_checkpoint *c)
{
    HS_CHECK(c->be->close(c));
    if (!c->writing) return HS_OK;
    HS_CHECK(hs_io_fsync_path(c->tmp)); /* on disk before the rename makes it visible */
    if (rename(c->tmp, c->path) != 0) {
        const int why = errno;
        /* the whole checkpoint under its temporary name: removed, or said to be left (a folder
         * that turned read-only refuses both) */
        if (remove(c->tmp) == 0)
            return HS_FAIL(HS_ERR_RUNTIME, "renaming %s to %s failed: %s (%s removed, %s untouched)", c->tmp, c->path,
                           strerror(why), c->tmp, c->path);
        return HS_FAIL(HS_ERR_RUNTIME, "renaming %s to %s failed: %s (%s could not be removed either and is left)", c->tmp,
                       c->path, strerror(why), c->tmp);
    }
    return HS_OK;
}

void hs_checkpoint_discard(hs_checkpoint *c)
{
    if (!c) return;
    if (c->ctx->rank == 0) {
        if (c->bs) c->be->discard(c);
        if (c->writing) remove(c->tmp);
    }
    ckpt_free(c);
}

int hs_checkpoint_close(hs_checkpoint *c)
{
    if (!c) return HS_OK;
    int rc = c->ctx->rank == 0 ? finish_root(c) : HS_OK;
    rc = agree(c, rc, "closing");
    if (rc != HS_OK && c->writing && c->ctx->rank == 0) remove(c->tmp);
    ckpt_free(c);
    return rc;
}
