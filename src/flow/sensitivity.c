/* Forward sensitivities of a motion to parameters (flow.h,
 * hs_fl_sens_new): S = d(q, v)/dp carried with the motion by
 *     dq'/dp = dv/dp,   dv'/dp = da/dq dq/dp + da/dv dv/dp + da/dp,
 * where da/dp and dLambda/dp at fixed (q, v) solve the saddle-point system
 *     [M -G_q^T; G_q 0] [da/dp; dLambda/dp] = -[dr/dp; ds/dp]
 * with the exact symbolic derivatives of the residuals r, s (internal.h)
 * in p.  A parameter other parameters are computed from is followed
 * through them (their expressions substituted before differentiating),
 * and so are the initial data written with it: S(t0) = d(q0, v0)/dp. */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_linalg.h>

#include "../dynamics/dynamics.h"
#include "../integrate/integrate.h"
#include "../linalg/linalg.h"
#include "../native/native.h"
#include "../util/suggest.h"

struct hs_fl_sens {
    hs_fl *f;
    size_t np;
    size_t *par;               /* [np] parameter indices */
    hs_prog *prog;             /* per p: dr/dp (n) | ds/dp (k) | dG/dp (k) | dGdot/dp (k) */
    hs_kernel_fn kprog;        /* its native kernel (NULL: the VM) */
    size_t nout;
    double *out, *regs;
    double *S0;                /* [2n x np] d(q0, v0)/dp */
    double *ap, *lp;           /* [n x np] da/dp, [k x np] dLambda/dp at fixed (q, v) */
    double *t0p;               /* [np] dt0/dp (must be 0) */
    /* stop events (the model's, --stop-when): watched on the dynamics'
     * work; record-only events change nothing and are not watched */
    hs_work *w;                /* NULL: no stop event */
    signed char *sign;         /* [nev] the last non-zero sign of each g */
    const hs_event *stopped;   /* the event that ended the run, or NULL */
    double t_stop;
    /* a dip (a crossing and back inside one step): g at the last accepted
     * step's end, a state on the step's interpolant [2n], the trial state
     * [2n (1 + np)] (xt, in xi's block), the watch under way, the suspected
     * time (NAN: none) */
    double *gs, *xi, *xt;      /* gs: [nev] | g at the step's end [nev] | at its
                                * quarter points [3 nev] */
    /* the stop time's derivatives: per stop event, dg/dt, dg/dq [n], dg/dv
     * [n], dg/dp [np] (NULL: not given, the event reads accelerations or
     * multipliers); the state and S at the stop [2n (1 + np)] */
    const hs_node **gd;
    double *xstop;
    const hs_fl_watch *wt;
    double t_dip;
};

static int lookup(const hs_model *m, const char *name, size_t *out, hs_error *err)
{
    for (size_t j = 0; j < m->npar; j++)
        if (strcmp(m->pname[j], name) == 0) {
            if (m->ninput && j >= m->input0) {
                hs_error_set(err, HS_EXIT_MODEL, "%s: %s %s: '%s' is an input "
                             "(a function of t given by %s), not a parameter", m->file,
                             hs_optname(m->names, HS_OPT_SENSITIVITY), name, name,
                             hs_optname(m->names, HS_OPT_INPUT));
                return HS_EXIT_MODEL;
            }
            *out = j;
            return 0;
        }
    size_t np = m->ninput ? m->input0 : m->npar;
    const char *near = hs_nearest(name, (const char *const *)m->pname, np);
    char list[400] = "";
    for (size_t j = 0, len = 0; j < np && len + 40 < sizeof list; j++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", j ? ", " : "",
                                m->pname[j]);
    hs_error_set(err, HS_EXIT_MODEL, "%s: %s: unknown parameter '%s'%s%s%s "
                 "(parameters: %s)", m->file, hs_optname(m->names, HS_OPT_SENSITIVITY), name, near ? " (did you mean '" : "",
                 near ? near : "", near ? "'?)" : "", np ? list : "none");
    return HS_EXIT_MODEL;
}

/* map[sym_p[j]]: the chosen parameters stay symbols, every other parameter
 * is its expression when that reads a chosen one, else its value. */
