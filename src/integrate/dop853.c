/* DOP853 as a gsl_odeiv2 step type (internal.h): Dormand and Prince's
 * explicit Runge-Kutta method of order 8 with error estimators of orders
 * 5 and 3 and a continuous extension of order 7, in the form of
 * E. Hairer, S. P. Norsett, G. Wanner, "Solving Ordinary Differential
 * Equations I", 2nd ed., Springer 1993, section II.10 (the method's
 * coefficients are those published with the authors' code dop853.f).
 *
 * Why holosim carries its own stepper: rows between steps (output mode
 * interpolate) need a continuous extension, and GSL's steppers have none;
 * holosim builds one from an extra step to each step's midpoint (rows.c),
 * about 15 right-hand sides per step.  DOP853's costs 3, and it covers
 * every component of the state, the work integrals included, to order 7.
 *
 * One step costs 12 evaluations: the first stage is the last step's
 * final rate (GSL's dydt_in), and the rate at the step's end (dydt_out)
 * is computed only when the step will be accepted.  The error estimate is
 * Hairer's: with e5, e3 the two embedded differences scaled by
 * atol + rtol max(|y0|, |y1|) over the steering components (q, v; the work
 * integrals ride along),
 *
 *     err = |h| |e5|^2 / sqrt(N (|e5|^2 + 0.01 |e3|^2))
 *
 * a norm, not one value per component.  GSL's control takes per-component
 * errors: each steering component gets err times its own scale, so the
 * control's largest ratio is err itself (holosim's control, stepper.c,
 * rejects above 1.1; a step that will be rejected skips dydt_out); the
 * other components (the work integrals) get h e5_i |e5| / sqrt(|e5|^2 +
 * 0.01 |e3|^2), the same estimate per component and unscaled, which
 * hs_int_dop853_error gives for every component (the energy balance's
 * control reads it). */
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

enum { NS = 12,             /* stages of a step */
       NX = 16 };           /* with the step's end rate and three more */

/* the nodes c_i (stage i at t + c_i h); 12: the step's end */
static const double C[NX] = {
    0.0,
    0.526001519587677318785587544488e-01,
    0.789002279381515978178381316732e-01,
    0.118350341907227396726757197510,
    0.281649658092772603273242802490,
    0.333333333333333333333333333333,
    0.25,
    0.307692307692307692307692307692,
    0.651282051282051282051282051282,
    0.6,
    0.857142857142857142857142857142,
    1.0,
    1.0,
    0.1,
    0.2,
    0.777777777777777777777777777778,
};

/* The non-zero coefficients a_ij of stage i (rows 1..11: the step; row
 * 12: the weights b_j of the solution; rows 13..15: the stages of the
 * continuous extension), as (j, a_ij) pairs. */
typedef struct coef {
    int j;
    double a;
} coef;

static const coef A1[] = { { 0, 5.26001519587677318785587544488e-2 } };
static const coef A2[] = { { 0, 1.97250569845378994544595329183e-2 },
                           { 1, 5.91751709536136983633785987549e-2 } };
static const coef A3[] = { { 0, 2.95875854768068491816892993775e-2 },
                           { 2, 8.87627564304205475450678981324e-2 } };
static const coef A4[] = { { 0, 2.41365134159266685502369798665e-1 },
                           { 2, -8.84549479328286085344864962717e-1 },
                           { 3, 9.24834003261792003115737966543e-1 } };
static const coef A5[] = { { 0, 3.7037037037037037037037037037e-2 },
                           { 3, 1.70828608729473871279604482173e-1 },
                           { 4, 1.25467687566822425016691814123e-1 } };
static const coef A6[] = { { 0, 3.7109375e-2 },
                           { 3, 1.70252211019544039314978060272e-1 },
                           { 4, 6.02165389804559606850219397283e-2 },
                           { 5, -1.7578125e-2 } };
static const coef A7[] = { { 0, 3.70920001185047927108779319836e-2 },
                           { 3, 1.70383925712239993810214054705e-1 },
                           { 4, 1.07262030446373284651809199168e-1 },
                           { 5, -1.53194377486244017527936158236e-2 },
                           { 6, 8.27378916381402288758473766002e-3 } };
static const coef A8[] = { { 0, 6.24110958716075717114429577812e-1 },
                           { 3, -3.36089262944694129406857109825 },
                           { 4, -8.68219346841726006818189891453e-1 },
                           { 5, 2.75920996994467083049415600797e1 },
                           { 6, 2.01540675504778934086186788979e1 },
                           { 7, -4.34898841810699588477366255144e1 } };
