/* The CNN-LSTM (ConvLSTM encoder-forecaster) surrogate: gridded time series in, forecasts out.
 * Its pieces: the data set (surrogate_data.c), the model (surrogate_model.c), training
 * (surrogate_train.c), forecasts and scores (surrogate_eval.c) and the solver that drives them
 * (surrogate_solver.c, `[run] solver = surrogate`). */
#ifndef HS_SURROGATE_H
#define HS_SURROGATE_H

#include <stdint.h>

#include "kernels/context.h"
#include "kernels/nn/optim.h"

#define HS_SURR_MAX_LAYERS 8
#define HS_SURR_MAX_VARS 16
#define HS_SURR_NAME_MAX 64

/* ------------------------------------------------------------------ architecture */

/* The network (Shi et al. 2015, without peephole terms):
 *   input head   e_t = W_in * x_t + b_in            (optional; E channels; linear)
 *   encoder      L stacked ConvLSTM layers over t = 1..k (state zero at the start); layer l's input
 *                is the layer below's h (layer 0: e_t, or x_t without an input head)
 *   forecaster   L stacked ConvLSTM layers over t = 1..m, layer l starting from the encoder's final
 *                (h, c) of layer l; layer 0 has no input, layer l > 0 the forecaster's layer l - 1
 *   output head  y_t = sum over l of W_out,l * h_t^l + b_out   (a convolution of all layers' h,
 *                as Shi et al.'s concatenation), plus x_k when residual (the last input frame)
 * Convolutions are "same" (stride 1, zero padding); every ConvLSTM gate convolution (input and
 * hidden) of layer l has kernel kernel[l]; * is cross-correlation as in PyTorch. */
typedef struct hs_surr_arch {
    int nvars;                      /* V: channels in and out (one per variable) */
    int ny, nx;                     /* grid */
    int k_in, k_out;                /* input frames k, forecast frames m */
    int nlayers;                    /* L */
    int hidden[HS_SURR_MAX_LAYERS]; /* channels of each layer */
    int kernel[HS_SURR_MAX_LAYERS]; /* odd kernel size of each layer */
    int head_channels;              /* E (0: no input head) */
    int head_kernel, out_kernel;    /* odd kernel sizes of the heads */
    int residual;                   /* add the last input frame to the output */
    hs_dtype dtype;                 /* compute precision: HS_F64, HS_F32, HS_BF16, HS_F16 */
} hs_surr_arch;

/* ------------------------------------------------------------------ model */

typedef struct hs_surr_model hs_surr_model;

/* Parameters of an architecture (with its grid), without building the model. */
size_t hs_surr_arch_nparams(const hs_surr_arch *a);

/* A model for batches of up to `cap` samples on ctx's device.  Parameters are zero until
 * hs_surr_model_init or a copy into params.  Runtime errors only. */
int hs_surr_model_create(hs_ctx *ctx, const hs_surr_arch *a, int cap, hs_surr_model **m);
void hs_surr_model_destroy(hs_surr_model *m);
const hs_surr_arch *hs_surr_model_arch(const hs_surr_model *m);
/* The batch capacity the model was made for. */
int hs_surr_model_cap(const hs_surr_model *m);
/* Parameters: one fp64 vector (the master weights the optimiser updates), its gradient. */
size_t hs_surr_model_nparams(const hs_surr_model *m);
double *hs_surr_model_params(hs_surr_model *m);
double *hs_surr_model_grad(hs_surr_model *m);
/* Seeded initialisation (the same on every rank and backend): convolution weights uniform in
 * +-1/sqrt(fan_in) (PyTorch's default for Conv2d), biases 0 except the forget gates' 1. */
int hs_surr_model_init(hs_surr_model *m, uint64_t seed);
/* Refresh the compute-precision copy of the parameters (after every change of params). */
int hs_surr_model_sync_params(hs_surr_model *m);
/* Where each parameter block starts (tests): block b of hs_surr_model_blocks, its name, offset and size. */
int hs_surr_model_blocks(const hs_surr_model *m);
void hs_surr_model_block(const hs_surr_model *m, int b, const char **name, size_t *offset, size_t *count);