static const hs_node **param_map(hs_fl_sens *s, size_t nsym)
{
    hs_model *m = s->f->m;
    hs_dag *d = m->dag;
    const hs_node **map = calloc(nsym + 1, sizeof *map);
    if (!map)
        return NULL;
    for (size_t o = 0; o < m->npar; o++) {
        size_t j = m->npar_done == m->npar ? m->par_order[o] : o;
        int chosen = 0;
        for (size_t i = 0; i < s->np; i++)
            chosen |= s->par[i] == j;
        if (chosen)
            continue;
        const hs_node *e = m->par_expr[j] ? hs_subst(d, m->par_expr[j], map, nsym) : NULL;
        int reads = 0;
        for (size_t i = 0; e && i < s->np; i++)
            reads |= hs_depends_on(e, m->sym_p[s->par[i]]);
        map[m->sym_p[j]] = reads ? e : hs_num(d, m->pval[j]);
    }
    return map;
}

/* s->gd: each stop event's function differentiated in t, q, v and the
 * chosen parameters (through map: what they are written with followed),
 * for the stop time's derivatives (hs_fl_sens_stop_text). */
static void stop_derivatives(hs_fl_sens *s, const hs_node *const *map, size_t nsym)
{
    hs_model *m = s->f->m;
    hs_dag *d = m->dag;
    size_t n = m->n, per = 1 + 2 * n + s->np, nstop = 0;
    for (size_t e = 0; e < m->nev; e++)
        nstop += m->ev[e].action == HS_EV_STOP;
    if (!nstop || !(s->gd = calloc(m->nev * per + 1, sizeof *s->gd)) ||
        !(s->xstop = calloc(2 * n * (1 + s->np) + 1, sizeof *s->xstop)))
        return;                /* out of memory: not given, said so */
    for (size_t e = 0; e < m->nev; e++) {
        const hs_node *g = m->evf[e];
        int dyn = 0;
        for (size_t i = 0; i < n && m->sym_a; i++)
            dyn |= m->sym_a[i] >= 0 && hs_depends_on(g, m->sym_a[i]);
        for (size_t j = 0; j < m->k && m->sym_lam; j++)
            dyn |= m->sym_lam[j] >= 0 && hs_depends_on(g, m->sym_lam[j]);
        if (m->ev[e].action != HS_EV_STOP || dyn)
            continue;
        const hs_node **o = s->gd + e * per;
        g = hs_subst(d, g, map, nsym);
        o[0] = hs_diff(d, g, m->sym_t);
        for (size_t r = 0; r < n; r++) {
            o[1 + r] = hs_diff(d, g, m->sym_q[r]);
            o[1 + n + r] = hs_diff(d, g, m->sym_v[r]);
        }
        for (size_t i = 0; i < s->np; i++)
            o[1 + 2 * n + i] = hs_diff(d, g, m->sym_p[s->par[i]]);
    }
}

/* The roots of the program and the initial derivatives. */
static int build(hs_fl_sens *s, const hs_node **map, size_t nsym, hs_error *err)
{
    hs_fl *f = s->f;
    hs_model *m = f->m;
    hs_dag *d = m->dag;
    size_t n = f->n, k = f->k, per = n + 3 * k;
    const hs_node **fold = calloc(nsym + 1, sizeof *fold);
    const hs_node **r = calloc(n + k + 1, sizeof *r);
    const hs_node **roots = calloc(per * s->np + 1, sizeof *roots);
    int rc = 0;
    if (!fold || !r || !roots || hs_fl_residuals(f, map, nsym, r))
        rc = hs_error_nomem(err);
    for (size_t j = 0; !rc && j < m->npar; j++)
        fold[m->sym_p[j]] = hs_num(d, m->pval[j]);
    for (size_t i = 0; !rc && i < s->np; i++) {
        int p = m->sym_p[s->par[i]];
        const hs_node **ro = roots + i * per;
#define DP(e) hs_subst(d, hs_diff(d, hs_subst(d, (e), map, nsym), p), fold, nsym)
        for (size_t j = 0; j < n + k; j++)
            ro[j] = hs_subst(d, hs_diff(d, r[j], p), fold, nsym);
        for (size_t j = 0; j < k; j++) {
            ro[n + k + j] = DP(m->G[j]);
            ro[n + 2 * k + j] = DP(m->Gdot[j]);
        }
        for (size_t j = 0; j <= 2 * n; j++) {
            const hs_node *e = m->init_expr[j] ? DP(m->init_expr[j]) : hs_num(d, 0);
            double x = hs_dag_failed(d) ? 0 : hs_eval_tree(e, f->in);
            if (j < 2 * n)
                s->S0[j * s->np + i] = x;
            else
                s->t0p[i] = x;
        }
#undef DP
    }
    if (!rc)
        stop_derivatives(s, map, nsym);
    if (!rc && hs_dag_failed(d)) {
        const hs_error *de = hs_dag_error(d);
        if (de->code == HS_EXIT_NOMEM) {
            rc = hs_error_nomem(err);
        } else {
            hs_error_set(err, HS_EXIT_MODEL, "%s (while deriving the sensitivities)", de->msg);
            hs_srcpos pos = hs_dag_error_pos(d);
            if (pos.src >= 0)
                hs_model_place(m, pos, err);
            rc = HS_EXIT_MODEL;
        }
    }
    s->nout = per * s->np;
    if (!rc && !(s->prog = hs_prog_compile(d, roots, s->nout, err)))
        rc = err->code ? err->code : hs_error_nomem(err);
    free(fold);
    free(r);
    free(roots);
    return rc;
}

