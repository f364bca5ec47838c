/* The lbm model's geometry: face kinds, obstacles (cylinder, sphere, mask file), cell flags and the obstacle links with their wall distances. */
#include "solvers/cfd/lbm_geom.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/grid_input.h"
#include "io/output.h"
#include "kernels/error.h"
#include "solvers/cfd/lbm_impl.h"
#include "solvers/cfd/lbm_point.h"

/* ---------------------------------------------------------------- the mask file */

static int read_mask(const hs_params *p, hs_lbm_geom *g)
{
    const char *path = hs_params_input_path(p, "lbm.mask_file");
    if (!strcmp(hs_params_string(p, "lbm.mask_file"), "none"))
        return hs_params_error(p, "lbm.mask_file", "obstacle = file needs a mask file");
    const int64_t *n = g->c.n;
    HS_CHECK(hs_params_check_input_file(p, "lbm.mask_file", path, "mask file"));
    const int64_t cells = n[0] * n[1] * n[2];
    g->mask = calloc((size_t)cells, 1);
    if (!g->mask) return HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mask");
    FILE *f = fopen(path, "rb");
    if (!f) return hs_params_error(p, "lbm.mask_file", "cannot open mask file %s: %s", path, strerror(errno));
    if (hs_params_enum(p, "lbm.mask_format") == 1) {
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        if (size != (long)cells) {
            fclose(f);
            return hs_params_error(p, "lbm.mask_file", "'%s' has %ld bytes; the grid of %lld x %lld x %lld cells needs %lld (one byte per cell, x fastest)",
                                   path, size, (long long)n[0], (long long)n[1], (long long)n[2], (long long)cells);
        }
        size_t got = fread(g->mask, 1, (size_t)cells, f);
        fclose(f);
        if (got != (size_t)cells) return hs_params_error(p, "lbm.mask_file", "'%s': read %zu of %lld bytes", path, got, (long long)cells);
        return HS_OK;
    }
    fclose(f);
    hs_reader *r = NULL;
    if (hs_reader_open(path, &r) != HS_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", hs_error_message()); /* truncated, damaged, or not one at all */
        why[strcspn(why, "\n")] = '\0';
        hs_error_clear();
        return hs_params_error(p, "lbm.mask_file", "'%s' is not a NetCDF or HDF5 file this build can read (%s; raw bytes: set "
                               "lbm.mask_format = u8)", path, why);
    }
    const char *var = hs_params_string(p, "lbm.mask_variable");
    int64_t shape[8];
    int rank = 0, rc = HS_OK;
    if (hs_reader_var_shape(r, var, shape, &rank) != HS_OK) {
        hs_error_clear();
        hs_reader_close(r);
        return hs_params_error(p, "lbm.mask_variable", "no variable '%s' in '%s'", var, path);
    }
    int ok = rank == g->ndim;
    for (int d = 0; ok && d < g->ndim; d++) ok = shape[g->ndim - 1 - d] == n[d];
    if (!ok) {
        char got[128] = "", want[128] = "";
        for (int d = 0; d < rank; d++) snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? " x " : "", (long long)shape[d]);
        for (int d = g->ndim - 1; d >= 0; d--)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d < g->ndim - 1 ? " x " : "", (long long)n[d]);
        hs_reader_close(r);
        return hs_params_error(p, "lbm.mask_file", "the mask '%s' in '%s' has shape %s; the grid needs %s (slowest first)", var, path, got, want);
    }
    /* the shape alone let a square mask stored (x, y) run transposed, and a mask of another cell
     * size with the same counts run on this grid (the check heat's and seismic's files have) */
    static const char *const axes[2] = {"xy", "xyz"};
    const double h[3] = {g->dx, g->dx, g->dx};
    rc = hs_grid_input_check_axes(p, r, path, "mask", var, g->ndim, axes[g->ndim - 2], n, h, "lbm.mask_file", "lbm.mask_file");
    if (rc != HS_OK) {
        hs_reader_close(r);
        return rc;
    }
    double *v = malloc((size_t)cells * sizeof *v);
    if (!v) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mask");
    if (rc == HS_OK && hs_reader_read_cf(r, var, v) != HS_OK) {
        /* a text (char) or other non-numeric variable: bad input, not a runtime failure (exit 1, and
         * on several ranks MPI_Abort) */
        char why[600];
        snprintf(why, sizeof why, "%s", hs_error_message());
        why[strcspn(why, "\n")] = '\0'; /* the message, not the call trace */
        hs_error_clear();
        rc = hs_params_error(p, "lbm.mask_variable", "the mask '%s' in '%s' cannot be read as numbers (%s)", var, path, why);
    }
    hs_reader_close(r);
    /* a missing value (NaN, or a _FillValue unpacked to NaN) is neither solid nor fluid: it was
     * taken for fluid without a word */
    for (int64_t i = 0; rc == HS_OK && i < cells; i++) {
        if (isnan(v[i])) {
            rc = hs_params_error(p, "lbm.mask_file", "the mask '%s' in '%s' has a missing value (NaN or _FillValue) at cell (x %lld, y %lld, "
                                 "z %lld): every cell must be solid (nonzero) or fluid (0)", var, path, (long long)(i % n[0]),
                                 (long long)(i / n[0] % n[1]), (long long)(i / n[0] / n[1]));
            break;
        }
        g->mask[i] = v[i] != 0;
    }
    free(v);
    return rc;
}

