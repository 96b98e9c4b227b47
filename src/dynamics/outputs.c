/* What outputs and events read at a state (dynamics.h): the programs
 * prog_out and prog_ev of the model, whose inputs are (t, q, v), the
 * parameters, and the accelerations and multipliers the last hs_dyn_accel
 * left in w->a and w->Lambda; and the constraints an event lets go. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* t, q, v, and the accelerations and multipliers the programs read. */
static void set_inputs(const hs_model *m, hs_work *w, double t, const double *q,
                       const double *v, int dyn)
{
    hs_dyn_set_state(m, w, t, q, v);
    if (!dyn)
        return;
    for (size_t i = 0; m->sym_a && i < m->n; i++)
        if (m->sym_a[i] >= 0)
            w->in[m->sym_a[i]] = w->a[i];
    for (size_t j = 0; m->sym_lam && j < m->k; j++)
        if (m->sym_lam[j] >= 0)
            w->in[m->sym_lam[j]] = w->Lambda[j];
}

/* The first non-finite value of out[n], or n. */
static size_t first_nonfinite(const double *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(out[i]))
            return i;
    return n;
}

/* A non-finite value of program p: where it arose, when. */
static int nonfinite(const hs_model *m, hs_work *w, const hs_prog *p, double *regs,
                     const char *what, double t)
{
    hs_srcpos pos;
    const char *why = "non-finite value";
    hs_error_init(&w->err);
    w->fail_kind = HS_FAIL_NONFINITE;
    if (hs_prog_find_nonfinite(p, w->in, regs, &pos, &why)) {
        hs_error_set(&w->err, HS_EXIT_NUMERIC, "%s in %s at t=%.17g", why, what, t);
        hs_model_place(m, pos, &w->err);
    } else {
        hs_error_set(&w->err, HS_EXIT_NUMERIC, "non-finite value of %s at t=%.17g", what, t);
    }
    return HS_EXIT_NUMERIC;
}

int hs_dyn_outputs(const hs_model *m, hs_work *w, double t, const double *q,
                   const double *v)
{
    if (!m->nout)
        return 0;
    set_inputs(m, w, t, q, v, m->out_dyn);
    hs_dyn_run_prog(m->prog_out, w->kout, w->in, w->rout, w->out);
    size_t i = first_nonfinite(w->out, m->nout);
    if (i < m->nout) {
        char what[128];
        snprintf(what, sizeof what, "output '%.80s'", m->outname[i]);
        return nonfinite(m, w, m->prog_out, w->rout, what, t);
    }
    return 0;
}

int hs_dyn_events(const hs_model *m, hs_work *w, double t, const double *q,
                  const double *v, size_t *bad)
{
    if (!m->nev)
        return 0;
    set_inputs(m, w, t, q, v, m->ev_dyn);
    hs_dyn_run_prog(m->prog_ev, w->kev, w->in, w->rev, w->ev);
    size_t i = first_nonfinite(w->ev, m->nev);
    if (i < m->nev) {
        char what[128];
        snprintf(what, sizeof what, "the function of event '%.80s'", m->ev[i].name);
        if (bad)
            *bad = i;
        return nonfinite(m, w, m->prog_ev, w->rev, what, t);
    }
    return 0;
}

int hs_dyn_release(const hs_model *m, hs_work *w, size_t j)
{
    if (!w->released && !(w->released = calloc(m->k ? m->k : 1, 1)))
        return -1;
    if (hs_dyn_held_alloc(m, w))                  /* held.c */
        return -1;
    if (!w->released[j]) {
        w->released[j] = 1;
        w->nreleased++;
        hs_dyn_held_changed(w);
    }
    w->Lambda[j] = 0;
    return 0;
}
