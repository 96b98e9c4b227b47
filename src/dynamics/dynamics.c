/* The Lagrange-multiplier right-hand side and the quantities reported with
 * it.  G_q is kept sparse by rows (model->gq_start/gq_col); C is assembled
 * from those rows and factored by a dense or band Cholesky (src/linalg). */
#include "internal.h"
#include "../linalg/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

/* The structure of C = G_q M^-1 G_q^T for a diagonal M: C_ij is the sum
 * over the columns rows i and j share.  List those (i, j, entry of row i,
 * entry of row j) once, through the rows of each column, and find the
 * bandwidth; a narrow band is factored in band storage. */
static int build_pairs(const hs_model *m, hs_work *w)
{
    size_t n = m->n, k = m->k;
    size_t *cnt = calloc(n + 1, sizeof *cnt);
    uint32_t *rows = calloc(m->nnz ? m->nnz : 1, sizeof *rows);
    uint32_t *ent = calloc(m->nnz ? m->nnz : 1, sizeof *ent);
    int rc = -1;
    if (!cnt || !rows || !ent)
        goto out;
    for (size_t z = 0; z < m->nnz; z++)
        cnt[m->gq_col[z] + 1]++;
    for (size_t c = 0; c < n; c++)
        cnt[c + 1] += cnt[c];
    size_t *fill = calloc(n, sizeof *fill);
    if (!fill)
        goto out;
    for (size_t i = 0; i < k; i++)       /* rows of each column, increasing */
        for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++) {
            size_t c = (size_t)m->gq_col[z], at = cnt[c] + fill[c]++;
            rows[at] = (uint32_t)i;
            ent[at] = (uint32_t)z;
        }
    free(fill);
    size_t np = 0;
    for (size_t c = 0; c < n; c++) {
        size_t r = cnt[c + 1] - cnt[c];
        np += r * (r + 1) / 2;
    }
    w->pair_i = malloc((np ? np : 1) * sizeof *w->pair_i);
    w->pair_j = malloc((np ? np : 1) * sizeof *w->pair_j);
    w->pair_pi = malloc((np ? np : 1) * sizeof *w->pair_pi);
    w->pair_pj = malloc((np ? np : 1) * sizeof *w->pair_pj);
    if (!w->pair_i || !w->pair_j || !w->pair_pi || !w->pair_pj)
        goto out;
    w->bw = 0;
    for (size_t c = 0; c < n; c++)
        for (size_t a = cnt[c]; a < cnt[c + 1]; a++)
            for (size_t b = cnt[c]; b <= a; b++) {
                w->pair_i[w->npair] = rows[a];
                w->pair_j[w->npair] = rows[b];
                w->pair_pi[w->npair] = ent[a];
                w->pair_pj[w->npair++] = ent[b];
                if (rows[a] - rows[b] > w->bw)
                    w->bw = rows[a] - rows[b];
            }
    w->banded = k >= HS_BAND_MIN_K && w->bw * HS_BAND_RATIO <= k;
    if (w->banded && w->bw == 0)
        w->bw = 1;            /* room for the norm slot the condition estimate reads */
    if (w->banded && !(w->Cb = hs_la_matrix_alloc(k, w->bw + 1)))
        goto out;
    if (!w->banded && k >= HS_SPARSE_MIN_K && hs_la_spd_available() &&
        2.0 * (double)w->npair * HS_SPARSE_RATIO <= (double)k * (double)k &&
        !(w->Cs = hs_la_spd_new(k, w->npair, w->pair_i, w->pair_j)))
        goto out;
    rc = 0;
out:
    free(cnt);
    free(rows);
    free(ent);
    return rc;
}