static int sens_alloc(hs_fl_sens *s, hs_error *err)
{
    size_t n = s->f->n, k = s->f->k, np = s->np;
    s->par = calloc(np + 1, sizeof *s->par);
    s->S0 = calloc(2 * n * np + 1, sizeof *s->S0);
    s->ap = calloc(n * np + 1, sizeof *s->ap);
    s->lp = calloc(k * np + 1, sizeof *s->lp);
    s->t0p = calloc(np + 1, sizeof *s->t0p);
    return s->par && s->S0 && s->ap && s->lp && s->t0p ? 0 : hs_error_nomem(err);
}

hs_fl_sens *hs_fl_sens_new(hs_fl *f, const char *const *names, size_t np, hs_error *err)
{
    hs_model *m = f->m;
    hs_fl_sens *s = calloc(1, sizeof *s);
    if (!s) {
        hs_error_nomem(err);
        return NULL;
    }
    s->f = f;
    s->np = np;
    int rc = sens_alloc(s, err);
    for (size_t i = 0; !rc && i < np; i++) {
        rc = lookup(m, names[i], &s->par[i], err);
        for (size_t j = 0; !rc && j < i; j++)
            if (s->par[j] == s->par[i]) {
                hs_error_set(err, HS_EXIT_MODEL, "%s: %s names '%s' twice", m->file,
                             hs_optname(m->names, HS_OPT_SENSITIVITY), names[i]);
                rc = HS_EXIT_MODEL;
            }
    }
    size_t nsym = (size_t)hs_dag_nsymbols(m->dag);
    const hs_node **map = rc ? NULL : param_map(s, nsym);
    if (!rc && !map)
        rc = hs_error_nomem(err);
    if (!rc)
        rc = build(s, map, nsym, err);
    free(map);
    for (size_t i = 0; !rc && i < np; i++)
        if (s->t0p[i] != 0) {
            hs_error_set(err, HS_EXIT_MODEL, "%s: %s %s: the start time t0 is "
                         "written with '%s': sensitivities to a parameter that moves t0 are "
                         "not supported", m->file, hs_optname(m->names, HS_OPT_SENSITIVITY),
                         names[i], names[i]);
            rc = HS_EXIT_MODEL;
        }
    for (size_t e = 0; !rc && e < m->nev; e++)
        if (m->ev[e].action == HS_EV_STOP && !s->w &&
            (!(s->w = hs_work_new(m)) || !(s->sign = calloc(m->nev, 1)) ||
             !(s->gs = calloc(5 * m->nev, sizeof *s->gs)) ||
             !(s->xi = calloc(4 * f->n + 2 * f->n * np, sizeof *s->xi))))
            rc = hs_error_nomem(err);
    if (!rc && s->w)
        s->xt = s->xi + 2 * f->n;
    if (!rc) {
        size_t nin = hs_prog_nin(s->prog);
        s->regs = calloc(hs_prog_nregs(s->prog) + 1, sizeof *s->regs);
        s->out = calloc(s->nout + 1, sizeof *s->out);
        if (!s->regs || !s->out || nin > f->nin)
            rc = hs_error_nomem(err);
    }
    if (rc) {
        hs_fl_sens_free(s);
        return NULL;
    }
    return s;
}

void hs_fl_sens_free(hs_fl_sens *s)
{
    if (!s)
        return;
    hs_work_free(s->w);
    free(s->sign);
    free(s->gs);
    free(s->xi);
    free(s->gd);
    free(s->xstop);
    hs_prog_free(s->prog);
    free(s->par);
    free(s->out);
    free(s->regs);
    free(s->S0);
    free(s->ap);
    free(s->lp);
    free(s->t0p);
    free(s);
}

/* da/dp, dLambda/dp at f's last evaluation (its factorized saddle-point
 * matrix and the symbols a, Lambda set). */
