/* OpenQASM 2.0 reader: a lexer, a recursive-descent parser and gate expansion into circuit ops.
 * Statements are dispatched on their first keyword, so an OpenQASM 3 subset (qubit[n], gate
 * modifiers) can be added as more entries without touching the expression or expansion code. */
#include "solvers/quantum/qasm.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/params.h"
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
    int height;       /* levels of the tree from here down (a leaf is 1) */
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
    uint64_t nops;    /* operations one application expands to (saturating at UINT64_MAX) */
    int depth;        /* nesting: 1 + the deepest user gate the body calls */
} gdef;

typedef struct parser {
    source *src;
    hs_circuit *c;
    gdef *gates;
    int ngates, capgates;
    int qelib;
    int depth;
    int expr_nest;    /* parse_unary calls open now (expression nesting being parsed) */
    char *dir;        /* folder of the file being read, with its '/' ("" for the working folder) */
    const tok *stmt;  /* the gate call being expanded (where expansion errors are reported) */
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
    char where[PATH_MAX + 64], msg[512], tt[64];
    snprintf(where, sizeof where, "%s:%d:%d", P->src->name, t->line, t->col);
    snprintf(msg, sizeof msg, fmt, a);
    tok_text(t, tt, sizeof tt);
    return hs_input_error(where, 0, NULL, "%s (at '%s')", msg, tt);
}

/* Bytes of the UTF-8 character at s, or 0 when s does not start a well-formed one. */
static int utf8_len(const unsigned char *s)
{
    int n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    for (int k = 1; k < n; k++)
        if ((s[k] & 0xc0) != 0x80) return 0;
    return n;
}

/* A line ends at LF, CRLF or a bare CR (classic Mac files): with CR ends not counted, every error
 * was on line 1 and a // comment swallowed the rest of the program. */
static int line_break(const char *p)
{
    return *p == '\n' || (*p == '\r' && p[1] != '\n');
}