/* Forward pass of n <= cap samples.  x: device, compute precision, frames first:
 * [frame][sample][variable][y][x] with at least k frames (a training window has k + m: the inputs,
 * then the targets); the prediction is hs_surr_model_pred(m): [m][n][V][ny][nx]. */
int hs_surr_model_forward(hs_surr_model *m, int n, const void *x);
void *hs_surr_model_pred(hs_surr_model *m);
/* The loss's gradient with respect to the prediction, to be filled before backward (same layout). */
void *hs_surr_model_dpred(hs_surr_model *m);
/* Backward pass of the last forward pass: grad := d loss / d params (fp64; overwritten). */
int hs_surr_model_backward(hs_surr_model *m);
/* Told by the backward pass that grad[offset, offset + count) is final (fp64, on the device, after
 * the work queued so far on the context's stream): the output head's range first, then each
 * forecaster layer's and each encoder layer's from the top down, then the input head's.  The
 * ranges adjoin, run from the end of the vector to its start and cover it (alignment gaps
 * included); the backward pass does not touch a range again, so the callee may start reading
 * or summing it in place (the trainer's gradient all-reduce).  A non-zero return stops the pass. */
typedef int (*hs_surr_grad_ready)(void *user, size_t offset, size_t count);
/* Install (or, with NULL, remove) the callback of every later backward pass. */
void hs_surr_model_set_grad_ready(hs_surr_model *m, hs_surr_grad_ready fn, void *user);

/* ------------------------------------------------------------------ data */

/* Where the data come from and how they are cut into samples. */
typedef struct hs_surr_data_config {
    int nfiles;
    char **files;                  /* NetCDF or HDF5 files, one trajectory each, in time order */
    int nvars;
    char vars[HS_SURR_MAX_VARS][HS_SURR_NAME_MAX];  /* NAME, or NAME@LEVEL: one level of a (time, level, y, x) variable */
    int k_in, k_out;               /* a window: k input frames, then m target frames */
    int min_frames;                /* the fewest frames a file may have (0: one window, k + m; forecasting needs k) */
    int stride;                    /* between the first frames of consecutive windows */
    double split[3];               /* train, validation, test fractions of all frames, in time order */
} hs_surr_data_config;

typedef struct hs_surr_data hs_surr_data;

/* A surrogate.variables entry: NAME, or NAME@LEVEL (LEVEL a number: a value of the variable's level
 * coordinate, or the level's index where the file has none).  HS_ERR_INPUT when malformed. */
int hs_surr_var_spec(const char *spec, char name[HS_SURR_NAME_MAX], int *has_level, double *level);
/* The outputs' name of such an entry: NAME, or NAME followed by the level (z@500: z500). */
void hs_surr_var_out_name(const char *name, int has_level, double level, char *out, size_t len);

/* Read every file (every rank reads them all; this is the one pass over the data): variables,
 * grid and time coordinates checked (all files on one grid, no NaN or Inf, enough frames for a
 * window), normalisation statistics (per variable mean and standard deviation) and climatology
 * (per point mean) of the training frames, each rank reducing its share of the frames and the
 * partial results merged in rank order.  Bad files are input errors "FILE: message".  stats_only
 * = 0 also keeps the normalised frames for sampling.  Collective. */
int hs_surr_data_open(hs_ctx *ctx, const hs_surr_data_config *cfg, int keep_frames, hs_surr_data **d);
void hs_surr_data_close(hs_surr_data *d);

/* Windows of each split (0 train, 1 validation, 2 test): a window lies wholly inside one file and
 * one split (the splits cut the concatenated frames at the fractions). */
