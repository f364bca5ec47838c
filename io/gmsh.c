/* Gmsh .msh reader: formats 2.2 and 4.1, ASCII and binary, with line-numbered input errors. */
#include "io/gmsh.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "kernels/error.h"

/* ------------------------------------------------------------------ element types */

int hs_gmsh_type_nodes(int type)
{
    static const int n[] = {0, 2, 3, 4, 4, 8, 6, 5, 3, 6, 9, 10, 27, 18, 14, 1, 8, 20, 15, 13};
    return type > 0 && type < (int)(sizeof n / sizeof n[0]) ? n[type] : 0;
}

const char *hs_gmsh_type_name(int type)
{
    switch (type) {
    case 1: return "2-node line";
    case 2: return "3-node triangle";
    case 3: return "4-node quadrangle";
    case 4: return "4-node tetrahedron";
    case 5: return "8-node hexahedron";
    case 6: return "6-node prism";
    case 7: return "5-node pyramid";
    case 8: return "3-node line";
    case 9: return "6-node triangle";
    case 10: return "9-node quadrangle";
    case 11: return "10-node tetrahedron";
    case 15: return "point";
    case 16: return "8-node quadrangle";
    case 17: return "20-node hexahedron";
    default: return "element";
    }
}

static int type_dim(int type)
{
    switch (type) {
    case HS_GMSH_POINT: return 0;
    case HS_GMSH_LINE2: case HS_GMSH_LINE3: return 1;
    case HS_GMSH_TRI3: case HS_GMSH_TRI6: return 2;
    case HS_GMSH_TET4: case HS_GMSH_TET10: return 3;
    default: return -1;
    }
}

const hs_gmsh_group *hs_gmsh_find_group(const hs_gmsh *m, int dim, const char *name)
{
    for (int i = 0; i < m->ngroups; i++)
        if (m->groups[i].dim == dim && !strcmp(m->groups[i].name, name)) return &m->groups[i];
    return NULL;
}

/* ------------------------------------------------------------------ the cursor */

typedef struct {
    const char *path;
    char *buf;
    size_t len, pos;
    int line;
    int binary;
    int section_line; /* where the current section started (binary errors point there) */
} cursor;

static int fail(cursor *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(cursor *c, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hs_input_error(c->path, line, NULL, "%s", msg);
}

static void skip_space(cursor *c)
{
    while (c->pos < c->len && isspace((unsigned char)c->buf[c->pos])) {
        if (c->buf[c->pos] == '\n') c->line++;
        c->pos++;
    }
}

/* The next whitespace-separated word (pointer into buf, length in *n), or NULL at the end. */
static const char *word(cursor *c, size_t *n)
{
    skip_space(c);
    if (c->pos >= c->len) return NULL;
    size_t s = c->pos;
    while (c->pos < c->len && !isspace((unsigned char)c->buf[c->pos])) c->pos++;
    *n = c->pos - s;
    return c->buf + s;
}

static int read_long(cursor *c, const char *what, long long *v)
{
    size_t n;
    const char *w = word(c, &n);
    if (!w) return fail(c, c->line, "the file ends where %s was expected", what);
    char tmp[64];
    if (n >= sizeof tmp) n = sizeof tmp - 1;
    memcpy(tmp, w, n);
    tmp[n] = 0;
    char *end;
    errno = 0;
    *v = strtoll(tmp, &end, 10);
    if (*end || errno) return fail(c, c->line, "'%s' is not an integer (%s)", tmp, what);
    return HS_OK;
}

static int read_int(cursor *c, const char *what, int *v)
{
    long long x = 0;
    HS_CHECK(read_long(c, what, &x));
    if (x < -2147483647LL || x > 2147483647LL) return fail(c, c->line, "%lld is out of range for %s", x, what);
    *v = (int)x;
    return HS_OK;
}

static int read_double(cursor *c, const char *what, double *v)
{
    size_t n;
    const char *w = word(c, &n);
    if (!w) return fail(c, c->line, "the file ends where %s was expected", what);
    char tmp[128];
    if (n >= sizeof tmp) n = sizeof tmp - 1;
    memcpy(tmp, w, n);
    tmp[n] = 0;
    /* decimal, as in parameter files: strtod alone read "0x1p-1" as 0.5 */
    const char *why = hs_parse_real(tmp, v);
    if (why) return fail(c, c->line, "'%s' %s (%s)", tmp, why, what);
    return HS_OK;
}

/* Raw bytes of a binary block. */
static int read_raw(cursor *c, void *dst, size_t bytes, const char *what)
{
    if (c->pos + bytes > c->len)
        return fail(c, c->section_line, "the binary data of this section end early (reading %s)", what);
    memcpy(dst, c->buf + c->pos, bytes);
    c->pos += bytes;
    return HS_OK;
}

/* Binary blocks are followed by a newline before the $End line: step over it. */
static void end_binary(cursor *c)
{
    while (c->pos < c->len && (c->buf[c->pos] == '\n' || c->buf[c->pos] == '\r' || c->buf[c->pos] == ' ')) {
        if (c->buf[c->pos] == '\n') c->line++;
        c->pos++;
    }
}

/* The binary data of a section start right after the newline that ends its header line (a
 * leading byte may look like white space, so nothing more is skipped). */
static void start_binary(cursor *c)
{
    while (c->pos < c->len && c->buf[c->pos] != '\n') c->pos++;
    if (c->pos < c->len) c->pos++, c->line++;
}

/* Count the newlines of a binary stretch so that later line numbers stay right. */
static void count_lines(cursor *c, size_t from)
{
    for (size_t i = from; i < c->pos; i++)
        if (c->buf[i] == '\n') c->line++;
}

/* Whether the rest of the current line is blank (ASCII only: binary data have no lines).  Read
 * after a record's last field, so that an entry too many is refused on its own line; read as the
 * next record's first field it gave messages about the wrong element on the wrong line. */
static int rest_of_line_blank(const cursor *c)
{
    for (size_t i = c->pos; i < c->len && c->buf[i] != '\n'; i++)
        if (!isspace((unsigned char)c->buf[i])) return 0;
    return 1;
}

/* Checked before each field of an ASCII record after its first: a field missing from a node or
 * element line is refused on that line, naming that record (the field was taken from the next line,
 * and the message spoke of an entry too many on the next record, or of its '$EndNodes' not being a
 * number). */
static int field_on_line(cursor *c, int line, const char *fmt, long long tag)
{
    if (rest_of_line_blank(c)) return fail(c, line, fmt, tag);
    return HS_OK;
}

static int expect_end(cursor *c, const char *name)
{
    size_t n;
    int line0 = c->line;
    const char *w = word(c, &n);
    char want[64];
    snprintf(want, sizeof want, "$End%s", name);
    if (!w || n != strlen(want) || strncmp(w, want, n))
        return fail(c, w ? c->line : line0, "%s expected after the %s data", want, name);
    return HS_OK;
}

/* Skip an unknown section up to its $End line. */
static int skip_section(cursor *c, const char *name)
{
    char want[96];
    snprintf(want, sizeof want, "\n$End%s", name);
    int start = c->line;
    char *p = c->buf + c->pos;
    char *hit = NULL;
    size_t wl = strlen(want);
    for (char *q = p; q + wl <= c->buf + c->len; q++)
        if (*q == '\n' && !memcmp(q, want, wl)) {
            hit = q;
            break;
        }
    if (!hit) return fail(c, start, "section $%s has no $End%s", name, name);
    size_t from = c->pos;
    c->pos = (size_t)(hit - c->buf) + wl;
    count_lines(c, from);
    return HS_OK;
}

/* ------------------------------------------------------------------ growing arrays */

typedef struct {
    hs_gmsh *m;
    int64_t cap_el, cap_nodes;
    /* node tag -> index */
    int64_t *sorted_tags; /* (tag, index) pairs sorted by tag */
    /* 4.1 entities: dim, tag -> physical tags */
    int nent, cap_ent;
    struct entity {
        int dim, tag, nphys;
        int *phys;
    } *ent;
} builder;

static int grow(void **p, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap) return HS_OK;
    int64_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return HS_FAIL(HS_ERR_RUNTIME, "out of memory reading a mesh");
    *p = q;
    *cap = c;
    return HS_OK;
}

