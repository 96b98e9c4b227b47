/* The variational equations of the constrained flow (flow.h): the exact
 * symbolic Jacobians of the accelerations, the tangent space of the
 * constraint manifold, and the motion integrated with its tangent vectors
 * as one ODE. */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_odeiv2.h>

#include "../integrate/integrate.h"
#include "../linalg/linalg.h"

/* ---------- building the programs ---------- */

typedef struct build {
    hs_fl *f;
    hs_dag *d;
    size_t nsym;
    const hs_node **fold;       /* parameter -> its value */
    const hs_node **roots;
    size_t nroots, cap;
} build;

static int push(build *b, const hs_node *e)
{
    if (b->nroots == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        const hs_node **r = realloc(b->roots, cap * sizeof *r);
        if (!r)
            return -1;
        b->roots = r;
        b->cap = cap;
    }
    b->roots[b->nroots++] = e;
    return 0;
}

/* Entry (r, c) = e of a block, skipped when e is the constant 0. */
static int blk_add(build *b, hs_fl_blk *k, const hs_node *e, size_t r, size_t c)
{
    if (hs_is_num(e, 0))
        return 0;
    if (k->cnt == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 16;
        int *nr = realloc(k->r, cap * sizeof *nr);
        if (nr)
            k->r = nr;
        int *nc = nr ? realloc(k->c, cap * sizeof *nc) : NULL;
        if (!nc)
            return -1;
        k->c = nc;
        k->cap = cap;
    }
    if (k->cnt == 0)
        k->off = b->nroots;
    k->r[k->cnt] = (int)r;
    k->c[k->cnt++] = (int)c;
    return push(b, e);
}

static const hs_node *fold(build *b, const hs_node *e)
{
    return e ? hs_subst(b->d, e, b->fold, b->nsym) : hs_num(b->d, 0);
}

/* G_q (k x n) as folded expressions, zeros where a constraint does not
 * read a coordinate. */
static const hs_node **gq_dense(build *b)
{
    hs_model *m = b->f->m;
    size_t n = m->n, k = m->k;
    const hs_node **Gq = calloc(k * n + 1, sizeof *Gq), *zero = hs_num(b->d, 0);
    if (!Gq)
        return NULL;
    for (size_t j = 0; j < k * n; j++)
        Gq[j] = zero;
    for (size_t j = 0; j < k; j++)
        for (size_t z = m->G_q_start[j]; z < m->G_q_start[j + 1]; z++)
            Gq[j * n + m->G_q_col[z]] = fold(b, m->G_q_nz[z]);
    return Gq;
}

/* prog_acc: M (lower triangle) | Q | G_q | gamma | G | Gdot | dGdot/dq. */
static int build_acc(build *b, const hs_node **Gq)
{
    hs_fl *f = b->f;
    hs_model *m = f->m;
    size_t n = m->n, k = m->k;
    int rc = 0;
    b->nroots = 0;
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t j = 0; j <= i && !rc; j++)
            rc = blk_add(b, &f->bM, fold(b, hs_model_M(m, i, j)), i, j);
    for (size_t i = 0; i < n && !rc; i++)
        rc = blk_add(b, &f->bQ, fold(b, m->Q[i]), i, 0);
    for (size_t j = 0; j < k * n && !rc; j++)
        rc = blk_add(b, &f->bGq, Gq[j], j / n, j % n);
    for (size_t j = 0; j < k && !rc; j++)
        rc = blk_add(b, &f->bgam, fold(b, m->gamma[j]), j, 0);
    for (size_t j = 0; j < k && !rc; j++)
        rc = blk_add(b, &f->bG, fold(b, m->G[j]), j, 0);
    for (size_t j = 0; j < k && !rc; j++)
        rc = blk_add(b, &f->bGd, fold(b, m->Gdot[j]), j, 0);
    for (size_t j = 0; j < k && !rc; j++) {
        const hs_node *gd = fold(b, m->Gdot[j]);
        for (size_t c = 0; c < n && !rc; c++)
            if (hs_depends_on(gd, m->sym_q[c]))
                rc = blk_add(b, &f->bGdq, hs_diff(b->d, gd, m->sym_q[c]), j, c);
    }
    return rc;
}

/* The residuals r = M a - G_q^T Lambda - Q (rows 0..n-1) and
 * s = G_q a + gamma (rows n..n+k-1) of m's kernels, the parameters replaced
 * through map[nmap] (a_i, Lambda_j the symbols sym_a, sym_lam); out [n + k].
 * 0, or -1 out of memory. */
