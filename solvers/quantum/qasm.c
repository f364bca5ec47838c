/* OpenQASM 2.0 reader: a lexer, a recursive-descent parser and gate expansion into circuit ops.
 * Statements are dispatched on their first keyword, so an OpenQASM 3 subset (qubit[n], gate
 * modifiers) can be added as more entries without touching the expression or expansion code. */
#include "solvers/quantum/qasm.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/error.h"

/* ---------------------------------------------------------------- lexer */
typedef enum { T_EOF, T_ID, T_NUM, T_STR, T_SYM } tkind;

typedef struct {
    tkind k;
    const char *s;
    int len, line, col;
    double v;
    int is_int;
} tok;

typedef struct {
    const char *name; /* file name in messages */
    tok *t;
    int n, pos;
} source;

typedef struct expr {
    char op;          /* 'n' number, 'p' parameter, 'u' unary minus, 'f' function, or + - * / ^ */
    double v;
    int idx;          /* parameter index or function number */
    struct expr *a, *b;
} expr;

typedef struct call {
    const hs_qgate_def *builtin;
    int user;         /* index of a user gate when builtin == NULL */
    int np, nq;
    expr **p;
    int *q;           /* indices of the enclosing gate's qubit arguments */
    int is_barrier;
} call;

typedef struct gdef {
    char name[64];
    int np, nq, opaque;
    int ncalls;
    call *calls;
} gdef;

typedef struct parser {
    source *src;
    hs_circuit *c;
    gdef *gates;
    int ngates, capgates;
    int qelib;
    int depth;
    char dir[1024];
    /* current `if` condition */
    int cond, cond_off, cond_len;
    uint64_t cond_value;
    int line;
    expr **pool;      /* every node, for freeing */
    int npool, cappool;
} parser;

static void tok_text(const tok *t, char *buf, size_t n)
{
    if (t->k == T_EOF) snprintf(buf, n, "end of file");
    else snprintf(buf, n, "%.*s", t->len > 40 ? 40 : t->len, t->s);
}

static int err_at(parser *P, const tok *t, const char *fmt, const char *a)
{
    char where[1200], msg[512], tt[64];
    snprintf(where, sizeof where, "%s:%d:%d", P->src->name, t->line, t->col);
    snprintf(msg, sizeof msg, fmt, a);
    tok_text(t, tt, sizeof tt);
    return hs_input_error(where, 0, NULL, "%s (at '%s')", msg, tt);
}

static int lex(const char *name, const char *text, source *out)
{
    int cap = 256, n = 0, line = 1;
    const char *p = text, *lstart = text;
    tok *t = malloc((size_t)cap * sizeof *t);
    if (!t) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (;;) {
        while (*p) {
            if (*p == '\n') p++, line++, lstart = p;
            else if (isspace((unsigned char)*p)) p++;
            else if (p[0] == '/' && p[1] == '/') while (*p && *p != '\n') p++;
            else if (p[0] == '/' && p[1] == '*') {
                p += 2;
                while (*p && !(p[0] == '*' && p[1] == '/')) {
                    if (*p == '\n') line++, lstart = p + 1;
                    p++;
                }
                if (*p) p += 2;
            } else break;
        }
        if (n + 1 >= cap) {
            cap *= 2;
            tok *nt = realloc(t, (size_t)cap * sizeof *t);
            if (!nt) {
                free(t);
                return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
            }
            t = nt;
        }
        tok *k = &t[n++];
        memset(k, 0, sizeof *k);
        k->s = p;
        k->line = line;
        k->col = (int)(p - lstart) + 1;
        if (!*p) {
            k->k = T_EOF;
            break;
        }
        if (isalpha((unsigned char)*p) || *p == '_') {
            while (isalnum((unsigned char)*p) || *p == '_') p++;
            k->k = T_ID;
        } else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
            char *e;
            k->v = strtod(p, &e);
            k->is_int = 1;
            for (const char *c = p; c < e; c++)
                if (!isdigit((unsigned char)*c)) k->is_int = 0;
            p = e;
            k->k = T_NUM;
        } else if (*p == '"') {
            p++;
            while (*p && *p != '"' && *p != '\n') p++;
            if (*p != '"') {
                char where[1200];
                snprintf(where, sizeof where, "%s:%d:%d", name, k->line, k->col);
                free(t);
                return hs_input_error(where, 0, NULL, "unterminated string");
            }
            p++;
            k->k = T_STR;
        } else {
            k->k = T_SYM;
            p += (p[0] == '-' && p[1] == '>') || (p[0] == '=' && p[1] == '=') ? 2 : 1;
        }
        k->len = (int)(p - k->s);
    }
    out->name = name;
    out->t = t;
    out->n = n;
    out->pos = 0;
    return HS_OK;
}