static int add_element(builder *b, int type, int phys, int dup, int line, int64_t etag, const int64_t *nodes, int nn)
{
    hs_gmsh *m = b->m;
    int64_t e = m->nelems;
    if (e + 1 >= b->cap_el) {
        int64_t cap = b->cap_el;
        HS_CHECK(grow((void **)&m->type, &cap, e + 2, sizeof(int)));
        cap = b->cap_el;
        HS_CHECK(grow((void **)&m->dim, &cap, e + 2, sizeof(int)));
        cap = b->cap_el;
        HS_CHECK(grow((void **)&m->phys, &cap, e + 2, sizeof(int)));
        cap = b->cap_el;
        HS_CHECK(grow((void **)&m->dup, &cap, e + 2, sizeof(int)));
        cap = b->cap_el;
        HS_CHECK(grow((void **)&m->line, &cap, e + 2, sizeof(int)));
        cap = b->cap_el;
        HS_CHECK(grow((void **)&m->etag, &cap, e + 2, sizeof(int64_t)));
        cap = b->cap_el;
        HS_CHECK(grow((void **)&m->ptr, &cap, e + 2, sizeof(int64_t)));
        b->cap_el = cap;
        if (e == 0) m->ptr[0] = 0;
    }
    HS_CHECK(grow((void **)&m->node, &b->cap_nodes, m->ptr[e] + nn, sizeof(int64_t)));
    m->type[e] = type;
    m->dim[e] = type_dim(type);
    m->phys[e] = phys;
    m->dup[e] = dup;
    m->line[e] = line;
    m->etag[e] = etag;
    memcpy(m->node + m->ptr[e], nodes, (size_t)nn * sizeof(int64_t));
    m->ptr[e + 1] = m->ptr[e] + nn;
    m->nelems = e + 1;
    return HS_OK;
}

static int cmp_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Sorted (tag, index) pairs for the node lookups; duplicate tags are an error. */
static int index_nodes(cursor *c, builder *b, int line)
{
    hs_gmsh *m = b->m;
    int64_t n = m->nnodes;
    int64_t *pairs = malloc((size_t)(n ? n : 1) * 2 * sizeof(int64_t));
    if (!pairs) return HS_FAIL(HS_ERR_RUNTIME, "out of memory reading a mesh");
    for (int64_t i = 0; i < n; i++) pairs[2 * i] = m->node_tag[i], pairs[2 * i + 1] = i;
    qsort(pairs, (size_t)n, 2 * sizeof(int64_t), cmp_pair);
    if (n && pairs[0] < 1) { /* Gmsh numbers nodes from 1; 0 and negative tags were taken */
        long long t = (long long)pairs[0];
        free(pairs);
        return fail(c, line, "node tag %lld: Gmsh's node tags are positive", t);
    }
    for (int64_t i = 1; i < n; i++)
        if (pairs[2 * i] == pairs[2 * i - 2]) {
            long long t = (long long)pairs[2 * i];
            free(pairs);
            return fail(c, line, "node tag %lld appears twice", t);
        }
    b->sorted_tags = pairs;
    return HS_OK;
}