static const coef A9[] = { { 0, 4.77662536438264365890433908527e-1 },
                           { 3, -2.48811461997166764192642586468 },
                           { 4, -5.90290826836842996371446475743e-1 },
                           { 5, 2.12300514481811942347288949897e1 },
                           { 6, 1.52792336328824235832596922938e1 },
                           { 7, -3.32882109689848629194453265587e1 },
                           { 8, -2.03312017085086261358222928593e-2 } };
static const coef A10[] = { { 0, -9.3714243008598732571704021658e-1 },
                            { 3, 5.18637242884406370830023853209 },
                            { 4, 1.09143734899672957818500254654 },
                            { 5, -8.14978701074692612513997267357 },
                            { 6, -1.85200656599969598641566180701e1 },
                            { 7, 2.27394870993505042818970056734e1 },
                            { 8, 2.49360555267965238987089396762 },
                            { 9, -3.0467644718982195003823669022 } };
static const coef A11[] = { { 0, 2.27331014751653820792359768449 },
                            { 3, -1.05344954667372501984066689879e1 },
                            { 4, -2.00087205822486249909675718444 },
                            { 5, -1.79589318631187989172765950534e1 },
                            { 6, 2.79488845294199600508499808837e1 },
                            { 7, -2.85899827713502369474065508674 },
                            { 8, -8.87285693353062954433549289258 },
                            { 9, 1.23605671757943030647266201528e1 },
                            { 10, 6.43392746015763530355970484046e-1 } };
static const coef B[] = { { 0, 5.42937341165687622380535766363e-2 },
                          { 5, 4.45031289275240888144113950566 },
                          { 6, 1.89151789931450038304281599044 },
                          { 7, -5.8012039600105847814672114227 },
                          { 8, 3.1116436695781989440891606237e-1 },
                          { 9, -1.52160949662516078556178806805e-1 },
                          { 10, 2.01365400804030348374776537501e-1 },
                          { 11, 4.47106157277725905176885569043e-2 } };
static const coef A13[] = { { 0, 5.61675022830479523392909219681e-2 },
                            { 6, 2.53500210216624811088794765333e-1 },
                            { 7, -2.46239037470802489917441475441e-1 },
                            { 8, -1.24191423263816360469010140626e-1 },
                            { 9, 1.5329179827876569731206322685e-1 },
                            { 10, 8.20105229563468988491666602057e-3 },
                            { 11, 7.56789766054569976138603589584e-3 },
                            { 12, -8.298e-3 } };
static const coef A14[] = { { 0, 3.18346481635021405060768473261e-2 },
                            { 5, 2.83009096723667755288322961402e-2 },
                            { 6, 5.35419883074385676223797384372e-2 },
                            { 7, -5.49237485713909884646569340306e-2 },
                            { 10, -1.08347328697249322858509316994e-4 },
                            { 11, 3.82571090835658412954920192323e-4 },
                            { 12, -3.40465008687404560802977114492e-4 },
                            { 13, 1.41312443674632500278074618366e-1 } };
static const coef A15[] = { { 0, -4.28896301583791923408573538692e-1 },
                            { 5, -4.69762141536116384314449447206 },
                            { 6, 7.68342119606259904184240953878 },
                            { 7, 4.06898981839711007970213554331 },
                            { 8, 3.56727187455281109270669543021e-1 },
                            { 12, -1.39902416515901462129418009734e-3 },
                            { 13, 2.9475147891527723389556272149 },
                            { 14, -9.15095847217987001081870187138 } };

#define ROW(r) { r, sizeof r / sizeof *r }
static const struct {
    const coef *c;
    size_t n;
} ROWS[NX] = {
    { NULL, 0 }, ROW(A1), ROW(A2), ROW(A3), ROW(A4), ROW(A5), ROW(A6), ROW(A7), ROW(A8),
    ROW(A9), ROW(A10), ROW(A11), ROW(B), ROW(A13), ROW(A14), ROW(A15),
};

/* the error estimators: e5 (order 5) and e3 (order 3, b minus the
 * third-order weights) on the stages 0..11 */
static const double E5[NS] = {
    0.1312004499419488073250102996e-1, 0, 0, 0, 0,
    -0.1225156446376204440720569753e1, -0.4957589496572501915214079952,
    0.1664377182454986536961530415e1, -0.3503288487499736816886487290,
    0.3341791187130174790297318841, 0.8192320648511571246570742613e-1,
    -0.2235530786388629525884427845e-1,
};
static const double E3[NS] = {
    5.42937341165687622380535766363e-2 - 0.244094488188976377952755905512, 0, 0, 0, 0,
    4.45031289275240888144113950566, 1.89151789931450038304281599044,
    -5.8012039600105847814672114227,
    3.1116436695781989440891606237e-1 - 0.733846688281611857341361741547,
    -1.52160949662516078556178806805e-1, 2.01365400804030348374776537501e-1,
    4.47106157277725905176885569043e-2 - 0.220588235294117647058823529412e-1,
};

