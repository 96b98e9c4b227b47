/* Name resolution (loader.h): every expression parsed with its position,
 * and the names it reads resolved lazily: a parameter or define met before
 * its turn is settled then (hs_ld_settle, which parses its text: the one
 * recursion of the loader, bounded and kept inside this file); parameters
 * and defines are settled in dependency order with an explicit stack, so a
 * chain of 100,000 `p0: p1, p1: p2, ...` costs no stack depth, and a cycle
 * is an error naming it. */
#include "loader.h"
#include "../util/vec.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

/* An input read by an expression: its source (an expression of t, or a
 * table's piece) once --input gave one, else its symbol. */
const hs_node *hs_ld_input_node(loader *L, size_t par, int *status, hs_error *perr)
{
    hs_model *m = L->m;
    if (L->scope < SCOPE_MODEL || L->in_source) {
        *status = HS_RESOLVE_ERROR;
        hs_error_set(perr, HS_EXIT_MODEL, "'%s' is an input, a function of time: %s cannot "
                     "read it", L->par[par].name, L->in_source ? "the source of an input"
                     : L->scope == SCOPE_PARAM ? "a parameter" : "the initial data");
        return NULL;
    }
    size_t j = par - (L->npar - L->ninput);
    if (L->insrc && L->insrc[j] && !(L->ov && L->ov->input_symbols))
        return L->insrc[j];
    return hs_sym(m->dag, m->sym_p[par]);
}

static const hs_node *lookup(void *ctx, hs_dag *d, const char *s, size_t len,
                             int primed, size_t off, int *status, hs_error *perr)
{
    loader *L = ctx;
    hs_model *m = L->m;
    (void)off;
    *status = HS_RESOLVE_OK;
    long i;
    int coord = -1;                    /* 0: a coordinate, 1: an ambient name */
    if (L->scope >= SCOPE_MODEL) {
        if ((i = hs_ld_find_coord(m, s, len)) >= 0) {
            coord = 0;
            if (primed < 2)
                return hs_sym(d, primed ? m->sym_v[i] : m->sym_q[i]);
        } else if ((i = hs_ld_find_named(L, NAME_AMB, s, len)) >= 0) {
            if (!L->ambX[i]) { /* an embedding that names ambient positions */
                *status = HS_RESOLVE_UNKNOWN;
                return NULL;
            }
            coord = 1;
            if (!primed && L->opaque_amb)  /* its local form (chain.c) */
                return L->opaque_amb(L, (size_t)i);
            if (primed < 2)
                return primed ? L->ambV[i] : L->ambX[i];
        }
    }
    if (coord >= 0) {                  /* x'': what the dynamics computes */
        if (L->scope == SCOPE_OUTPUT)
            return hs_ld_accel(L, (size_t)i, coord);
        *status = HS_RESOLVE_ERROR;
        hs_error_set(perr, HS_EXIT_MODEL, "%.*s'' is an acceleration: only outputs and "
                     "events can read accelerations", (int)len, s);
        return NULL;
    }
    if (primed) {
        *status = HS_RESOLVE_NO_PRIME;
        return NULL;
    }
    if (L->scope >= SCOPE_MODEL && len == 1 && s[0] == 't')
        return hs_sym(d, m->sym_t);
    /* one met before its turn in the dependency order: settled now, mentions first */
    if ((i = hs_ld_find_named(L, NAME_PAR, s, len)) >= 0) {
        if (L->ninput && hs_ld_is_input(L, (size_t)i))
            return hs_ld_input_node(L, (size_t)i, status, perr);
        if (L->scope == SCOPE_PARAM && L->par[i].state != ST_DONE &&
            hs_ld_settle(L, NAME_PAR, (size_t)i)) {
            *status = HS_RESOLVE_ERROR;
            perr->code = L->err->code;
            return NULL;
        }
        return hs_sym(d, m->sym_p[i]);
    }
    if (L->scope >= SCOPE_MODEL && (i = hs_ld_find_named(L, NAME_DEF, s, len)) >= 0) {
        if (L->opaque)                 /* the define as an unknown of its own (chain.c) */
            return L->opaque(L, (size_t)i);
        named *df = &L->def[i];
        if (df->state != ST_DONE) {
            hs_srcpos saved = hs_dag_pos(d);
            hs_ld_settle(L, NAME_DEF, (size_t)i);
            hs_dag_set_pos(d, saved);
        }
        if (!df->expr) {
            *status = HS_RESOLVE_ERROR;
            perr->code = L->err->code;
            return NULL;
        }
        return df->expr;
    }
    const hs_node *e = L->scope == SCOPE_OUTPUT ? hs_ld_derived(L, s, len) : NULL;
    if (!e && L->err->code) {          /* out of memory */
        *status = HS_RESOLVE_ERROR;
        perr->code = L->err->code;
        return NULL;
    }
    if (!e)
        *status = HS_RESOLVE_UNKNOWN;
    return e;
}

