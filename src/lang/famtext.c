/* Rewriting one text of a family (internal.h): a template's scalar with the
 * indices bound now written out (x[i-1] -> x_3, sum(...) written out, i ->
 * 4), the map from the new text's bytes to the template's, the parameter
 * values the ranges and indices need, the declared names. */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>


/* ---------- text of the node being built ---------- */

/* Append n bytes to the value being built: copied from template offset
 * src (the map follows them byte for byte), or made there (mapped to src). */
static int put(fam *F, const char *s, size_t n, size_t src, int copied)
{
    hs_ytree *y = F->y;
    if (hs_fm_budget(F, F->cur, F->olen + n))
        return F->err->code;
    if (hs_fm_grow((void **)&F->out, &F->ocap, F->olen + n + 1, 1))
        return hs_fm_oom(F);
    hs_ytree_seg *last = y->nseg > F->seg0 ? &y->seg[y->nseg - 1] : NULL;
    int extend = last && (copied ? last->len && last->out + last->len == F->olen &&
                                       last->src + last->len == src
                                 : !last->len && last->src == src);
    if (!extend) {
        if (hs_fm_grow((void **)&y->seg, &F->caps, y->nseg + 1, sizeof *y->seg))
            return hs_fm_oom(F);
        y->seg[y->nseg++] = (hs_ytree_seg){ F->olen, src, 0 };
        last = &y->seg[y->nseg - 1];
    }
    if (copied)
        last->len += n;
    memcpy(F->out + F->olen, s, n);
    F->olen += n;
    F->out[F->olen] = '\0';
    return 0;
}

static char *own(fam *F, const char *s, size_t len)
{
    if (hs_fm_grow((void **)&F->str, &F->capstr, F->nstr + 1, sizeof *F->str))
        return NULL;
    char *p = malloc(len + 1);
    if (!p)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    F->str[F->nstr++] = p;
    return p;
}

/* ---------- numbers: parameters and index arithmetic ---------- */



static long env_get(fam *F, const char *s, size_t len, int *found);

static double param_value(fam *F, long i, int *ok);

typedef struct evctx {
    fam *F;
    int params_only;
} evctx;

static const hs_node *ev_lookup(void *ctx, hs_dag *d, const char *s, size_t len, int primed,
                                size_t off, int *status, hs_error *perr)
{
    evctx *c = ctx;
    fam *F = c->F;
    (void)off;
    *status = HS_RESOLVE_OK;
    if (primed) {
        *status = HS_RESOLVE_NO_PRIME;
        return NULL;
    }
    if (!c->params_only)
        for (int k = F->nenv; k-- > 0;)
            if (F->env[k].len == len && memcmp(F->env[k].name, s, len) == 0)
                return hs_num(d, (double)F->env[k].val);
    long i = hs_strmap_get(&F->ptab, s, len);
    if (i >= 0) {
        int ok = 1;
        double v = param_value(F, i, &ok);
        if (!ok) {
            *status = HS_RESOLVE_ERROR;
            perr->code = F->err->code ? F->err->code : HS_EXIT_MODEL;
            return NULL;
        }
        if (!c->params_only)
            F->pused[i] = 1;
        return hs_num(d, v);
    }
    *status = HS_RESOLVE_UNKNOWN;
    return NULL;
}

/* Evaluate text[0..len) (a parameter, an override, a bound, an index). */
static int eval_text(fam *F, const char *text, size_t len, int params_only, double *v,
                     hs_error *pe)
{
    if (!F->dag && !(F->dag = hs_dag_new()))
        return hs_fm_oom(F);
    evctx c = { F, params_only };
    hs_resolver r = { ev_lookup, &c, NULL };
    hs_error_init(pe);
    const hs_node *e = hs_parse(F->dag, text, len, -1, &r, pe);
    if (!e)
        return pe->code ? pe->code : HS_EXIT_MODEL;
    *v = hs_eval_tree(e, NULL);
    return 0;
}