/* the continuous extension: coefficients d of its last four terms over
 * the sixteen stages (zero at 1..4) */
static const double D[4][NX] = {
    { -0.84289382761090128651353491142e1, 0, 0, 0, 0, 0.56671495351937776962531783590,
      -0.30689499459498916912797304727e1, 0.23846676565120698287728149680e1,
      0.21170345824450282767155149946e1, -0.87139158377797299206789907490,
      0.22404374302607882758541771650e1, 0.63157877876946881815570249290,
      -0.88990336451333310820698117400e-1, 0.18148505520854727256656404962e2,
      -0.91946323924783554000451984436e1, -0.44360363875948939664310572000e1 },
    { 0.10427508642579134603413151009e2, 0, 0, 0, 0, 0.24228349177525818288430175319e3,
      0.16520045171727028198505394887e3, -0.37454675472269020279518312152e3,
      -0.22113666853125306036270938578e2, 0.77334326684722638389603898808e1,
      -0.30674084731089398182061213626e2, -0.93321305264302278729567221706e1,
      0.15697238121770843886131091075e2, -0.31139403219565177677282850411e2,
      -0.93529243588444783865713862664e1, 0.35816841486394083752465898540e2 },
    { 0.19985053242002433820987653617e2, 0, 0, 0, 0, -0.38703730874935176555105901742e3,
      -0.18917813819516756882830838328e3, 0.52780815920542364900561016686e3,
      -0.11573902539959630126141871134e2, 0.68812326946963000169666922661e1,
      -0.10006050966910838403183860980e1, 0.77771377980534432092869265740,
      -0.27782057523535084065932004339e1, -0.60196695231264120758267380846e2,
      0.84320405506677161018159903784e2, 0.11992291136182789328035130030e2 },
    { -0.25693933462703749003312586129e2, 0, 0, 0, 0, -0.15418974869023643374053993627e3,
      -0.23152937917604549567536039109e3, 0.35763911791061412378285349910e3,
      0.93405324183624310003907691704e2, -0.37458323136451633156875139351e2,
      0.10409964950896230045147246184e3, 0.29840293426660503123344363579e2,
      -0.43533456590011143754432175058e2, 0.96324553959188282948394950600e2,
      -0.39177261675615439165231486172e2, -0.14972683625798562581422125276e3 },
};

typedef struct dp_state {
    size_t dim;
    double *k[NX];              /* [dim] the stages' rates; k[12] at the step's end */
    double *y0, *y1, *ys;       /* [dim] the step's start, end, a stage's state */
    double *ev;                 /* [dim] the error estimate, per component */
    double *rc;                 /* [8 dim] the continuous extension's coefficients */
    double t, h;                /* the last step taken */
    const gsl_odeiv2_system *sys;
    double atol, rtol;          /* the error norm's scales */
    size_t nctl;                /* the components that steer the step */
    int stepped, dense;         /* the last step's end rate is known; rc too */
} dp_state;

static void dp_free(void *vs)
{
    dp_state *s = vs;
    if (!s)
        return;
    for (int i = 0; i < NX; i++)
        free(s->k[i]);
    free(s->y0);
    free(s->y1);
    free(s->ys);
    free(s->ev);
    free(s->rc);
    free(s);
}

static void *dp_alloc(size_t dim)
{
    dp_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->dim = dim;
    s->nctl = dim;
    s->atol = s->rtol = 1e-6;
    int ok = 1;
    for (int i = 0; i < NX; i++)
        ok &= (s->k[i] = malloc(dim * sizeof(double))) != NULL;
    ok &= (s->y0 = malloc(dim * sizeof(double))) && (s->y1 = malloc(dim * sizeof(double))) &&
          (s->ys = malloc(dim * sizeof(double))) && (s->ev = malloc(dim * sizeof(double))) &&
          (s->rc = malloc(8 * dim * sizeof(double)));
    if (!ok) {
        dp_free(s);
        return NULL;
    }
    return s;
}

/* out = y + h sum_j a_rj k_j over row r of the tableau, four terms per
 * pass (loops the compiler vectorizes; one pass per term cost 1.7x as
 * much on a 32-link chain, one pass over all terms does not vectorize) */
