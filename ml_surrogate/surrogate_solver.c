/* The surrogate solver (`[run] solver = surrogate`; `hpcsim train|forecast|evaluate FILE`): parameters,
 * input rules, training driven as a run whose steps are optimiser steps, the model file, forecasts and scores. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/written.h"
#include "kernels/comm/comm.h"
#include "kernels/memory.h"
#include "kernels/nn/conv.h"
#include "ml_surrogate/surrogate.h"
#include "solvers/solver.h"

enum { MODE_TRAIN = 0, MODE_FORECAST = 1, MODE_EVALUATE = 2 };
#define MODE_CHOICES "train|forecast|evaluate"
#define PRECISION_CHOICES "f64|f32|bf16|f16"
static const hs_dtype g_precision[] = {HS_F64, HS_F32, HS_BF16, HS_F16};
#define MODEL_SOLVER "surrogate-model" /* the solver name inside model files */
#define MAX_FILES 100000
#define MAX_INIT 4096

static const hs_param_decl g_params[] = {
    {"surrogate", "mode", HS_PARAM_ENUM, "train", 0, 0, MODE_CHOICES, "train a model, forecast from given states, or score forecasts of the test split (hpcsim train|forecast|evaluate FILE)"},
    {"surrogate", "files", HS_PARAM_STRING, "", 0, 0, NULL, "NetCDF or HDF5 files, one trajectory each, in time order (separated by spaces or commas; required)"},
    {"surrogate", "variables", HS_PARAM_STRING, "", 0, 0, NULL, "variables read from every file, each a (time, y, x) field, or NAME@LEVEL for one level of a (time, level, y, x) one (written as NAMELEVEL, e.g. z@500 as z500); separated by spaces or commas; required"},
    {"surrogate", "input_frames", HS_PARAM_INT, "10", 1, 1000, NULL, "frames the model sees (k)"},
    {"surrogate", "output_frames", HS_PARAM_INT, "10", 1, 1000, NULL, "frames it forecasts (m)"},
    {"surrogate", "window_stride", HS_PARAM_INT, "1", 1, 1e9, NULL, "frames between the starts of consecutive windows"},
    {"surrogate", "split", HS_PARAM_REAL_LIST, "0.8 0.1 0.1", 0, 1, "3", "training, validation and test fractions of all frames, in time order (files in the order given)"},
    {"surrogate", "hidden", HS_PARAM_INT_LIST, "64 64", 1, 4096, "1|2|3|4|5|6|7|8", "channels of each ConvLSTM layer (encoder and forecaster alike)"},
    {"surrogate", "kernel", HS_PARAM_INT_LIST, "3", 1, 15, "1|2|3|4|5|6|7|8", "odd kernel size of each layer's gate convolutions (one value: every layer)"},
    {"surrogate", "head_channels", HS_PARAM_INT, "16", 0, 4096, NULL, "channels of the convolutional input head (0: none)"},
    {"surrogate", "head_kernel", HS_PARAM_INT, "3", 1, 15, NULL, "odd kernel size of the input head"},
    {"surrogate", "out_kernel", HS_PARAM_INT, "1", 1, 15, NULL, "odd kernel size of the output head"},
    {"surrogate", "residual", HS_PARAM_BOOL, "true", 0, 0, NULL, "forecast the change from the last input frame"},
    {"surrogate", "precision", HS_PARAM_ENUM, "f32", 0, 0, PRECISION_CHOICES, "network arithmetic; bf16 and f16 keep fp64 master weights (f16 with loss scaling)"},
    {"surrogate", "batch_size", HS_PARAM_INT, "16", 1, 1e6, NULL, "samples per optimiser step over all ranks (also the forecast batch)"},
    {"surrogate", "steps", HS_PARAM_INT, "1000", 1, 1e12, NULL, "optimiser steps"},
    {"surrogate", "lr", HS_PARAM_REAL, "1e-3", 1e-12, 10, NULL, "peak learning rate"},
    {"surrogate", "lr_schedule", HS_PARAM_ENUM, "cosine", 0, 0, HS_LR_SCHEDULE_CHOICES, "learning-rate schedule over the steps"},
    {"surrogate", "lr_decay", HS_PARAM_REAL, "0.01", 0, 1, NULL, "cosine: final fraction of lr; exponential: factor per lr_decay_steps"},
    {"surrogate", "lr_decay_steps", HS_PARAM_INT, "1000", 1, HS_NO_MAX, NULL, "exponential schedule: steps per lr_decay factor"},
    {"surrogate", "warmup_steps", HS_PARAM_INT, "0", 0, HS_NO_MAX, NULL, "linear warm-up of the learning rate over the first steps"},
    {"surrogate", "weight_decay", HS_PARAM_REAL, "1e-4", 0, 1, NULL, "AdamW's decoupled weight decay (0: Adam)"},
    {"surrogate", "adam_beta1", HS_PARAM_REAL, "0.9", 0, 0.999999, NULL, "first-moment decay"},
    {"surrogate", "adam_beta2", HS_PARAM_REAL, "0.999", 0, 0.999999999, NULL, "second-moment decay"},
    {"surrogate", "adam_eps", HS_PARAM_REAL, "1e-8", 1e-300, 1, NULL, "Adam epsilon"},
    {"surrogate", "clip_norm", HS_PARAM_REAL, "1", 0, HS_NO_MAX, NULL, "clip the global gradient norm to this (0: off)"},
    {"surrogate", "loss_scale", HS_PARAM_REAL, "0", 0, 1e30, NULL, "loss scale (0: automatic: dynamic from 65536 for f16, none otherwise)"},
    {"surrogate", "loss_scale_window", HS_PARAM_INT, "1000", 1, HS_NO_MAX, NULL, "f16: good steps before the dynamic loss scale doubles"},
    {"surrogate", "overlap_allreduce", HS_PARAM_BOOL, "true", 0, 0, NULL, "several ranks: sum each layer's gradient over the ranks while the backward pass goes on (false: after it; the same result bitwise)"},
    {"surrogate", "validation_windows", HS_PARAM_INT, "0", 0, HS_NO_MAX, NULL, "validation windows scored at each output record (0: all)"},
    {"surrogate", "model_path", HS_PARAM_STRING, "surrogate_model.h5", 0, 0, NULL, "the trained model: written when training ends, read by forecast and evaluate"},
    {"surrogate", "forecast_file", HS_PARAM_STRING, "", 0, 0, NULL, "forecast: the file the initial states come from (empty: the last of files)"},
    {"surrogate", "initial_times", HS_PARAM_STRING, "", 0, 0, NULL, "forecast: times of the last input frames, in the file's time units (empty: the file's last frame)"},
    {"surrogate", "test_windows", HS_PARAM_INT, "0", 0, HS_NO_MAX, NULL, "evaluate: test windows scored at most (0: all)"},
};

static int declare(void) { return hs_params_declare(g_params, (int)(sizeof g_params / sizeof *g_params)); }

/* ------------------------------------------------------------------ configuration */

typedef struct {
    int mode;
    hs_surr_data_config data;
    hs_surr_train_config train;
    const char *model_path;
    int ninit;
    double init[MAX_INIT];
    int64_t val_windows, test_windows;
} config;

static void config_free(config *c)
{
    for (int i = 0; i < c->data.nfiles; i++) free(c->data.files[i]);
    free(c->data.files);
    c->data.files = NULL, c->data.nfiles = 0;
}

/* The words of a list value (spaces or commas between them): count, and each into out (NULL: count only). */
static int words(const char *s, char **out, int max, size_t len)
{
    int n = 0;
    while (*s) {
        s += strspn(s, " ,\t");
        size_t w = strcspn(s, " ,\t");
        if (!w) break;
        if (out && n < max) snprintf(out[n], len, "%.*s", (int)w, s);
        n++, s += w;
    }
    return n;
}

/* A data file named in the parameter file: as given when it exists from the working directory (or
 * is absolute), else beside the parameter file when it exists there (as hs_params_input_path). */
static char *resolve(const hs_params *p, const char *name)
{
    const char *pf = hs_params_file(p), *slash = strrchr(pf, '/');
    if (name[0] == '/' || access(name, F_OK) == 0 || !slash) return strdup(name);
    size_t dir = (size_t)(slash - pf) + 1;
    char *path = malloc(dir + strlen(name) + 1);
    if (!path) return NULL;
    memcpy(path, pf, dir), strcpy(path + dir, name);
    if (access(path, F_OK) == 0) return path;
    free(path);
    return strdup(name);
}

