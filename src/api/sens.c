/* The public library's run with sensitivities (include/holosim.h,
 * holosim_sensitivity): the numbers of `holosim run --sensitivity`
 * (src/cli/sens.c), from the same flow layer, loaded the same way (the
 * dense kernels), in the same columns; nothing printed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../flow/flow.h"
#include "../integrate/integrate.h"
#include "internal.h"

typedef struct sens_ctx {
    const hs_model *m;
    size_t np, ncols;
    holosim_result *r;
    holosim_row_fn fn;
    void *ctx;
    double *row;               /* [ncols] */
    int stopped, nomem;
} sens_ctx;

static int sens_row(double t, const double *x, const double *lam, const double *S,
                    const double *dlam, void *ctx)
{
    sens_ctx *c = ctx;
    hs_fl_sens_pack(c->m, c->np, t, x, lam, S, dlam, c->row);
    int st = hs_api_result_push(c->r, c->fn, c->ctx, c->row, c->ncols);
    c->stopped = st > 0;
    c->nomem = st < 0;
    return st ? HS_EXIT_INTERRUPT : 0;
}

/* The result's column names: 0, or an exit code with e set. */
static int name_columns(holosim_result *r, const hs_model *m, const char *const *params,
                        size_t np, hs_error *e)
{
    size_t nc = hs_fl_sens_ncols(m, np);
    if (!(r->names = calloc(nc, sizeof *r->names)))
        return hs_error_nomem(e);
    r->ncols = nc;
    char buf[600];
    for (size_t j = 0; j < nc; j++)
        if (!(r->names[j] = strdup(hs_fl_sens_column(m, params, np, j, buf, sizeof buf))))
            return hs_error_nomem(e);
    return 0;
}

/* What a run with sensitivities does not take among the run options. */
static int refuse_options(const holosim_run_options *o, hs_error *e)
{
    const char *what = !o ? NULL
                     : o->columns ? "columns (the columns are fixed: the motion, the "
                                    "multipliers, then the derivatives)"
                     : !isnan(o->step) ? "step (the motion is integrated by an explicit "
                                         "gsl_odeiv2 method)"
                     : o->output_mode != -1 ? "output_mode" : NULL;
    if (what)
        return hs_error_set(e, HS_EXIT_USAGE, "a run with sensitivities does not take %s",
                            what);
    return 0;
}

static int integrate(const hs_model *m, hs_fl_sens *s, const char *const *params, size_t np,
                     holosim_result *r, holosim_row_fn fn, void *ctx, hs_error *e)
{
    sens_ctx c = { m, np, hs_fl_sens_ncols(m, np), r, fn, ctx, NULL, 0, 0 };
    int rc = name_columns(r, m, params, np, e);
    if (!rc && !(c.row = malloc(c.ncols * sizeof *c.row)))
        rc = hs_error_nomem(e);
    double off = 0;
    if (!rc)
        rc = hs_fl_sens_run(s, m->set.t_end, m->set.dt, sens_row, &c, &off, e);
    free(c.row);
    if (c.nomem) {
        hs_error_init(e);
        rc = hs_error_nomem(e);
    } else if (c.stopped) {
        hs_error_init(e);
        rc = hs_error_set(e, HOLOSIM_ESTOPPED, "the run was stopped by its row callback at "
                          "row %zu", r->nrows);
    }
    return rc;
}

holosim_result *holosim_sensitivity(const holosim_model *h, const char *const *params,
                                    size_t np, const holosim_run_options *o,
                                    holosim_row_fn fn, void *ctx, holosim_error *err)
{
    hs_error e;
    hs_error_init(&e);
    hs_api_clear_error(err);
    holosim_result *r = calloc(1, sizeof *r);
    hs_model *m = NULL;
    hs_fl *f = NULL;
    hs_fl_sens *s = NULL;
    int rc = !r ? hs_error_nomem(&e)
           : !np || !params ? hs_error_set(&e, HS_EXIT_USAGE, "a run with sensitivities "
                                           "needs at least one parameter")
           : refuse_options(o, &e);
    if (!rc && !(m = hs_api_load(h, HS_API_DENSE, &e)))
        rc = e.code;
    if (!rc && o)
        rc = hs_api_apply_options(&m->set, o, &e);
    if (!rc)
        rc = hs_fl_sens_refuse(m, &e);
    if (!rc && !(f = hs_fl_new(m, &e)))
        rc = e.code;
    if (!rc && !(s = hs_fl_sens_new(f, params, np, &e)))
        rc = e.code;
    if (!rc && o && o->method && strcmp(o->method, hs_fl_method(f)) != 0)
        rc = hs_error_set(&e, HS_EXIT_USAGE, "a run with sensitivities integrates with an "
                          "explicit gsl_odeiv2 method: '%s' is not one (%s, rkf45, rkck, "
                          "rk4, msadams ...)", o->method, hs_stepper_default->name);
    if (!rc)
        rc = integrate(m, s, params, np, r, fn, ctx, &e);
    hs_fl_sens_free(s);
    hs_fl_free(f);
    hs_model_free(m);
    if (rc) {
        hs_api_export_error(err, &e);
        holosim_result_free(r);
        return NULL;
    }
    return r;
}
