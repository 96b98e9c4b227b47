/* Contacts in a run (internal.h; holosim-model(5), CONTACTS).
 *
 * A contact is a constraint the run holds (closed) or lets go (open,
 * hs_dyn_release).  Each has two events (model/contacts.c), watched only
 * in the state they can change: its gap going down through 0 while it is
 * open, its multiplier going down through 0 while it is closed.  Both are
 * located like any event (events.c); the step is cut there and the run
 * restarts from the new state and dynamics, as after a release.
 *
 * An opening lets the contact go.  An impact solves the impulse problem
 * (dynamics/impact.c) over every constraint held, every closed contact
 * (restitution 0: it may only be pushed open) and every open contact that
 * closes at the same state (gap within the location's resolution and
 * approaching), the one that fired with its restitution.  After it a
 * contact whose gap rate is 0 (to 1e-10 of the rates before) stays
 * closed, the others open; then any closed contact the dynamics would
 * pull (multiplier < 0) opens, one at a time, most negative first.  The
 * kinetic energy lost goes into E_impact and, as the work of the
 * impulsive reactions, into W_R (energy_balance closes).
 *
 * Zeno: the impact times of each contact are kept; when three successive
 * intervals form a geometric sequence (their two ratios r agree to 1e-3,
 * r < 1), the contact is armed with r (and disarmed when a later ratio
 * leaves r by 5e-2).  An armed contact whose remaining intervals sum,
 * d r / (1 - r) after the last interval d, to at most 1e-9 (1 + |t|) has
 * reached its accumulation point up to that time: the impact is taken
 * with restitution 0, the contact stays closed (resting contact) and its
 * row says `rest`.  So does an impact whose next flight would rise less
 * than the rounding of the gap (below_rounding). */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#define ZENO_MATCH 1e-3     /* two ratios agreeing: a geometric sequence */
#define ZENO_KEEP 5e-2      /* a later ratio this close keeps it */
#define ZENO_TIME 1e-9      /* remaining time (relative to 1 + |t|) at the limit */

static size_t first_contact(const hs_model *m)
{
    return m->contact0;
}

/* Let contact j go (open = 1) or hold it (0), in every work space. */
static int set_open(hs_int_run *R, size_t j, int open)
{
    R->c.last_ok = 0;                   /* the cached rates are the old dynamics' */
    hs_work *ws[2] = { R->w, R->bal.w };
    for (int i = 0; i < 2; i++) {
        if (!ws[i])
            continue;
        if (open ? hs_dyn_release(R->m, ws[i], j) : hs_dyn_hold(R->m, ws[i], j))
            return hs_error_nomem(R->err);
    }
    return 0;
}

static int is_open(const hs_int_run *R, size_t j)
{
    return hs_dyn_is_released(R->w, j);
}

/* G into G[k], G_t into Gt[k] and the rates Gdot into u[k] at the state. */
static int rates(hs_int_run *R, const double *y, double *G, double *Gt, double *u)
{
    const hs_model *m = R->m;
    if (hs_dyn_constraints_sparse(m, R->w, R->t, y, G, Gt)) {
        hs_error_adopt(R->err, hs_work_err(R->w), HS_EXIT_NUMERIC);
        return R->err->code;
    }
    for (size_t j = 0; j < m->k; j++)
        u[j] = Gt[j] + hs_dyn_gq_dot(m, R->w, j, y + m->n);
    return 0;
}

int hs_int_contacts_init(hs_int_run *R)
{
    const hs_model *m = R->m;
    size_t nc = m->ncontact, k = m->k, k0 = first_contact(m);
    hs_int_contacts *C = &R->ct;
    C->last_rest = NAN;
    if (!nc)
        return 0;
    C->hist = malloc(4 * nc * sizeof *C->hist);
    C->ratio = calloc(nc, sizeof *C->ratio);
    C->lam = calloc(k, sizeof *C->lam);
    C->e = calloc(k, sizeof *C->e);
    C->role = calloc(k, 1);
    if (!C->hist || !C->ratio || !C->lam || !C->e || !C->role)
        return hs_error_nomem(R->err);
    for (size_t i = 0; i < 4 * nc; i++)
        C->hist[i] = NAN;
    for (size_t c = 0; c < nc; c++)
        C->e[k0 + c] = m->restitution[c];
    R->t = R->t0;
    hs_work *ws[2] = { R->w, R->bal.w };
    int rc = 0;
    for (int i = 0; i < 2 && !rc; i++)
        if (ws[i] && hs_dyn_contacts_open(m, ws[i], R->t0, R->y, R->y + m->n))
            rc = hs_error_adopt(R->err, hs_work_err(ws[i]), HS_EXIT_NUMERIC);
    return rc;
}

