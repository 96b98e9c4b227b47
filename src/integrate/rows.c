/* Output rows (internal.h): grid times, what a row computes, rows inside a
 * step (interpolate mode) and the progress line. */
#include "internal.h"
#include "../linalg/linalg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_linalg.h>

/* ---- grid times ---- */

static const double pow10_exact[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* a * 10^k correctly rounded into *y, and the sign of the rounding error
 * (exact - *y) into *lo (0: exact).  |k| <= 22, so 10^|k| is a double. */
static void scale10(double a, int k, double *y, double *lo)
{
    if (k >= 0) {
        *y = a * pow10_exact[k];
        *lo = fma(a, pow10_exact[k], -*y);              /* exact error */
    } else {
        *y = a / pow10_exact[-k];
        *lo = fma(-*y, pow10_exact[-k], a);             /* exact remainder */
    }
}

/* x rounded to 15 significant digits exactly as strtod(sprintf("%.15g", x))
 * rounds it, without formatting: scale |x| into [1e14, 1e15), round the
 * exact scaled value to an integer N (half to even, as printf does), and
 * N / 10^k is the correctly rounded double of the decimal, as strtod's. */
static double round15(double x)
{
    double a = fabs(x);
    if (!(a >= 1e-8 && a < 1e36)) {                   /* 0, huge, tiny, NaN */
        char buf[40];
        snprintf(buf, sizeof buf, "%.15g", x);
        return strtod(buf, NULL);
    }
    int k = 14 - (int)floor(log10(a));
    double y, lo;
    scale10(a, k, &y, &lo);
    if (y >= 1e15)          /* log10 off by one near a power of ten */
        scale10(a, --k, &y, &lo);
    else if (y < 1e14)
        scale10(a, ++k, &y, &lo);
    /* y in [1e14, 1e15]: its ulp is at most 1/8, so y - floor(y) and
     * that minus 1/2 are exact, and the rounding error lo (below half an
     * ulp) decides only an exact half */
    double fl = floor(y), half = (y - fl) - 0.5, N;
    if (half > 0 || (half == 0 && lo > 0))
        N = fl + 1;
    else if (half < 0 || (half == 0 && lo < 0))
        N = fl;
    else
        N = fmod(fl, 2.0) == 0 ? fl : fl + 1;         /* a tie: to even */
    double r = k >= 0 ? N / pow10_exact[k] : N * pow10_exact[-k];
    return copysign(r, x);
}

double hs_grid_time(double t0, long i, double dt)
{
    return round15(t0 + (double)i * dt);
}

/* ---- rows ---- */

/* The summary's energy balance, from the monitor computed by dynamics. */
static void note_balance(hs_int_run *R, double B)
{
    if (!(fabs(B) <= R->sum->max_ebal))
        R->sum->max_ebal = fabs(B);
}

/* Everything a row shows at state y, time t, into *r (w holds the
 * evaluations it points into), the monitors included; first: the first
 * row, whose energy is E0.  0 or an exit code. */
static int row_values(hs_int_run *R, double t, const double *y, hs_row *r, int first)
{
    const hs_model *m = R->m;
    hs_work *w = R->w;
    size_t n = m->n;
    if (hs_int_eval(&R->c, t, y, R->rows.f_at) != GSL_SUCCESS || hs_dyn_aux(m, w, t, y, y + n) ||
        hs_dyn_outputs(m, w, t, y, y + n))
        return hs_int_fail(R, t, y);
    double T = hs_dyn_kinetic(m, w), U = hs_work_aux(w)[m->off_U];
    if (first)
        R->rows.E0 = T + U;
    *r = (hs_row){ .t = t, .q = y, .v = y + n, .a = hs_work_a(w), .Lambda = hs_work_Lambda(w),
                   .aux = hs_work_aux(w), .out = hs_work_outputs(w), .Gz = hs_work_Gq(m, w),
                   .W = y + 2 * n,
                   .T = T, .E = T + U, .H = hs_dyn_jacobi(m, w),
                   .ebal = hs_dyn_balance(T, U, R->rows.E0, y + 2 * n),
                   .pres = hs_dyn_power_residual(m, hs_work_Lambda(w), hs_work_aux(w)),
                   .released = hs_work_released(w), .E_impact = R->ct.E_impact };
    return 0;
}

/* The row's values, written to sink s; 0 or an exit code (a value not
 * finite: nothing written). */
static int put(hs_int_run *R, hs_sink *s, const char *event, const hs_row *r, const double *y)
{
    if (hs_columns_values(R->m, &R->rows.cols, r, s->rows == 0, R->rows.vals, hs_work_err(R->w))) {
        hs_work_set_fail_kind(R->w, HS_FAIL_NONFINITE);
        return hs_int_fail(R, r->t, y);
    }
    if (event)
        hs_sink_event_row(s, event, R->rows.vals, R->rows.cols.n);
    else
        hs_sink_row(s, R->rows.vals, R->rows.cols.n);
    return 0;
}

/* A row: its state y at time t (w_known = 0: the work integrals in y are
 * not computed, as inside a step of interpolate mode when no column shows
 * them; the summary's balance is then taken at the step ends). */
static int row(hs_int_run *R, double t, const double *y, int first, int w_known)
{
    const hs_model *m = R->m;
    hs_work *w = R->w;
    size_t k = m->k;
    hs_row r;
    int rc;
    if (R->rows.lean && !first) {               /* t, q, v and nothing else to show */
        r = (hs_row){ .t = t, .q = y, .v = y + m->n, .bare = 1 };
        if ((rc = put(R, R->rows.out, NULL, &r, y)))
            return rc;
        R->sum->rows++;
        R->sum->t_reached = t;
        return 0;
    }
    if ((rc = row_values(R, t, y, &r, first)) || (rc = put(R, R->rows.out, NULL, &r, y)))
        return rc;
    const double *aux = hs_work_aux(w);
    hs_summary *sum = R->sum;
    sum->rows++;
    for (size_t i = 0; i < k; i++) {
        double G = aux[m->off_G + i], Gd = aux[m->off_Gdot + i];
        if (hs_dyn_is_released(w, i))     /* let go: its G is no residual */
            continue;
        if (!(fabs(G) <= sum->max_G))
            sum->max_G = fabs(G);
        if (!(fabs(Gd) <= sum->max_Gdot))
            sum->max_Gdot = fabs(Gd);
    }
    if (w_known)                           /* the summary's monitors */
        note_balance(R, r.ebal);
    if (!(fabs(r.pres) <= sum->max_pres))
        sum->max_pres = fabs(r.pres);
    sum->t_reached = t;
    return 0;
}

int hs_int_emit(hs_int_run *R, double t, const double *y, int first)
{
    return row(R, t, y, first, 1);
}

int hs_int_event_row_lam(hs_int_run *R, const char *name, double t, const double *y,
                         const double *lam)
{
    hs_row r;
    R->sum->events++;
    if (!R->ev.out)                        /* no events file: nothing to compute */
        return 0;
    int rc = row_values(R, t, y, &r, 0);
    if (lam)
        r.Lambda = lam;
    return rc ? rc : put(R, R->ev.out, name, &r, y);
}

int hs_int_event_row(hs_int_run *R, const char *name, double t, const double *y)
{
    return hs_int_event_row_lam(R, name, t, y, NULL);
}

/* ---- rows inside a step ---- */

/* Interpolate mode.  A row inside a step takes q from the polynomial of
 * degree 8 that matches q, v and a at the ends and the midpoint of a
 * segment (error O(h^9)), and v from its derivative.  The midpoint is one
 * extra step of h/2 with the helper stepper, so the segment's nodes are as
 * accurate as the step's ends (a polynomial through the ends alone is
 * not: bench/README.md).  The polynomial is checked against the
 * equations of motion at u = +-1/2: its acceleration minus a at its state,
 * d, estimates its errors as d H^2/16 in q and d H/4 in v; where they pass
 * the tolerance (atol + rtol |value|, as asked), the segment is halved,
 * the midpoint serving as an end (bsimp's long steps need it), at most
 * HS_INT_DEPTH times (to 1/100 of the tolerance when a column shows a
 * work integral or energy_balance: E and W then agree inside a step about
 * as well as at its ends, where the stepper's errors in both are the
 * same); the right half then ends where the helper, stepping
 * on from the midpoint, puts the step's end (the step's own end differs by
 * its local error, which a short segment would turn into a large error in
 * v).  Inside a step the polynomials follow the stepper's own trajectory,
 * to its end before a projection moved it.  Each work integral W is the polynomial of degree 9
 * that matches W at the segment's ends and midpoint and its rate P at the
 * seven Chebyshev-Lobatto points (two more evaluations), when a column
 * shows it; otherwise the summary's energy balance is taken at the step
 * ends (three points only, degree 5, are not enough: bench/README.md).
 *
 * In the centred variable u in [-1, 1], H = h/2, the coefficients c0..c2
 * of the degree-8 polynomial are the midpoint's data and the rest come
 * from two 3x3 systems (even and odd parts at u = +-1), inverted below in
 * closed form; the W polynomial's 10x10 system is inverted once per run
 * (hs_int_interp_init). */

/* One segment [ta, tb] of a step (GSL's time), its ends and midpoint. */
typedef struct seg {
    double ta, tb, tm, H;
    const double *ya, *fa, *ym, *fm, *yb, *fb;   /* [dim] states and rates */
    int level;
} seg;

/* The degree-8 polynomial of one coordinate: coefficients c[9]. */
static void poly8(const seg *g, size_t i, size_t n, double *c)
{
    double H = g->H;
    double q0 = g->ya[i], v0 = g->ya[n + i], a0 = g->fa[n + i];
    double q1 = g->yb[i], v1 = g->yb[n + i], a1 = g->fb[n + i];
    c[0] = g->ym[i];
    c[1] = H * g->ym[n + i];
    c[2] = H * H * g->fm[n + i] / 2;
    double Ep = (q1 + q0) / 2 - c[0] - c[2], Op = (q1 - q0) / 2 - c[1];
    double Ev1 = H * (v1 + v0) / 2 - c[1], Od1 = H * (v1 - v0) / 2 - 2 * c[2];
    double Ev2 = H * H * (a1 + a0) / 2 - 2 * c[2], Od2 = H * H * (a1 - a0) / 2;
    /* [1 1 1; 4 6 8; 12 30 56] (c4 c6 c8) = (Ep Od1 Ev2), inverse / 16 */
    c[4] = (96 * Ep - 26 * Od1 + 2 * Ev2) / 16;
    c[6] = (-128 * Ep + 44 * Od1 - 4 * Ev2) / 16;
    c[8] = (48 * Ep - 18 * Od1 + 2 * Ev2) / 16;
    /* [1 1 1; 3 5 7; 6 20 42] (c3 c5 c7) = (Op Ev1 Od2), inverse / 16 */
    c[3] = (70 * Op - 22 * Ev1 + 2 * Od2) / 16;
    c[5] = (-84 * Op + 36 * Ev1 - 4 * Od2) / 16;
    c[7] = (30 * Op - 14 * Ev1 + 2 * Od2) / 16;
}

/* q, v (and, when a != NULL, the acceleration) of the segment's
 * polynomials at u into y[2n]. */
static void state_at(const seg *g, size_t n, double u, double *y, double *a)
{
    for (size_t i = 0; i < n; i++) {
        double c[9], p = 0, dp = 0, d2 = 0;
        poly8(g, i, n, c);
        for (int j = 8; j >= 0; j--) {
            p = p * u + c[j];
            if (j >= 1)
                dp = dp * u + j * c[j];
            if (j >= 2)
                d2 = d2 * u + j * (j - 1) * c[j];
        }
        y[i] = p;
        y[n + i] = dp / g->H;
        if (a)
            a[i] = d2 / (g->H * g->H);
    }
}

/* The points where W's rate is matched: u = -cos(j pi / 6), j = 0..6;
 * 0, 3, 6 are the segment's ends and midpoint. */
static const double wnode[HS_INT_NP] = {
    -1, -0.86602540378443865, -0.5, 0, 0.5, 0.86602540378443865, 1,
};

int hs_int_interp_init(hs_int_run *R)
{
    /* rows: W(-1), W(0), W(1), then W'(u_j) for the seven points */
    gsl_matrix *A = hs_la_matrix_alloc(HS_INT_NW, HS_INT_NW);
    gsl_matrix *B = hs_la_matrix_alloc(HS_INT_NW, HS_INT_NW);
    gsl_permutation *p = hs_la_permutation_alloc(HS_INT_NW);
    int sg, rc = -1;
    if (A && B && p) {
        static const double wu[3] = { -1, 0, 1 };
        for (int r = 0; r < HS_INT_NW; r++)
            for (int k = 0; k < HS_INT_NW; k++) {
                double a;
                if (r < 3)
                    a = pow(wu[r], k);
                else
                    a = k == 0 ? 0 : k * pow(wnode[r - 3], k - 1);
                gsl_matrix_set(A, (size_t)r, (size_t)k, a);
            }
        if (gsl_linalg_LU_decomp(A, p, &sg) == GSL_SUCCESS &&
            hs_la_lu_invert(A, p, B) == GSL_SUCCESS) {
            /* B is contiguous, tda = NW */
            memcpy(R->rows.w_inverse, B->data, sizeof R->rows.w_inverse);
            rc = 0;
        }
    }
    if (A)
        gsl_matrix_free(A);
    if (B)
        gsl_matrix_free(B);
    if (p)
        gsl_permutation_free(p);
    return rc;
}

/* The rates at a point u of the segment into f (at the polynomials'
 * state, kept in R->rows.y_at); acc, when not NULL, gets the polynomials'
 * accelerations there.  0 or an exit code. */
static int rates_at(hs_int_run *R, const seg *g, double u, double *f, double *acc)
{
    size_t n = R->m->n;
    state_at(g, n, u, R->rows.y_at, acc);
    double tau = g->tm + u * g->H;
    if (hs_int_rhs(tau, R->rows.y_at, f, &R->c) != GSL_SUCCESS)
        return hs_int_fail(R, R->t0 + tau, R->rows.y_at);
    return 0;
}

/* How far is the segment's polynomial from the tolerance?  *ratio gets
 * the largest estimated error over atol + rtol |value| (<= 1: accurate).
 * Its rates at u = -1/2 and 1/2 go to P[2][3] (the work integrals'
 * rates). */
static int accuracy(hs_int_run *R, const seg *g, double P[2][3], double *ratio)
{
    const hs_model *m = R->m;
    size_t n = m->n;
    double atol = m->set.atol, rtol = m->set.rtol, H = g->H;
    *ratio = 0;
    for (int j = 0; j < 2; j++) {
        int rc = rates_at(R, g, j ? 0.5 : -0.5, R->rows.f_at, R->rows.acc_poly);
        if (rc)
            return rc;
        for (size_t i = 0; i < n; i++) {
            double d = fabs(R->rows.acc_poly[i] - R->rows.f_at[n + i]);
            double rq = d * H * H / 16 / (atol + rtol * fabs(R->rows.y_at[i]));
            double rv = d * H / 4 / (atol + rtol * fabs(R->rows.y_at[n + i]));
            if (!(rq <= *ratio))
                *ratio = rq;
            if (!(rv <= *ratio))
                *ratio = rv;
        }
        for (int c = 0; c < 3; c++)
            P[j][c] = R->rows.f_at[2 * n + (size_t)c];
    }
    return 0;
}

/* The coefficients of every work integral's polynomial on the segment into
 * R->rows.w_coef[3][NW], from W at its ends and midpoint and P at the seven points
 * (P2 at u = -+1/2 known, the two at -+sqrt(3)/2 evaluated here). */
static int work_polys(hs_int_run *R, const seg *g, double P2[2][3])
{
    size_t n = R->m->n;
    double P[HS_INT_NP][3];
    for (int j = 0; j < HS_INT_NP; j++) {
        const double *f;
        if (j == 0 || j == 3 || j == 6) {
            f = j == 0 ? g->fa : j == 3 ? g->fm : g->fb;
        } else if (j == 2 || j == 4) {
            for (int c = 0; c < 3; c++)
                P[j][c] = P2[j == 4][c];
            continue;
        } else {
            int rc = rates_at(R, g, wnode[j], R->rows.f_at, NULL);
            if (rc)
                return rc;
            f = R->rows.f_at;
        }
        for (int c = 0; c < 3; c++)
            P[j][c] = f[2 * n + (size_t)c];
    }
    for (int c = 0; c < 3; c++) {
        double d[HS_INT_NW];
        d[0] = g->ya[2 * n + (size_t)c];
        d[1] = g->ym[2 * n + (size_t)c];
        d[2] = g->yb[2 * n + (size_t)c];
        for (int j = 0; j < HS_INT_NP; j++)
            d[3 + j] = g->H * P[j][c];
        for (int k = 0; k < HS_INT_NW; k++) {
            double s = 0;
            for (int r = 0; r < HS_INT_NW; r++)
                s += R->rows.w_inverse[k * HS_INT_NW + r] * d[r];
            R->rows.w_coef[c][k] = s;
        }
    }
    return 0;
}

/* One step of h from (ta, ya, fa) with the helper stepper into ym, fm (the
 * midpoint of a segment, or the end of its right half).  Returns 0 or an
 * exit code with R->err set. */
static int midpoint(hs_int_run *R, double ta, double h, const double *ya, const double *fa,
                    double *ym, double *fm)
{
    gsl_odeiv2_step *s = R->rows.helper->s;
    memcpy(ym, ya, R->dim * sizeof *ym);
    gsl_odeiv2_step_reset(s);
    int st = gsl_odeiv2_step_apply(s, ta, h, ym, R->rows.helper_err,
                                   s->type->can_use_dydt_in ? fa : NULL, fm, &R->step.sys);
    if (st != GSL_SUCCESS || R->c.failed) {
        if (R->c.failed)
            return hs_int_fail(R, R->t0 + (ta + h), ym);
        return hs_error_set(R->err, HS_EXIT_NUMERIC, "the stepper %s failed at t=%.17g "
                            "while interpolating rows: %s", s->type->name,
                            R->t0 + (ta + h), gsl_strerror(st));
    }
    return 0;
}

/* The row time i: a grid time or t_end. */
static double row_time(const hs_int_run *R, long i)
{
    return i == R->N ? R->t_end : hs_grid_time(R->t0, i, R->dt);
}

/* Every row with GSL time in [ta, tb) of the segment from (ta, ya, fa) to
 * (tb, yb, fb), halving it where its polynomial is not accurate enough.  A
 * polynomial's error falls as H^9 when a segment is halved; where the
 * estimate does not fall at least 8 times, what it sees is the step's own
 * error (the ends disagree with the midpoint at the stepper's tolerance),
 * which halving cannot remove: the segment is kept.  `parent` is the
 * enclosing segment's ratio (infinite at the top). */
static int segment(hs_int_run *R, double ta, const double *ya, const double *fa, double tb,
                   const double *yb, const double *fb, int level, double parent, int step_end,
                   long *i)
{
    const hs_model *m = R->m;
    size_t n = m->n;
    if (*i > R->N || !(row_time(R, *i) - R->t0 < tb))
        return 0;                              /* no row here */
    size_t at = (size_t)level * R->dim;
    double *ym = R->rows.y_mid + at, *fm = R->rows.f_mid + at;
    double h = (tb - ta) / 2, P2[2][3], ratio;
    int rc;
    seg g = { ta, tb, ta + h, h, ya, fa, ym, fm, yb, fb, level };
    if ((rc = midpoint(R, ta, h, ya, fa, ym, fm)) || (rc = accuracy(R, &g, P2, &ratio)))
        return rc;
    if (ratio > (R->rows.need_w ? 0.01 : 1.0) && ratio < parent / 8 && level < HS_INT_DEPTH) {
        R->sum->splits++;
        if ((rc = segment(R, ta, ya, fa, g.tm, ym, fm, level + 1, ratio, 0, i)))
            return rc;
        if (step_end) {        /* the right half ends on the helper's trajectory too */
            double *ye = R->rows.y_right + at, *fe = R->rows.f_right + at;
            if ((rc = midpoint(R, g.tm, h, ym, fm, ye, fe)))
                return rc;
            yb = ye;
            fb = fe;
        }
        return segment(R, g.tm, ym, fm, tb, yb, fb, level + 1, ratio, 0, i);
    }
    if (R->rows.need_w && (rc = work_polys(R, &g, P2)))
        return rc;
    for (; *i <= R->N; (*i)++) {
        double ti = row_time(R, *i), u = ((ti - R->t0) - g.tm) / g.H;
        if (!(ti - R->t0 < tb))
            break;
        state_at(&g, n, u, R->rows.y_at, NULL);
        for (int c = 0; c < 3; c++) {
            double w = R->rows.w_coef[c][HS_INT_NW - 1];
            for (int k = HS_INT_NW - 2; k >= 0; k--)
                w = w * u + R->rows.w_coef[c][k];
            R->rows.y_at[2 * n + (size_t)c] = R->rows.need_w ? w : 0;
        }
        if ((rc = row(R, ti, R->rows.y_at, 0, R->rows.need_w)))
            return rc;
    }
    return 0;
}

/* Every row inside the step that just ended, from the stepper's own
 * dense output (dop853's continuous extension, a fixed-step method's step
 * from the step's start), which covers the work integrals too. */
static int dense_rows(hs_int_run *R, long *i)
{
    const hs_stepper *type = R->step.type;
    double tau_a, h;
    if (*i > R->N || !(row_time(R, *i) - R->t0 < R->tau))
        return 0;                              /* no row here */
    int rc = type->dense(&R->step.ctx, &tau_a, &h);
    if (rc)
        return rc;
    for (; *i <= R->N; (*i)++) {
        double ti = row_time(R, *i);
        if (!(ti - R->t0 < R->tau))
            break;
        if ((rc = type->dense_at(&R->step.ctx, ((ti - R->t0) - tau_a) / h, R->rows.y_at)) ||
            (rc = row(R, ti, R->rows.y_at, 0, R->rows.dense_w)))
            return rc;
    }
    return 0;
}

int hs_int_emit_inside(hs_int_run *R, double taup, long *i)
{
    const hs_model *m = R->m;
    size_t n = m->n;
    int rc;
    if (hs_int_eval(&R->c, R->t, R->y, R->rows.f_end) != GSL_SUCCESS)
        return hs_int_fail(R, R->t, R->y);
    if (R->step.drv && R->step.drv->s->type->can_use_dydt_in)  /* the next step starts here */
        memcpy(R->step.drv->e->dydt_out, R->rows.f_end, R->dim * sizeof *R->rows.f_end);
    if (!R->rows.need_w) {                               /* the summary's balance, here */
        if (hs_dyn_aux(m, R->w, R->t, R->y, R->y + n))
            return hs_int_fail(R, R->t, R->y);
        note_balance(R, hs_dyn_balance(hs_dyn_kinetic(m, R->w), hs_work_aux(R->w)[m->off_U],
                                       R->rows.E0, R->y + 2 * n));
    }
    /* inside the step, the stepper's own trajectory: its end before any
     * projection (which moved it by the drift) */
    const double *yb = R->y, *fb = R->rows.f_end;
    if (R->step.projected && !R->rows.dense) {
        if (hs_int_eval(&R->c, R->t, R->rows.y_unprojected, R->rows.f_unprojected) != GSL_SUCCESS)
            return hs_int_fail(R, R->t, R->rows.y_unprojected);
        yb = R->rows.y_unprojected;
        fb = R->rows.f_unprojected;
    }
    rc = R->rows.dense ? dense_rows(R, i)
                       : segment(R, taup, R->rows.y_start, R->rows.f_start, R->tau, yb, fb, 0,
                                 INFINITY, 1, i);
    if (rc)
        return rc;
    for (; *i <= R->N && row_time(R, *i) <= R->t; (*i)++)   /* rows at the step's end */
        if ((rc = row(R, row_time(R, *i), R->y, 0, 1)))
            return rc;
    double *sw = R->rows.f_start;                   /* the end's rates start the next step */
    R->rows.f_start = R->rows.f_end;
    R->rows.f_end = sw;
    return 0;
}

/* ---- progress ---- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void duration(char *buf, size_t cap, double s)
{
    if (s < 60)
        snprintf(buf, cap, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, cap, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, cap, "%d h %02d min", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* One line on standard error, rewritten in place at most 5 times a
 * second: simulated time, share done, wall time so far and left.  At the
 * end it is rewritten a last time and ends with a newline, so what follows
 * (the summary, an error) starts on a line of its own. */
void hs_int_progress(hs_int_run *R, long rows_done, int done)
{
    (void)rows_done;
    if (!R->rows.progress)
        return;
    double tw = now();
    if (!done && tw < R->rows.next_progress)
        return;
    R->rows.next_progress = tw + 0.2;
    double el = tw - R->wall0;
    if (R->rows.progress == 1 && el < 2.0 && !R->rows.progress_shown)
        return;
    if (done && !R->rows.progress_shown)
        return;
    double frac = (R->t - R->t0) / (R->t_end - R->t0);
    char e1[32], e2[48];
    duration(e1, sizeof e1, el);
    e2[0] = '\0';
    if (!done && frac > 1e-6) {
        char d[32];
        duration(d, sizeof d, el * (1 - frac) / frac);
        snprintf(e2, sizeof e2, ", about %s left", d);
    }
    fprintf(stderr, "\rholosim: t = %-12.6g %3.0f%%, %s elapsed%s    %s", R->t, 100 * frac, e1,
            e2, done ? "\n" : "");
    fflush(stderr);
    R->rows.progress_shown = !done;
}
