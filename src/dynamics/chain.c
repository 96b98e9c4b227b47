/* The structured embedding's accelerations (model.h: hs_chain; the
 * symbolic side is model/chain.c).  Unknowns x = (q'' [n], z'' [nz],
 * lambda [nz]); the saddle-point system, symmetric:
 *
 *     q row r:       sum_i B_ir lambda_i                       = Q_r
 *     z row j:       m_j z''_j + sum_i (B_i,n+j - d_ij) lambda_i = F_j
 *     lambda row i:  sum_r B_ir q''_r + sum_j (B_i,n+j - d_ij) z''_j = -gamma_i
 *
 * and with the model's constraints G (k rows, mu = -Lambda):
 *
 *     q row r:       ... + sum_i G_q,ir mu_i
 *     mu row i:      sum_r G_q,ir q''_r = -(gamma_G,i [+ Baumgarte's terms])
 *
 * (B = [dPhi/dq dPhi/dz], the defining equations z = Phi(q, z);
 * hs_chain_sys of model/chain.c lays it out and solves it, the check at
 * the initial state too).  For a chain or a tree it has O(n) entries;
 * linalg/sparse.c factors it (KLU: ordered once, refactored per
 * evaluation, refined once): O(n) per evaluation.  A matrix singular even
 * with fresh pivots means the coordinates are singular there (the metric
 * is not positive definite), as the dense path says, or that the
 * constraints are dependent (the check at the start sends such a model
 * to the dense path, whose solve takes them).  The same factor serves the
 * projection onto the constraints (consistency.c): with Q, F and the
 * chain's gamma 0 and the constraints' rows given, q'' is the least
 * change in the metric's norm, W G_q^T (G_q W G_q^T)^-1 r. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct hs_chainwork {
    hs_chain_sys *sys;         /* the saddle-point system (model/chain.c) */
    double *x;                 /* [n + 2 nz + k] the solution */
    double *out, *regs;        /* the program's outputs and registers */
};

void hs_chain_work_free(hs_chainwork *cw)
{
    if (!cw)
        return;
    hs_chain_sys_free(cw->sys);
    free(cw->x); free(cw->out); free(cw->regs);
    free(cw);
}

hs_chainwork *hs_chain_work_new(const hs_model *m)
{
    const hs_chain *c = m->chain;
    hs_chainwork *cw = calloc(1, sizeof *cw);
    if (!cw)
        return NULL;
    cw->x = calloc(m->n + 2 * c->nz + m->k, sizeof *cw->x);
    cw->out = calloc(c->nout ? c->nout : 1, sizeof *cw->out);
    cw->regs = calloc(hs_prog_nregs(c->prog) ? hs_prog_nregs(c->prog) : 1, sizeof *cw->regs);
    if (cw->x && cw->out && cw->regs)
        cw->sys = hs_chain_sys_new(m);
    if (!cw->sys) {
        hs_chain_work_free(cw);
        return NULL;
    }
    return cw;
}

/* Run the program at the state in w->in; T (T2, the part quadratic in
 * the velocities) and the powers the stepper reads (P_nc, P_t, and bT in
 * a chart that moves) set.  0 or HS_EXIT_NUMERIC. */
static int chain_eval(const hs_model *m, hs_work *w, double t)
{
    const hs_chain *c = m->chain;
    hs_chainwork *cw = w->cw;
    hs_dyn_run_prog(c->prog, w->kchain, w->in, cw->regs, cw->out);
    if (!hs_dyn_all_finite(cw->out, c->nout))
        return hs_dyn_nonfinite(m, w, c->prog, cw->regs, t);
    const double *o = cw->out;
    double T = 0;
    for (size_t j = 0; j < c->nz; j++)
        T += o[c->off_mass + j] * o[c->off_zdot + j] * o[c->off_zdot + j];
    w->T = 0.5 * T;
    if (m->nbT) {              /* a chart that moves: T2 = T - T1 - T0 */
        double T1 = 0;
        for (size_t i = 0; i < m->nbT; i++) {
            w->dyn[m->off_bT + i] = o[c->off_bT + i];
            T1 += o[c->off_bT + i] * w->in[m->sym_v[i]];
        }
        w->T -= T1 + o[c->off_T0];
    }
    w->dyn[m->off_Pd] = o[c->off_Pnc];
    w->dyn[m->off_Pt] = o[c->off_Pt];
    if (m->k) {                /* the constraints' kernels where the dense path has them */
        memcpy(w->dyn + m->off_Gq, o + c->off_Gq, m->nnz * sizeof *o);
        if (c->off_Gdotb > c->off_Gb) {
            memcpy(w->dyn + m->off_Gb, o + c->off_Gb, m->k * sizeof *o);
            memcpy(w->dyn + m->off_Gdotb, o + c->off_Gdotb, m->k * sizeof *o);
        }
    }
    return 0;
}

int hs_chain_accel(const hs_model *m, hs_work *w, double t, double *a)
{
    hs_chainwork *cw = w->cw;
    size_t n = m->n;
    if (chain_eval(m, w, t))
        return HS_EXIT_NUMERIC;
    if (hs_chain_sys_factor(cw->sys, cw->out)) {
        hs_error_init(&w->err);
        w->fail_kind = HS_FAIL_MASS;
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "metric d2T/dv2 is not positive "
                            "definite at t=%.17g (the coordinates are singular there%s)", t,
                            m->k ? ", or the constraints dependent" : "");
    }
    hs_chain_sys_solve(cw->sys, cw->out, cw->x);
    const double *mu = cw->x + n + 2 * m->chain->nz;
    if (!hs_dyn_all_finite(cw->x, n) || !hs_dyn_all_finite(mu, m->k)) {
        hs_error_init(&w->err);
        w->fail_kind = HS_FAIL_NONFINITE;
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "non-finite acceleration at t=%.17g", t);
    }
    memcpy(a, cw->x, n * sizeof *a);
    for (size_t i = 0; i < m->k; i++)
        w->Lambda[i] = -mu[i];
    return 0;
}

int hs_chain_proj_factor(const hs_model *m, hs_work *w, double t, const double *q)
{
    hs_chainwork *cw = w->cw;
    double *v0 = cw->x;        /* the factor reads positions only: any velocity */
    memset(v0, 0, m->n * sizeof *v0);
    hs_dyn_set_state(m, w, t, q, v0);
    if (chain_eval(m, w, t))
        return HS_EXIT_NUMERIC;
    return hs_chain_sys_factor(cw->sys, cw->out) ? -1 : 0;
}

void hs_chain_proj_solve(const hs_model *m, hs_work *w, const double *rhs, double *dq)
{
    hs_chainwork *cw = w->cw;
    size_t n = m->n, mu = n + 2 * m->chain->nz;
    memset(cw->x, 0, mu * sizeof *cw->x);
    memcpy(cw->x + mu, rhs, m->k * sizeof *rhs);
    hs_chain_sys_solve_rhs(cw->sys, cw->x);
    memcpy(dq, cw->x, n * sizeof *dq);
}

int hs_chain_kinetic(const hs_model *m, hs_work *w, double t)
{
    return chain_eval(m, w, t);
}

int hs_chain_metric_norm(const hs_model *m, hs_work *w, double t, const double *q,
                         const double *d, double *out)
{
    hs_dyn_set_state(m, w, t, q, d);
    if (chain_eval(m, w, t))
        return HS_EXIT_NUMERIC;
    *out = 2 * w->T;
    return 0;
}