int hs_fl_residuals(hs_fl *f, const hs_node *const *map, size_t nmap, const hs_node **out)
{
    hs_model *m = f->m;
    hs_dag *d = m->dag;
    size_t n = m->n, k = m->k;
    const hs_node **t = calloc(n + k + 1, sizeof *t), **Gq = calloc(k * n + 1, sizeof *Gq);
    if (!t || !Gq) {
        free(t);
        free(Gq);
        return -1;
    }
    const hs_node *zero = hs_num(d, 0);
#define SUB(e) ((e) ? hs_subst(d, (e), map, nmap) : zero)
    for (size_t j = 0; j < k * n; j++)
        Gq[j] = zero;
    for (size_t j = 0; j < k; j++)
        for (size_t z = m->G_q_start[j]; z < m->G_q_start[j + 1]; z++)
            Gq[j * n + m->G_q_col[z]] = SUB(m->G_q_nz[z]);
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        for (size_t j = 0; j < n; j++) {
            const hs_node *Mij = SUB(hs_model_M(m, i, j));
            if (!hs_is_num(Mij, 0))
                t[c++] = hs_mul(d, Mij, hs_sym(d, f->sym_a[j]));
        }
        for (size_t j = 0; j < k; j++)
            if (!hs_is_num(Gq[j * n + i], 0))
                t[c++] = hs_neg(d, hs_mul(d, Gq[j * n + i], hs_sym(d, f->sym_lam[j])));
        t[c++] = hs_neg(d, SUB(m->Q[i]));
        out[i] = hs_addn(d, t, c);
    }
    for (size_t j = 0; j < k; j++) {
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
            if (!hs_is_num(Gq[j * n + i], 0))
                t[c++] = hs_mul(d, Gq[j * n + i], hs_sym(d, f->sym_a[i]));
        t[c++] = SUB(m->gamma[j]);
        out[n + j] = hs_addn(d, t, c);
    }
#undef SUB
    free(t);
    free(Gq);
    return 0;
}

/* prog_jac: dr/dq | dr/dv | ds/dq | ds/dv, with
 * r = M a - G_q^T Lambda - Q and s = G_q a + gamma. */
static int build_jac(build *b)
{
    hs_fl *f = b->f;
    hs_model *m = f->m;
    hs_dag *d = b->d;
    size_t n = m->n, k = m->k;
    int rc = 0;
    b->nroots = 0;
    const hs_node **r = calloc(n + k + 1, sizeof *r);
    if (!r || hs_fl_residuals(f, b->fold, b->nsym, r)) {
        free(r);
        return -1;
    }
    hs_fl_blk *blk[4] = { &f->bRq, &f->bRv, &f->bSq, &f->bSv };
    for (int part = 0; part < 4 && !rc; part++) {
        size_t lo = part < 2 ? 0 : n, hi = part < 2 ? n : n + k;
        const int *sym = part % 2 ? m->sym_v : m->sym_q;
        for (size_t i = lo; i < hi && !rc; i++)
            for (size_t c = 0; c < n && !rc; c++)
                if (hs_depends_on(r[i], sym[c]))
                    rc = blk_add(b, blk[part], hs_diff(d, r[i], sym[c]), i - lo, c);
    }
    free(r);
    return rc;
}

static int dag_check(hs_fl *f, hs_error *err)
{
    if (!hs_dag_failed(f->m->dag))
        return 0;
    const hs_error *de = hs_dag_error(f->m->dag);
    if (de->code == HS_EXIT_NOMEM)
        return hs_error_nomem(err);
    hs_error_set(err, HS_EXIT_MODEL, "%s (while deriving the variational equations)",
                 de->msg);
    hs_srcpos p = hs_dag_error_pos(f->m->dag);
    if (p.src >= 0)
        hs_model_place(f->m, p, err);
    return HS_EXIT_MODEL;
}

/* The stepper: the model's when it is an explicit gsl_odeiv2 method, else
 * the default one (explicit: steppers.c). */
static void pick_method(hs_fl *f)
{
    const hs_stepper *s = hs_stepper_find(f->m->set.method);
    if (!s || !s->gsl || (s->flags & HS_STEP_IMPLICIT) || s->tune)
        s = hs_stepper_default;
    f->step = s;
    f->rtol = f->m->set.rtol * s->tol_factor;
    f->atol = f->m->set.atol * s->tol_factor;
}