static hs_work *work_new(const hs_model *m)
{
    hs_work *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    size_t n = m->n, k = m->k, ks = k < HS_SMALL_K ? k : HS_SMALL_K;  /* small paths' k */
#define ALLOC(p, cnt) ((p) = calloc((cnt) > 0 ? (cnt) : 1, sizeof *(p)))
    int ok = ALLOC(w->in, m->nin) && ALLOC(w->rdyn, hs_prog_nregs(m->prog_dyn)) &&
             ALLOC(w->raux, hs_prog_nregs(m->prog_aux)) &&
             ALLOC(w->rpos, hs_prog_nregs(m->prog_pos)) && ALLOC(w->dyn, m->ndyn) &&
             ALLOC(w->aux, m->naux) && ALLOC(w->pos, 2 * k + m->nnz) && ALLOC(w->Minv, n) &&
             ALLOC(w->Lambda, k) && ALLOC(w->a, n) && ALLOC(w->Cdiag, k) &&
             ALLOC(w->skip, k) && ALLOC(w->mnwork, 2 * ks * ks + ks) &&
             ALLOC(w->rout, m->prog_out ? hs_prog_nregs(m->prog_out) : 0) &&
             ALLOC(w->out, m->nout) && ALLOC(w->ev, m->nev) &&
             ALLOC(w->rev, m->prog_ev ? hs_prog_nregs(m->prog_ev) : 0) &&
             ALLOC(w->tab_hint, m->ntab);
#undef ALLOC
    size_t nM = m->mass_kind == HS_MASS_FULL && !m->chain ? n : 1;   /* a dense metric */
    w->M = hs_la_matrix_alloc(nM, nM);
    w->z = hs_la_vector_alloc(n);
    w->tmpn = hs_la_vector_alloc(n);
    if (k) {
        if (m->mass_kind == HS_MASS_FULL)
            w->Y = hs_la_matrix_alloc(k, n);
        w->rhs = hs_la_vector_alloc(k);
        w->work3k = hs_la_vector_alloc(3 * k);
    }
    if (!ok || !w->M || !w->z || !w->tmpn ||
        (k && ((m->mass_kind == HS_MASS_FULL && !w->Y) || !w->rhs || !w->work3k))) {
        hs_work_free(w);
        return NULL;
    }
    hs_model_inputs(m, w->in);
    hs_error_init(&w->err);
    w->rank0 = w->rank = k;
    w->worst_rcond = 1;
    w->strict = m->set.strict_rank;
    if (m->mass_kind == HS_MASS_CONST_DIAG)
        for (size_t i = 0; i < n; i++)
            w->mass_zero |= m->Mconst[i] == 0;
    if (k && m->mass_kind != HS_MASS_FULL && build_pairs(m, w)) {
        hs_work_free(w);
        return NULL;
    }
    if (m->chain && !(w->cw = hs_chain_work_new(m))) {
        hs_work_free(w);
        return NULL;
    }
    if (k && !w->banded && !w->Cs && !(w->C = hs_la_matrix_alloc(k, k))) {  /* dense C */
        hs_work_free(w);
        return NULL;
    }
    return w;
}

hs_work *hs_work_new(const hs_model *m)
{
    hs_work *r = work_new(m);
    return r;
}

void hs_work_free(hs_work *w)
{
    if (!w)
        return;
    hs_chain_work_free(w->cw);
    hs_dyn_held_free(w);
    free(w->in);
    free(w->tab_hint);
    free(w->rdyn);
    free(w->raux);
    free(w->rpos);
    free(w->dyn);
    free(w->aux);
    free(w->pos);
    free(w->Minv);
    free(w->Gqd);
    free(w->Lambda);
    free(w->a);
    free(w->Cdiag);
    free(w->skip);
    free(w->mnwork);
    free(w->rout);
    free(w->out);
    free(w->rev);
    free(w->ev);
    free(w->released);
    free(w->fdir);
    free(w->Qx);
    free(w->goff);
    free(w->Ff);
    if (w->M) gsl_matrix_free(w->M);
    if (w->C) gsl_matrix_free(w->C);
    if (w->Cb) gsl_matrix_free(w->Cb);
    hs_la_spd_free(w->Cs);
    free(w->pair_i);
    free(w->pair_j);
    free(w->pair_pi);
    free(w->pair_pj);
    if (w->Y) gsl_matrix_free(w->Y);
    if (w->z) gsl_vector_free(w->z);
    if (w->tmpn) gsl_vector_free(w->tmpn);
    if (w->rhs) gsl_vector_free(w->rhs);
    if (w->work3k) gsl_vector_free(w->work3k);
    if (w->rL) gsl_matrix_free(w->rL);
    if (w->rA) gsl_matrix_free(w->rA);
    if (w->rV) gsl_matrix_free(w->rV);
    if (w->rS) gsl_vector_free(w->rS);
    if (w->rwork) gsl_vector_free(w->rwork);
    free(w->rH);
    free(w->rc);
    free(w->rD);
    free(w->rG);
    free(w->rBt);
    free(w->rg);
    free(w->rr);
    free(w->rb);
    free(w);
}

