/* Checkpoint files: parameters, step and named arrays; written to a temporary name, then renamed. */
#ifndef HS_CHECKPOINT_H
#define HS_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "io/params.h"
#include "kernels/context.h"

typedef struct hs_checkpoint hs_checkpoint;

/* FNV-1a 64-bit hash of a byte stream, the integrity check of both formats (and the driver's
 * fingerprint of a run's input files): start from HS_FNV1A64_INIT and feed the bytes in order. */
#define HS_FNV1A64_INIT 0xcbf29ce484222325ull
uint64_t hs_fnv1a64(uint64_t hash, const void *data, size_t bytes);

/* The writer formats, in the order of checkpoint.format's choices. */
enum { HS_CKPT_FORMAT_AUTO = 0, HS_CKPT_FORMAT_HDF5 = 1, HS_CKPT_FORMAT_BINARY = 2 };
#define HS_CKPT_FORMAT_CHOICES "auto|hdf5|binary"

/* Formats: HDF5 when built in (root attributes format, solver, step, time, nranks, parameters;
 * one 1-D dataset per array with every rank's part in rank order and `dtype` / `counts`
 * attributes), otherwise our own binary format (magic, version, header, named arrays, FNV-1a
 * checksum; see io/checkpoint_binary.c).  The HDF5 form carries FNV-1a checksums too: `checksum`
 * on each dataset (its bytes as stored, little-endian) and `header_checksum` on the root (solver,
 * parameters, step, time, rank count), verified on open and before an array is read.  `format` (checkpoint.format) picks
 * the writer: HS_CKPT_FORMAT_AUTO (HDF5 when built in, else binary), _HDF5 (an error in a build
 * without HDF5), _BINARY.  Reading detects the format from the file.  A
 * damaged, foreign or truncated file is an input error naming it. */

/* Start a checkpoint at `path` (data go to PATH.tmp; renamed by hs_checkpoint_close, so a crash
 * never leaves a broken file under the final name).  Stores the resolved parameters, the solver
 * name, step and simulated time, the rank count.  Collective. */
int hs_checkpoint_create(hs_ctx *ctx, const char *path, const char *solver, const char *params_ini, int64_t step,
                         double time, int format, hs_checkpoint **c);

/* Store a distributed array: each rank passes its `count` host elements; the file keeps them in
 * rank order with every rank's count, so that the same rank count restores them exactly
 * (bitwise).  Collective. */
int hs_checkpoint_write(hs_checkpoint *c, const char *name, hs_dtype t, int64_t count, const void *local);
/* hs_checkpoint_write for a solver's state (a field, a spectrum, populations; floating-point types):
 * a NaN or an infinity in any rank's part is a runtime error naming the array, the rank and the
 * element, and nothing of the array is written, so that a run that has blown up stops at its
 * checkpoint instead of replacing the last good one with a useless one.  Collective. */
int hs_checkpoint_write_state(hs_checkpoint *c, const char *name, hs_dtype t, int64_t count, const void *local);

/* Open for reading; returns the stored step and time.  A file written by another solver or with a
 * different rank count is an input error saying so.  Collective. */
int hs_checkpoint_open(hs_ctx *ctx, const char *path, const char *solver, hs_checkpoint **c, int64_t *step,
                       double *time);
/* hs_checkpoint_open on the file the key `key` names (run.restart, surrogate.model_path): a file
 * that is missing, a folder or unreadable (rank 0 looks; every rank gets its verdict), no
 * checkpoint, damaged or another solver's is an input error about the key, located where its value
 * came from (the reader's "FILE: why" kept).  `what` names the file in the message.  Collective. */
int hs_checkpoint_open_key(hs_ctx *ctx, const hs_params *p, const char *key, const char *what, const char *path,
                           const char *solver, hs_checkpoint **c, int64_t *step, double *time);
/* The stored parameters (INI text; owned by the checkpoint). */
const char *hs_checkpoint_params(const hs_checkpoint *c);
/* Whether the checkpoint holds an array of this name (*found 1 or 0 on every rank), for arrays that
 * older checkpoints lack.  Collective. */
int hs_checkpoint_has(hs_checkpoint *c, const char *name, int *found);
/* Read this rank's part of a stored array; `count` must match what was written. Collective. */
int hs_checkpoint_read(hs_checkpoint *c, const char *name, hs_dtype t, int64_t count, void *local);
/* hs_checkpoint_read for a state written by hs_checkpoint_write_state: a non-finite value (a file of
 * an older version, or written elsewhere) is an input error about the file.  Collective. */
int hs_checkpoint_read_state(hs_checkpoint *c, const char *name, hs_dtype t, int64_t count, void *local);

/* Give up on a checkpoint being written (an error elsewhere): PATH.tmp is removed, PATH is left as
 * it was; a read one is closed.  Not collective (every rank should call it). */
void hs_checkpoint_discard(hs_checkpoint *c);

/* Finish: on a written checkpoint, flush and rename PATH.tmp to PATH; on a read one, close. */
int hs_checkpoint_close(hs_checkpoint *c);

#endif
