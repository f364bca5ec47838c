/* `hpcsim summary FILE`: a run's parameters, version, timings, stop and final diagnostics from its output file. */
#include "io/summary.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/output.h"
#include "kernels/error.h"

#define TEXT_MAX (1 << 20) /* the parameter text of a large case fits many times over */

typedef struct {
    hs_reader *r;
    char *buf;  /* TEXT_MAX scratch for text attributes */
    const char *path;
    char rec_name[HS_READER_NAME_MAX]; /* the record dimension's name ("time") */
} summary_ctx;

/* A global text attribute, or NULL when absent (valid until the next call). */
static const char *gtext(summary_ctx *s, const char *name)
{
    int found = 0;
    if (hs_reader_attr_text(s->r, NULL, name, s->buf, TEXT_MAX, &found) != HS_OK || !found) {
        hs_error_clear();
        return NULL;
    }
    return s->buf;
}

/* A global number attribute; NAN when absent. */
static double greal(summary_ctx *s, const char *name)
{
    int found = 0;
    double v = NAN;
    if (hs_reader_attr_real(s->r, NULL, name, &v, &found) != HS_OK || !found) {
        hs_error_clear();
        return NAN;
    }
    return v;
}

/* The value of `key` in section `section` of INI text, into val; 0 when absent. */
static int ini_value(const char *ini, const char *section, const char *key, char *val, size_t len)
{
    char cur[128] = "";
    const char *line = ini;
    while (line && *line) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char l[1024];
        snprintf(l, sizeof l, "%.*s", (int)(n < sizeof l - 1 ? n : sizeof l - 1), line);
        char *p = l + strspn(l, " \t");
        if (*p == '[') {
            char *q = strchr(p, ']');
            if (q) *q = 0;
            snprintf(cur, sizeof cur, "%s", p + 1);
        } else if (!strcmp(cur, section)) {
            char *eq = strchr(p, '=');
            if (eq) {
                char *k = p, *ke = eq;
                while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t')) ke--;
                *ke = 0;
                if (!strcmp(k, key)) {
                    char *v = eq + 1 + strspn(eq + 1, " \t");
                    char *c = strchr(v, '#');
                    if (c) *c = 0;
                    size_t vl = strlen(v);
                    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t' || v[vl - 1] == '\r')) v[--vl] = 0;
                    snprintf(val, len, "%s", v);
                    return 1;
                }
            }
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

/* Print text indented, one line each. */
static void print_indented(FILE *out, const char *text, const char *indent)
{
    const char *line = text;
    while (line && *line) {
        const char *end = strchr(line, '\n');
        int n = end ? (int)(end - line) : (int)strlen(line);
        if (n > 0) fprintf(out, "%s%.*s\n", indent, n, line);
        line = end ? end + 1 : NULL;
    }
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

/* The name of the record dimension: the first dimension of a record variable that names its
 * dimensions (NetCDF files always; our HDF5 files in each data variable's `dimensions` attribute,
 * not in the coordinate's own).  "" when none says. */
static int record_dim_name(summary_ctx *s, char **names, int count)
{
    s->rec_name[0] = 0;
    for (int i = 0; i < count; i++) {
        int is_rec = hs_reader_var_is_record(s->r, names[i]);
        if (is_rec < 0) return HS_FAIL(HS_ERR_RUNTIME, "%s: cannot tell whether %s is a record variable", s->path, names[i]);
        if (is_rec != 1) continue;
        /* our HDF5 files say it in `dimensions` (read as HDF5, those without dimension scales) */
        char words[512];
        int found = 0;
        HS_CHECK(hs_reader_attr_text(s->r, names[i], "dimensions", words, sizeof words, &found));
        if (found && sscanf(words, "%63s", s->rec_name) == 1) return HS_OK;
        char dims[8][HS_READER_NAME_MAX];
        int rank = 0;
        HS_CHECK(hs_reader_var_dims(s->r, names[i], dims, &rank));
        if (rank >= 1 && strncmp(dims[0], "dim", 3) != 0 && strncmp(dims[0], "phony_dim", 9) != 0) {
            snprintf(s->rec_name, sizeof s->rec_name, "%s", dims[0]);
            return HS_OK;
        }
    }
    return HS_OK;
}

/* *is_rec: the variable runs along the record dimension; *coord: it is the record coordinate. */
static int classify(summary_ctx *s, const char *name, int *is_rec, int *coord)
{
    *is_rec = hs_reader_var_is_record(s->r, name);
    if (*is_rec < 0) return HS_FAIL(HS_ERR_RUNTIME, "%s: cannot tell whether %s is a record variable", s->path, name);
    *coord = *is_rec == 1 && s->rec_name[0] && !strcmp(name, s->rec_name);
    return HS_OK;
}

/* The records: how many and their time span (the first record coordinate found). */
static int print_records(summary_ctx *s, char **names, int count, FILE *out)
{
    for (int i = 0; i < count; i++) {
        int is_rec = 0, coord = 0;
        HS_CHECK(classify(s, names[i], &is_rec, &coord));
        if (!coord) continue;
        int64_t shape[8];
        int rank = 0;
        HS_CHECK(hs_reader_var_shape(s->r, names[i], shape, &rank));
        char units[256] = "";
        int found = 0;
        HS_CHECK(hs_reader_attr_text(s->r, names[i], "units", units, sizeof units, &found));
        /* A dimensionless time keeps a CF units attribute for the tools and says its real unit in
         * long_name ("time in units of L/U (...)"): that is the one to print, not the seconds. */
        char long_name[256] = "";
        HS_CHECK(hs_reader_attr_text(s->r, names[i], "long_name", long_name, sizeof long_name, &found));
        if (found && !strncmp(long_name, "time in ", 8)) {
            const char *from = long_name + 5, *end = from + strcspn(from, ";");
            for (const char *note = strstr(from, " (dimensionless"); note && note < end; note = NULL) end = note;
            for (const char *note = strstr(from, " (the units attribute"); note && note < end; note = NULL) end = note;
            size_t cut = (size_t)(end - from);
            snprintf(units, sizeof units, "%.*s", (int)cut, from);
        }
        if (shape[0] == 0) {
            fprintf(out, "  records      : none\n");
            return HS_OK;
        }
        double *t = malloc(sizeof *t * (size_t)shape[0]);
        if (!t) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        int rc = hs_reader_read(s->r, names[i], t);
        if (rc == HS_OK)
            fprintf(out, "  records      : %lld, %s %.9g .. %.9g%s%s%s\n", (long long)shape[0], names[i], t[0],
                    t[shape[0] - 1], *units ? " (" : "", units, *units ? ")" : "");
        free(t);
        return rc;
    }
    fprintf(out, "  records      : no record dimension\n");
    return HS_OK;
}

/* Each time-dependent variable at the last record: a series' value, a field's min, max and mean. */
static int print_diagnostics(summary_ctx *s, char **names, int count, FILE *out)
{
    int printed = 0;
    for (int i = 0; i < count; i++) {
        const char *name = names[i];
        int is_rec = 0, coord = 0;
        HS_CHECK(classify(s, name, &is_rec, &coord));
        if (coord || is_rec != 1 || ends_with(name, "_bnds")) continue;
        int64_t shape[8];
        int rank = 0;
        HS_CHECK(hs_reader_var_shape(s->r, name, shape, &rank));
        if (shape[0] == 0) continue;
        int64_t n = 1;
        for (int d = 1; d < rank; d++) n *= shape[d];
        double *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
        if (!v) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        int rc = hs_reader_read_record(s->r, name, shape[0] - 1, v);
        if (rc != HS_OK) {
            free(v);
            return rc;
        }
        char units[128] = "";
        int found = 0;
        double fill = NAN;
        int has_fill = 0;
        rc = hs_reader_attr_text(s->r, name, "units", units, sizeof units, &found);
        if (rc == HS_OK) rc = hs_reader_attr_real(s->r, name, "_FillValue", &fill, &has_fill);
        if (rc != HS_OK) {
            free(v);
            return rc;
        }
        if (!printed++) fprintf(out, "diagnostics at the last record (record %lld):\n", (long long)shape[0] - 1);
        if (rank == 1) {
            fprintf(out, "  %-24s %.12g %s\n", name, v[0], units);
        } else {
            double lo = INFINITY, hi = -INFINITY, sum = 0;
            int64_t used = 0, nonfinite = 0;
            for (int64_t k = 0; k < n; k++) {
                if (has_fill && v[k] == fill) continue;
                if (!isfinite(v[k])) {
                    nonfinite++;
                    continue;
                }
                lo = v[k] < lo ? v[k] : lo;
                hi = v[k] > hi ? v[k] : hi;
                sum += v[k];
                used++;
            }
            if (used)
                fprintf(out, "  %-24s min %.12g  max %.12g  mean %.12g %s (%lld values", name, lo, hi, sum / (double)used,
                        units, (long long)used);
            else
                fprintf(out, "  %-24s no finite values %s (%lld values", name, units, (long long)n);
            if (nonfinite) fprintf(out, ", %lld not finite", (long long)nonfinite);
            fprintf(out, ")\n");
        }
        free(v);
    }
    if (!printed) fprintf(out, "diagnostics at the last record: none (no time-dependent variables with records)\n");
    return HS_OK;
}

/* Where and why the run stopped, and its timings (the driver's hpcsim_* attributes). */
static void print_run(summary_ctx *s, const char *path, FILE *out)
{
    const char *reason = gtext(s, "hpcsim_stop_reason");
    if (!reason) {
        if (ends_with(path, ".partial"))
            fprintf(out, "  stopped      : not recorded: the run never closed this file (killed, or still running)\n");
        else
            fprintf(out, "  stopped      : not recorded (a file written before hpcsim recorded its runs)\n");
        return;
    }
    char r[64];
    snprintf(r, sizeof r, "%s", reason);
    const char *detail = gtext(s, "hpcsim_stop_detail");
    fprintf(out, "  stopped      : %s (%s)\n", r, detail ? detail : "");
    /* a failed run (its state stopped being finite) would fail again from its checkpoint */
    if (!strcmp(r, "signal") || !strcmp(r, "walltime")) {
        const char *ck = gtext(s, "hpcsim_checkpoint");
        char ckpt[1024];
        snprintf(ckpt, sizeof ckpt, "%s", ck ? ck : "CHECKPOINT");
        fprintf(out, "                 continue from the checkpoint: hpcsim run ... --restart %s\n", ckpt);
    }
    fprintf(out, "  at           : step %.0f, t = %.9g of end time %.9g\n", greal(s, "hpcsim_stop_step"),
            greal(s, "hpcsim_stop_time"), greal(s, "hpcsim_end_time"));
    char started[64] = "?", ended[64] = "?", host[256] = "?", device[64] = "?", from[1024] = "none", wall[64] = "none";
    const char *t;
    if ((t = gtext(s, "hpcsim_run_started"))) snprintf(started, sizeof started, "%s", t);
    if ((t = gtext(s, "hpcsim_run_ended"))) snprintf(ended, sizeof ended, "%s", t);
    if ((t = gtext(s, "hpcsim_host"))) snprintf(host, sizeof host, "%s", t);
    if ((t = gtext(s, "hpcsim_device"))) snprintf(device, sizeof device, "%s", t);
    if ((t = gtext(s, "hpcsim_restarted_from"))) snprintf(from, sizeof from, "%s", t);
    if ((t = gtext(s, "hpcsim_walltime"))) snprintf(wall, sizeof wall, "%s", t);
    double ranks = greal(s, "hpcsim_ranks"), threads = greal(s, "hpcsim_threads");
    fprintf(out, "  run          : %s to %s on %s, %.0f rank%s x %.0f thread%s, device %s\n", started, ended, host, ranks,
            ranks == 1 ? "" : "s", threads, threads == 1 ? "" : "s", device);
    if (strcmp(from, "none")) fprintf(out, "  restarted    : from %s at step %.0f\n", from, greal(s, "hpcsim_first_step"));
    else fprintf(out, "  restarted    : no (a fresh start)\n");
    fprintf(out, "  walltime     : %s\n", wall);
    fprintf(out, "  timings      : wall %.3f s: time loop %.3f s, output %.3f s, checkpoints %.3f s (%.0f written)\n",
            greal(s, "hpcsim_wall_time"), greal(s, "hpcsim_loop_time"), greal(s, "hpcsim_output_time"),
            greal(s, "hpcsim_checkpoint_time"), greal(s, "hpcsim_checkpoints"));
    double rate = greal(s, "hpcsim_rate");
    if (isfinite(rate)) {
        const char *unit = gtext(s, "hpcsim_rate_unit");
        fprintf(out, "  rate         : %.4g %s/s\n", rate, unit ? unit : "updates");
    }
}

int hs_summary_print(const char *path, FILE *out)
{
    summary_ctx s = {NULL, malloc(TEXT_MAX), path, ""};
    if (!s.buf) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    int rc = hs_reader_open(path, &s.r);
    if (rc != HS_OK) {
        free(s.buf);
        return rc;
    }
    char **names = NULL;
    int count = 0, ntext = 0;
    rc = hs_reader_var_names(s.r, &names, &count, &ntext);
    if (rc == HS_OK && (rc = record_dim_name(&s, names, count)) != HS_OK) hs_reader_free_names(names, count);
    if (rc == HS_OK) {
        const char *v;
        fprintf(out, "hpcsim summary of %s\n", path);
        if ((v = gtext(&s, "title"))) fprintf(out, "  title        : %s\n", v);
        if ((v = gtext(&s, "source"))) fprintf(out, "  version      : %s\n", v);
        else fprintf(out, "  version      : not recorded (no 'source' attribute: not an hpcsim file?)\n");
        char solver[128] = "?";
        const char *ini = gtext(&s, "hpcsim_parameters");
        if (ini && !ini_value(ini, "run", "solver", solver, sizeof solver)) snprintf(solver, sizeof solver, "?");
        fprintf(out, "  solver       : %s\n", solver);
        print_run(&s, path, out);
        rc = print_records(&s, names, count, out);
        if (rc == HS_OK && (v = gtext(&s, "history"))) {
            fprintf(out, "  history      :\n");
            print_indented(out, v, "    ");
        }
        if (rc == HS_OK) rc = print_diagnostics(&s, names, count, out);
        if (rc == HS_OK) {
            if ((v = gtext(&s, "hpcsim_parameters"))) {
                fprintf(out, "parameters (resolved):\n");
                print_indented(out, v, "  ");
            } else {
                fprintf(out, "parameters: not recorded (no hpcsim_parameters attribute)\n");
            }
        }
        hs_reader_free_names(names, count);
    }
    hs_reader_close(s.r);
    free(s.buf);
    return rc;
}