/* The closed contacts the dynamics would pull open, one at a time (most
 * negative multiplier first), each with a row when `rows`. */
static int open_pulled(hs_int_run *R, int rows)
{
    const hs_model *m = R->m;
    size_t k0 = first_contact(m);
    for (size_t round = 0; round <= m->ncontact; round++) {
        if (hs_dyn_accel(m, R->w, R->t, R->y, R->y + m->n, NULL, NULL)) {
            hs_error_adopt(R->err, hs_work_err(R->w), HS_EXIT_NUMERIC);
            return R->err->code;
        }
        double lmax = 0, worst = 0;
        size_t jw = m->k;
        const double *Lambda = hs_work_Lambda(R->w);
        for (size_t j = 0; j < m->k; j++)
            lmax = fmax(lmax, fabs(Lambda[j]));
        for (size_t j = k0; j < k0 + m->ncontact; j++)
            if (!is_open(R, j) && Lambda[j] < -1e-12 * lmax && Lambda[j] < worst) {
                worst = Lambda[j];
                jw = j;
            }
        if (jw == m->k)
            return 0;
        int rc = set_open(R, jw, 1);
        R->sum->transitions += rows;
        if (!rc && rows) {
            char name[200];
            snprintf(name, sizeof name, "%s:open", m->cname[jw]);
            rc = hs_int_event_row(R, name, R->t, R->y);
        }
        if (rc)
            return rc;
    }
    return 0;
}

int hs_int_contacts_start(hs_int_run *R)
{
    return R->m->ncontact ? open_pulled(R, 0) : 0;
}

int hs_int_contact_idle(const hs_int_run *R, size_t e)
{
    const hs_event *ev = &R->m->ev[e];
    return ev->action == HS_EV_IMPACT ? !is_open(R, ev->contact) : is_open(R, ev->contact);
}

/* Contact c's impact at time t into its history; 1 when the sequence of
 * its impacts has reached its accumulation point (Zeno), *tau the time
 * left to it. */
static int zeno(hs_int_run *R, size_t c, double t, double *tau)
{
    double *h = R->ct.hist + 4 * c, *r = R->ct.ratio + c;
    memmove(h, h + 1, 3 * sizeof *h);
    h[3] = t;
    *tau = 0;
    if (isnan(h[0]))
        return 0;
    double d1 = h[1] - h[0], d2 = h[2] - h[1], d3 = h[3] - h[2];
    if (!(d1 > 0 && d2 > 0 && d3 > 0)) {
        *r = 0;
        return 0;
    }
    double r1 = d2 / d1, r2 = d3 / d2;
    if (*r > 0 && !(fabs(r2 - *r) <= ZENO_KEEP * *r))
        *r = 0;
    if (*r == 0 && r2 < 1 && fabs(r2 - r1) <= ZENO_MATCH * r2)
        *r = r2;
    if (*r == 0)
        return 0;
    *tau = d3 * *r / (1 - *r);
    return *tau <= ZENO_TIME * (1 + fabs(t));
}

/* Would the next flight of contact j (approaching at rate u) rise less
 * than the rounding of its gap?  Its height is about e^2 |u| d / 4 (d
 * the last interval between its impacts, whose flight had the same gap
 * acceleration 2 |u| / d); the gap's rounding 64 eps times the scale of
 * its terms, sum |dG/dq_i q_i| + |G_t t|, after rates() at the state (a
 * floor moving with t, or far from the origin, is only known to that).
 * Then no flight can be resolved: it rests (as at a Zeno point). */
static int below_rounding(const hs_int_run *R, size_t j, double u)
{
    const hs_model *m = R->m;
    const double *h = R->ct.hist + 4 * (j - m->contact0);
    double d = h[3] - h[2], e = R->ct.e[j];
    if (!(d > 0))
        return 0;
    double scale = fabs(hs_work_con_Gt(m, R->w)[j] * R->t);
    for (int z = m->gq_start[j]; z < m->gq_start[j + 1]; z++)
        scale += fabs(hs_work_con_Gq(m, R->w)[z] * R->y[m->gq_col[z]]);
    return e * e * fabs(u) * d / 4 <= 64 * DBL_EPSILON * scale;
}