static int partials(hs_fl_sens *s, double t, hs_error *err)
{
    hs_fl *f = s->f;
    size_t n = f->n, k = f->k, np = s->np, per = n + 3 * k;
    hs_fl_run(s->kprog, s->prog, f->in, s->regs, s->out);
    double *col = f->col->data;
    for (size_t i = 0; i < np; i++) {
        for (size_t j = 0; j < n + k; j++)
            col[j] = -s->out[i * per + j];
        if (hs_fl_saddle_solve(f, col, NULL, 1))
            goto singular;
        for (size_t j = 0; j < n + k; j++) {
            double x = col[j];
            if (j < n)
                s->ap[j * np + i] = x;
            else
                s->lp[(j - n) * np + i] = x;
        }
    }
    return 0;
singular:
    hs_error_set(err, HS_EXIT_NUMERIC, "%s: a singular saddle-point matrix or a non-finite "
                 "derivative in a parameter at t = %.17g (sensitivities)", f->m->file, t);
    return HS_EXIT_NUMERIC;
}

static int force(void *ctx, double t, double *dV, hs_error *err)
{
    hs_fl_sens *s = ctx;
    int rc = partials(s, t, err);
    if (rc)
        return rc;
    for (size_t e = 0; e < s->f->n * s->np; e++)
        dV[e] += s->ap[e];
    return 0;
}

/* At (t, x) with S: Lambda [k] and dLambda/dp = dLambda/dq S_q +
 * dLambda/dv S_v + dLambda/dp|_(q,v) [k x np]. */
static int multipliers(hs_fl_sens *s, double t, const double *x, const double *S,
                       double *lam, double *dlam, hs_error *err)
{
    hs_fl *f = s->f;
    size_t n = f->n, k = f->k, np = s->np;
    double *a = malloc((n + 1) * sizeof *a), *Y;
    if (!a)
        return hs_error_nomem(err);
    int rc = hs_fl_accel(f, t, x, x + n, a, lam, NULL, NULL, err);
    free(a);
    if (rc || !k)
        return rc;
    /* along S (minus rows n .. n + k - 1; the symbols a, Lambda set for
     * partials), then dLambda/dp at fixed (q, v) */
    if ((rc = hs_fl_dir(f, t, S, np, &Y, err)) || (rc = partials(s, t, err)))
        return rc;
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < np; i++)
            dlam[j * np + i] = s->lp[j * np + i] - Y[(n + j) * np + i];
    return 0;
}

/* How far S0 is from the linearized constraints: max over p of
 * |G_q dq/dp + dG/dp| and |dGdot/dq dq/dp + G_q dv/dp + dGdot/dp|. */
static double tangency(hs_fl_sens *s, double t, const double *x)
{
    hs_fl *f = s->f;
    size_t n = f->n, k = f->k, np = s->np, per = n + 3 * k;
    hs_fl_eval_acc(f, t, x, x + n);
    hs_fl_run(s->kprog, s->prog, f->in, s->regs, s->out);
    /* J S0 + d(G, Gdot)/dp, J = [G_q 0; dGdot/dq G_q], by its entries */
    double *r = calloc(2 * k * np + 1, sizeof *r), worst = 0;
    if (!r)
        return 0;
    const double *o = f->out_acc, *Sq = s->S0, *Sv = s->S0 + n * np;
    for (size_t e = 0; e < f->bGq.cnt; e++) {
        size_t row = (size_t)f->bGq.r[e], c = (size_t)f->bGq.c[e];
        double g = o[f->bGq.off + e];
        for (size_t i = 0; i < np; i++) {
            r[row * np + i] += g * Sq[c * np + i];
            r[(k + row) * np + i] += g * Sv[c * np + i];
        }
    }
    for (size_t e = 0; e < f->bGdq.cnt; e++) {
        size_t row = (size_t)f->bGdq.r[e], c = (size_t)f->bGdq.c[e];
        for (size_t i = 0; i < np; i++)
            r[(k + row) * np + i] += o[f->bGdq.off + e] * Sq[c * np + i];
    }
    for (size_t i = 0; i < np; i++)
        for (size_t j = 0; j < 2 * k; j++)
            worst = fmax(worst, fabs(r[j * np + i] + s->out[i * per + n + k + j]));
    free(r);
    return worst;
}

/* ---------- stop events ---------- */

/* The stop events' functions at (t, x) into the work: 0, or 4 with err. */
static int ev_eval(hs_fl_sens *s, double t, const double *x, hs_error *err)
{
    const hs_model *m = s->f->m;
    size_t n = m->n;
    int rc = m->ev_dyn ? hs_dyn_accel(m, s->w, t, x, x + n, NULL, NULL) : 0;
    if (!rc)
        rc = hs_dyn_events(m, s->w, t, x, x + n, NULL);
    if (rc)
        hs_error_adopt(err, hs_work_err(s->w), 0);
    return rc;
}

