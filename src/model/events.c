/* What outputs and events read beyond the model's own names, and the
 * `events` key with the command line's --stop-when (loader.h).
 *
 * At a state the dynamics computes the accelerations a = q'' and the
 * multipliers Lambda; outputs and events read them as VM inputs of their
 * own (symbols x'' and lambda_NAME, made when first read, so a model that
 * reads none has none).  Everything else they may read is an expression
 * of those and of the kernels, built here symbolically (parameters folded
 * in with the rest at compilation):
 *
 *   R_q  = sum_j dG_j/dq Lambda_j          (the reaction, G_q^T Lambda)
 *   T    = v^T M v / 2 + Tx,  U,  E = T + U,  H = v^T M v / 2 - T0 + U
 *   X''  = D(X_t + DX q') + DX q''         (an ambient name's acceleration)
 *
 * the same quantities as the CSV columns of those names (model.h, whose
 * table says which names outputs and events read; no parameter or define
 * may take one of them, names.c). */
#include "loader.h"

#include <math.h>
#include <string.h>

#include "../util/suggest.h"

/* m->sym_a and m->sym_lam, every entry -1 (no symbol yet). */
static int ensure_syms(loader *L)
{
    hs_model *m = L->m;
    if (!m->sym_a) {
        m->sym_a = xcalloc(m->n, sizeof *m->sym_a);
        if (!m->sym_a)
            return hs_error_nomem(L->err);
        for (size_t i = 0; i < m->n; i++)
            m->sym_a[i] = -1;
    }
    if (!m->sym_lam) {
        m->sym_lam = xcalloc(m->k, sizeof *m->sym_lam);
        if (!m->sym_lam)
            return hs_error_nomem(L->err);
        for (size_t i = 0; i < m->k; i++)
            m->sym_lam[i] = -1;
    }
    return 0;
}

/* The symbol named prefix+name+suffix, made now (a name no parameter can
 * have: a primed one, or lambda_NAME, met only after the parameters). */
static int make_sym(loader *L, const char *prefix, const char *name, const char *suffix)
{
    size_t len = strlen(prefix) + strlen(name) + strlen(suffix) + 1;
    char *s = malloc(len);
    if (!s)
        return -1;
    snprintf(s, len, "%s%s%s", prefix, name, suffix);
    int sym = hs_dag_symbol(L->m->dag, s);
    free(s);
    return sym;
}

static const hs_node *coord_accel(loader *L, size_t i)
{
    hs_model *m = L->m;
    if (ensure_syms(L))
        return NULL;
    if (m->sym_a[i] < 0 && (m->sym_a[i] = make_sym(L, "", m->qname[i], "''")) < 0) {
        hs_error_nomem(L->err);
        return NULL;
    }
    return hs_sym(m->dag, m->sym_a[i]);
}

const hs_node *hs_ld_accel(loader *L, size_t i, int amb)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    if (!amb)
        return coord_accel(L, i);
    /* d/dt of X_t + DX q' = D(X_t + DX q') + sum_j dX/dq_j q_j'' */
    const hs_node *V = L->ambV[i];
    const hs_node *acc = hs_total_diff(d, V, m->sym_t, m->n, m->sym_q, m->sym_v);
    for (size_t j = 0; j < m->n && acc; j++) {
        if (!hs_depends_on(V, m->sym_v[j]))
            continue;
        const hs_node *aj = coord_accel(L, j);
        acc = aj ? hs_add(d, acc, hs_mul(d, hs_diff(d, V, m->sym_v[j]), aj)) : NULL;
    }
    return acc;
}

/* v^T M v / 2 from the symbolic M (built once, on first use). */
static const hs_node *half_vMv(loader *L)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n;
    if (L->vMv2)
        return L->vMv2;
    const hs_node *s = hs_num(d, 0);
    for (size_t i = 0; i < n; i++)
        for (size_t j = m->M ? 0 : i; j <= i; j++) {         /* M_diag: its diagonal */
            const hs_node *Mij = hs_model_M(m, i, j);
            if (hs_is_num(Mij, 0))
                continue;
            const hs_node *vv = hs_mul(d, hs_sym(d, m->sym_v[i]), hs_sym(d, m->sym_v[j]));
            /* the diagonal once with 1/2, each pair below it twice with 1/2 */
            s = hs_add(d, s, hs_mul(d, hs_mul(d, hs_num(d, i == j ? 0.5 : 1.0), Mij), vv));
        }
    return L->vMv2 = s;
}