void hs_dyn_set_rank0(hs_work *w, size_t rank0)
{
    w->rank0 = w->rank = rank0;
    w->nrobust = w->nsingular = 0;        /* the run's evaluations from here */
    w->worst_rcond = 1;
    w->augmented = 0;
}

/* Load and factor M from the dyn outputs: Minv (diagonal) or Cholesky.
 * Returns 0, 1 when M is singular but may be positive semidefinite (zero
 * diagonal entries, or a Cholesky that fails with none negative): the
 * rank-revealing solve then works with M + alpha G_q^T G_q, or
 * HS_EXIT_NUMERIC (a negative or non-finite entry: M is indefinite). */
static int factor_mass(const hs_model *m, hs_work *w, const double *dyn, double t)
{
    size_t n = m->n;
    const char *what = m->form == HS_FORM_CARTESIAN ? "mass matrix" : "metric d2T/dv2";
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        if (w->mass_zero)
            return 1;
        for (size_t i = 0; i < n; i++)
            w->Minv[i] = 1.0 / m->Mconst[i];
        return 0;
    }
    if (m->mass_kind == HS_MASS_DIAG) {
        int zero = 0;
        for (size_t i = 0; i < n; i++) {
            double Mi = dyn[m->off_M + i];
            if (!(Mi >= 0)) {
                hs_error_init(&w->err);
                w->fail_kind = HS_FAIL_MASS;
                return hs_error_set(&w->err, HS_EXIT_NUMERIC, "%s is not positive definite "
                                    "at t=%.17g: entry (%s,%s) is %g", what, t,
                                    m->qname[i], m->qname[i], Mi);
            }
            zero |= Mi == 0;
            w->Minv[i] = 1.0 / Mi;
        }
        return zero;
    }
    /* the lower triangle, row by row as the program writes it (the
     * Cholesky reads no more) */
    const double *src = dyn + m->off_M;
    int negative = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(w->M->data + i * w->M->tda, src, (i + 1) * sizeof *src);
        src += i + 1;
        negative |= !(src[-1] >= 0);
    }
    if (negative || hs_la_cholesky(w->M) != GSL_SUCCESS) {
        if (!negative && m->k)
            return 1;
        hs_error_init(&w->err);
        w->fail_kind = HS_FAIL_MASS;
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "%s is not positive definite at "
                            "t=%.17g%s", what, t, m->form == HS_FORM_CARTESIAN ? ""
                            : " (the coordinates are singular there)");
    }
    return 0;
}

/* v^T M v / 2 with M from the dynamics program's outputs dyn (not read
 * for a constant diagonal mass). */
static double quadratic_T(const hs_model *m, const double *dyn, const double *v)
{
    size_t n = m->n;
    double T = 0;
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        for (size_t i = 0; i < n; i++)
            T += m->Mconst[i] * v[i] * v[i];
    } else if (m->mass_kind == HS_MASS_DIAG) {
        for (size_t i = 0; i < n; i++)
            T += dyn[m->off_M + i] * v[i] * v[i];
    } else {
        size_t zz = m->off_M;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++, zz++)
                T += (i == j ? 1.0 : 2.0) * dyn[zz] * v[i] * v[j];
    }
    return 0.5 * T;
}

int hs_dyn_energy(const hs_model *m, hs_work *w, double t, const double *q, const double *v,
                  double *E)
{
    hs_dyn_set_state(m, w, t, q, v);
    if (m->chain) {
        if (hs_chain_kinetic(m, w, t))
            return HS_EXIT_NUMERIC;
    } else {
        if (m->mass_kind != HS_MASS_CONST_DIAG) {
            hs_dyn_run_prog(m->prog_dyn, w->kdyn, w->in, w->rdyn, w->dyn);
            if (!hs_dyn_all_finite(w->dyn, m->ndyn))
                return hs_dyn_nonfinite(m, w, m->prog_dyn, w->rdyn, t);
        }
        w->T = quadratic_T(m, w->dyn, v);
    }
    if (hs_dyn_aux(m, w, t, q, v))
        return HS_EXIT_NUMERIC;
    *E = hs_dyn_kinetic(m, w) + w->aux[m->off_U];
    return 0;
}