/* The impact of contact j at the current state. */
static int impact(hs_int_run *R, size_t j)
{
    const hs_model *m = R->m;
    hs_int_contacts *C = &R->ct;
    size_t n = m->n, k = m->k, k0 = first_contact(m), k1 = k0 + m->ncontact;
    double *G = calloc(5 * k, sizeof *G);
    double *Gt = G + k, *um = G + 2 * k, *up = G + 3 * k, *e = G + 4 * k;
    unsigned char *closing = calloc(k, 1);
    if (!G || !closing) {
        free(G);
        free(closing);
        return hs_error_nomem(R->err);
    }
    int rc = rates(R, R->y, G, Gt, um);
    double tres = 4e-13 * (1 + fabs(R->t));        /* the location's resolution */
    for (size_t i = 0; i < k && !rc; i++) {
        int open = is_open(R, i);
        e[i] = 0;
        /* held rows (a sticking friction element among them): 1; contacts: 2 */
        C->role[i] = (signed char)(open ? 0 : i < k0 || i >= k1 ? 1 : 2);
        if (i >= k0 && i < k1 && open && (i == j || (um[i] < 0 && G[i] <= tres * -um[i]))) {
            C->role[i] = 2;
            e[i] = C->e[i];
            closing[i] = 1;
        }
    }
    double tau = 0;
    int rest = !rc && zeno(R, j - k0, R->t, &tau);
    if (!rc && !rest && below_rounding(R, j, um[j]))
        rest = 1;                       /* flights below the gap's precision */
    if (rest) {
        e[j] = 0;
        C->last_rest = R->t + tau;
        R->sum->rested = 1;
        R->sum->t_rest = R->t + tau;
        R->sum->rest_contact = m->cname[j];
    }
    double dT = 0;
    if (!rc && hs_dyn_impact(m, R->w, R->t, R->y, R->y + n, C->role, e, C->lam, &dT)) {
        hs_error_adopt(R->err, hs_work_err(R->w), HS_EXIT_NUMERIC);
        rc = R->err->code;
    }
    if (!rc) {
        R->y[2 * n] += dT;                         /* the impulses' work */
        C->E_impact -= dT;
        rc = rates(R, R->y, G, Gt, up);
    }
    double scale = 0;
    for (size_t i = k0; i < k1 && !rc; i++)
        if (C->role[i] == 2)
            scale = fmax(scale, fabs(um[i]));
    for (size_t i = k0; i < k1 && !rc; i++)
        if (C->role[i] == 2)
            rc = set_open(R, i, up[i] > 1e-10 * scale);
    for (size_t i = k0; i < k1 && !rc; i++) {
        if (!closing[i])
            continue;
        char name[200];
        snprintf(name, sizeof name, "%s:%s", m->cname[i], rest && i == j ? "rest" : "impact");
        R->sum->impacts++;
        rc = hs_int_event_row_lam(R, name, R->t, R->y, C->lam);
    }
    free(G);
    free(closing);
    return rc;
}

int hs_int_contact_event(hs_int_run *R, size_t e, hs_int_step_fate *fate)
{
    const hs_model *m = R->m;
    const hs_event *ev = &m->ev[e];
    int rc;
    (void)fate;
    if (ev->action == HS_EV_OPEN) {
        char name[200];
        R->sum->transitions++;
        snprintf(name, sizeof name, "%s:open", m->cname[ev->contact]);
        if ((rc = hs_int_event_row(R, name, R->t, R->y)) ||
            (rc = set_open(R, ev->contact, 1)))
            return rc;
    } else if ((rc = impact(R, ev->contact))) {
        return rc;
    }
    if ((rc = open_pulled(R, 1)) || (rc = hs_int_friction_settle(R)))
        return rc;
    return hs_int_events_restart(R);
}

void hs_int_contacts_free(hs_int_run *R)
{
    hs_int_contacts *C = &R->ct;
    free(C->hist);
    free(C->ratio);
    free(C->lam);
    free(C->e);
    free(C->role);
}
