/* `holosim run --sensitivity p1,p2,...`: the motion with its forward
 * sensitivities to parameters (src/flow, hs_fl_sens_run), one CSV row per
 * output time: t, the coordinates, the velocities, the multipliers, then
 * for each parameter p in the order given dq/dp for every coordinate,
 * dq'/dp for every velocity and dlambda_c/dp for every constraint. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../flow/flow.h"
#include "../integrate/integrate.h"
#include "../io/fmt.h"

typedef struct sctx {
    const hs_model *m;
    size_t np;
    const char *path;
    FILE *out;                 /* NULL until the first row (a file: created then) */
    char **names;
    int failed, started;
    int precision;             /* significant digits; 17: the shortest exact */
} sctx;

static void put(sctx *c, double x, int first)
{
    char b[32];
    if (c->precision < 17)
        snprintf(b, sizeof b, "%.*g", c->precision, x == 0 ? 0.0 : x);   /* never -0 */
    else
        hs_fmt_double(b, x == 0 ? 0.0 : x);
    if (!first)
        fputc(',', c->out);
    fputs(b, c->out);
}

static int header(sctx *c)
{
    const hs_model *m = c->m;
    if (!c->out && !(c->out = fopen(c->path, "w"))) {
        fprintf(stderr, "holosim: cannot open '%s' for writing\n", c->path);
        return HS_EXIT_USAGE;
    }
    fputs("t", c->out);
    for (size_t i = 0; i < m->n; i++)
        fprintf(c->out, ",%s", m->qname[i]);
    for (size_t i = 0; i < m->n; i++)
        fprintf(c->out, ",%s", m->vname[i]);
    for (size_t j = 0; j < m->k; j++)
        fprintf(c->out, ",lambda_%s", m->cname[j]);
    for (size_t p = 0; p < c->np; p++) {
        for (size_t i = 0; i < m->n; i++)
            fprintf(c->out, ",d%s/d%s", m->qname[i], c->names[p]);
        for (size_t i = 0; i < m->n; i++)
            fprintf(c->out, ",d%s/d%s", m->vname[i], c->names[p]);
        for (size_t j = 0; j < m->k; j++)
            fprintf(c->out, ",dlambda_%s/d%s", m->cname[j], c->names[p]);
    }
    fputc('\n', c->out);
    return 0;
}

static int row(double t, const double *x, const double *lam, const double *S,
               const double *dlam, void *ctx)
{
    sctx *c = ctx;
    const hs_model *m = c->m;
    size_t n = m->n, k = m->k, np = c->np;
    int rc;
    if (!c->started && (rc = header(c)))
        return rc;
    c->started = 1;
    put(c, t, 1);
    for (size_t i = 0; i < 2 * n; i++)
        put(c, x[i], 0);
    for (size_t j = 0; j < k; j++)
        put(c, lam[j], 0);
    for (size_t p = 0; p < np; p++) {
        for (size_t i = 0; i < 2 * n; i++)
            put(c, S[i * np + p], 0);
        for (size_t j = 0; j < k; j++)
            put(c, dlam[j * np + p], 0);
    }
    fputc('\n', c->out);
    return ferror(c->out) ? (c->failed = HS_EXIT_USAGE) : 0;
}

/* What the sensitivities do not support, refused before anything runs. */
static int refuse(const hs_model *m, const opts *o, const char *method)
{
    const char *what = o->columns ? "--columns (the columns are fixed: see holosim(1), "
                                    "SENSITIVITIES)"
                     : o->events ? "--events"
                     : o->summary ? "--summary"
                     : o->ov.has_stabilize ? "--stabilize (the motion is integrated without "
                                             "stabilization)"
                     : o->ov.has_mode ? "--output-mode"
                     : m->ncontact ? "contacts (one-sided constraints)"
                     : m->nfriction ? "friction"
                     : m->nev ? "events (the model's or --stop-when)"
                     : m->ninput ? "inputs" : NULL;
    if (!what && o->ov.s.method[0] && strcmp(o->ov.s.method, method) != 0) {
        fprintf(stderr, "holosim: --sensitivity integrates with an explicit gsl_odeiv2 "
                "method: --method %s is not one (%s, rkf45, rkck, rk4, msadams ...)\n",
                o->ov.s.method, hs_stepper_default->name);
        return HS_EXIT_USAGE;
    }
    if (!what)
        return 0;
    fprintf(stderr, "holosim: --sensitivity does not support %s\n", what);
    return HS_EXIT_USAGE;
}

/* The comma-separated list into names (text copied): 0 or an exit code. */
static int split(const char *list, char ***names, size_t *np, char **text)
{
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    char **v = calloc(cap + 1, sizeof *v), *copy = malloc(strlen(list) + 1);
    if (!v || !copy) {
        free(v);
        free(copy);
        return hs_cli_nomem();
    }
    strcpy(copy, list);
    size_t c = 0;
    for (char *tok = copy, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        while (*tok == ' ')
            tok++;
        size_t len = strlen(tok);
        while (len && tok[len - 1] == ' ')
            tok[--len] = '\0';
        if (!*tok) {
            fprintf(stderr, "holosim: --sensitivity wants parameter names separated by "
                    "commas, got '%s'\n", list);
            free(v);
            free(copy);
            return HS_EXIT_USAGE;
        }
        v[c++] = tok;
    }
    *names = v;
    *np = c;
    *text = copy;
    return 0;
}

int hs_cli_run_sens(hs_model *m, const opts *o, const char *path)
{
    hs_error err;
    hs_error_init(&err);
    char **names = NULL, *text = NULL;
    size_t np = 0;
    int rc = split(o->sensitivity, &names, &np, &text);
    if (rc)
        return rc;
    hs_fl *f = hs_fl_new(m, &err);
    hs_fl_sens *s = f ? hs_fl_sens_new(f, (const char *const *)names, np, &err) : NULL;
    if (!s) {
        rc = hs_cli_fail(&err);
    } else if (!(rc = refuse(m, o, hs_fl_method(f)))) {
        if (!o->quiet && strcmp(m->set.method[0] ? m->set.method : hs_stepper_default->name,
                                hs_fl_method(f)) != 0)
            fprintf(stderr, "holosim: --sensitivity: integrating with %s (the model's "
                    "method %s is not an explicit gsl_odeiv2 one)\n", hs_fl_method(f),
                    m->set.method);
        sctx c = { m, np, path, path ? NULL : stdout, names, 0, 0, o->precision };
        double off = 0, dt = m->set.dt > 0 ? m->set.dt : (m->set.t_end - m->t0) / 1000;
        rc = hs_fl_sens_run(s, m->set.t_end, dt, row, &c, &off, &err);
        if (rc && !c.failed)
            hs_cli_fail(&err);
        else if (c.failed)
            fprintf(stderr, "holosim: cannot write the output\n");
        if (c.out && c.out != stdout && fclose(c.out) != 0 && !rc) {
            fprintf(stderr, "holosim: cannot write '%s'\n", path);
            rc = HS_EXIT_USAGE;
        } else if (c.out == stdout && fflush(stdout) != 0 && !rc) {
            rc = HS_EXIT_USAGE;
        }
        if (!o->quiet && off > 1e-8)
            fprintf(stderr, "holosim: warning: --sensitivity: the initial data are not "
                    "consistent for every value of the parameters (the derivative of the "
                    "constraints along d(q0, v0)/dp is %.3g, not 0): the sensitivities start "
                    "off the constraints' tangent space; write the initial data through "
                    "the parameters so that they stay consistent\n", off);
    }
    hs_fl_sens_free(s);
    hs_fl_free(f);
    free(text);
    free(names);
    return rc;
}