/* ---------------------------------------------------------------- token helpers */
static tok *peek(parser *P) { return &P->src->t[P->src->pos]; }
static tok *next(parser *P)
{
    tok *t = peek(P);
    if (t->k != T_EOF) P->src->pos++;
    return t;
}
static int is_sym(const tok *t, const char *s) { return t->k == T_SYM && t->len == (int)strlen(s) && !strncmp(t->s, s, t->len); }
static int is_id(const tok *t, const char *s) { return t->k == T_ID && t->len == (int)strlen(s) && !strncmp(t->s, s, t->len); }

static int expect_sym(parser *P, const char *s)
{
    tok *t = peek(P);
    if (!is_sym(t, s)) return err_at(P, t, "expected '%s'", s);
    next(P);
    return HS_OK;
}

static int expect_id(parser *P, char *out, size_t n, const char *what)
{
    tok *t = peek(P);
    if (t->k != T_ID) return err_at(P, t, "expected %s", what);
    if ((size_t)t->len >= n) return err_at(P, t, "%s is too long", what);
    snprintf(out, n, "%.*s", t->len, t->s);
    next(P);
    return HS_OK;
}

static int expect_int(parser *P, int *v, const char *what)
{
    tok *t = peek(P);
    if (t->k != T_NUM || !t->is_int || t->v > 1e9) return err_at(P, t, "expected %s", what);
    *v = (int)t->v;
    next(P);
    return HS_OK;
}

/* ---------------------------------------------------------------- expressions */
static const char *g_funcs[] = {"sin", "cos", "tan", "exp", "ln", "sqrt", "asin", "acos", "atan"};
#define NFUNCS ((int)(sizeof g_funcs / sizeof g_funcs[0]))

static expr *node(parser *P, char op)
{
    if (P->npool == P->cappool) {
        int cap = P->cappool ? 2 * P->cappool : 64;
        expr **np = realloc(P->pool, (size_t)cap * sizeof *np);
        if (!np) return NULL;
        P->pool = np;
        P->cappool = cap;
    }
    expr *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    P->pool[P->npool++] = e;
    e->op = op;
    return e;
}

typedef struct {
    int n;
    char (*names)[64];
} scope;

static int parse_expr(parser *P, const scope *sc, expr **out);

static int parse_primary(parser *P, const scope *sc, expr **out)
{
    tok *t = peek(P);
    if (is_sym(t, "(")) {
        next(P);
        HS_CHECK(parse_expr(P, sc, out));
        return expect_sym(P, ")");
    }
    if (is_sym(t, "-")) {
        next(P);
        expr *e = node(P, 'u');
        if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        HS_CHECK(parse_primary(P, sc, &e->a));
        *out = e;
        return HS_OK;
    }
    if (t->k == T_NUM || is_id(t, "pi")) {
        expr *e = node(P, 'n');
        if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        e->v = t->k == T_NUM ? t->v : M_PI;
        next(P);
        *out = e;
        return HS_OK;
    }
    if (t->k == T_ID) {
        for (int i = 0; i < NFUNCS; i++)
            if (is_id(t, g_funcs[i])) {
                next(P);
                expr *e = node(P, 'f');
                if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
                e->idx = i;
                HS_CHECK(expect_sym(P, "("));
                HS_CHECK(parse_expr(P, sc, &e->a));
                HS_CHECK(expect_sym(P, ")"));
                *out = e;
                return HS_OK;
            }
        for (int i = 0; sc && i < sc->n; i++)
            if ((int)strlen(sc->names[i]) == t->len && !strncmp(sc->names[i], t->s, t->len)) {
                expr *e = node(P, 'p');
                if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
                e->idx = i;
                next(P);
                *out = e;
                return HS_OK;
            }
        return err_at(P, t, "unknown identifier in expression%s", sc ? "" : " (only gate bodies have parameters)");
    }
    return err_at(P, t, "expected an expression%s", "");
}