static int read_files(const hs_params *p, config *c)
{
    const char *key = "surrogate.files";
    const char *v = hs_params_string(p, key);
    if (c->mode == MODE_FORECAST && *hs_params_string(p, "surrogate.forecast_file")) {
        key = "surrogate.forecast_file";
        v = hs_params_string(p, key);
    }
    int n = words(v, NULL, 0, 0);
    if (n < 1) return hs_params_error(p, key, "names no file (the surrogate needs data)");
    if (n > MAX_FILES) return hs_params_error(p, key, "names %d files (at most %d)", n, MAX_FILES);
    char **names = malloc((size_t)n * sizeof *names);
    char *buf = malloc((size_t)n * 4096);
    if (!names || !buf) {
        free(names), free(buf);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    }
    for (int i = 0; i < n; i++) names[i] = buf + (size_t)i * 4096;
    words(v, names, n, 4096);
    if (c->mode == MODE_FORECAST && !strcmp(key, "surrogate.files")) names[0] = names[n - 1], n = 1; /* the last */
    c->data.files = calloc((size_t)n, sizeof *c->data.files);
    int rc = c->data.files ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (int i = 0; rc == HS_OK && i < n; i++) {
        if (!(c->data.files[i] = resolve(p, names[i]))) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        c->data.nfiles = i + 1;
        if (rc == HS_OK) rc = hs_params_check_input_file(p, key, c->data.files[i], "data file");
    }
    free(names), free(buf);
    return rc;
}

static int read_variables(const hs_params *p, config *c)
{
    const char *v = hs_params_string(p, "surrogate.variables");
    int n = words(v, NULL, 0, 0);
    if (n < 1) return hs_params_error(p, "surrogate.variables", "names no variable (the surrogate needs at least one)");
    if (n > HS_SURR_MAX_VARS) return hs_params_error(p, "surrogate.variables", "names %d variables (at most %d)", n, HS_SURR_MAX_VARS);
    char *names[HS_SURR_MAX_VARS];
    for (int i = 0; i < n; i++) names[i] = c->data.vars[i];
    words(v, names, n, HS_SURR_NAME_MAX);
    char out[HS_SURR_MAX_VARS][2 * HS_SURR_NAME_MAX];
    for (int i = 0; i < n; i++) {
        if (strlen(c->data.vars[i]) >= HS_SURR_NAME_MAX - 1)
            return hs_params_error(p, "surrogate.variables", "'%s' is longer than %d characters", c->data.vars[i], HS_SURR_NAME_MAX - 2);
        char name[HS_SURR_NAME_MAX];
        int has_level;
        double level;
        if (hs_surr_var_spec(c->data.vars[i], name, &has_level, &level) != HS_OK) {
            hs_error_clear();
            return hs_params_error(p, "surrogate.variables", "'%s' is not NAME or NAME@LEVEL (LEVEL a number)", c->data.vars[i]);
        }
        hs_surr_var_out_name(name, has_level, level, out[i], sizeof out[i]);
        for (int j = 0; j < i; j++) {
            if (!strcmp(c->data.vars[i], c->data.vars[j]))
                return hs_params_error(p, "surrogate.variables", "'%s' is named twice", c->data.vars[i]);
            if (!strcmp(out[i], out[j]))
                return hs_params_error(p, "surrogate.variables", "'%s' and '%s' would both be written as '%s'", c->data.vars[j],
                                       c->data.vars[i], out[i]);
        }
    }
    c->data.nvars = n;
    return HS_OK;
}

static int read_architecture(hs_ctx *ctx, const hs_params *p, config *c)
{
    hs_surr_arch *a = &c->train.arch;
    memset(a, 0, sizeof *a);
    int64_t hidden[HS_SURR_MAX_LAYERS], kernel[HS_SURR_MAX_LAYERS];
    int L = hs_params_int_list(p, "surrogate.hidden", hidden, HS_SURR_MAX_LAYERS);
    int nk = hs_params_int_list(p, "surrogate.kernel", kernel, HS_SURR_MAX_LAYERS);
    if (nk != 1 && nk != L)
        return hs_params_error(p, "surrogate.kernel", "has %d values for %d layers (surrogate.hidden): give one, or one per layer", nk, L);
    a->nlayers = L;
    for (int l = 0; l < L; l++) {
        a->hidden[l] = (int)hidden[l];
        a->kernel[l] = (int)kernel[nk == 1 ? 0 : l];
        if (a->kernel[l] % 2 == 0) return hs_params_error(p, "surrogate.kernel", "%d is even (kernels are odd: centred)", a->kernel[l]);
    }
    a->head_channels = (int)hs_params_int(p, "surrogate.head_channels");
    a->head_kernel = (int)hs_params_int(p, "surrogate.head_kernel");
    a->out_kernel = (int)hs_params_int(p, "surrogate.out_kernel");
    if (a->head_kernel % 2 == 0) return hs_params_error(p, "surrogate.head_kernel", "%d is even (kernels are odd: centred)", a->head_kernel);
    if (a->out_kernel % 2 == 0) return hs_params_error(p, "surrogate.out_kernel", "%d is even (kernels are odd: centred)", a->out_kernel);
    a->residual = hs_params_bool(p, "surrogate.residual");
    a->dtype = g_precision[hs_params_enum(p, "surrogate.precision")];
    a->nvars = c->data.nvars;
    a->k_in = c->data.k_in = (int)hs_params_int(p, "surrogate.input_frames");
    a->k_out = c->data.k_out = (int)hs_params_int(p, "surrogate.output_frames");
    /* a forecast starts from the last k frames: the m after them need not exist (that is the point) */
    if (c->mode == MODE_FORECAST) c->data.min_frames = a->k_in;
    c->data.stride = (int)hs_params_int(p, "surrogate.window_stride");
    (void)ctx;
    return HS_OK;
}

static int read_training(hs_ctx *ctx, const hs_params *p, config *c)
{
    hs_surr_train_config *t = &c->train;
    double split[3];
    hs_params_real_list(p, "surrogate.split", split, 3);
    double sum = split[0] + split[1] + split[2];
    if (fabs(sum - 1.0) > 1e-9) return hs_params_error(p, "surrogate.split", "the fractions add up to %.10g, not 1", sum);
    if (c->mode == MODE_TRAIN && !(split[0] > 0)) return hs_params_error(p, "surrogate.split", "the training fraction is 0");
    memcpy(c->data.split, split, sizeof split);
    t->batch = (int)hs_params_int(p, "surrogate.batch_size");
    if (c->mode == MODE_TRAIN && t->batch < ctx->size)
        return hs_params_error(p, "surrogate.batch_size", "%d samples cannot be shared by %d ranks (at least one each)", t->batch, ctx->size);
    t->steps = hs_params_int(p, "surrogate.steps");
    t->lr.kind = (hs_lr_schedule)hs_params_enum(p, "surrogate.lr_schedule");
    t->lr.lr = hs_params_real(p, "surrogate.lr");
    t->lr.decay = hs_params_real(p, "surrogate.lr_decay");
    t->lr.decay_steps = hs_params_int(p, "surrogate.lr_decay_steps");
    t->lr.total_steps = t->steps;
    t->lr.warmup_steps = hs_params_int(p, "surrogate.warmup_steps");
    t->weight_decay = hs_params_real(p, "surrogate.weight_decay");
    t->beta1 = hs_params_real(p, "surrogate.adam_beta1");
    t->beta2 = hs_params_real(p, "surrogate.adam_beta2");
    t->eps = hs_params_real(p, "surrogate.adam_eps");
    t->clip = hs_params_real(p, "surrogate.clip_norm");
    double ls = hs_params_real(p, "surrogate.loss_scale");
    t->dynamic_scale = t->arch.dtype == HS_F16;
    t->loss_scale = ls > 0 ? ls : t->dynamic_scale ? 65536.0 : 1.0;
    t->scale_window = hs_params_int(p, "surrogate.loss_scale_window");
    t->overlap_allreduce = hs_params_bool(p, "surrogate.overlap_allreduce");
    t->seed = (uint64_t)hs_params_int(p, "run.seed");
    c->val_windows = hs_params_int(p, "surrogate.validation_windows");
    c->test_windows = hs_params_int(p, "surrogate.test_windows");
    return HS_OK;
}