static int64_t find_node(const builder *b, int64_t tag)
{
    int64_t lo = 0, hi = b->m->nnodes - 1;
    const int64_t *p = b->sorted_tags;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        if (p[2 * mid] == tag) return p[2 * mid + 1];
        if (p[2 * mid] < tag) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* Element nodes given by tag -> indices, refusing tags the file lacks. */
static int resolve_nodes(cursor *c, builder *b, int line, long long etag, int64_t *nodes, int nn)
{
    for (int k = 0; k < nn; k++) {
        int64_t idx = find_node(b, nodes[k]);
        if (idx < 0)
            return fail(c, line, "element %lld names node %lld, which is not in $Nodes (node index out of range)", etag,
                        (long long)nodes[k]);
        nodes[k] = idx;
    }
    return HS_OK;
}

static int check_type(cursor *c, int line, int type, long long etag)
{
    if (type_dim(type) >= 0) return HS_OK;
    return fail(c, line, "element %lld has Gmsh type %d (%s), which is not supported: only points, lines, triangles and "
                         "tetrahedra of order 1 or 2 (types 15, 1, 8, 2, 9, 4, 11)",
                etag, type, hs_gmsh_type_name(type));
}

/* ------------------------------------------------------------------ sections */

static int read_format(cursor *c, hs_gmsh *m)
{
    double v;
    int ft, ds;
    HS_CHECK(read_double(c, "the version", &v));
    int line = c->line; /* the version's line */
    if (fabs(v - 2.2) > 1e-9 && fabs(v - 4.1) > 1e-9)
        return fail(c, line, "MSH format version %.10g is not supported (2.2 and 4.1 are read; save with "
                             "`gmsh -format msh22` or `msh41`)",
                    v);
    HS_CHECK(read_int(c, "the file type", &ft));
    HS_CHECK(read_int(c, "the data size", &ds));
    if (ft != 0 && ft != 1) return fail(c, line, "file type %d is neither 0 (ASCII) nor 1 (binary)", ft);
    if (ds != 8) return fail(c, line, "data size %d is not supported (8)", ds);
    m->version = v;
    m->binary = c->binary = ft;
    if (ft) {
        /* the integer 1 in binary, right after the format line */
        start_binary(c);
        int one = 0;
        HS_CHECK(read_raw(c, &one, sizeof one, "the endianness mark"));
        if (one != 1) return fail(c, line + 1, "binary data of the other endianness (or a damaged mark) are not supported");
        end_binary(c);
    }
    return expect_end(c, "MeshFormat");
}

static int read_physical_names(cursor *c, hs_gmsh *m)
{
    int n;
    HS_CHECK(read_int(c, "the number of physical names", &n));
    if (n < 0) return fail(c, c->line, "negative number of physical names");
    if ((size_t)n > (c->len - c->pos) / 6 + 1)
        return fail(c, c->line, "%d physical names are announced but the rest of the file cannot hold them", n);
    m->groups = realloc(m->groups, (size_t)(m->ngroups + n + 1) * sizeof *m->groups);
    if (!m->groups) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int i = 0; i < n; i++) {
        hs_gmsh_group *g = &m->groups[m->ngroups];
        HS_CHECK(read_int(c, "a physical group's dimension", &g->dim));
        const int line = c->line; /* the entry's */
        HS_CHECK(read_int(c, "a physical group's tag", &g->tag));
        if (g->dim < 0 || g->dim > 3) return fail(c, c->line, "physical group dimension %d is not 0..3", g->dim);
        skip_space(c);
        if (c->pos >= c->len || c->buf[c->pos] != '"') return fail(c, c->line, "a quoted physical group name was expected");
        size_t s = ++c->pos;
        while (c->pos < c->len && c->buf[c->pos] != '"' && c->buf[c->pos] != '\n') c->pos++;
        if (c->pos >= c->len || c->buf[c->pos] != '"') return fail(c, c->line, "unterminated physical group name");
        size_t len = c->pos - s;
        if (len >= sizeof g->name) len = sizeof g->name - 1;
        memcpy(g->name, c->buf + s, len);
        g->name[len] = 0;
        c->pos++;
        /* groups are chosen by name (fem.dirichlet = wall): one name on two groups of a dimension
         * picked the first and silently left the other's facets out */
        for (int j = 0; j < m->ngroups; j++)
            if (m->groups[j].dim == g->dim && m->groups[j].tag != g->tag && !strcmp(m->groups[j].name, g->name))
                return fail(c, line, "physical name '%s' is given to two groups of dimension %d, tags %d and %d: a group chosen by "
                                     "this name would be ambiguous (name them apart)",
                            g->name, g->dim, m->groups[j].tag, g->tag);
        m->ngroups++;
    }
    return expect_end(c, "PhysicalNames");
}

/* The physical tags of an entity read in $Entities (4.1). */
static const struct entity *find_entity(const builder *b, int dim, int tag)
{
    for (int i = 0; i < b->nent; i++)
        if (b->ent[i].dim == dim && b->ent[i].tag == tag) return &b->ent[i];
    return NULL;
}