static int fl_build(hs_fl *f, hs_error *err)
{
    hs_model *m = f->m;
    size_t n = m->n, k = m->k;
    f->sym_a = calloc(n + 1, sizeof *f->sym_a);
    f->sym_lam = calloc(k + 1, sizeof *f->sym_lam);
    if (!f->sym_a || !f->sym_lam)
        return hs_error_nomem(err);
    for (size_t i = 0; i < n + k; i++) {        /* names no model can spell */
        char nm[40];
        snprintf(nm, sizeof nm, "#var %s %zu", i < n ? "a" : "lambda", i < n ? i : i - n);
        int s = hs_dag_symbol(m->dag, nm);
        if (s < 0)
            return dag_check(f, err) ? err->code : hs_error_nomem(err);
        if (i < n)
            f->sym_a[i] = s;
        else
            f->sym_lam[i - n] = s;
    }
    build b = { f, m->dag, (size_t)hs_dag_nsymbols(m->dag), NULL, NULL, 0, 0 };
    b.fold = calloc(b.nsym, sizeof *b.fold);
    const hs_node **Gq = NULL;
    int rc = !b.fold;
    if (!rc) {
        for (size_t j = 0; j < m->npar; j++)
            b.fold[m->sym_p[j]] = hs_num(m->dag, m->pval[j]);
        rc = !(Gq = gq_dense(&b));
    }
    if (!rc && !(rc = build_acc(&b, Gq)) && !(rc = dag_check(f, err)) &&
        !(f->prog_acc = hs_prog_compile(m->dag, b.roots, b.nroots, err)))
        rc = err->code;
    f->nacc = b.nroots;
    f->autonomous = 1;
    for (size_t i = 0; i < b.nroots; i++)
        if (hs_depends_on(b.roots[i], m->sym_t))
            f->autonomous = 0;
    if (!rc && !(rc = build_jac(&b)) && !(rc = dag_check(f, err)) &&
        !(f->prog_jac = hs_prog_compile(m->dag, b.roots, b.nroots, err)))
        rc = err->code;
    f->njac = b.nroots;
    free(b.fold);
    free(b.roots);
    free(Gq);
    if (rc < 0 || (rc && !err->code))
        return hs_error_nomem(err);
    return rc;
}

static int fl_alloc(hs_fl *f, hs_error *err)
{
    size_t n = f->n, k = f->k, nk = n + k;
    size_t nregs = hs_prog_nregs(f->prog_acc);
    if (hs_prog_nregs(f->prog_jac) > nregs)
        nregs = hs_prog_nregs(f->prog_jac);
    f->nin = (size_t)hs_dag_nsymbols(f->m->dag);
    f->in = calloc(f->nin + 1, sizeof *f->in);
    f->regs = calloc(nregs + 1, sizeof *f->regs);
    f->out_acc = calloc(f->nacc + 1, sizeof *f->out_acc);
    f->out_jac = calloc(f->njac + 1, sizeof *f->out_jac);
    f->col = hs_la_vector_alloc(nk);
    f->a = calloc(n + 1, sizeof *f->a);
    f->lam = calloc(k + 1, sizeof *f->lam);
    if (!f->in || !f->regs || !f->out_acc || !f->out_jac || !f->col || !f->a || !f->lam ||
        (nk >= HS_FL_SPARSE_MIN && hs_fl_saddle_new(f)) ||
        (nk <= HS_FL_MAX && hs_fl_saddle_dense(f)))
        return hs_error_nomem(err);
    for (size_t j = 0; j < f->m->npar; j++)
        f->in[f->m->sym_p[j]] = f->m->pval[j];
    return 0;
}

static hs_fl *fl_new(hs_model *m, size_t cap, hs_error *err)
{
    if (m->n + m->k > cap) {
        hs_error_set(err, HS_EXIT_MODEL, "%s: model too large for the variational equations: "
                     "n + k = %zu (the limit is %zu%s)", m->file, m->n + m->k, cap,
                     cap == HS_FL_MAX ? ": the tangent vectors and the monodromy are dense; "
                     "run --sensitivity and the largest Lyapunov exponent take more"
                     : ": the derivation of the variational equations walks n (n + k) pairs");
        return NULL;
    }
    hs_fl *f = calloc(1, sizeof *f);
    if (!f) {
        hs_error_nomem(err);
        return NULL;
    }
    f->m = m;
    f->n = m->n;
    f->k = m->k;
    pick_method(f);
    if (fl_build(f, err) || fl_alloc(f, err)) {
        hs_fl_free(f);
        return NULL;
    }
    return f;
}

hs_fl *hs_fl_new(hs_model *m, hs_error *err)
{
    return fl_new(m, HS_FL_MAX, err);
}

hs_fl *hs_fl_new_sparse(hs_model *m, hs_error *err)
{
    return fl_new(m, HS_FL_SPARSE_MAX, err);
}

static void blk_free(hs_fl_blk *k)
{
    free(k->r);
    free(k->c);
}

void hs_fl_free(hs_fl *f)
{
    if (!f)
        return;
    hs_prog_free(f->prog_acc);
    hs_prog_free(f->prog_jac);
    hs_fl_blk *blks[] = { &f->bM, &f->bQ, &f->bGq, &f->bgam, &f->bG, &f->bGd, &f->bGdq,
                          &f->bRq, &f->bRv, &f->bSq, &f->bSv };
    for (size_t i = 0; i < sizeof blks / sizeof *blks; i++)
        blk_free(blks[i]);
    free(f->sym_a);
    free(f->sym_lam);
    free(f->in);
    free(f->regs);
    free(f->out_acc);
    free(f->out_jac);
    hs_fl_drop_dense(f);
    gsl_vector_free(f->col);
    free(f->dir);
    free(f->a);
    free(f->lam);
    hs_fl_saddle_free(f);
    free(f);
}

