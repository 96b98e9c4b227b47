/* Output rows (internal.h): grid times, what a row computes, rows inside a
 * step (interpolate mode) and the progress line. */
#include "internal.h"

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

/* The summary's energy balance at a state whose E is T + U (w and w->aux
 * at that state) and whose work integrals are y's. */
static void note_balance(hs_int_run *R, double E, const double *y)
{
    size_t n = R->m->n;
    double ebal = E - R->E0 - y[2 * n] - y[2 * n + 1] - y[2 * n + 2];
    if (!(fabs(ebal) <= R->sum->max_ebal))
        R->sum->max_ebal = fabs(ebal);
}

/* A row: its state y at time t (w_known = 0: the work integrals in y are
 * not computed, as inside a step of interpolate mode when no column shows
 * them; the summary's balance is then taken at the step ends). */
static int row(hs_int_run *R, double t, const double *y, int first, int w_known)
{
    const hs_model *m = R->m;
    hs_work *w = R->w;
    size_t n = m->n, k = m->k;
    if (hs_int_eval(&R->c, t, y, R->fi) != GSL_SUCCESS || hs_dyn_aux(m, w, t, y, y + n))
        return hs_int_fail(R, t, y);
    const double *aux = w->aux;
    double U = aux[m->off_U], T = w->T + aux[m->off_Tx];
    hs_row r = { t, y, y + n, w->a, w->Lambda, aux, w->dyn + m->off_Gq, T,
                 w->T - aux[m->off_T0] + U, y[2 * n], y[2 * n + 1], y[2 * n + 2], R->E0 };
    if (first)
        R->E0 = r.E0 = T + U;
    hs_columns_row(m, &R->cols, &r, &R->out);
    hs_summary *sum = R->sum;
    sum->rows++;
    double pres = 0;                       /* R.v + Lambda . G_t = Lambda . Gdot */
    for (size_t i = 0; i < k; i++) {
        double G = aux[m->off_G + i], Gd = aux[m->off_Gdot + i];
        if (!(fabs(G) <= sum->max_G))
            sum->max_G = fabs(G);
        if (!(fabs(Gd) <= sum->max_Gdot))
            sum->max_Gdot = fabs(Gd);
        pres += w->Lambda[i] * Gd;
    }
    if (w_known)
        note_balance(R, T + U, y);
    if (!(fabs(pres) <= sum->max_pres))
        sum->max_pres = fabs(pres);
    sum->t_reached = t;
    return 0;
}

int hs_int_emit(hs_int_run *R, double t, const double *y, int first)
{
    return row(R, t, y, first, 1);
}

/* ---- rows inside a step ---- */

/* Interpolate mode.  A row inside the step [t0, t1] takes its q from the
 * polynomial of degree 8 that matches q, v and a at t0, the midpoint and
 * t1 (error O(h^9)), and v from its derivative.  The midpoint is one step
 * of h/2 from t0 with the helper stepper, so rows inside a step are as
 * accurate as the step's ends: a polynomial through the ends alone (the
 * quintic Hermite used before) left errors of 1e-5 in v on a bead on a
 * rotating wire at rtol 1e-8.  Each work integral W is the polynomial of
 * degree 9 that matches W at those three times and its rate P (from the
 * right-hand side) at the seven Chebyshev-Lobatto points of the step: four
 * more evaluations, at states of the degree-8 polynomial.  (With W and P
 * at the three times only, degree 5, W was off by 1e-6 inside the steps.)
 * Only when a column shows a work integral or energy_balance: otherwise
 * the summary's energy balance is taken at the step ends.
 *
 * In the centred variable u in [-1, 1], H = h/2, the coefficients c0..c2
 * of the degree-8 polynomial are the midpoint's data and the rest come
 * from two 3x3 systems (even and odd parts at u = +-1), inverted below in
 * closed form; the W polynomial's 10x10 system is inverted once per run
 * (hs_int_interp_init). */
typedef struct span {
    double tm, H;              /* midpoint (GSL's time tau), half-width */
} span;

static void poly8(const span *s, double q0, double v0, double a0, double qm, double vm,
                  double am, double q1, double v1, double a1, double u, double *q, double *v)
{
    double H = s->H, c[9];
    c[0] = qm;
    c[1] = H * vm;
    c[2] = H * H * am / 2;
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
    double p = c[8], dp = 8 * c[8];
    for (int j = 7; j >= 1; j--) {
        p = p * u + c[j];
        dp = dp * u + j * c[j];
    }
    *q = p * u + c[0];
    *v = dp / H;
}

/* The points where W's rate is matched: u = -cos(j pi / 6), j = 0..6;
 * 0, 3, 6 are the step's ends and midpoint, the other four are extra. */
static const double wnode[HS_INT_NP] = {
    -1, -0.86602540378443865, -0.5, 0, 0.5, 0.86602540378443865, 1,
};