int64_t hs_surr_data_windows(const hs_surr_data *d, int split);
/* Window w of a split: its file and first frame. */
void hs_surr_data_window(const hs_surr_data *d, int split, int64_t w, int *file, int64_t *first);
/* 1 when a field on spatial dimensions (ya, xa), whose coordinates' CF axis attributes are
 * (yaxis_a, xaxis_a) (0: none), is the transpose of one on (yb, xb) with (yaxis_b, xaxis_b): the
 * names or the axes swapped.  Such fields on a square grid with equal coordinates compare equal. */
int hs_surr_dims_swapped(const char *ya, const char *xa, char yaxis_a, char xaxis_a, const char *yb, const char *xb, char yaxis_b,
                         char xaxis_b);
/* 1 when coordinate arrays a and b (n values) agree to 1e-9 of a's largest magnitude. */
int hs_surr_same_coords(const double *a, const double *b, int64_t n);
/* Grid and coordinates, dimension names and units, time step (from the first file). */
typedef struct hs_surr_grid {
    int ny, nx;
    const double *y, *x;                              /* coordinate values */
    char ydim[HS_SURR_NAME_MAX], xdim[HS_SURR_NAME_MAX];
    char yaxis, xaxis;                                /* their coordinates' CF axis ('Y', 'X'), 0 when not said */
    char yunits[HS_SURR_NAME_MAX], xunits[HS_SURR_NAME_MAX];
    char time_units[256];                             /* the time coordinate's units ("1" when none) */
    char calendar[64];                                /* its CF calendar ("" when none: standard) */
    char var_units[HS_SURR_MAX_VARS][HS_SURR_NAME_MAX];
    char var_long[HS_SURR_MAX_VARS][256];             /* long_name attributes ("" when none; + " at level L") */
    char var_name[HS_SURR_MAX_VARS][HS_SURR_NAME_MAX]; /* the outputs' names: NAME, or NAME followed by the level (z@500: z500) */
} hs_surr_grid;
const hs_surr_grid *hs_surr_data_grid(const hs_surr_data *d);
/* Time of frame `frame` of file `file` (in the file's time units). */
double hs_surr_data_time(const hs_surr_data *d, int file, int64_t frame);
/* The units of file `file`'s times (each file's own: they may count from different origins). */
const char *hs_surr_data_time_units(const hs_surr_data *d, int file);
int64_t hs_surr_data_frames(const hs_surr_data *d, int file);
/* Per variable mean and standard deviation of the training frames; climatology V x ny x nx. */
const double *hs_surr_data_mean(const hs_surr_data *d);
const double *hs_surr_data_std(const hs_surr_data *d);
const double *hs_surr_data_climatology(const hs_surr_data *d);
/* Replace the statistics (a model's, for forecasts and scores): batches filled from then on use them. */
int hs_surr_data_set_stats(hs_surr_data *d, const double *mean, const double *std, const double *clim);
/* Frame `frame` of file `file` in physical units, as float V x ny x nx (host; keep_frames only). */
const float *hs_surr_data_frame(const hs_surr_data *d, int file, int64_t frame);

/* Fill a batch on the host: n windows (file, first frame) into `out` in the compute type t, frames
 * first ([frame][sample][V][ny][nx]); `frames` of each window (k for inputs only, k + m with the
 * targets). */
int hs_surr_data_fill(const hs_surr_data *d, hs_dtype t, int n, const int *files, const int64_t *firsts, int frames,
                      void *out);

/* ------------------------------------------------------------------ training */

typedef struct hs_surr_train_config {
    hs_surr_arch arch;
    int batch;                 /* global batch size (samples per step, over all ranks) */
    int64_t steps;             /* optimiser steps */
    hs_lr_plan lr;             /* learning-rate schedule */
    double weight_decay;       /* AdamW's decoupled weight decay */
    double beta1, beta2, eps;
    double clip;               /* global gradient-norm clipping (0: off) */
    double loss_scale;         /* initial loss scale; dynamic (halved on overflow, doubled after
                                * scale_window good steps) when dynamic_scale */
    int dynamic_scale;
    int64_t scale_window;
    uint64_t seed;
    int64_t val_max;           /* validation windows used at most (0: all) */
    int overlap_allreduce;     /* sum each layer's gradient over the ranks while the backward pass
                                * goes on (1), or all of them after it (0); the same bits either way */
    size_t bucket_bytes;       /* the all-reduce's least message: adjoining layers are merged up to
                                * this (0: 1 MiB; 1: one bucket per layer) */
} hs_surr_train_config;

