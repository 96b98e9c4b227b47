/* The model object (model.h): its accessors, source positions of its
 * expressions, constants evaluated, the derivation printout.  Everything
 * in src/model/ may call these; they call nothing of the loader. */
#include "loader.h"

#include <math.h>
#include <string.h>

const hs_node *hs_model_M(const hs_model *m, size_t i, size_t j)
{
    if (m->M)
        return m->M[i * m->n + j];
    return i == j ? m->M_diag[i] : NULL;
}

const hs_node *hs_model_G_q(const hs_model *m, size_t i, size_t j)
{
    size_t lo = m->G_q_start[i], hi = m->G_q_start[i + 1];
    while (lo < hi) {                 /* the first column >= j */
        size_t mid = lo + (hi - lo) / 2;
        if (m->G_q_col[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->G_q_start[i + 1] && m->G_q_col[lo] == j ? m->G_q_nz[lo] : NULL;
}

void hs_model_inputs(const hs_model *m, double *in)
{
    for (size_t j = 0; j < m->npar; j++)
        in[m->sym_p[j]] = m->pval[j];
    for (size_t h = 0; h < m->nhoist; h++)
        in[m->hoist_sym[h]] = m->hoist_val[h];
    if (m->ntab)
        hs_model_tables_at(m, m->t0, in, NULL);
}

int hs_model_eval_constants(hs_model *m, hs_error *err)
{
    double *in = calloc(m->nin ? m->nin : 1, sizeof *in);
    if (!in)
        return hs_error_nomem(err);
    for (size_t j = 0; j < m->npar; j++)
        in[m->sym_p[j]] = m->pval[j];
    const hs_node *bad = NULL;
    int oom = 0;
    for (size_t h = 0; h < m->nhoist && !bad && !oom; h++)
        if (!(oom = hs_eval_node(m->hoist_expr[h], in, &m->hoist_val[h])) &&
            !isfinite(m->hoist_val[h]))
            bad = m->hoist_expr[h];
    for (size_t i = 0; m->mass_kind == HS_MASS_CONST_DIAG && i < m->n && !bad && !oom; i++)
        if (!(oom = hs_eval_node(hs_model_M(m, i, i), in, &m->Mconst[i])) &&
            !isfinite(m->Mconst[i]))
            bad = hs_model_M(m, i, i);
    free(in);
    if (oom)
        return hs_error_nomem(err);
    if (!bad)
        return 0;
    hs_error_set(err, HS_EXIT_MODEL, "an expression of the parameters evaluates to %s",
                 "NaN or an infinity");
    hs_model_place(m, bad->pos, err);
    return err->code;
}

void hs_model_place(const hs_model *m, hs_srcpos p, hs_error *err)
{
    const srcinfo *si = m->src;
    if (!si || p.src < 0 || (size_t)p.src >= si->nsrc)
        return;
    int line, col;
    hs_ytree_scalar_pos(&si->y, si->node[p.src], (size_t)p.off, &line, &col);
    hs_ytree_place(&si->y, err, line, col);
}

/* Every root the derivation prints, in printing order, into r (NULL: count). */
static size_t derivation_roots(const hs_model *m, const hs_node **r)
{
    size_t n = m->n, k = m->k, nr = 0;
#define PUT(e) do { if (r) r[nr] = (e); nr++; } while (0)
    for (size_t i = 0; i < n; i++)
        for (size_t j = m->M ? 0 : i; j <= i; j++)       /* M_diag: its diagonal */
            if (!hs_is_num(hs_model_M(m, i, j), 0) || i == j)
                PUT(hs_model_M(m, i, j));
    for (size_t i = 0; i < n; i++)
        PUT(m->Q[i]);
    if (m->has_potential)
        PUT(m->U);
    for (size_t a = 0; a < m->namb; a++)
        PUT(m->amb[a]);
    for (size_t i = 0; i < k; i++)
        PUT(m->G[i]);
    for (size_t z = 0; z < m->G_q_start[k]; z++)
        if (!hs_is_num(m->G_q_nz[z], 0))
            PUT(m->G_q_nz[z]);
    for (size_t i = 0; i < k; i++)
        PUT(m->Gdot[i]);
    for (size_t i = 0; i < k; i++)
        PUT(m->gamma[i]);
#undef PUT
    return nr;
}

const char *hs_model_form_name(const hs_model *m)
{
    static const char *const forms[] = { "Cartesian", "Lagrangian", "embedding" };
    return forms[m->form];
}

const char *hs_model_sizes(const hs_model *m, char *buf, size_t size)
{
    snprintf(buf, size, "n = %zu coordinate%s, k = %zu constraint%s", m->n,
             m->n == 1 ? "" : "s", m->k, m->k == 1 ? "" : "s");
    return buf;
}

int hs_model_print_derivation(const hs_model *m, FILE *f)
{
    size_t n = m->n, k = m->k;
    char lab[256], sizes[96];
    /* one printer over everything: a subexpression shared by many kernels
     * (a large define) is printed once, as a temporary _1 = ... */
    size_t nr = derivation_roots(m, NULL);
    const hs_node **r = malloc((nr ? nr : 1) * sizeof *r);
    hs_printer *P = NULL;
    if (r) {
        derivation_roots(m, r);
        P = hs_printer_new(m->dag, r, nr);
        free(r);
    }
    if (!P)
        return HS_EXIT_NOMEM;
    fprintf(f, "# %s%s%s form, %s\n", m->name[0] ? m->name : "", m->name[0] ? ": " : "",
            hs_model_form_name(m), hs_model_sizes(m, sizes, sizeof sizes));
    const srcinfo *si = m->src;
    if (si && si->lang.families)               /* the templates, once, with their ranges */
        fprintf(f, "%s", si->lang.families);
    fprintf(f, "M (%s):\n", m->form == HS_FORM_CARTESIAN ? "mass matrix" : "metric d2T/dv2");
    for (size_t i = 0; i < n; i++)
        for (size_t j = m->M ? 0 : i; j <= i; j++)
            if (!hs_is_num(hs_model_M(m, i, j), 0) || i == j) {
                snprintf(lab, sizeof lab, "M[%s,%s]", m->qname[i], m->qname[j]);
                hs_printer_line(P, f, "  ", lab, hs_model_M(m, i, j));
            }
    fprintf(f, "Q (generalized force):\n");
    for (size_t i = 0; i < n; i++) {
        snprintf(lab, sizeof lab, "Q[%s]", m->qname[i]);
        hs_printer_line(P, f, "  ", lab, m->Q[i]);
    }
    if (m->has_potential) {
        fprintf(f, "U (potential):\n");
        hs_printer_line(P, f, "  ", "U", m->U);
    }
    for (size_t a = 0; a < m->namb; a++) {
        if (a == 0)
            fprintf(f, "X (embedding):\n");
        hs_printer_line(P, f, "  ", m->ambname[a], m->amb[a]);
    }
    if (k) {
        fprintf(f, "G (constraints):\n");
        for (size_t i = 0; i < k; i++)
            hs_printer_line(P, f, "  ", m->cname[i], m->G[i]);
        fprintf(f, "G_q (Jacobian, non-zero entries):\n");
        for (size_t i = 0; i < k; i++)
            for (size_t z = m->G_q_start[i]; z < m->G_q_start[i + 1]; z++)
                if (!hs_is_num(m->G_q_nz[z], 0)) {
                    snprintf(lab, sizeof lab, "d%s/d%s", m->cname[i], m->qname[m->G_q_col[z]]);
                    hs_printer_line(P, f, "  ", lab, m->G_q_nz[z]);
                }
        fprintf(f, "Gdot = G_t + G_q v:\n");
        for (size_t i = 0; i < k; i++)
            hs_printer_line(P, f, "  ", m->cname[i], m->Gdot[i]);
        fprintf(f, "gamma = D(D G):\n");
        for (size_t i = 0; i < k; i++)
            hs_printer_line(P, f, "  ", m->cname[i], m->gamma[i]);
    }
    int failed = hs_printer_failed(P);
    hs_printer_free(P);
    return failed ? HS_EXIT_NOMEM : 0;
}

int hs_model_structural(const hs_model *m, const char *name)
{
    const srcinfo *si = m->src;
    return si && hs_lang_structural(&si->lang, name);
}

/* ---- input tables (inputs.c reads them in) ---- */

/* The piece of tb that t lies in: -1 before the first row, else the last
 * row with t_i <= t; from *hint when given (a run goes forward). */
static long piece(const hs_input_table *tb, double t, size_t *hint)
{
    size_t n = tb->n;
    if (!(t >= tb->t[0]))
        return -1;
    if (hint) {
        size_t i = *hint < n ? *hint : 0;
        if (tb->t[i] <= t && (i + 1 >= n || t < tb->t[i + 1]))
            return (long)i;
        if (i + 1 < n && tb->t[i + 1] <= t && (i + 2 >= n || t < tb->t[i + 2]))
            return (long)(*hint = i + 1);
    }
    size_t lo = 0, hi = n;             /* the first row after t, minus one */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tb->t[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (hint)
        *hint = lo - 1;
    return (long)lo - 1;
}

void hs_model_tables_at(const hs_model *m, double t, double *in, size_t *hint)
{
    for (size_t j = 0; j < m->ntab; j++) {
        const hs_input_table *tb = &m->tab[j];
        long p = piece(tb, t, hint ? &hint[j] : NULL);
        size_t i = p < 0 ? 0 : (size_t)p;
        double a = tb->y[i], s = 0;
        if (p >= 0 && i + 1 < tb->n)
            s = (tb->y[i + 1] - tb->y[i]) / (tb->t[i + 1] - tb->t[i]);
        in[tb->sym_a] = a;
        in[tb->sym_s] = s;
        in[tb->sym_t0] = tb->t[i];
    }
}

double hs_model_table_value(const hs_input_table *tb, double t)
{
    long p = piece(tb, t, NULL);
    size_t i = p < 0 ? 0 : (size_t)p;
    if (p < 0 || i + 1 >= tb->n)
        return tb->y[i];
    return tb->y[i] + (tb->y[i + 1] - tb->y[i]) / (tb->t[i + 1] - tb->t[i]) * (t - tb->t[i]);
}
