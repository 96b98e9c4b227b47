/* The state-space model dx/dt = A x + B u, y = C x + D u at an
 * equilibrium (analysis.h: hs_an_statespace), from exact symbolic
 * derivatives.
 *
 * x = (y_s, y_s') with dq = T y_s (modes.c: the coordinates hs_an_linearize
 * keeps, T its basis), A = hs_an_linearize's.  An input u enters Q:
 *
 *     M dv' = S dq + D dv + Q_u du + G_q^T dl,   G_q dq = 0
 *     Mr y_s'' = T^T (S T y_s + D T y_s' + Q_u du),  Mr = T^T M T,
 *
 * so B = [0; Mr^-1 T^T Q_u].  The accelerations da = T y_s'' = T (A_2 x +
 * B_2 du) (A_2, B_2 the lower halves); the multipliers from the same
 * equation, G_q^T dl = M da - S dq - D dv - Q_u du, whose right-hand side
 * lies in the range of G_q^T: dl = (G_q G_q^T)^-1 G_q (...).  An output h(q,
 * v, a, lambda, u) is then h_q dq + h_v dv + h_a da + h_lambda dl + h_u du:
 * D is exact where it reads an acceleration or a multiplier. */
#include "internal.h"
#include "../linalg/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>

/* What an output of the state-space model reads. */
enum { Y_COORD, Y_VEL, Y_ACC, Y_LAMBDA, Y_OUTPUT, Y_REACT };

typedef struct ycol {
    int kind;
    size_t idx;
} ycol;

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

/* The column an output name reads, or -1. */
static int find_column(const hs_model *m, const char *s, ycol *c)
{
    size_t len = strlen(s);
    for (size_t i = 0; i < m->n; i++) {
        size_t ql = strlen(m->qname[i]);
        if (len >= ql && strncmp(s, m->qname[i], ql) == 0) {
            const char *rest = s + ql;
            int kind = !*rest ? Y_COORD : strcmp(rest, "'") == 0 ? Y_VEL
                     : strcmp(rest, "''") == 0 ? Y_ACC : -1;
            if (kind >= 0) {
                *c = (ycol){ kind, i };
                return 0;
            }
        }
    }
    for (size_t o = 0; o < m->nout; o++)
        if (strcmp(s, m->outname[o]) == 0) {
            *c = (ycol){ Y_OUTPUT, o };
            return 0;
        }
    if (strncmp(s, "lambda_", 7) == 0)
        for (size_t j = 0; j < m->k; j++)
            if (strcmp(s + 7, m->cname[j]) == 0) {
                *c = (ycol){ Y_LAMBDA, j };
                return 0;
            }
    if (strncmp(s, "R_", 2) == 0)
        for (size_t i = 0; i < m->n; i++)
            if (strcmp(s + 2, m->qname[i]) == 0) {
                *c = (ycol){ Y_REACT, i };
                return 0;
            }
    return -1;
}

/* Dense helpers, row-major. */
static double *mat(size_t r, size_t c)
{
    return calloc(r * c + 1, sizeof(double));
}

/* Z (r x c) = X (r x k) Y (k x c) */
static void mul(const double *X, const double *Y, double *Z, size_t r, size_t k, size_t c)
{
    for (size_t i = 0; i < r; i++)
        for (size_t j = 0; j < c; j++) {
            double s = 0;
            for (size_t l = 0; l < k; l++)
                s += X[i * k + l] * Y[l * c + j];
            Z[i * c + j] = s;
        }
}

static void from_gsl(const gsl_matrix *G, double *X)
{
    for (size_t i = 0; i < G->size1; i++)
        for (size_t j = 0; j < G->size2; j++)
            X[i * G->size2 + j] = gsl_matrix_get(G, i, j);
}

/* X (r x c) := F^-1 X for the LU factors of an r x r matrix. */
static void lu_solve(const gsl_matrix *LU, const gsl_permutation *p, double *X, size_t r,
                     size_t c)
{
    gsl_vector *v = hs_la_vector_alloc(r);
    if (!v)
        return;
    for (size_t j = 0; j < c; j++) {
        for (size_t i = 0; i < r; i++)
            gsl_vector_set(v, i, X[i * c + j]);
        hs_la_lu_svx(LU, p, v);
        for (size_t i = 0; i < r; i++)
            X[i * c + j] = gsl_vector_get(v, i);
    }
    gsl_vector_free(v);
}