static int sgn(double g)
{
    return (g > 0) - (g < 0);
}

/* The first stop event whose g changed sign in its direction against
 * s->sign (the work's values), or -1; update: keep the new signs. */
static long ev_crossed(hs_fl_sens *s, int update)
{
    const hs_model *m = s->f->m;
    const double *g = hs_work_events(s->w);
    long hit = -1;
    for (size_t e = 0; e < m->nev; e++) {
        int sn = sgn(g[e]), so = s->sign[e];
        if (m->ev[e].action != HS_EV_STOP || !sn)
            continue;
        if (so && sn != so && (m->ev[e].dir == 0 || m->ev[e].dir == sn) && hit < 0)
            hit = (long)e;
        if (update)
            s->sign[e] = (signed char)sn;
    }
    return hit;
}

/* A stop event crossed between (a, xa, Sa) and (*tb, x, S): bisect on
 * [a, *tb] (integrating from the left end each time) to where the first
 * crossing is bracketed to round-off; x, S and *tb become the state just
 * past it.  0, or an exit code with err. */
static int ev_locate(hs_fl_sens *s, double a, double *xa, double *Sa, double *tb, double *x,
                     double *S, hs_error *err)
{
    hs_fl *f = s->f;
    size_t len = 2 * f->n, lenS = len * s->np;
    double b = *tb;
    double *xm = malloc((len + lenS + 1) * sizeof *xm), *Sm = xm + len;
    if (!xm)
        return hs_error_nomem(err);
    int rc = 0;
    long hit = ev_crossed(s, 0);
    while (!rc && b - a > 4 * DBL_EPSILON * fmax(fabs(a), fabs(b)) + DBL_MIN) {
        double mid = a + (b - a) / 2;
        if (!(mid > a && mid < b))
            break;
        memcpy(xm, xa, len * sizeof *xm);
        memcpy(Sm, Sa, lenS * sizeof *Sm);
        rc = hs_fl_propagate_forced(f, a, mid, xm, Sm, s->np, force, s, err);
        if (!rc)
            rc = ev_eval(s, mid, xm, err);
        if (rc)
            break;
        long h = ev_crossed(s, 0);
        if (h >= 0) {                  /* in [a, mid]: the right end moves */
            hit = h;
            b = mid;
            memcpy(x, xm, len * sizeof *x);
            memcpy(S, Sm, lenS * sizeof *S);
        } else {                       /* in (mid, b]: the left end moves */
            ev_crossed(s, 1);
            a = mid;
            memcpy(xa, xm, len * sizeof *xa);
            memcpy(Sa, Sm, lenS * sizeof *Sa);
        }
    }
    free(xm);
    if (!rc) {
        s->stopped = &f->m->ev[hit];
        s->t_stop = *tb = b;
        if (s->xstop) {
            memcpy(s->xstop, x, len * sizeof *x);
            memcpy(s->xstop + len, S, lenS * sizeof *S);
        }
    }
    return rc;
}

/* A step's end accepted (no crossing; the work holds g there): the new
 * signs, and g there (the next step's start). */
static void ev_accept(hs_fl_sens *s)
{
    ev_crossed(s, 1);
    memcpy(s->gs, hs_work_events(s->w), s->f->m->nev * sizeof *s->gs);
}

/* Where in the step [t0, t1] (states x0, x1; the work holds g at x1) a
 * stop event whose function has the same sign at both ends may dip to the
 * side it fires on and come back, as a run looks for it (integrate.h:
 * hs_int_hermite, hs_int_dip_guess): g at a quarter, half and three
 * quarters of the step on the interpolant, the quartic through those and
 * the ends.  *tau: the earliest such guess, NAN for none.  The work holds
 * g at x1 again on return.  0, or 4 with err. */