/* lambda_NAME of constraint j. */
static const hs_node *multiplier(loader *L, size_t j)
{
    hs_model *m = L->m;
    if (ensure_syms(L))
        return NULL;
    if (m->sym_lam[j] < 0 && (m->sym_lam[j] = make_sym(L, "lambda_", m->cname[j], "")) < 0) {
        hs_error_nomem(L->err);
        return NULL;
    }
    return hs_sym(m->dag, m->sym_lam[j]);
}

const hs_node *hs_ld_derived(loader *L, const char *s, size_t len)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t i;
    const hs_quantity *q = hs_ld_quantity(L, s, len, &i);
    if (!q || !(q->flags & HS_QTY_DERIVED))
        return NULL;
    switch (q->id) {
    case HS_QTY_U:
        return m->U;
    case HS_QTY_TKIN:
        return hs_add(d, half_vMv(L), m->Tx);
    case HS_QTY_E:
        return hs_add(d, hs_add(d, half_vMv(L), m->Tx), m->U);
    case HS_QTY_H:
        return hs_add(d, hs_sub(d, half_vMv(L), m->T0), m->U);
    case HS_QTY_LAMBDA:
        return multiplier(L, i);
    case HS_QTY_R: {
        const hs_node *R = hs_num(d, 0);
        for (size_t j = 0; j < m->k && R; j++) {
            const hs_node *g = hs_model_G_q(m, j, i);
            if (!g || hs_is_num(g, 0))
                continue;
            const hs_node *lam = multiplier(L, j);
            R = lam ? hs_add(d, R, hs_mul(d, g, lam)) : NULL;
        }
        return R;
    }
    default:                /* x'': a coordinate with two primes (read.c) */
        return NULL;
    }
}

/* ---------- events ---------- */

static const char *const ev_keys[] = { "when", "direction", "action" };
static const char *const dir_names[] = { "up", "down", "both" };
static const char *const action_names[] = { "stop", "record", "release" };