static double param_value(fam *F, long i, int *ok)
{
    if (F->pstate[i] == 2)
        return F->pval[i];
    yaml_node_t *map = NODEP(F, F->params);
    yaml_node_pair_t *p = map->data.mapping.pairs.start + i;
    yaml_node_t *key = NODEP(F, p->key), *val = NODEP(F, p->value);
    const char *name = hs_ytree_str(key);
    if (F->pstate[i] == 1) {
        *ok = 0;
        hs_ytree_error(F->y, F->err, key, "parameter '%s' depends on itself", name);
        return NAN;
    }
    F->pstate[i] = 1;
    const hs_lang_sets *ov = F->sets;
    long s = -1;
    for (size_t k = 0; ov && k < ov->n; k++)
        if (strcmp(ov->name[k], name) == 0)
            s = (long)k;
    double v = NAN;
    hs_error pe;
    if (s >= 0 && !(ov->text && ov->text[s])) {
        v = ov->value[s];
    } else if (s >= 0) {
        const char *text = ov->text[s];
        if (eval_text(F, text, strlen(text), 1, &v, &pe)) {
            *ok = 0;
            if (!F->err->code)
                hs_error_set(F->err, HS_EXIT_USAGE, "%s %s=%s: %s",
                             hs_optname(ov->names, HS_OPT_SET), name, text, pe.msg);
            return NAN;
        }
    } else if (val->type != YAML_SCALAR_NODE) {
        *ok = 0;
        hs_ytree_error(F->y, F->err, key, "parameter '%s' is a list: a range bound or an "
                       "index needs one number (write %s[k])", name, name);
        return NAN;
    } else if (eval_text(F, (const char *)val->data.scalar.value, val->data.scalar.length, 1,
                         &v, &pe)) {
        *ok = 0;
        if (!F->err->code)
            hs_ytree_error_in(F->y, F->err, val, pe.offset > 0 ? (size_t)pe.offset : 0,
                              "%s", pe.msg);
        return NAN;
    }
    F->pstate[i] = 2;
    F->pval[i] = v;
    return v;
}

/* The integer value of text t[a..b) of template node tmpl (an index or a
 * bound): the index variables bound now and the parameters. */
static int eval_index(fam *F, int tmpl, const char *t, size_t a, size_t b, long *out)
{
    while (a < b && isspace((unsigned char)t[a]))
        a++;
    while (b > a && isspace((unsigned char)t[b - 1]))
        b--;
    if (a == b)
        return hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), a, "an index is missing");
    size_t j = a;
    while (j < b && isdigit((unsigned char)t[j]))
        j++;
    if (j == b && b - a < 10) {            /* the common cases without parsing: */
        *out = strtol(t + a, NULL, 10);    /* 3, i, i - 1, i + 1 */
        return 0;
    }
    if (hs_fm_is_id0((unsigned char)t[a])) {
        j = a;
        while (j < b && hs_fm_is_id((unsigned char)t[j]))
            j++;
        int found;
        long v = env_get(F, t + a, j - a, &found);
        size_t k = j;
        while (k < b && t[k] == ' ')
            k++;
        if (found && k == b) {
            *out = v;
            return 0;
        }
        if (found && (t[k] == '+' || t[k] == '-')) {
            size_t d = k + 1;
            while (d < b && t[d] == ' ')
                d++;
            size_t e = d;
            while (e < b && isdigit((unsigned char)t[e]))
                e++;
            if (e == b && e > d && e - d < 10) {
                long c = strtol(t + d, NULL, 10);
                v += t[k] == '+' ? c : -c;
                if (v >= 0) {
                    *out = v;
                    return 0;
                }
            }
        }
    }
    double v;
    hs_error pe;
    if (eval_text(F, t + a, b - a, 0, &v, &pe)) {
        if (F->err->code)
            return F->err->code;
        return hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl),
                                 a + (pe.offset > 0 ? (size_t)pe.offset : 0),
                                 "in an index: %s", pe.msg);
    }
    if (!isfinite(v) || fabs(v - nearbyint(v)) > 1e-9 || v < 0 || v > 1e9)
        return hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), a, "the index '%.*s' is %.17g; "
                                 "indices are whole numbers from 0 to 1e9", (int)(b - a),
                                 t + a, v);
    *out = (long)nearbyint(v);
    return 0;
}