/* The derivative program of the inputs and outputs: dQ(q,0)/du | dG/du |
 * per output: dh/dq | dh/dv | dh/da | dh/dlambda | dh/du.  Inputs: every
 * symbol of the dag, set by the caller. */
typedef struct dprog {
    hs_prog *p;
    size_t nin, nout;
    double *in, *regs, *out;
} dprog;

static int derivative_program(hs_an *a, const size_t *up, size_t nu, const ycol *yc,
                              size_t ny, dprog *dp, hs_error *err)
{
    hs_model *m = a->m;
    hs_dag *d = m->dag;
    size_t n = m->n, k = m->k, per = 3 * n + k + nu, nr = n * nu + k * nu + ny * per;
    const hs_node **r = calloc(nr + 1, sizeof *r);
    if (!r)
        return hs_error_nomem(err);
    const hs_node *zero = hs_num(d, 0);
    size_t e = 0;
    for (size_t j = 0; j < nu; j++)
        for (size_t i = 0; i < n; i++)
            r[e++] = hs_diff(d, m->Q[i], m->sym_p[up[j]]);
    for (size_t j = 0; j < nu; j++)
        for (size_t i = 0; i < k; i++)
            r[e++] = hs_diff(d, m->G[i], m->sym_p[up[j]]);
    for (size_t o = 0; o < ny; o++) {
        const hs_node *h = yc[o].kind == Y_OUTPUT ? m->out[yc[o].idx] : zero;
        for (size_t c = 0; c < n; c++)
            r[e++] = hs_diff(d, h, m->sym_q[c]);
        for (size_t c = 0; c < n; c++)
            r[e++] = hs_diff(d, h, m->sym_v[c]);
        for (size_t c = 0; c < n; c++)
            r[e++] = m->sym_a && m->sym_a[c] >= 0 ? hs_diff(d, h, m->sym_a[c]) : zero;
        for (size_t j = 0; j < k; j++)
            r[e++] = m->sym_lam && m->sym_lam[j] >= 0 ? hs_diff(d, h, m->sym_lam[j]) : zero;
        for (size_t j = 0; j < nu; j++)
            r[e++] = hs_diff(d, h, m->sym_p[up[j]]);
    }
    int rc = 0;
    if (hs_dag_failed(d)) {
        const hs_error *de = hs_dag_error(d);
        rc = de->code == HS_EXIT_NOMEM ? hs_error_nomem(err)
           : hs_error_set(err, HS_EXIT_MODEL, "%s (while deriving the inputs and outputs)",
                          de->msg);
    } else if (!(dp->p = hs_prog_compile(d, r, nr, err))) {
        rc = err->code;
    }
    free(r);
    if (rc)
        return rc;
    dp->nin = (size_t)hs_dag_nsymbols(d);
    dp->nout = nr;
    dp->in = calloc(dp->nin + 1, sizeof *dp->in);
    dp->regs = calloc(hs_prog_nregs(dp->p) + 1, sizeof *dp->regs);
    dp->out = calloc(nr + 1, sizeof *dp->out);
    if (!dp->in || !dp->regs || !dp->out)
        return hs_error_nomem(err);
    return 0;
}

static void dprog_free(dprog *dp)
{
    hs_prog_free(dp->p);
    free(dp->in);
    free(dp->regs);
    free(dp->out);
}

/* T (n x m) from the coordinates lin keeps: dq_state = y, dq_solved =
 * -G_D^-1 G_I y (the construction of modes.c). */