static int ev_dip(hs_fl_sens *s, double t0, const double *x0, double t1, const double *x1,
                  double *tau, hs_error *err)
{
    const hs_model *m = s->f->m;
    size_t n = m->n, nev = m->nev;
    double h = t1 - t0, *ge = s->gs + nev, *gq = ge + nev;
    *tau = NAN;
    int any = 0;
    memcpy(ge, hs_work_events(s->w), nev * sizeof *ge);
    for (size_t e = 0; e < nev; e++) {
        int so = s->sign[e];
        any |= m->ev[e].action == HS_EV_STOP && so && sgn(ge[e]) == so &&
               sgn(s->gs[e]) == so && (m->ev[e].dir == 0 || m->ev[e].dir == -so);
    }
    if (!any)
        return 0;
    int rc = 0;
    for (int j = 0; !rc && j < 3; j++) {
        double u = (j + 1) / 4.0;
        hs_int_hermite(n, h, u, x0, x1, s->xi);
        if (!(rc = ev_eval(s, t0 + u * h, s->xi, err)))
            for (size_t e = 0; e < nev; e++)
                gq[3 * e + (size_t)j] = hs_work_events(s->w)[e];
    }
    for (size_t e = 0; !rc && e < nev; e++) {
        int so = s->sign[e];
        if (m->ev[e].action != HS_EV_STOP || !so || sgn(ge[e]) != so || sgn(s->gs[e]) != so ||
            (m->ev[e].dir != 0 && m->ev[e].dir != -so))
            continue;
        double g[5] = { s->gs[e], gq[3 * e], gq[3 * e + 1], gq[3 * e + 2], ge[e] };
        double u = hs_int_dip_guess(g, so);
        if (u >= 0 && (isnan(*tau) || t0 + u * h < *tau))
            *tau = t0 + u * h;
    }
    return rc ? rc : ev_eval(s, t1, x1, err);
}

/* The watch on every accepted step (internal.h): 1 where a stop event's
 * function changed sign in its direction, or may have inside the step
 * (s->t_dip set: a trial at the true state decides). */
static int ev_watch(void *ctx, double t, const double *y, hs_error *err)
{
    hs_fl_sens *s = ctx;
    if (ev_eval(s, t, y, err))
        return -1;
    if (ev_crossed(s, 0) >= 0)
        return 1;
    double tau;
    if (ev_dip(s, s->wt->t_prev, s->wt->y_prev, t, y, &tau, err))
        return -1;
    if (!isnan(tau)) {
        s->t_dip = tau;
        return 1;
    }
    ev_accept(s);
    return 0;
}

/* From t to *ti under the stop events' watch: x and S there, or at a stop
 * (s->stopped set, *ti its time).  A dip the watch suspects is tried at
 * the true state (integrated from the step's start); where g is not on
 * the other side there the run goes on from the step's end.  0, or an
 * exit code with err. */
static int watched_leg(hs_fl_sens *s, double t, double *ti, double *x, double *S, double *xs,
                       hs_error *err)
{
    hs_fl *f = s->f;
    size_t len = 2 * f->n * (1 + s->np);
    while (t < *ti) {
        hs_fl_watch wt = { ev_watch, s, xs, 0, 0, 0 };
        s->wt = &wt;
        s->t_dip = NAN;
        int rc = hs_fl_propagate_watched(f, t, *ti, x, S, s->np, force, s, &wt, err);
        s->wt = NULL;
        if (rc || !wt.hit)
            return rc;
        if (isnan(s->t_dip)) {                 /* a sign change at the step's end */
            *ti = wt.t_hit;
            return ev_locate(s, wt.t_prev, xs, xs + 2 * f->n, ti, x, S, err);
        }
        double *xt = s->xt, *St = xt + 2 * f->n;
        memcpy(xt, xs, len * sizeof *xt);
        rc = hs_fl_propagate_forced(f, wt.t_prev, s->t_dip, xt, St, s->np, force, s, err);
        if (!rc)
            rc = ev_eval(s, s->t_dip, xt, err);
        if (rc)
            return rc;
        if (ev_crossed(s, 0) >= 0) {            /* there: located between */
            memcpy(x, xt, 2 * f->n * sizeof *x);
            memcpy(S, St, (len - 2 * f->n) * sizeof *S);
            *ti = s->t_dip;
            return ev_locate(s, wt.t_prev, xs, xs + 2 * f->n, ti, x, S, err);
        }
        if ((rc = ev_eval(s, wt.t_hit, x, err)))
            return rc;
        ev_accept(s);
        t = wt.t_hit;
    }
    return 0;
}

const hs_event *hs_fl_sens_stopped(const hs_fl_sens *s, double *t)
{
    if (t)
        *t = s->t_stop;
    return s->stopped;
}

/* dt_stop/dp = -(g_x S + g_p) / (g_t + g_x f), f = (v, a), at the stop:
 * 0, 1 not given (NAN), or 4 (the accelerations failed). */
