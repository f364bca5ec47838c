/* Gridded input files: the named axes and coordinate steps of a variable against the grid it feeds. */
#include "io/grid_input.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/error.h"

char hs_grid_input_dim_axis(hs_reader *r, const char *dim)
{
    char buf[16];
    int found = 0;
    if (hs_reader_has_var(r, dim) && hs_reader_attr_text(r, dim, "axis", buf, sizeof buf, &found) == HS_OK && found &&
        strchr("XYZxyz", buf[0]) && buf[0] && !buf[1])
        return (char)tolower((unsigned char)buf[0]);
    hs_error_clear();
    if ((dim[0] == 'x' || dim[0] == 'y' || dim[0] == 'z' || dim[0] == 'X' || dim[0] == 'Y' || dim[0] == 'Z') && !dim[1])
        return (char)tolower((unsigned char)dim[0]);
    if (!strcmp(dim, "depth")) return 'z';
    return 0;
}

/* Metres per unit of a coordinate's length `units`, in the UDUNITS spellings of m, km, cm and mm
 * (a mask in cm stepping 6.25 was read as 6.25 m and refused against a grid of 0.0625 m cells);
 * 0 for other units, which are then read as metres and quoted in the message. */
static double length_scale(const char *units)
{
    static const struct {
        const char *name;
        double scale;
    } table[] = {{"m", 1}, {"metre", 1}, {"metres", 1}, {"meter", 1}, {"meters", 1}, {"km", 1e3}, {"kilometre", 1e3},
                 {"kilometres", 1e3}, {"kilometer", 1e3}, {"kilometers", 1e3}, {"cm", 1e-2}, {"centimetre", 1e-2},
                 {"centimetres", 1e-2}, {"centimeter", 1e-2}, {"centimeters", 1e-2}, {"mm", 1e-3}, {"millimetre", 1e-3},
                 {"millimetres", 1e-3}, {"millimeter", 1e-3}, {"millimeters", 1e-3}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(units, table[i].name)) return table[i].scale;
    return 0;
}

int hs_grid_input_check_axes(const hs_params *p, hs_reader *r, const char *path, const char *what, const char *var,
                             int ndim, const char *axes, const int64_t n[], const double h[], const char *key,
                             const char *step_key)
{
    char dims[8][HS_READER_NAME_MAX];
    int rank = 0;
    if (hs_reader_var_dims(r, var, dims, &rank) != HS_OK || rank != ndim) {
        hs_error_clear();
        return HS_OK;
    }
    char got[8 * HS_READER_NAME_MAX + 16] = "", want[32] = "", order[16] = "";
    int wrong = 0;
    for (int i = 0; i < rank; i++) {
        const int d = ndim - 1 - i;
        const char expect = axes[d], axis = hs_grid_input_dim_axis(r, dims[i]);
        wrong |= axis && axis != expect;
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? ", " : "", dims[i]);
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%c", i ? ", " : "", expect);
        snprintf(order + strlen(order), sizeof order - strlen(order), "%s%c", i ? "," : "", expect);
    }
    if (wrong)
        return hs_params_error(p, key, "variable '%s' in '%s' has dimensions (%s): the %s is read (%s), %c fastest "
                                       "(store it so, e.g. ncpdq -a %s)",
                               var, path, got, what, want, axes[0], order);
    for (int i = 0; i < rank; i++) {
        const int d = ndim - 1 - i;
        int64_t shape[8];
        int r1 = 0;
        if (!hs_reader_has_var(r, dims[i]) || hs_reader_var_shape(r, dims[i], shape, &r1) != HS_OK || r1 != 1 || shape[0] != n[d]) {
            hs_error_clear();
            continue;
        }
        double *x = malloc((size_t)shape[0] * sizeof *x + 8);
        if (!x) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        int rc = hs_reader_read(r, dims[i], x);
        char units[32];
        int found = 0;
        if (hs_reader_attr_text(r, dims[i], "units", units, sizeof units, &found) != HS_OK || !found) units[0] = 0;
        hs_error_clear();
        /* no units: metres; units this reads as metres without knowing them are quoted if refused */
        const double known = units[0] ? length_scale(units) : 1, scale = known > 0 ? known : 1;
        for (int64_t k = 1; rc == HS_OK && k < shape[0]; k++) {
            const double step = (x[k] - x[k - 1]) * scale;
            if (!(fabs(step - h[d]) <= 1e-6 * h[d])) { /* a NaN coordinate too */
                rc = hs_params_error(p, step_key, "the %s file '%s' steps its coordinate '%s' by %.9g m (from index %lld to %lld%s%s%s); "
                                                  "the grid's spacing there is %g m",
                                     what, path, dims[i], step, (long long)(k - 1), (long long)k, known > 0 ? "" : ", units '",
                                     known > 0 ? "" : units, known > 0 ? "" : "' read as m", h[d]);
                break;
            }
        }
        if (rc != HS_OK && rc != HS_ERR_INPUT) {
            hs_error_clear();
            rc = HS_OK; /* a coordinate that cannot be read as numbers says nothing */
        }
        free(x);
        HS_CHECK(rc);
    }
    return HS_OK;
}