static int parse_power(parser *P, const scope *sc, expr **out)
{
    HS_CHECK(parse_primary(P, sc, out));
    if (is_sym(peek(P), "^")) {
        next(P);
        expr *e = node(P, '^');
        if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        e->a = *out;
        HS_CHECK(parse_power(P, sc, &e->b)); /* right associative */
        *out = e;
    }
    return HS_OK;
}

static int parse_term(parser *P, const scope *sc, expr **out)
{
    HS_CHECK(parse_power(P, sc, out));
    while (is_sym(peek(P), "*") || is_sym(peek(P), "/")) {
        expr *e = node(P, next(P)->s[0]);
        if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        e->a = *out;
        HS_CHECK(parse_power(P, sc, &e->b));
        *out = e;
    }
    return HS_OK;
}

static int parse_expr(parser *P, const scope *sc, expr **out)
{
    HS_CHECK(parse_term(P, sc, out));
    while (is_sym(peek(P), "+") || is_sym(peek(P), "-")) {
        expr *e = node(P, next(P)->s[0]);
        if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        e->a = *out;
        HS_CHECK(parse_term(P, sc, &e->b));
        *out = e;
    }
    return HS_OK;
}

static double eval(const expr *e, const double *env)
{
    switch (e->op) {
    case 'n': return e->v;
    case 'p': return env[e->idx];
    case 'u': return -eval(e->a, env);
    case '+': return eval(e->a, env) + eval(e->b, env);
    case '-': return eval(e->a, env) - eval(e->b, env);
    case '*': return eval(e->a, env) * eval(e->b, env);
    case '/': return eval(e->a, env) / eval(e->b, env);
    case '^': return pow(eval(e->a, env), eval(e->b, env));
    default: break;
    }
    double x = eval(e->a, env);
    switch (e->idx) {
    case 0: return sin(x);
    case 1: return cos(x);
    case 2: return tan(x);
    case 3: return exp(x);
    case 4: return log(x);
    case 5: return sqrt(x);
    case 6: return asin(x);
    case 7: return acos(x);
    default: return atan(x);
    }
}

/* ---------------------------------------------------------------- gates */
static int find_user(parser *P, const tok *t)
{
    for (int i = 0; i < P->ngates; i++)
        if ((int)strlen(P->gates[i].name) == t->len && !strncmp(P->gates[i].name, t->s, t->len)) return i;
    return -1;
}

/* Look a gate up by name: user definitions first (they may shadow nothing built in), then the
 * built-in table (qelib1.inc names only after the include). */
static int resolve_gate(parser *P, const tok *t, const hs_qgate_def **bi, int *user, int *np, int *nq)
{
    *user = find_user(P, t);
    *bi = NULL;
    if (*user >= 0) {
        if (P->gates[*user].opaque) return err_at(P, t, "opaque gate cannot be simulated%s", "");
        *np = P->gates[*user].np;
        *nq = P->gates[*user].nq;
        return HS_OK;
    }
    char name[64];
    snprintf(name, sizeof name, "%.*s", t->len > 63 ? 63 : t->len, t->s);
    const hs_qgate_def *d = hs_qgate_find(name);
    if (d && (!d->std || P->qelib)) {
        *bi = d;
        *np = d->nparams;
        *nq = d->nctrl + d->ntarg;
        return HS_OK;
    }
    if (d) return err_at(P, t, "undefined gate (it is in qelib1.inc: add 'include \"qelib1.inc\";')%s", "");
    return err_at(P, t, "undefined gate%s", "");
}

static int emit_builtin(parser *P, const hs_qgate_def *d, const double *p, const int *qs)
{
    double m[32];
    d->build(p, m);
    uint64_t cm = 0;
    for (int j = 0; j < d->nctrl; j++) cm |= 1ull << qs[j];
    hs_qop *op = hs_circuit_gate(P->c, d->name, d->ntarg, qs + d->nctrl, cm, cm, m);
    if (!op) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    op->line = P->line;
    op->cond = P->cond;
    op->cond_off = P->cond_off;
    op->cond_len = P->cond_len;
    op->cond_value = P->cond_value;
    return HS_OK;
}