static int read_config(hs_ctx *ctx, const hs_params *p, config *c)
{
    memset(c, 0, sizeof *c);
    c->mode = hs_params_enum(p, "surrogate.mode");
    HS_CHECK(read_variables(p, c));
    HS_CHECK(read_architecture(ctx, p, c));
    HS_CHECK(read_training(ctx, p, c));
    c->model_path = hs_params_string(p, "surrogate.model_path");
    if (c->mode != MODE_TRAIN && strcmp(hs_params_string(p, "run.restart"), "none") != 0)
        return hs_params_error(p, "run.restart", "restarts continue training; %s reads the trained model (surrogate.model_path)",
                               c->mode == MODE_FORECAST ? "forecast" : "evaluate");
    if (c->mode == MODE_TRAIN) HS_CHECK(hs_params_check_writable(p, "surrogate.model_path", c->model_path, "model file", 1));
    const char *it = hs_params_string(p, "surrogate.initial_times");
    if (c->mode == MODE_FORECAST && *it) {
        char buf[MAX_INIT][64], *ptr[MAX_INIT];
        for (int i = 0; i < MAX_INIT; i++) ptr[i] = buf[i];
        int n = words(it, ptr, MAX_INIT, 64);
        if (n > MAX_INIT) return hs_params_error(p, "surrogate.initial_times", "%d times (at most %d)", n, MAX_INIT);
        for (int i = 0; i < n; i++) {
            char *end;
            c->init[i] = strtod(buf[i], &end);
            if (*end || !isfinite(c->init[i])) return hs_params_error(p, "surrogate.initial_times", "'%s' is not a number", buf[i]);
        }
        c->ninit = n;
    }
    HS_CHECK(read_files(p, c));
    /* nothing the run writes may be one of its data files: a model_path naming one replaced it */
    for (int i = 0; i < c->data.nfiles; i++)
        if (c->mode == MODE_TRAIN && hs_same_target(c->model_path, c->data.files[i]))
            return hs_params_error(p, "surrogate.model_path", "%s is a data file of surrogate.files: the trained model would replace it",
                                   c->model_path);
    /* every file output.path leads to: the history (train), the scores, .csv and _example (evaluate), _i (forecast) */
    static const char *const exts[] = {".nc", ".h5", ".xmf", ".json", ".csv"};
    const char *suffixes[MAX_INIT + 2];
    char fc[MAX_INIT][16];
    int ns = 0;
    suffixes[ns++] = "";
    if (c->mode == MODE_EVALUATE) suffixes[ns++] = "_example";
    if (c->mode == MODE_FORECAST)
        for (int i = 0; i < (c->ninit > 0 ? c->ninit : 1); i++) snprintf(fc[i], sizeof fc[i], "_%d", i), suffixes[ns++] = fc[i];
    const int fmt = hs_params_enum(p, "output.format"), nc = fmt == HS_OUTPUT_NETCDF || (fmt == HS_OUTPUT_AUTO && HS_HAVE_NETCDF);
    for (int k = 0; k < ns; k++)
        for (int e = 0; e < 5; e++) {
            char out[4200];
            snprintf(out, sizeof out, "%s%s%s", hs_params_string(p, "output.path"), suffixes[k], exts[e]);
            for (int i = 0; i < c->data.nfiles; i++)
                if (hs_same_target(out, c->data.files[i]))
                    return hs_params_error(p, "output.path", "the output file %s is a data file of the surrogate: the run would replace it", out);
            int written = !strcmp(exts[e], nc ? ".nc" : ".h5") || (!nc && !strcmp(exts[e], ".xmf")) ||
                          (c->mode == MODE_EVALUATE && k == 0 && !strcmp(exts[e], ".csv"));
            if (written && fmt != HS_OUTPUT_NONE && hs_same_target(out, c->model_path))
                return hs_params_error(p, "output.path", "the output file %s is the model file (surrogate.model_path): the run would %s",
                                       out, c->mode == MODE_TRAIN ? "write both there" : "replace the model it reads");
            /* written as OUT.partial, then renamed: the driver's check covers PATH.nc.partial, not
             * PATH_example.nc.partial or PATH.csv.partial */
            if (written && fmt != HS_OUTPUT_NONE) HS_CHECK(hs_params_check_name_length(p, "output.path", out, strlen(".partial"), "output file"));
        }
    if (c->mode == MODE_TRAIN && hs_same_target(hs_params_string(p, "checkpoint.path"), c->model_path))
        return hs_params_error(p, "surrogate.model_path", "%s is also checkpoint.path: the model would replace the checkpoint",
                               c->model_path);
    return HS_OK;
}

/* ------------------------------------------------------------------ the model file */

/* The keys that fix the network: a model file must have been trained with the same values. */
static const char *const g_arch_keys[] = {"surrogate.variables", "surrogate.input_frames", "surrogate.output_frames",
                                          "surrogate.hidden", "surrogate.kernel", "surrogate.head_channels",
                                          "surrogate.head_kernel", "surrogate.out_kernel", "surrogate.residual", NULL};

typedef struct {
    const char *path;
    const config *c;
} arch_diff;

/* Two spellings of one network pass: variables by the names they are written as (`u, v` is `u v`,
 * z@500.0 is z@500), kernels per layer (`kernel = 3` is `3 3` for two layers).  The keys' values
 * as text differed and a model was refused for the spelling of its parameter file. */
static int same_architecture_value(const config *c, const char *name, const char *stored)
{
    if (!strcmp(name, "surrogate.variables")) {
        char buf[HS_SURR_MAX_VARS][HS_SURR_NAME_MAX], *w[HS_SURR_MAX_VARS];
        for (int i = 0; i < HS_SURR_MAX_VARS; i++) w[i] = buf[i];
        int n = words(stored, w, HS_SURR_MAX_VARS, HS_SURR_NAME_MAX);
        if (n != c->data.nvars) return 0;
        for (int i = 0; i < n; i++) {
            char v1[HS_SURR_NAME_MAX], v2[HS_SURR_NAME_MAX], o1[2 * HS_SURR_NAME_MAX], o2[2 * HS_SURR_NAME_MAX];
            int h1, h2;
            double l1, l2;
            if (hs_surr_var_spec(w[i], v1, &h1, &l1) != HS_OK || hs_surr_var_spec(c->data.vars[i], v2, &h2, &l2) != HS_OK) {
                hs_error_clear();
                return 0;
            }
            hs_surr_var_out_name(v1, h1, l1, o1, sizeof o1);
            hs_surr_var_out_name(v2, h2, l2, o2, sizeof o2);
            if (strcmp(o1, o2) != 0) return 0;
        }
        return 1;
    }
    if (!strcmp(name, "surrogate.kernel")) {
        const hs_surr_arch *a = &c->train.arch;
        char buf[HS_SURR_MAX_LAYERS + 1][32], *w[HS_SURR_MAX_LAYERS + 1];
        for (int i = 0; i <= HS_SURR_MAX_LAYERS; i++) w[i] = buf[i];
        int n = words(stored, w, HS_SURR_MAX_LAYERS + 1, sizeof buf[0]);
        if (n != 1 && n != a->nlayers) return 0;
        for (int l = 0; l < a->nlayers; l++) {
            char *end;
            long k = strtol(w[n == 1 ? 0 : l], &end, 10);
            if (*end || k != a->kernel[l]) return 0;
        }
        return 1;
    }
    return 0;
}

static int on_arch_diff(void *user, const char *name, const char *stored, const char *now)
{
    arch_diff *d = user;
    for (int i = 0; g_arch_keys[i]; i++)
        if (!strcmp(g_arch_keys[i], name) && !same_architecture_value(d->c, name, stored))
            return hs_input_error(d->path, 0, NULL, "the model was trained with %s = %s, this run has %s = %s (forecast and "
                                  "evaluate need the training's architecture)", name, stored, name, now);
    return HS_OK;
}

/* The context as one process (model files are read and written by single ranks, so that a model
 * trained on any number of ranks serves any other). */
static hs_ctx self_of(const hs_ctx *ctx)
{
    hs_ctx s = *ctx;
    s.comm = MPI_COMM_SELF;
    s.rank = 0, s.size = 1;
    return s;
}