static int basis(const hs_linear *lin, const double *Gq, double *T)
{
    size_t n = lin->n, k = lin->k, m = lin->dof;
    for (size_t j = 0; j < m; j++)
        T[lin->state[j] * m + j] = 1.0;
    if (!k)
        return 0;
    gsl_matrix *GD = hs_la_matrix_alloc(k, k);
    gsl_permutation *p = hs_la_permutation_alloc(k);
    double *X = mat(k, m);
    int signum, rc = -1;
    if (GD && p && X) {
        for (size_t r = 0; r < k; r++) {
            for (size_t c = 0; c < k; c++)
                gsl_matrix_set(GD, r, c, Gq[r * n + lin->solved[c]]);
            for (size_t j = 0; j < m; j++)
                X[r * m + j] = -Gq[r * n + lin->state[j]];
        }
        gsl_linalg_LU_decomp(GD, p, &signum);
        lu_solve(GD, p, X, k, m);
        for (size_t r = 0; r < k; r++)
            for (size_t j = 0; j < m; j++)
                T[lin->solved[r] * m + j] = X[r * m + j];
        rc = 0;
    }
    gsl_matrix_free(GD);
    gsl_permutation_free(p);
    free(X);
    return rc;
}

/* The numbers at eq: M, S, D, HL = sum_j lambda_j d2G_j/dq2 (n x n), G_q
 * (k x n); 0 or an exit code. */
static int kernels_at(hs_an *a, const hs_equil *eq, double *M, double *S, double *Dv,
                      double *HL, double *Gq, hs_error *err)
{
    size_t n = a->n, k = a->k;
    gsl_matrix *g1 = hs_la_matrix_alloc(n, n), *g2 = hs_la_matrix_alloc(k ? k : 1, n);
    if (!g1 || !g2) {
        gsl_matrix_free(g1);
        gsl_matrix_free(g2);
        return hs_error_nomem(err);
    }
    int rc = 0;
    if (!hs_ak_eval_eq(a, eq->q))
        rc = hs_ak_nonfinite(a, 0, eq->q, HS_EXIT_INCONSISTENT, "in the linearization",
                             err);
    if (!rc) {
        hs_ak_fill_S(a, eq->lambda, g1);
        from_gsl(g1, S);
        double *zero = calloc(k + 1, sizeof *zero);
        if (!zero) {
            gsl_matrix_free(g1);
            gsl_matrix_free(g2);
            return hs_error_nomem(err);
        }
        hs_ak_fill_S(a, zero, g1);             /* dQ/dq alone: HL = S - that */
        free(zero);
        for (size_t i = 0; i < n * n; i++)
            HL[i] = S[i] - gsl_matrix_get(g1, i / n, i % n);
        if (k) {
            hs_ak_fill_Gq(a, g2);
            from_gsl(g2, Gq);
        }
        if (!hs_ak_eval_lin(a, eq->q))
            rc = hs_ak_nonfinite(a, 1, eq->q, HS_EXIT_INCONSISTENT, "in the mass matrix or "
                                 "the damping", err);
    }
    if (!rc) {
        hs_ak_fill_M(a, g1);
        from_gsl(g1, M);
        hs_ak_fill_D(a, g1);
        from_gsl(g1, Dv);
    }
    gsl_matrix_free(g1);
    gsl_matrix_free(g2);
    return rc;
}

/* ss's names: states (y_s, then y_s'), inputs, outputs. */
static int names(const hs_model *m, const hs_linear *lin, const size_t *up,
                 const char *const *y, hs_statespace *ss)
{
    size_t dof = lin->dof;
    ss->xname = calloc(2 * dof + 1, sizeof *ss->xname);
    ss->uname = calloc(ss->nu + 1, sizeof *ss->uname);
    ss->yname = calloc(ss->ny + 1, sizeof *ss->yname);
    if (!ss->xname || !ss->uname || !ss->yname)
        return -1;
    for (size_t j = 0; j < dof; j++) {
        const char *q = m->qname[lin->state[j]];
        if (!(ss->xname[j] = dup(q)) || !(ss->xname[dof + j] = malloc(strlen(q) + 2)))
            return -1;
        strcpy(ss->xname[dof + j], q);
        strcat(ss->xname[dof + j], "'");
    }
    for (size_t j = 0; j < ss->nu; j++)
        if (!(ss->uname[j] = dup(m->pname[up[j]])))
            return -1;
    for (size_t o = 0; o < ss->ny; o++)
        if (!(ss->yname[o] = dup(y[o])))
            return -1;
    return 0;
}