/* The samples of global step s are the training windows perm_e[(s B + b) mod N], b < B, where
 * e = (s B + b) / N is the epoch and perm_e a Fisher-Yates permutation seeded by (seed, e)
 * (kernels/rng/rng.h); rank r takes b in [B r / P, B (r + 1) / P).  So the samples of a step do
 * not depend on the rank count, and a restart at step s continues the same sequence. */
typedef struct hs_surr_trainer hs_surr_trainer;

/* Model, optimiser and batches on ctx's device; d must keep its frames.  Collective. */
int hs_surr_trainer_create(hs_ctx *ctx, const hs_surr_train_config *c, hs_surr_data *d, hs_surr_trainer **t);
void hs_surr_trainer_destroy(hs_surr_trainer *t);
hs_surr_model *hs_surr_trainer_model(hs_surr_trainer *t);
/* One optimiser step on the next global batch; *loss is the batch's mean squared error
 * (normalised units, all ranks).  Collective. */
int hs_surr_trainer_step(hs_surr_trainer *t, double *loss);
int64_t hs_surr_trainer_steps(const hs_surr_trainer *t);
/* The last step's learning rate, gradient norm (before clipping), loss scale, skipped steps. */
void hs_surr_trainer_last(const hs_surr_trainer *t, double *lr, double *gnorm, double *scale, int64_t *skipped);
/* Mean squared error (normalised) over a split's windows (validation 1 / test 2; at most `max`,
 * 0: all) with the current parameters.  Collective. */
int hs_surr_trainer_eval_loss(hs_surr_trainer *t, int split, int64_t max, double *loss);
/* Everything a restart needs, as fp64 host values: the count, then get and set (every rank passes
 * the same values; get fills them on every rank). */
size_t hs_surr_trainer_state_count(const hs_surr_trainer *t);
int hs_surr_trainer_state_get(hs_surr_trainer *t, double *v);
int hs_surr_trainer_state_set(hs_surr_trainer *t, const double *v);

/* ------------------------------------------------------------------ forecasts and scores */

/* Forecasts from n initial states, each given by its file and the index of its last input frame
 * (the reference time): out holds n x m x V x ny x nx values in physical units, on every rank (the
 * states are shared out over the ranks, then gathered).  d holds the model's statistics.
 * Collective. */
int hs_surr_forecast(hs_ctx *ctx, hs_surr_model *m, const hs_surr_data *d, int n, const int *files,
                     const int64_t *lasts, double *out);

/* Scores of the test windows, WeatherBench's way: for each forecast, each variable and lead time,
 * the RMSE over the grid and the anomaly correlation (anomalies from the training climatology,
 * uniform weights), then their means over the forecasts; for the model, persistence (the last
 * input frame) and climatology.  Arrays are [variable][lead]. */
typedef struct hs_surr_scores {
    int nvars, leads;
    int64_t windows;
    double *rmse, *rmse_persistence, *rmse_climatology, *acc, *acc_persistence;
    double *truth, *forecast; /* the first test window's m frames (physical units, every rank) */
    int example_file;
    int64_t example_last;     /* its reference frame */
} hs_surr_scores;
/* Over the first `max` test windows (0: all), shared out over the ranks.  Collective. */
int hs_surr_evaluate(hs_ctx *ctx, hs_surr_model *m, const hs_surr_data *d, int64_t max, hs_surr_scores *s);
void hs_surr_scores_free(hs_surr_scores *s);

#endif