/* g = gamma (+ Baumgarte terms) into w->rg, 0 for a released constraint:
 * the right-hand side of G_q a = -g the rank-revealing solve reads. */
static void fill_g(const hs_model *m, hs_work *w, const double *dyn)
{
    for (size_t i = 0; i < m->k; i++) {
        double s = dyn[m->off_gamma + i];
        if (m->set.stabilize == HS_STAB_BAUMGARTE)
            s += 2 * m->set.alpha * dyn[m->off_Gdotb + i] +
                 m->set.beta * m->set.beta * dyn[m->off_Gb + i];
        w->rg[i] = hs_dyn_is_released_(w, i) ? 0 : s;
    }
}

/* C = G_q M^-1 G_q^T of every row (the dense or band storage of w). */
static void assemble_C(const hs_model *m, hs_work *w, const double *Gq)
{
    size_t n = m->n, k = m->k;
    const int *st = m->gq_start, *col = m->gq_col;
    double *Cd = w->C ? w->C->data : NULL;  /* dense path only */
    size_t tda = w->C ? w->C->tda : 0;
    if (m->mass_kind != HS_MASS_FULL) {
        /* C_ij = sum_c Gq_ic Minv_c Gq_jc over the columns rows i, j share */
        const uint32_t *pi = w->pair_i, *pj = w->pair_j, *ei = w->pair_pi, *ej = w->pair_pj;
        if (w->Cs) {
            double *x = hs_la_spd_values(w->Cs);
            const int *slot = hs_la_spd_slots(w->Cs);
            for (size_t p = 0; p < w->npair; p++)
                x[slot[p]] += Gq[ei[p]] * w->Minv[col[ei[p]]] * Gq[ej[p]];
        } else if (w->banded) {
            double *B = w->Cb->data;
            size_t btda = w->Cb->tda;
            memset(B, 0, k * btda * sizeof *B);
            for (size_t p = 0; p < w->npair; p++)
                B[pj[p] * btda + (pi[p] - pj[p])] +=
                    Gq[ei[p]] * w->Minv[col[ei[p]]] * Gq[ej[p]];
        } else {
            for (size_t i = 0; i < k; i++)
                memset(Cd + i * tda, 0, k * sizeof *Cd);
            for (size_t p = 0; p < w->npair; p++)
                Cd[pi[p] * tda + pj[p]] += Gq[ei[p]] * w->Minv[col[ei[p]]] * Gq[ej[p]];
            for (size_t i = 0; i < k; i++)
                for (size_t j = 0; j < i; j++)
                    Cd[j * tda + i] = Cd[i * tda + j];
        }
        return;
    }
    /* Y_i = M^-1 G_q,i^T, C_ij = G_q,i . Y_j */
    for (size_t i = 0; i < k; i++) {
        double *y = w->Y->data + i * w->Y->tda;
        memset(y, 0, n * sizeof *y);
        for (int p = st[i]; p < st[i + 1]; p++)
            y[col[p]] = Gq[p];
        hs_dyn_solve_mass(m, w, y);
    }
    for (size_t i = 0; i < k; i++)
        for (size_t j = 0; j <= i; j++) {
            const double *y = w->Y->data + j * w->Y->tda;
            double s = 0;
            for (int p = st[i]; p < st[i + 1]; p++)
                s += Gq[p] * y[col[p]];
            Cd[i * tda + j] = Cd[j * tda + i] = s;
        }
}

/* The rank-revealing solve (robust.c) from the dynamics outputs. */
static int robust(const hs_model *m, hs_work *w, double t, const double *dyn, int mass)
{
    if (hs_dyn_robust_alloc(m, w))
        return HS_EXIT_NUMERIC;
    fill_g(m, w, dyn);
    return hs_dyn_robust_solve(m, w, t, dyn, mass) ? HS_EXIT_NUMERIC : 0;
}

/* Every row in C (none is released: held.c solves otherwise): the
 * multipliers into w->Lambda, acc += M^-1 G_q^T Lambda.  0, 1 (C
 * singular or ill-conditioned: the rank-revealing solve) or
 * HS_EXIT_NUMERIC. */
