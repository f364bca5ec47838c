/* JSON: our streaming writer read back by cJSON (an independent parser), key paths, parse errors, compare on JSON files. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/compare.h"
#include "io/json.h"
#include "test_util.h"

#if HS_HAVE_CJSON
#include <cjson/cJSON.h>

enum { NVAL = 2000 };

/* Doubles over the whole range: seeded mantissas times powers of ten from 1e-300 to 1e300, signs
 * mixed, and the awkward ones (signed zero, subnormals, the extremes). */
static void make_values(double *v)
{
    double u[NVAL];
    test_fill_f64(u, NVAL, 77, -1.0, 1.0);
    for (int i = 0; i < NVAL; i++) v[i] = u[i] * pow(10.0, (i * 37) % 601 - 300);
    const double special[] = {-0.0, 0.0, DBL_MIN, DBL_MIN / 3, -4.9e-324, DBL_MAX, -DBL_MAX, 1.0 / 3, 0.1, 1e22};
    memcpy(v, special, sizeof special);
}

static const char *const g_texts[] = {"plain", "quote \" backslash \\ slash /", "tab\tnew\nline\rret\bbs\fff",
                                      "\x01\x02\x1f controls", "utf-8: \xcf\x80 \xe2\x82\xac \xf0\x9f\x98\x80", ""};
#define NTEXT (int)(sizeof g_texts / sizeof g_texts[0])

static void write_doc(const char *path, int indent, const double *v)
{
    hs_json j;
    TEST_OK(hs_json_open(&j, path, indent));
    hs_json_begin_object(&j);
    hs_json_key(&j, "values");
    hs_json_begin_array(&j);
    for (int i = 0; i < NVAL; i++) hs_json_double(&j, v[i]);
    hs_json_end_array(&j);
    hs_json_key(&j, "texts");
    hs_json_begin_array(&j);
    for (int i = 0; i < NTEXT; i++) hs_json_string(&j, g_texts[i]);
    hs_json_end_array(&j);
    for (int i = 0; i < NTEXT; i++) {
        hs_json_key(&j, g_texts[i]); /* keys are escaped alike */
        hs_json_int(&j, i);
    }
    hs_json_key(&j, "ints");
    hs_json_begin_array(&j);
    const int64_t ints[] = {0, -1, 1, INT32_MAX, INT32_MIN, (int64_t)1 << 53, -((int64_t)1 << 53), 1234567890123};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) hs_json_int(&j, ints[i]);
    hs_json_end_array(&j);
    hs_json_key(&j, "nonfinite");
    hs_json_begin_array(&j);
    hs_json_double(&j, NAN);
    hs_json_double(&j, INFINITY);
    hs_json_double(&j, -INFINITY);
    hs_json_end_array(&j);
    hs_json_key(&j, "nested");
    hs_json_begin_object(&j);
    hs_json_key(&j, "flags");
    hs_json_begin_array(&j);
    hs_json_bool(&j, 1);
    hs_json_bool(&j, 0);
    hs_json_null(&j);
    hs_json_end_array(&j);
    hs_json_key(&j, "empty");
    hs_json_begin_array(&j);
    hs_json_end_array(&j);
    hs_json_end_object(&j);
    hs_json_end_object(&j);
    TEST_OK(hs_json_close(&j));
}

