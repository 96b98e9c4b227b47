/* The model's programs at a state (internal.h): the VM inputs set, the
 * constraints, their Jacobian and the mass matrix evaluated, a non-finite
 * output placed at the model expression that produced it.  The lowest
 * file of the module: everything else here calls these. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hs_dyn_set_state(const hs_model *m, hs_work *w, double t, const double *q,
                      const double *v)
{
    w->in[m->sym_t] = t;
    for (size_t i = 0; i < m->n; i++) {
        w->in[m->sym_q[i]] = q[i];
        w->in[m->sym_v[i]] = v ? v[i] : 0.0;
    }
    if (m->ntab)                /* the input tables' pieces at t */
        hs_model_tables_at(m, t, w->in, w->tab_hint);
}

/* A non-finite program output: find the instruction and say where. */
int hs_dyn_nonfinite(const hs_model *m, hs_work *w, const hs_prog *p, double *regs,
                     double t)
{
    hs_srcpos pos;
    const char *what = "non-finite value";
    hs_error_init(&w->err);
    w->fail_kind = HS_FAIL_NONFINITE;
    if (hs_prog_find_nonfinite(p, w->in, regs, &pos, &what)) {
        hs_error_set(&w->err, HS_EXIT_NUMERIC, "%s at t=%.17g", what, t);
        hs_model_place(m, pos, &w->err);
    } else {
        hs_error_set(&w->err, HS_EXIT_NUMERIC, "non-finite value at t=%.17g", t);
    }
    return HS_EXIT_NUMERIC;
}

int hs_dyn_constraints_sparse(const hs_model *m, hs_work *w, double t, const double *q,
                              double *G, double *G_t)
{
    size_t k = m->k;
    hs_dyn_set_state(m, w, t, q, NULL);
    hs_dyn_run_prog(m->prog_pos, w->kpos, w->in, w->rpos, w->pos);
    if (!hs_dyn_all_finite(w->pos, 2 * k + m->nnz))
        return hs_dyn_nonfinite(m, w, m->prog_pos, w->rpos, t);
    if (G)
        memcpy(G, w->pos, k * sizeof *G);
    if (G_t)
        memcpy(G_t, w->pos + k + m->nnz, k * sizeof *G_t);
    for (size_t j = m->fric0; w->goff && j < k; j++) {    /* a sticking slip's offset */
        w->pos[j] -= w->goff[j];
        if (G)
            G[j] = w->pos[j];
    }
    return 0;
}

int hs_dyn_mass_diag(const hs_model *m, hs_work *w, double t, const double *q,
                     const double *v, double *d)
{
    size_t n = m->n;
    if (m->chain) {                 /* no metric formed (model.h: hs_chain) */
        hs_error_init(&w->err);
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "the metric of a structured "
                            "embedding is not formed");
    }
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        memcpy(d, m->Mconst, n * sizeof *d);
        return 0;
    }
    hs_dyn_set_state(m, w, t, q, v);
    hs_dyn_run_prog(m->prog_dyn, w->kdyn, w->in, w->rdyn, w->dyn);
    if (!hs_dyn_all_finite(w->dyn, m->ndyn))
        return hs_dyn_nonfinite(m, w, m->prog_dyn, w->rdyn, t);
    memcpy(d, w->dyn + m->off_M, n * sizeof *d);
    return 0;
}

int hs_dyn_constraints(const hs_model *m, hs_work *w, double t, const double *q,
                       double *G, double *G_t)
{
    size_t n = m->n, k = m->k;
    int rc = hs_dyn_constraints_sparse(m, w, t, q, G, G_t);
    if (rc)
        return rc;
    /* the dense copy at its first use: the rank diagnosis past the band
     * certificate, a full mass's projection (never for a chain) */
    if (!w->Gqd && !(w->Gqd = malloc((k * n > 0 ? k * n : 1) * sizeof *w->Gqd)))
        return hs_error_nomem(&w->err);
    memset(w->Gqd, 0, k * n * sizeof *w->Gqd);
    for (size_t i = 0; i < k; i++)
        for (int p = m->gq_start[i]; p < m->gq_start[i + 1]; p++)
            w->Gqd[i * n + (size_t)m->gq_col[p]] = w->pos[k + (size_t)p];
    return 0;
}

int hs_dyn_mass(const hs_model *m, hs_work *w, double t, const double *q,
                const double *v, double *Mout)
{
    size_t n = m->n;
    if (m->chain) {                 /* no metric formed (model.h: hs_chain) */
        hs_error_init(&w->err);
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "the metric of a structured "
                            "embedding is not formed");
    }
    memset(Mout, 0, n * n * sizeof *Mout);
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        for (size_t i = 0; i < n; i++)
            Mout[i * n + i] = m->Mconst[i];
        return 0;
    }
    hs_dyn_set_state(m, w, t, q, v);
    hs_dyn_run_prog(m->prog_dyn, w->kdyn, w->in, w->rdyn, w->dyn);
    if (!hs_dyn_all_finite(w->dyn, m->ndyn))
        return hs_dyn_nonfinite(m, w, m->prog_dyn, w->rdyn, t);
    if (m->mass_kind == HS_MASS_DIAG) {
        for (size_t i = 0; i < n; i++)
            Mout[i * n + i] = w->dyn[m->off_M + i];
        return 0;
    }
    size_t z = m->off_M;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++, z++)
            Mout[i * n + j] = Mout[j * n + i] = w->dyn[z];
    return 0;
}
