/* The steppers holosim offers (integrate.h): the table every list of
 * methods is made from (the model file's and the command line's check, the
 * message naming the choices, `holosim help methods`, the tests' loops;
 * tests/cli_methods.sh checks the lists in --help, the man pages and the
 * README against it).  GSL's methods are described here; holosim's own
 * live in their files (dop853.c; rattle.c: rattle, rattle4, rattle6,
 * rattle8). */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../util/suggest.h"

/* The tolerances each stepper is handed, as a multiple of rtol and atol
 * (tol_factor).  GSL's controls bound the error of each step; the global
 * error is then about (steps) x (tolerance) x (growth of errors).  For
 * methods that take many steps at low order (rk2imp; msadams and msbdf,
 * which also restart at order 1) that reached 1000x the tolerance on
 * smooth problems with closed forms (a bead on a rotating wire, errors
 * growing as e^(2 omega t): rk2imp 9e-6, msbdf 3e-5 at rtol = atol = 1e-8;
 * tests/check_steppers.c).  Handed 1/1000 (rk2imp, msbdf) and 1/100
 * (msadams) of the tolerance they stay within 20x of it (1e-7, 1e-7,
 * 2e-7), as the other methods do (rk2 6e-8, rk4 1e-9).  rk1imp is first
 * order: its error is about sqrt(tolerance) whatever the factor, and
 * holosim(1) says so. */

#define GSL_METHOD(id, nm, ord, fl, tf, hp, ab, type) \
    static const hs_stepper id = { .name = nm, .order = ord, .flags = fl, .tol_factor = tf, \
                                   .helper = hp, .about = ab, .gsl = &type }

GSL_METHOD(rk2, "rk2", 2, 0, 1, NULL, "embedded Runge-Kutta (2, 3)",
           gsl_odeiv2_step_rk2);
GSL_METHOD(rk4, "rk4", 4, 0, 1, NULL, "classical Runge-Kutta, step doubling for the error",
           gsl_odeiv2_step_rk4);
GSL_METHOD(rkf45, "rkf45", 5, 0, 1, NULL, "embedded Runge-Kutta-Fehlberg (4, 5)",
           gsl_odeiv2_step_rkf45);
GSL_METHOD(rkck, "rkck", 5, 0, 1, NULL, "embedded Runge-Kutta Cash-Karp (4, 5)",
           gsl_odeiv2_step_rkck);
GSL_METHOD(rk8pd, "rk8pd", 8, 0, 1, NULL, "embedded Runge-Kutta Prince-Dormand (8, 9); "
           "the default", gsl_odeiv2_step_rk8pd);
GSL_METHOD(rk1imp, "rk1imp", 1, HS_STEP_IMPLICIT, 1, NULL, "Euler (first order: errors ~ "
           "sqrt(tolerance))", gsl_odeiv2_step_rk1imp);
GSL_METHOD(rk2imp, "rk2imp", 2, HS_STEP_IMPLICIT, 0.001, NULL, "Gaussian Runge-Kutta, "
           "one stage (midpoint)", gsl_odeiv2_step_rk2imp);
GSL_METHOD(rk4imp, "rk4imp", 4, HS_STEP_IMPLICIT, 1, NULL, "Gaussian Runge-Kutta, two "
           "stages", gsl_odeiv2_step_rk4imp);
static const hs_stepper bsimp = {
    .name = "bsimp", .order = 0, .flags = HS_STEP_IMPLICIT, .tol_factor = 1,
    .about = "Bulirsch-Stoer extrapolation (Bader-Deuflhard)",
    .gsl = &hs_int_bsimp_shifted, .tune = hs_int_bsimp_tune,
};
GSL_METHOD(msadams, "msadams", 12, HS_STEP_MULTISTEP, 0.01, &rk8pd, "Adams, orders 1 to "
           "12, functional iteration", gsl_odeiv2_step_msadams);
GSL_METHOD(msbdf, "msbdf", 5, HS_STEP_IMPLICIT | HS_STEP_MULTISTEP, 0.001, &rk4imp,
           "BDF, orders 1 to 5, for "
           "stiff models", gsl_odeiv2_step_msbdf);

/* holosim's own methods, each defined in a file of its own: dop853.c,
 * rattle.c (RATTLE and its compositions of order 4, 6, 8). */
extern const hs_stepper hs_int_step_dop853;
extern const hs_stepper hs_int_step_rattle, hs_int_step_rattle4, hs_int_step_rattle6,
    hs_int_step_rattle8;

const hs_stepper *const hs_steppers[] = {
    &rk2, &rk4, &rkf45, &rkck, &rk8pd, &rk1imp, &rk2imp, &rk4imp, &bsimp, &msadams, &msbdf,
    &hs_int_step_dop853, &hs_int_step_rattle, &hs_int_step_rattle4, &hs_int_step_rattle6,
    &hs_int_step_rattle8,
    NULL,
};

/* The method a model that names none runs (its line in the table says so). */
const hs_stepper *const hs_stepper_default = &rk8pd;

const hs_stepper *hs_stepper_find(const char *name)
{
    if (name && !*name)
        return hs_stepper_default;
    for (size_t i = 0; name && hs_steppers[i]; i++)
        if (strcmp(hs_steppers[i]->name, name) == 0)
            return hs_steppers[i];
    return NULL;
}

const char *hs_stepper_names_with(char *buf, size_t cap, unsigned flags)
{
    size_t len = 0;
    if (cap)
        buf[0] = '\0';
    for (size_t i = 0; hs_steppers[i] && len + 1 < cap; i++)
        if ((hs_steppers[i]->flags & flags) == flags)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? " " : "",
                                    hs_steppers[i]->name);
    return buf;
}