static int add_entity(builder *b, int dim, int tag, int nphys, const int *phys)
{
    if (b->nent == b->cap_ent) {
        int cap = b->cap_ent ? 2 * b->cap_ent : 64;
        void *p = realloc(b->ent, (size_t)cap * sizeof *b->ent);
        if (!p) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        b->ent = p;
        b->cap_ent = cap;
    }
    struct entity *e = &b->ent[b->nent++];
    e->dim = dim, e->tag = tag, e->nphys = nphys;
    e->phys = malloc((size_t)(nphys ? nphys : 1) * sizeof(int));
    if (!e->phys) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    if (nphys) memcpy(e->phys, phys, (size_t)nphys * sizeof(int));
    return HS_OK;
}

static int read_entities(cursor *c, builder *b)
{
    size_t count[4];
    size_t from = c->pos;
    if (c->binary) {
        start_binary(c);
        from = c->pos;
        HS_CHECK(read_raw(c, count, sizeof count, "the entity counts"));
    } else {
        for (int d = 0; d < 4; d++) {
            long long v;
            HS_CHECK(read_long(c, "an entity count", &v));
            if (v < 0) return fail(c, c->line, "negative entity count");
            count[d] = (size_t)v;
        }
    }
    int phys[256];
    for (int d = 0; d < 4; d++)
        for (size_t i = 0; i < count[d]; i++) {
            int tag = 0, line = c->line;
            size_t nphys = 0;
            if (c->binary) {
                double box[6];
                HS_CHECK(read_raw(c, &tag, sizeof tag, "an entity tag"));
                HS_CHECK(read_raw(c, box, (d == 0 ? 3 : 6) * sizeof(double), "an entity's box"));
                HS_CHECK(read_raw(c, &nphys, sizeof nphys, "an entity's physical count"));
                if (nphys > 256) return fail(c, c->section_line, "entity %d has %zu physical tags (256 at most)", tag, nphys);
                HS_CHECK(read_raw(c, phys, nphys * sizeof(int), "an entity's physical tags"));
                if (d > 0) {
                    size_t nb = 0;
                    HS_CHECK(read_raw(c, &nb, sizeof nb, "an entity's boundary count"));
                    if (nb > ((size_t)1 << 40)) return fail(c, c->section_line, "entity %d: bad boundary count", tag);
                    c->pos += nb * sizeof(int);
                    if (c->pos > c->len) return fail(c, c->section_line, "the binary entities end early");
                }
            } else {
                double x;
                long long np;
                /* one entity per line: a field too few or too many is refused on that line (it was
                 * read from the next line, and the error named the $EndEntities line) */
                const char *few = "entity %lld (of dimension %d) has fewer entries than its box, physical tags and bounding entities";
                HS_CHECK(read_int(c, "an entity tag", &tag));
                line = c->line;
                for (int k = 0; k < (d == 0 ? 3 : 6); k++) {
                    if (rest_of_line_blank(c)) return fail(c, line, few, (long long)tag, d);
                    HS_CHECK(read_double(c, "an entity coordinate", &x));
                }
                if (rest_of_line_blank(c)) return fail(c, line, few, (long long)tag, d);
                HS_CHECK(read_long(c, "an entity's physical count", &np));
                if (np < 0 || np > 256) return fail(c, line, "entity %d has %lld physical tags (0..256)", tag, np);
                nphys = (size_t)np;
                for (size_t k = 0; k < nphys; k++) {
                    if (rest_of_line_blank(c)) return fail(c, line, few, (long long)tag, d);
                    HS_CHECK(read_int(c, "a physical tag", &phys[k]));
                }
                if (d > 0) {
                    long long nb;
                    int t;
                    if (rest_of_line_blank(c)) return fail(c, line, few, (long long)tag, d);
                    HS_CHECK(read_long(c, "an entity's boundary count", &nb));
                    if (nb < 0) return fail(c, line, "negative boundary count");
                    for (long long k = 0; k < nb; k++) {
                        if (rest_of_line_blank(c)) return fail(c, line, few, (long long)tag, d);
                        HS_CHECK(read_int(c, "a bounding entity", &t));
                    }
                }
                if (!rest_of_line_blank(c))
                    return fail(c, line, "entity %d (of dimension %d) has more entries than its box, physical tags and bounding entities", tag, d);
            }
            HS_CHECK(add_entity(b, d, tag, (int)nphys, phys));
        }
    if (c->binary) {
        count_lines(c, from);
        end_binary(c);
    }
    return expect_end(c, "Entities");
}

static int reserve_nodes(cursor *c, hs_gmsh *m, long long n)
{
    if (n < 0 || n > (1LL << 40)) return fail(c, c->line, "bad number of nodes %lld", n);
    /* every node takes a few bytes at least (a tag and three numbers): a count beyond what the rest of
     * the file can hold is a damaged count, not a request for memory */
    if ((unsigned long long)n > (c->len - c->pos) / 4 + 1)
        return fail(c, c->line, "%lld nodes are announced but the rest of the file (%zu bytes) cannot hold them", n, c->len - c->pos);
    m->node_tag = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    m->xyz = malloc((size_t)(n ? n : 1) * 3 * sizeof(double));
    if (!m->node_tag || !m->xyz) return HS_FAIL(HS_ERR_RUNTIME, "out of memory for %lld nodes", n);
    return HS_OK;
}

/* The parametric coordinates that follow a 2.2 $ParametricNodes node (Gmsh's Mesh.SaveParametric):
 * its entity's dimension and tag, then u on a curve, u v on a surface, none on a point or volume. */