static int expand(parser *P, const hs_qgate_def *bi, int user, const double *p, const int *qs, int depth)
{
    if (bi) return emit_builtin(P, bi, p, qs);
    if (depth > 64) return HS_FAIL(HS_ERR_INPUT, "gate definitions nested too deeply");
    const gdef *g = &P->gates[user];
    for (int i = 0; i < g->ncalls; i++) {
        const call *cl = &g->calls[i];
        if (cl->is_barrier) continue;
        double v[16];
        int q[16];
        for (int j = 0; j < cl->np; j++) v[j] = eval(cl->p[j], p);
        for (int j = 0; j < cl->nq; j++) q[j] = qs[cl->q[j]];
        HS_CHECK(expand(P, cl->builtin, cl->user, v, q, depth + 1));
    }
    return HS_OK;
}

static int name_list(parser *P, char (*names)[64], int max, int *n, const char *what, const char *end)
{
    *n = 0;
    if (is_sym(peek(P), end)) return HS_OK;
    for (;;) {
        if (*n >= max) return err_at(P, peek(P), "too many %s", what);
        HS_CHECK(expect_id(P, names[*n], 64, what));
        for (int i = 0; i < *n; i++)
            if (!strcmp(names[i], names[*n])) return err_at(P, &P->src->t[P->src->pos - 1], "duplicate %s", what);
        (*n)++;
        if (!is_sym(peek(P), ",")) return HS_OK;
        next(P);
    }
}

static int add_call(gdef *g, call *cl)
{
    call *nc = realloc(g->calls, (size_t)(g->ncalls + 1) * sizeof *nc);
    if (!nc) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    g->calls = nc;
    g->calls[g->ncalls++] = *cl;
    return HS_OK;
}

static int parse_body_call(parser *P, gdef *g, const scope *ps, char (*qn)[64], int nqn)
{
    tok *name = peek(P);
    call cl = {0};
    if (is_id(name, "barrier")) {
        next(P);
        cl.is_barrier = 1;
        while (!is_sym(peek(P), ";") && peek(P)->k != T_EOF) next(P);
        HS_CHECK(expect_sym(P, ";"));
        return add_call(g, &cl);
    }
    if (name->k != T_ID) return err_at(P, name, "expected a gate call in the gate body%s", "");
    next(P);
    int np, nq;
    HS_CHECK(resolve_gate(P, name, &cl.builtin, &cl.user, &np, &nq));
    cl.p = calloc((size_t)np + 1, sizeof *cl.p);
    cl.q = calloc((size_t)nq + 1, sizeof *cl.q);
    if (!cl.p || !cl.q) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    if (is_sym(peek(P), "(")) {
        next(P);
        while (!is_sym(peek(P), ")")) {
            if (cl.np >= np) {
                char buf[32];
                snprintf(buf, sizeof buf, "%d", np);
                free(cl.p), free(cl.q);
                return err_at(P, name, "wrong number of parameters: the gate takes %s", buf);
            }
            HS_CHECK(parse_expr(P, ps, &cl.p[cl.np++]));
            if (is_sym(peek(P), ",")) next(P);
            else if (!is_sym(peek(P), ")")) return err_at(P, peek(P), "expected ',' or ')'%s", "");
        }
        next(P);
    }
    if (cl.np != np) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", np);
        free(cl.p), free(cl.q);
        return err_at(P, name, "wrong number of parameters: the gate takes %s", buf);
    }
    for (;;) {
        tok *a = peek(P);
        if (a->k != T_ID) return err_at(P, a, "expected a qubit argument%s", "");
        int k = -1;
        for (int i = 0; i < nqn; i++)
            if ((int)strlen(qn[i]) == a->len && !strncmp(qn[i], a->s, a->len)) k = i;
        if (k < 0) return err_at(P, a, "not a qubit argument of this gate%s", "");
        if (cl.nq >= nq) return err_at(P, a, "too many qubit arguments%s", "");
        for (int i = 0; i < cl.nq; i++)
            if (cl.q[i] == k) return err_at(P, a, "duplicate qubit argument%s", "");
        cl.q[cl.nq++] = k;
        next(P);
        if (!is_sym(peek(P), ",")) break;
        next(P);
    }
    if (cl.nq != nq) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", nq);
        return err_at(P, name, "wrong number of qubit arguments: the gate takes %s", buf);
    }
    HS_CHECK(expect_sym(P, ";"));
    return add_call(g, &cl);
}