/* A byte offset of the scalar being parsed -> file line and column. */
static void locate(void *ctx, size_t off, int *line, int *col)
{
    loader *L = ctx;
    hs_ytree_scalar_pos(L->y, L->cur, off, line, col);
}

/* Parse a scalar as an expression in the given scope. */
const hs_node *hs_ld_parse(loader *L, yaml_node_t *n, int scope, const char *what)
{
    int cond = L->cond;                /* for this text, not for a define it reads */
    L->cond = 0;
    if (L->err->code)
        return NULL;
    if (!n || n->type != YAML_SCALAR_NODE) {
        hs_ytree_error(L->y, L->err, n, "%s must be an expression, found %s", what,
                       hs_ytree_kind(n));
        return NULL;
    }
    if (L->depth >= MAX_NEST) {
        hs_ytree_error(L->y, L->err, n, "%s nested too deeply: more than %d definitions "
                       "met inside one another", what, MAX_NEST);
        return NULL;
    }
    int saved_scope = L->scope;
    L->scope = scope;
    int src = hs_ld_add_src(L, n);
    if (src < 0) {
        hs_error_nomem(L->err);
        return NULL;
    }
    hs_resolver r = { .lookup = lookup, .ctx = L, .locate = locate };
    hs_error pe;
    hs_error_init(&pe);
    yaml_node_t *saved_cur = L->cur;
    L->cur = n;
    L->depth++;
    const hs_node *e = (cond ? hs_parse_cond : hs_parse)(L->m->dag,
                                                        (const char *)n->data.scalar.value,
                                                        n->data.scalar.length, src, &r, &pe);
    L->depth--;
    L->cur = saved_cur;
    L->scope = saved_scope;
    /* an error inside a define or parameter; out of memory stays that */
    if (L->err->code || (!e && pe.code == HS_EXIT_NOMEM && hs_error_nomem(L->err)))
        return NULL;
    if (!e) {
        char hint[200];
        hs_ld_name_hint(L, &pe, scope, (const char *)n->data.scalar.value, hint, sizeof hint);
        hs_ytree_error_in(L->y, L->err, n, pe.offset >= 0 ? (size_t)pe.offset : 0,
                          "%s%s", pe.msg, hint);
        return NULL;
    }
    return e;
}

const hs_node *hs_ld_parse_text(loader *L, const char *text, int scope, hs_error *pe)
{
    int saved_scope = L->scope;
    L->scope = scope;
    hs_resolver r = { .lookup = lookup, .ctx = L, .locate = NULL };
    hs_error_init(pe);
    int cond = L->cond;
    L->cond = 0;
    const hs_node *e = (cond ? hs_parse_cond : hs_parse)(L->m->dag, text, strlen(text), -1,
                                                        &r, pe);
    L->scope = saved_scope;
    if (!e && pe->code == HS_EXIT_NOMEM)
        hs_error_nomem(L->err);
    if (!e && !L->err->code) {
        char hint[200];
        hs_ld_name_hint(L, pe, scope, text, hint, sizeof hint);
        hs_error_append(pe, "%s", hint);
    }
    return L->err->code || hs_ld_dag_check(L) ? NULL : e;
}