const char *hs_stepper_names(char *buf, size_t cap)
{
    return hs_stepper_names_with(buf, cap, 0);
}

const char *hs_stepper_hint(const char *name, char *buf, size_t cap)
{
    const char *cand[64];
    size_t n = 0;
    for (size_t i = 0; hs_steppers[i] && n < 64; i++)
        cand[n++] = hs_steppers[i]->name;
    /* a unique name it begins ('rk8' of rk8pd), else the nearest by edits */
    const char *near = NULL;
    size_t len = strlen(name), nprefix = 0;
    for (size_t i = 0; i < n; i++)
        if (len && strncmp(cand[i], name, len) == 0) {
            near = cand[i];
            nprefix++;
        }
    if (nprefix != 1)
        near = hs_nearest(name, cand, n);
    snprintf(buf, cap, near ? " (did you mean '%s'?)" : "", near);
    return buf;
}

int hs_stepper_check(const hs_model *m, hs_error *err)
{
    const hs_stepper *s = hs_stepper_find(m->set.method);
    if (s)
        return s->suits ? s->suits(m, err) : 0;
    char names[512], hint[64];
    int in_file = m->set.method_pos.src >= 0;
    hs_error_set(err, in_file ? HS_EXIT_MODEL : HS_EXIT_USAGE,
                 "unknown method '%s'%s; choose one of: %s", m->set.method,
                 hs_stepper_hint(m->set.method, hint, sizeof hint),
                 hs_stepper_names(names, sizeof names));
    if (in_file)
        hs_model_place(m, m->set.method_pos, err);
    return err->code;
}

/* Whether s declares an option read from setting i; its index, or -1. */
static long option_of(const hs_stepper *s, hs_numset i)
{
    for (size_t j = 0; j < s->noptions; j++)
        if (s->options[j].setting == i)
            return (long)j;
    return -1;
}

/* An error at the place of setting i: simulate.NAME in the file (exit 2),
 * else the caller's option (exit 1). */
static int setting_error(const hs_model *m, const hs_step_option *o, hs_error *err,
                         const char *fmt, const char *msg)
{
    hs_srcpos pos = hs_settings_pos(&m->set, o->setting);
    int in_file = pos.src >= 0;
    char label[64];
    if (in_file)
        snprintf(label, sizeof label, "simulate.%s", o->name);
    else
        snprintf(label, sizeof label, "%s", hs_optname(m->names, o->optname));
    hs_error_set(err, in_file ? HS_EXIT_MODEL : HS_EXIT_USAGE, fmt, label, msg);
    if (in_file)
        hs_model_place(m, pos, err);
    return err->code;
}

int hs_stepper_option_error(const hs_model *m, const hs_stepper *s, size_t j, hs_error *err,
                            const char *msg)
{
    return setting_error(m, &s->options[j], err, "%s: %s", msg);
}

/* The methods that declare an option read from setting i, one space apart. */
static const char *takers(char *buf, size_t cap, hs_numset i)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; hs_steppers[k] && len + 1 < cap; k++)
        if (option_of(hs_steppers[k], i) >= 0)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? " " : "",
                                    hs_steppers[k]->name);
    return buf;
}

int hs_stepper_options(const hs_model *m, const hs_stepper *s, double *val, hs_error *err)
{
    for (size_t k = 0; hs_steppers[k]; k++)          /* another method's option */
        for (size_t j = 0; j < hs_steppers[k]->noptions; j++) {
            const hs_step_option *o = &hs_steppers[k]->options[j];
            if (option_of(s, o->setting) >= 0 || isnan(hs_settings_num(&m->set, o->setting)))
                continue;
            char names[256], msg[512];
            snprintf(msg, sizeof msg, "%s methods (%s); '%s' %s (drop the %s, or choose one "
                     "of those)", o->who, takers(names, sizeof names, o->setting), s->name,
                     o->without, o->name);
            return setting_error(m, o, err, "%s is for the %s", msg);
        }
    for (size_t j = 0; j < s->noptions; j++) {
        const hs_step_option *o = &s->options[j];
        double x = hs_settings_num(&m->set, o->setting);
        if (isnan(x)) {
            val[j] = o->def;
            continue;
        }
        if (!(x > o->min && x <= o->max && isfinite(x))) {
            char msg[160];
            snprintf(msg, sizeof msg, "the %s must be %s", o->name, o->range);
            return hs_stepper_option_error(m, s, j, err, msg);
        }
        val[j] = x;
    }
    return 0;
}

void hs_stepper_print(FILE *f)
{
    for (size_t i = 0; hs_steppers[i]; i++) {
        const hs_stepper *s = hs_steppers[i];
        const char *kind = s->flags & HS_STEP_FIXED ? "fixed step"
                           : s->flags & HS_STEP_MULTISTEP ? "multistep"
                           : s->flags & HS_STEP_IMPLICIT ? "implicit" : "explicit";
        char order[16];
        if (s->order)
            snprintf(order, sizeof order, "%d", s->order);
        else
            snprintf(order, sizeof order, "var");
        fprintf(f, "%-9s order %-4s %-11s %s\n", s->name, order, kind, s->about);
    }
    for (size_t i = 0; hs_steppers[i]; i++)     /* the options, once per list */
        for (size_t j = 0; j < hs_steppers[i]->noptions; j++) {
            const hs_step_option *o = &hs_steppers[i]->options[j];
            if (i && hs_steppers[i - 1]->options == hs_steppers[i]->options)
                continue;
            char names[256];
            fprintf(f, "  option %s (%s: %s): %s\n", o->name, o->range,
                    takers(names, sizeof names, o->setting), o->help);
        }
}