static int parametric_count(cursor *c, int line, long long tag, int dim, int *npar)
{
    if (dim < -1 || dim > 3) return fail(c, line, "node %lld: entity dimension %d is not -1..3", tag, dim);
    *npar = dim == 1 || dim == 2 ? dim : 0;
    return HS_OK;
}

/* $Nodes, or $ParametricNodes (parametric != 0: each node followed by its entity's dimension and
 * tag and its parametric coordinates, which are read past; a 2.2 file saved with
 * Mesh.SaveParametric has it instead of $Nodes and was refused as "$Nodes is missing"). */
static int read_nodes22(cursor *c, builder *b, int parametric)
{
    hs_gmsh *m = b->m;
    long long n;
    int line = c->section_line;
    const char *what = parametric ? "a tag, 3 coordinates, an entity's dimension and tag and the parametric coordinates"
                                  : "a tag and 3 coordinates";
    HS_CHECK(read_long(c, "the number of nodes", &n));
    HS_CHECK(reserve_nodes(c, m, n));
    if (c->binary) {
        start_binary(c);
        size_t from = c->pos;
        for (long long i = 0; i < n; i++) {
            int tag = 0;
            HS_CHECK(read_raw(c, &tag, sizeof tag, "a node tag"));
            HS_CHECK(read_raw(c, m->xyz + 3 * i, 3 * sizeof(double), "node coordinates"));
            m->node_tag[i] = tag;
            if (parametric) {
                int ent[2], npar = 0;
                double uv[2];
                HS_CHECK(read_raw(c, ent, sizeof ent, "a node's entity"));
                HS_CHECK(parametric_count(c, line, tag, ent[0], &npar));
                HS_CHECK(read_raw(c, uv, (size_t)npar * sizeof(double), "a node's parametric coordinates"));
            }
        }
        count_lines(c, from);
        end_binary(c);
    } else {
        char few[200], many[200];
        snprintf(few, sizeof few, "node %%lld has fewer entries than %s", what);
        snprintf(many, sizeof many, "node %%lld has more entries than %s", what);
        for (long long i = 0; i < n; i++) {
            long long tag;
            HS_CHECK(read_long(c, "a node tag", &tag));
            m->node_tag[i] = tag;
            for (int d = 0; d < 3; d++) {
                HS_CHECK(field_on_line(c, c->line, few, tag));
                HS_CHECK(read_double(c, "a node coordinate", &m->xyz[3 * i + d]));
            }
            if (parametric) {
                int ent[2], npar = 0;
                double uv;
                for (int k = 0; k < 2; k++) {
                    HS_CHECK(field_on_line(c, c->line, few, tag));
                    HS_CHECK(read_int(c, k ? "a node's entity tag" : "a node's entity dimension", &ent[k]));
                }
                HS_CHECK(parametric_count(c, c->line, tag, ent[0], &npar));
                for (int k = 0; k < npar; k++) {
                    HS_CHECK(field_on_line(c, c->line, few, tag));
                    HS_CHECK(read_double(c, "a parametric coordinate", &uv));
                }
            }
            if (!rest_of_line_blank(c)) return fail(c, c->line, many, tag);
        }
    }
    m->nnodes = n;
    HS_CHECK(index_nodes(c, b, line));
    return expect_end(c, parametric ? "ParametricNodes" : "Nodes");
}

/* A 4.1 $Nodes or $Elements header: blocks, count, smallest and largest tag.  A reader may size its
 * tag tables by the header's range, so a file whose tags leave it is damaged (or hand-edited) and is
 * refused here rather than passing with us and failing in the next tool. */
static int check_tag_range(cursor *c, int line, const char *section, const size_t head[4])
{
    if (head[1] > 0 && head[2] > head[3])
        return fail(c, line, "the %s header announces tags from %zu to %zu: the smallest is above the largest", section, head[2], head[3]);
    return HS_OK;
}

static int tag_in_range(cursor *c, int line, const char *what, long long tag, const size_t head[4])
{
    if (tag < 0 || (size_t)tag < head[2] || (size_t)tag > head[3])
        return fail(c, line, "%s tag %lld lies outside the range %zu..%zu that its section's header announces (its smallest and largest tag)",
                    what, tag, head[2], head[3]);
    return HS_OK;
}

