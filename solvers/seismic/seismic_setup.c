/* The seismic solver's parameters: declaration, reading and checking, the medium at a point, model files. */
#include "solvers/seismic/seismic_setup.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/grid_input.h"
#include "io/output.h"
#include "kernels/error.h"
#include "solvers/solver.h"

static const hs_param_decl g_seis_params[] = {
    {"seismic", "model", HS_PARAM_ENUM, "acoustic", 0, 0, HS_SEIS_MODEL_CHOICES,
     "acoustic: pressure wave equation, 2nd order in time; elastic: velocity-stress staggered grid (Virieux/Levander)"},
    {"seismic", "mode", HS_PARAM_ENUM, "forward", 0, 0, HS_SEIS_MODE_CHOICES,
     "forward: model the shot; gradient: misfit gradient w.r.t. vp (adjoint); fwi: L-BFGS iterations on vp (acoustic, constant density)"},
    {"seismic", "ndim", HS_PARAM_INT, "2", 2, 3, NULL, "spatial dimensions: 2 (x, z) or 3 (x, y, z); z is depth, positive down"},
    {"seismic", "n", HS_PARAM_INT_LIST, "201", 1, 1e6, "1|2|3", "grid points per dimension, the CPML layers included"},
    {"seismic", "spacing", HS_PARAM_REAL_LIST, "10", 1e-300, HS_NO_MAX, "1|2|3", "grid spacing per dimension (m)"},
    {"seismic", "procs", HS_PARAM_INT_LIST, "0", 0, 1e6, "1|2|3", "MPI ranks per dimension (0: automatic)"},
    {"seismic", "t_end", HS_PARAM_REAL, "1", 0, HS_NO_MAX, NULL, "recording length (s)"},
    {"seismic", "dt", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL, "time step (s); 0: cfl times the stability limit; a larger one than the limit is refused"},
    {"seismic", "cfl", HS_PARAM_REAL, "0.8", 1e-6, 1, NULL, "fraction of the stability limit used when dt = 0"},
    {"seismic", "order", HS_PARAM_INT, "0", 0, 8, NULL, "order of the spatial differences: 2, 4 or 8 (acoustic), 2 or 4 (elastic); 0: 8 acoustic, 4 elastic"},
    {"seismic", "precision", HS_PARAM_ENUM, "float32", 0, 0, HS_SEIS_PRECISION_CHOICES, "floating-point type of the wavefields"},
    {"seismic", "density", HS_PARAM_ENUM, "constant", 0, 0, HS_SEIS_DENSITY_CHOICES,
     "acoustic: constant (p_tt = c^2 lap p) or variable (p_tt = rho c^2 div(grad p / rho)) density"},
    {"seismic", "medium", HS_PARAM_ENUM, "constant", 0, 0, HS_SEIS_MEDIUM_CHOICES, "how vp, vs and rho are given"},
    {"seismic", "vp", HS_PARAM_REAL, "2000", 1e-300, HS_NO_MAX, NULL, "P-wave (acoustic) speed (m/s) of a constant medium"},
    {"seismic", "vs", HS_PARAM_REAL, "1000", 0, HS_NO_MAX, NULL, "S-wave speed (m/s) of a constant medium (elastic)"},
    {"seismic", "rho", HS_PARAM_REAL, "2000", 1e-300, HS_NO_MAX, NULL, "density (kg/m^3) of a constant medium, and of a file model without one"},
    {"seismic", "layer_depths", HS_PARAM_REAL_LIST, "500", HS_NO_MIN, HS_NO_MAX, NULL, "layered: increasing interface depths (m)"},
    {"seismic", "layer_vp", HS_PARAM_REAL_LIST, "2000 3000", 1e-300, HS_NO_MAX, NULL, "layered: vp of each layer, one more than layer_depths (m/s)"},
    {"seismic", "layer_vs", HS_PARAM_REAL_LIST, "1000 1700", 0, HS_NO_MAX, NULL, "layered: vs of each layer (m/s; elastic)"},
    {"seismic", "layer_rho", HS_PARAM_REAL_LIST, "2000 2300", 1e-300, HS_NO_MAX, NULL, "layered: density of each layer (kg/m^3)"},
    {"seismic", "model_file", HS_PARAM_STRING, "none", 0, 0, NULL,
     "medium = file: NetCDF or HDF5 file with vp (vs, rho) on the grid (z, [y,] x), or raw vp samples (model_format)"},
    {"seismic", "model_format", HS_PARAM_ENUM, "auto", 0, 0, HS_SEIS_FILE_FORMAT_CHOICES,
     "auto: NetCDF/HDF5; raw_float32 / raw_float64: little-endian samples, x fastest, seismic.n of them"},
    {"seismic", "vp_variable", HS_PARAM_STRING, "vp", 0, 0, NULL, "NetCDF/HDF5 model: variable holding vp (m/s)"},
    {"seismic", "vs_variable", HS_PARAM_STRING, "vs", 0, 0, NULL, "NetCDF/HDF5 model: variable holding vs (m/s; elastic)"},
    {"seismic", "rho_variable", HS_PARAM_STRING, "rho", 0, 0, NULL, "NetCDF/HDF5 model: variable holding rho (kg/m^3); absent: seismic.rho"},
    {"seismic", "vs_file", HS_PARAM_STRING, "none", 0, 0, NULL, "raw model: file of vs samples (elastic)"},
    {"seismic", "rho_file", HS_PARAM_STRING, "none", 0, 0, NULL, "raw model: file of rho samples (none: seismic.rho)"},
    {"seismic", "anomaly", HS_PARAM_ENUM, "none", 0, 0, HS_SEIS_ANOMALY_CHOICES,
     "disc: add anomaly_dvp * (1 + cos(pi r / radius)) / 2 to vp within anomaly_radius of anomaly_center"},
    {"seismic", "anomaly_center", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3", "centre of the anomaly (m)"},
    {"seismic", "anomaly_radius", HS_PARAM_REAL, "100", 1e-300, HS_NO_MAX, NULL, "radius of the anomaly (m)"},
    {"seismic", "anomaly_dvp", HS_PARAM_REAL, "100", HS_NO_MIN, HS_NO_MAX, NULL, "vp change at the anomaly's centre (m/s)"},
    {"seismic", "pml", HS_PARAM_INT, "20", 0, 10000, NULL, "CPML thickness (grid points) on every face (but a free surface)"},
    {"seismic", "pml_reflection", HS_PARAM_REAL, "1e-4", 1e-12, 0.5, NULL, "CPML theoretical normal-incidence reflection coefficient R"},
    {"seismic", "free_surface", HS_PARAM_BOOL, "false", 0, 0, NULL, "free surface at z = 0 (image method / stress imaging) instead of a CPML"},
    {"seismic", "source_type", HS_PARAM_ENUM, "explosive", 0, 0, HS_SEIS_SOURCE_CHOICES,
     "explosive (pressure / isotropic moment), force (elastic: point force), moment (elastic: moment tensor)"},
    {"seismic", "source_position", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3", "source position (m): x [y] z (of the first shot)"},
    {"seismic", "shot_count", HS_PARAM_INT, "1", 1, 100000, NULL,
     "shots one after another, shot k at source_position + k shot_step: forward, each with its own seismogram files (NAME_shotK); gradient/fwi: misfit and gradient summed over the shots, observed files OBSERVED_shotK"},
    {"seismic", "shot_groups", HS_PARAM_INT, "1", 1, 65536, NULL,
     "forward: the ranks split into this many equal groups, group g running shots g, g + G, ... over its own ranks (1: every rank works on every shot)"},
    {"seismic", "shot_step", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3", "shot_count > 1: from one shot's position to the next (m): x [y] z"},
    {"seismic", "wavelet", HS_PARAM_ENUM, "ricker", 0, 0, HS_WAVELET_CHOICES, "source time function"},
    {"seismic", "f0", HS_PARAM_REAL, "10", 1e-300, HS_NO_MAX, NULL, "peak frequency of the wavelet (Hz)"},
    {"seismic", "delay", HS_PARAM_REAL, "-1", -1, HS_NO_MAX, NULL, "centre time of the wavelet (s); -1: 1.5 / f0"},
    {"seismic", "amplitude", HS_PARAM_REAL, "1", HS_NO_MIN, HS_NO_MAX, NULL,
     "source strength: acoustic pressure source term (m^ndim Pa/... see README), force (N), moment (N m)"},
    {"seismic", "force", HS_PARAM_REAL_LIST, "0 1", HS_NO_MIN, HS_NO_MAX, "2|3", "force: direction x [y] z (normalised)"},
    {"seismic", "moment", HS_PARAM_REAL_LIST, "1 1 0", HS_NO_MIN, HS_NO_MAX, "3|6",
     "moment: tensor mxx mzz mxz (2D) or mxx myy mzz mxy mxz myz (3D), times amplitude"},
    {"seismic", "receivers", HS_PARAM_ENUM, "line", 0, 0, HS_SEIS_RECEIVER_CHOICES,
     "line: receiver_count points from receiver_start to receiver_end; grid: receiver_count per dimension from receiver_start by receiver_step; file: receiver_file"},
    {"seismic", "receiver_start", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3", "first receiver (m): x [y] z"},
    {"seismic", "receiver_end", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3", "line: last receiver (m)"},
    {"seismic", "receiver_step", HS_PARAM_REAL_LIST, "10", HS_NO_MIN, HS_NO_MAX, "1|2|3", "grid: spacing per dimension (m)"},
    {"seismic", "receiver_count", HS_PARAM_INT_LIST, "1", 1, 65535, "1|2|3", "line: receivers on the line; grid: per dimension"},
    {"seismic", "receiver_file", HS_PARAM_STRING, "none", 0, 0, NULL, "file: one receiver a line, '[name] x [y] z' (m); # comments"},
    {"seismic", "record_every", HS_PARAM_INT, "1", 1, 1e9, NULL, "time steps between seismogram samples"},
    {"seismic", "seismograms", HS_PARAM_STRING, "seismograms", 0, 0, NULL,
     "seismogram files without extension: .nc (or .h5) station data and .sgy SEG-Y (none: neither)"},
    {"seismic", "segy", HS_PARAM_BOOL, "true", 0, 0, NULL, "also write the seismograms as SEG-Y rev 1 (IEEE floats)"},
    {"seismic", "snapshot_stride", HS_PARAM_INT, "1", 1, 1e6, NULL, "wavefield snapshots (the gridded output) keep every n-th point per dimension"},
    {"seismic", "observed", HS_PARAM_STRING, "none", 0, 0, NULL, "gradient, fwi: observed seismograms (a forward run's NetCDF/HDF5 seismogram file)"},
    {"seismic", "snapshots", HS_PARAM_INT, "0", 0, 1e6, NULL,
     "gradient, fwi: forward states kept for the adjoint's binomial checkpointing (0: automatic: every step's wavefield where memory holds it, else as many states as it holds)"},
    {"seismic", "fwi_iterations", HS_PARAM_INT, "5", 1, 1e6, NULL, "fwi: L-BFGS iterations"},
    {"seismic", "fwi_vp_step", HS_PARAM_REAL, "50", 1e-300, HS_NO_MAX, NULL, "fwi: the unit of the optimiser's variable (m/s): the first step changes vp by at most this"},
};

int hs_seis_declare(void) {
    static const char *const inputs[] = {"seismic.model_file", "seismic.vs_file", "seismic.rho_file", "seismic.receiver_file", "seismic.observed", NULL}; /* no output may replace them */
    HS_CHECK(hs_params_declare_inputs(inputs));
    return hs_params_declare(g_seis_params, (int)(sizeof g_seis_params / sizeof g_seis_params[0]));
}

static int read_medium(const hs_params *p, hs_seis_config *c)
{
    c->medium = hs_params_enum(p, "seismic.medium");
    c->vp = hs_params_real(p, "seismic.vp");
    c->vs = hs_params_real(p, "seismic.vs");
    c->rho = hs_params_real(p, "seismic.rho");
    c->model_file = hs_params_input_path(p, "seismic.model_file");
    c->file_format = hs_params_enum(p, "seismic.model_format");
    c->vp_var = hs_params_string(p, "seismic.vp_variable");
    c->vs_var = hs_params_string(p, "seismic.vs_variable");
    c->rho_var = hs_params_string(p, "seismic.rho_variable");
    c->vs_file = hs_params_input_path(p, "seismic.vs_file");
    c->rho_file = hs_params_input_path(p, "seismic.rho_file");
    if (c->medium == HS_SEIS_MEDIUM_LAYERED) {
        c->nlayers = hs_params_real_list(p, "seismic.layer_depths", c->layer_depth, HS_SEIS_MAX_LAYERS);
        if (c->nlayers > HS_SEIS_MAX_LAYERS)
            return hs_params_error(p, "seismic.layer_depths", "at most %d interfaces", HS_SEIS_MAX_LAYERS);
        for (int i = 1; i < c->nlayers; i++)
            if (c->layer_depth[i] <= c->layer_depth[i - 1]) return hs_params_error(p, "seismic.layer_depths", "must increase");
        const char *keys[3] = {"seismic.layer_vp", "seismic.layer_vs", "seismic.layer_rho"};
        double *vals[3] = {c->layer_vp, c->layer_vs, c->layer_rho};
        for (int k = 0; k < 3; k++) {
            if (k == 1 && c->model == HS_SEIS_ACOUSTIC) continue;
            int nv = hs_params_real_list(p, keys[k], vals[k], HS_SEIS_MAX_LAYERS + 1);
            if (nv != c->nlayers + 1)
                return hs_params_error(p, keys[k], "has %d values; expected one per layer, %d (layer_depths has %d)", nv,
                                       c->nlayers + 1, c->nlayers);
        }
    }
    if (c->medium == HS_SEIS_MEDIUM_FILE && !strcmp(c->model_file, "none"))
        return hs_params_error(p, "seismic.model_file", "medium = file needs a file");
    if (c->model == HS_SEIS_ELASTIC && c->medium == HS_SEIS_MEDIUM_CONSTANT && !(c->vs > 0))
        return hs_params_error(p, "seismic.vs", "the elastic model needs vs > 0");
    /* a layer of vs = 0 is a fluid (a water layer over the rock), as the fluid points of a model file
     * are (it was refused here and accepted there); all of them fluid is the acoustic model */
    if (c->model == HS_SEIS_ELASTIC && c->medium == HS_SEIS_MEDIUM_LAYERED) {
        int solid = 0;
        for (int i = 0; i <= c->nlayers; i++) {
            if (!(c->layer_vs[i] >= 0)) return hs_params_error(p, "seismic.layer_vs", "vs %g in layer %d is negative", c->layer_vs[i], i + 1);
            solid += c->layer_vs[i] > 0;
        }
        if (!solid) return hs_params_error(p, "seismic.layer_vs", "every layer is a fluid (vs = 0): use seismic.model = acoustic");
    }
    if (c->model == HS_SEIS_ELASTIC && c->medium == HS_SEIS_MEDIUM_FILE && c->file_format != HS_SEIS_FILE_AUTO &&
        !strcmp(c->vs_file, "none"))
        return hs_params_error(p, "seismic.vs_file", "the elastic model with a raw model file needs a vs file");
    c->anomaly = hs_params_enum(p, "seismic.anomaly");
    HS_CHECK(hs_params_dim_reals(p, "seismic.anomaly_center", "seismic.ndim", c->ndim, c->anomaly_center, 0.0));
    c->anomaly_radius = hs_params_real(p, "seismic.anomaly_radius");
    c->anomaly_dvp = hs_params_real(p, "seismic.anomaly_dvp");
    /* as a source of amplitude 0: a disc that changes no grid point's vp (of 0 m/s, centred outside
     * the model, or narrower than the spacing between points) ran as the model without it, without
     * a word.  The grid point nearest its centre is the one it would change most. */
    if (c->anomaly == HS_SEIS_ANOMALY_DISC) {
        if (c->anomaly_dvp == 0) return hs_params_error(p, "seismic.anomaly_dvp", "a disc of 0 m/s changes nothing (no anomaly: anomaly = none)");
        double x[3] = {0, 0, 0};
        int inside = 1;
        for (int d = 0; d < c->ndim; d++) {
            const double k = floor(c->anomaly_center[d] / c->h[d] + 0.5), top = (double)(c->n[d] - 1);
            x[d] = hs_seis_coord(c, d, k < 0 ? 0 : k > top ? top : k);
            if (!(c->anomaly_center[d] >= 0 && c->anomaly_center[d] <= top * c->h[d])) inside = 0;
        }
        if (hs_seis_anomaly_dvp(c, x) == 0) {
            char at[96] = "";
            for (int d = 0; d < c->ndim; d++) snprintf(at + strlen(at), sizeof at - strlen(at), "%s%g", d ? " " : "", c->anomaly_center[d]);
            return hs_params_error(p, inside ? "seismic.anomaly_radius" : "seismic.anomaly_center",
                                   "the disc (centre %s m, radius %g m) holds no grid point (%s): it would change nothing", at,
                                   c->anomaly_radius, inside ? "its radius is below the distance to the nearest" : "its centre is outside the model");
        }
    }
    return HS_OK;
}

static int read_source(const hs_params *p, hs_seis_config *c)
{
    c->source_type = hs_params_enum(p, "seismic.source_type");
    HS_CHECK(hs_params_dim_reals(p, "seismic.source_position", "seismic.ndim", c->ndim, c->source, 0.0));
    memcpy(c->source0, c->source, sizeof c->source0);
    c->shots = (int)hs_params_int(p, "seismic.shot_count");
    c->shot_groups = (int)hs_params_int(p, "seismic.shot_groups");
    HS_CHECK(hs_params_dim_reals(p, "seismic.shot_step", "seismic.ndim", c->ndim, c->shot_step, 0.0));
    c->wavelet.kind = hs_params_enum(p, "seismic.wavelet");
    c->wavelet.f0 = hs_params_real(p, "seismic.f0");
    double delay = hs_params_real(p, "seismic.delay");
    if (delay < 0 && delay != -1) /* -1 alone means automatic: a wavelet centred before t = 0 is mostly not emitted */
        return hs_params_error(p, "seismic.delay", "%g: the wavelet's centre must be at t >= 0 (-1: automatic, 1.5 / f0)", delay);
    c->wavelet.delay = delay < 0 ? hs_wavelet_default_delay(c->wavelet.f0) : delay;
    c->wavelet.amplitude = hs_params_real(p, "seismic.amplitude");
    /* as a zero force or moment tensor: a source of no strength radiates nothing (all-zero traces, exit 0) */
    if (c->wavelet.amplitude == 0) return hs_params_error(p, "seismic.amplitude", "a source of amplitude 0 radiates nothing");
    if (c->model == HS_SEIS_ACOUSTIC && c->source_type != HS_SEIS_SRC_EXPLOSIVE)
        return hs_params_error(p, "seismic.source_type", "the acoustic model has only the explosive (pressure) source");
    double f[3] = {0, 0, 0};
    int nf = hs_params_real_list(p, "seismic.force", f, 3);
    if (c->source_type == HS_SEIS_SRC_FORCE) {
        if (nf != c->ndim) return hs_params_error(p, "seismic.force", "needs %d components (seismic.ndim = %d)", c->ndim, c->ndim);
        double norm = 0;
        for (int d = 0; d < c->ndim; d++) norm += f[d] * f[d];
        if (!(norm > 0) || !isfinite(norm)) return hs_params_error(p, "seismic.force", "the direction must be a non-zero vector");
        for (int d = 0; d < c->ndim; d++) c->force[d] = f[d] / sqrt(norm);
    }
    double m[6] = {0};
    int nm = hs_params_real_list(p, "seismic.moment", m, 6);
    if (c->source_type == HS_SEIS_SRC_MOMENT) {
        int want = c->ndim == 2 ? 3 : 6;
        if (nm != want)
            return hs_params_error(p, "seismic.moment", "needs %d components (%s) for seismic.ndim = %d", want,
                                   c->ndim == 2 ? "mxx mzz mxz" : "mxx myy mzz mxy mxz myz", c->ndim);
        /* stored as the 3D tensor: mxx myy mzz mxy mxz myz, the 2D x-z plane's in its place */
        if (c->ndim == 2) {
            c->moment[0] = m[0], c->moment[1] = 0, c->moment[2] = m[1], c->moment[3] = 0, c->moment[4] = m[2], c->moment[5] = 0;
        } else {
            memcpy(c->moment, m, sizeof m);
        }
        /* as a zero force: a zero tensor radiates nothing (the run wrote all-zero traces, exit 0) */
        double norm = 0;
        for (int k = 0; k < want; k++) norm += m[k] * m[k];
        if (!(norm > 0) || !isfinite(norm)) return hs_params_error(p, "seismic.moment", "the moment tensor must not be zero");
    }
    return HS_OK;
}

static int read_receivers(const hs_params *p, hs_seis_config *c)
{
    c->receivers = hs_params_enum(p, "seismic.receivers");
    HS_CHECK(hs_params_dim_reals(p, "seismic.receiver_start", "seismic.ndim", c->ndim, c->rec_start, 0.0));
    HS_CHECK(hs_params_dim_reals(p, "seismic.receiver_end", "seismic.ndim", c->ndim, c->rec_end, 0.0));
    HS_CHECK(hs_params_dim_reals(p, "seismic.receiver_step", "seismic.ndim", c->ndim, c->rec_step, 0.0));
    int64_t cnt[3] = {1, 1, 1};
    int nc = hs_params_int_list(p, "seismic.receiver_count", cnt, 3);
    c->rec_count[0] = c->rec_count[1] = c->rec_count[2] = 1;
    if (c->receivers == HS_SEIS_REC_LINE) {
        if (nc != 1) return hs_params_error(p, "seismic.receiver_count", "a line takes one count, got %d", nc);
        c->rec_count[0] = cnt[0];
        /* a line of one receiver sits at receiver_start: an end given with it was ignored without a word */
        if (cnt[0] == 1 && hs_params_is_set(p, "seismic.receiver_end"))
            return hs_params_error(p, "seismic.receiver_end", "is set, but receiver_count = 1: a line of one receiver sits at "
                                                              "receiver_start (give receiver_count for a line to receiver_end)");
    } else if (c->receivers == HS_SEIS_REC_GRID) {
        HS_CHECK(hs_params_dim_ints(p, "seismic.receiver_count", "seismic.ndim", c->ndim, c->rec_count, 1));
        double total = 1;
        for (int d = 0; d < c->ndim; d++) total *= (double)c->rec_count[d];
        if (total > 65535)
            return hs_params_error(p, "seismic.receiver_count", "%.0f receivers; at most 65535 (one SEG-Y ensemble)", total);
    }
    c->rec_file = hs_params_input_path(p, "seismic.receiver_file");
    if (c->receivers == HS_SEIS_REC_FILE && !strcmp(c->rec_file, "none"))
        return hs_params_error(p, "seismic.receiver_file", "receivers = file needs a file");
    c->record_every = hs_params_int(p, "seismic.record_every");
    return HS_OK;
}

/* Keys this configuration would ignore though the user set them (README, "Parameter files": a key
 * the configuration does not use is bad input, the user meant it to act): a model file under
 * medium = constant, layers under a file model, a force direction for a moment source, a receiver
 * file for a line, a shot step for one shot all ran without a word; so did the anomaly's shape
 * without an anomaly, observed seismograms and the adjoint's slots in a forward run, vs (and every
 * other S-wave key) for the acoustic model, vp, vs and rho beside a layered or file model, density
 * for the elastic model (always staggered, always variable density), any density key for the
 * constant-density acoustic model (rho never enters it), cfl beside a given dt, pml_reflection
 * without layers, the line's start and count beside a receiver file, the SEG-Y switch without
 * seismograms and the snapshot stride without snapshots.  A file's leftovers under a setting
 * switched on the command line pass (hs_params_unused); a string key set to none is unset.  The
 * first cause that applies is named. */
static int refuse_unused_keys(const hs_params *p, const hs_seis_config *c)
{
    const int file = c->medium == HS_SEIS_MEDIUM_FILE, layered = c->medium == HS_SEIS_MEDIUM_LAYERED;
    const int constant = c->medium == HS_SEIS_MEDIUM_CONSTANT, elastic = c->model == HS_SEIS_ELASTIC;
    /* the acoustic model with constant density: p_tt = c^2 lap p, no rho anywhere */
    const int rho_used = elastic || c->density == HS_SEIS_DENSITY_VARIABLE;
    const int raw = file && c->file_format != HS_SEIS_FILE_AUTO;
    const struct {
        const char *key, *cause;
        int used, string;
    } keys[] = {
        {"seismic.vp", "seismic.medium", constant, 0},
        {"seismic.vs", "seismic.model", elastic, 0},
        {"seismic.vs", "seismic.medium", constant, 0},
        {"seismic.rho", "seismic.density", rho_used, 0},
        {"seismic.rho", "seismic.medium", !layered, 0},
        /* a raw model takes rho from its rho file when it has one */
        {"seismic.rho", "seismic.rho_file", !(raw && strcmp(c->rho_file, "none") != 0), 0},
        {"seismic.density", "seismic.model", !elastic, 0},
        {"seismic.layer_vs", "seismic.model", elastic, 0},
        {"seismic.vs_variable", "seismic.model", elastic, 0},
        {"seismic.vs_file", "seismic.model", elastic, 1},
        {"seismic.layer_rho", "seismic.density", rho_used, 0},
        {"seismic.rho_variable", "seismic.density", rho_used, 0},
        {"seismic.rho_file", "seismic.density", rho_used, 1},
        {"seismic.anomaly_center", "seismic.anomaly", c->anomaly != HS_SEIS_ANOMALY_NONE, 0},
        {"seismic.anomaly_radius", "seismic.anomaly", c->anomaly != HS_SEIS_ANOMALY_NONE, 0},
        {"seismic.anomaly_dvp", "seismic.anomaly", c->anomaly != HS_SEIS_ANOMALY_NONE, 0},
        {"seismic.observed", "seismic.mode", c->mode != HS_SEIS_FORWARD, 1},
        {"seismic.snapshots", "seismic.mode", c->mode != HS_SEIS_FORWARD, 0},
        {"seismic.cfl", "seismic.dt", c->dt_user == 0, 0},
        {"seismic.pml_reflection", "seismic.pml", c->pml > 0, 0},
        {"seismic.receiver_start", "seismic.receivers", c->receivers != HS_SEIS_REC_FILE, 0},
        {"seismic.receiver_count", "seismic.receivers", c->receivers != HS_SEIS_REC_FILE, 0},
        {"seismic.segy", "seismic.seismograms", strcmp(c->seismograms, "none") != 0, 0},
        {"seismic.snapshot_stride", "output.format", hs_params_enum(p, "output.format") != HS_OUTPUT_NONE, 0},
        {"seismic.model_file", "seismic.medium", file, 1},
        {"seismic.model_format", "seismic.medium", file, 0},
        {"seismic.vp_variable", "seismic.medium", file, 0},
        {"seismic.vs_variable", "seismic.medium", file, 0},
        {"seismic.rho_variable", "seismic.medium", file, 0},
        {"seismic.vs_file", "seismic.medium", file, 1},
        {"seismic.rho_file", "seismic.medium", file, 1},
        {"seismic.layer_depths", "seismic.medium", layered, 0},
        {"seismic.layer_vp", "seismic.medium", layered, 0},
        {"seismic.layer_vs", "seismic.medium", layered, 0},
        {"seismic.layer_rho", "seismic.medium", layered, 0},
        {"seismic.force", "seismic.source_type", c->source_type == HS_SEIS_SRC_FORCE, 0},
        {"seismic.moment", "seismic.source_type", c->source_type == HS_SEIS_SRC_MOMENT, 0},
        {"seismic.receiver_end", "seismic.receivers", c->receivers == HS_SEIS_REC_LINE, 0},
        {"seismic.receiver_step", "seismic.receivers", c->receivers == HS_SEIS_REC_GRID, 0},
        {"seismic.receiver_file", "seismic.receivers", c->receivers == HS_SEIS_REC_FILE, 1},
        {"seismic.shot_step", "seismic.shot_count", c->shots > 1, 0},
        {"seismic.fwi_iterations", "seismic.mode", c->mode == HS_SEIS_FWI, 0},
        {"seismic.fwi_vp_step", "seismic.mode", c->mode == HS_SEIS_FWI, 0},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (!keys[k].used && !(keys[k].string && !strcmp(hs_params_string(p, keys[k].key), "none")))
            HS_CHECK(hs_params_unused(p, keys[k].key, keys[k].cause));
    /* a gradient is one forward and one reverse sweep that needs the forward wavefields of the whole
     * sweep: it keeps no state part-way that a restart could continue (checkpoint.every_steps was
     * accepted and no checkpoint written) */
    if (c->mode == HS_SEIS_GRADIENT) {
        static const char *const ck[] = {"checkpoint.every_steps", "checkpoint.path", "checkpoint.format", "run.restart"};
        for (int k = 0; k < 4; k++) {
            if (!hs_params_set_against(p, ck[k], "seismic.mode") || (k == 3 && !strcmp(hs_params_string(p, ck[k]), "none"))) continue;
            return hs_params_error(p, ck[k], "is not used with seismic.mode = gradient: a gradient keeps no checkpoint part-way (it needs "
                                             "the forward wavefields of its whole sweep); on a signal or at run.walltime it stops with "
                                             "exit 1 and writes nothing (mode = fwi checkpoints at its iterations)");
        }
    }
    return HS_OK;
}

int hs_seis_config_read(const hs_params *p, hs_seis_config *c)
{
    memset(c, 0, sizeof *c);
    c->model = hs_params_enum(p, "seismic.model");
    c->mode = hs_params_enum(p, "seismic.mode");
    c->ndim = (int)hs_params_int(p, "seismic.ndim");
    HS_CHECK(hs_params_dim_ints(p, "seismic.n", "seismic.ndim", c->ndim, c->n, 1));
    HS_CHECK(hs_params_dim_reals(p, "seismic.spacing", "seismic.ndim", c->ndim, c->h, 1.0));
    int64_t procs[3];
    HS_CHECK(hs_params_dim_ints(p, "seismic.procs", "seismic.ndim", c->ndim, procs, 1));
    for (int d = 0; d < 3; d++) c->procs[d] = (int)procs[d];
    c->t_end = hs_params_real(p, "seismic.t_end");
    c->dt_user = hs_params_real(p, "seismic.dt");
    c->cfl = hs_params_real(p, "seismic.cfl");
    c->order = (int)hs_params_int(p, "seismic.order");
    if (c->order == 0) c->order = c->model == HS_SEIS_ACOUSTIC ? 8 : 4;
    if (c->model == HS_SEIS_ACOUSTIC && c->order != 2 && c->order != 4 && c->order != 8)
        return hs_params_error(p, "seismic.order", "the acoustic model takes order 2, 4 or 8, got %d", c->order);
    if (c->model == HS_SEIS_ELASTIC && c->order != 2 && c->order != 4)
        return hs_params_error(p, "seismic.order", "the elastic model takes order 2 or 4, got %d", c->order);
    c->precision = hs_params_enum(p, "seismic.precision");
    c->density = hs_params_enum(p, "seismic.density");
    HS_CHECK(read_medium(p, c));
    c->pml = (int)hs_params_int(p, "seismic.pml");
    c->pml_reflection = hs_params_real(p, "seismic.pml_reflection");
    c->free_surface = hs_params_bool(p, "seismic.free_surface");
    HS_CHECK(read_source(p, c));
    HS_CHECK(read_receivers(p, c));
    c->seismograms = hs_params_string(p, "seismic.seismograms");
    c->segy = hs_params_bool(p, "seismic.segy");
    c->snapshot_stride = hs_params_int(p, "seismic.snapshot_stride");
    c->observed = hs_params_input_path(p, "seismic.observed");
    c->snapshots = (int)hs_params_int(p, "seismic.snapshots");
    c->fwi_iterations = (int)hs_params_int(p, "seismic.fwi_iterations");
    c->fwi_vp_step = hs_params_real(p, "seismic.fwi_vp_step");
    /* the grid must hold the CPML layers and a stencil's width between them */
    int halo = c->order / 2;
    for (int d = 0; d < c->ndim; d++) {
        int layers = c->pml * ((d == c->ndim - 1 && c->free_surface) ? 1 : 2);
        if (c->n[d] < layers + 2 * halo + 1)
            return hs_params_error(p, "seismic.n", "%lld points in dimension %d cannot hold %d CPML points and a stencil "
                                                  "(need at least %d)",
                                   (long long)c->n[d], d, layers, layers + 2 * halo + 1);
        if (!isfinite(1.0 / (c->h[d] * c->h[d])))
            return hs_params_error(p, "seismic.spacing", "spacing %g in dimension %d is too small for doubles", c->h[d], d);
    }
    if (c->mode != HS_SEIS_FORWARD) {
        if (c->model != HS_SEIS_ACOUSTIC || c->density != HS_SEIS_DENSITY_CONSTANT)
            return hs_params_error(p, "seismic.mode", "the adjoint (gradient, fwi) is for the acoustic model with constant density");
        if (!strcmp(c->observed, "none")) return hs_params_error(p, "seismic.observed", "mode = %s needs observed seismograms",
                                                                 hs_params_string(p, "seismic.mode"));
        if (c->free_surface)
            return hs_params_error(p, "seismic.free_surface", "the adjoint (gradient, fwi) is implemented without a free surface");
    }
    return refuse_unused_keys(p, c);
}

void hs_seis_medium_at(const hs_seis_config *c, const double x[3], double *vp, double *vs, double *rho)
{
    *vp = c->vp, *vs = c->vs, *rho = c->rho;
    if (c->medium == HS_SEIS_MEDIUM_LAYERED) {
        double z = x[c->ndim - 1];
        int m = 0;
        while (m < c->nlayers && z >= c->layer_depth[m]) m++;
        *vp = c->layer_vp[m], *rho = c->layer_rho[m];
        *vs = c->model == HS_SEIS_ELASTIC ? c->layer_vs[m] : 0;
    }
    *vp += hs_seis_anomaly_dvp(c, x);
}

double hs_seis_anomaly_dvp(const hs_seis_config *c, const double x[3])
{
    if (c->anomaly != HS_SEIS_ANOMALY_DISC) return 0;
    double r2 = 0;
    for (int d = 0; d < c->ndim; d++) r2 += (x[d] - c->anomaly_center[d]) * (x[d] - c->anomaly_center[d]);
    const double r = sqrt(r2);
    return r < c->anomaly_radius ? c->anomaly_dvp * 0.5 * (1 + cos(M_PI * r / c->anomaly_radius)) : 0;
}

/* ---------------------------------------------------------------- model files */

static int64_t grid_points(const hs_seis_config *c) { return c->n[0] * c->n[1] * c->n[2]; }

static int read_raw(const hs_params *p, const hs_seis_config *c, const char *key, const char *path, double *out)
{
    HS_CHECK(hs_params_check_input_file(p, key, path, "model file"));
    FILE *f = fopen(path, "rb");
    if (!f) return hs_params_error(p, key, "cannot open model file %s: %s", path, strerror(errno));
    size_t es = c->file_format == HS_SEIS_FILE_RAW32 ? 4 : 8;
    int64_t n = grid_points(c);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size != (long)(n * (int64_t)es)) {
        fclose(f);
        return hs_params_error(p, key, "'%s' has %ld bytes; the grid of %lld x %lld x %lld points needs %lld (%s, x fastest)",
                               path, size, (long long)c->n[0], (long long)c->n[1], (long long)c->n[2],
                               (long long)(n * (int64_t)es), es == 4 ? "float32" : "float64");
    }
    unsigned char buf[8];
    for (int64_t i = 0; i < n; i++) {
        if (fread(buf, es, 1, f) != 1) {
            fclose(f);
            return hs_params_error(p, key, "'%s': read failed at sample %lld", path, (long long)i);
        }
        /* little-endian on disk, whatever the host */
        uint64_t u = 0;
        for (size_t b = 0; b < es; b++) u |= (uint64_t)buf[b] << (8 * b);
        if (es == 4) {
            uint32_t u32 = (uint32_t)u;
            float v;
            memcpy(&v, &u32, 4);
            out[i] = v;
        } else {
            memcpy(&out[i], &u, 8);
        }
    }
    fclose(f);
    return HS_OK;
}

/* Read variable `var` of an open NetCDF/HDF5 model into out (x fastest); *found = 0 when absent and
 * optional. */
static int read_var(const hs_params *p, const hs_seis_config *c, hs_reader *r, const char *key, const char *var, int optional,
                    double *out, int *found)
{
    int64_t shape[8];
    int rank = 0;
    *found = 0;
    if (hs_reader_var_shape(r, var, shape, &rank) != HS_OK) {
        hs_error_clear();
        if (optional) return HS_OK;
        return hs_params_error(p, key, "no variable '%s' in '%s'", var, c->model_file);
    }
    int ok = rank == c->ndim;
    for (int d = 0; ok && d < c->ndim; d++) ok = shape[c->ndim - 1 - d] == c->n[d];
    if (!ok) {
        char got[128] = "", want[128] = "";
        for (int d = 0; d < rank; d++) snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? " x " : "", (long long)shape[d]);
        for (int d = c->ndim - 1; d >= 0; d--)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d < c->ndim - 1 ? " x " : "", (long long)c->n[d]);
        return hs_params_error(p, "seismic.model_file", "variable '%s' in '%s' has shape %s; the grid needs %s (slowest first)", var,
                               c->model_file, got, want);
    }
    /* the model's z is depth, its first row the top: a CF vertical coordinate with positive = "up" is a
     * height, its rows stored bottom first when it increases (an elevation model ran upside down, the
     * deep rock at the surface, exit 0) */
    char dims[8][HS_READER_NAME_MAX], pos[16];
    int drank = 0, pfound = 0;
    if (hs_reader_var_dims(r, var, dims, &drank) == HS_OK && drank == c->ndim && hs_reader_has_var(r, dims[0]) &&
        hs_reader_attr_text(r, dims[0], "positive", pos, sizeof pos, &pfound) == HS_OK && pfound &&
        (pos[0] == 'u' || pos[0] == 'U') && (pos[1] == 'p' || pos[1] == 'P') && !pos[2])
        return hs_params_error(p, "seismic.model_file", "variable '%s' in '%s': its vertical coordinate '%s' is a height (positive = "
                                                        "\"up\"); the model's z is depth, positive down, first row at the top: store "
                                                        "depth (-elevation), top row first", var, c->model_file, dims[0]);
    hs_error_clear();
    /* a square model stored (x, z) was read transposed, a 5 m file ran on the 10 m grid */
    HS_CHECK(hs_grid_input_check_axes(p, r, c->model_file, "model", var, c->ndim, c->ndim == 2 ? "xz" : "xyz", c->n, c->h,
                                      "seismic.model_file", "seismic.spacing"));
    *found = 1;
    return hs_reader_read_cf(r, var, out);
}

static int check_values(const hs_params *p, const char *key, const char *what, const hs_seis_config *c, const double *v,
                        int zero_ok)
{
    for (int64_t i = 0; i < grid_points(c); i++)
        if (!isfinite(v[i]) || !(v[i] > 0 || (zero_ok && v[i] == 0))) {
            int64_t ix = i % c->n[0], iy = (i / c->n[0]) % c->n[1], iz = i / (c->n[0] * c->n[1]);
            return hs_params_error(p, key, "%s %g at grid point (%lld, %lld, %lld) is not %s", what, v[i], (long long)ix,
                                   (long long)iy, (long long)iz,
                                   !isfinite(v[i]) ? "a finite number (a fill value or missing point?)" : zero_ok ? ">= 0" : "positive");
        }
    return HS_OK;
}

int hs_seis_read_model(const hs_params *p, const hs_seis_config *c, double *vp, double *vs, double *rho)
{
    int64_t n = grid_points(c);
    if (c->file_format != HS_SEIS_FILE_AUTO) {
        HS_CHECK(read_raw(p, c, "seismic.model_file", c->model_file, vp));
        if (vs) HS_CHECK(read_raw(p, c, "seismic.vs_file", c->vs_file, vs));
        if (rho && strcmp(c->rho_file, "none") != 0) HS_CHECK(read_raw(p, c, "seismic.rho_file", c->rho_file, rho));
        else if (rho)
            for (int64_t i = 0; i < n; i++) rho[i] = c->rho;
    } else {
        FILE *probe = fopen(c->model_file, "rb");
        if (!probe) return hs_params_error(p, "seismic.model_file", "cannot open model file '%s'", c->model_file);
        fclose(probe);
        hs_reader *r = NULL;
        if (hs_reader_open(c->model_file, &r) != HS_OK) {
            hs_error_clear();
            return hs_params_error(p, "seismic.model_file",
                                   "'%s' is not a NetCDF or HDF5 file this build can read (raw samples: set seismic.model_format)",
                                   c->model_file);
        }
        int found, rc = read_var(p, c, r, "seismic.vp_variable", c->vp_var, 0, vp, &found);
        if (rc == HS_OK && vs) rc = read_var(p, c, r, "seismic.vs_variable", c->vs_var, 0, vs, &found);
        if (rc == HS_OK && rho) {
            rc = read_var(p, c, r, "seismic.rho_variable", c->rho_var, 1, rho, &found);
            if (rc == HS_OK && !found)
                for (int64_t i = 0; i < n; i++) rho[i] = c->rho;
            /* seismic.rho stands in for a file without a density: beside one it was ignored */
            if (rc == HS_OK && found && hs_params_set_against(p, "seismic.rho", "seismic.model_file"))
                rc = hs_params_error(p, "seismic.rho", "is not used: the model file '%s' has its own density ('%s')", c->model_file,
                                     c->rho_var);
        }
        hs_reader_close(r);
        HS_CHECK(rc);
    }
    HS_CHECK(check_values(p, "seismic.model_file", "vp", c, vp, 0));
    if (vs) HS_CHECK(check_values(p, c->file_format == HS_SEIS_FILE_AUTO ? "seismic.model_file" : "seismic.vs_file", "vs", c, vs, 1));
    if (rho) HS_CHECK(check_values(p, c->file_format == HS_SEIS_FILE_AUTO ? "seismic.model_file" : "seismic.rho_file", "rho", c, rho, 0));
    /* the anomaly applies to file models too */
    if (c->anomaly == HS_SEIS_ANOMALY_DISC)
        for (int64_t i = 0; i < n; i++) {
            const double x[3] = {hs_seis_coord(c, 0, (double)(i % c->n[0])), hs_seis_coord(c, 1, (double)((i / c->n[0]) % c->n[1])),
                                 hs_seis_coord(c, 2, (double)(i / (c->n[0] * c->n[1])))};
            vp[i] += hs_seis_anomaly_dvp(c, x);
        }
    return HS_OK;
}
