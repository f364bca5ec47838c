/* Comparing a variable of two output files value by value (bitwise count, max abs/rel difference). */
#include "io/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "io/output.h"
#include "kernels/error.h"

/* A JSON document starts with '{' or '[' after blanks; NetCDF and HDF5 files with their signatures. */
static int looks_like_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int c;
    while ((c = fgetc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    fclose(f);
    return c == '{' || c == '[';
}

/* The numbers at key path `name` of a JSON result file (the quantum solver's). */
static int read_json(const char *path, const char *name, int last, double **data, int64_t *count)
{
    struct cJSON *tree = NULL;
    HS_CHECK(hs_json_read_file(path, &tree));
    int rc = hs_json_numbers(tree, name, last, path, data, count);
    hs_json_free(tree);
    return rc;
}

/* The numbers of two JSON files are comparable only under the same keys: counts {"01": 100} and
 * {"10": 100} (two different outcomes) agreed, compared in document order. */
static int json_layouts_match(const char *a, const char *b, const char *name, int last)
{
    struct cJSON *ta = NULL, *tb = NULL;
    HS_CHECK(hs_json_read_file(a, &ta));
    int rc = hs_json_read_file(b, &tb);
    char where[600] = "";
    if (rc == HS_OK && !hs_json_same_layout(tb, ta, name, last, where, sizeof where))
        rc = hs_input_error(b, 0, name, "not laid out as in %s: %s", a, where);
    hs_json_free(ta);
    hs_json_free(tb);
    return rc;
}

static int read_var(const char *path, const char *name, int last, double **data, int64_t shape[8], int *rank,
                    int64_t *count)
{
    hs_reader *r = NULL;
    HS_CHECK(hs_reader_open(path, &r)); /* its input errors name the file and what is wrong with it */
    if (hs_reader_var_shape(r, name, shape, rank) != HS_OK) {
        hs_reader_close(r);
        hs_error_clear();
        return hs_input_error(path, 0, name, "no such variable");
    }
    int64_t records = *rank > 0 ? shape[0] : 1;
    if (last && *rank > 0) {
        /* one record: drop the first dimension from the shape */
        for (int d = 1; d < *rank; d++) shape[d - 1] = shape[d];
        (*rank)--;
    }
    *count = 1;
    for (int d = 0; d < *rank; d++) *count *= shape[d];
    *data = malloc((size_t)(*count ? *count : 1) * sizeof(double));
    if (!*data) {
        hs_reader_close(r);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory reading %s", path);
    }
    int rc = last && records > 0 ? hs_reader_read_record(r, name, records - 1, *data) : hs_reader_read(r, name, *data);
    /* the values a reader of the file sees (CF): packed ones unpacked, missing ones NaN; stored
     * integers were compared, so a packed file and the same field unpacked differed */
    hs_reader_packing pk;
    if (rc == HS_OK) rc = hs_reader_packing_of(r, name, &pk);
    if (rc == HS_OK) hs_reader_apply_cf(&pk, *data, *count);
    hs_reader_close(r);
    return rc;
}

/* The numeric variable names of a file (malloc'd list). */
static int list_vars(const char *path, char ***names, int *count, int *ntext)
{
    hs_reader *r = NULL;
    HS_CHECK(hs_reader_open(path, &r)); /* its input errors name the file and what is wrong with it */
    int rc = hs_reader_var_names(r, names, count, ntext);
    hs_reader_close(r);
    return rc;
}

static int is_record(const char *path, const char *name)
{
    hs_reader *r = NULL;
    if (hs_reader_open(path, &r) != HS_OK) {
        hs_error_clear();
        return 0;
    }
    int rec = hs_reader_var_is_record(r, name);
    if (rec < 0) hs_error_clear();
    hs_reader_close(r);
    return rec > 0;
}

/* What hs_compare_files needs to know of variable `name` before reading it, from one opening of
 * the file: whether it is text (a variable the file has among its non-numeric ones), whether it runs
 * along the record dimension, and then its record coordinate's last value (*has_last = 0: none). */
typedef struct {
    int text, record, has_last;
    double last;
} var_facts;

static void inspect(const char *path, const char *name, var_facts *f)
{
    memset(f, 0, sizeof *f);
    hs_reader *r = NULL;
    if (hs_reader_open(path, &r) != HS_OK) {
        hs_error_clear(); /* the read says what is wrong */
        return;
    }
    char **names = NULL;
    int count = 0, ntext = 0, numeric = 0;
    if (hs_reader_var_names(r, &names, &count, &ntext) == HS_OK) {
        for (int i = 0; i < count; i++) numeric |= !strcmp(names[i], name);
        hs_reader_free_names(names, count);
        f->text = !numeric && ntext > 0 && hs_reader_has_var(r, name);
    }
    f->record = !f->text && hs_reader_var_is_record(r, name) > 0;
    char dims[8][HS_READER_NAME_MAX];
    int rank = 0, crank = 0;
    int64_t shape[8];
    if (f->record && hs_reader_var_dims(r, name, dims, &rank) == HS_OK && rank > 0 && hs_reader_has_var(r, dims[0]) &&
        hs_reader_var_shape(r, dims[0], shape, &crank) == HS_OK && crank == 1 && shape[0] > 0 &&
        hs_reader_read_record(r, dims[0], shape[0] - 1, &f->last) == HS_OK)
        f->has_last = 1;
    hs_error_clear();
    hs_reader_close(r);
}

static int in_list(char **names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return 1;
    return 0;
}

int hs_compare_all(const char *a, const char *b, int last_record, double rtol, FILE *out, int *ndiffer)
{
    *ndiffer = 0;
    if (looks_like_json(a) || looks_like_json(b))
        return hs_input_error(a, 0, NULL, "--all compares NetCDF or HDF5 files; name a key path for JSON files");
    char **na = NULL, **nb = NULL;
    int ca = 0, cb = 0, ta = 0, tb = 0, same = 0;
    int rc = list_vars(a, &na, &ca, &ta);
    if (rc == HS_OK) rc = list_vars(b, &nb, &cb, &tb);
    for (int i = 0; rc == HS_OK && i < ca; i++) {
        if (!in_list(nb, cb, na[i])) {
            fprintf(out, "%s: only in %s\n", na[i], a);
            (*ndiffer)++;
            continue;
        }
        hs_compare_result r;
        int last = last_record && is_record(a, na[i]);
        rc = hs_compare_files(a, b, na[i], last, &r);
        if (rc == HS_ERR_INPUT) { /* shapes differ: a difference, not a failure of the comparison */
            fprintf(out, "%s: %s\n", na[i], hs_error_message());
            hs_error_clear();
            rc = HS_OK;
            (*ndiffer)++;
            continue;
        }
        if (rc != HS_OK) break;
        if (hs_compare_report(out, na[i], &r, rtol)) same++;
        else (*ndiffer)++;
    }
    for (int i = 0; rc == HS_OK && i < cb; i++)
        if (!in_list(na, ca, nb[i])) {
            fprintf(out, "%s: only in %s\n", nb[i], b);
            (*ndiffer)++;
        }
    if (rc == HS_OK) {
        fprintf(out, "%d variables agree, %d differ or are in one file only", same, *ndiffer);
        if (ta || tb) fprintf(out, " (text variables not compared: %d in %s, %d in %s)", ta, a, tb, b);
        fprintf(out, "\n");
    }
    hs_reader_free_names(na, ca);
    hs_reader_free_names(nb, cb);
    return rc;
}

/* The first dimension of `name` whose coordinate variable both files hold and whose values differ
 * (beyond 1e-9 of their span), said in `note`; "" when they agree or cannot be read.  Values of
 * grids over other domains agree or differ point by point, which is not what the user asked. */
static void coordinate_note(const char *a, const char *b, const char *name, char *note, size_t len)
{
    note[0] = '\0';
    hs_reader *ra = NULL, *rb = NULL;
    char dims[8][HS_READER_NAME_MAX];
    int rank = 0;
    if (hs_reader_open(a, &ra) != HS_OK || hs_reader_open(b, &rb) != HS_OK || hs_reader_var_dims(ra, name, dims, &rank) != HS_OK) rank = 0;
    for (int d = 0; d < rank && !note[0]; d++) {
        int64_t s1[8], s2[8];
        int k1 = 0, k2 = 0;
        if (!hs_reader_has_var(ra, dims[d]) || !hs_reader_has_var(rb, dims[d]) || hs_reader_var_is_record(ra, dims[d])) continue;
        if (hs_reader_var_shape(ra, dims[d], s1, &k1) != HS_OK || hs_reader_var_shape(rb, dims[d], s2, &k2) != HS_OK || k1 != 1 ||
            k2 != 1 || s1[0] != s2[0] || s1[0] < 1)
            continue;
        double *c1 = malloc((size_t)s1[0] * sizeof *c1), *c2 = malloc((size_t)s1[0] * sizeof *c2);
        if (c1 && c2 && hs_reader_read(ra, dims[d], c1) == HS_OK && hs_reader_read(rb, dims[d], c2) == HS_OK) {
            double span = fabs(c1[s1[0] - 1] - c1[0]), worst = 0;
            for (int64_t i = 0; i < s1[0]; i++) worst = fmax(worst, fabs(c1[i] - c2[i]));
            if (worst > 1e-9 * fmax(span, 1e-300))
                snprintf(note, len, "the coordinates %s differ (%.6g .. %.6g in %.200s, %.6g .. %.6g in %.200s): the values are of other points", dims[d],
                         c1[0], c1[s1[0] - 1], a, c2[0], c2[s1[0] - 1], b);
        }
        free(c1), free(c2);
    }
    hs_error_clear();
    if (ra) hs_reader_close(ra);
    if (rb) hs_reader_close(rb);
}

int hs_compare_files(const char *a, const char *b, const char *name, int last_record, hs_compare_result *res)
{
    memset(res, 0, sizeof *res);
    double *x = NULL, *y = NULL;
    int64_t sa[8], sb[8], na = 0, nb = 0;
    int ra = 0, rb = 0;
    int rc;
    if (looks_like_json(a)) {
        rc = read_json(a, name, last_record, &x, &na);
        if (rc == HS_OK) rc = read_json(b, name, last_record, &y, &nb);
        if (rc == HS_OK && na != nb)
            rc = hs_input_error(b, 0, name, "%lld numbers here, %lld in %s", (long long)nb, (long long)na, a);
        if (rc == HS_OK) rc = json_layouts_match(a, b, name, last_record);
    } else {
        var_facts fa, fb;
        inspect(a, name, &fa);
        inspect(b, name, &fb);
        /* a text variable (station names) is not a number to compare: refused as input (exit 2), not
         * left to fail as a reader's conversion error (exit 1, which reads as "differ") */
        if (fa.text || fb.text)
            return hs_input_error(fa.text ? a : b, 0, name, "a text variable: compare takes numbers (--all lists the text variables it skips)");
        /* --last takes the last record of a record variable; any other variable is compared whole; the
         * last records must be of one time (two runs stopped at different steps are not comparable so) */
        if (last_record && !fa.record) last_record = 0;
        if (last_record && fa.has_last && fb.has_last && fa.last != fb.last)
            return hs_input_error(b, 0, name, "--last: the last record is at %.10g here and at %.10g in %s", fb.last, fa.last, a);
        rc = HS_OK;
        if (rc == HS_OK) rc = read_var(a, name, last_record, &x, sa, &ra, &na);
        if (rc == HS_OK) rc = read_var(b, name, last_record, &y, sb, &rb, &nb);
        if (rc == HS_OK && (ra != rb || memcmp(sa, sb, sizeof(int64_t) * (size_t)ra))) {
            char ga[160] = "", gb[160] = "";
            for (int i = 0; i < ra; i++) snprintf(ga + strlen(ga), sizeof ga - strlen(ga), "%s%lld", i ? " x " : "", (long long)sa[i]);
            for (int i = 0; i < rb; i++) snprintf(gb + strlen(gb), sizeof gb - strlen(gb), "%s%lld", i ? " x " : "", (long long)sb[i]);
            rc = hs_input_error(b, 0, name, "shape %s differs from %s in %s", rb ? gb : "scalar", ra ? ga : "scalar", a);
        }
        if (rc == HS_OK) coordinate_note(a, b, name, res->note, sizeof res->note);
    }
    if (rc == HS_OK) {
        res->count = na;
        for (int64_t i = 0; i < na; i++) {
            if (fabs(y[i]) > res->ref_max) res->ref_max = fabs(y[i]);
            if (!memcmp(&x[i], &y[i], sizeof(double)) || (isnan(x[i]) && isnan(y[i]))) continue; /* equal bits, or missing at the same place */
            res->differing++;
            double d = fabs(x[i] - y[i]);
            if (d > res->max_abs || isnan(d)) res->max_abs = isnan(d) ? INFINITY : d;
        }
        res->max_rel = res->ref_max > 0 ? res->max_abs / res->ref_max : res->max_abs;
    }
    free(x);
    free(y);
    return rc;
}

int hs_compare_report(FILE *out, const char *name, const hs_compare_result *r, double rtol)
{
    const int ok = rtol == 0 ? r->differing == 0 : r->max_rel <= rtol;
    fprintf(out, "%s: %lld values, %lld not bitwise equal, max |a-b| = %.6e (%.6e of max |b|): %s\n", name, (long long)r->count,
            (long long)r->differing, r->max_abs, r->max_rel, ok ? "agree" : "DIFFER");
    if (r->note[0]) fprintf(out, "%s: note: %s\n", name, r->note);
    return ok;
}