static int read_nodes41(cursor *c, builder *b)
{
    hs_gmsh *m = b->m;
    size_t head[4];
    size_t from = 0;
    int line = c->section_line;
    if (c->binary) {
        start_binary(c);
        from = c->pos;
        HS_CHECK(read_raw(c, head, sizeof head, "the $Nodes header"));
    } else {
        for (int k = 0; k < 4; k++) {
            long long v;
            HS_CHECK(read_long(c, "a $Nodes header number", &v));
            if (v < 0) return fail(c, c->line, "negative number in the $Nodes header");
            head[k] = (size_t)v;
        }
    }
    HS_CHECK(reserve_nodes(c, m, (long long)head[1]));
    HS_CHECK(check_tag_range(c, line, "$Nodes", head));
    int64_t at = 0;
    for (size_t blk = 0; blk < head[0]; blk++) {
        int edim = 0, etag = 0, par = 0;
        size_t nb = 0;
        int bline = c->line;
        if (c->binary) {
            HS_CHECK(read_raw(c, &edim, sizeof edim, "a node block"));
            HS_CHECK(read_raw(c, &etag, sizeof etag, "a node block"));
            HS_CHECK(read_raw(c, &par, sizeof par, "a node block"));
            HS_CHECK(read_raw(c, &nb, sizeof nb, "a node block"));
        } else {
            long long v;
            HS_CHECK(read_int(c, "a node block's entity dimension", &edim));
            HS_CHECK(read_int(c, "a node block's entity tag", &etag));
            HS_CHECK(read_int(c, "a node block's parametric flag", &par));
            HS_CHECK(read_long(c, "a node block's size", &v));
            if (v < 0) return fail(c, bline, "negative node block size");
            nb = (size_t)v;
        }
        /* compared unsigned, with at <= head[1]: a binary block size of 2^63 or more turned negative as a
         * signed count, passed, and the tags were written past the node arrays (abort, exit 134) */
        if (nb > head[1] - (size_t)at)
            return fail(c, c->binary ? line : bline, "the node blocks hold more than the %zu nodes announced", head[1]);
        /* the entity dimension sizes each node's record (u, v, w after x y z when parametric): one
         * outside 0..3 read a binary node past its 6-number buffer (edim = 6) or, negative, copied
         * "2^64 - 136 bytes" (stack corruption on damaged files) */
        if (edim < 0 || edim > 3 || par < 0 || par > 1)
            return fail(c, c->binary ? line : bline, "a node block of entity dimension %d with parametric flag %d (0..3 and 0 or 1)", edim, par);
        int ncoord = 3 + (par ? edim : 0);
        if (c->binary) {
            for (size_t i = 0; i < nb; i++) {
                size_t t = 0;
                HS_CHECK(read_raw(c, &t, sizeof t, "a node tag"));
                HS_CHECK(tag_in_range(c, line, "node", (long long)t, head));
                m->node_tag[at + (int64_t)i] = (int64_t)t;
            }
            for (size_t i = 0; i < nb; i++) {
                double x[6];
                HS_CHECK(read_raw(c, x, (size_t)ncoord * sizeof(double), "node coordinates"));
                memcpy(m->xyz + 3 * (at + (int64_t)i), x, 3 * sizeof(double));
            }
        } else {
            for (size_t i = 0; i < nb; i++) {
                long long t;
                HS_CHECK(read_long(c, "a node tag", &t));
                if (!rest_of_line_blank(c)) return fail(c, c->line, "node tag %lld has more entries on its line than one tag", t);
                HS_CHECK(tag_in_range(c, c->line, "node", t, head));
                m->node_tag[at + (int64_t)i] = t;
            }
            for (size_t i = 0; i < nb; i++) {
                for (int k = 0; k < ncoord; k++) {
                    double x;
                    if (k > 0 && rest_of_line_blank(c))
                        return fail(c, c->line, "node %lld has fewer entries than %d coordinates", (long long)m->node_tag[at + (int64_t)i], ncoord);
                    HS_CHECK(read_double(c, "a node coordinate", &x));
                    if (k < 3) m->xyz[3 * (at + (int64_t)i) + k] = x;
                }
                if (!rest_of_line_blank(c))
                    return fail(c, c->line, "node %lld has more entries than %d coordinates", (long long)m->node_tag[at + (int64_t)i], ncoord);
            }
        }
        at += (int64_t)nb;
    }
    if (at != (int64_t)head[1]) return fail(c, line, "the node blocks hold %lld nodes, the header announced %zu", (long long)at, head[1]);
    if (c->binary) {
        count_lines(c, from);
        end_binary(c);
    }
    m->nnodes = at;
    HS_CHECK(index_nodes(c, b, line));
    return expect_end(c, "Nodes");
}

static int need_nodes(cursor *c, builder *b)
{
    if (!b->sorted_tags) return fail(c, c->line, "$Elements comes before $Nodes (or $Nodes is missing)");
    return HS_OK;
}

static int read_elements22(cursor *c, builder *b)
{
    long long n;
    HS_CHECK(need_nodes(c, b));
    HS_CHECK(read_long(c, "the number of elements", &n));
    if (n < 0) return fail(c, c->line, "negative number of elements");
    int64_t nodes[64];
    if (c->binary) {
        start_binary(c);
        size_t from = c->pos;
        int line = c->section_line;
        long long done = 0;
        while (done < n) {
            int head[3];
            HS_CHECK(read_raw(c, head, sizeof head, "an element block header"));
            HS_CHECK(check_type(c, line, head[0], -1));
            int nn = hs_gmsh_type_nodes(head[0]);
            if (head[1] <= 0 || head[1] > n - done || head[2] < 0 || head[2] > 16)
                return fail(c, line, "bad binary element block header (%d %d %d)", head[0], head[1], head[2]);
            for (int i = 0; i < head[1]; i++) {
                int rec[1 + 16 + 64];
                HS_CHECK(read_raw(c, rec, (size_t)(1 + head[2] + nn) * sizeof(int), "an element"));
                for (int k = 0; k < nn; k++) nodes[k] = rec[1 + head[2] + k];
                HS_CHECK(resolve_nodes(c, b, line, rec[0], nodes, nn));
                HS_CHECK(add_element(b, head[0], head[2] > 0 ? rec[1] : 0, 0, line, rec[0], nodes, nn));
            }
            done += head[1];
        }
        count_lines(c, from);
        end_binary(c);
    } else {
        for (long long i = 0; i < n; i++) {
            long long etag;
            int type, ntags, tags[16], line;
            HS_CHECK(read_long(c, "an element tag", &etag));
            line = c->line;
            const char *few = "element %lld has fewer entries than its type, number of tags, tags and nodes";
            HS_CHECK(field_on_line(c, line, few, etag));
            HS_CHECK(read_int(c, "an element type", &type));
            HS_CHECK(check_type(c, line, type, etag));
            HS_CHECK(field_on_line(c, line, few, etag));
            HS_CHECK(read_int(c, "an element's number of tags", &ntags));
            if (ntags < 0 || ntags > 16) return fail(c, line, "element %lld has %d tags (0..16)", etag, ntags);
            for (int k = 0; k < ntags; k++) {
                HS_CHECK(field_on_line(c, line, few, etag));
                HS_CHECK(read_int(c, "an element tag", &tags[k]));
            }
            int nn = hs_gmsh_type_nodes(type);
            for (int k = 0; k < nn; k++) {
                long long v;
                if (rest_of_line_blank(c)) return fail(c, line, "element %lld has fewer nodes than a %s (%d)", etag, hs_gmsh_type_name(type), nn);
                HS_CHECK(read_long(c, "an element node", &v));
                nodes[k] = v;
            }
            if (!rest_of_line_blank(c))
                return fail(c, line, "element %lld has more entries than a %s with %d tags (%d nodes)", etag, hs_gmsh_type_name(type), ntags, nn);
            HS_CHECK(resolve_nodes(c, b, line, etag, nodes, nn));
            HS_CHECK(add_element(b, type, ntags > 0 ? tags[0] : 0, 0, line, etag, nodes, nn));
        }
    }
    return expect_end(c, "Elements");
}