static int parse_gate_def(parser *P, int opaque)
{
    if (P->ngates == P->capgates) {
        int cap = P->capgates ? 2 * P->capgates : 16;
        gdef *ng = realloc(P->gates, (size_t)cap * sizeof *ng);
        if (!ng) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        P->gates = ng;
        P->capgates = cap;
    }
    gdef g = {0};
    g.opaque = opaque;
    tok *nt = peek(P);
    HS_CHECK(expect_id(P, g.name, sizeof g.name, "a gate name"));
    if (find_user(P, nt) >= 0 || (hs_qgate_find(g.name) && (P->qelib || !hs_qgate_find(g.name)->std)))
        return err_at(P, nt, "gate already defined%s", "");
    char pn[16][64], qn[16][64];
    if (is_sym(peek(P), "(")) {
        next(P);
        HS_CHECK(name_list(P, pn, 16, &g.np, "parameter names", ")"));
        HS_CHECK(expect_sym(P, ")"));
    }
    HS_CHECK(name_list(P, qn, 16, &g.nq, "qubit arguments", "{"));
    if (g.nq == 0) return err_at(P, peek(P), "a gate needs at least one qubit argument%s", "");
    if (opaque) {
        HS_CHECK(expect_sym(P, ";"));
    } else {
        HS_CHECK(expect_sym(P, "{"));
        scope ps = {g.np, pn};
        while (!is_sym(peek(P), "}")) {
            if (peek(P)->k == T_EOF) return err_at(P, peek(P), "expected '}' to close gate '%s'", g.name);
            int rc = parse_body_call(P, &g, &ps, qn, g.nq);
            if (rc) {
                free(g.calls);
                return rc;
            }
        }
        next(P);
    }
    P->gates[P->ngates++] = g;
    return HS_OK;
}

/* ---------------------------------------------------------------- program statements */
typedef struct {
    int reg;      /* index into qregs / cregs */
    int index;    /* -1: the whole register */
    tok *t;
} argref;

static int find_reg(const hs_qreg_decl *r, int n, const tok *t)
{
    for (int i = 0; i < n; i++)
        if ((int)strlen(r[i].name) == t->len && !strncmp(r[i].name, t->s, t->len)) return i;
    return -1;
}

static int parse_arg(parser *P, int classical, argref *a)
{
    tok *t = peek(P);
    if (t->k != T_ID) return err_at(P, t, "expected a %s", classical ? "classical register or bit" : "qubit register or qubit");
    const hs_qreg_decl *regs = classical ? P->c->cregs : P->c->qregs;
    int nregs = classical ? P->c->ncregs : P->c->nqregs;
    a->reg = find_reg(regs, nregs, t);
    a->t = t;
    if (a->reg < 0) {
        int other = find_reg(classical ? P->c->qregs : P->c->cregs, classical ? P->c->nqregs : P->c->ncregs, t);
        return err_at(P, t, other >= 0 ? "not a %s register" : "undeclared %s register", classical ? "classical" : "quantum");
    }
    next(P);
    a->index = -1;
    if (is_sym(peek(P), "[")) {
        next(P);
        tok *it = peek(P);
        HS_CHECK(expect_int(P, &a->index, "an index"));
        if (a->index >= regs[a->reg].len) {
            char buf[128];
            snprintf(buf, sizeof buf, "%s %s[%d]", classical ? "creg" : "qreg", regs[a->reg].name, regs[a->reg].len);
            return err_at(P, it, "index out of range for %s", buf);
        }
        HS_CHECK(expect_sym(P, "]"));
    }
    return HS_OK;
}

/* Number of broadcast repetitions of a list of arguments (1 when all are single bits). */
static int broadcast(parser *P, const argref *a, int n, int classical_from, int *reps)
{
    *reps = 1;
    int set = 0;
    for (int i = 0; i < n; i++) {
        if (a[i].index >= 0) continue;
        int len = i >= classical_from ? P->c->cregs[a[i].reg].len : P->c->qregs[a[i].reg].len;
        if (set && len != *reps) return err_at(P, a[i].t, "registers of different sizes in one statement%s", "");
        *reps = len;
        set = 1;
    }
    return HS_OK;
}

static int bit_of(parser *P, const argref *a, int rep, int classical)
{
    const hs_qreg_decl *r = classical ? &P->c->cregs[a->reg] : &P->c->qregs[a->reg];
    return r->off + (a->index >= 0 ? a->index : rep);
}