static int stop_dt(hs_fl_sens *s, double *dt)
{
    hs_fl *f = s->f;
    hs_model *m = f->m;
    size_t n = m->n, np = s->np, per = 1 + 2 * n + np, e = (size_t)(s->stopped - m->ev);
    for (size_t i = 0; i < np; i++)
        dt[i] = NAN;
    if (!s->gd || !s->xstop || !s->gd[e * per])
        return 1;
    const hs_node **o = s->gd + e * per;
    const double *x = s->xstop, *S = s->xstop + 2 * n;
    double *a = malloc((3 * n + 1) * sizeof *a), *gx = a + n;   /* a, then g_q, g_v */
    hs_error err;
    hs_error_init(&err);
    int rc = !a || hs_fl_accel(f, s->t_stop, x, x + n, a, NULL, NULL, NULL, &err) ? 4 : 0;
    double den = rc ? 0 : hs_eval_tree(o[0], f->in);      /* f->in: t, q, v, parameters */
    for (size_t r = 0; !rc && r < 2 * n; r++)
        gx[r] = hs_eval_tree(o[1 + r], f->in);
    for (size_t r = 0; !rc && r < n; r++)
        den += gx[r] * x[n + r] + gx[n + r] * a[r];
    for (size_t i = 0; !rc && i < np; i++) {
        double num = hs_eval_tree(o[1 + 2 * n + i], f->in);
        for (size_t r = 0; r < n; r++)
            num += gx[r] * S[r * np + i] + gx[n + r] * S[(n + r) * np + i];
        dt[i] = -num / den + 0.0;                 /* + 0.0: no "-0" */
        if (!isfinite(dt[i]))
            dt[i] = NAN, rc = 1;
    }
    free(a);
    return rc;
}

size_t hs_fl_sens_stop_text(hs_fl_sens *s, char *buf, size_t cap)
{
    const hs_model *m = s->f->m;
    if (!cap)
        return 0;
    buf[0] = '\0';
    if (!s->stopped)
        return 0;
    const hs_event *ev = s->stopped;
    size_t len = (size_t)snprintf(buf, cap, "stopped by event '%s' (%.500s) at t=%.17g",
                                  ev->name, ev->text ? ev->text : "", s->t_stop);
    double *dt = malloc((s->np + 1) * sizeof *dt);
    int rc = dt ? stop_dt(s, dt) : 4;
    if (rc == 0)
        for (size_t i = 0; i < s->np && len < cap; i++)
            len += (size_t)snprintf(buf + len, cap - len, "%s dt/d%s = %.17g", i ? "," : ";",
                                    m->pname[s->par[i]], dt[i]);
    else if (len < cap)
        len += (size_t)snprintf(buf + len, cap - len, "; the stop time's derivatives not given "
                                "(%s)", rc == 1 ? "the event reads accelerations or "
                                "multipliers, or its function crosses at rate 0"
                                : "the accelerations failed there");
    free(dt);
    return len < cap ? len : cap - 1;
}

int hs_fl_sens_run(hs_fl_sens *s, double t_end, double dt, hs_fl_sens_row_fn row, void *ctx,
                   double *offset, hs_error *err)
{
    hs_fl *f = s->f;
    hs_model *m = f->m;
    size_t n = f->n, k = f->k, np = s->np;
    double *x = calloc(2 * n, sizeof *x), *S = calloc(2 * n * np + 1, sizeof *S);
    double *lam = calloc(k + 1, sizeof *lam), *dlam = calloc(k * np + 1, sizeof *dlam);
    int rc = 0;
    if (!x || !S || !lam || !dlam)
        rc = hs_error_nomem(err);
    if (!rc && !(rc = hs_fl_start_state(f, x, err))) {
        memcpy(S, s->S0, 2 * n * np * sizeof *S);
        *offset = k ? tangency(s, m->t0, x) : 0;
    }
    double t = m->t0, step = 0;
    long steps = 0;
    if (!rc)
        rc = hs_run_times(m, t_end, dt, &step, &steps, err);
    /* the stop events: their signs at the start, checked after every
     * accepted step (xs: the state at the step's start, where a crossing
     * is located from) */
    double *xs = s->w ? malloc((2 * n * (1 + np) + 1) * sizeof *xs) : NULL;
    if (!rc && s->w && !xs)
        rc = hs_error_nomem(err);
    s->stopped = NULL;
    if (!rc && s->w) {
        memset(s->sign, 0, m->nev);
        if (!(rc = ev_eval(s, t, x, err)))
            ev_accept(s);
    }
    for (long i = 0; !rc && i <= steps && !s->stopped; i++) {
        double ti = i == steps ? t_end : hs_grid_time(m->t0, i, step);
        if (ti > t)
            rc = xs ? watched_leg(s, t, &ti, x, S, xs, err)
                    : hs_fl_propagate_forced(f, t, ti, x, S, np, force, s, err);
        if (!rc)
            rc = multipliers(s, ti, x, S, lam, dlam, err);
        t = ti;
        if (!rc)
            rc = row(ti, x, lam, S, dlam, ctx);
    }
    free(xs);
    free(x);
    free(S);
    free(lam);
    free(dlam);
    return rc;
}

