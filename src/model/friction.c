/* The `friction` section (holosim-model(5), FRICTION): Coulomb friction
 * elements, each on the reaction of named constraints or contacts.
 *
 * An element is a constraint row of the model too (after the contacts:
 * constraints fric0 .. k - 1), whose function is its `slip`, an
 * expression of t and q whose rate is the sliding velocity.  The run holds
 * it while the element sticks (slip = its value at the stick, the
 * multiplier lambda_NAME the friction force) and lets it go while it
 * slides (the force mu |N| against the sliding, along the gradient of
 * `slip`, lambda_NAME showing it).  Two events per element, after the
 * contacts': the slip rate crossing 0 (while sliding: stick or reverse)
 * and mu_static |N| - |lambda_NAME| going down through 0 (while sticking:
 * it slips), N the reaction of the normal rows, its norm over the model's
 * coordinates. */
#include "loader.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const fric_keys[] = { "normal", "slip", "mu", "mu_static" };
static const char *const contact_fric_keys[] = { "slip", "mu", "mu_static" };


int hs_ld_read_friction_names(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    yaml_node_t *fs = hs_ld_get(L, root, "friction");
    m->fric0 = m->k;
    if (fs && (hs_ld_expect(L, fs, YAML_MAPPING_NODE, "'friction'") ||
               hs_ld_check_keys(L, fs, NULL, 0, "'friction'")))
        return L->err->code;
    size_t ns = fs ? map_len(fs) : 0, nf = ns + hs_ld_contact_friction(L, root, SIZE_MAX, NULL);
    size_t k0 = m->k;
    if (!nf)
        return 0;
    if (k0 + nf > MAX_CONSTRAINTS)
        return hs_ytree_error(L->y, L->err, fs, "too many constraints, contacts and friction "
                              "elements (%zu; the limit is %d)", k0 + nf, MAX_CONSTRAINTS);
    char **cn = realloc(m->cname, (k0 + nf ? k0 + nf : 1) * sizeof *cn);
    if (!cn)
        return hs_error_nomem(L->err);
    m->cname = cn;
    m->fric_mu = xcalloc(nf + 1, sizeof *m->fric_mu);
    m->fric_mus = xcalloc(nf + 1, sizeof *m->fric_mus);
    m->fric_norm_start = xcalloc(nf + 1, sizeof *m->fric_norm_start);
    m->fric_mu_expr = xcalloc(nf + 1, sizeof *m->fric_mu_expr);
    m->fric_mus_expr = xcalloc(nf + 1, sizeof *m->fric_mus_expr);
    if (!m->fric_mu || !m->fric_mus || !m->fric_norm_start || !m->fric_mu_expr ||
        !m->fric_mus_expr)
        return hs_error_nomem(L->err);
    for (size_t f = 0; f < nf; f++) {
        char cname[100];
        const char *name = cname;
        yaml_node_t *key;
        if (f < ns) {
            key = NODE(L, fs->data.mapping.pairs.start[f].key);
            name = hs_ytree_str(key);
        } else {                        /* a contact's: friction_CONTACT */
            hs_ld_contact_friction(L, root, f - ns, &key);
            size_t c = 0;
            yaml_node_t *cs = hs_ld_get(L, root, "contacts");
            for (; c < m->ncontact; c++) {
                yaml_node_t *v = NODE(L, cs->data.mapping.pairs.start[c].value);
                if (v->type == YAML_MAPPING_NODE && hs_ld_get_key(L, v, "friction") == key)
                    break;
            }
            snprintf(cname, sizeof cname, "friction_%.80s", m->cname[m->contact0 + c]);
        }
        int ok = name && (((*name | 32) >= 'a' && (*name | 32) <= 'z') || *name == '_');
        for (const char *p = name; ok && *p; p++)
            ok = ((*p | 32) >= 'a' && (*p | 32) <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
        if (!ok)
            return hs_ytree_error(L->y, L->err, key, "'%s' is not a valid friction element "
                                  "name (letters, digits, _; not starting with a digit)",
                                  name ? name : "");
        long old = hs_strmap_get(&L->cons, name, strlen(name));
        if (old >= 0)
            return hs_ytree_error(L->y, L->err, key, "friction element '%s' has the name of "
                                  "%s '%s': rename one of them", name, (size_t)old <
                                  m->contact0 ? "constraint" : (size_t)old < k0 ? "contact" :
                                  "friction element", name);
        if (!(m->cname[k0 + f] = hs_ld_strdup(name)))
            return hs_error_nomem(L->err);
        m->k = k0 + f + 1;
        m->nfriction = f + 1;
        if (hs_strmap_put(&L->cons, m->cname[k0 + f], strlen(name), (long)(k0 + f), NULL) < 0)
            return hs_error_nomem(L->err);
    }
    return 0;
}

/* A coefficient >= 0 of key `what` (a number or an expression of parameters). */
static int read_mu(loader *L, yaml_node_t *n, const char *name, const char *what, double *mu,
                   const hs_node **expr)
{
    char desc[80];
    snprintf(desc, sizeof desc, "a friction element's %s", what);
    if (hs_ld_expect(L, n, YAML_SCALAR_NODE, "a friction coefficient") ||
        hs_ld_coefficient(L, n, desc, expr, mu))
        return L->err->code;
    if (*mu < 0)
        return hs_ytree_error(L->y, L->err, n, "friction '%s': %s %g is negative (a "
                              "friction coefficient is >= 0)", name, what, *mu);
    return 0;
}

/* `normal`: names of constraints or contacts, separated by spaces. */
static int read_normal(loader *L, yaml_node_t *n, const char *name, size_t f)
{
    hs_model *m = L->m;
    if (hs_ld_expect(L, n, YAML_SCALAR_NODE, "a friction element's 'normal'"))
        return L->err->code;
    const char *s = hs_ytree_str(n);
    size_t cnt = 0;
    for (size_t p = strspn(s, " \t"); s[p]; p += strspn(s + p, " \t")) {
        size_t q = p + strcspn(s + p, " \t");
        long j = hs_ld_find_constraint(L, s + p, q - p);
        if (j < 0 || (size_t)j >= m->fric0) {
            char nm[80];
            snprintf(nm, sizeof nm, "%.*s", (int)(q - p < 79 ? q - p : 79), s + p);
            return hs_ytree_error_in(L->y, L->err, n, p, "friction '%s': normal '%s' is %s",
                                     name, nm, j < 0 ? "not a constraint or contact of the "
                                     "model" : "a friction element (name the constraints or "
                                     "contacts that press the surfaces together)");
        }
        size_t *nn = realloc(m->fric_norm, (m->nfric_norm + 1) * sizeof *nn);
        if (!nn)
            return hs_error_nomem(L->err);
        m->fric_norm = nn;
        m->fric_norm[m->nfric_norm++] = (size_t)j;
        cnt++;
        p = q;
    }
    if (!cnt)
        return hs_ytree_error(L->y, L->err, n, "friction '%s': 'normal' names no constraint",
                              name);
    m->fric_norm_start[f + 1] = m->nfric_norm;
    return 0;
}

int hs_ld_read_friction(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    yaml_node_t *fs = hs_ld_get(L, root, "friction");
    size_t ns = hs_ld_friction_section_len(L, root);
    for (size_t f = 0; f < m->nfriction; f++) {
        size_t j = m->fric0 + f;
        const char *name = m->cname[j];
        yaml_node_t *val, *key = NULL;
        if (f < ns) {
            val = NODE(L, fs->data.mapping.pairs.start[f].value);
        } else {
            hs_ld_contact_friction(L, root, f - ns, &key);
            val = NULL;
            yaml_node_t *cs = hs_ld_get(L, root, "contacts");
            for (size_t c = 0; c < m->ncontact && !val; c++) {
                yaml_node_t *v = NODE(L, cs->data.mapping.pairs.start[c].value);
                if (v->type == YAML_MAPPING_NODE && hs_ld_get_key(L, v, "friction") == key) {
                    val = hs_ld_get(L, v, "friction");
                    m->fric_norm_start[f + 1] = m->nfric_norm + 1;
                    size_t *nn = realloc(m->fric_norm, (m->nfric_norm + 1) * sizeof *nn);
                    if (!nn)
                        return hs_error_nomem(L->err);
                    m->fric_norm = nn;
                    m->fric_norm[m->nfric_norm++] = m->contact0 + c;
                }
            }
        }
        const char *keys_text = key ? "{slip, mu, mu_static}" : "{normal, slip, mu, mu_static}";
        if (val->type != YAML_MAPPING_NODE)
            return hs_ytree_error(L->y, L->err, val, "friction '%s' must be a mapping %s, "
                                  "found %s", name, keys_text, hs_ytree_kind(val));
        if (hs_ld_check_keys(L, val, key ? contact_fric_keys : fric_keys, key ? 3 : 4,
                             key ? "a contact's friction" : "a friction element"))
            return L->err->code;
        yaml_node_t *nn = key ? NULL : hs_ld_get(L, val, "normal");
        yaml_node_t *sn = hs_ld_get(L, val, "slip");
        yaml_node_t *mn = hs_ld_get(L, val, "mu"), *msn = hs_ld_get(L, val, "mu_static");
        const char *miss = !nn && !key ? "normal" : !sn ? "slip" : !mn ? "mu" : NULL;
        if (miss)
            return hs_ytree_error(L->y, L->err, val, "friction '%s' has no '%s'", name, miss);
        if ((nn && read_normal(L, nn, name, f)) ||
            read_mu(L, mn, name, "mu", &m->fric_mu[f], &m->fric_mu_expr[f]))
            return L->err->code;
        m->fric_mus[f] = m->fric_mu[f];
        m->fric_mus_expr[f] = m->fric_mu_expr[f];
        if (msn && read_mu(L, msn, name, "mu_static", &m->fric_mus[f], &m->fric_mus_expr[f]))
            return L->err->code;
        if (m->fric_mus[f] < m->fric_mu[f])
            return hs_ytree_error(L->y, L->err, msn, "friction '%s': mu_static %g is below mu "
                                  "%g (sticking holds at least what sliding does)", name,
                                  m->fric_mus[f], m->fric_mu[f]);
        m->cpos[j] = (hs_srcpos){ (int32_t)L->si->nsrc, 0 };
        const hs_node *g = hs_ld_parse(L, sn, SCOPE_MODEL, "a friction element's slip");
        if (!g || hs_ld_forbid_velocity(L, g, sn, "a friction element's slip"))
            return L->err->code;
        int reads = 0;
        for (size_t i = 0; i < m->n && !reads; i++)
            reads = hs_depends_on(g, m->sym_q[i]);
        if (!reads)
            return hs_ytree_error(L->y, L->err, sn, "friction '%s': the slip '%s' does not "
                                  "depend on the coordinates: nothing slides", name,
                                  hs_ytree_str(sn));
        m->G[j] = g;
    }
    return 0;
}

/* |N| of element f: the norm of sum over its normal rows n of
 * dG_n/dq lambda_n. */
static const hs_node *normal_norm(loader *L, size_t f)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    const hs_node *s = hs_num(d, 0);
    for (size_t i = 0; i < m->n && s; i++) {
        const hs_node *Ni = hs_num(d, 0);
        for (size_t p = m->fric_norm_start[f]; p < m->fric_norm_start[f + 1] && Ni; p++) {
            size_t nrow = m->fric_norm[p];
            const hs_node *gq = hs_model_G_q(m, nrow, i);
            if (!gq)
                continue;
            char nm[200];
            snprintf(nm, sizeof nm, "lambda_%s", m->cname[nrow]);
            const hs_node *lam = hs_ld_derived(L, nm, strlen(nm));
            Ni = lam ? hs_add(d, Ni, hs_mul(d, gq, lam)) : NULL;
        }
        s = Ni ? hs_add(d, s, hs_mul(d, Ni, Ni)) : NULL;
    }
    return s ? hs_call1(d, HS_SQRT, s) : NULL;
}