/* ---------- names ---------- */

/* Base name -> its entry (added when new). */
static long base_of(fam *F, const char *s, size_t len, int ndim)
{
    long b = hs_strmap_get(&F->bases, s, len);
    if (b >= 0)
        return b;
    char *k = own(F, s, len);
    if (!k || hs_fm_grow((void **)&F->base, &F->capbase, F->nbase + 1, sizeof *F->base))
        return -1;
    b = (long)F->nbase++;
    F->base[b].ndim = ndim;
    for (int d = 0; d < FM_MAX_DIM; d++) {
        F->base[b].lo[d] = 1L << 40;
        F->base[b].hi[d] = -1;
    }
    if (hs_strmap_put(&F->bases, k, len, b, NULL) < 0)
        return -1;
    return b;
}

int hs_fm_declare(fam *F, const char *name, size_t blen, int ndim, const long *idx)
{
    long b = base_of(F, name, blen, ndim);
    if (b < 0)
        return hs_fm_oom(F);
    fm_base *B = &F->base[b];
    if (B->ndim == -2)                           /* met in a reference first */
        B->ndim = ndim;
    if (B->ndim != ndim)
        B->ndim = -1;                            /* mixed: messages say less */
    for (int d = 0; d < ndim && d < FM_MAX_DIM; d++) {
        if (idx[d] < B->lo[d])
            B->lo[d] = idx[d];
        if (idx[d] > B->hi[d])
            B->hi[d] = idx[d];
    }
    size_t len = strlen(name);
    if (hs_strmap_get(&F->names, name, len) >= 0)
        return 0;
    char *k = own(F, name, len);
    if (!k || hs_strmap_put(&F->names, k, len, 0, NULL) < 0)
        return hs_fm_oom(F);
    return 0;
}

/* ---------- rewriting one text ---------- */


static long env_get(fam *F, const char *s, size_t len, int *found)
{
    for (int k = F->nenv; k-- > 0;)
        if (F->env[k].len == len && memcmp(F->env[k].name, s, len) == 0) {
            *found = 1;
            return F->env[k].val;
        }
    *found = 0;
    return 0;
}

/* The end of the bracket or parenthesis opened at t[a] (t[a] is '[' or
 * '('), or b when not closed. */
size_t hs_fm_close_of(const char *t, size_t a, size_t b)
{
    int depth = 0;
    for (size_t j = a; j < b; j++) {
        if (t[j] == '(' || t[j] == '[')
            depth++;
        else if ((t[j] == ')' || t[j] == ']') && --depth == 0)
            return j;
    }
    return b;
}

/* The next top-level comma in t[a..b), or b. */
size_t hs_fm_comma_of(const char *t, size_t a, size_t b)
{
    int depth = 0;
    for (size_t j = a; j < b; j++) {
        if (t[j] == '(' || t[j] == '[')
            depth++;
        else if (t[j] == ')' || t[j] == ']')
            depth--;
        else if (t[j] == ',' && depth == 0)
            return j;
    }
    return b;
}

/* t[a..b) is `name = range` (not `==`): the name's end, else 0. */
size_t hs_fm_binding_at(const char *t, size_t a, size_t b, size_t *eq)
{
    while (a < b && isspace((unsigned char)t[a]))
        a++;
    if (a >= b || !hs_fm_is_id0((unsigned char)t[a]))
        return 0;
    size_t j = a;
    while (j < b && hs_fm_is_id((unsigned char)t[j]))
        j++;
    size_t ne = j;
    while (j < b && isspace((unsigned char)t[j]))
        j++;
    if (j + 1 < b && t[j] == '=' && t[j + 1] != '=') {
        *eq = j;
        return ne;
    }
    return 0;
}

static int rewrite(fam *F, int tmpl, const char *t, size_t a, size_t b, int mode);

