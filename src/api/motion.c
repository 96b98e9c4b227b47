/* The public library's analyses of a motion (include/holosim.h): Floquet
 * multipliers, Lyapunov exponents and the linear model, each the numbers
 * of the command of the same name (src/cli/flow.c, src/cli/linearize.c)
 * from the same layers, loaded the same way; nothing printed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/analysis.h"
#include "../flow/flow.h"
#include "internal.h"

/* ---------- Floquet ---------- */

/* The model with its dense kernels and the variational system. */
/* sparse: nothing of size n + k formed dense (the largest Lyapunov
 * exponent), the larger limit (flow.h) */
static int open_flow(const holosim_model *h, int sparse, hs_model **m, hs_fl **f, hs_error *e)
{
    *f = NULL;
    if (!(*m = hs_api_load(h, HS_API_DENSE, e)))
        return e->code;
    if (!(*f = (sparse ? hs_fl_new_sparse : hs_fl_new)(*m, e)))
        return e->code;
    return 0;
}

static int bad_number(hs_error *e, const char *what, double x)
{
    return hs_error_set(e, HS_EXIT_MODEL, "%s must be positive and finite (it is %g)", what,
                        x);
}

int holosim_floquet_find(const holosim_model *h, double period, holosim_floquet *out,
                         holosim_error *err)
{
    hs_error e;
    hs_error_init(&e);
    hs_api_clear_error(err);
    memset(out, 0, sizeof *out);
    if (!(period > 0) || !isfinite(period))
        return hs_api_export_error(err, (bad_number(&e, "the period", period), &e));
    hs_model *m = NULL;
    hs_fl *f = NULL;
    hs_floquet fl;
    memset(&fl, 0, sizeof fl);
    int rc = open_flow(h, 0, &m, &f, &e);
    if (!rc)
        rc = hs_fl_floquet(f, period, &fl, &e);
    if (!rc) {
        size_t d = fl.dim;
        char what[256];
        out->dim = d;
        out->period = fl.T;
        out->re = hs_api_dup_doubles(fl.re, d);
        out->im = hs_api_dup_doubles(fl.im, d);
        out->monodromy = hs_api_dup_doubles(fl.mono, d * d);
        out->mu_max = fl.mu_max;
        out->gap = fl.gap;
        out->periodic_model = hs_fl_periodic_model(f, m->t0, fl.T, fl.x0, fl.x0 + m->n, what,
                                                   sizeof what);
        out->tolerance = fl.tol;
        out->verdict = hs_fl_verdict_names[fl.verdict];
        if (!out->re || !out->im || !out->monodromy)
            rc = hs_error_nomem(&e);
    }
    hs_fl_floquet_free(&fl);
    hs_fl_free(f);
    hs_model_free(m);
    return rc ? hs_api_export_error(err, &e) : 0;
}

void holosim_floquet_free(holosim_floquet *fl)
{
    if (!fl)
        return;
    free(fl->re);
    free(fl->im);
    free(fl->monodromy);
    fl->re = fl->im = fl->monodromy = NULL;
}

/* ---------- Lyapunov ---------- */

typedef struct history {
    holosim_lyapunov *ly;
    size_t cap;
} history;

/* One renormalization: t and the running estimates appended. */
static int keep_row(double t, const double *lambda, size_t count, void *ctx)
{
    history *hy = ctx;
    holosim_lyapunov *ly = hy->ly;
    size_t w = 1 + count;
    if (ly->nrows == hy->cap) {
        size_t cap = hy->cap ? 2 * hy->cap : 128;
        double *p = realloc(ly->history, cap * w * sizeof *p);
        if (!p)
            return HS_EXIT_NOMEM;
        ly->history = p;
        hy->cap = cap;
    }
    double *row = ly->history + ly->nrows++ * w;
    row[0] = t;
    memcpy(row + 1, lambda, count * sizeof *lambda);
    ly->count = count;
    return 0;
}

