/* Internal pieces of checkpoint files: the object and the two on-disk formats (HDF5, our binary). */
#ifndef HS_CHECKPOINT_IMPL_H
#define HS_CHECKPOINT_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "io/checkpoint.h"
#include "kernels/config.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HS_CKPT_FORMAT_NAME "hpcsim checkpoint 1"

struct hs_ckpt_backend;

struct hs_checkpoint {
    hs_ctx *ctx;
    const struct hs_ckpt_backend *be;
    void *bs;           /* backend state, rank 0 only */
    int writing;
    int nranks;         /* rank count stored in the file */
    int64_t step;       /* writing: the step and time it holds (for messages) */
    double time;
    char *path, *tmp;   /* final name and PATH.tmp */
    char *params;       /* stored parameters (every rank) */
    void *buf;          /* rank 0: transfer buffer */
    size_t buf_size;
};

/* A format, driven on rank 0.  Arrays are written and read in parts: `offset` and `n` count
 * elements of the array's type from the start of the whole (all ranks') array. */
typedef struct hs_ckpt_backend {
    const char *name;
    int (*create)(hs_checkpoint *c, const char *solver, const char *params, int64_t step, double time);
    /* Read the header: *solver and *params are malloc'd. */
    int (*open)(hs_checkpoint *c, char **solver, char **params, int64_t *step, double *time, int *nranks);
    int (*begin_array)(hs_checkpoint *c, const char *name, hs_dtype t, const int64_t *counts);
    int (*write_part)(hs_checkpoint *c, int64_t offset, int64_t n, const void *data);
    int (*end_array)(hs_checkpoint *c);
    /* Look an array up for reading: its type and every rank's count (nranks values); 0 if absent. */
    int (*find_array)(hs_checkpoint *c, const char *name, int *found, hs_dtype *t, int64_t *counts);
    int (*read_part)(hs_checkpoint *c, int64_t offset, int64_t n, void *data);
    /* Finish (written: everything on disk at c->tmp) or close a read file. */
    int (*close)(hs_checkpoint *c);
    void (*discard)(hs_checkpoint *c);
} hs_ckpt_backend;

extern const hs_ckpt_backend hs_ckpt_binary;
#if HS_HAVE_HDF5
extern const hs_ckpt_backend hs_ckpt_hdf5;
#endif


/* Reading, rank 0: the per-rank counts (c->nranks of them) of array `name`, as a file stores them,
 * checked before any use: each >= 0, and their sum at most `room` elements (what the file can
 * hold), so that summing them cannot overflow.  *total gets the sum.  Else an input error naming
 * the file and the array (a damaged file summed 2^62 + 2^62: signed overflow). */
int hs_ckpt_check_counts(const hs_checkpoint *c, const char *name, const int64_t *counts, int64_t room, int64_t *total);

/* Does the file start with the binary format's magic?  (Used to pick the reader.) */
int hs_ckpt_is_binary(const char *path);

#ifdef __cplusplus
}
#endif
#endif