/* The displacement (m) along axis d from the obstacle's centre to the point x (m): where the axis is
 * periodic, to the nearest of the centre's periodic images, so that a body across a periodic face
 * (a periodic array of cylinders, drawn centred on the face) has its part beyond the face on the
 * other side; it was cut off there (a cylinder centred on x = 0 of a periodic channel held half
 * its cells, and its drag differed from the same cylinder moved by half the period). */
static double from_centre(const hs_lbm_geom *g, int d, double x)
{
    double r = x - g->center[d];
    if (g->periodic[d]) {
        const double L = (double)g->c.n[d] * g->dx;
        r -= L * floor(r / L + 0.5);
    }
    return r;
}

/* The obstacle must hold a cell centre and leave one to the fluid: a cylinder or sphere outside
 * the domain, or one that covers it all, ran without complaint (no drag, or no flow).  For a
 * ball, the nearest cell centre to its centre decides the first, the farthest corner cell centre
 * the second (the cell centres' box is convex; along a periodic axis the cell centres nearest to
 * and farthest from the centre's images); a mask file is counted. */
static int obstacle_sane(const hs_params *p, const hs_lbm_geom *g)
{
    const int64_t *n = g->c.n;
    if (g->obstacle == HS_LBM_OBS_FILE) {
        int64_t cells = n[0] * n[1] * n[2], solid = 0;
        for (int64_t i = 0; i < cells; i++) solid += g->mask[i] != 0;
        if (solid == 0) return hs_params_error(p, "lbm.mask_file", "the mask has no solid cell (obstacle = file needs one; none: obstacle = none)");
        if (solid == cells) return hs_params_error(p, "lbm.mask_file", "the mask is solid in every cell: no fluid is left");
        return HS_OK;
    }
    if (g->obstacle == HS_LBM_OBS_NONE) return HS_OK;
    const int dims = g->obstacle == HS_LBM_OBS_SPHERE ? 3 : 2;
    double near2 = 0, far2 = 0, inside = 1;
    for (int d = 0; d < dims; d++) {
        if (g->periodic[d]) {
            double lo = INFINITY, hi = 0;
            for (int64_t i = 0; i < n[d]; i++) {
                const double r = fabs(from_centre(g, d, ((double)i + 0.5) * g->dx));
                lo = fmin(lo, r), hi = fmax(hi, r);
            }
            near2 += lo * lo;
            far2 += hi * hi;
            continue;
        }
        const double lo = 0.5 * g->dx, hi = ((double)n[d] - 0.5) * g->dx, c = g->center[d];
        const double nearest = c < lo ? lo : c > hi ? hi : lo + floor((c - lo) / g->dx + 0.5) * g->dx;
        near2 += (nearest - c) * (nearest - c);
        far2 += fmax((lo - c) * (lo - c), (hi - c) * (hi - c));
        if (c < 0 || c > (double)n[d] * g->dx) inside = 0;
    }
    const double r2 = g->radius * g->radius;
    const char *what = g->obstacle == HS_LBM_OBS_SPHERE ? "sphere" : "cylinder";
    char at[96];
    if (dims == 3) snprintf(at, sizeof at, "%g %g %g", g->center[0], g->center[1], g->center[2]);
    else snprintf(at, sizeof at, "%g %g", g->center[0], g->center[1]);
    if (!(near2 < r2))
        return hs_params_error(p, inside ? "lbm.obstacle_radius" : "lbm.obstacle_center",
                               "the %s (centre %s, radius %g) holds no cell centre of the %g-spaced lattice%s", what, at, g->radius, g->dx,
                               inside ? "" : ": its centre is outside the domain");
    if (far2 < r2)
        return hs_params_error(p, "lbm.obstacle_radius", "the %s of radius %g covers every cell of the domain: no fluid is left", what, g->radius);
    return HS_OK;
}