size_t hs_fl_programs(const hs_fl *f, const hs_fl_sens *s, const hs_prog **progs)
{
    progs[0] = f->prog_acc;
    progs[1] = f->prog_jac;
    progs[2] = s ? s->prog : NULL;
    return s ? 3 : 2;
}

void hs_fl_use_native(hs_fl *f, hs_fl_sens *s, const hs_native *nat)
{
    f->kacc = nat ? hs_native_fn(nat, 0) : NULL;
    f->kjac = nat ? hs_native_fn(nat, 1) : NULL;
    if (s)
        s->kprog = nat ? hs_native_fn(nat, 2) : NULL;
}

hs_native *hs_fl_native(hs_fl *f, hs_fl_sens *s, int policy, const hs_optnames *names,
                        char *note, size_t cap)
{
    if (cap)
        note[0] = '\0';
    if (policy == HS_NATIVE_NEVER)
        return NULL;
    hs_native_opts no;
    hs_native_opts_init(&no);
    no.names = names;
    no.policy = (hs_native_policy)policy;
    const hs_prog *progs[HS_FL_NPROGS];
    size_t np = hs_fl_programs(f, s, progs);
    double instr = 0;
    for (size_t i = 0; i < np; i++)
        instr += progs[i] ? (double)hs_prog_ninstr(progs[i]) : 0;
    no.work = 1000 * 13 * instr;
    hs_native_status st;
    hs_native *h = hs_native_load(progs, np, &no, &st, note, cap);
    hs_fl_use_native(f, s, h);
    return h;
}

size_t hs_fl_sens_count(const hs_fl_sens *s)
{
    return s->np;
}

/* What the sensitivities do not integrate (flow.h). */
int hs_fl_sens_refuse(const hs_model *m, hs_error *err)
{
    const char *what = m->ncontact ? "contacts (one-sided constraints)"
                     : m->nfriction ? "friction" : NULL;
    if (what)
        return hs_error_set(err, HS_EXIT_USAGE, "%s does not support %s",
                            hs_optname(m->names, HS_OPT_SENSITIVITY), what);
    for (size_t e = 0; e < m->nev; e++)
        if (m->ev[e].action != HS_EV_STOP && m->ev[e].action != HS_EV_RECORD)
            return hs_error_set(err, HS_EXIT_USAGE, "%s does not support events that change "
                                "the state or the constraints (event '%s'): the sensitivities "
                                "jump there (a saltation matrix, not implemented); stop and "
                                "record events are supported",
                                hs_optname(m->names, HS_OPT_SENSITIVITY), m->ev[e].name);
    return 0;
}

size_t hs_fl_sens_ncols(const hs_model *m, size_t np)
{
    return 1 + 2 * m->n + m->k + np * (2 * m->n + m->k);
}

/* Column j's name (flow.h): t, q, v, lambda_c, then per parameter p
 * dq/dp, dv/dp, dlambda_c/dp. */
const char *hs_fl_sens_column(const hs_model *m, const char *const *names, size_t np,
                              size_t j, char *buf, size_t len)
{
    size_t n = m->n, k = m->k, per = 2 * n + k;
    if (j == 0)
        return "t";
    if (--j < 2 * n)
        return j < n ? m->qname[j] : m->vname[j - n];
    if ((j -= 2 * n) < k) {
        snprintf(buf, len, "lambda_%s", m->cname[j]);
        return buf;
    }
    j -= k;
    if (j >= np * per)
        return NULL;
    size_t p = j / per, i = j % per;
    const char *what = i < n ? m->qname[i] : i < 2 * n ? m->vname[i - n] : NULL;
    if (what)
        snprintf(buf, len, "d%s/d%s", what, names[p]);
    else
        snprintf(buf, len, "dlambda_%s/d%s", m->cname[i - 2 * n], names[p]);
    return buf;
}

/* A row's values in the columns' order (flow.h). */
void hs_fl_sens_pack(const hs_model *m, size_t np, double t, const double *x,
                     const double *lam, const double *S, const double *dlam, double *row)
{
    size_t n = m->n, k = m->k, c = 0;
    row[c++] = t;
    for (size_t i = 0; i < 2 * n; i++)
        row[c++] = x[i];
    for (size_t j = 0; j < k; j++)
        row[c++] = lam[j];
    for (size_t p = 0; p < np; p++) {
        for (size_t i = 0; i < 2 * n; i++)
            row[c++] = S[i * np + p];
        for (size_t j = 0; j < k; j++)
            row[c++] = dlam[j * np + p];
    }
}