const char *hs_fl_method(const hs_fl *f)
{
    return f->step->name;
}

/* ---------- evaluation ---------- */

static int all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

void hs_fl_eval_acc(hs_fl *f, double t, const double *q, const double *v)
{
    hs_model *m = f->m;
    f->in[m->sym_t] = t;
    if (m->ntab)                    /* the input tables' piece at t */
        hs_model_tables_at(m, t, f->in, NULL);
    for (size_t i = 0; i < f->n; i++) {
        f->in[m->sym_q[i]] = q[i];
        f->in[m->sym_v[i]] = v[i];
    }
    hs_fl_run(f->kacc, f->prog_acc, f->in, f->regs, f->out_acc);
}

/* Block entries into X (rows x ld, row-major), added; sym: also (c, r). */
void hs_fl_blk_fill(const hs_fl_blk *k, const double *out, double *X, size_t ld, int sym)
{
    for (size_t e = 0; e < k->cnt; e++) {
        size_t r = (size_t)k->r[e], c = (size_t)k->c[e];
        X[r * ld + c] += out[k->off + e];
        if (sym && r != c)
            X[c * ld + r] += out[k->off + e];
    }
}

static int fail(hs_fl *f, double t, const char *what, hs_error *err)
{
    hs_error_set(err, HS_EXIT_NUMERIC, "%s: %s at t = %.17g (variational equations)",
                 f->m->file, what, t);
    return HS_EXIT_NUMERIC;
}

/* The residuals' derivatives dr/dx, ds/dx into out_jac at the last
 * accel's (a, Lambda). */
static int eval_jac(hs_fl *f, double t, hs_error *err)
{
    for (size_t i = 0; i < f->n; i++)
        f->in[f->sym_a[i]] = f->a[i];
    for (size_t j = 0; j < f->k; j++)
        f->in[f->sym_lam[j]] = f->lam[j];
    hs_fl_run(f->kjac, f->prog_jac, f->in, f->regs, f->out_jac);
    if (!all_finite(f->out_jac, f->njac))
        return fail(f, t, "a non-finite derivative of the accelerations", err);
    return 0;
}

static int accel(hs_fl *f, double t, const double *q, const double *v, int jac, hs_error *err)
{
    size_t n = f->n, k = f->k, nk = n + k;
    hs_fl_eval_acc(f, t, q, v);
    if (!all_finite(f->out_acc, f->nacc))
        return fail(f, t, "a non-finite value of M, Q, G_q or gamma", err);
    double *x = f->col->data;
    memset(x, 0, nk * sizeof *x);
    for (size_t e = 0; e < f->bQ.cnt; e++)
        x[f->bQ.r[e]] = f->out_acc[f->bQ.off + e];
    for (size_t e = 0; e < f->bgam.cnt; e++)
        x[n + (size_t)f->bgam.r[e]] = -f->out_acc[f->bgam.off + e];
    if (jac && !f->K)
        return hs_error_set(err, HS_EXIT_MODEL, "%s: n + k = %zu: the derivatives of the "
                            "accelerations are not formed whole beyond %d", f->m->file, nk,
                            HS_FL_MAX);
    if (hs_fl_saddle_factor(f, jac) || hs_fl_saddle_solve(f, x, NULL, 1))
        return fail(f, t, "a singular saddle-point matrix [M -G_q^T; G_q 0]", err);
    memcpy(f->a, x, n * sizeof *x);
    memcpy(f->lam, x + n, k * sizeof *x);
    if (!jac)
        return 0;
    int rc = eval_jac(f, t, err);
    if (rc)
        return rc;
    /* [dr/dq dr/dv; ds/dq ds/dv], (n + k) x 2n, solved for every column at
     * once on the dense LU (hs_fl_saddle_solve: the triangular solves as
     * BLAS 3); da/dx, then dLambda/dx, are minus the solution */
    size_t ld = 2 * n;
    double *R = f->rhs;
    memset(R, 0, nk * ld * sizeof *R);
    hs_fl_blk_fill(&f->bRq, f->out_jac, R, ld, 0);
    hs_fl_blk_fill(&f->bRv, f->out_jac, R + n, ld, 0);
    hs_fl_blk_fill(&f->bSq, f->out_jac, R + n * ld, ld, 0);
    hs_fl_blk_fill(&f->bSv, f->out_jac, R + n * ld + n, ld, 0);
    if (hs_fl_saddle_solve(f, R, f->rhsp, ld))
        return fail(f, t, "a singular saddle-point matrix [M -G_q^T; G_q 0]", err);
    for (size_t i = 0; i < nk; i++)
        for (size_t j = 0; j < n; j++) {
            f->Aq[i * n + j] = -R[i * ld + j];
            f->Av[i * n + j] = -R[i * ld + n + j];
        }
    return 0;
}

