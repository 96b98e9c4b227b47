/* The columns of a run (columns.h). */
#include "columns.h"
#include "../dynamics/dynamics.h"
#include "../util/vec.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int add(hs_columns *cs, size_t *cap, hs_col_kind k, size_t idx, const char *fmt,
               const char *name)
{
    if (HS_VEC_RESERVE(cs->c, *cap, cs->n + 1))
        return -1;
    size_t len = strlen(fmt) + strlen(name) + 1;
    char *s = malloc(len);
    if (!s)
        return -1;
    snprintf(s, len, fmt, name);
    cs->c[cs->n++] = (hs_col){ k, idx, s };
    return 0;
}

/* All columns, in order; `dflt` = only the default ones: the model's
 * quantities (model.h) that are columns, in the table's order. */
static int all_columns(const hs_model *m, int dflt, hs_columns *cs)
{
    size_t cap = 0;
    int rc = 0;
    cs->n = 0;
    cs->c = NULL;
    for (size_t e = 0; e < HS_NQUANTITIES; e++) {
        const hs_quantity *q = &hs_quantities[e];
        if (!(q->flags & HS_QTY_COLUMN) || (dflt && !(q->flags & HS_QTY_DEFAULT)))
            continue;
        for (size_t i = 0; i < hs_quantity_count(m, q); i++) {
            const char *b = hs_quantity_base(m, q, i);
            char fmt[32];
            snprintf(fmt, sizeof fmt, "%s%%s%s", q->prefix, q->suffix);
            rc |= add(cs, &cap, q->id, i, fmt, b ? b : "");
        }
    }
    return rc;
}

void hs_columns_free(hs_columns *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->c[i].name);
    free(c->c);
    c->c = NULL;
    c->n = 0;
}

static int append_set(hs_columns *dst, size_t *cap, const hs_columns *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (add(dst, cap, src->c[i].kind, src->c[i].idx, "%s", src->c[i].name))
            return -1;
    return 0;
}

static int oom(hs_error *err)
{
    return hs_error_nomem(err);
}