/* Every double comes back with its bits, every string with its bytes, compact or indented. */
static void test_roundtrip(void **state)
{
    (void)state;
    double v[NVAL];
    make_values(v);
    for (int indent = 0; indent <= 2; indent += 2) {
        const char *path = test_tmp_path("roundtrip.json");
        write_doc(path, indent, v);
        cJSON *t = NULL;
        TEST_OK(hs_json_read_file(path, &t));
        const cJSON *vals = cJSON_GetObjectItemCaseSensitive(t, "values");
        assert_int_equal(cJSON_GetArraySize(vals), NVAL);
        int i = 0;
        for (const cJSON *c = vals->child; c; c = c->next, i++) {
            assert_true(cJSON_IsNumber(c));
            if (memcmp(&c->valuedouble, &v[i], sizeof(double)))
                fail_msg("value %d: wrote %.17g, read %.17g", i, v[i], c->valuedouble);
        }
        const cJSON *texts = cJSON_GetObjectItemCaseSensitive(t, "texts");
        for (int k = 0; k < NTEXT; k++) {
            const cJSON *s = cJSON_GetArrayItem(texts, k);
            assert_true(cJSON_IsString(s));
            assert_string_equal(s->valuestring, g_texts[k]);
            const cJSON *key = cJSON_GetObjectItemCaseSensitive(t, g_texts[k]);
            assert_non_null(key);
            assert_true(key->valuedouble == k);
        }
        double *x = NULL;
        int64_t n = 0;
        TEST_OK(hs_json_numbers(t, "values", 0, path, &x, &n));
        assert_int_equal(n, NVAL);
        assert_memory_equal(x, v, sizeof v);
        free(x);
        TEST_OK(hs_json_numbers(t, "ints", 0, path, &x, &n));
        const double want_ints[] = {0, -1, 1, INT32_MAX, INT32_MIN, 9007199254740992.0, -9007199254740992.0, 1234567890123.0};
        assert_int_equal(n, 8);
        assert_memory_equal(x, want_ints, sizeof want_ints);
        free(x);
        TEST_OK(hs_json_numbers(t, "nonfinite", 0, path, &x, &n));
        assert_int_equal(n, 3);
        for (int k = 0; k < 3; k++) assert_true(isnan(x[k])); /* written as null */
        free(x);
        hs_json_free(t);
    }
}

/* Key paths: members, array indices, containers flattened in document order, --last. */
static void test_key_paths(void **state)
{
    (void)state;
    double v[NVAL];
    make_values(v);
    const char *path = test_tmp_path("paths.json");
    write_doc(path, 1, v);
    cJSON *t = NULL;
    TEST_OK(hs_json_read_file(path, &t));
    double *x = NULL;
    int64_t n = 0;
    TEST_OK(hs_json_numbers(t, "values.1234", 0, path, &x, &n));
    assert_int_equal(n, 1);
    assert_memory_equal(x, &v[1234], sizeof(double));
    free(x);
    TEST_OK(hs_json_numbers(t, "values", 1, path, &x, &n));
    assert_int_equal(n, 1);
    assert_memory_equal(x, &v[NVAL - 1], sizeof(double));
    free(x);
    TEST_OK(hs_json_numbers(t, "nested", 0, path, &x, &n));
    assert_int_equal(n, 3); /* true, false, null; the empty array adds nothing */
    assert_true(x[0] == 1.0 && x[1] == 0.0 && isnan(x[2]));
    free(x);
    TEST_OK(hs_json_numbers(t, "nested.empty", 0, path, &x, &n));
    assert_int_equal(n, 0);
    free(x);
    /* the whole document: the values, then the keys' integers, then the ints ..., text passed over */
    TEST_OK(hs_json_numbers(t, "", 0, path, &x, &n));
    assert_int_equal(n, NVAL + NTEXT + 8 + 3 + 3);
    assert_memory_equal(x, v, sizeof v);
    for (int k = 0; k < NTEXT; k++) assert_true(x[NVAL + k] == k);
    free(x);
    assert_int_equal(hs_json_numbers(t, "values.2000", 0, path, &x, &n), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "values.2000: no such key"));
    hs_error_clear();
    assert_int_equal(hs_json_numbers(t, "texts.0", 0, path, &x, &n), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "holds text"));
    hs_error_clear();
    assert_int_equal(hs_json_numbers(t, "nested", 1, path, &x, &n), HS_ERR_INPUT);
    hs_error_clear();
    assert_int_equal(hs_json_numbers(t, "nested.empty", 1, path, &x, &n), HS_ERR_INPUT);
    hs_error_clear();
    assert_int_equal(hs_json_numbers(t, "values.x", 0, path, &x, &n), HS_ERR_INPUT);
    hs_error_clear();
    hs_json_free(t);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Unreadable files and broken text are input errors with the file and the line. */