static int read_elements41(cursor *c, builder *b)
{
    size_t head[4];
    size_t from = 0;
    int sline = c->section_line;
    HS_CHECK(need_nodes(c, b));
    if (c->binary) {
        start_binary(c);
        from = c->pos;
        HS_CHECK(read_raw(c, head, sizeof head, "the $Elements header"));
    } else {
        for (int k = 0; k < 4; k++) {
            long long v;
            HS_CHECK(read_long(c, "an $Elements header number", &v));
            if (v < 0) return fail(c, c->line, "negative number in the $Elements header");
            head[k] = (size_t)v;
        }
    }
    HS_CHECK(check_tag_range(c, sline, "$Elements", head));
    int64_t nodes[64];
    size_t total = 0;
    for (size_t blk = 0; blk < head[0]; blk++) {
        int edim = 0, etag = 0, type = 0;
        size_t nb = 0;
        int bline = c->line;
        if (c->binary) {
            HS_CHECK(read_raw(c, &edim, sizeof edim, "an element block"));
            HS_CHECK(read_raw(c, &etag, sizeof etag, "an element block"));
            HS_CHECK(read_raw(c, &type, sizeof type, "an element block"));
            HS_CHECK(read_raw(c, &nb, sizeof nb, "an element block"));
            bline = sline;
        } else {
            long long v;
            HS_CHECK(read_int(c, "an element block's entity dimension", &edim));
            HS_CHECK(read_int(c, "an element block's entity tag", &etag));
            HS_CHECK(read_int(c, "an element block's type", &type));
            HS_CHECK(read_long(c, "an element block's size", &v));
            if (v < 0) return fail(c, bline, "negative element block size");
            nb = (size_t)v;
        }
        HS_CHECK(check_type(c, bline, type, -1));
        /* not total + nb, which a binary size near 2^64 wraps */
        if (nb > head[1] - total) return fail(c, bline, "the element blocks hold more than the %zu elements announced", head[1]);
        const struct entity *ent = find_entity(b, edim, etag);
        int nphys = ent ? ent->nphys : 0;
        int nn = hs_gmsh_type_nodes(type);
        for (size_t i = 0; i < nb; i++) {
            long long tag = 0;
            int line = c->binary ? sline : c->line;
            if (c->binary) {
                size_t rec[65];
                HS_CHECK(read_raw(c, rec, (size_t)(1 + nn) * sizeof(size_t), "an element"));
                tag = (long long)rec[0];
                for (int k = 0; k < nn; k++) nodes[k] = (int64_t)rec[1 + k];
            } else {
                HS_CHECK(read_long(c, "an element tag", &tag));
                line = c->line;
                for (int k = 0; k < nn; k++) {
                    long long v;
                    if (rest_of_line_blank(c)) return fail(c, line, "element %lld has fewer nodes than a %s (%d)", tag, hs_gmsh_type_name(type), nn);
                    HS_CHECK(read_long(c, "an element node", &v));
                    nodes[k] = v;
                }
                if (!rest_of_line_blank(c))
                    return fail(c, line, "element %lld has more entries than a %s (%d nodes)", tag, hs_gmsh_type_name(type), nn);
            }
            HS_CHECK(tag_in_range(c, line, "element", tag, head));
            HS_CHECK(resolve_nodes(c, b, line, tag, nodes, nn));
            HS_CHECK(add_element(b, type, nphys ? ent->phys[0] : 0, 0, line, tag, nodes, nn));
            for (int k = 1; k < nphys; k++) HS_CHECK(add_element(b, type, ent->phys[k], 1, line, tag, nodes, nn));
        }
        total += nb;
    }
    /* as for $Nodes: a header total the blocks do not reach is a damaged file */
    if (total != head[1]) return fail(c, sline, "the element blocks hold %zu elements, the header announced %zu", total, head[1]);
    if (c->binary) {
        count_lines(c, from);
        end_binary(c);
    }
    return expect_end(c, "Elements");
}

/* ------------------------------------------------------------------ the file */