/* Report a dag error (fold to NaN, size limit) at its source position. */
int hs_ld_dag_check(loader *L)
{
    if (L->err->code)
        return L->err->code;
    if (!hs_dag_failed(L->m->dag))
        return 0;
    const hs_error *de = hs_dag_error(L->m->dag);
    hs_srcpos p = hs_dag_error_pos(L->m->dag);
    if (de->code == HS_EXIT_NOMEM)
        return hs_error_nomem(L->err);
    hs_error_set(L->err, HS_EXIT_MODEL, "%s", de->msg);
    if (p.src >= 0 && (size_t)p.src < L->si->nsrc) {
        int line, col;
        hs_ytree_scalar_pos(L->y, L->si->node[p.src], (size_t)p.off, &line, &col);
        hs_ytree_place(L->y, L->err, line, col);
    }
    return L->err->code;
}

/* An error about override s (message set): placed in its --params file
 * when it came from one (hs_overrides.set_place); 0 when it came from
 * --set itself. */
static int override_placed(loader *L, size_t s, long off)
{
    return L->ov->set_place && L->ov->set_place(L->ov->set_place_ctx, s, off, L->err);
}

/* A command-line override NAME=TEXT parsed in the parameters' scope; an
 * error is a usage error (exit 1) shown on the option's own text. */
static const hs_node *parse_override(loader *L, size_t s, const char *name, const char *text)
{
    int saved_scope = L->scope;
    L->scope = SCOPE_PARAM;
    hs_resolver r = { .lookup = lookup, .ctx = L, .locate = NULL };
    hs_error pe;
    hs_error_init(&pe);
    const hs_node *e = hs_parse(L->m->dag, text, strlen(text), -1, &r, &pe);
    L->scope = saved_scope;
    if (L->err->code)       /* an error in a parameter it refers to */
        return NULL;
    if (!e && pe.code == HS_EXIT_NOMEM && hs_error_nomem(L->err))
        return NULL;
    if (!e) {
        char hint[200];
        hs_ld_name_hint(L, &pe, SCOPE_PARAM, text, hint, sizeof hint);
        size_t off = pe.offset >= 0 ? (size_t)pe.offset : 0;
        hs_error_set(L->err, HS_EXIT_USAGE, "%s%s", pe.msg, hint);
        if (override_placed(L, s, (long)off))
            return NULL;
        char opt[600];
        const char *on = hs_optname(L->m->names, HS_OPT_SET);
        snprintf(opt, sizeof opt, "%s %s=%s", on, name, text);
        if (snprintf(L->err->msg, sizeof L->err->msg, "%s: %s%s", opt, pe.msg, hint) < 0)
            L->err->msg[0] = '\0';
        /* the caret under the option's text, after "OPTION NAME=" */
        hs_error_locate(L->err, opt, strlen(opt), strlen(on) + strlen(name) + 2 + off);
        L->err->line = 0;   /* not a file position: the caret alone */
    }
    return e;
}

int hs_ld_eval_option(loader *L, const char *option, const char *text, int sign, double *out)
{
    int saved_scope = L->scope;
    L->scope = SCOPE_PARAM;
    hs_resolver r = { .lookup = lookup, .ctx = L, .locate = NULL };
    hs_error pe;
    hs_error_init(&pe);
    const hs_node *e = hs_parse(L->m->dag, text, strlen(text), -1, &r, &pe);
    L->scope = saved_scope;
    if (L->err->code)
        return L->err->code;
    if (!e && pe.code == HS_EXIT_NOMEM)
        return hs_error_nomem(L->err);
    char opt[600];
    snprintf(opt, sizeof opt, "%s %s", option, text);
    if (!e) {
        char hint[200];
        hs_ld_name_hint(L, &pe, SCOPE_PARAM, text, hint, sizeof hint);
        size_t off = pe.offset >= 0 ? (size_t)pe.offset : 0;
        hs_error_set(L->err, HS_EXIT_USAGE, "%s: %s%s", opt, pe.msg, hint);
        hs_error_locate(L->err, opt, strlen(opt), strlen(option) + 1 + off);
        L->err->line = 0;   /* not a file position: the caret alone */
        return L->err->code;
    }
    if (hs_ld_dag_check(L))
        return L->err->code;
    if (hs_eval_node(e, L->pin, out))
        return hs_error_nomem(L->err);
    if (!isfinite(*out) || (sign > 0 && !(*out > 0)) || (sign == 0 && *out < 0))
        return hs_error_set(L->err, HS_EXIT_USAGE, "%s: the value is %g; %s wants a %s "
                            "number", opt, *out, option, sign > 0 ? "positive"
                            : sign == 0 ? "non-negative" : "finite");
    return 0;
}