/* The work of hs_an_statespace once the inputs and outputs are known. */
typedef struct ssw {
    double *T, *M, *S, *Dv, *Gq, *Qu, *B2, *Tq, *Tv, *Dax, *Dau, *P, *dlx, *dlu, *W, *HL;
} ssw;

static void ssw_free(ssw *w)
{
    double *v[] = { w->T, w->M, w->S, w->Dv, w->Gq, w->Qu, w->B2, w->Tq, w->Tv, w->Dax,
                    w->Dau, w->P, w->dlx, w->dlu, w->W, w->HL };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]);
}

/* B2 = Mr^-1 T^T Q_u, the accelerations' and multipliers' maps. */
static int solve_maps(size_t n, size_t k, size_t m, size_t nu, const double *A, ssw *w)
{
    size_t m2 = 2 * m;
    double *TtM = mat(m, n), *Mr = mat(m, m), *TtQ = mat(m, nu ? nu : 1);
    gsl_matrix *LU = hs_la_matrix_alloc(m, m);
    gsl_permutation *p = hs_la_permutation_alloc(m);
    int rc = -1, signum;
    if (!TtM || !Mr || !TtQ || !LU || !p)
        goto done;
    for (size_t i = 0; i < m; i++)                   /* T^T M */
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t l = 0; l < n; l++)
                s += w->T[l * m + i] * w->M[l * n + j];
            TtM[i * n + j] = s;
        }
    mul(TtM, w->T, Mr, m, n, m);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < nu; j++) {
            double s = 0;
            for (size_t l = 0; l < n; l++)
                s += w->T[l * m + i] * w->Qu[l * nu + j];
            TtQ[i * nu + j] = s;
        }
    for (size_t i = 0; i < m * m; i++)
        LU->data[i / m * LU->tda + i % m] = Mr[i];
    gsl_linalg_LU_decomp(LU, p, &signum);
    lu_solve(LU, p, TtQ, m, nu);
    memcpy(w->B2, TtQ, m * nu * sizeof *TtQ);
    /* Tq = [T 0], Tv = [0 T]; da = T (A_2 x + B_2 u) */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++) {
            w->Tq[i * m2 + j] = w->T[i * m + j];
            w->Tv[i * m2 + m + j] = w->T[i * m + j];
        }
    mul(w->T, A + m * m2, w->Dax, n, m, m2);
    mul(w->T, w->B2, w->Dau, n, m, nu);
    rc = 0;
    if (!k)
        goto done;
    /* P = (G_q G_q^T)^-1 G_q */
    double *GG = mat(k, k);
    gsl_matrix *LK = hs_la_matrix_alloc(k, k);
    gsl_permutation *pk = hs_la_permutation_alloc(k);
    rc = -1;
    if (GG && LK && pk) {
        for (size_t i = 0; i < k; i++)
            for (size_t j = 0; j < k; j++) {
                double s = 0;
                for (size_t l = 0; l < n; l++)
                    s += w->Gq[i * n + l] * w->Gq[j * n + l];
                gsl_matrix_set(LK, i, j, s);
            }
        gsl_linalg_LU_decomp(LK, pk, &signum);
        memcpy(w->P, w->Gq, k * n * sizeof *w->P);
        lu_solve(LK, pk, w->P, k, n);
        /* dl_x = P (M Dax - S Tq - D Tv), dl_u = P (M Dau - Q_u) */
        double *R = mat(n, m2), *Ru = mat(n, nu ? nu : 1);
        if (R && Ru) {
            mul(w->M, w->Dax, R, n, n, m2);
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < m2; j++) {
                    double s = 0;
                    for (size_t l = 0; l < n; l++)
                        s += w->S[i * n + l] * w->Tq[l * m2 + j] +
                             w->Dv[i * n + l] * w->Tv[l * m2 + j];
                    R[i * m2 + j] -= s;
                }
            mul(w->M, w->Dau, Ru, n, n, nu);
            for (size_t i = 0; i < n * nu; i++)
                Ru[i] -= w->Qu[i];
            mul(w->P, R, w->dlx, k, n, m2);
            mul(w->P, Ru, w->dlu, k, n, nu);
            rc = 0;
        }
        free(R);
        free(Ru);
    }
    free(GG);
    gsl_matrix_free(LK);
    gsl_permutation_free(pk);