static int solve_all(const hs_model *m, hs_work *w, double t, const double *dyn, double *acc)
{
    size_t n = m->n, k = m->k;
    const int *st = m->gq_start, *col = m->gq_col;
    const double *Gq = dyn + m->off_Gq, *z = w->z->data;
    assemble_C(m, w, Gq);
    /* rhs = G_q M^-1 Q + gamma (+ Baumgarte terms) */
    double *rhs = w->rhs->data;
    for (size_t i = 0; i < k; i++) {
        double s = dyn[m->off_gamma + i];
        for (int p = st[i]; p < st[i + 1]; p++)
            s += Gq[p] * z[col[p]];
        if (m->set.stabilize == HS_STAB_BAUMGARTE)
            s += 2 * m->set.alpha * dyn[m->off_Gdotb + i] +
                 m->set.beta * m->set.beta * dyn[m->off_Gb + i];
        rhs[i] = s;
    }
    hs_csys sys = { k, w->C, w->Cb, w->banded, w->Cs };
    int fc = hs_dyn_factor_C(w, &sys, k - w->rank0, t);
    if (fc)
        return fc;
    for (size_t i = 0; w->nskip && i < k; i++)
        if (w->skip[i])
            rhs[i] = 0;                           /* dependent rows: solved by the others */
    if (w->Cs) {                                  /* rhs <- C^-1 rhs */
        if (hs_la_spd_solve(w->Cs, w->rhs->data))
            return hs_error_nomem(&w->err);
    } else if (w->banded)
        hs_la_band_svx(w->Cb, w->rhs->data);
    else
        hs_la_small_svx(w->C, w->rhs->data);          /* L lower triangle */
    for (size_t i = 0; i < k; i++)
        w->Lambda[i] = -rhs[i];                   /* Lambda = -C^-1 (...) */
    if (w->nskip)                                 /* the least-norm multiplier */
        hs_la_small_minnorm(w->C, w->skip, w->Lambda, w->mnwork);
    /* a = z + M^-1 G_q^T Lambda */
    if (m->mass_kind != HS_MASS_FULL) {
        for (size_t i = 0; i < k; i++)
            for (int p = st[i]; p < st[i + 1]; p++)
                acc[col[p]] += w->Minv[col[p]] * Gq[p] * w->Lambda[i];
    } else {
        for (size_t i = 0; i < k; i++) {
            const double *y = w->Y->data + i * w->Y->tda;
            for (size_t c = 0; c < n; c++)
                acc[c] += y[c] * w->Lambda[i];
        }
    }
    return 0;
}

static int accel1(const hs_model *m, hs_work *w, double t, const double *q,
                  const double *v, double *a, double *Lambda)
{
    size_t n = m->n, k = m->k;
    w->nrhs++;
    w->robust = 0;
    hs_dyn_set_state(m, w, t, q, v);
    hs_dyn_run_prog(m->prog_dyn, w->kdyn, w->in, w->rdyn, w->dyn);
    if (w->fdir)                                      /* friction (impact.c) */
        hs_dyn_friction_adjust(m, w);
    const double *dyn = w->dyn;
    if (!hs_dyn_all_finite(dyn, m->ndyn))
        return hs_dyn_nonfinite(m, w, m->prog_dyn, w->rdyn, t);
    int mass = factor_mass(m, w, dyn, t);
    if (mass == HS_EXIT_NUMERIC)
        return HS_EXIT_NUMERIC;
    double *acc = w->a;
    if (mass && !k) {
        /* massless and unconstrained: the first zero entry */
        if (hs_dyn_robust_alloc(m, w))
            return HS_EXIT_NUMERIC;
        double *Md = w->tmpn->data;
        for (size_t i = 0; i < n; i++)
            Md[i] = m->mass_kind == HS_MASS_CONST_DIAG ? m->Mconst[i]
                    : m->mass_kind == HS_MASS_DIAG ? dyn[m->off_M + i]
                    : dyn[m->off_M + i * (i + 1) / 2 + i];
        return hs_dyn_saddle_singular(m, w, t, Md);
    }
    if (!mass) {
        double *z = w->z->data;
        memcpy(z, dyn + m->off_Q, n * sizeof *z);
        hs_dyn_solve_mass(m, w, z);                    /* z = M^-1 Q */
        memcpy(acc, z, n * sizeof *acc);
    }
    if (k) {
        /* constraints let go: the system of the rows held alone (held.c) */
        int held = hs_dyn_held_ready(m, w);
        /* redundant from the start: the small dense path skips the
         * dependent rows; the others go through the SVD */
        int small = held ? hs_dyn_held_small(w)
                    : !w->banded && k <= HS_SMALL_K && !w->full_rcond;
        int rc;
        if (mass || (w->rank0 < k && !w->strict && !small))
            rc = robust(m, w, t, dyn, mass);
        else if ((rc = held ? hs_dyn_held_solve(m, w, t, dyn, acc)
                            : solve_all(m, w, t, dyn, acc)) == 1)
            rc = robust(m, w, t, dyn, 0);         /* singular or ill-conditioned */
        if (rc)
            return rc;
    }
    w->T = quadratic_T(m, dyn, v);
    if (!hs_dyn_all_finite(acc, n) || (k && !hs_dyn_all_finite(w->Lambda, k))) {
        hs_error_init(&w->err);
        w->fail_kind = HS_FAIL_NONFINITE;
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "non-finite acceleration at t=%.17g", t);
    }
    if (a)
        memcpy(a, acc, n * sizeof *a);
    if (Lambda)
        memcpy(Lambda, w->Lambda, k * sizeof *Lambda);
    return 0;
}