static int stmt_gate_call(parser *P)
{
    tok *name = next(P);
    const hs_qgate_def *bi;
    int user, np, nq;
    P->line = name->line;
    HS_CHECK(resolve_gate(P, name, &bi, &user, &np, &nq));
    double v[16];
    int n = 0;
    if (is_sym(peek(P), "(")) {
        next(P);
        while (!is_sym(peek(P), ")")) {
            expr *e;
            HS_CHECK(parse_expr(P, NULL, &e));
            if (n < 16) v[n] = eval(e, NULL);
            n++;
            if (is_sym(peek(P), ",")) next(P);
            else if (!is_sym(peek(P), ")")) return err_at(P, peek(P), "expected ',' or ')'%s", "");
        }
        next(P);
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%d", np);
    if (n != np) return err_at(P, name, "wrong number of parameters: the gate takes %s", buf);
    argref a[16];
    int na = 0;
    for (;;) {
        if (na >= 16) return err_at(P, peek(P), "too many arguments%s", "");
        HS_CHECK(parse_arg(P, 0, &a[na++]));
        if (!is_sym(peek(P), ",")) break;
        next(P);
    }
    snprintf(buf, sizeof buf, "%d", nq);
    if (na != nq) return err_at(P, name, "wrong number of qubit arguments: the gate takes %s", buf);
    HS_CHECK(expect_sym(P, ";"));
    int reps;
    HS_CHECK(broadcast(P, a, na, na, &reps));
    for (int r = 0; r < reps; r++) {
        int qs[16];
        for (int i = 0; i < na; i++) {
            qs[i] = bit_of(P, &a[i], r, 0);
            for (int j = 0; j < i; j++)
                if (qs[j] == qs[i]) return err_at(P, a[i].t, "the same qubit is used twice in one gate%s", "");
        }
        HS_CHECK(expand(P, bi, user, v, qs, 0));
    }
    return HS_OK;
}

static hs_qop *set_cond(parser *P, hs_qop *op, int line)
{
    if (!op) return NULL;
    op->line = line;
    op->cond = P->cond;
    op->cond_off = P->cond_off;
    op->cond_len = P->cond_len;
    op->cond_value = P->cond_value;
    return op;
}

static int stmt_measure(parser *P)
{
    int line = next(P)->line;
    argref a[2];
    HS_CHECK(parse_arg(P, 0, &a[0]));
    HS_CHECK(expect_sym(P, "->"));
    HS_CHECK(parse_arg(P, 1, &a[1]));
    HS_CHECK(expect_sym(P, ";"));
    if ((a[0].index < 0) != (a[1].index < 0))
        return err_at(P, a[1].t, "measure needs a register on both sides or a bit on both sides%s", "");
    int reps;
    HS_CHECK(broadcast(P, a, 2, 1, &reps));
    for (int r = 0; r < reps; r++)
        if (!set_cond(P, hs_circuit_measure(P->c, bit_of(P, &a[0], r, 0), bit_of(P, &a[1], r, 1)), line))
            return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    return HS_OK;
}

static int stmt_reset(parser *P)
{
    int line = next(P)->line;
    argref a;
    HS_CHECK(parse_arg(P, 0, &a));
    HS_CHECK(expect_sym(P, ";"));
    int reps;
    HS_CHECK(broadcast(P, &a, 1, 1, &reps));
    for (int r = 0; r < reps; r++)
        if (!set_cond(P, hs_circuit_reset(P->c, bit_of(P, &a, r, 0)), line)) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    return HS_OK;
}

static int stmt_barrier(parser *P)
{
    next(P);
    for (;;) {
        argref a;
        HS_CHECK(parse_arg(P, 0, &a));
        if (!is_sym(peek(P), ",")) break;
        next(P);
    }
    return expect_sym(P, ";");
}

static int stmt_reg(parser *P)
{
    tok *kw = next(P);
    int classical = kw->s[0] == 'c';
    hs_qreg_decl d = {0};
    tok *nt = peek(P);
    HS_CHECK(expect_id(P, d.name, sizeof d.name, "a register name"));
    if (find_reg(P->c->qregs, P->c->nqregs, nt) >= 0 || find_reg(P->c->cregs, P->c->ncregs, nt) >= 0)
        return err_at(P, nt, "register already declared%s", "");
    HS_CHECK(expect_sym(P, "["));
    tok *st = peek(P);
    HS_CHECK(expect_int(P, &d.len, "a register size"));
    if (d.len < 1) return err_at(P, st, "a register needs at least one bit%s", "");
    HS_CHECK(expect_sym(P, "]"));
    HS_CHECK(expect_sym(P, ";"));
    if ((classical ? P->c->ncregs : P->c->nqregs) >= 64) return err_at(P, nt, "more than 64 registers%s", "");
    if (classical) {
        d.off = P->c->nclbits;
        if (d.off + d.len > 4096) return err_at(P, st, "more than 4096 classical bits%s", "");
        P->c->cregs[P->c->ncregs++] = d;
        P->c->nclbits += d.len;
    } else {
        d.off = P->c->nqubits;
        if (d.off + d.len > HS_Q_MAX_QUBITS) {
            char buf[96];
            snprintf(buf, sizeof buf, "%d qubits in all; at most %d can be simulated", d.off + d.len, HS_Q_MAX_QUBITS);
            return err_at(P, st, "register too large: %s", buf);
        }
        if (!P->c->nqregs) P->c->qreg_line = kw->line;
        P->c->qregs[P->c->nqregs++] = d;
        P->c->nqubits += d.len;
    }
    return HS_OK;
}

static int stmt_if(parser *P)
{
    tok *kw = next(P);
    if (P->cond) return err_at(P, kw, "nested if%s", "");
    HS_CHECK(expect_sym(P, "("));
    tok *rt = peek(P);
    if (rt->k != T_ID) return err_at(P, rt, "expected a classical register%s", "");
    int r = find_reg(P->c->cregs, P->c->ncregs, rt);
    if (r < 0) return err_at(P, rt, "undeclared classical register%s", "");
    next(P);
    HS_CHECK(expect_sym(P, "=="));
    int v = 0;
    tok *vt = peek(P);
    HS_CHECK(expect_int(P, &v, "an integer"));
    if (P->c->cregs[r].len < 31 && (v >> P->c->cregs[r].len)) return err_at(P, vt, "value does not fit the register%s", "");
    if (P->c->cregs[r].len > 64) return err_at(P, rt, "conditions on registers over 64 bits are not supported%s", "");
    HS_CHECK(expect_sym(P, ")"));
    P->cond = 1;
    P->cond_off = P->c->cregs[r].off;
    P->cond_len = P->c->cregs[r].len;
    P->cond_value = (uint64_t)v;
    tok *t = peek(P);
    int rc;
    if (is_id(t, "measure")) rc = stmt_measure(P);
    else if (is_id(t, "reset")) rc = stmt_reset(P);
    else if (t->k == T_ID) rc = stmt_gate_call(P);
    else rc = err_at(P, t, "expected a quantum operation after if (...)%s", "");
    P->cond = 0;
    return rc;
}

static int parse_source(parser *P, source *s);

static int stmt_include(parser *P)
{
    next(P);
    tok *ft = peek(P);
    if (ft->k != T_STR) return err_at(P, ft, "expected a file name in double quotes%s", "");
    next(P);
    HS_CHECK(expect_sym(P, ";"));
    char name[1024];
    snprintf(name, sizeof name, "%.*s", ft->len - 2, ft->s + 1);
    if (!strcmp(name, "qelib1.inc")) {
        if (P->qelib) return HS_OK;
        P->qelib = 1;
        source s;
        HS_CHECK(lex("qelib1.inc", hs_qelib1_extra, &s));
        int rc = parse_source(P, &s);
        free(s.t);
        return rc;
    }
    if (P->depth > 8) return err_at(P, ft, "includes nested too deeply%s", "");
    char path[2100];
    snprintf(path, sizeof path, "%s%s", name[0] == '/' ? "" : P->dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return err_at(P, ft, "cannot open include file: %s", strerror(errno));
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)len + 1);
    if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        free(text);
        return err_at(P, ft, "cannot read include file%s", "");
    }
    fclose(f);
    text[len] = '\0';
    char *keep = strdup(path);
    source s;
    int rc = lex(keep, text, &s);
    if (rc == HS_OK) {
        P->depth++;
        rc = parse_source(P, &s);
        P->depth--;
        free(s.t);
    }
    free(text);
    free(keep);
    return rc;
}

