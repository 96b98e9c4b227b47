/* The structured embedding's accelerations (model.h: hs_chain; the
 * symbolic side is model/chain.c).  Unknowns x = (q'' [n], z'' [nz],
 * lambda [nz]); the saddle-point system, symmetric:
 *
 *     q row r:       sum_i B_ir lambda_i                       = Q_r
 *     z row j:       m_j z''_j + sum_i (B_i,n+j - d_ij) lambda_i = F_j
 *     lambda row i:  sum_r B_ir q''_r + sum_j (B_i,n+j - d_ij) z''_j = -gamma_i
 *
 * (B = [dPhi/dq dPhi/dz], the defining equations z = Phi(q, z);
 * hs_chain_sys of model/chain.c lays it out and solves it, the check at
 * the initial state too).  For a chain or a tree it has O(n) entries;
 * linalg/sparse.c factors it (KLU: ordered once, refactored per
 * evaluation, refined once): O(n) per evaluation.  A matrix singular even
 * with fresh pivots means the coordinates are singular there (the metric
 * is not positive definite), as the dense path says. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct hs_chainwork {
    hs_chain_sys *sys;         /* the saddle-point system (model/chain.c) */
    double *x;                 /* [n + 2 nz] the solution */
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
    cw->x = calloc(m->n + 2 * c->nz, sizeof *cw->x);
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
                            "definite at t=%.17g (the coordinates are singular there)", t);
    }
    hs_chain_sys_solve(cw->sys, cw->out, cw->x);
    if (!hs_dyn_all_finite(cw->x, n)) {
        hs_error_init(&w->err);
        w->fail_kind = HS_FAIL_NONFINITE;
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "non-finite acceleration at t=%.17g", t);
    }
    memcpy(a, cw->x, n * sizeof *a);
    return 0;
}

int hs_chain_kinetic(const hs_model *m, hs_work *w, double t)
{
    return chain_eval(m, w, t);
}