/* The structured embedding (dynamics/chain.c): its constraints' multipliers
 * into w->Lambda. */
static int chain_accel(const hs_model *m, hs_work *w, double t, const double *q,
                       const double *v, double *a)
{
    w->nrhs++;
    w->robust = 0;
    hs_dyn_set_state(m, w, t, q, v);
    if (hs_chain_accel(m, w, t, w->a))
        return HS_EXIT_NUMERIC;
    if (a)
        memcpy(a, w->a, m->n * sizeof *a);
    return 0;
}

/* With friction: the sliding forces solved with the normal reactions they
 * read and may change (secant steps, impact.c); no solution within 60
 * evaluations is Painleve's paradox (no consistent force). */
static int accel(const hs_model *m, hs_work *w, double t, const double *q,
                 const double *v, double *a, double *Lambda)
{
    if (!w->fdir)
        return accel1(m, w, t, q, v, a, Lambda);
    memset(w->Qx, 0, m->n * sizeof *w->Qx);
    memset(w->Ff, 0, 4 * m->nfriction * sizeof *w->Ff);
    for (int it = 0; it < 60; it++) {
        int done, rc = accel1(m, w, t, q, v, a, Lambda);
        if (rc || (rc = hs_dyn_friction_step(m, w, it, &done)))
            return rc;
        if (done) {
            if (Lambda)
                memcpy(Lambda, w->Lambda, m->k * sizeof *Lambda);
            return 0;
        }
    }
    size_t f = 0;
    while (f + 1 < m->nfriction && !w->fdir[f])
        f++;
    hs_error_init(&w->err);
    w->fail_kind = HS_FAIL_NONFINITE;
    return hs_error_set(&w->err, HS_EXIT_NUMERIC, "friction '%s': no consistent contact force "
                        "at t=%.17g (its sliding force changes the normal reaction it is "
                        "computed from without settling: Painleve's paradox)",
                        m->cname[m->fric0 + f], t);
}

int hs_dyn_accel(const hs_model *m, hs_work *w, double t, const double *q,
                 const double *v, double *a, double *Lambda)
{
    if (m->chain) {
        int r = chain_accel(m, w, t, q, v, a);
        if (!r && Lambda)
            memcpy(Lambda, w->Lambda, m->k * sizeof *Lambda);
        return r;
    }
    return accel(m, w, t, q, v, a, Lambda);
}

int hs_dyn_aux(const hs_model *m, hs_work *w, double t, const double *q,
               const double *v)
{
    hs_dyn_set_state(m, w, t, q, v);
    hs_dyn_run_prog(m->prog_aux, w->kaux, w->in, w->raux, w->aux);
    if (!hs_dyn_all_finite(w->aux, m->naux))
        return hs_dyn_nonfinite(m, w, m->prog_aux, w->raux, t);
    for (size_t j = m->fric0; w->goff && j < m->k; j++)
        w->aux[m->off_G + j] -= w->goff[j];
    return 0;
}