static void test_read_errors(void **state)
{
    (void)state;
    cJSON *t = NULL;
    const char *path = test_tmp_path("broken.json");
    assert_int_equal(hs_json_read_file(test_tmp_path("missing.json"), &t), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "missing.json: cannot open the file"));
    hs_error_clear();
    write_text(path, "{\n  \"a\": [1, 2],\n  \"b\": tru\n}\n");
    assert_int_equal(hs_json_read_file(path, &t), HS_ERR_INPUT);
    assert_null(t);
    char want[400];
    snprintf(want, sizeof want, "%s:3: not JSON", path);
    if (!strstr(hs_error_message(), want)) fail_msg("message '%s' lacks '%s'", hs_error_message(), want);
    hs_error_clear();
    write_text(path, "{\"a\": 1}\n{\"b\": 2}\n");
    assert_int_equal(hs_json_read_file(path, &t), HS_ERR_INPUT); /* two documents */
    snprintf(want, sizeof want, "%s:2: not JSON: unexpected '{'", path);
    if (!strstr(hs_error_message(), want)) fail_msg("message '%s' lacks '%s'", hs_error_message(), want);
    hs_error_clear();
    write_text(path, "[1, 2,\n\n");
    assert_int_equal(hs_json_read_file(path, &t), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "the text ends early"));
    hs_error_clear();
    write_text(path, "");
    assert_int_equal(hs_json_read_file(path, &t), HS_ERR_INPUT);
    hs_error_clear();
}

/* hpcsim compare on JSON files: equal files agree bitwise, one changed number is found and
 * measured, different counts are an input error. */
static void test_compare_json(void **state)
{
    (void)state;
    double v[NVAL];
    make_values(v);
    const char *a = test_tmp_path("a.json"), *b = test_tmp_path("b.json");
    write_doc(a, 1, v);
    write_doc(b, 0, v); /* the layout does not matter */
    hs_compare_result r;
    TEST_OK(hs_compare_files(a, b, "values", 0, &r));
    assert_int_equal(r.count, NVAL);
    assert_int_equal(r.differing, 0);
    assert_true(r.max_abs == 0);
    v[17] = 0.5; /* element 17 was a mantissa times 1e-272 */
    double was[NVAL];
    make_values(was);
    write_doc(b, 0, v);
    TEST_OK(hs_compare_files(a, b, "values", 0, &r));
    assert_int_equal(r.differing, 1);
    assert_true(r.max_abs == fabs(was[17] - 0.5));
    TEST_OK(hs_compare_files(a, b, "values", 1, &r)); /* --last: the last value only */
    assert_int_equal(r.count, 1);
    assert_int_equal(r.differing, 0);
    assert_int_equal(hs_compare_files(a, b, "ints.3", 0, &r), HS_OK);
    assert_int_equal(hs_compare_files(a, b, "nested", 0, &r), HS_OK);
    assert_int_equal(hs_compare_files(a, b, "values.1", 0, &r), HS_OK);
    assert_int_equal(r.count, 1);
    assert_int_equal(hs_compare_files(a, b, "ints", 0, &r), HS_OK);
    write_text(b, "{\"values\": [1, 2, 3]}");
    assert_int_equal(hs_compare_files(a, b, "values", 0, &r), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "3 numbers here, 2000 in"));
    hs_error_clear();
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_roundtrip),
    cmocka_unit_test(test_key_paths),
    cmocka_unit_test(test_read_errors),
    cmocka_unit_test_teardown(test_compare_json, test_tmp_cleanup),
};

int main(void) { return test_run_group("json", tests, sizeof tests / sizeof tests[0]); }

#else

int main(void)
{
    printf("SKIP: built without cJSON (libcjson-dev): nothing reads JSON back\n");
    return 77;
}

#endif
