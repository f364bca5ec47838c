/* The seismic solver's kernel launches: the launch record from the state (layout, coefficients, profiles) and the dispatch to a backend. */
#include <stdint.h>
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "solvers/seismic/seismic_state.h"

void hs_seis_launch_init(const hs_seis *s, hs_seis_op op, const hs_box *box, hs_seis_launch *L)
{
    memset(L, 0, sizeof *L);
    const hs_field *f = s->lay;
    const hs_seis_config *c = &s->cfg;
    L->op = (int)op;
    L->ndim = c->ndim;
    L->radius = s->radius;
    L->f32 = s->dtype == HS_F32;
    L->origin = (int64_t)hs_field_index(f, 0, 0, 0);
    L->st[0] = 1;
    L->st[1] = c->ndim > 1 ? hs_field_stride_y(f) : 0;
    L->st[2] = c->ndim > 2 ? hs_field_stride_z(f) : 0;
    L->index32 = f->count < (size_t)INT32_MAX; /* every field has the layout of s->lay */
    L->hw = s->hw;
    for (int d = 0; d < 3; d++) {
        L->offset[d] = f->offset[d];
        L->local[d] = f->local[d];
        for (int r = 0; r < s->nmarch[d]; r++) L->mlo[d][r] = s->march_box[d][r].lo[d], L->mhi[d][r] = s->march_box[d][r].hi[d];
        if (box) L->lo[d] = box->lo[d], L->hi[d] = box->hi[d];
    }
    L->free_top = c->free_surface && f->offset[c->ndim - 1] == 0;
    for (int r = 0; r < HS_SEIS_NF; r++) L->f[r] = s->f[r] ? s->f[r]->data : NULL;
    L->f[HS_SEIS_F_C] = NULL; /* AC_STEP adds C only where the step asks (hs_seis_acoustic_step) */
    hs_seis_coef_f64 *k = &L->k_f64;
    for (int d = 0; d < c->ndim; d++) {
        L->pa[d] = s->prof[d][0], L->pb[d] = s->prof[d][1], L->pah[d] = s->prof[d][2], L->pbh[d] = s->prof[d][3];
        double h = c->h[d];
        for (int m = 0; m <= s->radius; m++) k->c2[d][m] = s->coef2[m] / (h * h);
        for (int m = 0; m < s->radius; m++) k->c1[d][m] = s->coef1[m] / h, k->cs[d][m] = s->coefs[m] / h;
        k->cs2[d] = 1.0 / h;
        k->c2sum += k->c2[d][0];
    }
    /* the float copy, member by member: both structs are arrays of one type in the same order */
    _Static_assert(sizeof(hs_seis_coef_f64) / sizeof(double) == sizeof(hs_seis_coef_f32) / sizeof(float),
                   "the coefficient structs differ");
    const double *from = (const double *)k;
    float *to = (float *)&L->k_f32;
    for (size_t i = 0; i < sizeof(hs_seis_coef_f64) / sizeof(double); i++) to[i] = (float)from[i];
}

int hs_seis_launch_run(const hs_seis *s, const hs_seis_launch *L)
{
    return HS_DISPATCH(s->ctx, hs_seis_launch_cpu(L), hs_seis_launch_cuda(s->ctx->cuda, L));
}

int hs_seis_run_boxes(const hs_seis *s, hs_seis_launch *proto, hs_seis_op op, const hs_box *boxes, int n)
{
    proto->op = (int)op;
    for (int i = 0; i < n; i++) {
        for (int d = 0; d < 3; d++) proto->lo[d] = boxes[i].lo[d], proto->hi[d] = boxes[i].hi[d];
        HS_CHECK(hs_seis_launch_run(s, proto));
    }
    return HS_OK;
}

int hs_seis_inject(const hs_seis *s, const hs_seis_points *pts, hs_field *target, hs_field *mult, double value,
                   const double *vals)
{
    if (pts->ngrp == 0) return HS_OK;
    hs_seis_launch L;
    hs_seis_launch_init(s, HS_SEIS_INJECT, NULL, &L);
    L.f[HS_SEIS_F_X] = target->data;
    L.f[HS_SEIS_F_Y] = mult ? mult->data : NULL;
    L.ngrp = pts->ngrp, L.gptr = pts->gptr, L.pidx = pts->pidx, L.pwt = pts->pwt, L.prec = pts->prec;
    L.value = value;
    L.vals = vals;
    return hs_seis_launch_run(s, &L);
}

int hs_seis_sample(const hs_seis *s, const hs_seis_points *pts, hs_field *src, double *trace, double keep, double scale)
{
    if (pts->ngrp == 0) return HS_OK;
    hs_seis_launch L;
    hs_seis_launch_init(s, HS_SEIS_SAMPLE, NULL, &L);
    L.f[HS_SEIS_F_X] = src->data;
    L.ngrp = pts->ngrp, L.gptr = pts->gptr, L.pidx = pts->pidx, L.pwt = pts->pwt;
    L.trace = trace;
    L.value = keep;
    L.scale = scale;
    return hs_seis_launch_run(s, &L);
}

int hs_seis_sample_product(const hs_seis *s, const hs_seis_points *pts, hs_field *x, hs_field *y, double *trace)
{
    if (pts->ngrp == 0) return HS_OK;
    hs_seis_launch L;
    hs_seis_launch_init(s, HS_SEIS_SAMPLE, NULL, &L);
    L.f[HS_SEIS_F_X] = x->data;
    L.f[HS_SEIS_F_Y] = y->data;
    L.ngrp = pts->ngrp, L.gptr = pts->gptr, L.pidx = pts->pidx, L.pwt = pts->pwt;
    L.trace = trace;
    L.value = 0;
    L.scale = 1;
    return hs_seis_launch_run(s, &L);
}