/* Parameter i, every parameter it mentions already evaluated (names.c
 * settles them in dependency order): its value from the last --set of its
 * name or from the file. */
int hs_ld_eval_param(loader *L, size_t i)
{
    named *p = &L->par[i];
    hs_model *m = L->m;
    long ov = p->ov;
    const char *text = ov >= 0 && L->ov->set_text ? L->ov->set_text[ov] : NULL;
    m->par_order[m->npar_done++] = i;        /* the order of evaluation */
    if (!p->val) {                           /* an input: 0 unless --input gives it */
        if (ov >= 0) {
            hs_error_set(L->err, HS_EXIT_USAGE, "%s %s: '%s' is an input, not a "
                         "parameter: give it with %s %s=EXPR or %s=FILE.csv",
                         hs_optname(m->names, HS_OPT_SET), p->name, p->name,
                         hs_optname(m->names, HS_OPT_INPUT), p->name, p->name);
            override_placed(L, (size_t)ov, -1);
            return L->err->code;
        }
        m->pval[i] = L->pin[m->sym_p[i]] = 0.0;
        p->state = ST_DONE;
        return 0;
    }
    if (ov >= 0 && !text) {
        m->pval[i] = L->pin[m->sym_p[i]] = L->ov->set_value[ov];
        p->state = ST_DONE;
        return 0;
    }
    const hs_node *e = text ? parse_override(L, (size_t)ov, p->name, text)
                            : hs_ld_parse(L, p->val, SCOPE_PARAM, "a parameter");
    if (!e || hs_ld_dag_check(L))
        return L->err->code ? L->err->code : HS_EXIT_MODEL;
    double v;
    if (hs_eval_node(e, L->pin, &v))
        return hs_error_nomem(L->err);
    if (!isfinite(v) && text) {
        hs_error_set(L->err, HS_EXIT_USAGE, "parameter '%s' evaluates to %g", p->name, v);
        if (!override_placed(L, (size_t)ov, 0))
            snprintf(L->err->msg, sizeof L->err->msg, "%s %s=%s: the value is %g",
                     hs_optname(m->names, HS_OPT_SET), p->name, text, v);
        return L->err->code;
    }
    if (!isfinite(v))
        return hs_ytree_error(L->y, L->err, p->val, "parameter '%s' evaluates to %g", p->name, v);
    m->pval[i] = L->pin[m->sym_p[i]] = v;
    m->par_expr[i] = e;
    p->state = ST_DONE;
    return 0;
}

/* Define i, every define it mentions already parsed. */
int hs_ld_parse_define(loader *L, size_t i)
{
    named *df = &L->def[i];
    df->state = ST_BUSY;
    df->expr = hs_ld_parse(L, df->val, SCOPE_MODEL, "a define");
    df->state = ST_DONE;
    return df->expr ? 0 : L->err->code ? L->err->code : HS_EXIT_MODEL;
}

/* Every parameter's value, after checking that each --set names one (the
 * last --set of a name wins). */