int hs_int_interp_init(hs_int_run *R)
{
    /* rows: W(-1), W(0), W(1), then W'(u_j) for the seven points */
    gsl_matrix *A = gsl_matrix_alloc(HS_INT_NW, HS_INT_NW);
    gsl_matrix *B = gsl_matrix_alloc(HS_INT_NW, HS_INT_NW);
    gsl_permutation *p = gsl_permutation_alloc(HS_INT_NW);
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
            gsl_linalg_LU_invert(A, p, B) == GSL_SUCCESS) {
            memcpy(R->Bw, B->data, sizeof R->Bw);    /* B is contiguous, tda = NW */
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

/* The coefficients of every work integral's polynomial on this step into
 * R->wc[3][NW], from W at the three times and P at the seven points (the
 * four inside evaluated here).  Returns 0 or an exit code. */
static int work_polys(hs_int_run *R, const span *sp)
{
    const hs_model *m = R->m;
    size_t n = m->n;
    double P[HS_INT_NP][3];
    const double *f3[3] = { R->fp, R->fm, R->fn };
    for (int j = 0; j < HS_INT_NP; j++) {
        const double *f = NULL;
        if (j % 3 == 0) {
            f = f3[j / 3];
        } else {
            const double *y0 = R->yp, *f0 = R->fp, *ym = R->ym, *fm = R->fm, *y1 = R->y,
                         *f1 = R->fn;
            for (size_t i = 0; i < n; i++)
                poly8(sp, y0[i], y0[n + i], f0[n + i], ym[i], ym[n + i], fm[n + i], y1[i],
                      y1[n + i], f1[n + i], wnode[j], &R->yi[i], &R->yi[n + i]);
            double tau = sp->tm + wnode[j] * sp->H;
            if (hs_int_rhs(tau, R->yi, R->fi, &R->c) != GSL_SUCCESS)
                return hs_int_fail(R, R->t0 + tau, R->yi);
            f = R->fi;
        }
        for (int c = 0; c < 3; c++)
            P[j][c] = f[2 * n + (size_t)c];
    }
    for (int c = 0; c < 3; c++) {
        double d[HS_INT_NW];
        d[0] = R->yp[2 * n + (size_t)c];
        d[1] = R->ym[2 * n + (size_t)c];
        d[2] = R->y[2 * n + (size_t)c];
        for (int j = 0; j < HS_INT_NP; j++)
            d[3 + j] = sp->H * P[j][c];
        for (int k = 0; k < HS_INT_NW; k++) {
            double s = 0;
            for (int r = 0; r < HS_INT_NW; r++)
                s += R->Bw[k * HS_INT_NW + r] * d[r];
            R->wc[c][k] = s;
        }
    }
    return 0;
}

/* The midpoint of the step [taup, R->tau] into R->ym, R->fm: one step of
 * h/2 from the step's start with the helper stepper.  Returns 0 or an exit
 * code with R->err set. */
static int midpoint(hs_int_run *R, double taup)
{
    gsl_odeiv2_step *s = R->helper->s;
    double h = (R->tau - taup) / 2;
    memcpy(R->ym, R->yp, R->dim * sizeof *R->ym);
    gsl_odeiv2_step_reset(s);
    int st = gsl_odeiv2_step_apply(s, taup, h, R->ym, R->yerr,
                                   s->type->can_use_dydt_in ? R->fp : NULL, R->fm, &R->sys);
    if (st != GSL_SUCCESS || R->c.failed) {
        if (R->c.failed)
            return hs_int_fail(R, R->t0 + (taup + h), R->ym);
        return hs_error_set(R->err, HS_EXIT_NUMERIC, "the stepper %s failed at t=%.17g "
                            "while interpolating rows: %s", s->type->name,
                            R->t0 + (taup + h), gsl_strerror(st));
    }
    return 0;
}

int hs_int_emit_inside(hs_int_run *R, double taup, long *i)
{
    const hs_model *m = R->m;
    size_t n = m->n;
    if (hs_int_eval(&R->c, R->t, R->y, R->fn) != GSL_SUCCESS)
        return hs_int_fail(R, R->t, R->y);
    if (R->drv->s->type->can_use_dydt_in)           /* the next step starts from here */
        memcpy(R->drv->e->dydt_out, R->fn, R->dim * sizeof *R->fn);
    if (!R->need_w) {                               /* the summary's balance, here */
        if (hs_dyn_aux(m, R->w, R->t, R->y, R->y + n))
            return hs_int_fail(R, R->t, R->y);
        note_balance(R, R->w->T + R->w->aux[m->off_Tx] + R->w->aux[m->off_U], R->y);
    }
    int ready = 0, rc;
    span sp = { taup + (R->tau - taup) / 2, (R->tau - taup) / 2 };
    for (; *i <= R->N; (*i)++) {
        double ti = *i == R->N ? R->t_end : hs_grid_time(R->t0, *i, R->dt);
        if (ti > R->t)
            break;
        const double *yr = R->y;
        if (ti < R->t) {
            if (!ready++ && ((rc = midpoint(R, taup)) ||
                             (R->need_w && (rc = work_polys(R, &sp)))))
                return rc;
            double u = ((ti - R->t0) - sp.tm) / sp.H;
            const double *y0 = R->yp, *f0 = R->fp, *ym = R->ym, *fm = R->fm, *y1 = R->y,
                         *f1 = R->fn;
            for (size_t j = 0; j < n; j++)
                poly8(&sp, y0[j], y0[n + j], f0[n + j], ym[j], ym[n + j], fm[n + j], y1[j],
                      y1[n + j], f1[n + j], u, &R->yi[j], &R->yi[n + j]);
            for (int c = 0; c < 3; c++) {
                double w = R->wc[c][HS_INT_NW - 1];
                for (int k = HS_INT_NW - 2; k >= 0; k--)
                    w = w * u + R->wc[c][k];
                R->yi[2 * n + (size_t)c] = R->need_w ? w : 0;
            }
            yr = R->yi;
        }
        if ((rc = row(R, ti, yr, 0, yr == R->y || R->need_w)))
            return rc;
    }
    double *sw = R->fp;                   /* the end's rates start the next step */
    R->fp = R->fn;
    R->fn = sw;
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
    if (!R->show)
        return;
    double tw = now();
    if (!done && tw < R->next_show)
        return;
    R->next_show = tw + 0.2;
    double el = tw - R->wall0;
    if (R->show == 1 && el < 2.0 && !R->shown)
        return;
    if (done && !R->shown)
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
    R->shown = !done;
}