done:
    free(TtM);
    free(Mr);
    free(TtQ);
    gsl_matrix_free(LU);
    gsl_permutation_free(p);
    return rc;
}

/* The reaction R_i = (G_q^T lambda)_i: dR = HL dq + G_q^T dl. */
static void reaction_row(size_t n, size_t k, size_t m2, size_t nu, size_t i, const ssw *w,
                         double *Crow, double *Drow)
{
    for (size_t j = 0; j < m2; j++) {
        double s = 0;
        for (size_t c = 0; c < n; c++)
            s += w->HL[i * n + c] * w->Tq[c * m2 + j];
        for (size_t r = 0; r < k; r++)
            s += w->Gq[r * n + i] * w->dlx[r * m2 + j];
        Crow[j] = s;
    }
    for (size_t j = 0; j < nu; j++) {
        double s = 0;
        for (size_t r = 0; r < k; r++)
            s += w->Gq[r * n + i] * w->dlu[r * nu + j];
        Drow[j] = s;
    }
}

/* C and D row o from the maps and the output's derivatives g (dh/dq, dh/dv,
 * dh/da, dh/dlambda, dh/du). */
static void output_row(size_t n, size_t k, size_t m2, size_t nu, const ycol *c,
                       const double *g, const ssw *w, double *Crow, double *Drow)
{
    if (c->kind == Y_REACT) {
        reaction_row(n, k, m2, nu, c->idx, w, Crow, Drow);
        return;
    }
    const double *hq = g, *hv = g + n, *ha = g + 2 * n, *hl = g + 3 * n, *hu = g + 3 * n + k;
    for (size_t j = 0; j < m2; j++)
        Crow[j] = 0;
    for (size_t j = 0; j < nu; j++)
        Drow[j] = c->kind == Y_OUTPUT ? hu[j] : 0;
    for (size_t i = 0; i < n + n + n + k; i++) {
        size_t part = i < n ? 0 : i < 2 * n ? 1 : i < 3 * n ? 2 : 3;
        size_t r = part < 3 ? i - part * n : i - 3 * n;
        double h = c->kind == Y_OUTPUT ? (part == 0 ? hq[r] : part == 1 ? hv[r]
                                          : part == 2 ? ha[r] : hl[r])
                 : (int)part == c->kind && r == c->idx ? 1.0 : 0.0;
        if (h == 0)
            continue;
        const double *X = part == 0 ? w->Tq : part == 1 ? w->Tv : part == 2 ? w->Dax : w->dlx;
        for (size_t j = 0; j < m2; j++)
            Crow[j] += h * X[r * m2 + j];
        if (part >= 2) {
            const double *U = part == 2 ? w->Dau : w->dlu;
            for (size_t j = 0; j < nu; j++)
                Drow[j] += h * U[r * nu + j];
        }
    }
}

