/* Parameter declarations: every ENUM key's choices are in the order of the C enum its solver maps
 * hs_params_enum onto; empty STRING values; hs_params_enum and hs_params_choice_index. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/checkpoint.h"
#include "io/output.h"
#include "io/params.h"
#include "kernels/grid/grid.h"
#include "kernels/nn/nn.h"
#include "physics/pde1d.h"
#include "solvers/heat/heat_setup.h"
#include "solvers/seismic/seismic_setup.h"
#include "solvers/pinn/pinn_train.h"
#include "solvers/solver.h"
#include "test_util.h"

typedef struct {
    const char *key;   /* section.key */
    const char *value; /* one of its choices */
    int c_value;       /* the C enum the solver expects for it */
} pair;

/* Every choice of every ENUM key whose index is used as a C enum. */
static const pair PAIRS[] = {
    {"heat.scheme", "explicit", HS_HEAT_EXPLICIT},
    {"heat.scheme", "backward_euler", HS_HEAT_BACKWARD_EULER},
    {"heat.scheme", "crank_nicolson", HS_HEAT_CRANK_NICOLSON},
    {"heat.conductivity", "constant", HS_HEAT_K_CONSTANT},
    {"heat.conductivity", "layered", HS_HEAT_K_LAYERED},
    {"heat.conductivity", "file", HS_HEAT_K_FILE},
    {"heat.initial", "constant", HS_HEAT_INIT_CONSTANT},
    {"heat.initial", "sine", HS_HEAT_INIT_SINE},
    {"heat.initial", "gaussian", HS_HEAT_INIT_GAUSSIAN},
    {"heat.source", "none", HS_HEAT_SOURCE_NONE},
    {"heat.source", "constant", HS_HEAT_SOURCE_CONSTANT},
    {"heat.source", "gaussian", HS_HEAT_SOURCE_GAUSSIAN},
    {"heat.bc_xlo", "periodic", HS_BC_PERIODIC},
    {"heat.bc_xlo", "dirichlet", HS_BC_DIRICHLET},
    {"heat.bc_zhi", "neumann", HS_BC_NEUMANN},
    {"heat.gpu_kernel", "auto", HS_HEAT_KERNEL_AUTO},
    {"heat.gpu_kernel", "cell", HS_HEAT_KERNEL_CELL},
    {"heat.gpu_kernel", "zc", HS_HEAT_KERNEL_ZC},
    {"heat.gpu_kernel", "vec2", HS_HEAT_KERNEL_VEC2},
    {"pinn.pde", "burgers", HS_PDE_BURGERS},
    {"pinn.pde", "heat", HS_PDE_HEAT},
    {"pinn.pde", "allen_cahn", HS_PDE_ALLEN_CAHN},
    {"pinn.activation", "tanh", HS_ACT_TANH},
    {"pinn.activation", "sin", HS_ACT_SIN},
    {"pinn.activation", "sigmoid", HS_ACT_SIGMOID},
    {"pinn.lr_schedule", "constant", HS_LR_CONSTANT},
    {"pinn.lr_schedule", "exponential", HS_LR_EXPONENTIAL},
    {"pinn.lr_schedule", "cosine", HS_LR_COSINE},
    {"surrogate.lr_schedule", "constant", HS_LR_CONSTANT},
    {"surrogate.lr_schedule", "exponential", HS_LR_EXPONENTIAL},
    {"surrogate.lr_schedule", "cosine", HS_LR_COSINE},
    {"surrogate.mode", "train", 0}, /* MODE_TRAIN, MODE_FORECAST, MODE_EVALUATE of surrogate_solver.c */
    {"surrogate.mode", "forecast", 1},
    {"surrogate.mode", "evaluate", 2},
    {"quantum.optimizer", "lbfgs", 0}, /* hs_vqe_opts.optimizer: 0 L-BFGS, 1 Adam */
    {"quantum.optimizer", "adam", 1},
    {"quantum.gradient", "adjoint", 0}, /* hs_vqe_opts.shift_gradient */
    {"quantum.gradient", "parameter_shift", 1},
    {"output.format", "auto", HS_OUTPUT_AUTO},
    {"output.format", "netcdf", HS_OUTPUT_NETCDF},
    {"output.format", "hdf5", HS_OUTPUT_HDF5},
    {"output.format", "none", HS_OUTPUT_NONE},
    {"output.parallel", "auto", HS_OUTPUT_PARALLEL_AUTO},
    {"output.parallel", "off", HS_OUTPUT_PARALLEL_OFF},
    {"checkpoint.format", "auto", HS_CKPT_FORMAT_AUTO},
    {"checkpoint.format", "hdf5", HS_CKPT_FORMAT_HDF5},
    {"checkpoint.format", "binary", HS_CKPT_FORMAT_BINARY},
    {"seismic.model", "acoustic", HS_SEIS_ACOUSTIC},
    {"seismic.model", "elastic", HS_SEIS_ELASTIC},
    {"seismic.mode", "forward", HS_SEIS_FORWARD},
    {"seismic.mode", "gradient", HS_SEIS_GRADIENT},
    {"seismic.mode", "fwi", HS_SEIS_FWI},
    {"seismic.medium", "constant", HS_SEIS_MEDIUM_CONSTANT},
    {"seismic.medium", "layered", HS_SEIS_MEDIUM_LAYERED},
    {"seismic.medium", "file", HS_SEIS_MEDIUM_FILE},
    {"seismic.model_format", "auto", HS_SEIS_FILE_AUTO},
    {"seismic.model_format", "raw_float32", HS_SEIS_FILE_RAW32},
    {"seismic.model_format", "raw_float64", HS_SEIS_FILE_RAW64},
    {"seismic.precision", "float64", HS_SEIS_F64},
    {"seismic.precision", "float32", HS_SEIS_F32},
    {"seismic.density", "constant", HS_SEIS_DENSITY_CONSTANT},
    {"seismic.density", "variable", HS_SEIS_DENSITY_VARIABLE},
    {"seismic.source_type", "explosive", HS_SEIS_SRC_EXPLOSIVE},
    {"seismic.source_type", "force", HS_SEIS_SRC_FORCE},
    {"seismic.source_type", "moment", HS_SEIS_SRC_MOMENT},
    {"seismic.receivers", "line", HS_SEIS_REC_LINE},
    {"seismic.receivers", "grid", HS_SEIS_REC_GRID},
    {"seismic.receivers", "file", HS_SEIS_REC_FILE},
    {"seismic.anomaly", "none", HS_SEIS_ANOMALY_NONE},
    {"seismic.anomaly", "disc", HS_SEIS_ANOMALY_DISC},
    {"seismic.wavelet", "ricker", HS_WAVELET_RICKER},
    {"seismic.wavelet", "gaussian_derivative", HS_WAVELET_GAUSSIAN_DERIVATIVE},
};