static int find_col(const hs_columns *cs, const char *name)
{
    for (size_t i = 0; i < cs->n; i++)
        if (strcmp(cs->c[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* "--columns: unknown column 'x'; valid columns: t,x,... (or 'default', 'all')",
 * the option named as the caller names it (label) */
static int unknown_column(const hs_columns *all, const char *name, int glob,
                          const char *label, hs_error *err)
{
    char valid[2048];
    size_t vl = 0;
    valid[0] = '\0';
    for (size_t j = 0; j < all->n && vl + 1 < sizeof valid; j++)
        vl += (size_t)snprintf(valid + vl, sizeof valid - vl, "%s%s", j ? "," : "",
                               all->c[j].name);
    return hs_error_set(err, HS_EXIT_USAGE, "%s: %s '%s'; valid columns: %s (or "
                        "'default', 'all')", label, glob ? "no column matches" : "unknown column",
                        name, valid);
}

/* One name of the list (trimmed), appended to out. */
static int select_one(const char *name, const hs_columns *all, const hs_columns *dflt,
                      hs_columns *out, size_t *cap, const char *label, hs_error *err)
{
    if (strcmp(name, "default") == 0)
        return append_set(out, cap, dflt) ? oom(err) : 0;
    if (strcmp(name, "all") == 0)
        return append_set(out, cap, all) ? oom(err) : 0;
    if (strpbrk(name, "*?[")) {
        size_t before = out->n;
        for (size_t i = 0; i < all->n; i++)
            if (fnmatch(name, all->c[i].name, 0) == 0 &&
                add(out, cap, all->c[i].kind, all->c[i].idx, "%s", all->c[i].name))
                return oom(err);
        return out->n > before ? 0 : unknown_column(all, name, 1, label, err);
    }
    int i = find_col(all, name);
    if (i < 0)
        return unknown_column(all, name, 0, label, err);
    return add(out, cap, all->c[i].kind, all->c[i].idx, "%s", all->c[i].name) ? oom(err) : 0;
}

/* The default and the full set of m's columns; out emptied.  -1 when out
 * of memory (nothing to free). */
static int both_sets(const hs_model *m, hs_columns *out, hs_columns *all, hs_columns *dflt)
{
    memset(out, 0, sizeof *out);
    if (!(all_columns(m, 1, dflt) | all_columns(m, 0, all)))
        return 0;
    hs_columns_free(all);
    hs_columns_free(dflt);
    return -1;
}

int hs_columns_select(const hs_model *m, const char *list, hs_columns *out,
                      hs_error *err)
{
    hs_columns all, dflt;
    if (both_sets(m, out, &all, &dflt))
        return oom(err);
    int rc = 0;
    if (!list) {
        *out = dflt;
        hs_columns_free(&all);
        return 0;
    }
    size_t cap = 0;
    const char *p = list;
    while (!rc) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        char name[256];
        if (len == 0 || len >= sizeof name) {
            rc = hs_error_set(err, HS_EXIT_USAGE, "%s: empty or too long column name "
                              "in '%s'", hs_optname(m->names, HS_OPT_COLUMNS), list);
            break;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        rc = select_one(name, &all, &dflt, out, &cap, hs_optname(m->names, HS_OPT_COLUMNS),
                        err);
        if (!e)
            break;
        p = e + 1;
    }
    hs_columns_free(&all);
    hs_columns_free(&dflt);
    if (rc)
        hs_columns_free(out);
    return rc;
}

int hs_columns_catalog(const hs_model *m, hs_columns *out, size_t *ndefault,
                       hs_error *err)
{
    hs_columns all, dflt;
    if (both_sets(m, out, &all, &dflt))
        return oom(err);
    size_t cap = 0;
    int rc = append_set(out, &cap, &dflt);
    for (size_t i = 0; i < all.n && !rc; i++)
        if (find_col(&dflt, all.c[i].name) < 0)
            rc = add(out, &cap, all.c[i].kind, all.c[i].idx, "%s", all.c[i].name);
    *ndefault = dflt.n;
    hs_columns_free(&all);
    hs_columns_free(&dflt);
    if (rc) {
        hs_columns_free(out);
        return oom(err);
    }
    return 0;
}

double hs_column_value(const hs_model *m, const hs_col *c, const hs_row *r)
{
    size_t i = c->idx;
    switch (c->kind) {
    case HS_QTY_T: return r->t;
    case HS_QTY_Q: return r->q[i];
    case HS_QTY_V: return r->v[i];
    case HS_QTY_A: return r->a[i];
    case HS_QTY_LAMBDA: return r->Lambda[i];
    case HS_QTY_G: return r->aux[m->off_G + i];
    case HS_QTY_GDOT: return r->aux[m->off_Gdot + i];
    case HS_QTY_CLOSED: return r->released && r->released[m->contact0 + i] ? 0 : 1;
    case HS_QTY_EIMP: return r->E_impact;
    case HS_QTY_E: return r->E;
    case HS_QTY_TKIN: return r->T;
    case HS_QTY_U: return r->aux[m->off_U];
    case HS_QTY_H: return r->H;
    case HS_QTY_R: return hs_dyn_reaction(m, r->Gz, r->Lambda, i);
    case HS_QTY_PR: return hs_dyn_reaction_power(m, r->Lambda, r->aux);
    case HS_QTY_PRES: return r->pres;
    case HS_QTY_WR: return r->W[0];
    case HS_QTY_WNC: return r->W[1];
    case HS_QTY_PNC: return r->aux[m->off_Pnc];    /* F_nc . v: the rate of W_nc */
    case HS_QTY_WT: return r->W[2];
    case HS_QTY_EBAL: return r->ebal;
    case HS_QTY_OUT: return r->out[i];
    case HS_QTY_AMB: return r->aux[m->off_amb + i];
    case HS_QTY_AMBV: return r->aux[m->off_ambv + i];
    case HS_QTY_EVENT: break;           /* the events file's name column */
    }
    return 0;
}

/* A non-finite value of column `name`: err says which, when and (for the
 * energies) T and U. */
static int nonfinite(const hs_model *m, const hs_row *r, int first, const char *name,
                     int energy, double x, hs_error *err)
{
    hs_error_init(err);
    const char *val = isnan(x) ? "nan" : x > 0 ? "inf" : "-inf";
    const char *after = first ? "; no row is written" : "; the rows before it are written";
    if (energy)
        return hs_error_set(err, HS_EXIT_NUMERIC, "%s is %s at t=%.17g (T = %g, U = %g: "
                            "beyond the range of a double)%s", name, val, r->t, r->T,
                            r->aux[m->off_U], after);
    return hs_error_set(err, HS_EXIT_NUMERIC, "%s is %s at t=%.17g (beyond the range of a "
                        "double)%s", name, val, r->t, after);
}

int hs_columns_values(const hs_model *m, const hs_columns *c, const hs_row *r, int first,
                      double *x, hs_error *err)
{
    for (size_t i = 0; i < c->n; i++) {
        x[i] = hs_column_value(m, &c->c[i], r);
        if (!isfinite(x[i])) {     /* never inf or nan in an output */
            char what[300];
            hs_col_kind k = c->c[i].kind;
            snprintf(what, sizeof what, "column '%s'", c->c[i].name);
            return nonfinite(m, r, first, what, k == HS_QTY_E || k == HS_QTY_TKIN ||
                             k == HS_QTY_EBAL, x[i], err);
        }
    }
    if (r->bare)                   /* the run's monitors, shown or not */
        return 0;
    if (!isfinite(r->ebal))
        return nonfinite(m, r, first, "energy_balance", 1, r->ebal, err);
    if (!isfinite(r->pres))
        return nonfinite(m, r, first, "power_residual", 0, r->pres, err);
    return 0;
}