int hs_ld_friction_events(loader *L)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t nf = m->nfriction, ne = m->nev + 2 * nf;
    if (!nf)
        return 0;
    hs_event *ev = realloc(m->ev, ne * sizeof *ev);
    if (ev)
        m->ev = ev;
    const hs_node **evf = realloc(m->evf, ne * sizeof *evf);
    if (evf)
        m->evf = evf;
    if (!ev || !evf)
        return hs_error_nomem(L->err);
    for (size_t f = 0; f < nf; f++)
        for (int kind = 0; kind < 2; kind++) {
            size_t j = m->fric0 + f, e = m->nev++;
            memset(&m->ev[e], 0, sizeof m->ev[e]);
            m->ev[e].name = hs_ld_strdup(m->cname[j]);
            m->ev[e].text = hs_ld_strdup(kind ? "|lambda| > mu_static |N|" : "slip rate = 0");
            m->ev[e].dir = kind ? -1 : 0;
            m->ev[e].action = kind ? HS_EV_UNSTICK : HS_EV_SLIPSTOP;
            m->ev[e].contact = j;
            m->ev[e].pos = m->cpos[j];
            if (!m->ev[e].name || !m->ev[e].text)
                return hs_error_nomem(L->err);
            if (!kind) {
                m->evf[e] = m->Gdot[j];
                continue;
            }
            char nm[200];
            snprintf(nm, sizeof nm, "lambda_%s", m->cname[j]);
            const hs_node *lam = hs_ld_derived(L, nm, strlen(nm)), *N = normal_norm(L, f);
            if (!lam || !N)
                return L->err->code ? L->err->code : hs_error_nomem(L->err);
            m->evf[e] = hs_sub(d, hs_mul(d, hs_num(d, m->fric_mus[f]), N),
                               hs_call1(d, HS_ABS, lam));
        }
    return 0;
}
