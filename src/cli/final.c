/* `run --final COL,...` and `batch --final`: the columns whose value in
 * the last row written the summary shows (fields final_COL, io/summary.h),
 * looked up among the columns the run writes before anything runs, and
 * kept by a sink that passes every row on to the CSV's; and the summary
 * record of a run (the fields of io/summary.h from the integrator's
 * hs_summary). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../integrate/integrate.h"
#include "../io/sink.h"

void hs_cli_final_free(hs_cli_final *F)
{
    for (size_t j = 0; F->name && j < F->n; j++)
        free((char *)F->name[j]);
    free(F->idx);
    free(F->val);
    free(F->name);
    memset(F, 0, sizeof *F);
}

int hs_cli_final_init(hs_cli_final *F, const opts *o, const char *const *col, size_t ncol,
                      hs_error *err)
{
    memset(F, 0, sizeof *F);
    if (!o->final)
        return 0;
    size_t cap = hs_summary_nfinal_max(o->final);
    F->idx = calloc(cap, sizeof *F->idx);
    F->val = calloc(cap, sizeof *F->val);
    F->name = calloc(cap, sizeof *F->name);
    if (!F->idx || !F->val || !F->name) {
        hs_cli_final_free(F);
        return hs_error_nomem(err);
    }
    int rc = hs_summary_finals(o->final, col, ncol, &hs_cli_optnames, F->idx, &F->n, err);
    if (rc) {
        hs_cli_final_free(F);
        return rc;
    }
    for (size_t j = 0; j < F->n; j++)      /* copies: the columns may go first */
        if (!(F->name[j] = strdup(col[F->idx[j]]))) {
            hs_cli_final_free(F);
            return hs_error_nomem(err);
        }
    return 0;
}

int hs_cli_final_columns(hs_cli_final *F, const opts *o, const hs_model *m,
                         const char *columns, hs_error *err)
{
    memset(F, 0, sizeof *F);
    if (!o->final)
        return 0;
    hs_columns cols;
    int rc = hs_columns_select(m, columns, &cols, err);
    if (rc)
        return rc;
    const char **names = calloc(cols.n + 1, sizeof *names);
    if (!names) {
        hs_columns_free(&cols);
        return hs_error_nomem(err);
    }
    for (size_t j = 0; j < cols.n; j++)
        names[j] = cols.c[j].name;
    rc = hs_cli_final_init(F, o, names, cols.n, err);
    free(names);
    hs_columns_free(&cols);
    return rc;
}

void hs_cli_final_keep(hs_cli_final *F, const double *x)
{
    for (size_t j = 0; j < F->n; j++)
        F->val[j] = x[F->idx[j]];
    F->have = 1;
}

/* ---------- the sink that keeps the finals ---------- */

typedef struct keeper {
    hs_sink base;
    hs_sink *inner;
    hs_cli_final *F;
} keeper;

static void sync(keeper *k)
{
    k->base.rows = k->inner->rows;
    k->base.failed = k->inner->failed;
    k->base.err_no = k->inner->err_no;
}

static void k_header(hs_sink *s, const hs_columns *c)
{
    keeper *k = (keeper *)s;
    hs_sink_header(k->inner, c);
    sync(k);
}

static void k_row(hs_sink *s, const double *x, size_t n)
{
    keeper *k = (keeper *)s;
    long before = k->inner->rows;
    hs_sink_row(k->inner, x, n);
    if (k->inner->rows > before)           /* written: the last row so far */
        hs_cli_final_keep(k->F, x);
    sync(k);
}

static void k_event_row(hs_sink *s, const char *event, const double *x, size_t n)
{
    keeper *k = (keeper *)s;
    hs_sink_event_row(k->inner, event, x, n);
    sync(k);
}

static int k_close(hs_sink *s, int publish)
{
    keeper *k = (keeper *)s;
    int e = hs_sink_close(k->inner, publish);
    free(k);
    return e;
}

static const hs_sink_type keeper_type = { "final", k_header, k_row, k_event_row, k_close };

hs_sink *hs_cli_final_sink(hs_sink *inner, hs_cli_final *F)
{
    if (!inner || !F->n)
        return inner;
    keeper *k = calloc(1, sizeof *k);
    if (!k) {
        hs_sink_close(inner, 0);
        return NULL;
    }
    k->base.type = &keeper_type;
    k->base.tty = inner->tty;
    k->inner = inner;
    k->F = F;
    return &k->base;
}

/* ---------- the summary record ---------- */

void hs_cli_sumrow(hs_sumrow *r, const hs_summary *s, int rc, const hs_cli_final *F)
{
    hs_sumrow_init(r);
    r->exit = rc;
    r->integrated = s->steps || s->rows;
    r->steps = s->steps;
    r->nrhs = s->nrhs;
    r->rows = s->rows;
    r->t_reached = s->t_reached;
    r->max_G = s->max_G;
    r->max_Gdot = s->max_Gdot;
    r->max_ebal = s->max_ebal;
    r->max_pres = s->max_pres;
    r->wall = s->wall;
    r->impacts = s->impacts;
    r->transitions = s->transitions;
    r->t_rest = s->rested ? s->t_rest : (double)NAN;
    if (F) {
        r->nfinal = F->n;
        r->final_name = F->name;
        r->final = F->have ? F->val : NULL;
    }
}

/* run --summary FILE (cli.h): the header and the record. */
int hs_cli_summary_file(const char *path, hs_sumrow *r, const hs_model *m, int rc,
                        const hs_error *err, const char *stop)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "holosim: cannot write summary '%s': %s\n", path, strerror(errno));
        return HS_EXIT_USAGE;
    }
    /* the message on one line and without double quotes (a reader may take
     * the row as one line); the path exactly, quoted */
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", rc ? err->msg : stop);
    for (char *p = msg; *p; p++)
        if (*p == '"')
            *p = '\'';
        else if (*p == '\n' || *p == '\r')
            *p = ' ';
    r->model = m->file;
    r->message = msg;
    hs_summary_header(f, r, HS_SUM_FILE);
    hs_summary_record(f, r, HS_SUM_FILE);
    if (fclose(f) != 0) {
        fprintf(stderr, "holosim: cannot write summary '%s'\n", path);
        return HS_EXIT_USAGE;
    }
    return 0;
}
