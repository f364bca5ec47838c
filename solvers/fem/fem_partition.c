/* Mesh partitions: METIS's dual-graph partition where the build has it, recursive coordinate bisection otherwise. */
#include "solvers/fem/fem_partition.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/config.h"
#include "kernels/error.h"
#if HS_HAVE_METIS
#include <metis.h>
#endif

typedef struct {
    double key;
    int64_t cell;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->cell < y->cell ? -1 : x->cell > y->cell;
}

/* Cells list[0..n) go to parts [p0, p0 + np). */
static void rcb(const double *cen, keyed *list, int64_t n, int p0, int np, int *part)
{
    if (np <= 1 || n == 0) {
        for (int64_t i = 0; i < n; i++) part[list[i].cell] = p0;
        return;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) {
            double x = cen[3 * list[i].cell + d];
            lo[d] = fmin(lo[d], x), hi[d] = fmax(hi[d], x);
        }
    int axis = 0;
    for (int d = 1; d < 3; d++)
        if (hi[d] - lo[d] > hi[axis] - lo[axis]) axis = d;
    for (int64_t i = 0; i < n; i++) list[i].key = cen[3 * list[i].cell + axis];
    qsort(list, (size_t)n, sizeof *list, cmp_keyed);
    int left = np / 2;
    int64_t cut = (int64_t)((double)n * left / np + 0.5);
    rcb(cen, list, cut, p0, left, part);
    rcb(cen, list + cut, n - cut, p0 + left, np - left, part);
}

static int partition_rcb(const hs_fem_mesh *m, int nparts, int *part)
{
    int nv = m->dim + 1;
    double *cen = malloc((size_t)(m->ncells ? m->ncells : 1) * 3 * sizeof(double));
    keyed *list = malloc((size_t)(m->ncells ? m->ncells : 1) * sizeof(keyed));
    if (!cen || !list) {
        free(cen), free(list);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory partitioning the mesh");
    }
    for (int64_t c = 0; c < m->ncells; c++) {
        for (int d = 0; d < 3; d++) {
            double s = 0;
            for (int k = 0; k < nv; k++) s += m->x[3 * m->cell[c * nv + k] + d];
            cen[3 * c + d] = s / nv;
        }
        list[c].cell = c;
    }
    rcb(cen, list, m->ncells, 0, nparts, part);
    free(cen), free(list);
    return HS_OK;
}

#if HS_HAVE_METIS
static int partition_metis(const hs_fem_mesh *m, int nparts, int *part)
{
    int nv = m->dim + 1;
    idx_t ne = (idx_t)m->ncells, nn = (idx_t)m->nverts, np = nparts, ncommon = m->dim, objval = 0;
    idx_t *eptr = malloc((size_t)(ne + 1) * sizeof(idx_t)), *eind = malloc((size_t)(ne * nv + 1) * sizeof(idx_t));
    idx_t *epart = malloc((size_t)(ne + 1) * sizeof(idx_t)), *npart = malloc((size_t)(nn + 1) * sizeof(idx_t));
    int rc = HS_OK;
    if (!eptr || !eind || !epart || !npart) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory partitioning the mesh");
    if (rc == HS_OK) {
        for (idx_t e = 0; e <= ne; e++) eptr[e] = e * nv;
        for (int64_t i = 0; i < m->ncells * nv; i++) eind[i] = (idx_t)m->cell[i];
        idx_t opt[METIS_NOPTIONS];
        METIS_SetDefaultOptions(opt);
        opt[METIS_OPTION_SEED] = 1; /* the same partition on every rank and run */
        int st = METIS_PartMeshDual(&ne, &nn, eptr, eind, NULL, NULL, &ncommon, &np, NULL, opt, &objval, epart, npart);
        if (st != METIS_OK) rc = HS_FAIL(HS_ERR_RUNTIME, "METIS_PartMeshDual failed (status %d)", st);
        for (int64_t c = 0; rc == HS_OK && c < m->ncells; c++) part[c] = (int)epart[c];
    }
    free(eptr), free(eind), free(epart), free(npart);
    return rc;
}
#endif

int hs_fem_partition(const hs_fem_mesh *m, int nparts, int method, int *part, int *used)
{
    if (nparts <= 1) {
        for (int64_t c = 0; c < m->ncells; c++) part[c] = 0;
        *used = HS_FEM_PART_RCB;
        return HS_OK;
    }
#if HS_HAVE_METIS
    if (method != HS_FEM_PART_RCB && m->ncells >= nparts) {
        *used = HS_FEM_PART_METIS;
        return partition_metis(m, nparts, part);
    }
#else
    if (method == HS_FEM_PART_METIS) return hs_input_error("fem", 0, "partition", "metis: this build has no METIS (feature -metis)");
#endif
    *used = HS_FEM_PART_RCB;
    return partition_rcb(m, nparts, part);
}
