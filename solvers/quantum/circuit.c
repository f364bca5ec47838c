/* Circuit building, qelib1.inc gate matrices, variational rotations and gate fusion. */
#include "solvers/quantum/circuit.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cplx;

/* ---------------------------------------------------------------- gate matrices */
static void put(double *m, int i, cplx v)
{
    m[2 * i] = creal(v);
    m[2 * i + 1] = cimag(v);
}

static void set2(double *m, cplx a, cplx b, cplx c, cplx d)
{
    put(m, 0, a);
    put(m, 1, b);
    put(m, 2, c);
    put(m, 3, d);
}

static void u3m(double th, double ph, double la, double *m)
{
    double c = cos(th / 2), s = sin(th / 2);
    set2(m, c, -cexp(I * la) * s, cexp(I * ph) * s, cexp(I * (ph + la)) * c);
}

static void g_u3(const double *p, double *m) { u3m(p[0], p[1], p[2], m); }
static void g_u2(const double *p, double *m) { u3m(M_PI / 2, p[0], p[1], m); }
static void g_u1(const double *p, double *m) { set2(m, 1, 0, 0, cexp(I * p[0])); }
static void g_id(const double *p, double *m) { set2(m, 1, 0, 0, 1); }
static void g_x(const double *p, double *m) { set2(m, 0, 1, 1, 0); }
static void g_y(const double *p, double *m) { set2(m, 0, -I, I, 0); }
static void g_z(const double *p, double *m) { set2(m, 1, 0, 0, -1); }
static void g_h(const double *p, double *m) { double r = M_SQRT1_2; set2(m, r, r, r, -r); }
static void g_s(const double *p, double *m) { set2(m, 1, 0, 0, I); }
static void g_sdg(const double *p, double *m) { set2(m, 1, 0, 0, -I); }
static void g_t(const double *p, double *m) { set2(m, 1, 0, 0, cexp(I * M_PI / 4)); }
static void g_tdg(const double *p, double *m) { set2(m, 1, 0, 0, cexp(-I * M_PI / 4)); }
static void g_sx(const double *p, double *m) { set2(m, (1 + I) / 2, (1 - I) / 2, (1 - I) / 2, (1 + I) / 2); }
static void g_sxdg(const double *p, double *m) { set2(m, (1 - I) / 2, (1 + I) / 2, (1 + I) / 2, (1 - I) / 2); }
static void g_rx(const double *p, double *m) { hs_qgen_matrix(HS_QGEN_X, p[0], m, NULL); }
static void g_ry(const double *p, double *m) { hs_qgen_matrix(HS_QGEN_Y, p[0], m, NULL); }
static void g_rz(const double *p, double *m) { hs_qgen_matrix(HS_QGEN_Z, p[0], m, NULL); }
static void g_rxx(const double *p, double *m) { hs_qgen_matrix(HS_QGEN_XX, p[0], m, NULL); }
static void g_ryy(const double *p, double *m) { hs_qgen_matrix(HS_QGEN_YY, p[0], m, NULL); }
static void g_rzz(const double *p, double *m) { hs_qgen_matrix(HS_QGEN_ZZ, p[0], m, NULL); }
static void g_cu(const double *p, double *m)
{
    u3m(p[0], p[1], p[2], m);
    cplx g = cexp(I * p[3]);
    for (int i = 0; i < 4; i++) put(m, i, g * (m[2 * i] + I * m[2 * i + 1]));
}
static void g_swap(const double *p, double *m)
{
    memset(m, 0, 32 * sizeof(double));
    put(m, 0, 1);
    put(m, 6, 1);
    put(m, 9, 1);
    put(m, 15, 1);
}

static const hs_qgate_def g_gates[] = {
    {"U", 3, 0, 1, 0, g_u3},      {"CX", 0, 1, 1, 0, g_x},
    {"u3", 3, 0, 1, 1, g_u3},     {"u", 3, 0, 1, 1, g_u3},       {"u2", 2, 0, 1, 1, g_u2},
    {"u1", 1, 0, 1, 1, g_u1},     {"p", 1, 0, 1, 1, g_u1},       {"id", 0, 0, 1, 1, g_id},
    {"u0", 1, 0, 1, 1, g_id},     {"x", 0, 0, 1, 1, g_x},        {"y", 0, 0, 1, 1, g_y},
    {"z", 0, 0, 1, 1, g_z},       {"h", 0, 0, 1, 1, g_h},        {"s", 0, 0, 1, 1, g_s},
    {"sdg", 0, 0, 1, 1, g_sdg},   {"t", 0, 0, 1, 1, g_t},        {"tdg", 0, 0, 1, 1, g_tdg},
    {"sx", 0, 0, 1, 1, g_sx},     {"sxdg", 0, 0, 1, 1, g_sxdg},  {"rx", 1, 0, 1, 1, g_rx},
    {"ry", 1, 0, 1, 1, g_ry},     {"rz", 1, 0, 1, 1, g_rz},      {"cx", 0, 1, 1, 1, g_x},
    {"cy", 0, 1, 1, 1, g_y},      {"cz", 0, 1, 1, 1, g_z},       {"ch", 0, 1, 1, 1, g_h},
    {"csx", 0, 1, 1, 1, g_sx},    {"crx", 1, 1, 1, 1, g_rx},     {"cry", 1, 1, 1, 1, g_ry},
    {"crz", 1, 1, 1, 1, g_rz},    {"cu1", 1, 1, 1, 1, g_u1},     {"cp", 1, 1, 1, 1, g_u1},
    {"cu3", 3, 1, 1, 1, g_u3},    {"cu", 4, 1, 1, 1, g_cu},      {"swap", 0, 0, 2, 1, g_swap},
    {"cswap", 0, 1, 2, 1, g_swap}, {"ccx", 0, 2, 1, 1, g_x},     {"c3x", 0, 3, 1, 1, g_x},
    {"c4x", 0, 4, 1, 1, g_x},     {"c3sqrtx", 0, 3, 1, 1, g_sx}, {"rxx", 1, 0, 2, 1, g_rxx},
    {"ryy", 1, 0, 2, 1, g_ryy},   {"rzz", 1, 0, 2, 1, g_rzz},
};