/* The range a..b at t[r0..r1) into lo, hi. */
int hs_fm_eval_range(fam *F, int tmpl, const char *t, size_t r0, size_t r1, long *lo, long *hi)
{
    const char *dd = NULL;
    for (size_t j = r0; j + 1 < r1; j++)
        if (t[j] == '.' && t[j + 1] == '.') {
            dd = t + j;
            break;
        }
    if (!dd)
        return hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), r0, "a range is written "
                                 "i=FIRST..LAST (found '%.*s')", (int)(r1 - r0), t + r0);
    size_t m = (size_t)(dd - t);
    if (eval_index(F, tmpl, t, r0, m, lo) || eval_index(F, tmpl, t, m + 2, r1, hi))
        return F->err->code;
    if (*hi - *lo + 1 > FM_MAX_COUNT)
        return hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), r0, "the range %ld..%ld has "
                                 "more than %ld values", *lo, *hi, FM_MAX_COUNT);
    return 0;
}

int hs_fm_push(fam *F, int tmpl, const char *name, size_t len, long val)
{
    if (F->nenv >= FM_MAX_ENV)
        return hs_ytree_error(F->y, F->err, NODEP(F, tmpl), "indices nested more than %d "
                              "deep", FM_MAX_ENV);
    if (hs_strmap_get(&F->ptab, name, len) >= 0 || (len == 1 && name[0] == 't')) {
        const char *t = (const char *)NODEP(F, tmpl)->data.scalar.value;
        size_t off = NODEP(F, tmpl)->type == YAML_SCALAR_NODE && name >= t &&
                     name < t + NODEP(F, tmpl)->data.scalar.length ? (size_t)(name - t) : 0;
        return hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), off, "the index '%.*s' hides "
                                 "%s '%.*s': give the index another name", (int)len, name,
                                 len == 1 && name[0] == 't' ? "the time" : "the parameter",
                                 (int)len, name);
    }
    F->env[F->nenv++] = (fm_bind){ name, len, val };
    return 0;
}

/* sum(i=a..b, body) or prod(...) at t[a..]: ident [a, j) is sum/prod,
 * p the '('; writes the terms and returns the end (after ')'), 0 on error. */
static size_t rewrite_sum(fam *F, int tmpl, const char *t, size_t a, size_t p, size_t b,
                          int is_sum, int mode)
{
    size_t cl = hs_fm_close_of(t, p, b);
    if (cl >= b) {
        hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), p, "'(' of %s is not closed",
                          is_sum ? "sum" : "prod");
        return 0;
    }
    size_t eq = 0, ne = hs_fm_binding_at(t, p + 1, cl, &eq);
    if (!ne) {
        hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), a, "%s is written %s(i=FIRST..LAST, "
                          "EXPRESSION)", is_sum ? "sum" : "prod", is_sum ? "sum" : "prod");
        return 0;
    }
    size_t s0 = p + 1;
    while (isspace((unsigned char)t[s0]))
        s0++;
    size_t cm = hs_fm_comma_of(t, eq + 1, cl);
    if (cm >= cl) {
        hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), a, "%s is written %s(i=FIRST..LAST, "
                          "EXPRESSION)", is_sum ? "sum" : "prod", is_sum ? "sum" : "prod");
        return 0;
    }
    long lo, hi;
    if (hs_fm_eval_range(F, tmpl, t, eq + 1, cm, &lo, &hi))
        return 0;
    if (put(F, "(", 1, a, 0))
        return 0;
    if (hi < lo && put(F, is_sum ? "0" : "1", 1, a, 0))
        return 0;
    for (long v = lo; v <= hi; v++) {
        if (hs_fm_push(F, tmpl, t + s0, ne - s0, v))      /* bound first: a limit names it */
            return 0;
        int rc = (v > lo && put(F, is_sum ? " + " : "*", is_sum ? 3 : 1, a, 0)) ||
                 put(F, "(", 1, a, 0) || rewrite(F, tmpl, t, cm + 1, cl, mode) ||
                 put(F, ")", 1, cl, 0);
        F->nenv--;
        if (rc)
            return 0;
    }
    if (put(F, ")", 1, cl, 0))
        return 0;
    return cl + 1;
}

