/* The error path through a replaced exit handler: the code and the one message hs_exit would print. */
#include <setjmp.h>
#include <string.h>

#include "io/params.h"
#include "solvers/solver.h"
#include "test_util.h"

static jmp_buf g_back;
static int g_code;
static char g_message[1024];

/* Stands in for the process exit: records what hs_exit was given and returns to the test. */
static void catch_exit(int code, const char *message)
{
    g_code = code;
    snprintf(g_message, sizeof g_message, "%s", message ? message : "");
    longjmp(g_back, 1);
}

/* hs_exit on an input error hands the handler exit status 2 and "source:line: key: message". */
static void test_input_error_reaches_handler(void **state)
{
    (void)state;
    hs_error_clear();
    hs_error_set_exit_handler(catch_exit);
    if (setjmp(g_back) == 0) {
        hs_input_error("run.ini", 7, "heat.n", "value %d is out of range", -3);
        hs_exit(HS_ERR_INPUT);
        fail_msg("hs_exit returned");
    }
    hs_error_set_exit_handler(NULL);
    assert_int_equal(g_code, HS_ERR_INPUT);
    assert_string_equal(g_message, "run.ini:7: heat.n: value -3 is out of range");
    hs_error_clear();
}

/* A runtime failure propagated through HS_CHECK keeps the first message first and adds the trace. */
static int failing_call(void) { return HS_FAIL(HS_ERR_RUNTIME, "cudaMalloc of %d bytes failed", 64); }
static int caller(void)
{
    HS_CHECK(failing_call());
    return HS_OK;
}

static void test_runtime_error_trace(void **state)
{
    (void)state;
    hs_error_clear();
    hs_error_set_exit_handler(catch_exit);
    if (setjmp(g_back) == 0) {
        hs_exit(caller());
        fail_msg("hs_exit returned");
    }
    hs_error_set_exit_handler(NULL);
    assert_int_equal(g_code, HS_ERR_RUNTIME);
    assert_non_null(strstr(g_message, "cudaMalloc of 64 bytes failed"));
    assert_non_null(strstr(g_message, "(failing_call())"));
    assert_true(strstr(g_message, "cudaMalloc") < strstr(g_message, "from "));
    hs_error_clear();
}

/* A bad parameter file, loaded as `hpcsim check` does, reaches the handler as one input error. */
static void test_bad_parameter_file(void **state)
{
    (void)state;
    const char *path = test_tmp_path("bad.ini");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "[run]\nsolver = heat\n[heat]\nndim = 9\n");
    fclose(f);
    assert_int_equal(hs_solver_declare_all(), HS_OK);
    hs_error_clear();
    hs_error_set_exit_handler(catch_exit);
    hs_params *p = NULL;
    if (setjmp(g_back) == 0) {
        int rc = hs_params_load(path, 0, NULL, &p);
        hs_exit(rc);
        fail_msg("hs_exit returned");
    }
    hs_error_set_exit_handler(NULL);
    assert_null(p);
    assert_int_equal(g_code, HS_ERR_INPUT);
    char want[600];
    snprintf(want, sizeof want, "%s:4: heat.ndim: value 9 is out of range [1, 3]", path);
    assert_string_equal(g_message, want);
    hs_error_clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_input_error_reaches_handler),
        cmocka_unit_test(test_runtime_error_trace),
        cmocka_unit_test(test_bad_parameter_file),
    };
    int rc = cmocka_run_group_tests(tests, NULL, test_tmp_cleanup);
    test_ctx_finish();
    return rc;
}