int hs_fl_accel(hs_fl *f, double t, const double *q, const double *v, double *a,
                double *lam, double *Aq, double *Av, hs_error *err)
{
    int rc = accel(f, t, q, v, Aq || Av, err);
    if (rc)
        return rc;
    size_t n = f->n;
    memcpy(a, f->a, n * sizeof *a);
    if (lam)
        memcpy(lam, f->lam, f->k * sizeof *lam);
    if (Aq)
        memcpy(Aq, f->Aq, n * n * sizeof *Aq);
    if (Av)
        memcpy(Av, f->Av, n * n * sizeof *Av);
    return 0;
}

/* ---------- the tangent space ---------- */

/* A (2n x 2k, zeroed) = J^T, J = [G_q 0; dGdot/dq G_q], from out_acc. */
static void fill_jt(const hs_fl *f, gsl_matrix *A)
{
    size_t n = f->n, k = f->k;
    for (size_t e = 0; e < f->bGq.cnt; e++) {
        size_t r = (size_t)f->bGq.r[e], c = (size_t)f->bGq.c[e];
        double g = f->out_acc[f->bGq.off + e];
        gsl_matrix_set(A, c, r, g);
        gsl_matrix_set(A, n + c, k + r, g);
    }
    for (size_t e = 0; e < f->bGdq.cnt; e++)
        gsl_matrix_set(A, (size_t)f->bGdq.c[e], k + (size_t)f->bGdq.r[e],
                       f->out_acc[f->bGdq.off + e]);
}

static int tangent(hs_fl *f, double t, const double *q, const double *v, double *B,
                   size_t *dim, hs_error *err)
{
    size_t n = f->n, k = f->k, nn = 2 * n, kk = 2 * k;
    *dim = nn;
    if (!k) {
        memset(B, 0, nn * nn * sizeof *B);
        for (size_t i = 0; i < nn; i++)
            B[i * nn + i] = 1;
        return 0;
    }
    hs_fl_eval_acc(f, t, q, v);
    if (!all_finite(f->out_acc, f->nacc))
        return fail(f, t, "a non-finite value of G_q or dGdot/dq", err);
    /* A = J^T (2n x 2k), J = [G_q 0; dGdot/dq G_q] */
    gsl_matrix *A = hs_la_matrix_calloc(nn, kk), *Q = hs_la_matrix_alloc(nn, nn);
    gsl_matrix *R = hs_la_matrix_alloc(nn, kk);
    gsl_vector *tau = hs_la_vector_alloc(kk), *norm = hs_la_vector_alloc(kk);
    gsl_permutation *p = hs_la_permutation_alloc(kk);
    int rc = 0, sgn;
    if (!A || !Q || !R || !tau || !norm || !p) {
        rc = hs_error_nomem(err);
        goto done;
    }
    fill_jt(f, A);
    gsl_linalg_QRPT_decomp2(A, Q, R, tau, p, &sgn, norm);
    double r0 = fabs(gsl_matrix_get(R, 0, 0));
    size_t rank = 0;
    while (rank < kk && fabs(gsl_matrix_get(R, rank, rank)) > 1e-9 * r0)
        rank++;
    if (rank < kk) {
        hs_error_set(err, HS_EXIT_INCONSISTENT, "%s: the constraints are dependent at t = "
                     "%.17g (rank of [G_q 0; dGdot/dq G_q] %zu of %zu): no tangent space of "
                     "dimension 2 (n - k)", f->m->file, t, rank, kk);
        rc = HS_EXIT_INCONSISTENT;
        goto done;
    }
    *dim = nn - kk;
    for (size_t i = 0; i < nn; i++)
        for (size_t j = 0; j < *dim; j++)
            B[i * *dim + j] = gsl_matrix_get(Q, i, kk + j);
done:
    gsl_matrix_free(A);
    gsl_matrix_free(Q);
    gsl_matrix_free(R);
    gsl_vector_free(tau);
    gsl_vector_free(norm);
    gsl_permutation_free(p);
    return rc;
}

int hs_fl_tangent(hs_fl *f, double t, const double *q, const double *v, double *B,
                  size_t *dim, hs_error *err)
{
    int rc = tangent(f, t, q, v, B, dim, err);
    return rc;
}