/* The axis the flow goes along: the inlet's, else the body force's largest component, else x. */
int hs_lbm_flow_axis(const hs_lbm_geom *g)
{
    if (g->inlet_dim >= 0) return g->inlet_dim;
    int axis = 0;
    for (int d = 1; d < g->ndim; d++)
        if (fabs(g->accel[d]) > fabs(g->accel[axis])) axis = d;
    return axis;
}

/* A mask's frontal extent in cells: the solid cells' shadow on the plane across the flow (2D: the
 * rows holding one, 3D: the columns along the flow holding one), the reference length or area of a
 * drawn body as the diameter is the cylinder's (the coefficients were per cell: 6 times a
 * 6-cell-wide body's). */
static int64_t mask_frontal_cells(const hs_lbm_geom *g)
{
    const int64_t *n = g->c.n;
    const int a = hs_lbm_flow_axis(g), b = a == 0 ? 1 : 0, c = 3 - a - b;
    const int64_t nb = n[b], nc = g->ndim == 3 ? n[c] : 1;
    uint8_t *shadow = calloc((size_t)(nb * nc), 1);
    if (!shadow) return 1;
    for (int64_t k = 0; k < (g->ndim == 3 ? n[2] : 1); k++)
        for (int64_t j = 0; j < n[1]; j++)
            for (int64_t i = 0; i < n[0]; i++)
                if (g->mask[(k * n[1] + j) * n[0] + i]) {
                    const int64_t x[3] = {i, j, k};
                    shadow[x[b] + nb * (g->ndim == 3 ? x[c] : 0)] = 1;
                }
    int64_t count = 0;
    for (int64_t m = 0; m < nb * nc; m++) count += shadow[m];
    free(shadow);
    return count > 0 ? count : 1;
}

int hs_lbm_geom_setup(const hs_params *p, hs_lbm_geom *g)
{
    if (g->obstacle == HS_LBM_OBS_FILE) HS_CHECK(read_mask(p, g));
    HS_CHECK(obstacle_sane(p, g));
    int lids = 0;
    for (int d = 0; d < g->ndim; d++)
        for (int s = 0; s < 2; s++)
            if (g->face[d][s] == HS_LBM_FACE_LID) {
                if (lids++) return hs_params_error(p, "lbm.boundary", "one lid at most");
                g->wall_u_lat[d == 0 ? 1 : 0] = g->u_lat;
            }
    /* the coefficients' references */
    if (g->cd_velocity > 0) g->cd_u_lat = g->cd_velocity * g->dt / g->dx;
    else {
        g->cd_u_lat = g->u_lat;
        if (g->inlet_dim >= 0 && g->parabolic)
            for (int d = 0; d < g->ndim; d++)
                if (d != g->inlet_dim && !g->periodic[d]) g->cd_u_lat *= 2.0 / 3.0;
    }
    const double r = g->radius / g->dx;
    if (g->cd_length > 0) {
        double l = g->cd_length / g->dx;
        g->cd_ref_lat = g->ndim == 3 ? l * l : l;
    } else if (g->obstacle == HS_LBM_OBS_SPHERE) g->cd_ref_lat = M_PI * r * r;
    else if (g->obstacle == HS_LBM_OBS_CYLINDER) g->cd_ref_lat = g->ndim == 3 ? 2.0 * r * (double)g->c.n[2] : 2.0 * r;
    else if (g->obstacle == HS_LBM_OBS_FILE) g->cd_ref_lat = (double)mask_frontal_cells(g);
    else g->cd_ref_lat = 1.0;
    return HS_OK;
}

void hs_lbm_geom_free(hs_lbm_geom *g)
{
    free(g->mask);
    g->mask = NULL;
}

