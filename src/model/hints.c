/* Hints for the loader's error messages (error paths only): the name a
 * misspelt one most likely means, or why a known name is not visible. */
#include "loader.h"

#include <ctype.h>
#include <string.h>

#include "../util/suggest.h"

static int known(const named *a, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i].name, s) == 0)
            return 1;
    return 0;
}

const char *hs_ld_velocity_hint(const char *what)
{
    if (!strncmp(what, "a holonomic constraint", 22))
        return ": constraints are holonomic, G(t, q) = 0 (a velocity constraint is not)";
    if (!strncmp(what, "the potential", 13))
        return ": a velocity-dependent potential goes in a 'lagrangian', or its force under "
               "'forces'";
    return ": a velocity-dependent force belongs under 'forces'";
}

const char *hs_ld_nearest_param(loader *L, const char *s)
{
    const named *a = L->par;
    size_t n = L->npar;
    const char **c = xcalloc(n, sizeof *c);
    if (!c)
        return NULL;
    for (size_t i = 0; i < n; i++)
        c[i] = a[i].name;
    const char *near = hs_nearest(s, c, n);
    free(c);
    return near;
}

/* The coordinate (or ambient name) a velocity spelt without a prime stands
 * for: xdot, x_dot, dx, xd, vx, v_x for a name x; NULL when none. */
static const char *velocity_of(loader *L, const char *s, size_t len)
{
    static const char *const pre[] = { "d", "v", "v_" };
    static const char *const suf[] = { "dot", "_dot", "d", "_d", "_v" };
    char base[80];
    for (size_t i = 0; i < 3 + 5; i++) {
        const char *a = i < 3 ? pre[i] : "", *z = i < 3 ? "" : suf[i - 3];
        size_t la = strlen(a), lz = strlen(z);
        if (len <= la + lz || strncmp(s, a, la) != 0 || strcmp(s + len - lz, z) != 0)
            continue;
        size_t lb = len - la - lz;
        memcpy(base, s + la, lb);
        base[lb] = '\0';
        if (hs_ld_find_coord(L->m, base, lb) >= 0)
            return L->m->qname[hs_ld_find_coord(L->m, base, lb)];
        for (size_t j = 0; j < L->namb; j++)
            if (strcmp(L->amb[j].name, base) == 0)
                return L->amb[j].name;
    }
    return NULL;
}

/* " (did you mean 'm'?)" after "unknown name 'M'" at pe->offset of text:
 * the nearest name the scope knows; or why a known name is not visible. */