static int statespace(hs_an *a, const hs_equil *eq, const char *const *u, size_t nu,
                      const char *const *y, size_t ny, hs_statespace *ss, hs_error *err)
{
    hs_model *m = a->m;
    size_t n = m->n, k = m->k;
    memset(ss, 0, sizeof *ss);
    hs_linear lin;
    memset(&lin, 0, sizeof lin);
    size_t *up = calloc(nu + 1, sizeof *up);
    ycol *yc = calloc(ny + 1, sizeof *yc);
    dprog dp;
    memset(&dp, 0, sizeof dp);
    ssw w;
    memset(&w, 0, sizeof w);
    int rc = !up || !yc ? hs_error_nomem(err) : 0;
    for (size_t j = 0; j < nu && !rc; j++) {
        size_t p = 0;
        while (p < m->ninput && strcmp(m->pname[m->input0 + p], u[j]) != 0)
            p++;
        if (p == m->ninput)
            rc = hs_error_set(err, HS_EXIT_MODEL, "%s: the model has no input '%s'%s",
                              hs_optname(m->names, HS_OPT_INPUTS), u[j], m->ninput ? "" : " (it has no inputs: declare them "
                              "with inputs: [F, ...])");
        up[j] = m->input0 + p;
    }
    for (size_t o = 0; o < ny && !rc; o++)
        if (find_column(m, y[o], &yc[o]))
            rc = hs_error_set(err, HS_EXIT_MODEL, "%s: '%s' is no column linearize "
                              "can read (a coordinate x, a velocity x', an acceleration "
                              "x'', an output, a multiplier lambda_NAME, a reaction R_x)",
                              hs_optname(m->names, HS_OPT_OUTPUTS), y[o]);
    if (!rc)
        rc = hs_an_linearize(a, eq, &lin, err);
    if (!rc)
        rc = derivative_program(a, up, nu, yc, ny, &dp, err);
    size_t dof = lin.dof, m2 = 2 * dof;
    ss->nx = m2;
    ss->nu = nu;
    ss->ny = ny;
    if (!rc) {
        ss->A = mat(m2, m2);
        ss->B = mat(m2, nu);
        ss->C = mat(ny, m2);
        ss->D = mat(ny, nu);
        w.T = mat(n, dof);
        w.M = mat(n, n);
        w.S = mat(n, n);
        w.Dv = mat(n, n);
        w.Gq = mat(k, n);
        w.Qu = mat(n, nu);
        w.B2 = mat(dof, nu);
        w.Tq = mat(n, m2);
        w.Tv = mat(n, m2);
        w.Dax = mat(n, m2);
        w.Dau = mat(n, nu);
        w.P = mat(k, n);
        w.dlx = mat(k, m2);
        w.dlu = mat(k, nu);
        w.HL = mat(n, n);
        if (!w.HL || !ss->A || !ss->B || !ss->C || !ss->D || !w.T || !w.M || !w.S || !w.Dv || !w.Gq ||
            !w.Qu || !w.B2 || !w.Tq || !w.Tv || !w.Dax || !w.Dau || !w.P || !w.dlx || !w.dlu ||
            names(m, &lin, up, y, ss))
            rc = hs_error_nomem(err);
    }
    if (!rc) {
        memcpy(ss->A, lin.A, m2 * m2 * sizeof *ss->A);
        rc = kernels_at(a, eq, w.M, w.S, w.Dv, w.HL, w.Gq, err);
    }
    if (!rc && basis(&lin, w.Gq, w.T))
        rc = hs_error_nomem(err);
    if (!rc) {                 /* the derivatives at (q*, v = 0, a = 0, lambda*, u*) */
        dp.in[m->sym_t] = m->t0;
        for (size_t j = 0; j < m->npar; j++)
            dp.in[m->sym_p[j]] = m->pval[j];
        for (size_t i = 0; i < n; i++)
            dp.in[m->sym_q[i]] = eq->q[i];
        for (size_t j = 0; j < k; j++)
            if (m->sym_lam && m->sym_lam[j] >= 0)
                dp.in[m->sym_lam[j]] = eq->lambda[j];
        hs_prog_eval(dp.p, dp.in, dp.regs, dp.out);
        for (size_t e = 0; e < dp.nout && !rc; e++)
            if (!isfinite(dp.out[e]))
                rc = hs_error_set(err, HS_EXIT_INCONSISTENT, "%s: a derivative of an input or "
                                  "output is not finite at the operating point", m->file);
    }
    for (size_t j = 0; j < nu && !rc; j++) {
        for (size_t i = 0; i < n; i++)
            w.Qu[i * nu + j] = dp.out[j * n + i];
        for (size_t i = 0; i < k && !rc; i++)
            if (dp.out[n * nu + j * k + i] != 0)
                rc = hs_error_set(err, HS_EXIT_MODEL, "%s: constraint '%s' reads input '%s' "
                                  "(a prescribed motion): linearize takes inputs that enter "
                                  "the forces and the potential", m->file, m->cname[i], u[j]);
    }
    if (!rc && dof && solve_maps(n, k, dof, nu, ss->A, &w))
        rc = hs_error_nomem(err);
    for (size_t i = 0; i < dof && !rc; i++)
        for (size_t j = 0; j < nu; j++)
            ss->B[(dof + i) * nu + j] = w.B2[i * nu + j];
    size_t per = 3 * n + k + nu;
    for (size_t o = 0; o < ny && !rc; o++)
        output_row(n, k, m2, nu, &yc[o], dp.out + n * nu + k * nu + o * per, &w,
                   ss->C + o * m2, ss->D + o * nu);
    hs_an_linear_free(&lin);
    dprog_free(&dp);
    ssw_free(&w);
    free(up);
    free(yc);
    return rc;
}