static int stmt_gate(parser *P)
{
    int opaque = is_id(next(P), "opaque");
    return parse_gate_def(P, opaque);
}

typedef struct {
    const char *kw;
    int (*fn)(parser *P);
} stmt_entry;

static const stmt_entry g_stmts[] = {
    {"include", stmt_include}, {"qreg", stmt_reg},        {"creg", stmt_reg},       {"gate", stmt_gate},
    {"opaque", stmt_gate},     {"measure", stmt_measure}, {"reset", stmt_reset},    {"barrier", stmt_barrier},
    {"if", stmt_if},
};

static int parse_source(parser *P, source *s)
{
    source *outer = P->src;
    P->src = s;
    int rc = HS_OK;
    while (rc == HS_OK && peek(P)->k != T_EOF) {
        tok *t = peek(P);
        if (t->k != T_ID) {
            rc = err_at(P, t, "expected a statement%s", "");
            break;
        }
        const stmt_entry *e = NULL;
        for (size_t i = 0; i < sizeof g_stmts / sizeof g_stmts[0]; i++)
            if (is_id(t, g_stmts[i].kw)) e = &g_stmts[i];
        if (is_id(t, "OPENQASM")) rc = err_at(P, t, "OPENQASM must be the first statement%s", "");
        else rc = e ? e->fn(P) : stmt_gate_call(P);
    }
    P->src = outer;
    return rc;
}

