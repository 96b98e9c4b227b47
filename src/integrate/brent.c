/* Brent's root finder as a gsl_root_fsolver (internal.h): GSL's
 * gsl_root_fsolver_brent, the same arithmetic in the same order (so event
 * times keep their bits), returning GSL's codes where GSL reports to its
 * error handler.  The solver and its state are allocated here, so an out
 * of memory is holosim's to report. */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

typedef struct {
    double a, b, c, d, e;
    double fa, fb, fc;
} brent_state;

/* f at x into *y; GSL_EBADFUNC when it is not finite */
static int call(gsl_function *f, double x, double *y)
{
    *y = GSL_FN_EVAL(f, x);
    return isfinite(*y) ? GSL_SUCCESS : GSL_EBADFUNC;
}

static int same_sign(double u, double v)
{
    return (u < 0.0 && v < 0.0) || (u > 0.0 && v > 0.0);
}

static int brent_set(void *vstate, gsl_function *f, double *root, double lo, double hi)
{
    brent_state *st = vstate;
    double flo, fhi;
    *root = 0.5 * (lo + hi);
    if (call(f, lo, &flo) || call(f, hi, &fhi))
        return GSL_EBADFUNC;
    *st = (brent_state){ lo, hi, hi, hi - lo, hi - lo, flo, fhi, fhi };
    return same_sign(flo, fhi) ? GSL_EINVAL : GSL_SUCCESS;
}

/* the next point: inverse cubic interpolation where it stays inside the
 * bracket and shrinks it fast enough, bisection otherwise (into *d, *e) */
static void next_step(double a, double b, double fa, double fb, double fc,
                      int ac_equal, double m, double tol, double *d, double *e)
{
    if (fabs(*e) < tol || fabs(fa) <= fabs(fb)) {
        *d = m;
        *e = m;
        return;
    }
    double p, q, r, s = fb / fa;
    if (ac_equal) {
        p = 2 * m * s;
        q = 1 - s;
    } else {
        q = fa / fc;
        r = fb / fc;
        p = s * (2 * m * q * (q - r) - (b - a) * (r - 1));
        q = (q - 1) * (r - 1) * (s - 1);
    }
    if (p > 0)
        q = -q;
    else
        p = -p;
    double lim = 3 * m * q - fabs(tol * q), le = fabs(*e * q);
    if (2 * p < (lim < le ? lim : le)) {
        *e = *d;
        *d = p / q;
    } else {
        *d = m;
        *e = m;
    }
}

static int brent_iterate(void *vstate, gsl_function *f, double *root, double *x_lower,
                         double *x_upper)
{
    brent_state *st = vstate;
    int ac_equal = 0;
    double a = st->a, b = st->b, c = st->c, fa = st->fa, fb = st->fb, fc = st->fc;
    double d = st->d, e = st->e;
    if (same_sign(fb, fc)) {
        ac_equal = 1;
        c = a;
        fc = fa;
        d = b - a;
        e = b - a;
    }
    if (fabs(fc) < fabs(fb)) {
        ac_equal = 1;
        a = b;
        b = c;
        c = a;
        fa = fb;
        fb = fc;
        fc = fa;
    }
    double tol = 0.5 * DBL_EPSILON * fabs(b), m = 0.5 * (c - b);
    if (fb == 0) {
        *root = *x_lower = *x_upper = b;
        return GSL_SUCCESS;
    }
    if (fabs(m) <= tol) {
        *root = b;
        *x_lower = b < c ? b : c;
        *x_upper = b < c ? c : b;
        return GSL_SUCCESS;
    }
    next_step(a, b, fa, fb, fc, ac_equal, m, tol, &d, &e);
    a = b;
    fa = fb;
    b += fabs(d) > tol ? d : (m > 0 ? +tol : -tol);
    if (call(f, b, &fb))
        return GSL_EBADFUNC;
    *st = (brent_state){ a, b, c, d, e, fa, fb, fc };
    *root = b;
    if (same_sign(fb, fc))
        c = a;
    *x_lower = b < c ? b : c;
    *x_upper = b < c ? c : b;
    return GSL_SUCCESS;
}

static const gsl_root_fsolver_type brent_type = {
    "brent", sizeof(brent_state), brent_set, brent_iterate
};

gsl_root_fsolver *hs_int_brent_new(void)
{
    gsl_root_fsolver *s = malloc(sizeof *s);
    void *state = malloc(sizeof(brent_state));
    if (!s || !state) {
        free(s);
        free(state);
        return NULL;
    }
    *s = (gsl_root_fsolver){ &brent_type, NULL, 0, 0, 0, state };
    return s;
}