void hs_ld_name_hint(loader *L, const hs_error *pe, int scope, const char *text,
                     char *hint, size_t cap)
{
    hs_model *m = L->m;
    hint[0] = '\0';
    if (strncmp(pe->msg, "unknown name '", 14) != 0 || pe->offset < 0)
        return;
    char s[80];
    size_t len = 0;
    for (const char *p = text + pe->offset; (isalnum((unsigned char)*p) || *p == '_') &&
         len + 1 < sizeof s; p++)
        s[len++] = *p;
    s[len] = '\0';
    if (scope < SCOPE_MODEL && (hs_ld_find_coord(m, s, len) >= 0 ||
                                 known(L->def, L->ndef, s) ||
                                 (len == 1 && s[0] == 't'))) {
        snprintf(hint, cap, " ('%s' is not known here: %s only numbers, pi and parameters)",
                 s, scope == SCOPE_PARAM ? "a parameter may use" : "initial values may use");
        return;
    }
    char m1[96];                /* the first member of a family of that name */
    snprintf(m1, sizeof m1, "%s_", s);
    size_t ml = strlen(m1);
    for (size_t i = 0; i < L->npar + m->n && len < 64; i++) {
        const char *nm = i < L->npar ? L->par[i].name : m->qname[i - L->npar];
        if (strncmp(nm, m1, ml) == 0 && isdigit((unsigned char)nm[ml])) {
            snprintf(hint, cap, " ('%s' is a family, %s ...: write %s[k] for a member)", s, nm, s);
            return;
        }
    }
    const char *vel = scope >= SCOPE_MODEL ? velocity_of(L, s, len) : NULL;
    if (vel) {
        snprintf(hint, cap, " (a velocity is written with a prime: %s')", vel);
        return;
    }
    for (size_t i = 0; i < L->nout && scope >= SCOPE_MODEL; i++)
        if (strcmp(L->out[i].name, s) == 0) {
            snprintf(hint, cap, " ('%s' is an output, a column: expressions read defines, "
                     "not outputs; move '%s' to define to read it here)", s, s);
            return;
        }
    int out = scope == SCOPE_OUTPUT;
    /* the candidates: pi, parameters; in a model's expressions t, the
     * coordinates, defines, ambient names; in outputs and events the
     * quantities the dynamics computes (the table, model.h) */
    size_t n = 1 + L->npar + (scope >= SCOPE_MODEL ? L->ndef + L->namb : 0), k = 0, nmade = 0;
    for (size_t e = 0; e < HS_NQUANTITIES; e++)
        n += hs_quantity_count(m, &hs_quantities[e]);
    const char **c = xcalloc(n, sizeof *c);
    char **made = xcalloc(n, sizeof *made);
    if (!c || !made) {
        free(c);
        free(made);
        return;
    }
    c[k++] = "pi";
    for (size_t i = 0; i < L->npar; i++)
        c[k++] = L->par[i].name;
    for (size_t e = 0; e < HS_NQUANTITIES && scope >= SCOPE_MODEL; e++) {
        const hs_quantity *q = &hs_quantities[e];
        if (q->suffix[0] || !(q->flags & (out ? HS_QTY_STATE | HS_QTY_DERIVED : HS_QTY_STATE)))
            continue;
        for (size_t i = 0; i < hs_quantity_count(m, q); i++) {
            char nm[160];
            if (hs_quantity_name(m, q, i, nm, sizeof nm) >= sizeof nm ||
                !(made[nmade] = hs_ld_strdup(nm)))
                continue;
            c[k++] = made[nmade++];
        }
    }
    for (size_t i = 0; i < L->ndef && scope >= SCOPE_MODEL; i++)
        c[k++] = L->def[i].name;
    for (size_t i = 0; i < L->namb && scope >= SCOPE_MODEL; i++)
        c[k++] = L->amb[i].name;
    /* a single letter is near every other one: only a change of case counts */
    const char *near = len > 1 ? hs_nearest(s, c, k) : NULL;
    for (size_t i = 0; i < k && !near; i++)
        if (strlen(c[i]) == len && hs_edit_distance(s, c[i]) == 0)
            near = c[i];
    /* a quantity of the model that this expression cannot read */
    size_t idx;
    const hs_quantity *q = hs_ld_quantity(L, s, len, &idx);
    if (q && !out && (q->flags & HS_QTY_DERIVED))
        snprintf(hint, cap, " ('%s' is computed by the dynamics: only outputs and events "
                 "can read it)", s);
    else if (q && !(q->flags & (HS_QTY_DERIVED | HS_QTY_STATE)))
        snprintf(hint, cap, " ('%s' is a column of the CSV, not a name expressions can read)",
                 s);
    else if (near)
        snprintf(hint, cap, " (did you mean '%s'?)", near);
    else if (!strcmp(s, "inf") || !strcmp(s, "nan") || !strcmp(s, "Inf") || !strcmp(s, "NaN"))
        snprintf(hint, cap, " (infinite and NaN values are not allowed: give a finite "
                 "number)");
    else
        snprintf(hint, cap, " (no %s has that name: give it a value under 'parameters'%s)",
                 scope >= SCOPE_MODEL ? "coordinate, parameter or define" : "parameter",
                 scope >= SCOPE_MODEL ? " or an expression under 'define'" : "");
    for (size_t i = 0; i < nmade; i++)
        free(made[i]);
    free(made);
    free(c);
}