typedef struct {
    double *params, mean[HS_SURR_MAX_VARS], sd[HS_SURR_MAX_VARS], *clim;
} model_file;

static void model_file_free(model_file *f)
{
    free(f->params), free(f->clim);
    f->params = f->clim = NULL;
}

/* The grid's spatial dimension names and CF axes, kept in the model file as character codes (a
 * checkpoint holds numeric arrays only): y's name, x's name, then y's and x's axis letters. */
#define GRID_DIMS_LEN (2 * HS_SURR_NAME_MAX + 2)
static void grid_dims_encode(const hs_surr_grid *g, int32_t out[GRID_DIMS_LEN])
{
    memset(out, 0, GRID_DIMS_LEN * sizeof *out);
    for (int i = 0; i < HS_SURR_NAME_MAX; i++) out[i] = (unsigned char)g->ydim[i], out[HS_SURR_NAME_MAX + i] = (unsigned char)g->xdim[i];
    out[2 * HS_SURR_NAME_MAX] = (unsigned char)g->yaxis, out[2 * HS_SURR_NAME_MAX + 1] = (unsigned char)g->xaxis;
}

static void grid_dims_decode(const int32_t in[GRID_DIMS_LEN], char ydim[HS_SURR_NAME_MAX], char xdim[HS_SURR_NAME_MAX], char *yaxis,
                             char *xaxis)
{
    for (int i = 0; i < HS_SURR_NAME_MAX; i++) ydim[i] = (char)in[i], xdim[i] = (char)in[HS_SURR_NAME_MAX + i];
    ydim[HS_SURR_NAME_MAX - 1] = xdim[HS_SURR_NAME_MAX - 1] = 0;
    *yaxis = (char)in[2 * HS_SURR_NAME_MAX], *xaxis = (char)in[2 * HS_SURR_NAME_MAX + 1];
}

/* The variables' units, kept in the model file as character codes (HS_SURR_NAME_MAX per variable):
 * its mean, deviation and climatology are in them, so data in other units (h in cm for a model
 * trained on m) were forecast and scored as garbage without a word. */
static void units_encode(const hs_surr_grid *g, int nvars, int32_t *out)
{
    memset(out, 0, (size_t)nvars * HS_SURR_NAME_MAX * sizeof *out);
    for (int v = 0; v < nvars; v++)
        for (int i = 0; i < HS_SURR_NAME_MAX && g->var_units[v][i]; i++) out[v * HS_SURR_NAME_MAX + i] = (unsigned char)g->var_units[v][i];
}

static void units_decode(const int32_t *in, int v, char out[HS_SURR_NAME_MAX])
{
    for (int i = 0; i < HS_SURR_NAME_MAX; i++) out[i] = (char)in[v * HS_SURR_NAME_MAX + i];
    out[HS_SURR_NAME_MAX - 1] = 0;
}

/* Read a model file on every rank: its parameters must be the architecture's, its grid the data's. */
/* The frame interval the network steps by (file 0's first two frames): {the interval in seconds
 * when the file's time units are CF time units, else in its own units; seconds per unit, or 0 when
 * the units are not time units}.  {0, 0} with fewer than two frames. */
static void frame_interval(const hs_surr_data *d, double out[2])
{
    out[0] = out[1] = 0;
    if (hs_surr_data_frames(d, 0) < 2) return;
    double step = hs_surr_data_time(d, 0, 1) - hs_surr_data_time(d, 0, 0);
    double sec = hs_time_unit_seconds(hs_surr_data_time_units(d, 0));
    out[0] = sec > 0 ? step * sec : step;
    out[1] = sec > 0 ? sec : 0;
}

static int load_model(hs_ctx *ctx, const hs_params *p, const config *c, const hs_surr_data *d, model_file *f)
{
    const hs_surr_grid *g = hs_surr_data_grid(d);
    hs_ctx self = self_of(ctx);
    const char *path = c->model_path;
    hs_checkpoint *ck = NULL;
    int64_t step;
    double time;
    /* a model file that cannot be read or is no model is the key's error (the checkpoint reader
     * named the file alone and called it a checkpoint) */
    HS_CHECK(hs_checkpoint_open_key(&self, p, "surrogate.model_path", "model file", path, MODEL_SOLVER, &ck, &step, &time));
    arch_diff ad = {path, c};
    int rc = hs_params_diff_ini(p, hs_checkpoint_params(ck), on_arch_diff, &ad);
    size_t np = 0, hw = (size_t)g->ny * g->nx, V = (size_t)c->data.nvars;
    double shape[2] = {0, 0};
    if (rc == HS_OK) rc = hs_checkpoint_read(ck, "grid_shape", HS_F64, 2, shape);
    if (rc == HS_OK && (shape[0] != g->ny || shape[1] != g->nx))
        rc = hs_input_error(path, 0, NULL, "the model was trained on a %g x %g grid (y, x), the data (%s) are on %d x %d",
                            shape[0], shape[1], c->data.files[0], g->ny, g->nx);
    /* the same grid, not only its shape: the coordinates the model was trained on */
    double *gy = NULL, *gx = NULL;
    if (rc == HS_OK) {
        gy = malloc((size_t)g->ny * sizeof *gy), gx = malloc((size_t)g->nx * sizeof *gx);
        if (!gy || !gx) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    }
    if (rc == HS_OK) rc = hs_checkpoint_read(ck, "grid_y", HS_F64, g->ny, gy);
    if (rc == HS_OK) rc = hs_checkpoint_read(ck, "grid_x", HS_F64, g->nx, gx);
    if (rc == HS_OK && (!hs_surr_same_coords(gy, g->y, g->ny) || !hs_surr_same_coords(gx, g->x, g->nx)))
        rc = hs_input_error(path, 0, NULL, "the model was trained on other coordinates (%s %g .. %g, %s %g .. %g) than the data's (%s: "
                            "%g .. %g, %g .. %g)", g->ydim, gy[0], gy[g->ny - 1], g->xdim, gx[0], gx[g->nx - 1], c->data.files[0], g->y[0],
                            g->y[g->ny - 1], g->x[0], g->x[g->nx - 1]);
    free(gy), free(gx);
    /* the same orientation: a (time, x, y) file on a square grid of equal coordinates passed the
     * checks above and was forecast transposed (models written before the names were kept pass) */
    int has_dims = 0;
    if (rc == HS_OK) rc = hs_checkpoint_has(ck, "grid_dims", &has_dims);
    if (rc == HS_OK && has_dims) {
        int32_t code[GRID_DIMS_LEN];
        char my[HS_SURR_NAME_MAX], mx[HS_SURR_NAME_MAX], may, max;
        rc = hs_checkpoint_read(ck, "grid_dims", HS_I32, GRID_DIMS_LEN, code);
        if (rc == HS_OK) grid_dims_decode(code, my, mx, &may, &max);
        if (rc == HS_OK && hs_surr_dims_swapped(g->ydim, g->xdim, g->yaxis, g->xaxis, my, mx, may, max))
            rc = hs_input_error(path, 0, NULL, "the model was trained on fields (time, %s, %s), the data (%s) are (time, %s, %s): the "
                                "spatial dimensions are swapped (transposed fields)", my, mx, c->data.files[0], g->ydim, g->xdim);
    }
    /* the interval it was trained to step by: a forecast from frames 10 times closer forecast 10
     * times too far per frame, without a word (models written before the interval was kept pass) */
    int has = 0;
    if (rc == HS_OK) rc = hs_checkpoint_has(ck, "frame_interval", &has);
    double then[2] = {0, 0}, now[2];
    if (rc == HS_OK && has) rc = hs_checkpoint_read(ck, "frame_interval", HS_F64, 2, then);
    frame_interval(d, now);
    if (rc == HS_OK && has && then[0] != 0 && now[0] != 0 && (then[1] > 0) == (now[1] > 0) &&
        fabs(now[0] - then[0]) > 1e-3 * fabs(then[0]))
        rc = hs_input_error(c->data.files[0], 0, NULL, "frames %.9g %s apart, but the model %s was trained on frames %.9g %s apart "
                            "(the network steps by one fixed interval)", now[0], now[1] > 0 ? "s" : hs_surr_data_time_units(d, 0),
                            path, then[0], then[1] > 0 ? "s" : "time units");
    /* the variables' units (models written before they were kept pass) */
    int has_units = 0;
    if (rc == HS_OK) rc = hs_checkpoint_has(ck, "var_units", &has_units);
    if (rc == HS_OK && has_units) {
        int32_t *code = malloc(V * HS_SURR_NAME_MAX * sizeof *code);
        rc = code ? hs_checkpoint_read(ck, "var_units", HS_I32, (int64_t)(V * HS_SURR_NAME_MAX), code)
                  : HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        for (int v = 0; rc == HS_OK && v < (int)V; v++) {
            char mu[HS_SURR_NAME_MAX];
            units_decode(code, v, mu);
            if (strcmp(mu, g->var_units[v]) != 0)
                rc = hs_input_error(path, 0, NULL, "the model was trained on '%s' in '%s', the data (%s) give it in '%s': convert the "
                                    "data to the model's units", g->var_name[v], mu, c->data.files[0], g->var_units[v]);
        }
        free(code);
    }
    if (rc == HS_OK) {
        hs_surr_arch a = c->train.arch;
        a.ny = g->ny, a.nx = g->nx;
        np = hs_surr_arch_nparams(&a);
        f->params = malloc(np * sizeof(double) + 8), f->clim = malloc(V * hw * sizeof(double) + 8);
        if (!f->params || !f->clim) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    }
    if (rc == HS_OK) rc = hs_checkpoint_read(ck, "params", HS_F64, (int64_t)np, f->params);
    if (rc == HS_OK) rc = hs_checkpoint_read(ck, "mean", HS_F64, (int64_t)V, f->mean);
    if (rc == HS_OK) rc = hs_checkpoint_read(ck, "std", HS_F64, (int64_t)V, f->sd);
    if (rc == HS_OK) rc = hs_checkpoint_read(ck, "climatology", HS_F64, (int64_t)(V * hw), f->clim);
    int rc2 = hs_checkpoint_close(ck);
    HS_CHECK(rc);
    return rc2;
}