static int lex(const char *name, const char *text, source *out)
{
    int cap = 256, n = 0, line = 1;
    const char *p = text, *lstart = text;
    if (!strncmp(p, "\xef\xbb\xbf", 3)) lstart = p += 3; /* a UTF-8 byte-order mark, as the INI reader allows */
    tok *t = malloc((size_t)cap * sizeof *t);
    if (!t) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (;;) {
        while (*p) {
            if (line_break(p)) p++, line++, lstart = p;
            else if (isspace((unsigned char)*p)) p++;
            else if (p[0] == '/' && p[1] == '/') while (*p && !line_break(p)) p++;
            else if (p[0] == '/' && p[1] == '*') {
                int cline = line, ccol = (int)(p - lstart) + 1;
                p += 2;
                while (*p && !(p[0] == '*' && p[1] == '/')) {
                    if (line_break(p)) line++, lstart = p + 1;
                    p++;
                }
                if (!*p) { /* the rest of the file would vanish into the comment, and the run with it */
                    char where[PATH_MAX + 64];
                    snprintf(where, sizeof where, "%s:%d:%d", name, cline, ccol);
                    free(t);
                    return hs_input_error(where, 0, NULL, "unterminated comment: '/*' without its '*/'");
                }
                p += 2;
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
            /* OpenQASM's decimal grammar, [0-9]+(.[0-9]*)?([eE][+-]?[0-9]+)? or .[0-9]+...: strtod
             * alone also read hexadecimal (rx(0x10) ran as rx(16)) */
            const char *e = p;
            while (isdigit((unsigned char)*e)) e++;
            if (*e == '.')
                for (e++; isdigit((unsigned char)*e); e++) {}
            if ((*e == 'e' || *e == 'E') &&
                (isdigit((unsigned char)e[1]) || ((e[1] == '+' || e[1] == '-') && isdigit((unsigned char)e[2]))))
                for (e += 2; isdigit((unsigned char)*e); e++) {}
            const char *tail = e;
            while (isalnum((unsigned char)*tail) || *tail == '_' || *tail == '.') tail++;
            char num[64], where[PATH_MAX + 64];
            const char *why = tail != e ? "is not a decimal number" : e - p >= (ptrdiff_t)sizeof num ? "is too long a number" : NULL;
            if (!why) {
                memcpy(num, p, (size_t)(e - p));
                num[e - p] = '\0';
                why = hs_parse_real(num, &k->v);
            }
            if (why) {
                snprintf(where, sizeof where, "%s:%d:%d", name, k->line, k->col);
                free(t);
                return hs_input_error(where, 0, NULL, "'%.*s' %s", (int)(tail - p > 40 ? 40 : tail - p), p, why);
            }
            k->is_int = 1;
            for (const char *c = p; c < e; c++)
                if (!isdigit((unsigned char)*c)) k->is_int = 0;
            p = e;
            k->k = T_NUM;
        } else if (*p == '"') {
            p++;
            while (*p && *p != '"' && !line_break(p)) p++;
            if (*p != '"') {
                char where[PATH_MAX + 64];
                snprintf(where, sizeof where, "%s:%d:%d", name, k->line, k->col);
                free(t);
                return hs_input_error(where, 0, NULL, "unterminated string");
            }
            p++;
            k->k = T_STR;
        } else if ((unsigned char)*p >= 0x80) {
            /* named whole: the message quoted the first byte of 'é' alone, which is not UTF-8 */
            char where[PATH_MAX + 64], what[48];
            const unsigned char *b = (const unsigned char *)p;
            int u = utf8_len(b);
            unsigned cp = u ? b[0] & (0x7f >> u) : 0; /* the code point: a no-break space shows as nothing */
            for (int j = 1; j < u; j++) cp = cp << 6 | (b[j] & 0x3f);
            snprintf(where, sizeof where, "%s:%d:%d", name, k->line, k->col);
            if (u) snprintf(what, sizeof what, "character '%.*s' (U+%04X)", u, p, cp);
            else snprintf(what, sizeof what, "byte 0x%02x", (unsigned char)*p);
            free(t);
            return hs_input_error(where, 0, NULL, "non-ASCII %s: OpenQASM 2 is ASCII outside comments and strings", what);
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

/* An unsigned integer of up to 64 bits, read from the token's digits: an `if` compares a register of
 * up to 64 bits, and the value went through expect_int's 1e9 cap (2^31 on a 40-bit register was
 * "expected an integer"), and a double holds only 53 bits exactly. */
static int expect_uint64(parser *P, uint64_t *v, const char *what)
{
    tok *t = peek(P);
    if (t->k != T_NUM || !t->is_int) return err_at(P, t, "expected %s", what);
    uint64_t x = 0;
    for (int i = 0; i < t->len; i++) {
        uint64_t d = (uint64_t)(t->s[i] - '0');
        if (x > (UINT64_MAX - d) / 10) return err_at(P, t, "value does not fit in 64 bits%s", "");
        x = x * 10 + d;
    }
    *v = x;
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

/* Both the parser and eval_node recurse once per level of an expression, so a deep one (100,000
 * nested '(' or signs, or 300,000 chained '+1') overflowed the stack; real circuits nest a few
 * levels, so deeper ones are refused as input errors (1000: Python's recursion limit, which
 * Qiskit's reader runs under; a few hundred kB of stack even with AddressSanitizer's frames). */
enum { MAX_EXPR_DEPTH = 1000 };

static int too_deep(parser *P, const tok *at)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%d", MAX_EXPR_DEPTH);
    return err_at(P, at, "expression nested too deeply: at most %s levels of parentheses, signs and operators", buf);
}

/* e's height from its operands (set before the call); refuses a tree deeper than MAX_EXPR_DEPTH. */
static int set_height(parser *P, expr *e, const tok *at)
{
    int ha = e->a ? e->a->height : 0, hb = e->b ? e->b->height : 0;
    e->height = 1 + (ha > hb ? ha : hb);
    return e->height > MAX_EXPR_DEPTH ? too_deep(P, at) : HS_OK;
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
    if (t->k == T_NUM || is_id(t, "pi")) {
        expr *e = node(P, 'n');
        if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        e->v = t->k == T_NUM ? t->v : M_PI;
        e->height = 1;
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
                HS_CHECK(set_height(P, e, t));
                HS_CHECK(expect_sym(P, ")"));
                *out = e;
                return HS_OK;
            }
        for (int i = 0; sc && i < sc->n; i++)
            if ((int)strlen(sc->names[i]) == t->len && !strncmp(sc->names[i], t->s, t->len)) {
                expr *e = node(P, 'p');
                if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
                e->idx = i;
                e->height = 1;
                next(P);
                *out = e;
                return HS_OK;
            }
        return err_at(P, t, "unknown identifier in expression%s", sc ? "" : " (only gate bodies have parameters)");
    }
    return err_at(P, t, "expected an expression%s", "");
}

static int parse_unary(parser *P, const scope *sc, expr **out);

/* primary ^ unary: right associative, and the exponent may carry a sign (2^-2 = 0.25) */
static int parse_power(parser *P, const scope *sc, expr **out)
{
    HS_CHECK(parse_primary(P, sc, out));
    if (is_sym(peek(P), "^")) {
        const tok *op = next(P);
        expr *e = node(P, '^');
        if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        e->a = *out;
        HS_CHECK(parse_unary(P, sc, &e->b));
        HS_CHECK(set_height(P, e, op));
        *out = e;
    }
    return HS_OK;
}

/* A sign binds more loosely than ^, as in mathematics and OpenQASM 2's grammar (-2^2 = -4; it was
 * read as (-2)^2 = 4, and -2^0.5 as NaN); unary plus is allowed as in Qiskit's reader. */
static int parse_signed(parser *P, const scope *sc, expr **out)
{
    if (is_sym(peek(P), "+")) {
        next(P);
        return parse_unary(P, sc, out);
    }
    if (is_sym(peek(P), "-")) {
        const tok *op = next(P);
        expr *e = node(P, 'u');
        if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        HS_CHECK(parse_unary(P, sc, &e->a));
        HS_CHECK(set_height(P, e, op));
        *out = e;
        return HS_OK;
    }
    return parse_power(P, sc, out);
}

/* Every recursion of the expression grammar passes through here ('(' and function calls through
 * parse_expr, signs and '^' directly): the one place that bounds the parser's stack. */
static int parse_unary(parser *P, const scope *sc, expr **out)
{
    if (P->expr_nest >= MAX_EXPR_DEPTH) return too_deep(P, peek(P));
    P->expr_nest++;
    int rc = parse_signed(P, sc, out);
    P->expr_nest--;
    return rc;
}

static int parse_term(parser *P, const scope *sc, expr **out)
{
    HS_CHECK(parse_unary(P, sc, out));
    while (is_sym(peek(P), "*") || is_sym(peek(P), "/")) {
        const tok *op = next(P);
        expr *e = node(P, op->s[0]);
        if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        e->a = *out;
        HS_CHECK(parse_unary(P, sc, &e->b));
        HS_CHECK(set_height(P, e, op));
        *out = e;
    }
    return HS_OK;
}

static int parse_expr(parser *P, const scope *sc, expr **out)
{
    HS_CHECK(parse_term(P, sc, out));
    while (is_sym(peek(P), "+") || is_sym(peek(P), "-")) {
        const tok *op = next(P);
        expr *e = node(P, op->s[0]);
        if (!e) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        e->a = *out;
        HS_CHECK(parse_term(P, sc, &e->b));
        HS_CHECK(set_height(P, e, op));
        *out = e;
    }
    return HS_OK;
}

/* The first operation of an expression that gave a value that is not finite, and that value. */
typedef struct {
    const char *what;
    double v;
} nonfinite;

static double eval_node(const expr *e, const double *env, nonfinite *nf)
{
    static const char *const binop[] = {"+", "-", "*", "/", "^"};
    if (e->op == 'n') return e->v;
    if (e->op == 'p') return env[e->idx];
    double x = eval_node(e->a, env, nf), y = 0, r;
    if (nf->what) return NAN;
    if (e->op != 'u' && e->op != 'f') {
        y = eval_node(e->b, env, nf);
        if (nf->what) return NAN;
    }
    const char *what;
    switch (e->op) {
    case 'u': return -x;
    case '+': r = x + y, what = binop[0]; break;
    case '-': r = x - y, what = binop[1]; break;
    case '*': r = x * y, what = binop[2]; break;
    case '/': r = x / y, what = binop[3]; break;
    case '^': r = pow(x, y), what = binop[4]; break;
    default: {
        static double (*const fn[])(double) = {sin, cos, tan, exp, log, sqrt, asin, acos, atan};
        r = fn[e->idx](x);
        what = g_funcs[e->idx];
        break;
    }
    }
    if (!isfinite(r)) nf->what = what, nf->v = r;
    return r;
}

/* Value of e for the parameters env.  Returns 0, or -1 when a value on the way (not only the
 * result) is not finite: division by zero, overflow in exp or ^, ln(0), sqrt(-1), ...; *nf says
 * which operation gave what. */
static int eval(const expr *e, const double *env, double *out, nonfinite *nf)
{
    nf->what = NULL;
    *out = eval_node(e, env, nf);
    return nf->what ? -1 : 0;
}

/* "parameter K of 'GATE'[ in the body of gate 'OUTER'] is not a finite number ('OP' gives V)" at t. */
static int nonfinite_error(parser *P, const tok *t, int k, const char *gate, const char *outer, const nonfinite *nf)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, "parameter %d of '%s'", k + 1, gate);
    if (outer) n += snprintf(msg + n, sizeof msg - (size_t)n, " in the body of gate '%s'", outer);
    snprintf(msg + n, sizeof msg - (size_t)n, " is not a finite number ('%s' gives %s)", nf->what,
             isnan(nf->v) ? "nan" : nf->v > 0 ? "inf" : "-inf");
    return err_at(P, t, "%s", msg);
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

/* Apply a gate: a built-in one as one operation, a user gate by expanding its body with the
 * parameters p (nesting is bounded by the definitions' depth, checked when they are defined). */
static int expand(parser *P, const hs_qgate_def *bi, int user, const double *p, const int *qs)
{
    if (bi) return emit_builtin(P, bi, p, qs);
    const gdef *g = &P->gates[user];
    for (int i = 0; i < g->ncalls; i++) {
        const call *cl = &g->calls[i];
        if (cl->is_barrier) continue;
        double v[16];
        int q[16];
        for (int j = 0; j < cl->np; j++) {
            nonfinite nf;
            if (eval(cl->p[j], p, &v[j], &nf))
                return nonfinite_error(P, P->stmt, j, cl->builtin ? cl->builtin->name : P->gates[cl->user].name, g->name, &nf);
        }
        for (int j = 0; j < cl->nq; j++) q[j] = qs[cl->q[j]];
        HS_CHECK(expand(P, cl->builtin, cl->user, v, q));
    }
    return HS_OK;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t sat_mul(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

/* Refuse, before building them, `count` more operations (reps applications of `what`) when the
 * circuit would pass HS_QASM_MAX_OPERATIONS; the error names the statement's gate and the count. */
static int reserve_ops(parser *P, const tok *at, const char *what, uint64_t per, uint64_t reps)
{
    uint64_t count = sat_mul(per, reps), total = sat_add((uint64_t)P->c->nops, count);
    if (total <= HS_QASM_MAX_OPERATIONS) return HS_OK;
    char msg[512];
    int n;
    if (count == UINT64_MAX)
        n = snprintf(msg, sizeof msg, "%s expands to at least %llu operations", what, (unsigned long long)count);
    else if (count > HS_QASM_MAX_OPERATIONS)
        n = snprintf(msg, sizeof msg, "%s expands to %llu operations", what, (unsigned long long)count);
    else
        n = snprintf(msg, sizeof msg, "the circuit would have %llu operations after this %s", (unsigned long long)total, what);
    if (reps > 1 && count != UINT64_MAX)
        n += snprintf(msg + n, sizeof msg - (size_t)n, " (%llu per application, %llu applications)", (unsigned long long)per,
                      (unsigned long long)reps);
    snprintf(msg + n, sizeof msg - (size_t)n, "; a circuit may have at most %d", HS_QASM_MAX_OPERATIONS);
    return err_at(P, at, "%s", msg);
}

/* OpenQASM 2's keywords, pi and the functions: a gate's parameter called pi was silently pi in its
 * body whatever the call passed (Qiskit refuses such names, as the grammar does). */
static int reserved_word(const char *name)
{
    static const char *const words[] = {"OPENQASM", "include", "qreg", "creg", "gate", "opaque", "measure",
                                        "reset", "barrier", "if", "U", "CX", "pi", NULL};
    for (int i = 0; words[i]; i++)
        if (!strcmp(name, words[i])) return 1;
    for (int i = 0; i < NFUNCS; i++)
        if (!strcmp(name, g_funcs[i])) return 1;
    return 0;
}

static int name_list(parser *P, char (*names)[64], int max, int *n, const char *what, const char *end)
{
    *n = 0;
    if (is_sym(peek(P), end)) return HS_OK;
    for (;;) {
        if (*n >= max) return err_at(P, peek(P), "too many %s", what);
        HS_CHECK(expect_id(P, names[*n], 64, what));
        if (reserved_word(names[*n])) {
            char msg[160];
            snprintf(msg, sizeof msg, "a reserved word, not a name for %s", what);
            return err_at(P, &P->src->t[P->src->pos - 1], "%s", msg);
        }
        for (int i = 0; i < *n; i++)
            if (!strcmp(names[i], names[*n])) return err_at(P, &P->src->t[P->src->pos - 1], "duplicate %s", what);
        (*n)++;
        if (!is_sym(peek(P), ",")) return HS_OK;
        next(P);
    }
}

static void free_calls(gdef *g)
{
    for (int j = 0; j < g->ncalls; j++) {
        free(g->calls[j].p);
        free(g->calls[j].q);
    }
    free(g->calls);
    g->calls = NULL;
    g->ncalls = 0;
}

static int add_call(gdef *g, call *cl)
{
    call *nc = realloc(g->calls, (size_t)(g->ncalls + 1) * sizeof *nc);
    if (!nc) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    g->calls = nc;
    g->calls[g->ncalls++] = *cl;
    return HS_OK;
}

/* One statement of a gate body into g's calls.  On an error nothing of it is kept (the caller
 * frees the calls made before). */
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
    /* a gate body is unitary: these were reported as "undefined gate" */
    if (is_id(name, "measure") || is_id(name, "reset") || is_id(name, "if") || is_id(name, "gate") || is_id(name, "opaque") ||
        is_id(name, "qreg") || is_id(name, "creg") || is_id(name, "include"))
        return err_at(P, name, "a gate body holds only gate calls and barrier%s", "");
    next(P);
    int np, nq, rc = HS_OK;
    char buf[32];
    HS_CHECK(resolve_gate(P, name, &cl.builtin, &cl.user, &np, &nq));
    cl.p = calloc((size_t)np + 1, sizeof *cl.p);
    cl.q = calloc((size_t)nq + 1, sizeof *cl.q);
    if (!cl.p || !cl.q) {
        rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        goto fail;
    }
    if (is_sym(peek(P), "(")) {
        next(P);
        while (!is_sym(peek(P), ")")) {
            if (cl.np >= np) {
                snprintf(buf, sizeof buf, "%d", np);
                rc = err_at(P, name, "wrong number of parameters: the gate takes %s", buf);
                goto fail;
            }
            if ((rc = parse_expr(P, ps, &cl.p[cl.np++])) != HS_OK) goto fail;
            if (is_sym(peek(P), ",")) next(P);
            else if (!is_sym(peek(P), ")")) {
                rc = err_at(P, peek(P), "expected ',' or ')'%s", "");
                goto fail;
            }
        }
        next(P);
    }
    if (cl.np != np) {
        snprintf(buf, sizeof buf, "%d", np);
        rc = err_at(P, name, "wrong number of parameters: the gate takes %s", buf);
        goto fail;
    }
    for (;;) {
        tok *a = peek(P);
        int k = -1;
        if (a->k != T_ID) {
            rc = err_at(P, a, "expected a qubit argument%s", "");
            goto fail;
        }
        for (int i = 0; i < nqn; i++)
            if ((int)strlen(qn[i]) == a->len && !strncmp(qn[i], a->s, a->len)) k = i;
        if (k < 0) rc = err_at(P, a, "not a qubit argument of this gate%s", "");
        else if (cl.nq >= nq) rc = err_at(P, a, "too many qubit arguments%s", "");
        for (int i = 0; rc == HS_OK && i < cl.nq; i++)
            if (cl.q[i] == k) rc = err_at(P, a, "duplicate qubit argument%s", "");
        if (rc != HS_OK) goto fail;
        cl.q[cl.nq++] = k;
        next(P);
        if (!is_sym(peek(P), ",")) break;
        next(P);
    }
    if (cl.nq != nq) {
        snprintf(buf, sizeof buf, "%d", nq);
        rc = err_at(P, name, "wrong number of qubit arguments: the gate takes %s", buf);
        goto fail;
    }
    if ((rc = expect_sym(P, ";")) != HS_OK) goto fail;
    /* what one application of g costs, and how deep its expansion nests */
    if (cl.builtin) {
        g->nops = sat_add(g->nops, 1);
    } else {
        g->nops = sat_add(g->nops, P->gates[cl.user].nops);
        if (P->gates[cl.user].depth + 1 > g->depth) g->depth = P->gates[cl.user].depth + 1;
    }
    if ((rc = add_call(g, &cl)) == HS_OK) return HS_OK;
fail:
    free(cl.p);
    free(cl.q);
    return rc;
}

/* Gate definitions may nest this deep (the expansion recurses once per level). */
enum { MAX_GATE_DEPTH = 64 };

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
    g.depth = 1;
    tok *nt = peek(P);
    HS_CHECK(expect_id(P, g.name, sizeof g.name, "a gate name"));
    if (reserved_word(g.name)) return err_at(P, nt, "a reserved word, not a name for a gate%s", "");
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
    for (int i = 0; i < g.np; i++)
        for (int j = 0; j < g.nq; j++)
            if (!strcmp(pn[i], qn[j])) return err_at(P, nt, "'%s' names both a parameter and a qubit argument of this gate", pn[i]);
    if (opaque) {
        HS_CHECK(expect_sym(P, ";"));
    } else {
        HS_CHECK(expect_sym(P, "{"));
        scope ps = {g.np, pn};
        int rc = HS_OK;
        while (rc == HS_OK && !is_sym(peek(P), "}")) {
            if (peek(P)->k == T_EOF) rc = err_at(P, peek(P), "expected '}' to close gate '%s'", g.name);
            else rc = parse_body_call(P, &g, &ps, qn, g.nq);
        }
        if (rc == HS_OK && g.depth > MAX_GATE_DEPTH) {
            char buf[160];
            snprintf(buf, sizeof buf, "'%s' nests gate definitions %d deep; at most %d", g.name, g.depth, MAX_GATE_DEPTH);
            rc = err_at(P, nt, "%s", buf);
        }
        if (rc != HS_OK) {
            free_calls(&g);
            return rc;
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
    char gname[80];
    snprintf(gname, sizeof gname, "%.*s", name->len > 63 ? 63 : name->len, name->s);
    if (is_sym(peek(P), "(")) {
        next(P);
        while (!is_sym(peek(P), ")")) {
            expr *e;
            tok *et = peek(P);
            nonfinite nf;
            HS_CHECK(parse_expr(P, NULL, &e));
            if (n < 16 && eval(e, NULL, &v[n], &nf)) return nonfinite_error(P, et, n, gname, NULL, &nf);
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
    char what[96];
    snprintf(what, sizeof what, "gate '%s'", gname);
    HS_CHECK(reserve_ops(P, name, what, bi ? 1 : P->gates[user].nops, (uint64_t)reps));
    P->stmt = name;
    for (int r = 0; r < reps; r++) {
        int qs[16];
        for (int i = 0; i < na; i++) {
            qs[i] = bit_of(P, &a[i], r, 0);
            for (int j = 0; j < i; j++)
                if (qs[j] == qs[i]) return err_at(P, a[i].t, "the same qubit is used twice in one gate%s", "");
        }
        HS_CHECK(expand(P, bi, user, v, qs));
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
    tok *kw = next(P);
    int line = kw->line;
    argref a[2];
    HS_CHECK(parse_arg(P, 0, &a[0]));
    HS_CHECK(expect_sym(P, "->"));
    HS_CHECK(parse_arg(P, 1, &a[1]));
    HS_CHECK(expect_sym(P, ";"));
    if ((a[0].index < 0) != (a[1].index < 0))
        return err_at(P, a[1].t, "measure needs a register on both sides or a bit on both sides%s", "");
    int reps;
    HS_CHECK(broadcast(P, a, 2, 1, &reps));
    HS_CHECK(reserve_ops(P, kw, "measure", 1, (uint64_t)reps));
    for (int r = 0; r < reps; r++)
        if (!set_cond(P, hs_circuit_measure(P->c, bit_of(P, &a[0], r, 0), bit_of(P, &a[1], r, 1)), line))
            return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    return HS_OK;
}

static int stmt_reset(parser *P)
{
    tok *kw = next(P);
    int line = kw->line;
    argref a;
    HS_CHECK(parse_arg(P, 0, &a));
    HS_CHECK(expect_sym(P, ";"));
    int reps;
    HS_CHECK(broadcast(P, &a, 1, 1, &reps));
    HS_CHECK(reserve_ops(P, kw, "reset", 1, (uint64_t)reps));
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
    if (reserved_word(d.name)) return err_at(P, nt, "a reserved word, not a name for a register%s", "");
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
    next(P);
    HS_CHECK(expect_sym(P, "("));
    tok *rt = peek(P);
    if (rt->k != T_ID) return err_at(P, rt, "expected a classical register%s", "");
    int r = find_reg(P->c->cregs, P->c->ncregs, rt);
    if (r < 0) return err_at(P, rt, "undeclared classical register%s", "");
    next(P);
    HS_CHECK(expect_sym(P, "=="));
    int len = P->c->cregs[r].len;
    if (len > 64) return err_at(P, rt, "conditions on registers over 64 bits are not supported%s", "");
    uint64_t v = 0;
    tok *vt = peek(P);
    HS_CHECK(expect_uint64(P, &v, "an integer"));
    if (len < 64 && v >> len) return err_at(P, vt, "value does not fit the register%s", "");
    HS_CHECK(expect_sym(P, ")"));
    P->cond = 1;
    P->cond_off = P->c->cregs[r].off;
    P->cond_len = len;
    P->cond_value = v;
    tok *t = peek(P);
    int rc;
    if (is_id(t, "measure")) rc = stmt_measure(P);
    else if (is_id(t, "reset")) rc = stmt_reset(P);
    /* the grammar's qop: these reached stmt_gate_call and were reported as "undefined gate" */
    else if (is_id(t, "if")) rc = err_at(P, t, "nested if%s", "");
    else if (is_id(t, "barrier") || is_id(t, "gate") || is_id(t, "opaque") || is_id(t, "qreg") || is_id(t, "creg") ||
             is_id(t, "include"))
        rc = err_at(P, t, "only a gate, measure or reset may follow if (...)%s", "");
    else if (t->k == T_ID) rc = stmt_gate_call(P);
    else rc = err_at(P, t, "expected a quantum operation after if (...)%s", "");
    P->cond = 0;
    return rc;
}

static int parse_source(parser *P, source *s);

/* ---------------------------------------------------------------- source files */
enum { MAX_SOURCE_BYTES = 64 << 20 };
typedef enum { SRC_OK, SRC_OPEN, SRC_NOT_REGULAR, SRC_TOO_BIG, SRC_READ, SRC_BINARY, SRC_NO_MEMORY } src_status;

/* The first byte of text that no OpenQASM file holds (controls other than tab, LF, VT, FF, CR), or 0. */
static int binary_byte(const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        if (*c < 0x09 || (*c > 0x0d && *c < 0x20)) return *c;
    return 0;
}

/* The whole of the file `path` as a string (malloc'd): a regular file of at most 64 MiB of text.
 * On failure *err is errno (SRC_OPEN, SRC_READ) or the offending byte (SRC_BINARY). */
static src_status read_source(const char *path, char **text, int *err)
{
    *text = NULL;
    *err = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return *err = errno, SRC_OPEN;
    struct stat st;
    src_status rc = SRC_OK;
    if (fstat(fileno(f), &st) != 0) rc = SRC_READ, *err = errno;
    else if (!S_ISREG(st.st_mode)) rc = SRC_NOT_REGULAR;
    else if (st.st_size > MAX_SOURCE_BYTES) rc = SRC_TOO_BIG;
    char *t = NULL;
    if (rc == SRC_OK) {
        size_t len = (size_t)st.st_size;
        t = malloc(len + 1);
        /* one byte more than the size: a file that grew while being read is not read in part */
        size_t got = t ? fread(t, 1, len + 1, f) : 0;
        if (!t) {
            rc = SRC_NO_MEMORY;
        } else if (ferror(f) || got != len) {
            rc = SRC_READ;
            *err = ferror(f) ? errno : 0; /* 0: the size changed while it was read */
        } else {
            t[len] = '\0';
            if (strlen(t) != len) rc = SRC_BINARY; /* a NUL byte: *err stays 0 */
            else if ((*err = binary_byte(t)) != 0) rc = SRC_BINARY;
        }
    }
    fclose(f);
    if (rc != SRC_OK) free(t);
    else *text = t;
    return rc;
}

static const char *read_why(int err) { return err ? strerror(err) : "its size changed while it was read"; }

/* A copy of the folder part of path with its '/' ("" when there is none). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) + 1 : 0;
    char *d = malloc(n + 1);
    if (d) memcpy(d, path, n), d[n] = '\0';
    return d;
}

static int stmt_include(parser *P)
{
    next(P);
    tok *ft = peek(P);
    if (ft->k != T_STR) return err_at(P, ft, "expected a file name in double quotes%s", "");
    next(P);
    HS_CHECK(expect_sym(P, ";"));
    int nlen = ft->len - 2;
    if (nlen == 10 && !strncmp(ft->s + 1, "qelib1.inc", 10)) {
        if (P->qelib) return HS_OK;
        P->qelib = 1;
        source s;
        HS_CHECK(lex("qelib1.inc", hs_qelib1_extra, &s));
        int rc = parse_source(P, &s);
        free(s.t);
        return rc;
    }
    if (nlen == 0) return err_at(P, ft, "empty include file name%s", "");
    if (P->depth > 8) return err_at(P, ft, "includes nested too deeply%s", "");
    /* relative names are relative to the including file */
    const char *base = ft->s[1] == '/' ? "" : P->dir;
    size_t blen = strlen(base);
    char *path = malloc(blen + (size_t)nlen + 1);
    if (!path) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    memcpy(path, base, blen);
    memcpy(path + blen, ft->s + 1, (size_t)nlen);
    path[blen + (size_t)nlen] = '\0';
    char *text = NULL, *dir = NULL;
    int err, rc = HS_OK;
    switch (read_source(path, &text, &err)) {
    case SRC_OK: break;
    case SRC_OPEN: rc = err_at(P, ft, "cannot open include file: %s", strerror(err)); break;
    case SRC_NOT_REGULAR: rc = err_at(P, ft, "include file is not a regular file%s", ""); break;
    case SRC_TOO_BIG: rc = err_at(P, ft, "include file over 64 MiB%s", ""); break;
    case SRC_READ: rc = err_at(P, ft, "cannot read include file: %s", read_why(err)); break;
    case SRC_BINARY: {
        char b[16];
        snprintf(b, sizeof b, "0x%02x", err);
        rc = err_at(P, ft, "include file has binary data (byte %s)", b);
        break;
    }
    default: rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory reading %s", path); break;
    }
    if (rc == HS_OK && !(dir = dir_of(path))) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    source s;
    if (rc == HS_OK && (rc = lex(path, text, &s)) == HS_OK) {
        char *outer = P->dir;
        P->dir = dir;
        P->depth++;
        rc = parse_source(P, &s);
        P->depth--;
        P->dir = outer;
        free(s.t);
    }
    free(dir);
    free(text);
    free(path);
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
    for (int i = 0; i < P->ngates; i++) free_calls(&P->gates[i]);
    free(P->gates);
    free(P->dir);
    for (int i = 0; i < P->npool; i++) free(P->pool[i]);
    free(P->pool);
}

int hs_qasm_parse_string(const char *name, const char *text, hs_circuit **out)
{
    parser P;
    memset(&P, 0, sizeof P);
    int bad = binary_byte(text);
    if (bad) return hs_input_error(name, 0, NULL, "binary data (byte 0x%02x): not an OpenQASM file", bad);
    P.dir = dir_of(name);
    P.c = hs_circuit_new(0, 0);
    if (!P.c || !P.dir) {
        free(P.dir);
        hs_circuit_free(P.c);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
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
    char *text;
    int err;
    switch (read_source(path, &text, &err)) {
    case SRC_OK: break;
    case SRC_OPEN: return hs_input_error(path, 0, NULL, "cannot open OpenQASM file: %s", strerror(err));
    case SRC_NOT_REGULAR: return hs_input_error(path, 0, NULL, "not a regular file");
    case SRC_TOO_BIG: return hs_input_error(path, 0, NULL, "OpenQASM file over 64 MiB");
    case SRC_READ: return hs_input_error(path, 0, NULL, "cannot read OpenQASM file: %s", read_why(err));
    case SRC_BINARY: return hs_input_error(path, 0, NULL, "binary data (byte 0x%02x): not an OpenQASM file", err);
    default: return HS_FAIL(HS_ERR_RUNTIME, "out of memory reading %s", path);
    }
    int rc = hs_qasm_parse_string(path, text, out);
    free(text);
    return rc;
}