/* ---------------------------------------------------------------- kinds and flags */

static int in_obstacle(const hs_lbm_geom *g, const int64_t gi[3])
{
    if (g->obstacle == HS_LBM_OBS_NONE) return 0;
    if (g->obstacle == HS_LBM_OBS_FILE) return g->mask[(gi[2] * g->c.n[1] + gi[1]) * g->c.n[0] + gi[0]] != 0;
    double r2 = 0;
    const int dims = g->obstacle == HS_LBM_OBS_SPHERE ? 3 : 2;
    for (int d = 0; d < dims; d++) {
        double x = from_centre(g, d, ((double)gi[d] + 0.5) * g->dx);
        r2 += x * x;
    }
    return r2 < g->radius * g->radius;
}

int hs_lbm_geom_kind(const hs_lbm_geom *g, const int64_t gi[3])
{
    static const int face_kind[5] = {HS_LBM_FLUID, HS_LBM_WALL, HS_LBM_MOVING, HS_LBM_INLET, HS_LBM_OUTLET};
    /* where faces meet: wall before lid before inlet before outlet */
    static const int rank_of[6] = {0, 4, 3, 2, 1, 0};
    int64_t w[3] = {gi[0], gi[1], gi[2]};
    int kind = HS_LBM_FLUID;
    for (int d = 0; d < g->ndim; d++) {
        const int64_t n = g->c.n[d];
        if (w[d] >= 0 && w[d] < n) continue;
        if (g->periodic[d]) {
            w[d] = ((w[d] % n) + n) % n;
            continue;
        }
        int k = face_kind[g->face[d][w[d] >= n]];
        if (rank_of[k] > rank_of[kind]) kind = k;
    }
    if (kind != HS_LBM_FLUID) return kind;
    return in_obstacle(g, w) ? HS_LBM_OBSTACLE : HS_LBM_FLUID;
}

static int near_nonfluid(const hs_lbm_geom *g, const int64_t gi[3])
{
    if (g->obstacle == HS_LBM_OBS_NONE) { /* only the faces: cells one away from every non-periodic face are inside */
        int inside = 1;
        for (int d = 0; d < g->ndim; d++)
            if (!g->periodic[d] && (gi[d] < 1 || gi[d] >= g->c.n[d] - 1)) inside = 0;
        if (inside) return 0;
    }
    for (int q = 1; q < g->q; q++) {
        int64_t nb[3] = {gi[0] + hs_lbm_c(g->q, 0, q), gi[1] + hs_lbm_c(g->q, 1, q), gi[2] + hs_lbm_c(g->q, 2, q)};
        if (hs_lbm_geom_kind(g, nb) != HS_LBM_FLUID) return 1;
    }
    return 0;
}

void hs_lbm_geom_flags(const hs_lbm_geom *g, const int64_t offset[3], const int64_t local[3], int fh, uint8_t *flag)
{
    int64_t h[3], a[3];
    for (int d = 0; d < 3; d++) h[d] = d < g->ndim ? fh : 0, a[d] = local[d] + 2 * h[d];
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t k = 0; k < a[2]; k++)
        for (int64_t j = 0; j < a[1]; j++)
            for (int64_t i = 0; i < a[0]; i++) {
                int64_t gi[3] = {offset[0] + i - h[0], offset[1] + j - h[1], offset[2] + k - h[2]};
                int kind = hs_lbm_geom_kind(g, gi);
                if (kind == HS_LBM_FLUID && near_nonfluid(g, gi)) kind |= HS_LBM_NEAR;
                flag[(k * a[1] + j) * a[0] + i] = (uint8_t)kind;
            }
}

void hs_lbm_geom_solid(const hs_lbm_geom *g, const int64_t offset[3], const int64_t local[3], double *out)
{
    for (int64_t k = 0; k < local[2]; k++)
        for (int64_t j = 0; j < local[1]; j++)
            for (int64_t i = 0; i < local[0]; i++) {
                int64_t gi[3] = {offset[0] + i, offset[1] + j, offset[2] + k};
                out[(k * local[1] + j) * local[0] + i] = hs_lbm_geom_kind(g, gi) == HS_LBM_OBSTACLE ? 1.0 : 0.0;
            }
}

/* ---------------------------------------------------------------- links */