static int parse_header(parser *P)
{
    tok *t = peek(P);
    if (!is_id(t, "OPENQASM")) return err_at(P, t, "expected 'OPENQASM 2.0;' first%s", "");
    next(P);
    tok *v = peek(P);
    if (v->k != T_NUM) return err_at(P, v, "expected a version number%s", "");
    if (v->v < 2.0 || v->v >= 3.0) return err_at(P, v, "only OpenQASM 2.x is supported%s", "");
    next(P);
    return expect_sym(P, ";");
}

static void free_parser(parser *P)
{
    for (int i = 0; i < P->ngates; i++) {
        for (int j = 0; j < P->gates[i].ncalls; j++) {
            free(P->gates[i].calls[j].p);
            free(P->gates[i].calls[j].q);
        }
        free(P->gates[i].calls);
    }
    free(P->gates);
    for (int i = 0; i < P->npool; i++) free(P->pool[i]);
    free(P->pool);
}

int hs_qasm_parse_string(const char *name, const char *text, hs_circuit **out)
{
    parser P;
    memset(&P, 0, sizeof P);
    const char *slash = strrchr(name, '/');
    if (slash) snprintf(P.dir, sizeof P.dir, "%.*s/", (int)(slash - name), name);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        if (*c < 0x09 || (*c > 0x0d && *c < 0x20)) {
            return hs_input_error(name, 0, NULL, "binary data (byte 0x%02x): not an OpenQASM file", *c);
        }
    P.c = hs_circuit_new(0, 0);
    if (!P.c) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    source s;
    int rc = lex(name, text, &s);
    if (rc == HS_OK) {
        P.src = &s;
        rc = parse_header(&P);
        if (rc == HS_OK) rc = parse_source(&P, &s);
        if (rc == HS_OK && P.c->nqubits == 0) rc = hs_input_error(name, 0, NULL, "the program declares no qubits (qreg)");
        free(s.t);
    }
    free_parser(&P);
    if (rc != HS_OK) {
        hs_circuit_free(P.c);
        return rc;
    }
    *out = P.c;
    return HS_OK;
}

int hs_qasm_parse_file(const char *path, hs_circuit **out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return hs_input_error(path, 0, NULL, "cannot open OpenQASM file: %s", strerror(errno));
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len > (64l << 20)) {
        fclose(f);
        return hs_input_error(path, 0, NULL, "OpenQASM file over 64 MiB");
    }
    char *text = malloc((size_t)len + 1);
    if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        free(text);
        return hs_input_error(path, 0, NULL, "cannot read OpenQASM file");
    }
    fclose(f);
    text[len] = '\0';
    if (strlen(text) != (size_t)len) {
        free(text);
        return hs_input_error(path, 0, NULL, "binary data (byte 0x00): not an OpenQASM file");
    }
    int rc = hs_qasm_parse_string(path, text, out);
    free(text);
    return rc;
}