/* Rank 0 writes the model file (parameters, statistics, climatology, grid); every rank learns the outcome. */
static int save_model(hs_ctx *ctx, const hs_params *p, const config *c, hs_surr_model *m, const hs_surr_data *d, int64_t step)
{
    int rc = HS_OK;
    if (ctx->rank == 0) {
        hs_ctx self = self_of(ctx);
        const hs_surr_grid *g = hs_surr_data_grid(d);
        size_t np = hs_surr_model_nparams(m), V = (size_t)c->data.nvars, hw = (size_t)g->ny * g->nx;
        double *params = malloc(np * sizeof *params + 8), shape[2] = {g->ny, g->nx};
        char *ini = hs_params_to_ini(p);
        hs_checkpoint *ck = NULL;
        rc = params && ini ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        if (rc == HS_OK) rc = hs_mem_copy(ctx, params, hs_surr_model_params(m), np * sizeof *params, HS_COPY_D2H);
        if (rc == HS_OK)
            rc = hs_checkpoint_create(&self, c->model_path, MODEL_SOLVER, ini, step, 0.0, hs_params_enum(p, "checkpoint.format"), &ck);
        if (rc == HS_OK) rc = hs_checkpoint_write(ck, "params", HS_F64, (int64_t)np, params);
        if (rc == HS_OK) rc = hs_checkpoint_write(ck, "mean", HS_F64, (int64_t)V, hs_surr_data_mean(d));
        if (rc == HS_OK) rc = hs_checkpoint_write(ck, "std", HS_F64, (int64_t)V, hs_surr_data_std(d));
        if (rc == HS_OK) rc = hs_checkpoint_write(ck, "climatology", HS_F64, (int64_t)(V * hw), hs_surr_data_climatology(d));
        if (rc == HS_OK) rc = hs_checkpoint_write(ck, "grid_shape", HS_F64, 2, shape);
        if (rc == HS_OK) rc = hs_checkpoint_write(ck, "grid_y", HS_F64, g->ny, g->y);
        if (rc == HS_OK) rc = hs_checkpoint_write(ck, "grid_x", HS_F64, g->nx, g->x);
        int32_t dims[GRID_DIMS_LEN];
        grid_dims_encode(g, dims);
        if (rc == HS_OK) rc = hs_checkpoint_write(ck, "grid_dims", HS_I32, GRID_DIMS_LEN, dims);
        double interval[2];
        frame_interval(d, interval);
        if (rc == HS_OK) rc = hs_checkpoint_write(ck, "frame_interval", HS_F64, 2, interval);
        int32_t *units = malloc(V * HS_SURR_NAME_MAX * sizeof *units);
        if (rc == HS_OK && !units) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        if (rc == HS_OK) units_encode(g, (int)V, units);
        if (rc == HS_OK) rc = hs_checkpoint_write(ck, "var_units", HS_I32, (int64_t)(V * HS_SURR_NAME_MAX), units);
        free(units);
        if (rc == HS_OK) rc = hs_checkpoint_close(ck);
        else if (ck) hs_checkpoint_discard(ck);
        if (rc == HS_OK) hs_io_written_add(c->model_path, -1);
        free(params), free(ini);
    }
    int code = rc;
    HS_CHECK(hs_host_bcast(ctx->comm, HS_I32, &code, 1, 0));
    if (ctx->rank != 0 && code != HS_OK) return HS_FAIL(code, "writing the model file %s failed on rank 0", c->model_path);
    return rc;
}

/* ------------------------------------------------------------------ input rules */

/* The frame of file 0 whose time is t (within 1e-9 relative), or -1. */
static int64_t frame_at(const hs_surr_data *d, double t)
{
    for (int64_t j = 0; j < hs_surr_data_frames(d, 0); j++) {
        double s = hs_surr_data_time(d, 0, j);
        if (fabs(s - t) <= 1e-9 * fmax(1.0, fabs(t))) return j;
    }
    return -1;
}

/* The rules on the data and the model that need the files, shared by check and create. */
static int check_data(hs_ctx *ctx, const hs_params *p, config *c, hs_surr_data *d)
{
    int64_t need = (int64_t)c->data.k_in + c->data.k_out;
    if (c->mode == MODE_TRAIN && hs_surr_data_windows(d, 0) < 1)
        return hs_params_error(p, "surrogate.split", "leaves no training window: the training split holds the first %.3g of the "
                               "frames, and a window needs %lld consecutive frames of one file", c->data.split[0], (long long)need);
    if (c->mode == MODE_EVALUATE && hs_surr_data_windows(d, 2) < 1)
        return hs_params_error(p, "surrogate.split", "leaves no test window: the test split holds the last %.3g of the frames, "
                               "and a window needs %lld consecutive frames of one file", c->data.split[2], (long long)need);
    if (c->mode == MODE_FORECAST) {
        if (c->ninit == 0) c->init[0] = hs_surr_data_time(d, 0, hs_surr_data_frames(d, 0) - 1), c->ninit = 1;
        for (int i = 0; i < c->ninit; i++) {
            int64_t j = frame_at(d, c->init[i]);
            if (j < 0)
                return hs_params_error(p, "surrogate.initial_times", "%.10g is not a time of %s", c->init[i], c->data.files[0]);
            if (j < c->data.k_in - 1)
                return hs_params_error(p, "surrogate.initial_times", "%.10g is frame %lld of %s: fewer than surrogate.input_frames = %d "
                                       "frames up to it", c->init[i], (long long)j, c->data.files[0], c->data.k_in);
        }
    }
    if (c->mode != MODE_TRAIN) {
        model_file f = {0};
        int rc = load_model(ctx, p, c, d, &f);
        model_file_free(&f);
        HS_CHECK(rc);
    }
    return HS_OK;
}

static int check(hs_ctx *ctx, const hs_params *p)
{
    config c;
    int rc = read_config(ctx, p, &c);
    hs_surr_data *d = NULL;
    if (rc == HS_OK) rc = hs_surr_data_open(ctx, &c.data, 0, &d);
    if (rc == HS_OK) rc = check_data(ctx, p, &c, d);
    hs_surr_data_close(d);
    config_free(&c);
    return rc;
}

/* ------------------------------------------------------------------ state */

typedef struct {
    hs_ctx *ctx;
    const hs_params *p;
    config c;
    hs_surr_data *d;
    hs_surr_trainer *t;
    hs_surr_model *m;          /* forecast / evaluate */
    int quiet, has_val, done;
    int var[6];
    double loss_sum, last_loss, last_val, wall0, wall_before;
    int64_t loss_count;
    int64_t step0;             /* the step this process started from (throughput) */
} state;