int hs_ld_eval_params(loader *L)
{
    hs_model *m = L->m;
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    L->pin = xcalloc(ns, sizeof *L->pin);
    if (!L->pin)
        return hs_error_nomem(L->err);
    for (size_t s = 0; s < ns; s++)
        L->pin[s] = NAN;
    for (size_t s = 0; L->ov && s < L->ov->nset; s++) {
        const char *nm = L->ov->set_name[s];
        long i = hs_ld_find_named(L, NAME_PAR, nm, strlen(nm));
        if (i >= 0) {
            L->par[i].ov = (long)s;         /* the last --set of a name wins */
            continue;
        }
        char hint[160] = "";
        const char *near = hs_ld_nearest_param(L, nm);
        size_t qi;
        const hs_quantity *q = hs_ld_quantity(L, nm, strlen(nm), &qi);
        if (q && q->per == HS_PER_MODEL)
            snprintf(hint, sizeof hint, " ('%s' is %s, not a parameter)", nm, q->what);
        else if (q)
            snprintf(hint, sizeof hint, " ('%s' is %s '%s', not a parameter)", nm,
                     q->what, hs_quantity_base(m, q, qi));
        else if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        else if (!L->npar)
            snprintf(hint, sizeof hint, " (it has no parameters)");
        hs_error_set(L->err, HS_EXIT_USAGE, "the model has no parameter '%s'%s", nm, hint);
        if (!override_placed(L, s, -1))
            snprintf(L->err->msg, sizeof L->err->msg, "%s %s: the model has no "
                     "parameter '%s'%s", hs_optname(L->m->names, HS_OPT_SET), nm, nm, hint);
        return L->err->code;
    }
    for (size_t i = 0; i < L->npar; i++)
        if (hs_ld_settle(L, NAME_PAR, i))
            return L->err->code;
    return 0;
}

/* ---------- parameters and defines in dependency order ---------- */

/* The entries of `kind` a text mentions: every identifier the expression
 * parser would read as a name (not a number's letters, not a function
 * call, not a primed name, which never names a parameter or define).  An
 * over-approximation would only order more, a miss would fall back to the
 * (depth-bounded) lazy path in read.c's lookup. */
static int mentions(loader *L, int kind, const char *s, size_t len, size_t **dep,
                    size_t *ndep, size_t *cap)
{
    *ndep = 0;
    size_t i = 0;
#define ALNUM(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || \
                  ((c) >= '0' && (c) <= '9') || (c) == '_')
    while (i < len) {
        char c = s[i];
        if ((c >= '0' && c <= '9') || (c == '.' && i + 1 < len && s[i + 1] >= '0' &&
                                       s[i + 1] <= '9')) {
            while (i < len && (ALNUM(s[i]) || s[i] == '.' ||
                               ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' ||
                                                                 s[i - 1] == 'E'))))
                i++;
            continue;
        }
        if (!ALNUM(c)) {
            i++;
            continue;
        }
        size_t b = i;
        while (i < len && ALNUM(s[i]))
            i++;
        size_t j = i;
        while (j < len && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r'))
            j++;
        if ((i < len && s[i] == '\'') || (j < len && s[j] == '('))
            continue;
        long e = hs_ld_find_named(L, kind, s + b, i - b);
        if (e < 0)
            continue;
        if (HS_VEC_RESERVE(*dep, *cap, *ndep + 1))
            return hs_error_nomem(L->err);
        (*dep)[(*ndep)++] = (size_t)e;
    }
#undef ALNUM
    return 0;
}

/* The text a parameter's value comes from: the last --set of its name
 * (NULL text: a plain number) or the file's scalar. */
static const char *entry_text(loader *L, int kind, size_t i, size_t *len)
{
    named *a = kind == NAME_PAR ? L->par : L->def;
    *len = 0;
    if (kind == NAME_PAR && a[i].ov >= 0) {
        const char *t = L->ov->set_text ? L->ov->set_text[a[i].ov] : NULL;
        *len = t ? strlen(t) : 0;
        return t;
    }
    const char *t = hs_ytree_str(a[i].val);
    *len = t ? a[i].val->data.scalar.length : 0;
    return t;
}

