/* The `contacts` section (holosim-model(5), CONTACTS): one-sided
 * constraints gap(t, q) >= 0 with Newton's coefficient of restitution.
 *
 * A contact is a constraint of the model (its name in m->cname, its gap in
 * m->G, so that G_q, gamma, lambda_NAME, G_NAME, Gdot_NAME and R_x come
 * out of the same kernels as every constraint's), placed after the
 * bilateral ones: constraints k - ncontact .. k - 1.  The run holds it
 * (closed) or lets it go (open, like a released constraint); what switches
 * it is two events of its own, appended after the file's events and the
 * --stop-when conditions: the gap going down through 0 (an impact, while
 * it is open) and the multiplier going down through 0 (an opening, while
 * it is closed).  The integrator (integrate/contact.c) does the rest. */
#include "loader.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const contact_keys[] = { "gap", "restitution", "friction" };

static int name_ok(const char *s)
{
    if (!s || !(((*s | 32) >= 'a' && (*s | 32) <= 'z') || *s == '_'))
        return 0;
    for (const char *p = s; *p; p++)
        if (!(((*p | 32) >= 'a' && (*p | 32) <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    return 1;
}

int hs_ld_read_contact_names(loader *L, yaml_node_t *cs)
{
    hs_model *m = L->m;
    m->contact0 = m->k;               /* the bilateral constraints come first */
    if (!cs)
        return 0;
    if (hs_ld_expect(L, cs, YAML_MAPPING_NODE, "'contacts'") ||
        hs_ld_check_keys(L, cs, NULL, 0, "'contacts'"))
        return L->err->code;
    size_t nc = map_len(cs), k0 = m->k;
    if (k0 + nc > MAX_CONSTRAINTS)
        return hs_ytree_error(L->y, L->err, cs, "too many constraints and contacts (%zu; the "
                              "limit is %d)", k0 + nc, MAX_CONSTRAINTS);
    char **cn = realloc(m->cname, (k0 + nc ? k0 + nc : 1) * sizeof *cn);
    if (!cn)
        return hs_error_nomem(L->err);
    m->cname = cn;
    m->restitution = xcalloc(nc ? nc : 1, sizeof *m->restitution);
    m->restitution_expr = xcalloc(nc ? nc : 1, sizeof *m->restitution_expr);
    if (!m->restitution || !m->restitution_expr)
        return hs_error_nomem(L->err);
    for (size_t c = 0; c < nc; c++) {
        yaml_node_t *key = NODE(L, cs->data.mapping.pairs.start[c].key);
        const char *name = hs_ytree_str(key);
        if (!name_ok(name))
            return hs_ytree_error(L->y, L->err, key, "'%s' is not a valid contact name "
                                  "(letters, digits, _; not starting with a digit)",
                                  name ? name : "");
        long old;
        if (hs_strmap_get(&L->cons, name, strlen(name)) >= 0) {
            old = hs_strmap_get(&L->cons, name, strlen(name));
            return hs_ytree_error(L->y, L->err, key, "contact '%s' has the name of %s "
                                  "'%s': rename one of them", name, (size_t)old < k0 ?
                                  "constraint" : "contact", name);
        }
        if (!(m->cname[k0 + c] = hs_ld_strdup(name)))
            return hs_error_nomem(L->err);
        m->k = k0 + c + 1;
        m->ncontact = c + 1;
        m->contact0 = k0;
        if (hs_strmap_put(&L->cons, m->cname[k0 + c], strlen(name), (long)(k0 + c), NULL) < 0)
            return hs_error_nomem(L->err);
    }
    return 0;
}

int hs_ld_coefficient(loader *L, yaml_node_t *n, const char *what, const hs_node **expr,
                      double *v)
{
    hs_model *m = L->m;
    const hs_node *e = hs_ld_parse(L, n, SCOPE_INITIAL, what);
    if (!e || hs_ld_dag_check(L))
        return L->err->code;
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    double *in = xcalloc(ns ? ns : 1, sizeof *in);
    if (!in)
        return hs_error_nomem(L->err);
    for (size_t i = 0; i < ns; i++)
        in[i] = NAN;
    for (size_t j = 0; j < m->npar; j++)
        in[m->sym_p[j]] = m->pval[j];
    int bad = hs_eval_node(e, in, v);
    free(in);
    if (bad)
        return hs_error_nomem(L->err);
    if (!isfinite(*v))
        return hs_ytree_error(L->y, L->err, n, "%s is not finite (%g)", what, *v);
    *expr = e;
    return 0;
}

/* `restitution`: a number in [0, 1] (or an expression of parameters). */
static int read_restitution(loader *L, yaml_node_t *rn, const char *name, size_t c)
{
    hs_model *m = L->m;
    if (hs_ld_expect(L, rn, YAML_SCALAR_NODE, "a contact's 'restitution'") ||
        hs_ld_coefficient(L, rn, "a contact's restitution", &m->restitution_expr[c],
                          &m->restitution[c]))
        return L->err->code;
    double v = m->restitution[c];
    if (v < 0 || v > 1)
        return hs_ytree_error(L->y, L->err, rn, "contact '%s': restitution %g is outside "
                              "[0, 1] (0: the contact stays closed, 1: no energy lost)",
                              name, v);
    return 0;
}

int hs_model_eval_coefficients(hs_model *m, const double *in)
{
    for (size_t c = 0; c < m->ncontact; c++) {
        if (!m->restitution_expr || !m->restitution_expr[c] ||
            hs_eval_node(m->restitution_expr[c], in, &m->restitution[c]))
            return -1;
        if (!(m->restitution[c] >= 0 && m->restitution[c] <= 1))
            return -1;
    }
    for (size_t f = 0; f < m->nfriction; f++) {
        if (!m->fric_mu_expr || !m->fric_mu_expr[f] ||
            hs_eval_node(m->fric_mu_expr[f], in, &m->fric_mu[f]) ||
            hs_eval_node(m->fric_mus_expr[f], in, &m->fric_mus[f]))
            return -1;
        if (!(m->fric_mu[f] >= 0 && m->fric_mus[f] >= m->fric_mu[f]))
            return -1;
    }
    return 0;
}

/* Does e read coordinate q_i (after every define is expanded)? */
static int reads_q(const hs_model *m, const hs_node *e)
{
    for (size_t i = 0; i < m->n; i++)
        if (hs_depends_on(e, m->sym_q[i]))
            return 1;
    return 0;
}

int hs_ld_read_contacts(loader *L, yaml_node_t *cs)
{
    hs_model *m = L->m;
    size_t k0 = m->contact0;
    for (size_t c = 0; cs && c < m->ncontact; c++) {
        yaml_node_t *key = NODE(L, cs->data.mapping.pairs.start[c].key);
        yaml_node_t *val = NODE(L, cs->data.mapping.pairs.start[c].value);
        const char *name = m->cname[k0 + c];
        if (val->type != YAML_MAPPING_NODE)
            return hs_ytree_error(L->y, L->err, val, "contact '%s' must be a mapping {gap, "
                                  "restitution}, found %s", name, hs_ytree_kind(val));
        if (hs_ld_check_keys(L, val, contact_keys, 3, "a contact"))
            return L->err->code;
        yaml_node_t *gn = hs_ld_get(L, val, "gap"), *rn = hs_ld_get(L, val, "restitution");
        if (!gn)
            return hs_ytree_error(L->y, L->err, val, "contact '%s' has no 'gap' (the "
                                  "expression of t and q that is >= 0, 0 at contact)", name);
        if (!rn)
            return hs_ytree_error(L->y, L->err, val, "contact '%s' has no 'restitution' "
                                  "(Newton's coefficient in [0, 1])", name);
        if (read_restitution(L, rn, name, c))
            return L->err->code;
        m->cpos[k0 + c] = (hs_srcpos){ (int32_t)L->si->nsrc, 0 };
        const hs_node *g = hs_ld_parse(L, gn, SCOPE_MODEL, "a contact's gap");
        if (!g || hs_ld_forbid_velocity(L, g, gn, "a contact's gap"))
            return L->err->code;
        if (!reads_q(m, g))
            return hs_ytree_error(L->y, L->err, gn, "contact '%s': the gap '%s' does not "
                                  "depend on the coordinates: it can never close or open",
                                  name, hs_ytree_str(gn));
        m->G[k0 + c] = g;
        (void)key;
    }
    return 0;
}

/* Two events per contact: its impact (the gap going down through 0) and
 * its opening (lambda_NAME going down through 0). */
int hs_ld_contact_events(loader *L)
{
    hs_model *m = L->m;
    size_t nc = m->ncontact, k0 = m->contact0, ne = m->nev + 2 * nc;
    if (!nc)
        return 0;
    hs_event *ev = realloc(m->ev, ne * sizeof *ev);
    if (ev)
        m->ev = ev;
    const hs_node **evf = realloc(m->evf, ne * sizeof *evf);
    if (evf)
        m->evf = evf;
    if (!ev || !evf)
        return hs_error_nomem(L->err);
    for (size_t c = 0; c < nc; c++)
        for (int kind = 0; kind < 2; kind++) {
            size_t j = k0 + c, e = m->nev++;
            size_t q;
            memset(&m->ev[e], 0, sizeof m->ev[e]);
            m->ev[e].name = hs_ld_strdup(m->cname[j]);
            m->ev[e].text = hs_ld_strdup(kind ? "lambda < 0" : "gap < 0");
            m->ev[e].dir = -1;
            m->ev[e].action = kind ? HS_EV_OPEN : HS_EV_IMPACT;
            m->ev[e].contact = j;
            m->ev[e].pos = m->cpos[j];
            if (!m->ev[e].name || !m->ev[e].text)
                return hs_error_nomem(L->err);
            if (!kind) {
                m->evf[e] = m->G[j];
                continue;
            }
            char nm[200];
            snprintf(nm, sizeof nm, "lambda_%s", m->cname[j]);
            const hs_quantity *qt = hs_ld_quantity(L, nm, strlen(nm), &q);
            m->evf[e] = qt ? hs_ld_derived(L, nm, strlen(nm)) : NULL;
            if (!m->evf[e])
                return L->err->code ? L->err->code : hs_error_nomem(L->err);
        }
    return 0;
}
