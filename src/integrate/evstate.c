/* The events' state at a point (internal.h): every event function and its
 * sign there, and a clean restart after a jump of the state or of the
 * dynamics (an impact, a release, a hold), which the actions
 * (actions.c, contact.c, friction.c) and the start call.  Below them and
 * below the watch over steps (events.c). */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>

static int sgn(double x)
{
    return x > 0 ? 1 : x < 0 ? -1 : 0;
}

/* The event functions at state y, model time t, into hs_work_events(R->w) (f: rates
 * scratch).  0 or an exit code. */
int hs_int_events_eval(hs_int_run *R, double t, const double *y, double *f)
{
    const hs_model *m = R->m;
    if (m->ev_dyn && hs_int_eval(&R->c, t, y, f) != GSL_SUCCESS)
        return hs_int_fail(R, t, y);
    if (hs_dyn_events(m, R->w, t, y, y + m->n, NULL))
        return hs_int_fail(R, t, y);
    return 0;
}

/* Every event's function and sign at the state y (the start, or the
 * point a release restarts from). */
int hs_int_events_signs(hs_int_run *R)
{
    int rc = hs_int_events_eval(R, R->t, R->y, R->ev.f_trial);
    if (rc)
        return rc;
    for (size_t e = 0; e < R->ev.n; e++) {
        R->ev.g_start[e] = hs_work_events(R->w)[e];
        R->ev.sign[e] = (signed char)sgn(R->ev.g_start[e]);
        if (!R->ev.sign[e] && R->m->ev[e].action == HS_EV_OPEN)
            R->ev.sign[e] = 1;          /* a closed contact without force: pulling opens it */
        if (!R->ev.sign[e] && R->m->ev[e].action == HS_EV_IMPACT) {
            /* a gap at 0 just after its impact: below, so that a step over
             * the whole next flight is looked into (a dip) */
            R->ev.g_start[e] = -DBL_MIN;
            R->ev.sign[e] = -1;
        }
    }
    return 0;
}

int hs_int_events_restart(hs_int_run *R)
{
    R->c.last_ok = 0;
    if (R->step.drv) {
        gsl_odeiv2_evolve_reset(R->step.drv->e);
        gsl_odeiv2_step_reset(R->step.drv->s);
    }
    if (R->step.type->reset)
        R->step.type->reset(&R->step.ctx);
    if (R->m->set.interpolate && hs_int_eval(&R->c, R->t, R->y, R->rows.f_start) != GSL_SUCCESS)
        return hs_int_fail(R, R->t, R->y);
    return hs_int_events_signs(R);
}