static int create(hs_ctx *ctx, const hs_params *p, void **out)
{
    state *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    *out = s;
    s->ctx = ctx, s->p = p, s->quiet = hs_params_bool(p, "run.quiet");
    s->wall0 = hs_wtime();
    HS_CHECK(read_config(ctx, p, &s->c));
    HS_CHECK(hs_surr_data_open(ctx, &s->c.data, 1, &s->d));
    HS_CHECK(check_data(ctx, p, &s->c, s->d));
    const hs_surr_grid *g = hs_surr_data_grid(s->d);
    s->c.train.arch.ny = g->ny, s->c.train.arch.nx = g->nx;
    if (s->c.mode == MODE_TRAIN) {
        HS_CHECK(hs_surr_trainer_create(ctx, &s->c.train, s->d, &s->t));
        s->has_val = hs_surr_data_windows(s->d, 1) > 0;
        return HS_OK;
    }
    model_file f = {0};
    int rc = load_model(ctx, p, &s->c, s->d, &f);
    if (rc == HS_OK) rc = hs_surr_data_set_stats(s->d, f.mean, f.sd, f.clim);
    if (rc == HS_OK) rc = hs_surr_model_create(ctx, &s->c.train.arch, s->c.train.batch, &s->m);
    if (rc == HS_OK)
        rc = hs_mem_copy(ctx, hs_surr_model_params(s->m), f.params, hs_surr_model_nparams(s->m) * sizeof(double), HS_COPY_H2D);
    if (rc == HS_OK) rc = hs_surr_model_sync_params(s->m);
    model_file_free(&f);
    return rc;
}

static void destroy(void *st)
{
    state *s = st;
    if (!s) return;
    hs_surr_trainer_destroy(s->t);
    hs_surr_model_destroy(s->m);
    hs_surr_data_close(s->d);
    config_free(&s->c);
    free(s);
}

/* ------------------------------------------------------------------ training */

static int advance_train(state *s, double until, int64_t max_steps, int64_t *taken)
{
    int64_t step = hs_surr_trainer_steps(s->t), n = max_steps;
    if (until > step && (int64_t)ceil(until) - step < n) n = (int64_t)ceil(until) - step;
    if (n > s->c.train.steps - step) n = s->c.train.steps - step;
    if (n < 1) n = 1;
    for (int64_t i = 0; i < n; i++) {
        double loss;
        HS_CHECK(hs_surr_trainer_step(s->t, &loss));
        s->loss_sum += loss, s->loss_count++;
    }
    *taken = n;
    return HS_OK;
}

static int advance(void *st, double until, int64_t max_steps, int64_t *taken)
{
    state *s = st;
    if (s->c.mode == MODE_TRAIN) return advance_train(s, until, max_steps, taken);
    *taken = 1;
    s->done = 1; /* forecast and evaluate do their work in finish, where they write */
    return HS_OK;
}

static void progress(void *st, double *time, int64_t *step, double *t_end, double *work)
{
    state *s = st;
    if (s->c.mode != MODE_TRAIN) {
        *time = *t_end = 0, *step = s->done, *work = 0;
        return;
    }
    *step = hs_surr_trainer_steps(s->t);
    *time = (double)*step;
    *t_end = (double)s->c.train.steps;
    *work = (double)s->c.train.batch;
}

static int describe_output(void *st, hs_output_desc *d)
{
    state *s = st;
    if (s->c.mode != MODE_TRAIN) {
        d->ndim = -1; /* forecast and evaluate write files of their own */
        return HS_OK;
    }
    d->title = "hpcsim ConvLSTM surrogate: training history";
    d->ndim = 0;
    d->record_name = "iteration";
    d->record_long_name = "optimiser step";
    d->time_units = "1";
    return HS_OK;
}

static const char *const g_series[6][3] = {
    {"loss", "1", "mean squared error of the training batches since the previous record (normalised units)"},
    {"learning_rate", "1", "learning rate of the last step"},
    {"grad_norm", "1", "global gradient norm of the last step, before clipping"},
    {"loss_scale", "1", "loss scale (mixed precision)"},
    {"wall_time", "s", "wall-clock seconds of training"},
    {"val_loss", "1", "mean squared error of the validation windows (normalised units)"},
};

/* A file without a grid: its series are time-dependent variables (hs_writer_def_var), the form a
 * resumed file reports them in. */
static int define_vars(void *st, hs_writer *w)
{
    state *s = st;
    for (int k = 0; k < (s->has_val ? 6 : 5); k++)
        HS_CHECK(hs_writer_def_var(w, g_series[k][0], g_series[k][1], g_series[k][2], NULL, HS_F64, 1, &s->var[k]));
    char arch[512];
    const hs_surr_arch *a = &s->c.train.arch;
    int n = snprintf(arch, sizeof arch, "ConvLSTM encoder-forecaster, %d -> %d frames, layers", a->k_in, a->k_out);
    for (int l = 0; l < a->nlayers; l++) n += snprintf(arch + n, sizeof arch - (size_t)n, " %dch/%dx%d", a->hidden[l], a->kernel[l], a->kernel[l]);
    snprintf(arch + n, sizeof arch - (size_t)n, ", %s, %d parameters", hs_dtype_name(a->dtype), (int)hs_surr_model_nparams(hs_surr_trainer_model(s->t)));
    return hs_writer_attr_text(w, "surrogate", arch);
}

static int write_state(void *st, hs_writer *w)
{
    state *s = st;
    double lr, gnorm, scale;
    int64_t skipped;
    hs_surr_trainer_last(s->t, &lr, &gnorm, &scale, &skipped);
    if (s->loss_count > 0) {
        s->last_loss = s->loss_sum / (double)s->loss_count;
    } else if (hs_surr_trainer_steps(s->t) == 0) { /* the untrained network: its loss on one batch of training windows */
        HS_CHECK(hs_surr_trainer_eval_loss(s->t, 0, s->c.train.batch, &s->last_loss));
    }
    s->loss_sum = 0, s->loss_count = 0;
    if (s->has_val) HS_CHECK(hs_surr_trainer_eval_loss(s->t, 1, s->c.val_windows, &s->last_val));
    double wall = s->wall_before + hs_wtime() - s->wall0;
    double v[6] = {s->last_loss, lr, gnorm, scale, wall, s->last_val};
    for (int k = 0; k < (s->has_val ? 6 : 5); k++) HS_CHECK(hs_writer_put_scalar(w, s->var[k], v[k]));
    if (!s->quiet && s->ctx->rank == 0) {
        printf("surrogate: step %lld  loss %.4e", (long long)hs_surr_trainer_steps(s->t), s->last_loss);
        if (s->has_val) printf("  validation %.4e", s->last_val);
        printf("  lr %.3e  |g| %.3e%s\n", lr, gnorm, skipped ? "  (steps skipped on overflow)" : "");
        fflush(stdout);
    }
    return HS_OK;
}

/* ------------------------------------------------------------------ forecasts and scores */

/* The unit of a time axis ("seconds since ..." -> "seconds"), for lead times. */
static void time_unit(const char *units, char *out, size_t len)
{
    const char *since = strstr(units, " since ");
    if (since) snprintf(out, len, "%.*s", (int)(since - units), units);
    else snprintf(out, len, "%s", units[0] ? units : "1");
}

/* Path of an output file: output.path + suffix + the format's extension. */
static void out_path(const state *s, const char *suffix, int netcdf, char *path, size_t len)
{
    snprintf(path, len, "%s%s%s", hs_params_string(s->p, "output.path"), suffix, netcdf ? ".nc" : ".h5");
}

static int output_netcdf(const state *s)
{
    int fmt = hs_params_enum(s->p, "output.format");
    return fmt == HS_OUTPUT_NETCDF || (fmt == HS_OUTPUT_AUTO && HS_HAVE_NETCDF);
}

/* A gridded file of the input's variables (with `suffix` on their names) over `frames` records at
 * `times`; values [frame][V][ny][nx], on rank 0.  CF like the input: same names, coordinates, units. */
