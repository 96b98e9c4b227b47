/* Coulomb friction in a run (internal.h; holosim-model(5), FRICTION).
 *
 * Each element sticks (its slip row held, at the value it had when it
 * stuck: hs_work.goff) or slides in a direction (its row let go, the
 * force -mu |N| dir along the gradient of its slip added to Q by the
 * dynamics, at the fixed point with the normal reactions it reads).  The
 * transitions are its two events (model/friction.c), each watched in the
 * state it can leave:
 *   - sliding, the slip rate reaches 0: the row is held and the force it
 *     needs, lambda, computed; |lambda| <= mu_static |N| sticks (a row
 *     `NAME:stick`), else it slides on in the direction the force would
 *     move it, -sgn(lambda) (`NAME:slip`);
 *   - sticking, |lambda| passes mu_static |N|: it slides in -sgn(lambda)
 *     (`NAME:slip`).
 * At the start an element whose slip rate is above the consistency
 * tolerance slides in its direction; the others stick, unless the force
 * they need is beyond mu_static |N|. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int sgn(double x)
{
    return x > 0 ? 1 : x < 0 ? -1 : 0;
}

/* Element f sticks (dir 0: its row held at the slip it has now) or slides
 * in dir (its row let go), in every work space. */
static int set_dir(hs_int_run *R, size_t f, int dir)
{
    const hs_model *m = R->m;
    R->c.last_ok = 0;                   /* the cached rates are the old dynamics' */
    hs_work *ws[2] = { R->w, R->bal.w };
    for (int i = 0; i < 2; i++) {
        hs_work *w = ws[i];
        if (!w)
            continue;
        int rc = hs_dyn_friction_set(m, w, f, dir, R->t, R->y);
        if (rc == HS_EXIT_NOMEM && dir)
            return hs_error_nomem(R->err);
        if (rc) {
            hs_error_adopt(R->err, hs_work_err(w), HS_EXIT_NUMERIC);
            return R->err->code;
        }
    }
    return 0;
}

int hs_int_friction_init(hs_int_run *R)
{
    const hs_model *m = R->m;
    hs_work *ws[2] = { R->w, R->bal.w };
    R->t = R->t0;
    for (int i = 0; i < 2; i++)
        if (ws[i] && hs_dyn_friction_start(m, ws[i], R->t0, R->y, R->y + m->n)) {
            hs_error_adopt(R->err, hs_work_err(ws[i]), HS_EXIT_NUMERIC);
            return R->err->code;
        }
    return 0;
}

/* The sticking elements whose force is beyond mu_static |N| slide (the
 * largest excess first, one at a time), each with a row when `rows`. */
