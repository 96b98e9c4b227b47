/* The run settings: `simulate` and `consistency` of the model file, the
 * keyword tables the command line shares, and the command line's
 * overrides (loader.h, model.h). */
#include "loader.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const hs_stab_names[3] = { "projection", "baumgarte", "none" };
const char *const hs_cons_mode_names[2] = { "project", "reject" };
const char *const hs_dependent_names[2] = { "allow", "reject" };
const char *const hs_output_names[2] = { "exact", "interpolate" };

const hs_numset_def hs_numsets[HS_NUM_COUNT] = {
    { "t_end", offsetof(hs_settings, t_end), 0 },
    { "dt", offsetof(hs_settings, dt), 1 },
    { "step", offsetof(hs_settings, step), 1 },
    { "rtol", offsetof(hs_settings, rtol), 1 },
    { "atol", offsetof(hs_settings, atol), 1 },
    { "alpha", offsetof(hs_settings, alpha), 0 },
    { "beta", offsetof(hs_settings, beta), 0 },
};

double hs_settings_num(const hs_settings *s, hs_numset i)
{
    return *(const double *)((const char *)s + hs_numsets[i].off);
}

hs_srcpos hs_settings_pos(const hs_settings *s, hs_numset i)
{
    return i == HS_NUM_STEP ? s->step_pos : (hs_srcpos){ -1, 0 };
}

int hs_keyword(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return (int)i;
    return -1;
}

/* A scalar that must be one of names[]: *out = its index. */
static int choose(loader *L, yaml_node_t *v, const char *what, const char *const *names,
                  size_t n, int *out)
{
    int kw = hs_keyword(names, n, hs_ytree_str(v));
    if (kw >= 0) {
        *out = kw;
        return 0;
    }
    char list[256];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < n && len + 1 < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'",
                                i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]);
    return hs_ytree_error(L->y, L->err, v, "%s must be %s", what, list);
}

/* A plain decimal number (strtod takes all of it, finite or not): read as
 * a number, with the messages of one; anything else is an expression. */