static void combine(const dp_state *s, int r, const double *y, double h, double *out)
{
    const coef *c = ROWS[r].c;
    size_t nc = ROWS[r].n, n = s->dim;
    for (size_t z = 0; z < nc; z += 4) {
        const double *k[4];
        double a[4];
        for (size_t u = 0; u < 4; u++) {     /* a short group: zero terms */
            int in = z + u < nc;
            k[u] = s->k[in ? c[z + u].j : c[0].j];
            a[u] = in ? c[z + u].a : 0.0;
        }
        const double *restrict k0 = k[0], *restrict k1 = k[1], *restrict k2 = k[2],
                     *restrict k3 = k[3];
        double *restrict o = out;
        if (z == 0)
            for (size_t i = 0; i < n; i++)
                o[i] = a[0] * k0[i] + a[1] * k1[i] + a[2] * k2[i] + a[3] * k3[i];
        else
            for (size_t i = 0; i < n; i++)
                o[i] += a[0] * k0[i] + a[1] * k1[i] + a[2] * k2[i] + a[3] * k3[i];
    }
    for (size_t i = 0; i < n; i++)
        out[i] = y[i] + h * out[i];
}

/* The stage r: its state and rate k_r at t + c_r h. */
static int stage(dp_state *s, int r, double t, double h, const double *y)
{
    combine(s, r, y, h, s->ys);
    return GSL_ODEIV_FN_EVAL(s->sys, t + C[r] * h, s->ys, s->k[r]);
}

/* Hairer's error norm of the step from y to y1 (see the top); s->ev gets
 * the per-component estimate h e5_i |e5| / sqrt(|e5|^2 + 0.01 |e3|^2). */
static double error_norm(dp_state *s, const double *y, double h)
{
    double e5 = 0, e3 = 0;
    size_t nc = s->nctl;
    for (size_t i = 0; i < s->dim; i++) {
        double a5 = 0, a3 = 0;
        for (int j = 0; j < NS; j++)
            a5 += E5[j] * s->k[j][i];
        s->ev[i] = a5;
        if (i >= nc)                        /* the riders: no part in the norm */
            continue;
        for (int j = 0; j < NS; j++)
            a3 += E3[j] * s->k[j][i];
        double sk = s->atol + s->rtol * fmax(fabs(y[i]), fabs(s->y1[i]));
        e5 += (a5 / sk) * (a5 / sk);
        e3 += (a3 / sk) * (a3 / sk);
    }
    double deno = e5 + 0.01 * e3;
    if (!(deno > 0))
        deno = isnan(deno) ? (double)NAN : 1.0;
    double fac = fabs(h) * sqrt(e5 / deno);
    for (size_t i = 0; i < s->dim; i++)
        s->ev[i] *= fac;
    return fabs(h) * e5 * sqrt(1.0 / ((double)nc * deno));
}

static int dp_apply(void *vs, size_t dim, double t, double h, double y[], double yerr[],
                    const double dydt_in[], double dydt_out[], const gsl_odeiv2_system *sys)
{
    dp_state *s = vs;
    int st;
    (void)dim;
    s->sys = sys;
    s->stepped = s->dense = 0;
    if (dydt_in)
        memcpy(s->k[0], dydt_in, s->dim * sizeof(double));
    else if ((st = GSL_ODEIV_FN_EVAL(sys, t, y, s->k[0])) != GSL_SUCCESS)
        return st;
    for (int r = 1; r < NS; r++)
        if ((st = stage(s, r, t, h, y)) != GSL_SUCCESS)
            return st;
    combine(s, 12, y, h, s->y1);
    double err = error_norm(s, y, h);
    for (size_t i = 0; i < s->dim; i++)
        yerr[i] = i < s->nctl ? err * (s->atol + s->rtol * fabs(s->y1[i])) : s->ev[i];
    /* the control accepts a ratio up to 1.1 (stepper.c); the margin covers
     * the rounding of err * scale / scale there */
    if (err <= 1.1 * (1 + 1e-12)) {
        if ((st = GSL_ODEIV_FN_EVAL(sys, t + h, s->y1, s->k[12])) != GSL_SUCCESS)
            return st;
        if (dydt_out)
            memcpy(dydt_out, s->k[12], s->dim * sizeof(double));
        s->stepped = 1;
    }
    memcpy(s->y0, y, s->dim * sizeof(double));
    memcpy(y, s->y1, s->dim * sizeof(double));
    s->t = t;
    s->h = h;
    return GSL_SUCCESS;
}

static int dp_set_driver(void *vs, const gsl_odeiv2_driver *d)
{
    (void)vs;
    (void)d;
    return GSL_SUCCESS;
}

