/* The `events` key and the command line's --stop-when (loader.h): each
 * event's function g (a zero crossing, in a direction), its action, and
 * the checks that an event can happen at all. */
#include "loader.h"

#include <math.h>
#include <string.h>

#include "../util/suggest.h"

static const char *const ev_keys[] = { "when", "direction", "action" };
static const char *const dir_names[] = { "up", "down", "both" };
static const char *const action_names[HS_EV_NWRITTEN] = { "stop", "record", "release", "hold" };

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
    int kw = e - b < sizeof word ? hs_keyword(action_names, HS_EV_NWRITTEN, word) : -1;
    if (kw < 0) {
        const char *near = hs_nearest(word, action_names, HS_EV_NWRITTEN);
        return hs_ytree_error_in(L->y, L->err, an, b, "unknown action '%.*s' (stop, record, "
                                 "release NAME... or hold NAME...)%s%s%s", (int)(e - b), s + b,
                                 near ? "; did you mean '" : "", near ? near : "",
                                 near ? "'?" : "");
    }
    ev->action = (hs_ev_action)kw;
    if (kw != HS_EV_RELEASE && kw != HS_EV_HOLD) {
        if (s[e + strspn(s + e, " \t")])
            return hs_ytree_error_in(L->y, L->err, an, e + strspn(s + e, " \t"),
                                     "'%s' takes no names (only release and hold do)", word);
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
            return hs_ytree_error_in(L->y, L->err, an, p, "%s: '%s' is not a constraint "
                                     "of the model%s%s%s", word, nm, !m->k ? " (it has none)" :
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
        return hs_ytree_error(L->y, L->err, an, "%s needs the constraints to %s: %s NAME "
                              "[NAME...]", word, kw == HS_EV_HOLD ? "take back" : "let go",
                              word);
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
    const char *on = hs_optname(L->m->names, HS_OPT_STOP_WHEN);
    snprintf(opt, sizeof opt, "%s %s", on, text);
    hs_error_set(L->err, HS_EXIT_MODEL, "%s '%s': %s", on, text, pe.msg);
    /* the caret under the condition, after the option's name */
    hs_error_locate(L->err, opt, strlen(opt),
                    strlen(on) + 1 + (pe.offset > 0 ? (size_t)pe.offset : 0));
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
            hs_error_set(L->err, HS_EXIT_MODEL, "%s '%s': the condition is constant "
                         "(its function is %g): it never changes",
                         hs_optname(m->names, HS_OPT_STOP_WHEN), ev->text, f->value);
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
                                      "event '%s' has the name of the %s condition: "
                                      "rename the event", m->ev[f].name,
                                      hs_optname(m->names, HS_OPT_STOP_WHEN));
    }
    return check_constant(L);
}