int hs_an_statespace(hs_an *a, const hs_equil *eq, const char *const *u, size_t nu,
                     const char *const *y, size_t ny, hs_statespace *ss, hs_error *err)
{
    memset(ss, 0, sizeof *ss);
    if (hs_ak_dense_only(a, "the state-space model", err))
        return err->code;
    int r = statespace(a, eq, u, nu, y, ny, ss, err);
    return r;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

void hs_statespace_free(hs_statespace *ss)
{
    if (!ss)
        return;
    free(ss->A);
    free(ss->B);
    free(ss->C);
    free(ss->D);
    free_names(ss->xname, ss->nx);
    free_names(ss->uname, ss->nu);
    free_names(ss->yname, ss->ny);
    memset(ss, 0, sizeof *ss);
}

int hs_an_point(hs_an *a, const double *q, hs_equil *eq, hs_error *err)
{
    size_t n = a->n, k = a->k;
    memset(eq, 0, sizeof *eq);
    if (hs_ak_dense_only(a, "the linearization at a point", err))
        return err->code;
    eq->n = n;
    eq->k = k;
    eq->rank = k;
    eq->q = calloc(n + 1, sizeof *eq->q);
    eq->lambda = calloc(k + 1, sizeof *eq->lambda);
    double *Gq = mat(k, n), *GG = mat(k, k);
    if (!eq->q || !eq->lambda || !Gq || !GG) {
        free(Gq);
        free(GG);
        return hs_error_nomem(err);
    }
    memcpy(eq->q, q, n * sizeof *q);
    int rc = 0;
    if (!hs_ak_eval_eq(a, q))
        rc = hs_ak_nonfinite(a, 0, q, HS_EXIT_INCONSISTENT, "at the initial state", err);
    const double *Q = a->out_eq;
    for (size_t e = 0; e < a->gq.cnt && !rc; e++)
        Gq[(size_t)a->gq.r[e] * n + (size_t)a->gq.c[e]] = a->out_eq[a->off_Gq + e];
    if (!rc && k) {          /* least squares: lambda = -(G_q G_q^T)^-1 G_q Q */
        gsl_matrix *LK = hs_la_matrix_alloc(k, k);
        gsl_permutation *p = hs_la_permutation_alloc(k);
        int signum;
        if (!LK || !p) {
            rc = hs_error_nomem(err);
        } else {
            for (size_t i = 0; i < k; i++) {
                double s = 0;
                for (size_t l = 0; l < n; l++)
                    s -= Gq[i * n + l] * Q[l];
                eq->lambda[i] = s;
                for (size_t j = 0; j < k; j++) {
                    double g = 0;
                    for (size_t l = 0; l < n; l++)
                        g += Gq[i * n + l] * Gq[j * n + l];
                    gsl_matrix_set(LK, i, j, g);
                }
            }
            gsl_linalg_LU_decomp(LK, p, &signum);
            lu_solve(LK, p, eq->lambda, k, 1);
        }
        gsl_matrix_free(LK);
        gsl_permutation_free(p);
    }
    for (size_t i = 0; i < n && !rc; i++) {
        double r = Q[i];
        for (size_t j = 0; j < k; j++)
            r += Gq[j * n + i] * eq->lambda[j];
        eq->res_Q = fmax(eq->res_Q, fabs(r));
    }
    for (size_t j = 0; j < k && !rc; j++)
        eq->res_G = fmax(eq->res_G, fabs(a->out_eq[a->off_G + j]));
    free(Gq);
    free(GG);
    return rc;
}