static int dp_reset(void *vs, size_t dim)
{
    dp_state *s = vs;
    (void)dim;
    s->stepped = s->dense = 0;
    return GSL_SUCCESS;
}

static unsigned int dp_order(void *vs)
{
    (void)vs;
    return 8;
}

/* can use dydt_in; gives an exact dydt_out (on the steps it accepts) */
static const gsl_odeiv2_step_type dop853_type = {
    "dop853", 1, 1, dp_alloc, dp_apply, dp_set_driver, dp_reset, dp_order, dp_free,
};
const gsl_odeiv2_step_type *const hs_int_dop853 = &dop853_type;

void hs_int_dop853_scales(gsl_odeiv2_step *step, double atol, double rtol, size_t nctl)
{
    dp_state *s = step->state;
    s->atol = atol;
    s->rtol = rtol;
    s->nctl = nctl < s->dim && nctl > 0 ? nctl : s->dim;
}

int hs_int_dop853_dense(gsl_odeiv2_step *step, double *tau, double *h)
{
    dp_state *s = step->state;
    if (!s->stepped)
        return GSL_EINVAL;
    *tau = s->t;
    *h = s->h;
    if (s->dense)
        return GSL_SUCCESS;
    size_t n = s->dim;
    double hh = s->h;
    for (int r = 13; r < NX; r++) {
        int st = stage(s, r, s->t, hh, s->y0);
        if (st != GSL_SUCCESS)
            return st;
    }
    double *r0 = s->rc, *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
    const double *k0 = s->k[0], *k12 = s->k[12];
    for (size_t i = 0; i < n; i++) {
        double dy = s->y1[i] - s->y0[i], bs = hh * k0[i] - dy;
        r0[i] = s->y0[i];
        r1[i] = dy;
        r2[i] = bs;
        r3[i] = dy - hh * k12[i] - bs;
    }
    for (int d = 0; d < 4; d++) {
        double *rd = s->rc + (size_t)(4 + d) * n;
        for (size_t i = 0; i < n; i++)
            rd[i] = 0;
        for (int j = 0; j < NX; j++) {
            const double *kj = s->k[j];
            double a = hh * D[d][j];
            if (a != 0)
                for (size_t i = 0; i < n; i++)
                    rd[i] += a * kj[i];
        }
    }
    s->dense = 1;
    return GSL_SUCCESS;
}

const double *hs_int_dop853_error(const gsl_odeiv2_step *step)
{
    const dp_state *s = step->state;
    return s->ev;
}

void hs_int_dop853_at(const gsl_odeiv2_step *step, double theta, double *y)
{
    const dp_state *s = step->state;
    size_t n = s->dim;
    const double *r = s->rc;
    double u = theta, u1 = 1 - theta;
    for (size_t i = 0; i < n; i++)
        y[i] = r[i] + u * (r[n + i] + u1 * (r[2 * n + i] + u * (r[3 * n + i] +
               u1 * (r[4 * n + i] + u * (r[5 * n + i] + u1 * (r[6 * n + i] +
               u * r[7 * n + i]))))));
}

/* ---- the method (integrate.h) ---- */

static void dp_tune(gsl_odeiv2_step *step, const hs_settings *set, double atol, double rtol,
                    size_t nctl)
{
    (void)set;
    hs_int_dop853_scales(step, atol, rtol, nctl);
}

static const double *dp_error(const hs_step_ctx *c)
{
    return hs_int_dop853_error(c->gsl_step);
}

static int dp_dense(hs_step_ctx *c, double *tau_start, double *h)
{
    gsl_odeiv2_step *s = c->gsl_step;
    int st = hs_int_dop853_dense(s, tau_start, h);
    if (st == GSL_SUCCESS)
        return 0;
    if (*c->failed)
        return c->fail(c, *c->t, c->y);
    return hs_error_set(c->err, HS_EXIT_NUMERIC, "the stepper %s failed at t=%.17g while "
                        "interpolating rows: %s", s->type->name, *c->t, gsl_strerror(st));
}

static int dp_dense_at(hs_step_ctx *c, double theta, double *y)
{
    hs_int_dop853_at(c->gsl_step, theta, y);
    return 0;
}

const hs_stepper hs_int_step_dop853 = {
    .name = "dop853", .order = 8, .flags = HS_STEP_DENSE, .tol_factor = 1,
    .about = "Dormand-Prince Runge-Kutta (8, 5, 3), continuous extension",
    .gsl = &hs_int_dop853, .tune = dp_tune, .error = dp_error, .dense = dp_dense,
    .dense_at = dp_dense_at,
};