/* P = (I - J^+ J) P: the orthogonal projection onto ker J (what B B^T P
 * gives with hs_fl_tangent's basis), from a QR factorization of J^T
 * (Householder, no basis formed: O(n k^2 + n k ncol), not O(n^3)). */
static int project(hs_fl *f, double t, const double *q, const double *v, double *P,
                   size_t ncol, hs_error *err)
{
    size_t n = f->n, k = f->k, nn = 2 * n, kk = 2 * k;
    if (!k || !ncol)
        return 0;
    hs_fl_eval_acc(f, t, q, v);
    if (!all_finite(f->out_acc, f->nacc))
        return fail(f, t, "a non-finite value of G_q or dGdot/dq", err);
    gsl_matrix *A = hs_la_matrix_calloc(nn, kk);
    gsl_vector *tau = hs_la_vector_alloc(kk), *w = hs_la_vector_alloc(nn);
    int rc = 0;
    if (!A || !tau || !w) {
        rc = hs_error_nomem(err);
        goto done;
    }
    fill_jt(f, A);
    gsl_linalg_QR_decomp(A, tau);
    double rmax = 0, rmin = HUGE_VAL;
    for (size_t i = 0; i < kk; i++) {
        double r = fabs(gsl_matrix_get(A, i, i));
        rmax = fmax(rmax, r);
        rmin = fmin(rmin, r);
    }
    if (!(rmin > 1e-9 * rmax)) {
        hs_error_set(err, HS_EXIT_INCONSISTENT, "%s: the constraints are dependent at t = "
                     "%.17g: no tangent space of dimension 2 (n - k)", f->m->file, t);
        rc = HS_EXIT_INCONSISTENT;
        goto done;
    }
    for (size_t j = 0; j < ncol; j++) {
        for (size_t r = 0; r < nn; r++)
            gsl_vector_set(w, r, P[r * ncol + j]);
        gsl_linalg_QR_QTvec(A, tau, w);            /* the range of J^T first: drop it */
        for (size_t r = 0; r < kk; r++)
            gsl_vector_set(w, r, 0);
        gsl_linalg_QR_Qvec(A, tau, w);
        for (size_t r = 0; r < nn; r++)
            P[r * ncol + j] = gsl_vector_get(w, r);
    }
done:
    gsl_matrix_free(A);
    gsl_vector_free(tau);
    gsl_vector_free(w);
    return rc;
}

int hs_fl_project_sparse(hs_fl *f, double t, const double *q, const double *v, double *P,
                         size_t ncol, hs_error *err)
{
    if (!f->k || !ncol)
        return 0;
    hs_fl_eval_acc(f, t, q, v);
    int rc = hs_fl_saddle_project(f, P, ncol);
    if (rc < 0)
        return hs_error_nomem(err);
    if (rc == 1)
        return fail(f, t, "a non-finite value of G_q or dGdot/dq", err);
    if (rc)
        return hs_error_set(err, HS_EXIT_INCONSISTENT, "%s: the constraints are dependent at "
                            "t = %.17g: no tangent space of dimension 2 (n - k)", f->m->file, t);
    return 0;
}

int hs_fl_project(hs_fl *f, double t, const double *q, const double *v, double *P,
                  size_t ncol, hs_error *err)
{
    int rc = project(f, t, q, v, P, ncol, err);
    return rc;
}

/* ---------- the augmented ODE ---------- */

typedef struct odectx {
    hs_fl *f;
    size_t ncol;
    double t0;
    hs_error *err;
    int rc;
    hs_fl_force_fn force;      /* NULL, or the columns' inhomogeneous term */
    void *fctx;
} odectx;

/* X += the block's matrix times Y (ncol columns; rows of X from xr, of Y
 * from yr). */
static void blk_mul(const hs_fl_blk *b, const double *out, const double *Y, double *X,
                    size_t ncol)
{
    for (size_t e = 0; e < b->cnt; e++) {
        double g = out[b->off + e];
        const double *y = Y + (size_t)b->c[e] * ncol;
        double *x = X + (size_t)b->r[e] * ncol;
        for (size_t j = 0; j < ncol; j++)
            x[j] += g * y[j];
    }
}

/* K^-1 [dr/dq dr/dv; ds/dq ds/dv] P for the ncol columns of P (2n x ncol:
 * the rows dq, then dv) at f's last evaluation, on its factorization;
 * *Y points at the result ((n + k) x ncol, row-major, in f->dir): minus
 * the derivatives of the accelerations and multipliers along P. */