typedef struct frame {
    size_t idx, next, ndep, cap;
    size_t *dep;
} frame;

/* Entry j met again while its turn is under way (st[0..top) the entries
 * being settled): the cycle, named in full, at j's key. */
static int cycle_error(loader *L, int kind, const frame *st, size_t top, size_t j)
{
    named *a = kind == NAME_PAR ? L->par : L->def;
    char path[400];
    size_t len = 0, f = 0;
    path[0] = '\0';
    while (f < top && st[f].idx != j)
        f++;
    for (; f < top && len + 80 < sizeof path; f++)
        len += (size_t)snprintf(path + len, sizeof path - len, "%.60s -> ", a[st[f].idx].name);
    snprintf(path + len, sizeof path - len, "%.60s", a[j].name);
    int alone = top && st[top - 1].idx == j;
    return hs_ytree_error(L->y, L->err, a[j].key, "%s '%s' %s itself (a cycle among %s): "
                          "%s; give %s a value that does not use %s",
                          kind == NAME_PAR ? "parameter" : "define", a[j].name,
                          kind == NAME_PAR ? "depends on" : "refers to",
                          kind == NAME_PAR ? "parameters" : "defines", path,
                          alone ? "it" : "one of them", alone ? "itself" : "the others");
}

/* Settle entry i of `kind` (NAME_PAR: evaluate, NAME_DEF: parse) after the
 * entries it mentions, depth first with an explicit stack; a mention of an
 * entry still on the stack is a cycle, reported at that entry. */
int hs_ld_settle(loader *L, int kind, size_t i)
{
    named *a = kind == NAME_PAR ? L->par : L->def;
    if (a[i].state == ST_DONE)
        return kind == NAME_DEF && !a[i].expr ? L->err->code : 0;
    if (a[i].state == ST_BUSY)          /* met again while its turn is under way */
        return hs_ytree_error(L->y, L->err, a[i].key, kind == NAME_PAR
                              ? "parameter '%s' depends on itself (a cycle among parameters)"
                              : "define '%s' refers to itself (a cycle among defines)",
                              a[i].name);
    frame *st = NULL;
    size_t top = 0, cap = 0;
    int rc = HS_VEC_RESERVE(st, cap, 1) ? hs_error_nomem(L->err)
                                        : 0;
    size_t len;
    const char *txt;
    if (!rc) {
        st[top++] = (frame){ i, 0, 0, 0, NULL };
        a[i].state = ST_BUSY;
        txt = entry_text(L, kind, i, &len);
        rc = txt ? mentions(L, kind, txt, len, &st[0].dep, &st[0].ndep, &st[0].cap) : 0;
    }
    while (!rc && top) {
        frame *f = &st[top - 1];
        if (f->next < f->ndep) {
            size_t j = f->dep[f->next++];
            if (a[j].state == ST_DONE)
                continue;
            if (a[j].state == ST_BUSY) {
                rc = cycle_error(L, kind, st, top, j);
                break;
            }
            if (HS_VEC_RESERVE(st, cap, top + 1)) {
                rc = hs_error_nomem(L->err);
                break;
            }
            st[top++] = (frame){ j, 0, 0, 0, NULL };
            a[j].state = ST_BUSY;
            txt = entry_text(L, kind, j, &len);
            if (txt)
                rc = mentions(L, kind, txt, len, &st[top - 1].dep, &st[top - 1].ndep,
                              &st[top - 1].cap);
            continue;
        }
        /* every entry it mentions is settled: its own turn */
        size_t k = f->idx;
        free(f->dep);
        top--;
        rc = kind == NAME_PAR ? hs_ld_eval_param(L, k) : hs_ld_parse_define(L, k);
    }
    while (top)
        free(st[--top].dep);
    free(st);
    return rc;
}

/* A define nothing uses is checked too. */
int hs_ld_check_defines(loader *L)
{
    for (size_t i = 0; i < L->ndef; i++)
        if (hs_ld_settle(L, NAME_DEF, i))
            return L->err->code;
    return 0;
}