static int parse(cursor *c, builder *b)
{
    hs_gmsh *m = b->m;
    int have_format = 0, have_nodes = 0, have_elements = 0;
    for (;;) {
        size_t n;
        const char *w = word(c, &n);
        if (!w) break;
        int line = c->line;
        if (w[0] != '$' || n < 2 || n > 60) return fail(c, line, "a section ($Name) was expected, found '%.*s'", (int)(n < 40 ? n : 40), w);
        char name[64];
        memcpy(name, w + 1, n - 1);
        name[n - 1] = 0;
        c->section_line = line;
        if (!have_format && strcmp(name, "MeshFormat"))
            return fail(c, line, "the file does not start with $MeshFormat (not a Gmsh .msh file?)");
        if (!strcmp(name, "MeshFormat")) {
            HS_CHECK(read_format(c, m));
            have_format = 1;
        } else if (!strcmp(name, "PhysicalNames")) {
            HS_CHECK(read_physical_names(c, m));
        } else if (!strcmp(name, "Entities") && m->version > 4) {
            HS_CHECK(read_entities(c, b));
        } else if (!strcmp(name, "Nodes") || (!strcmp(name, "ParametricNodes") && m->version < 4)) {
            if (have_nodes) return fail(c, line, "a second $Nodes section");
            HS_CHECK(m->version > 4 ? read_nodes41(c, b) : read_nodes22(c, b, name[0] == 'P'));
            have_nodes = 1;
        } else if (!strcmp(name, "Elements")) {
            if (have_elements) return fail(c, line, "a second $Elements section");
            HS_CHECK(m->version > 4 ? read_elements41(c, b) : read_elements22(c, b));
            have_elements = 1;
        } else if (!strcmp(name, "PartitionedEntities")) {
            /* the elements would name partition entities, whose physical groups this reader does not follow */
            return fail(c, line, "a partitioned mesh ($PartitionedEntities): hpcsim partitions the mesh itself; save it "
                                 "without partitions (no -part, or Mesh.SaveAll off)");
        } else if (!strncmp(name, "End", 3)) {
            return fail(c, line, "$%s without its section", name);
        } else {
            HS_CHECK(skip_section(c, name));
        }
    }
    if (!have_format) return fail(c, 1, "the file is empty or has no $MeshFormat section (not a Gmsh .msh file?)");
    if (!have_nodes) return fail(c, c->line, "the $Nodes section is missing");
    if (!have_elements) return fail(c, c->line, "the $Elements section is missing");
    return HS_OK;
}

/* Physical groups the elements carry but $PhysicalNames does not name (older files, meshio, a
 * script's output) take their tag as their name, so `dirichlet = 1 3` selects them; the file was
 * unusable ("its boundary groups: none").  A name given wins over a tag that reads the same. */
static int name_unnamed_groups(hs_gmsh *m)
{
    for (int64_t e = 0; e < m->nelems; e++) {
        if (m->phys[e] == 0) continue;
        int known = 0;
        for (int i = 0; i < m->ngroups && !known; i++) known = m->groups[i].dim == m->dim[e] && m->groups[i].tag == m->phys[e];
        if (known) continue;
        hs_gmsh_group *g = realloc(m->groups, (size_t)(m->ngroups + 1) * sizeof *m->groups);
        if (!g) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        m->groups = g;
        g[m->ngroups].dim = m->dim[e];
        g[m->ngroups].tag = m->phys[e];
        snprintf(g[m->ngroups].name, sizeof g[m->ngroups].name, "%d", m->phys[e]);
        m->ngroups++;
    }
    return HS_OK;
}

void hs_gmsh_free(hs_gmsh *m)
{
    if (!m) return;
    free(m->path);
    free(m->node_tag);
    free(m->xyz);
    free(m->type);
    free(m->dim);
    free(m->phys);
    free(m->dup);
    free(m->line);
    free(m->etag);
    free(m->ptr);
    free(m->node);
    free(m->groups);
    free(m);
}

int hs_gmsh_read(const char *path, hs_gmsh **out)
{
    *out = NULL;
    if (hs_input_file_bytes(path) == -2) return hs_input_error(path, 0, NULL, "the mesh file is not a regular file (a directory?)");
    FILE *f = fopen(path, "rb");
    if (!f) return hs_input_error(path, 0, NULL, "cannot open the mesh file: %s", strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return hs_input_error(path, 0, NULL, "cannot read the mesh file");
    }
    long size = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)(size > 0 ? size : 0) + 1);
    if (!buf) {
        fclose(f);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mesh file %s (%ld bytes)", path, size);
    }
    size_t got = size > 0 ? fread(buf, 1, (size_t)size, f) : 0;
    fclose(f);
    buf[got] = 0;
    hs_gmsh *m = calloc(1, sizeof *m);
    builder b = {0};
    b.m = m;
    /* a UTF-8 byte-order mark and classic-Mac line ends (CR alone, no LF anywhere: a binary file's
     * header lines end in LF, so its data are never touched), as parameter files read them */
    const size_t bom = got >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0;
    if (!memchr(buf, '\n', got))
        for (size_t i = 0; i < got; i++)
            if (buf[i] == '\r') buf[i] = '\n';
    cursor c = {path, buf, got, bom, 1, 0, 1};
    int rc = m ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    if (rc == HS_OK) m->path = strdup(path);
    if (rc == HS_OK) rc = parse(&c, &b);
    if (rc == HS_OK) rc = name_unnamed_groups(m);
    if (rc == HS_OK && m->nelems == 0 && !m->ptr) {
        m->ptr = calloc(1, sizeof(int64_t));
        if (!m->ptr) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    free(buf);
    free(b.sorted_tags);
    for (int i = 0; i < b.nent; i++) free(b.ent[i].phys);
    free(b.ent);
    if (rc != HS_OK) {
        hs_gmsh_free(m);
        return rc;
    }
    *out = m;
    return HS_OK;
}
