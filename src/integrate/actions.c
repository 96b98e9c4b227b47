/* What an event does (internal.h: hs_int_actions): one entry per action of
 * the model (model.h: hs_ev_action), in its order.  An entry says whether
 * the event writes its own rows to the events file, whether the step it
 * fell in stands (a record) or is cut there, when the event is not
 * watched (an impact of a closed contact), and what it does at the state
 * of the event: stop the run, let constraints go, take them back with a
 * plastic impact, or a contact's or friction element's transition
 * (contact.c, friction.c).  Adding an action: its fire function (and
 * idle, when it is not always watched) in a file of its own, one entry
 * here, and its keyword in model/events.c when a model file may name it;
 * tests/check_events.c checks the table against the model's actions. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The run ends here, with a row at the event (once). */
static int stop(hs_int_run *R, size_t e, hs_int_step_fate *fate)
{
    const hs_event *ev = &R->m->ev[e];
    *fate = HS_INT_STEP_STOPPED;
    R->sum->stopped_by = ev->name;
    R->sum->stop_text = ev->text;
    if (R->sum->rows && R->sum->t_reached == R->t)
        return 0;
    return hs_int_emit(R, R->t, R->y, 0);
}

/* The constraints let go, then a clean restart (rates, stepper history,
 * signs of the new dynamics). */
static int release(hs_int_run *R, size_t e, hs_int_step_fate *fate)
{
    const hs_event *ev = &R->m->ev[e];
    (void)fate;
    for (size_t r = 0; r < ev->nrel; r++)
        if (hs_dyn_release(R->m, R->w, ev->rel[r]))
            return hs_error_nomem(R->err);
    return hs_int_events_restart(R);
}

/* The constraints taken back: a plastic impact over every constraint held
 * then (the impulses M dv = G_q^T Lambda with G_q v+ = 0 on those rows, the
 * position put onto G = 0 by one Newton step), its work into W_R and
 * E_impact, then a clean restart. */
static int hold(hs_int_run *R, size_t e, hs_int_step_fate *fate)
{
    const hs_model *m = R->m;
    const hs_event *ev = &m->ev[e];
    size_t n = m->n, k = m->k;
    (void)fate;
    signed char *role = calloc(k ? k : 1, 1);
    double *lam = calloc(2 * (k ? k : 1), sizeof *lam), *ez = lam + (k ? k : 1);
    if (!role || !lam) {
        free(role);
        free(lam);
        return hs_error_nomem(R->err);
    }
    for (size_t j = 0; j < k; j++)
        role[j] = (signed char)!hs_dyn_is_released(R->w, j);
    for (size_t r = 0; r < ev->nrel; r++)
        role[ev->rel[r]] = 1;
    double dT = 0;
    int rc = 0;
    if (hs_dyn_impact(m, R->w, R->t, R->y, R->y + n, role, ez, lam, &dT)) {
        hs_error_adopt(R->err, hs_work_err(R->w), HS_EXIT_NUMERIC);
        rc = R->err->code;
    }
    for (size_t r = 0; r < ev->nrel && !rc; r++)
        hs_dyn_hold(m, R->w, ev->rel[r]);
    if (!rc) {
        R->y[2 * n] += dT;                   /* the impulses' work */
        R->ct.E_impact -= dT;
    }
    free(role);
    free(lam);
    return rc ? rc : hs_int_events_restart(R);
}

/* A hold watches only while one of its constraints is let go. */
static int hold_idle(const hs_int_run *R, size_t e)
{
    const hs_event *ev = &R->m->ev[e];
    for (size_t r = 0; r < ev->nrel; r++)
        if (hs_dyn_is_released(R->w, ev->rel[r]))
            return 0;
    return 1;
}

const hs_int_action hs_int_actions[HS_EV_NACTIONS] = {
    [HS_EV_STOP] = { "stop", 0, NULL, stop },
    [HS_EV_RECORD] = { "record", HS_ACT_KEEPS_STEP, NULL, NULL },
    [HS_EV_RELEASE] = { "release", 0, NULL, release },
    [HS_EV_HOLD] = { "hold", 0, hold_idle, hold },
    [HS_EV_IMPACT] = { "impact", HS_ACT_OWN_ROW, hs_int_contact_idle, hs_int_contact_event },
    [HS_EV_OPEN] = { "open", HS_ACT_OWN_ROW, hs_int_contact_idle, hs_int_contact_event },
    [HS_EV_SLIPSTOP] = { "slip stop", HS_ACT_OWN_ROW, hs_int_friction_idle,
                         hs_int_friction_event },
    [HS_EV_UNSTICK] = { "unstick", HS_ACT_OWN_ROW, hs_int_friction_idle,
                        hs_int_friction_event },
};