static int plain_number(const char *t)
{
    char *end;
    if (!t)
        return 1;
    (void)strtod(t, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    return end != t && !*end;
}

/* simulate.KEY: a number, or an expression of numbers, pi and the
 * parameters (their values after --set), into *dst; positioned errors. */
static int file_number(loader *L, yaml_node_t *v, const char *key, double *dst)
{
    const char *t = hs_ytree_str(v);
    if (plain_number(t))
        return hs_ytree_number(L->y, v, dst, L->err);
    char what[40];
    snprintf(what, sizeof what, "simulate.%s", key);
    const hs_node *e = hs_ld_parse(L, v, SCOPE_PARAM, what);
    if (!e || hs_ld_dag_check(L))
        return L->err->code ? L->err->code : HS_EXIT_MODEL;
    if (hs_eval_node(e, L->pin, dst))
        return hs_error_nomem(L->err);
    if (!isfinite(*dst))
        return hs_ytree_error(L->y, L->err, v, "%s evaluates to %g", what, *dst);
    return 0;
}

int hs_ld_read_settings(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    hs_settings *s = &m->set;
    s->t_end = NAN;
    s->dt = NAN;
    s->method[0] = '\0';                  /* the stepper table's default */
    s->method_pos = (hs_srcpos){ -1, 0 };
    s->step = NAN;
    s->step_pos = (hs_srcpos){ -1, 0 };
    s->rtol = 1e-9;
    s->atol = 1e-9;
    s->stabilize = HS_STAB_PROJECTION;
    s->alpha = NAN;
    s->beta = NAN;
    s->mode = HS_CONS_PROJECT;
    s->tol = 1e-10;

    yaml_node_t *c = hs_ld_get(L, root, "consistency");
    if (c) {
        static const char *const keys[] = { "mode", "tolerance", "lock", "dependent" };
        if (hs_ld_expect(L, c, YAML_MAPPING_NODE, "'consistency'") ||
            hs_ld_check_keys(L, c, keys, 4, "'consistency'"))
            return L->err->code;
        yaml_node_t *v;
        if ((v = hs_ld_get(L, c, "dependent")) &&
            choose(L, v, "consistency.dependent", hs_dependent_names, 2, &s->strict_rank))
            return L->err->code;
        if ((v = hs_ld_get(L, c, "mode"))) {
            int i;
            if (choose(L, v, "consistency mode", hs_cons_mode_names, 2, &i))
                return L->err->code;
            s->mode = (hs_cons_mode)i;
        }
        if ((v = hs_ld_get(L, c, "tolerance"))) {
            if (hs_ytree_number(L->y, v, &s->tol, L->err))
                return L->err->code;
            if (!(s->tol > 0))
                return hs_ytree_error(L->y, L->err, v, "consistency tolerance must be > 0");
        }
        if ((v = hs_ld_get(L, c, "lock"))) {
            if (hs_ld_expect(L, v, YAML_SEQUENCE_NODE, "'lock'"))
                return L->err->code;
            FOR_ITEMS(v, it) {
                yaml_node_t *e = NODE(L, *it);
                const char *q = hs_ytree_str(e);
                long i = q ? hs_ld_find_coord(m, q, strlen(q)) : -1;
                if (i < 0)
                    return hs_ytree_error(L->y, L->err, e, "'lock' names '%s', which is not "
                                          "a coordinate", q ? q : "?");
                m->lock[i] = 1;
            }
        }
    }
    yaml_node_t *sim = hs_ld_get(L, root, "simulate");
    if (sim) {
        static const char *const keys[] = { "t_end", "dt", "method", "rtol", "atol",
                                            "stabilize", "alpha", "beta", "output", "step" };
        if (hs_ld_expect(L, sim, YAML_MAPPING_NODE, "'simulate'") ||
            hs_ld_check_keys(L, sim, keys, 10, "'simulate'"))
            return L->err->code;
        L->t_end_node = hs_ld_get(L, sim, "t_end");
        for (size_t i = 0; i < HS_NUM_COUNT; i++) {
            const hs_numset_def *d = &hs_numsets[i];
            double *dst = (double *)((char *)s + d->off);
            yaml_node_t *v = hs_ld_get(L, sim, d->key);
            if (!v)
                continue;
            if (file_number(L, v, d->key, dst))
                return L->err->code;
            if (d->positive && !(*dst > 0))
                return hs_ytree_error(L->y, L->err, v, "simulate.%s must be > 0 (it is %g)",
                                      d->key, *dst);
            if (i != HS_NUM_T_END && !d->positive && *dst < 0)
                return hs_ytree_error(L->y, L->err, v, "simulate.%s must be >= 0 (it is %g)",
                                      d->key, *dst);
        }
        yaml_node_t *v;
        if ((v = hs_ld_get(L, sim, "step"))) {      /* src/integrate checks it fits dt */
            int src = hs_ld_add_src(L, v);
            if (src < 0)
                return hs_error_nomem(L->err);
            s->step_pos = (hs_srcpos){ src, 0 };
        }
        if ((v = hs_ld_get(L, sim, "method"))) {
            const char *ms = hs_ytree_str(v);
            if (!ms || strlen(ms) >= sizeof s->method)
                return hs_ytree_error(L->y, L->err, v, "simulate.method must be a stepper name");
            /* src/integrate knows the methods: it checks the name, here */
            snprintf(s->method, sizeof s->method, "%s", ms);
            int src = hs_ld_add_src(L, v);
            if (src < 0)
                return hs_error_nomem(L->err);
            s->method_pos = (hs_srcpos){ src, 0 };
        }
        if ((v = hs_ld_get(L, sim, "output"))) {
            if (choose(L, v, "simulate.output", hs_output_names, 2, &s->interpolate))
                return L->err->code;
        }
        if ((v = hs_ld_get(L, sim, "stabilize"))) {
            int i;
            if (choose(L, v, "simulate.stabilize", hs_stab_names, 3, &i))
                return L->err->code;
            s->stabilize = (hs_stab)i;
        }
    }
    return 0;
}
void hs_overrides_init(hs_overrides *o)
{
    memset(o, 0, sizeof *o);
    hs_settings *s = &o->s;
    s->t_end = s->dt = s->rtol = s->atol = s->alpha = s->beta = s->tol = s->step = NAN;
    s->method[0] = '\0';
    s->method_pos = (hs_srcpos){ -1, 0 };
}

int hs_ld_apply_overrides(loader *L)
{
    hs_model *m = L->m;
    if (L->ov) {
        const hs_settings *o = &L->ov->s;
        hs_settings *s = &m->set;
        if (!isnan(o->t_end)) s->t_end = o->t_end;
        if (!isnan(o->dt)) s->dt = o->dt;
        if (o->method[0]) {
            snprintf(s->method, sizeof s->method, "%s", o->method);
            s->method_pos = (hs_srcpos){ -1, 0 };
        }
        if (!isnan(o->step)) {
            s->step = o->step;
            s->step_pos = (hs_srcpos){ -1, 0 };
        }
        if (!isnan(o->rtol)) s->rtol = o->rtol;
        if (!isnan(o->atol)) s->atol = o->atol;
        if (!isnan(o->alpha)) s->alpha = o->alpha;
        if (!isnan(o->beta)) s->beta = o->beta;
        if (!isnan(o->tol)) s->tol = o->tol;
        if (L->ov->has_stabilize) s->stabilize = o->stabilize;
        if (L->ov->has_mode) s->mode = o->mode;
        if (L->ov->has_dependent) s->strict_rank = o->strict_rank;
        if (L->ov->has_output) s->interpolate = o->interpolate;
        for (size_t i = 0; i < HS_NUM_COUNT; i++) {     /* --t-end '2*pi/w' */
            const hs_numset_def *d = &hs_numsets[i];
            if (!L->ov->num_text[i])
                continue;
            const char *label = L->ov->num_option[i] ? L->ov->num_option[i] : d->key;
            if (hs_ld_eval_option(L, label, L->ov->num_text[i],
                                  d->positive ? 1 : i == HS_NUM_T_END ? -1 : 0,
                                  (double *)((char *)s + d->off)))
                return L->err->code;
            if (i == HS_NUM_STEP)
                s->step_pos = (hs_srcpos){ -1, 0 };
        }
    }
    if (L->t_end_node && !(L->ov && (!isnan(L->ov->s.t_end) || L->ov->num_text[HS_NUM_T_END])) &&
        !(m->set.t_end > m->t0))
        return hs_ytree_error(L->y, L->err, L->t_end_node, "simulate.t_end (%g) must be "
                              "greater than the initial time (%g)", m->set.t_end, m->t0);
    if (isnan(m->set.alpha))
        m->set.alpha = 10.0;   /* documented defaults: critically damped at 1/alpha */
    if (isnan(m->set.beta))
        m->set.beta = 10.0;
    return 0;
}