int hs_fl_dir(hs_fl *f, double t, const double *P, size_t ncol, double **Y, hs_error *err)
{
    size_t n = f->n, k = f->k, nk = n + k;
    int rc = eval_jac(f, t, err);
    if (rc)
        return rc;
    if (f->dircap < nk * ncol) {
        double *d = realloc(f->dir, 2 * nk * ncol * sizeof *d);
        if (!d)
            return hs_error_nomem(err);
        f->dir = d;
        f->dircap = nk * ncol;
    }
    double *R = f->dir, *X = f->dir + nk * ncol;
    const double *Pq = P, *Pv = P + n * ncol;
    memset(R, 0, nk * ncol * sizeof *R);
    blk_mul(&f->bRq, f->out_jac, Pq, R, ncol);
    blk_mul(&f->bRv, f->out_jac, Pv, R, ncol);
    blk_mul(&f->bSq, f->out_jac, Pq, R + n * ncol, ncol);
    blk_mul(&f->bSv, f->out_jac, Pv, R + n * ncol, ncol);
    if (hs_fl_saddle_solve(f, R, X, ncol))
        return fail(f, t, "a singular saddle-point matrix [M -G_q^T; G_q 0]", err);
    *Y = R;
    return 0;
}

/* dv' = da/dq dq + da/dv dv for the ncol columns of P into dPv (n x ncol),
 * without forming da/dx: [M -G_q^T; G_q 0] [dv'; dLambda] = -[dr/dx; ds/dx] P,
 * ncol right-hand sides on the factorization accel left. */
static int accel_dir(hs_fl *f, double t, const double *P, size_t ncol, double *dPv,
                     hs_error *err)
{
    double *Y;
    int rc = hs_fl_dir(f, t, P, ncol, &Y, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < f->n * ncol; i++)
        dPv[i] = -Y[i];
    return 0;
}

/* y = (q, v, P) with P (2n x ncol) row-major: the rows dq, then dv. */
static int ode_rhs(double tau, const double y[], double dy[], void *params)
{
    odectx *c = params;
    hs_fl *f = c->f;
    size_t n = f->n, nc = c->ncol;
    const double *q = y, *v = y + n, *P = y + 2 * n;
    f->evals++;
    if (!c->rc)
        c->rc = accel(f, c->t0 + tau, q, v, 0, c->err);
    if (c->rc)
        return GSL_EBADFUNC;
    memcpy(dy, v, n * sizeof *dy);
    memcpy(dy + n, f->a, n * sizeof *dy);
    double *dP = dy + 2 * n;
    memcpy(dP, P + n * nc, n * nc * sizeof *dP);         /* dq' = dv */
    if (nc && (c->rc = accel_dir(f, c->t0 + tau, P, nc, dP + n * nc, c->err)))
        return GSL_EBADFUNC;                              /* dv' = Aq dq + Av dv */
    if (c->force && (c->rc = c->force(c->fctx, c->t0 + tau, dP + n * nc, c->err)))
        return GSL_EBADFUNC;
    return GSL_SUCCESS;
}

/* GSL's driver loop (gsl_odeiv2_driver_apply with no hmin, hmax or nmax:
 * the same steps) with wt->fn after each accepted step. */
static int watched_apply(gsl_odeiv2_driver *d, double t0, double *tau, double span, double *y,
                         hs_fl_watch *wt, hs_error *err)
{
    size_t dim = d->sys->dimension;
    while (*tau < span) {
        double prev = *tau;
        memcpy(wt->y_prev, y, dim * sizeof *y);
        int st = gsl_odeiv2_evolve_apply(d->e, d->c, d->s, d->sys, tau, span, &d->h, y);
        if (st != GSL_SUCCESS)
            return st;
        wt->t_prev = t0 + prev;
        int w = wt->fn(wt->ctx, t0 + *tau, y, err);
        if (w < 0)
            return GSL_EBADFUNC;
        if (w) {
            wt->hit = 1;
            wt->t_hit = t0 + *tau;
            return GSL_SUCCESS;
        }
    }
    return GSL_SUCCESS;
}

