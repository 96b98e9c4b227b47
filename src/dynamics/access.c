/* The work read from outside the module (dynamics.h): hs_work is opaque
 * beyond src/dynamics, and these functions are what the other modules see
 * of it.  None is on the right-hand side's inner path: each is called
 * once per evaluation or less. */
#include "internal.h"

hs_error *hs_work_err(hs_work *w) { return &w->err; }
int hs_work_fail_kind(const hs_work *w) { return w->fail_kind; }
void hs_work_set_fail_kind(hs_work *w, int kind) { w->fail_kind = kind; }

const double *hs_work_a(const hs_work *w) { return w->a; }
double *hs_work_Lambda(hs_work *w) { return w->Lambda; }
const double *hs_work_Q(const hs_model *m, const hs_work *w) { return w->dyn + m->off_Q; }
const double *hs_work_Gq(const hs_model *m, const hs_work *w) { return w->dyn + m->off_Gq; }

const double *hs_work_con_G(const hs_work *w) { return w->pos; }
const double *hs_work_con_Gq(const hs_model *m, const hs_work *w) { return w->pos + m->k; }
const double *hs_work_con_Gt(const hs_model *m, const hs_work *w)
{
    return w->pos + m->k + m->nnz;
}
const double *hs_work_Gq_dense(const hs_work *w) { return w->Gqd; }

const double *hs_work_aux(const hs_work *w) { return w->aux; }
const double *hs_work_outputs(const hs_work *w) { return w->out; }
const double *hs_work_events(const hs_work *w) { return w->ev; }
double *hs_work_inputs(hs_work *w) { return w->in; }

hs_work_stats hs_work_get_stats(const hs_work *w)
{
    return (hs_work_stats){
        .nrhs = w->nrhs, .rcond = w->rcond, .rank0 = w->rank0, .robust = w->robust,
        .augmented = w->augmented, .mass_zero = w->mass_zero, .nskip = w->nskip,
        .nrobust = w->nrobust, .nsingular = w->nsingular, .worst_rcond = w->worst_rcond,
        .strict = w->strict, .nreleased = w->nreleased,
    };
}

void hs_work_set_nrhs(hs_work *w, long nrhs) { w->nrhs = nrhs; }

int hs_work_full_rcond(hs_work *w, int on)
{
    int was = w->full_rcond;
    w->full_rcond = on;
    return was;
}

int hs_work_near_singular(hs_work *w, int clear)
{
    int was = w->near_singular;
    if (clear)
        w->near_singular = 0;
    return was;
}

hs_cstruct hs_work_cstruct(const hs_work *w)
{
    return (hs_cstruct){ .banded = w->banded, .sparse = w->Cs != NULL, .bw = w->bw, .npair = w->npair,
                         .pair_i = w->pair_i, .pair_j = w->pair_j, .pair_pi = w->pair_pi,
                         .pair_pj = w->pair_pj };
}

double hs_dyn_gq_dot(const hs_model *m, const hs_work *w, size_t i, const double *x)
{
    return hs_dyn_gq_dot_(m, w, i, x);
}

int hs_dyn_is_released(const hs_work *w, size_t j) { return hs_dyn_is_released_(w, j); }

double hs_dyn_kinetic(const hs_model *m, const hs_work *w)
{
    return w->T + w->aux[m->off_Tx];
}

double hs_dyn_jacobi(const hs_model *m, const hs_work *w)
{
    return w->T - w->aux[m->off_T0] + w->aux[m->off_U];
}

int hs_dyn_friction_dir(const hs_work *w, size_t f) { return w->fdir[f]; }
double hs_dyn_friction_offset(const hs_work *w, size_t j) { return w->goff[j]; }

int hs_dyn_friction_set(const hs_model *m, hs_work *w, size_t f, int dir, double t,
                        const double *q)
{
    size_t j = m->fric0 + f;
    w->fdir[f] = (signed char)dir;
    if (dir)
        return hs_dyn_release(m, w, j) ? hs_error_nomem(&w->err) : 0;
    hs_dyn_hold(m, w, j);
    int rc = hs_dyn_constraints_sparse(m, w, t, q, NULL, NULL);
    if (rc)
        return rc;
    w->goff[j] += w->pos[j];          /* pos holds slip - the old offset */
    return 0;
}

const unsigned char *hs_work_released(const hs_work *w) { return w->released; }

void hs_work_set_native(const hs_model *m, hs_work *w, const hs_native *nat)
{
    *(m->chain ? &w->kchain : &w->kdyn) = hs_native_fn(nat, 0);
    w->kaux = hs_native_fn(nat, 1);
    w->kpos = hs_native_fn(nat, 2);
    w->kout = hs_native_fn(nat, 3);
    w->kev = hs_native_fn(nat, 4);
}

void hs_dyn_work_rates(const hs_model *m, const hs_work *w, const double *v, const double *a,
                       double *W)
{
    const double *dyn = w->dyn, *Gq = dyn + m->off_Gq;
    double pr = 0;
    for (size_t i = 0; i < m->k; i++) {
        double s = 0;
        for (int p = m->gq_start[i]; p < m->gq_start[i + 1]; p++)
            s += Gq[p] * v[m->gq_col[p]];
        pr += w->Lambda[i] * s;
    }
    double pt = dyn[m->off_Pt];
    for (size_t i = 0; i < m->nbT; i++)      /* dT1/dt = D T1 + bT . a */
        pt += dyn[m->off_bT + i] * a[i];
    W[0] = pr;
    W[1] = dyn[m->off_Pd];
    W[2] = pt;
}
