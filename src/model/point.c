/* Another point of a sweep on a loaded model (model.h, hs_model_repoint):
 * the kept parameters take new values, everything computed from them is
 * computed again; the programs (parameters as inputs) stay. */
#include "loader.h"
#include "../linalg/linalg.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

/* The parameters in their order of evaluation, the named ones given. */
static int eval_params(hs_model *m, const char *const *name, const double *value, size_t n,
                       double *in)
{
    unsigned char *given = xcalloc(m->npar, 1);
    if (!given)
        return -1;
    for (size_t s = 0; s < n; s++) {
        size_t j = 0;
        while (j < m->npar && strcmp(m->pname[j], name[s]) != 0)
            j++;
        if (j == m->npar || !m->par_kept[j] || !isfinite(value[s]) ||
            (hs_model_structural(m, name[s]) && value[s] != m->pval[j])) {
            free(given);
            return -1;
        }
        m->pval[j] = value[s];
        given[j] = 1;
    }
    hs_model_inputs(m, in);                 /* the folded ones are as they were */
    int rc = 0;
    for (size_t o = 0; o < m->npar_done && !rc; o++) {
        size_t j = m->par_order[o];
        if (!given[j] && m->par_kept[j] && m->par_expr[j] &&
            hs_eval_node(m->par_expr[j], in, &m->pval[j]))
            rc = -1;
        in[m->sym_p[j]] = m->pval[j];
        rc = rc || !isfinite(m->pval[j]) ? -1 : 0;
    }
    free(given);
    return rc;
}

/* The initial data from their expressions. */
static int eval_initial(hs_model *m, const double *in)
{
    size_t n = m->n;
    m->t0 = 0;
    if (m->init_expr[2 * n] && hs_eval_node(m->init_expr[2 * n], in, &m->t0))
        return -1;
    if (!isfinite(m->t0))
        return -1;
    for (size_t i = 0; i < 2 * n; i++) {
        double x = 0;
        if (m->init_expr[i] && hs_eval_node(m->init_expr[i], in, &x))
            return -1;
        if (!isfinite(x))
            return -1;
        (i < n ? m->q0 : m->v0)[i % n] = x;
    }
    return 0;
}

/* The mass matrix positive definite at the initial state. */
static int mass_ok(const hs_model *m, double *in)
{
    size_t n = m->n;
    if (m->chain)
        return hs_chain_regular(m, m->t0, m->q0, m->v0, 0) == 1;
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        for (size_t i = 0; i < n; i++)
            if (!(m->Mconst[i] > 0))
                return 0;
        return 1;
    }
    double *regs = xcalloc(hs_prog_nregs(m->prog_dyn), sizeof *regs);
    double *out = xcalloc(m->ndyn, sizeof *out);
    gsl_matrix *M = hs_la_matrix_alloc(n, n);
    int ok = regs && out && M;
    if (ok) {
        in[m->sym_t] = m->t0;
        for (size_t i = 0; i < n; i++) {
            in[m->sym_q[i]] = m->q0[i];
            in[m->sym_v[i]] = m->v0[i];
        }
        hs_prog_eval(m->prog_dyn, in, regs, out);
        if (m->mass_kind == HS_MASS_DIAG) {
            for (size_t i = 0; i < n; i++)
                ok &= out[m->off_M + i] > 0;
        } else {
            size_t z = m->off_M;
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j <= i; j++, z++) {
                    ok &= isfinite(out[z]);
                    gsl_matrix_set(M, i, j, out[z]);
                    gsl_matrix_set(M, j, i, out[z]);
                }
            ok = ok && hs_la_cholesky(M) == GSL_SUCCESS;
        }
    }
    free(regs);
    free(out);
    if (M)
        gsl_matrix_free(M);
    return ok;
}

static int repoint(hs_model *m, const char *const *name, const double *value, size_t n)
{
    double *in = xcalloc(m->nin, sizeof *in);
    if (!in)
        return -1;
    hs_error err;
    hs_error_init(&err);
    int rc = eval_params(m, name, value, n, in) || hs_model_eval_constants(m, &err) ? -1 : 0;
    if (!rc) {
        hs_model_inputs(m, in);
        rc = eval_initial(m, in) || hs_model_eval_coefficients(m, in) ? -1 : 0;
    }
    if (!rc && !isnan(m->set.t_end) && !(m->set.t_end > m->t0))
        rc = -1;
    if (!rc && !mass_ok(m, in))
        rc = -1;
    free(in);
    return rc;
}

int hs_model_repoint(hs_model *m, const char *const *name, const double *value, size_t n)
{
    int r = repoint(m, name, value, n);
    return r;
}