static int propagate(hs_fl *f, double t0, double t1, double *x, double *P, size_t ncol,
                     hs_fl_force_fn force, void *fctx, hs_fl_watch *wt, hs_error *err)
{
    size_t n = f->n, dim = 2 * n * (1 + ncol);
    double *y = malloc(dim * sizeof *y);
    if (!y)
        return hs_error_nomem(err);
    memcpy(y, x, 2 * n * sizeof *y);
    if (ncol)
        memcpy(y + 2 * n, P, 2 * n * ncol * sizeof *y);
    odectx c = { f, ncol, t0, err, 0, force, fctx };
    gsl_odeiv2_system sys = { ode_rhs, NULL, dim, &c };
    double span = t1 - t0, h0 = fmin(1e-3, span / 16);
    /* a positive finite first step: GSL's driver reports "invalid hstart"
     * and a backward interval to its handler */
    if (!(span > 0 && span <= DBL_MAX)) {
        free(y);
        if (span == 0)
            return 0;
        return hs_error_set(err, HS_EXIT_NUMERIC, "%s: no interval to integrate from t = %.17g "
                            "to %.17g", f->m->file, t0, t1);
    }
    /* GSL's standard control (its own allocation), the rest allocated by
     * holosim (hs_int_gsl_driver); tolerances checked positive at load */
    gsl_odeiv2_driver *d = hs_int_gsl_driver(&sys, *f->step->gsl, h0,
                                             gsl_odeiv2_control_standard_new(f->atol, f->rtol,
                                                                             1, 0));
    if (!d) {
        free(y);
        return hs_error_nomem(err);
    }
    gsl_odeiv2_driver_set_nmax(d, 0);
    double tau = 0;
    int st = wt ? watched_apply(d, t0, &tau, span, y, wt, err)
                : gsl_odeiv2_driver_apply(d, &tau, span, y);
    f->steps += d->e->count;
    int rc = c.rc ? c.rc : st == GSL_EBADFUNC && wt && err->code ? err->code : 0;
    if (!rc && st != GSL_SUCCESS) {
        hs_error_set(err, HS_EXIT_NUMERIC, "%s: the stepper %s failed at t = %.17g with the "
                     "variational equations (%s)", f->m->file, f->step->name, t0 + tau,
                     gsl_strerror(st));
        rc = HS_EXIT_NUMERIC;
    }
    if (!rc) {
        memcpy(x, y, 2 * n * sizeof *y);
        if (ncol)
            memcpy(P, y + 2 * n, 2 * n * ncol * sizeof *y);
    }
    gsl_odeiv2_driver_free(d);
    free(y);
    return rc;
}

void hs_fl_counts(const hs_fl *f, unsigned long *steps, unsigned long *evals)
{
    *steps = f->steps;
    *evals = f->evals;
}

/* From t0 to t1 in pieces that end at the input tables' times (m->brk),
 * as a run's steps do: no step across a kink of an input. */
static int propagate_pieces(hs_fl *f, double t0, double t1, double *x, double *P,
                            size_t ncol, hs_fl_force_fn force, void *fctx, hs_fl_watch *wt,
                            hs_error *err)
{
    const hs_model *m = f->m;
    double t = t0;
    int rc = 0;
    for (size_t b = 0; b < m->nbrk && !rc && !(wt && wt->hit); b++)
        if (m->brk[b] > t && m->brk[b] < t1) {
            rc = propagate(f, t, m->brk[b], x, P, ncol, force, fctx, wt, err);
            t = m->brk[b];
        }
    return rc || (wt && wt->hit) ? rc : propagate(f, t, t1, x, P, ncol, force, fctx, wt, err);
}

int hs_fl_propagate(hs_fl *f, double t0, double t1, double *x, double *P, size_t ncol,
                    hs_error *err)
{
    return propagate_pieces(f, t0, t1, x, P, ncol, NULL, NULL, NULL, err);
}

int hs_fl_propagate_forced(hs_fl *f, double t0, double t1, double *x, double *P, size_t ncol,
                           hs_fl_force_fn force, void *fctx, hs_error *err)
{
    return propagate_pieces(f, t0, t1, x, P, ncol, force, fctx, NULL, err);
}

int hs_fl_propagate_watched(hs_fl *f, double t0, double t1, double *x, double *P,
                            size_t ncol, hs_fl_force_fn force, void *fctx, hs_fl_watch *wt,
                            hs_error *err)
{
    wt->hit = 0;
    return propagate_pieces(f, t0, t1, x, P, ncol, force, fctx, wt, err);
}

/* M, Q, G at (t0, x) against (t0 + T, x). */
int hs_fl_periodic_model(hs_fl *f, double t0, double T, const double *q, const double *v,
                         char *what, size_t cap)
{
    double *o0 = malloc((f->nacc + 1) * sizeof *o0);
    if (!o0)
        return 1;
    hs_fl_eval_acc(f, t0, q, v);
    memcpy(o0, f->out_acc, f->nacc * sizeof *o0);
    hs_fl_eval_acc(f, t0 + T, q, v);
    const hs_fl_blk *blks[3] = { &f->bM, &f->bQ, &f->bG };
    const char *names[3] = { "M", "Q", "G" };
    int same = 1;
    for (int b = 0; b < 3 && same; b++) {
        double big = 0, diff = 0;
        for (size_t e = 0; e < blks[b]->cnt; e++) {
            size_t o = blks[b]->off + e;
            big = fmax(big, fmax(fabs(o0[o]), fabs(f->out_acc[o])));
            diff = fmax(diff, fabs(o0[o] - f->out_acc[o]));
        }
        if (!(diff <= 1e-9 * big + 1e-12)) {
            same = 0;
            snprintf(what, cap, "%s differs by %.3g (of %.3g)", names[b], diff, big);
        }
    }
    free(o0);
    return same;
}
