/* The seismic solver's parameters: declaration, reading and checking, and the material model (vp, vs, rho) at a point. */
#ifndef HS_SEISMIC_SETUP_H
#define HS_SEISMIC_SETUP_H

#include <stdint.h>

#include "io/params.h"
#include "physics/seismic_wavelet.h"

/* Each enum is in the order of its key's choices (hs_params_enum; tests/unit/test_params.c checks the pairs). */
enum { HS_SEIS_ACOUSTIC = 0, HS_SEIS_ELASTIC = 1 };
#define HS_SEIS_MODEL_CHOICES "acoustic|elastic"
enum { HS_SEIS_FORWARD = 0, HS_SEIS_GRADIENT = 1, HS_SEIS_FWI = 2 };
#define HS_SEIS_MODE_CHOICES "forward|gradient|fwi"
enum { HS_SEIS_MEDIUM_CONSTANT = 0, HS_SEIS_MEDIUM_LAYERED = 1, HS_SEIS_MEDIUM_FILE = 2 };
#define HS_SEIS_MEDIUM_CHOICES "constant|layered|file"
enum { HS_SEIS_FILE_AUTO = 0, HS_SEIS_FILE_RAW32 = 1, HS_SEIS_FILE_RAW64 = 2 };
#define HS_SEIS_FILE_FORMAT_CHOICES "auto|raw_float32|raw_float64"
enum { HS_SEIS_F64 = 0, HS_SEIS_F32 = 1 };
#define HS_SEIS_PRECISION_CHOICES "float64|float32"
enum { HS_SEIS_DENSITY_CONSTANT = 0, HS_SEIS_DENSITY_VARIABLE = 1 };
#define HS_SEIS_DENSITY_CHOICES "constant|variable"
enum { HS_SEIS_SRC_EXPLOSIVE = 0, HS_SEIS_SRC_FORCE = 1, HS_SEIS_SRC_MOMENT = 2 };
#define HS_SEIS_SOURCE_CHOICES "explosive|force|moment"
enum { HS_SEIS_REC_LINE = 0, HS_SEIS_REC_GRID = 1, HS_SEIS_REC_FILE = 2 };
#define HS_SEIS_RECEIVER_CHOICES "line|grid|file"
enum { HS_SEIS_ANOMALY_NONE = 0, HS_SEIS_ANOMALY_DISC = 1 };
#define HS_SEIS_ANOMALY_CHOICES "none|disc"

#define HS_SEIS_MAX_LAYERS 64

typedef struct hs_seis_config {
    int model, mode, ndim, order, precision, density;
    int64_t n[3];          /* grid points per dimension (1 in unused ones); the last used dimension is depth z */
    double h[3];           /* grid spacing (m) */
    int procs[3];
    double t_end, dt_user, cfl;
    /* medium */
    int medium;
    double vp, vs, rho;
    int nlayers;           /* layered: number of interfaces */
    double layer_depth[HS_SEIS_MAX_LAYERS], layer_vp[HS_SEIS_MAX_LAYERS + 1], layer_vs[HS_SEIS_MAX_LAYERS + 1],
        layer_rho[HS_SEIS_MAX_LAYERS + 1];
    const char *model_file; /* file: NetCDF/HDF5 (variables below) or raw vp */
    int file_format;
    const char *vp_var, *vs_var, *rho_var;
    const char *vs_file, *rho_file; /* raw: companions ("none": the constant value) */
    int anomaly;
    double anomaly_center[3], anomaly_radius, anomaly_dvp;
    /* boundaries */
    int pml;               /* CPML thickness (grid points) */
    double pml_reflection;
    int free_surface;
    /* source */
    int source_type;
    double source[3];          /* the current shot's position (m) */
    double source0[3];         /* the first shot's (seismic.source_position) */
    int shots;                 /* shots one after another (seismic.shot_count) */
    double shot_step[3];       /* from one shot's position to the next (m) */
    int shot_groups;           /* groups of ranks, each running shot_count / shot_groups of the shots */
    hs_wavelet wavelet;
    double force[3];
    double moment[6];      /* mxx myy mzz mxy mxz myz (2D: mxx mzz mxz) */
    /* receivers */
    int receivers;
    double rec_start[3], rec_end[3], rec_step[3];
    int64_t rec_count[3];
    const char *rec_file;
    int64_t record_every;
    /* output */
    const char *seismograms;   /* path stem, "none": none */
    int segy;
    int64_t snapshot_stride;
    /* adjoint and inversion */
    const char *observed;
    int snapshots;             /* checkpoint slots of the adjoint's schedule (0: automatic) */
    int fwi_iterations;
    double fwi_vp_step;
} hs_seis_config;

/* Declare the [seismic] section. */
int hs_seis_declare(void);

/* Read and check [seismic]: list lengths against ndim, the model's tables, source and receiver
 * keys, the choices that go together.  Input errors name the key.  Not collective. */
int hs_seis_config_read(const hs_params *p, hs_seis_config *c);

/* Coordinate (m) of grid index i along dimension d: i * h[d]. */
static inline double hs_seis_coord(const hs_seis_config *c, int d, double i) { return i * c->h[d]; }

/* The medium at a point (constant or layered along depth, the anomaly added): vp, vs, rho.  For a
 * file model see hs_seis_read_model.  Not collective. */
void hs_seis_medium_at(const hs_seis_config *c, const double x[3], double *vp, double *vs, double *rho);

/* The anomaly's vp change (m/s) at the point x (m): anomaly_dvp (1 + cos(pi r / radius)) / 2 within
 * anomaly_radius of its centre, 0 elsewhere and without an anomaly (constant, layered and file
 * models alike).  Not collective. */
double hs_seis_anomaly_dvp(const hs_seis_config *c, const double x[3]);

/* Read the model file's vp, vs and rho of the whole grid (x fastest; vs and rho may be NULL when
 * not wanted).  A missing file or variable, a wrong shape or size, a value that is not positive
 * (vs may be 0) are input errors naming the key.  Not collective. */
int hs_seis_read_model(const hs_params *p, const hs_seis_config *c, double *vp, double *vs, double *rho);

#endif