static hs_params *load(int n, const char *const *over)
{
    TEST_OK(hs_solver_declare_all()); /* once; declaring the same tables again is a no-op */
    hs_params *p = NULL;
    char *args[16];
    args[0] = "run.solver=heat";
    for (int i = 0; i < n; i++) args[i + 1] = (char *)over[i];
    TEST_OK(hs_params_load(NULL, n + 1, args, &p));
    return p;
}

/* hs_params_enum of each value is the C enum its solver uses. */
static void test_enum_orders(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof PAIRS / sizeof PAIRS[0]; i++) {
        char over[128];
        snprintf(over, sizeof over, "%s=%s", PAIRS[i].key, PAIRS[i].value);
        const char *o = over;
        hs_params *p = load(1, &o);
        if (hs_params_enum(p, PAIRS[i].key) != PAIRS[i].c_value)
            fail_msg("%s = %s: index %d in the choices, the C enum is %d", PAIRS[i].key, PAIRS[i].value,
                     hs_params_enum(p, PAIRS[i].key), PAIRS[i].c_value);
        hs_params_free(p);
    }
    /* the activation choices are a prefix of the kernel family's names */
    assert_int_equal(strncmp(HS_ACTIVATION_CHOICES, "tanh|sin|sigmoid", 16), 0);
    assert_int_equal(hs_params_choice_index(HS_ACTIVATION_CHOICES, "identity"), HS_ACT_IDENTITY);
    assert_int_equal(hs_params_choice_index(HS_PDE1D_CHOICES, "allen_cahn"), HS_PDE_ALLEN_CAHN);
}

static void test_choice_index(void **state)
{
    (void)state;
    assert_int_equal(hs_params_choice_index("a|bb|c", "a"), 0);
    assert_int_equal(hs_params_choice_index("a|bb|c", "bb"), 1);
    assert_int_equal(hs_params_choice_index("a|bb|c", "c"), 2);
    assert_int_equal(hs_params_choice_index("a|bb|c", "b"), -1);
    assert_int_equal(hs_params_choice_index("a|bb|c", ""), -1);
}

/* A STRING key with an empty default takes an empty value (unset); one with a value refuses it. */
static void test_empty_strings(void **state)
{
    (void)state;
    const char *ok[] = {"quantum.observable=", "quantum.circuit=\"\""};
    hs_params *p = load(2, ok);
    assert_string_equal(hs_params_string(p, "quantum.observable"), "");
    assert_string_equal(hs_params_string(p, "quantum.circuit"), "");
    assert_true(hs_params_is_set(p, "quantum.observable"));
    hs_params_free(p);
    const char *bad[] = {"output.path="};
    char *args[] = {"run.solver=heat", (char *)bad[0]};
    hs_params *q = NULL;
    assert_int_equal(hs_params_load(NULL, 2, args, &q), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "output.path: empty value"));
    hs_error_clear();
    assert_null(q);
}

/* hs_params_first_set: the command line's key before the file's, the file's in the list's order,
 * else the fallback. */
static void test_first_set(void **state)
{
    (void)state;
    TEST_OK(hs_solver_declare_all());
    const char *path = test_tmp_path("first_set.ini");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[run]\nsolver = cfd\n[cfd]\nn = 8\nt_end = 2\n", f);
    fclose(f);
    char *over[] = {"cfd.cfl=0.3"};
    hs_params *p = NULL;
    TEST_OK(hs_params_load(path, 1, over, &p));
    assert_string_equal(hs_params_first_set(p, (const char *const[]){"cfd.t_end", "cfd.cfl", NULL}, "x"), "cfd.cfl");
    assert_string_equal(hs_params_first_set(p, (const char *const[]){"cfd.t_end", "cfd.n", NULL}, "x"), "cfd.t_end");
    assert_string_equal(hs_params_first_set(p, (const char *const[]){"cfd.n", "cfd.t_end", NULL}, "x"), "cfd.n");
    assert_string_equal(hs_params_first_set(p, (const char *const[]){"cfd.dt", NULL}, "fallback"), "fallback");
    hs_params_free(p);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_enum_orders),
    cmocka_unit_test(test_choice_index),
    cmocka_unit_test(test_empty_strings),
    cmocka_unit_test_teardown(test_first_set, test_tmp_cleanup),
};

TEST_MAIN("params", tests)