const hs_qgate_def *hs_qgate_find(const char *name)
{
    for (size_t i = 0; i < sizeof g_gates / sizeof g_gates[0]; i++)
        if (!strcmp(g_gates[i].name, name)) return &g_gates[i];
    return NULL;
}

/* The relative-phase Toffolis of qelib1.inc, in the decomposition the OpenQASM 2 paper gives. */
const char hs_qelib1_extra[] =
    "gate rccx a,b,c { u2(0,pi) c; u1(pi/4) c; cx b,c; u1(-pi/4) c; cx a,c; u1(pi/4) c; cx b,c;\n"
    "  u1(-pi/4) c; u2(0,pi) c; }\n"
    "gate rc3x a,b,c,d { u2(0,pi) d; u1(pi/4) d; cx c,d; u1(-pi/4) d; u2(0,pi) d; cx a,d; u1(pi/4) d;\n"
    "  cx b,d; u1(-pi/4) d; cx a,d; u1(pi/4) d; cx b,d; u1(-pi/4) d; u2(0,pi) d; u1(pi/4) d; cx c,d;\n"
    "  u1(-pi/4) d; u2(0,pi) d; }\n";

/* ---------------------------------------------------------------- rotations */
/* Pauli matrix entry <r|P|c> for one qubit. */
static cplx pauli1(int p, int r, int c)
{
    switch (p) {
    case 1: return r != c ? 1 : 0;
    case 2: return r == c ? 0 : (r ? I : -I);
    case 3: return r == c ? (r ? -1 : 1) : 0;
    default: return r == c;
    }
}

void hs_qgen_matrix(hs_qgen g, double a, double *m, double *dm)
{
    int two = g >= HS_QGEN_XX, p = two ? (int)g - 3 : (int)g, d = two ? 4 : 2;
    double c = cos(a / 2), s = sin(a / 2);
    /* exp(-i a G/2) = cos(a/2) I - i sin(a/2) G since G^2 = I; derivative -sin/2 I - i cos/2 G. */
    for (int r = 0; r < d; r++)
        for (int col = 0; col < d; col++) {
            cplx gv = two ? pauli1(p, r & 1, col & 1) * pauli1(p, r >> 1, col >> 1) : pauli1(p, r, col);
            cplx id = r == col;
            put(m, r * d + col, c * id - I * s * gv);
            if (dm) put(dm, r * d + col, -0.5 * s * id - I * 0.5 * c * gv);
        }
}

hs_qmat_kind hs_qmat_classify(int d, const double *m)
{
    int diag = 1, perm = 1;
    for (int r = 0; r < d; r++) {
        int nz = 0;
        for (int c = 0; c < d; c++) {
            int z = m[2 * (r * d + c)] == 0.0 && m[2 * (r * d + c) + 1] == 0.0;
            if (!z) nz++;
            if (!z && r != c) diag = 0;
        }
        if (nz != 1) perm = 0;
    }
    for (int c = 0; c < d && perm; c++) {
        int nz = 0;
        for (int r = 0; r < d; r++) nz += !(m[2 * (r * d + c)] == 0.0 && m[2 * (r * d + c) + 1] == 0.0);
        if (nz != 1) perm = 0;
    }
    return diag ? HS_QMAT_DIAG : perm ? HS_QMAT_PERM : HS_QMAT_DENSE;
}

/* ---------------------------------------------------------------- building */
hs_circuit *hs_circuit_new(int nqubits, int nclbits)
{
    hs_circuit *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->nqubits = nqubits;
    c->nclbits = nclbits;
    return c;
}

void hs_circuit_free(hs_circuit *c)
{
    if (!c) return;
    for (int i = 0; i < c->nops; i++) free(c->ops[i].m);
    free(c->ops);
    free(c);
}