/* A reference name[...] at t[a..]: ident [a, j), '[' at j. Writes the
 * expanded name; returns the end (after ']'), 0 on error. */
static size_t rewrite_ref(fam *F, int tmpl, const char *t, size_t a, size_t j, size_t b,
                          int mode)
{
    size_t cl = hs_fm_close_of(t, j, b);
    if (cl >= b || t[cl] != ']') {
        hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), j, "'[' is not closed");
        return 0;
    }
    long idx[FM_MAX_DIM];
    int nd = 0;
    for (size_t e = j + 1; e <= cl;) {
        size_t c = hs_fm_comma_of(t, e, cl);
        if (nd == FM_MAX_DIM) {
            hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), e, "more than %d indices",
                              FM_MAX_DIM);
            return 0;
        }
        size_t eq, ne = hs_fm_binding_at(t, e, c, &eq);
        if (ne) {
            size_t s0 = e;
            while (isspace((unsigned char)t[s0]))
                s0++;
            int found;
            idx[nd] = env_get(F, t + s0, ne - s0, &found);
            if (mode == RW_EXPR || !found) {
                hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), s0, "a range '%.*s' declares a "
                                  "family: it belongs in a key or a list item; in an expression "
                                  "write sum(%.*s, ...)", (int)(c - s0), t + s0,
                                  (int)(c - s0), t + s0);
                return 0;
            }
        } else if (eval_index(F, tmpl, t, e, c, &idx[nd])) {
            return 0;
        }
        nd++;
        e = c + 1;
    }
    char name[256];
    int len = (int)(j - a);
    if (j - a < 160) {
        memcpy(name, t + a, j - a);
        for (int d = 0; d < nd; d++) {
            name[len++] = '_';
            len += (int)hs_fm_fmt_long(name + len, idx[d]);
        }
        name[len] = '\0';
    }
    if (j - a >= 160) {
        hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), a, "name too long");
        return 0;
    }
    if (mode == RW_DECL) {
        if (hs_fm_declare(F, name, j - a, nd, idx))
            return 0;
    } else {
        long bse = base_of(F, t + a, j - a, -2);
        if (bse < 0 ||
            hs_fm_grow((void **)&F->ref, &F->capref, F->nref + 1, sizeof *F->ref)) {
            hs_fm_oom(F);
            return 0;
        }
        fm_ref *r = &F->ref[F->nref];
        r->name = own(F, name, (size_t)len);
        if (!r->name) {
            hs_fm_oom(F);
            return 0;
        }
        r->base = (size_t)bse;
        r->ndim = nd;
        memcpy(r->idx, idx, sizeof idx);
        r->node = 0;                     /* set when the node is made */
        r->off = F->olen;
        F->nref++;
    }
    if (put(F, name, (size_t)len, a, 0))
        return 0;
    return cl + 1;
}