static int write_fields(state *s, const char *path, const char *title, const char *time_units, double ref_time, int frames,
                        const double *times, const double *const *values, const char *const *suffix, int nsets)
{
    const hs_surr_grid *g = hs_surr_data_grid(s->d);
    hs_output_desc d;
    memset(&d, 0, sizeof d);
    char *ini = hs_params_to_ini(s->p);
    d.path = path, d.format = output_netcdf(s) ? HS_FORMAT_NETCDF : HS_FORMAT_HDF5, d.title = title;
    d.history = s->c.mode == MODE_FORECAST ? "hpcsim forecast" : "hpcsim evaluate", d.params_ini = ini;
    d.ndim = 2, d.dim_names[0] = g->xdim, d.dim_names[1] = g->ydim, d.n[0] = g->nx, d.n[1] = g->ny;
    d.coords[0] = g->x, d.coords[1] = g->y, d.coord_units[0] = g->xunits, d.coord_units[1] = g->yunits;
    d.coord_long_names[0] = g->xdim, d.coord_long_names[1] = g->ydim;
    d.time_units = time_units, d.calendar = g->calendar, d.deflate_level = (int)hs_params_int(s->p, "output.deflate");
    /* rank 0 holds every value, so a collective file gains nothing, and a disk filling inside the
     * library's own flush of one left 2 ranks in two different collectives of HDF5 1.10 for good */
    d.parallel = HS_OUTPUT_PARALLEL_OFF;
    hs_writer *w = NULL;
    int rc = hs_writer_open(s->ctx, &d, &w);
    free(ini);
    HS_CHECK(rc);
    int V = s->c.data.nvars, ids[2][HS_SURR_MAX_VARS];
    size_t hw = (size_t)g->ny * g->nx;
    for (int k = 0; rc == HS_OK && k < nsets; k++)
        for (int v = 0; rc == HS_OK && v < V; v++) {
            char name[2 * HS_SURR_NAME_MAX], lname[400];
            snprintf(name, sizeof name, "%s%s", g->var_name[v], suffix[k]);
            snprintf(lname, sizeof lname, "%s%s", g->var_long[v][0] ? g->var_long[v] : g->var_name[v],
                     suffix[k][0] ? " (surrogate forecast)" : "");
            rc = hs_writer_def_var(w, name, g->var_units[v], lname, NULL, HS_F64, 1, &ids[k][v]);
        }
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "forecast_reference_time", ref_time);
    if (rc == HS_OK) rc = hs_writer_attr_text(w, "surrogate_model", s->c.model_path);
    for (int j = 0; rc == HS_OK && j < frames; j++) {
        rc = hs_writer_begin_step(w, times[j]);
        for (int k = 0; rc == HS_OK && k < nsets; k++)
            for (int v = 0; rc == HS_OK && v < V; v++)
                rc = hs_writer_put(w, ids[k][v], s->ctx->rank == 0 ? values[k] + ((size_t)j * V + v) * hw : NULL);
    }
    if (rc == HS_OK) return hs_writer_close(w);
    if (hs_writer_nonfinite(w)) hs_writer_close(w);
    else hs_writer_discard(w);
    return rc;
}

static int do_forecast(state *s)
{
    const hs_surr_arch *a = &s->c.train.arch;
    int n = s->c.ninit, M = a->k_out;
    size_t fs = (size_t)a->nvars * a->ny * a->nx;
    int *files = calloc((size_t)n, sizeof *files);
    int64_t *lasts = malloc((size_t)n * sizeof *lasts);
    double *out = malloc((size_t)n * M * fs * sizeof *out), *times = malloc((size_t)M * sizeof *times);
    int rc = files && lasts && out && times ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (int i = 0; rc == HS_OK && i < n; i++) lasts[i] = frame_at(s->d, s->c.init[i]);
    double t0 = hs_wtime();
    if (rc == HS_OK) rc = hs_surr_forecast(s->ctx, s->m, s->d, n, files, lasts, out);
    double dt_wall = hs_wtime() - t0;
    int64_t nf = hs_surr_data_frames(s->d, 0);
    double step = nf > 1 ? hs_surr_data_time(s->d, 0, nf - 1) - hs_surr_data_time(s->d, 0, nf - 2) : 1.0;
    int netcdf = output_netcdf(s);
    for (int i = 0; rc == HS_OK && i < n && hs_params_enum(s->p, "output.format") != HS_OUTPUT_NONE; i++) {
        char suffix[32], path[8192];
        snprintf(suffix, sizeof suffix, "_%d", i);
        out_path(s, suffix, netcdf, path, sizeof path);
        for (int j = 0; j < M; j++) times[j] = s->c.init[i] + (j + 1) * step;
        const double *vals[1] = {out + (size_t)i * M * fs};
        const char *sfx[1] = {""};
        rc = write_fields(s, path, "hpcsim ConvLSTM surrogate forecast", hs_surr_data_time_units(s->d, 0), s->c.init[i], M, times, vals, sfx, 1);
    }
    if (rc == HS_OK && s->ctx->rank == 0)
        printf("surrogate: %d forecast%s of %d frames in %.3f s (%.3g ms per forecast, batches of %d, %s)\n", n, n == 1 ? "" : "s",
               M, dt_wall, 1e3 * dt_wall / n, s->c.train.batch, hs_conv_engine(s->ctx));
    free(files), free(lasts), free(out), free(times);
    return rc;
}

static int write_scores_csv(state *s, const hs_surr_scores *sc, const char *path, double step, const char *unit)
{
    if (s->ctx->rank != 0) return HS_OK;
    hs_io_whole file;
    HS_CHECK(hs_io_whole_open(&file, "scores", path, "w"));
    FILE *f = file.f;
    fprintf(f, "variable,lead,lead_time_%s,rmse_model,rmse_persistence,rmse_climatology,acc_model,acc_persistence,rmse_skill_vs_persistence\n", unit);
    for (int v = 0; v < sc->nvars; v++)
        for (int j = 0; j < sc->leads; j++) {
            size_t k = (size_t)v * sc->leads + j;
            double skill = sc->rmse_persistence[k] > 0 ? 1.0 - sc->rmse[k] / sc->rmse_persistence[k] : 0.0;
            fprintf(f, "%s,%d,%.9g,%.9e,%.9e,%.9e,%.6f,%.6f,%.6f\n", hs_surr_data_grid(s->d)->var_name[v], j + 1, (j + 1) * step, sc->rmse[k],
                    sc->rmse_persistence[k], sc->rmse_climatology[k], sc->acc[k], sc->acc_persistence[k], skill);
        }
    HS_CHECK(hs_io_whole_commit(&file, 1));
    hs_io_written_add(path, -1);
    return HS_OK;
}

/* The scores as series over the record axis lead_time. */
static int write_scores_nc(state *s, const hs_surr_scores *sc, const char *path, double step, const char *unit)
{
    hs_output_desc d;
    memset(&d, 0, sizeof d);
    char *ini = hs_params_to_ini(s->p);
    d.path = path, d.format = output_netcdf(s) ? HS_FORMAT_NETCDF : HS_FORMAT_HDF5;
    d.title = "hpcsim ConvLSTM surrogate: scores of the test windows against persistence and climatology";
    d.history = "hpcsim evaluate", d.params_ini = ini, d.ndim = 0;
    d.record_name = "lead_time", d.record_long_name = "forecast lead time", d.time_units = unit;
    d.parallel = HS_OUTPUT_PARALLEL_OFF; /* rank 0's scores: as write_fields */
    hs_writer *w = NULL;
    int rc = hs_writer_open(s->ctx, &d, &w);
    free(ini);
    HS_CHECK(rc);
    static const char *const kinds[5][2] = {{"rmse_%s", "RMSE of the surrogate's forecasts of %s"},
                                            {"rmse_persistence_%s", "RMSE of persistence (the last input frame) for %s"},
                                            {"rmse_climatology_%s", "RMSE of the training climatology for %s"},
                                            {"acc_%s", "anomaly correlation of the surrogate's forecasts of %s"},
                                            {"acc_persistence_%s", "anomaly correlation of persistence for %s"}};
    const double *arrays[5] = {sc->rmse, sc->rmse_persistence, sc->rmse_climatology, sc->acc, sc->acc_persistence};
    int ids[5][HS_SURR_MAX_VARS];
    const hs_surr_grid *g = hs_surr_data_grid(s->d);
    for (int v = 0; rc == HS_OK && v < sc->nvars; v++)
        for (int q = 0; rc == HS_OK && q < 5; q++) {
            char name[128], lname[256];
            snprintf(name, sizeof name, kinds[q][0], g->var_name[v]);
            snprintf(lname, sizeof lname, kinds[q][1], g->var_name[v]);
            rc = hs_writer_def_var(w, name, q < 3 ? g->var_units[v] : "1", lname, NULL, HS_F64, 1, &ids[q][v]);
        }
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "test_windows", (double)sc->windows);
    for (int j = 0; rc == HS_OK && j < sc->leads; j++) {
        rc = hs_writer_begin_step(w, (j + 1) * step);
        for (int v = 0; rc == HS_OK && v < sc->nvars; v++)
            for (int q = 0; rc == HS_OK && q < 5; q++) rc = hs_writer_put_scalar(w, ids[q][v], arrays[q][(size_t)v * sc->leads + j]);
    }
    if (rc == HS_OK) return hs_writer_close(w);
    hs_writer_discard(w);
    return rc;
}