static int unstick(hs_int_run *R, int rows)
{
    const hs_model *m = R->m;
    for (size_t round = 0; round <= m->nfriction; round++) {
        if (hs_dyn_accel(m, R->w, R->t, R->y, R->y + m->n, NULL, NULL)) {
            hs_error_adopt(R->err, hs_work_err(R->w), HS_EXIT_NUMERIC);
            return R->err->code;
        }
        size_t fw = m->nfriction;
        double worst = 0;
        for (size_t f = 0; f < m->nfriction; f++) {
            double lam = hs_work_Lambda(R->w)[m->fric0 + f];
            double ex = fabs(lam) - m->fric_mus[f] * hs_dyn_friction_normal(m, R->w, f);
            if (!hs_dyn_friction_dir(R->w, f) && ex > 1e-12 * fabs(lam) && ex > worst) {
                worst = ex;
                fw = f;
            }
        }
        if (fw == m->nfriction)
            return 0;
        int rc = set_dir(R, fw, -sgn(hs_work_Lambda(R->w)[m->fric0 + fw]));
        R->sum->transitions += rows;
        if (!rc && rows) {
            char name[200];
            snprintf(name, sizeof name, "%s:slip", m->cname[m->fric0 + fw]);
            rc = hs_int_event_row(R, name, R->t, R->y);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* Is every normal row of element f let go (an open contact: |N| = 0)? */
static int unpressed(const hs_int_run *R, size_t f)
{
    const hs_model *m = R->m;
    for (size_t p = m->fric_norm_start[f]; p < m->fric_norm_start[f + 1]; p++)
        if (!hs_dyn_is_released(R->w, m->fric_norm[p]))
            return 0;
    return 1;
}

/* After a transition of contacts or friction: a sticking element whose
 * normal contacts have all opened slides (it cannot hold without a normal
 * force: with |N| = 0 it exerts none); a sliding one takes the direction
 * of its slip rate, or where that is 0 (to 1e-12 of the velocities' scale:
 * it landed at rest, say) tries to stick as where its rate reaches 0; then
 * the sticking ones that cannot hold slide.  Rows when `rows`. */
static int settle(hs_int_run *R, int rows)
{
    const hs_model *m = R->m;
    size_t n = m->n;
    double vs = 0;
    for (size_t i = 0; i < n; i++)
        vs = fmax(vs, fabs(R->y[n + i]));
    for (size_t f = 0; f < m->nfriction; f++) {
        size_t j = m->fric0 + f;
        int rc = 0;
        if (hs_dyn_constraints_sparse(m, R->w, R->t, R->y, NULL, NULL)) {
            hs_error_adopt(R->err, hs_work_err(R->w), HS_EXIT_NUMERIC);
            return R->err->code;
        }
        double rate = hs_work_con_Gt(m, R->w)[j] + hs_dyn_gq_dot(m, R->w, j, R->y + n);
        int still = fabs(rate) <= 1e-12 * vs;
        if (!hs_dyn_friction_dir(R->w, f) && unpressed(R, f)) {
            rc = set_dir(R, f, rate < 0 ? -1 : 1);
        } else if (hs_dyn_friction_dir(R->w, f) && !still &&
                   sgn(rate) != hs_dyn_friction_dir(R->w, f)) {
            rc = set_dir(R, f, sgn(rate));         /* (it landed moving the other way) */
        } else if (hs_dyn_friction_dir(R->w, f) && !unpressed(R, f)) {
            if (!still)
                continue;
            if ((rc = set_dir(R, f, 0)))
                return rc;
            if (hs_dyn_accel(m, R->w, R->t, R->y, R->y + n, NULL, NULL)) {
                hs_error_adopt(R->err, hs_work_err(R->w), HS_EXIT_NUMERIC);
                return R->err->code;
            }
            double lam = hs_work_Lambda(R->w)[j], N = hs_dyn_friction_normal(m, R->w, f);
            if (fabs(lam) > m->fric_mus[f] * N * (1 + 1e-12)) {
                rc = set_dir(R, f, -sgn(lam));
                continue;
            }
            if (rows) {
                char name[200];
                snprintf(name, sizeof name, "%s:stick", m->cname[j]);
                R->sum->transitions++;
                rc = hs_int_event_row(R, name, R->t, R->y);
            }
        }
        if (rc)
            return rc;
    }
    return unstick(R, rows);
}

int hs_int_friction_settle(hs_int_run *R)
{
    return R->m->nfriction ? settle(R, 1) : 0;
}

int hs_int_friction_start(hs_int_run *R)
{
    return R->m->nfriction ? settle(R, 0) : 0;
}

int hs_int_friction_idle(const hs_int_run *R, size_t e)
{
    const hs_event *ev = &R->m->ev[e];
    int sliding = hs_dyn_friction_dir(R->w, ev->contact - R->m->fric0) != 0;
    return ev->action == HS_EV_SLIPSTOP ? !sliding : sliding;
}

int hs_int_friction_event(hs_int_run *R, size_t e, hs_int_step_fate *fate)
{
    (void)fate;
    const hs_model *m = R->m;
    const hs_event *ev = &m->ev[e];
    size_t j = ev->contact, f = j - m->fric0;
    char name[200];
    int rc = 0;
    if (ev->action == HS_EV_SLIPSTOP) {
        /* try to stick: the force the held slip needs */
        if ((rc = set_dir(R, f, 0)))
            return rc;
        if (hs_dyn_accel(m, R->w, R->t, R->y, R->y + m->n, NULL, NULL)) {
            hs_error_adopt(R->err, hs_work_err(R->w), HS_EXIT_NUMERIC);
            return R->err->code;
        }
        double lam = hs_work_Lambda(R->w)[j], N = hs_dyn_friction_normal(m, R->w, f);
        int sticks = fabs(lam) <= m->fric_mus[f] * N * (1 + 1e-12);
        snprintf(name, sizeof name, "%s:%s", m->cname[j], sticks ? "stick" : "slip");
        if (!sticks)
            rc = set_dir(R, f, -sgn(lam));
    } else {
        snprintf(name, sizeof name, "%s:slip", m->cname[j]);
        if (hs_dyn_accel(m, R->w, R->t, R->y, R->y + m->n, NULL, NULL)) {
            hs_error_adopt(R->err, hs_work_err(R->w), HS_EXIT_NUMERIC);
            return R->err->code;
        }
        rc = set_dir(R, f, -sgn(hs_work_Lambda(R->w)[j]));
    }
    R->sum->transitions++;
    if (!rc)
        rc = hs_int_event_row(R, name, R->t, R->y);
    if (!rc)
        rc = settle(R, 1);
    return rc ? rc : hs_int_events_restart(R);
}