/* The fraction q in (0, 1] of the link from cell centre gi along c_i where it meets the cylinder's
 * or sphere's surface (along a periodic axis, the surface of the image that holds the link's
 * solid end: the cell at gi may lie nearer another image, or beyond the face in a ghost ring). */
static double wall_distance(const hs_lbm_geom *g, const int64_t gi[3], int i)
{
    const int dims = g->obstacle == HS_LBM_OBS_SPHERE ? 3 : 2;
    double a = 0, b = 0, c = 0;
    for (int d = 0; d < dims; d++) {
        const double e = hs_lbm_c(g->q, d, i);
        double x = ((double)gi[d] + 0.5) - g->center[d] / g->dx;
        if (g->periodic[d]) { /* the image nearest the solid end x + e */
            const double n = (double)g->c.n[d];
            x -= n * floor((x + e) / n + 0.5);
        }
        a += e * e, b += 2 * x * e, c += x * x;
    }
    const double R = g->radius / g->dx;
    c -= R * R;
    double disc = b * b - 4 * a * c;
    if (a == 0 || disc < 0) return 0.5;
    double t = (-b - sqrt(disc)) / (2 * a);
    return t < 1e-6 ? 1e-6 : t > 1 ? 1.0 : t;
}

int hs_lbm_geom_links(const hs_lbm_geom *g, const int64_t offset[3], const int64_t local[3], const int64_t lo[3], const int64_t hi[3],
                      hs_lbm_link_list *ll)
{
    memset(ll, 0, sizeof *ll);
    if (g->obstacle == HS_LBM_OBS_NONE) return HS_OK;
    int64_t cap = 0;
    for (int pass = 0; pass < 2; pass++) { /* 0: count, 1: fill */
        int64_t n = 0;
        for (int owned = 1; owned >= 0; owned--) {
            for (int64_t k = lo[2]; k < hi[2]; k++)
                for (int64_t j = lo[1]; j < hi[1]; j++)
                    for (int64_t i = lo[0]; i < hi[0]; i++) {
                        int inside = i >= 0 && i < local[0] && j >= 0 && j < local[1] && k >= 0 && k < local[2];
                        if (inside != owned) continue;
                        int64_t gi[3] = {offset[0] + i, offset[1] + j, offset[2] + k};
                        if (hs_lbm_geom_kind(g, gi) != HS_LBM_FLUID) continue;
                        for (int q = 1; q < g->q; q++) {
                            int64_t nb[3], bk[3];
                            for (int d = 0; d < 3; d++) nb[d] = gi[d] + hs_lbm_c(g->q, d, q), bk[d] = gi[d] - hs_lbm_c(g->q, d, q);
                            if (hs_lbm_geom_kind(g, nb) != HS_LBM_OBSTACLE) continue;
                            if (pass == 1) {
                                double qd = 0.5;
                                if (g->bouzidi && (g->obstacle == HS_LBM_OBS_CYLINDER || g->obstacle == HS_LBM_OBS_SPHERE))
                                    qd = wall_distance(g, gi, q);
                                if (qd != 0.5 && hs_lbm_geom_kind(g, bk) != HS_LBM_FLUID) qd = 0.5;
                                ll->ijk[3 * n] = i, ll->ijk[3 * n + 1] = j, ll->ijk[3 * n + 2] = k;
                                ll->dir[n] = q;
                                ll->q[n] = qd;
                            }
                            n++;
                        }
                    }
            if (owned) ll->nowned = n;
        }
        if (pass == 0) {
            cap = n;
            size_t m = (size_t)(cap ? cap : 1);
            ll->ijk = malloc(3 * m * sizeof *ll->ijk);
            ll->cell = malloc(m * sizeof *ll->cell);
            ll->dir = malloc(m * sizeof *ll->dir);
            ll->q = malloc(m * sizeof *ll->q);
            if (!ll->ijk || !ll->cell || !ll->dir || !ll->q) {
                hs_lbm_link_list_free(ll);
                return HS_FAIL(HS_ERR_RUNTIME, "out of memory for the obstacle links");
            }
        } else {
            ll->n = n;
        }
    }
    return HS_OK;
}

void hs_lbm_link_list_free(hs_lbm_link_list *ll)
{
    free(ll->ijk);
    free(ll->cell);
    free(ll->dir);
    free(ll->q);
    memset(ll, 0, sizeof *ll);
}