static int event_name_ok(const char *s)
{
    if (!s || !(((*s | 32) >= 'a' && (*s | 32) <= 'z') || *s == '_'))
        return 0;
    for (const char *p = s; *p; p++)
        if (!(((*p | 32) >= 'a' && (*p | 32) <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    return strlen(s) <= 64;
}

/* The event function of a parsed `when`: a comparison a > b (>=) is
 * a - b going up, a < b (<=) going down; anything else is itself.
 * *cmp = 1 for a comparison.  NULL for == and != (no crossing). */
static const hs_node *event_function(hs_dag *d, const hs_node *e, int *dir, int *cmp)
{
    *cmp = 0;
    switch (e->kind) {
    case HS_GT: case HS_GE: case HS_LT: case HS_LE:
        *cmp = 1;
        *dir = e->kind == HS_GT || e->kind == HS_GE ? 1 : -1;
        return hs_sub(d, e->args[0], e->args[1]);
    case HS_EQ: case HS_NE:
        *cmp = 1;
        return NULL;
    default:
        return e;
    }
}

/* `action`: stop, record, or release NAME [NAME...] (constraint names). */
static int read_action(loader *L, yaml_node_t *an, hs_event *ev)
{
    hs_model *m = L->m;
    if (hs_ld_expect(L, an, YAML_SCALAR_NODE, "an event's 'action'"))
        return L->err->code;
    const char *s = hs_ytree_str(an);
    size_t b = strspn(s, " \t"), e = b + strcspn(s + b, " \t");
    char word[16];
    snprintf(word, sizeof word, "%.*s", (int)(e - b < 15 ? e - b : 15), s + b);
    int kw = e - b < sizeof word ? hs_keyword(action_names, 3, word) : -1;
    if (kw < 0) {
        const char *near = hs_nearest(word, action_names, 3);
        return hs_ytree_error_in(L->y, L->err, an, b, "unknown action '%.*s' (stop, record "
                                 "or release NAME...)%s%s%s", (int)(e - b), s + b,
                                 near ? "; did you mean '" : "", near ? near : "",
                                 near ? "'?" : "");
    }
    ev->action = (hs_ev_action)kw;
    if (kw != HS_EV_RELEASE) {
        if (s[e + strspn(s + e, " \t")])
            return hs_ytree_error_in(L->y, L->err, an, e + strspn(s + e, " \t"),
                                     "'%s' takes no names (only release does)", word);
        return 0;
    }
    ev->rel = xcalloc(m->k, sizeof *ev->rel);
    if (!ev->rel)
        return hs_error_nomem(L->err);
    for (size_t p = e + strspn(s + e, " \t"); s[p]; p += strspn(s + p, " \t")) {
        size_t q = p + strcspn(s + p, " \t");
        long jc = hs_ld_find_constraint(L, s + p, q - p);
        size_t j = jc < 0 ? m->k : (size_t)jc;
        if (jc < 0) {
            char nm[80];
            snprintf(nm, sizeof nm, "%.*s", (int)(q - p < 79 ? q - p : 79), s + p);
            const char *near = hs_nearest(nm, (const char *const *)m->cname, m->k);
            return hs_ytree_error_in(L->y, L->err, an, p, "release: '%s' is not a constraint "
                                     "of the model%s%s%s", nm, !m->k ? " (it has none)" :
                                     near ? " (did you mean '" : "", near ? near : "",
                                     near ? "'?)" : "");
        }
        size_t r = 0;
        while (r < ev->nrel && ev->rel[r] != j)
            r++;
        if (r == ev->nrel)
            ev->rel[ev->nrel++] = j;
        p = q;
    }
    if (!ev->nrel)
        return hs_ytree_error(L->y, L->err, an, "release needs the constraints to let go: "
                              "release NAME [NAME...]");
    return 0;
}

/* `direction`: up, down or both. */
static int read_direction(loader *L, yaml_node_t *dn, hs_event *ev)
{
    if (hs_ld_expect(L, dn, YAML_SCALAR_NODE, "an event's 'direction'"))
        return L->err->code;
    const char *s = hs_ytree_str(dn);
    int kw = hs_keyword(dir_names, 3, s);
    if (kw < 0) {
        const char *near = hs_nearest(s, dir_names, 3);
        return hs_ytree_error(L->y, L->err, dn, "unknown direction '%s' (up, down or both)"
                              "%s%s%s", s, near ? "; did you mean '" : "", near ? near : "",
                              near ? "'?" : "");
    }
    ev->dir = kw == 0 ? 1 : kw == 1 ? -1 : 0;
    return 0;
}

/* One entry of `events`: a mapping {when, direction, action}, or an
 * expression alone (record, both directions). */
static int read_event(loader *L, yaml_node_t *key, yaml_node_t *val, hs_event *ev,
                      const hs_node **g)
{
    hs_model *m = L->m;
    const char *name = hs_ytree_str(key);
    if (!event_name_ok(name))
        return hs_ytree_error(L->y, L->err, key, "'%s' is not a valid event name (letters, "
                              "digits, _; not starting with a digit)", name ? name : "");
    ev->name = hs_ld_strdup(name);
    ev->action = HS_EV_RECORD;
    yaml_node_t *wn = val, *dn = NULL, *an = NULL;
    if (val->type == YAML_MAPPING_NODE) {
        if (hs_ld_check_keys(L, val, ev_keys, 3, "an event"))
            return L->err->code;
        wn = hs_ld_get(L, val, "when");
        dn = hs_ld_get(L, val, "direction");
        an = hs_ld_get(L, val, "action");
        if (!wn)
            return hs_ytree_error(L->y, L->err, val, "event '%s' has no 'when' (the "
                                  "expression whose zero crossing is the event)", name);
    } else if (val->type != YAML_SCALAR_NODE) {
        return hs_ytree_error(L->y, L->err, val, "event '%s' must be an expression or a "
                              "mapping {when, direction, action}, found %s", name,
                              hs_ytree_kind(val));
    }
    if (!ev->name || (dn && read_direction(L, dn, ev)) || (an && read_action(L, an, ev)))
        return L->err->code ? L->err->code : hs_error_nomem(L->err);
    ev->pos = (hs_srcpos){ (int32_t)L->si->nsrc, 0 };
    L->cond = 1;
    const hs_node *e = hs_ld_parse(L, wn, SCOPE_OUTPUT, "an event's 'when'");
    if (!e || hs_ld_dag_check(L))
        return L->err->code;
    ev->text = hs_ld_strdup(hs_ytree_str(wn));
    int cmp, dir = ev->dir;
    hs_dag_set_pos(m->dag, ev->pos);
    *g = event_function(m->dag, e, &dir, &cmp);
    if (!*g)
        return hs_ytree_error(L->y, L->err, wn, "event '%s': '%s' has no crossing to find; "
                              "write a > b, a < b, or an expression whose zero is the "
                              "event", name, hs_kind_name(e->kind));
    if (cmp && dn)
        return hs_ytree_error(L->y, L->err, dn, "event '%s': a comparison fires where it "
                              "becomes true; leave out 'direction' (or give the difference "
                              "of its sides with a direction)", name);
    ev->dir = dir;
    ev->cmp = cmp;
    return ev->text ? 0 : hs_error_nomem(L->err);
}

/* --stop-when i: parsed like `when`, an error shown on the option's text
 * (exit 2: the condition does not fit the model). */
static int read_stop_when(loader *L, size_t i, hs_event *ev, const hs_node **g)
{
    hs_model *m = L->m;
    const char *text = L->ov->stop_when[i];
    char name[32];
    if (L->ov->nstop == 1)
        snprintf(name, sizeof name, "stop_when");
    else
        snprintf(name, sizeof name, "stop_when_%zu", i + 1);
    ev->name = hs_ld_strdup(name);
    ev->text = hs_ld_strdup(text);
    ev->action = HS_EV_STOP;
    ev->pos = (hs_srcpos){ -1, 0 };
    if (!ev->name || !ev->text)
        return hs_error_nomem(L->err);
    hs_error pe;
    hs_error_init(&pe);
    L->cond = 1;
    const hs_node *e = hs_ld_parse_text(L, text, SCOPE_OUTPUT, &pe);
    if (L->err->code)
        return L->err->code;
    int cmp, dir = 0;
    *g = e ? event_function(m->dag, e, &dir, &cmp) : NULL;
    if (e && !*g) {
        hs_error_init(&pe);
        hs_error_set(&pe, HS_EXIT_MODEL, "'%s' has no crossing to find; write a > b, a < b, "
                     "or an expression whose zero is the event", hs_kind_name(e->kind));
        pe.offset = 0;
    }
    if (*g) {
        ev->dir = dir;
        ev->cmp = cmp;
        return 0;
    }
    char opt[600];
    snprintf(opt, sizeof opt, "--stop-when %s", text);
    hs_error_set(L->err, HS_EXIT_MODEL, "--stop-when '%s': %s", text, pe.msg);
    /* the caret under the condition, after "--stop-when " */
    hs_error_locate(L->err, opt, strlen(opt), 12 + (pe.offset > 0 ? (size_t)pe.offset : 0));
    L->err->line = 0;
    return L->err->code;
}

/* An event function constant once the parameters are in never crosses
 * zero: refused, at its `when` (or naming the --stop-when). */
static int check_constant(loader *L)
{
    hs_model *m = L->m;
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    const hs_node **map = xcalloc(ns, sizeof *map);
    if (!map)
        return hs_error_nomem(L->err);
    for (size_t j = 0; j < m->npar; j++)
        map[m->sym_p[j]] = hs_num(m->dag, m->pval[j]);
    for (size_t e = 0; e < m->nev && !L->err->code; e++) {
        const hs_node *f = hs_subst(m->dag, m->evf[e], map, ns);
        if (f->kind != HS_NUM || hs_ld_dag_check(L))
            continue;
        const hs_event *ev = &m->ev[e];
        if (ev->pos.src < 0) {
            hs_error_set(L->err, HS_EXIT_MODEL, "--stop-when '%s': the condition is "
                         "constant (its function is %g): it never changes", ev->text, f->value);
        } else {
            hs_error_set(L->err, HS_EXIT_MODEL, "event '%s': 'when' is constant (its function "
                         "is %g): it never crosses zero", ev->name, f->value);
            hs_model_place(m, ev->pos, L->err);
        }
    }
    free(map);
    return L->err->code;
}

int hs_ld_read_events(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    yaml_node_t *evs = hs_ld_get(L, root, "events");
    size_t nfile = 0, nstop = L->ov ? L->ov->nstop : 0;
    if (evs) {
        if (hs_ld_expect(L, evs, YAML_MAPPING_NODE, "'events'") ||
            hs_ld_check_keys(L, evs, NULL, 0, "'events'"))
            return L->err->code;
        nfile = map_len(evs);
    }
    m->ev = xcalloc(nfile + nstop, sizeof *m->ev);
    m->evf = xcalloc(nfile + nstop, sizeof *m->evf);
    if (!m->ev || !m->evf)
        return hs_error_nomem(L->err);
    if (evs) {
        FOR_PAIRS(evs, p) {
            size_t i = m->nev++;
            if (read_event(L, NODE(L, p->key), NODE(L, p->value), &m->ev[i], &m->evf[i]))
                return L->err->code;
        }
    }
    for (size_t i = 0; i < nstop; i++) {
        size_t e = m->nev++;
        if (read_stop_when(L, i, &m->ev[e], &m->evf[e]))
            return L->err->code;
        for (size_t f = 0; f < nfile; f++)
            if (strcmp(m->ev[f].name, m->ev[e].name) == 0)
                return hs_ytree_error(L->y, L->err, NODE(L, evs->data.mapping.pairs.start[f].key),
                                      "event '%s' has the name of the --stop-when condition: "
                                      "rename the event", m->ev[f].name);
    }
    return check_constant(L);
}