int holosim_lyapunov_find(const holosim_model *h, double t_end, double every, int spectrum,
                          holosim_lyapunov *out, holosim_error *err)
{
    hs_error e;
    hs_error_init(&e);
    hs_api_clear_error(err);
    memset(out, 0, sizeof *out);
    hs_model *m = NULL;
    hs_fl *f = NULL;
    int rc = open_flow(h, !spectrum, &m, &f, &e);
    double T = NAN, dt = NAN;
    if (!rc) {
        T = (isnan(t_end) ? m->set.t_end : t_end) - m->t0;
        dt = isnan(every) ? T / 100 : every;
        if (!(T > 0) || !isfinite(T))
            rc = hs_error_set(&e, HS_EXIT_MODEL, "t_end (%g) must be finite and after the "
                              "initial time (%g)", T + m->t0, m->t0);
        else if (!(dt > 0) || !isfinite(dt))
            rc = bad_number(&e, "every", dt);
    }
    if (!rc) {
        history hy = { out, 0 };
        size_t count = 0;
        rc = hs_fl_lyapunov(f, T, dt, spectrum, keep_row, &hy, &count, &e);
        if (rc == HS_EXIT_NOMEM && !e.code)
            hs_error_nomem(&e);
        if (!rc && !(out->lambda = malloc((count ? count : 1) * sizeof *out->lambda)))
            rc = hs_error_nomem(&e);
        if (!rc && out->nrows)
            memcpy(out->lambda, out->history + (out->nrows - 1) * (1 + count) + 1,
                   count * sizeof *out->lambda);
        out->count = count;
    }
    hs_fl_free(f);
    hs_model_free(m);
    return rc ? hs_api_export_error(err, &e) : 0;
}

void holosim_lyapunov_free(holosim_lyapunov *ly)
{
    if (!ly)
        return;
    free(ly->lambda);
    free(ly->history);
    ly->lambda = ly->history = NULL;
}

/* ---------- the linear model ---------- */

/* The names a NULL list stands for: every input, or the coordinates. */
static const char **default_names(const hs_model *m, int inputs, size_t *count)
{
    size_t n = inputs ? m->ninput : m->n;
    const char **v = calloc(n + 1, sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = inputs ? m->pname[m->input0 + i] : m->qname[i];
    *count = n;
    return v;
}

static int linearize(hs_model *m, const char *const *u, size_t nu, const char *const *y,
                     size_t ny, int at_initial, hs_statespace *ss, hs_error *e)
{
    hs_an *a = hs_an_new(m, e);
    if (!a)
        return e->code;
    hs_equil eq;
    memset(&eq, 0, sizeof eq);
    const char **du = NULL, **dy = NULL;
    int rc = at_initial ? hs_an_point(a, m->q0, &eq, e) : hs_an_equilibrium(a, m->q0, &eq, e);
    if (!rc && !u && !(u = du = default_names(m, 1, &nu)))
        rc = hs_error_nomem(e);
    if (!rc && !y && !(y = dy = default_names(m, 0, &ny)))
        rc = hs_error_nomem(e);
    if (!rc)
        rc = hs_an_statespace(a, &eq, u, nu, y, ny, ss, e);
    free(du);
    free(dy);
    hs_an_equil_free(&eq);
    hs_an_free(a);
    return rc;
}

int holosim_linearize(const holosim_model *h, const char *const *inputs, size_t ninputs,
                      const char *const *outputs, size_t noutputs, int at_initial,
                      holosim_statespace *out, holosim_error *err)
{
    hs_error e;
    hs_error_init(&e);
    hs_api_clear_error(err);
    memset(out, 0, sizeof *out);
    hs_statespace ss;
    memset(&ss, 0, sizeof ss);
    hs_model *m = hs_api_load(h, HS_API_STATICS | HS_API_OUTPUTS | HS_API_INPUTS, &e);
    int rc = m ? linearize(m, inputs, ninputs, outputs, noutputs, at_initial, &ss, &e)
               : e.code;
    if (!rc) {   /* the arrays change hands: holosim_statespace_free frees them */
        out->nx = ss.nx;
        out->nu = ss.nu;
        out->ny = ss.ny;
        out->A = ss.A;
        out->B = ss.B;
        out->C = ss.C;
        out->D = ss.D;
        out->xname = ss.xname;
        out->uname = ss.uname;
        out->yname = ss.yname;
    } else {
        hs_statespace_free(&ss);
    }
    hs_model_free(m);
    return rc ? hs_api_export_error(err, &e) : 0;
}

void holosim_statespace_free(holosim_statespace *ss)
{
    if (!ss)
        return;
    hs_statespace s = { ss->nx, ss->nu, ss->ny, ss->xname, ss->uname, ss->yname,
                        ss->A, ss->B, ss->C, ss->D };
    hs_statespace_free(&s);
    memset(ss, 0, sizeof *ss);
}