/* Rewrite t[a..b) of template tmpl onto the text being built. */
static int rewrite(fam *F, int tmpl, const char *t, size_t a, size_t b, int mode)
{
    if (++F->depth > 200) {
        F->depth--;
        return hs_ytree_error(F->y, F->err, NODEP(F, tmpl), "sums nested too deeply");
    }
    size_t i = a;
    while (i < b && !F->err->code) {
        unsigned char c = (unsigned char)t[i];
        if (isdigit(c) || (c == '.' && i + 1 < b && isdigit((unsigned char)t[i + 1]))) {
            size_t j = i;
            while (j < b && (isdigit((unsigned char)t[j]) || t[j] == '.'))
                j++;
            if (j < b && (t[j] == 'e' || t[j] == 'E')) {
                size_t k = j + 1;
                if (k < b && (t[k] == '+' || t[k] == '-'))
                    k++;
                if (k < b && isdigit((unsigned char)t[k])) {
                    j = k;
                    while (j < b && isdigit((unsigned char)t[j]))
                        j++;
                }
            }
            if (put(F, t + i, j - i, i, 1))
                break;
            i = j;
            continue;
        }
        if (!hs_fm_is_id0(c)) {
            if (put(F, t + i, 1, i, 1))
                break;
            i++;
            continue;
        }
        size_t j = i;
        while (j < b && hs_fm_is_id((unsigned char)t[j]))
            j++;
        size_t p = j;
        while (p < b && (t[p] == ' ' || t[p] == '\t'))
            p++;
        size_t eq;
        int found;
        long v;
        if (j < b && t[j] == '[') {
            size_t e = rewrite_ref(F, tmpl, t, i, j, b, mode);
            if (!e)
                break;
            i = e;
        } else if (((j - i == 3 && memcmp(t + i, "sum", 3) == 0) ||
                    (j - i == 4 && memcmp(t + i, "prod", 4) == 0)) && p < b && t[p] == '(' &&
                   hs_fm_binding_at(t, p + 1, b, &eq)) {
            size_t e = rewrite_sum(F, tmpl, t, i, p, b, j - i == 3, mode);
            if (!e)
                break;
            i = e;
        } else if ((v = env_get(F, t + i, j - i, &found)), found && !(p < b && t[p] == '(')) {
            char num[32];
            size_t n = hs_fm_fmt_long(num, v);
            if (put(F, num, n, i, 0))
                break;
            i = j;
        } else {
            if (put(F, t + i, j - i, i, 1))
                break;
            i = j;
        }
    }
    F->depth--;
    return F->err->code;
}

/* A new scalar: the text of template scalar id rewritten (mode), or id
 * itself when nothing changed. */
int hs_fm_rewrite_scalar(fam *F, int id, size_t a, size_t b, int mode)
{
    F->cur = id;
    yaml_node_t *n = NODEP(F, id);
    const char *t = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    F->olen = 0;
    F->seg0 = F->y->nseg;
    size_t r0 = F->nref;
    if (rewrite(F, id, t, a, b, mode))
        return 0;
    if (a == 0 && b == len && F->olen == len && memcmp(F->out ? F->out : "", t, len) == 0 &&
        F->note < 0) {
        F->y->nseg = F->seg0;              /* unchanged: the node itself */
        for (size_t r = r0; r < F->nref; r++)
            F->ref[r].node = id;
        return id;
    }
    int nid = hs_fm_add_scalar(F, F->out ? F->out : "", F->olen, id, 0);
    for (size_t r = r0; r < F->nref; r++)
        F->ref[r].node = nid;
    return nid;
}


/* ---------- constants of the parameters (bodies' checks) ---------- */

static const hs_node *const_lookup(void *ctx, hs_dag *d, const char *s, size_t len, int primed,
                                   size_t off, int *status, hs_error *perr)
{
    fam *F = ctx;
    (void)off;
    (void)perr;
    long i = primed ? -1 : hs_strmap_get(&F->ptab, s, len);
    yaml_node_t *val = i >= 0 ? NODEP(F, NODEP(F, F->params)->data.mapping.pairs.start[i].value)
                              : NULL;
    int ok = 1;
    double v = i >= 0 && F->pstate[i] != 1 && (F->pstate[i] == 2 || val->type == YAML_SCALAR_NODE)
               ? param_value(F, i, &ok) : (double)NAN;
    *status = ok && v == v ? HS_RESOLVE_OK : HS_RESOLVE_UNKNOWN;
    return *status == HS_RESOLVE_OK ? hs_num(d, v) : NULL;
}

int hs_fm_const(fam *F, const char *text, double *v)
{
    if (!text || (!F->dag && !(F->dag = hs_dag_new())))
        return 0;
    hs_resolver r = { const_lookup, F, NULL };
    hs_error pe;
    hs_error_init(&pe);
    const hs_node *e = hs_parse(F->dag, text, strlen(text), -1, &r, &pe);
    if (!e || F->err->code)
        return 0;
    *v = hs_eval_tree(e, NULL);
    return 1;
}