static int do_evaluate(state *s)
{
    hs_surr_scores sc;
    const hs_surr_arch *a = &s->c.train.arch;
    HS_CHECK(hs_surr_evaluate(s->ctx, s->m, s->d, s->c.test_windows, &sc));
    const hs_surr_grid *g = hs_surr_data_grid(s->d);
    double step = hs_surr_data_frames(s->d, 0) > 1 ? hs_surr_data_time(s->d, 0, 1) - hs_surr_data_time(s->d, 0, 0) : 1.0;
    char unit[256];
    time_unit(g->time_units, unit, sizeof unit);
    int rc = HS_OK, netcdf = output_netcdf(s);
    if (hs_params_enum(s->p, "output.format") != HS_OUTPUT_NONE) {
        char path[8192];
        out_path(s, "", netcdf, path, sizeof path);
        rc = write_scores_nc(s, &sc, path, step, unit);
        snprintf(path, sizeof path, "%s.csv", hs_params_string(s->p, "output.path"));
        if (rc == HS_OK) rc = write_scores_csv(s, &sc, path, step, unit);
        double *times = malloc((size_t)a->k_out * sizeof *times);
        if (rc == HS_OK && !times) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        double ref = hs_surr_data_time(s->d, sc.example_file, sc.example_last);
        for (int j = 0; rc == HS_OK && j < a->k_out; j++) times[j] = hs_surr_data_time(s->d, sc.example_file, sc.example_last + 1 + j);
        out_path(s, "_example", netcdf, path, sizeof path);
        const double *vals[2] = {sc.truth, sc.forecast};
        const char *sfx[2] = {"", "_forecast"};
        if (rc == HS_OK)
            rc = write_fields(s, path, "hpcsim ConvLSTM surrogate: the first test window, truth and forecast",
                              hs_surr_data_time_units(s->d, sc.example_file), ref, a->k_out, times, vals, sfx, 2);
        free(times);
    }
    if (rc == HS_OK && s->ctx->rank == 0) {
        printf("surrogate: %lld test windows; RMSE (model / persistence / climatology) and ACC (model / persistence) by lead:\n",
               (long long)sc.windows);
        for (int v = 0; v < sc.nvars; v++)
            for (int j = 0; j < sc.leads; j++) {
                size_t k = (size_t)v * sc.leads + j;
                printf("  %-10s lead %2d: RMSE %.4e / %.4e / %.4e  ACC %.4f / %.4f\n", hs_surr_data_grid(s->d)->var_name[v], j + 1, sc.rmse[k],
                       sc.rmse_persistence[k], sc.rmse_climatology[k], sc.acc[k], sc.acc_persistence[k]);
            }
        fflush(stdout);
    }
    hs_surr_scores_free(&sc);
    return rc;
}

static int finish(void *st)
{
    state *s = st;
    if (s->c.mode == MODE_FORECAST) return do_forecast(s);
    if (s->c.mode == MODE_EVALUATE) return do_evaluate(s);
    int64_t steps = hs_surr_trainer_steps(s->t);
    HS_CHECK(save_model(s->ctx, s->p, &s->c, hs_surr_trainer_model(s->t), s->d, steps));
    if (s->ctx->rank == 0) {
        double wall = hs_wtime() - s->wall0;
        printf("surrogate: %lld steps on %d rank%s (%s, %s convolutions, %s), last loss %.4e%s; model written to %s\n",
               (long long)steps, s->ctx->size, s->ctx->size == 1 ? "" : "s", hs_device_name(s->ctx->device),
               hs_conv_engine(s->ctx), hs_dtype_name(s->c.train.arch.dtype), s->last_loss,
               s->has_val ? "" : " (no validation split)", s->c.model_path);
        printf("surrogate: %.1f samples/s over this run's %lld steps\n",
               wall > 0 ? (double)(steps - s->step0) * s->c.train.batch / wall : 0.0, (long long)(steps - s->step0));
        fflush(stdout);
    }
    return HS_OK;
}

/* ------------------------------------------------------------------ checkpoints */

/* The trainer's state on rank 0 (the ranks hold identical copies), and the history's accumulators. */
static int checkpoint(void *st, hs_checkpoint *c)
{
    state *s = st;
    size_t n = hs_surr_trainer_state_count(s->t);
    double *v = malloc((n + 8) * sizeof *v);
    if (!v) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    int rc = hs_surr_trainer_state_get(s->t, v);
    double acc[5] = {s->loss_sum, (double)s->loss_count, s->last_loss, s->last_val, s->wall_before + hs_wtime() - s->wall0};
    int root = s->ctx->rank == 0;
    if (rc == HS_OK) rc = hs_checkpoint_write(c, "surrogate_state", HS_F64, root ? (int64_t)n : 0, v);
    if (rc == HS_OK) rc = hs_checkpoint_write(c, "surrogate_history", HS_F64, root ? 5 : 0, acc);
    free(v);
    return rc;
}

static int restore(void *st, hs_checkpoint *c)
{
    state *s = st;
    if (!s->t) return HS_FAIL(HS_ERR_RUNTIME, "surrogate: only training restarts");
    size_t n = hs_surr_trainer_state_count(s->t);
    double *v = malloc((n + 8) * sizeof *v), acc[5] = {0};
    if (!v) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    int root = s->ctx->rank == 0;
    int rc = hs_checkpoint_read(c, "surrogate_state", HS_F64, root ? (int64_t)n : 0, v);
    if (rc == HS_OK) rc = hs_checkpoint_read(c, "surrogate_history", HS_F64, root ? 5 : 0, acc);
    if (rc == HS_OK) rc = hs_host_bcast(s->ctx->comm, HS_F64, v, n, 0);
    if (rc == HS_OK) rc = hs_host_bcast(s->ctx->comm, HS_F64, acc, 5, 0);
    if (rc == HS_OK) rc = hs_surr_trainer_state_set(s->t, v);
    free(v);
    HS_CHECK(rc);
    s->loss_sum = acc[0], s->loss_count = (int64_t)acc[1], s->last_loss = acc[2], s->last_val = acc[3];
    s->wall_before = acc[4], s->wall0 = hs_wtime();
    s->step0 = hs_surr_trainer_steps(s->t);
    return HS_OK;
}

/* More steps, other reporting, another model file and the all-reduce's timing (the same bits) may
 * be asked of a restart; the network, the data and the optimiser not. */
static const char *const g_restart_may_change[] = {"surrogate.steps", "surrogate.validation_windows", "surrogate.model_path",
                                                   "surrogate.test_windows", "surrogate.forecast_file",
                                                   "surrogate.initial_times", "surrogate.overlap_allreduce", NULL};

/* Where a training run ends: its step count (the time of its progress and checkpoints). */
static double run_end(const hs_params *p) { return (double)hs_params_int(p, "surrogate.steps"); }

const hs_solver_ops hs_surrogate_solver = {
    .name = "surrogate",
    .summary = "ConvLSTM encoder-forecaster surrogate of gridded time series (train, forecast, evaluate; data-parallel)",
    .declare = declare,
    .check = check,
    .create = create,
    .advance = advance,
    .progress = progress,
    .describe_output = describe_output,
    .define_vars = define_vars,
    .write = write_state,
    .finish = finish,
    .checkpoint = checkpoint,
    .restore = restore,
    .destroy = destroy,
    .restart_may_change = g_restart_may_change,
    .work_unit = "samples",
    .run_end = run_end,
    .end_key = "surrogate.steps",
};