static hs_qop *append(hs_circuit *c, hs_qop_kind kind, const char *name)
{
    if (c->nops == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        hs_qop *ops = realloc(c->ops, (size_t)cap * sizeof *ops);
        if (!ops) return NULL;
        c->ops = ops;
        c->cap = cap;
    }
    hs_qop *op = &c->ops[c->nops++];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->param = -1;
    op->cbit = -1;
    snprintf(op->name, sizeof op->name, "%s", name);
    return op;
}

hs_qop *hs_circuit_gate(hs_circuit *c, const char *name, int nt, const int *t, uint64_t cmask, uint64_t cval,
                        const double *m)
{
    if (nt < 1 || nt > HS_Q_MAX_TARGETS) return NULL;
    hs_qop *op = append(c, HS_QOP_GATE, name);
    if (!op) return NULL;
    size_t d = (size_t)1 << nt;
    op->m = calloc(2 * d * d, sizeof(double));
    if (!op->m) {
        c->nops--;
        return NULL;
    }
    op->nt = nt;
    memcpy(op->t, t, (size_t)nt * sizeof(int));
    op->cmask = cmask;
    op->cval = cval & cmask;
    if (m) memcpy(op->m, m, 2 * d * d * sizeof(double));
    op->mk = m ? hs_qmat_classify((int)d, op->m) : HS_QMAT_DENSE;
    return op;
}

hs_qop *hs_circuit_measure(hs_circuit *c, int q, int b)
{
    hs_qop *op = append(c, HS_QOP_MEASURE, "measure");
    if (!op) return NULL;
    op->nt = 1;
    op->t[0] = q;
    op->cbit = b;
    return op;
}

hs_qop *hs_circuit_reset(hs_circuit *c, int q)
{
    hs_qop *op = append(c, HS_QOP_RESET, "reset");
    if (!op) return NULL;
    op->nt = 1;
    op->t[0] = q;
    return op;
}

hs_qop *hs_circuit_rotation(hs_circuit *c, hs_qgen g, const int *t, int param, double scale)
{
    static const char *names[] = {"", "rx", "ry", "rz", "rxx", "ryy", "rzz"};
    hs_qop *op = hs_circuit_gate(c, names[g], g >= HS_QGEN_XX ? 2 : 1, t, 0, 0, NULL);
    if (!op) return NULL;
    op->gen = g;
    op->param = param;
    op->pscale = scale;
    op->mk = g == HS_QGEN_Z || g == HS_QGEN_ZZ ? HS_QMAT_DIAG : HS_QMAT_DENSE;
    if (param >= c->nparams) c->nparams = param + 1;
    hs_qgen_matrix(g, 0.0, op->m, NULL);
    return op;
}

void hs_circuit_bind(hs_circuit *c, const double *x)
{
    for (int i = 0; i < c->nops; i++) {
        hs_qop *op = &c->ops[i];
        if (op->param >= 0) hs_qgen_matrix(op->gen, op->pscale * x[op->param], op->m, NULL);
    }
}

int hs_circuit_terminal_measurements(const hs_circuit *c)
{
    uint64_t measured = 0, touched_before = 0;
    for (int i = 0; i < c->nops; i++) {
        const hs_qop *op = &c->ops[i];
        if (op->cond) return 0;
        if (op->kind == HS_QOP_BARRIER) continue;
        uint64_t touched = op->cmask;
        for (int j = 0; j < op->nt; j++) touched |= 1ull << op->t[j];
        if (op->kind == HS_QOP_RESET) {
            /* not unitary: on a qubit that something acted on it collapses the state, a new
             * outcome per shot; on a fresh qubit (|0>) it does nothing */
            if (touched_before & touched) return 0;
            continue;
        }
        if (op->kind == HS_QOP_MEASURE) {
            if (measured & touched) return 0; /* measured twice: the second sees a collapsed state */
            measured |= touched;
        } else if (measured & touched) {
            return 0;
        }
        touched_before |= touched;
    }
    return 1;
}

/* ---------------------------------------------------------------- copies */
int hs_circuit_copy_op(hs_circuit *out, const hs_qop *op)
{
    hs_qop *n = NULL;
    if (op->kind == HS_QOP_GATE) {
        n = hs_circuit_gate(out, op->name, op->nt, op->t, op->cmask, op->cval, op->m);
        if (n) {
            n->mk = op->mk;
            n->param = op->param;
            n->pscale = op->pscale;
            n->gen = op->gen;
        }
    } else {
        n = append(out, op->kind, op->name);
        if (n) {
            double *keep = n->m;
            *n = *op;
            n->m = keep;
        }
    }
    if (!n) return -1;
    n->cond = op->cond;
    n->cond_off = op->cond_off;
    n->cond_len = op->cond_len;
    n->cond_value = op->cond_value;
    n->line = op->line;
    return 0;
}
