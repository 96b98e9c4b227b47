/* `holosim batch`: many points of a parameter grid in one process, the
 * engine of scripts/sweep.
 *
 *   holosim batch MODEL --points FILE.tsv --outdir DIR --status-dir SDIR
 *                 [RUN-OPTIONS...]
 *
 * FILE.tsv: a header `name<TAB>P1<TAB>...`, then a row `NAME<TAB>v1...` per
 * point (values: whatever --set takes).  The model file is read once; each
 * point applies its values after the command line's --set/--params (so
 * derived parameters follow) and runs with its own run state.  Per point:
 * DIR/NAME.csv and SDIR/NAME.status are removed, the CSV is written as
 * DIR/.NAME.csv.part and renamed to DIR/NAME.csv when the run has ended
 * with at least one row (a run that failed during integration keeps its
 * rows), then SDIR/NAME.status is written (through a .part and a rename):
 * one line `exit,steps,rhs_evals,rows,t_reached,max_G,max_Gdot,
 * max_energy_balance,max_power_residual,wall_s,message` (the nine metrics
 * empty for a point that never integrated; the message, the first line of
 * what `holosim run` would print on stderr, in double quotes).  Then
 * `NAME<TAB>EXIT` on stdout.  Exit 0 when every point succeeded, 1
 * otherwise; on SIGINT/SIGTERM/SIGHUP the point being run is abandoned
 * (its .part removed, no status) and the exit is 128 + the signal. */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../integrate/integrate.h"

static volatile sig_atomic_t batch_signal;

static void on_signal(int sig)
{
    batch_signal = sig;
    hs_cli_interrupted = 1;
}

/* The whole of a file ("-" is refused: the points come from a file too). */
static char *slurp(const char *path, hs_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        hs_error_set(err, HS_EXIT_USAGE, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len - 1, f);
        if (len + 1 < cap)
            break;
        char *nb = realloc(buf, cap *= 2);
        if (!nb)
            free(buf);
        buf = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        hs_error_set(err, HS_EXIT_USAGE, "cannot read '%s'", path);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/* Split a line in place at tabs into at most cap fields; their count. */
static size_t split_tabs(char *line, char **field, size_t cap)
{
    size_t n = 0;
    for (char *p = line; n < cap;) {
        field[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

/* The first line of the error as `holosim run` prints it, in CSV quotes. */
static void quoted_message(const hs_error *e, char *out, size_t cap)
{
    char line[sizeof e->msg + sizeof e->file + 64];
    if (e->file[0] && e->line > 0)
        snprintf(line, sizeof line, "%s:%d:%d: error: %s", e->file, e->line, e->column, e->msg);
    else if (e->file[0])
        snprintf(line, sizeof line, "%s: error: %s", e->file, e->msg);
    else
        snprintf(line, sizeof line, "holosim: error: %s", e->msg);
    size_t n = 0;
    out[n++] = '"';
    for (const char *p = line; *p && *p != '\n' && n + 3 < cap; p++) {
        if (*p == '"')
            out[n++] = '"';
        out[n++] = *p == '\t' || *p == '\r' ? ' ' : *p;
    }
    out[n++] = '"';
    out[n] = '\0';
}

/* Write SDIR/NAME.status through a .part and a rename; 0 or -1. */
static int write_status(const char *sdir, const char *name, int rc, const hs_summary *s,
                        const hs_error *err)
{
    char part[4096], path[4096], msg[2400] = "";
    snprintf(part, sizeof part, "%s/.%s.status.part", sdir, name);
    snprintf(path, sizeof path, "%s/%s.status", sdir, name);
    FILE *f = fopen(part, "w");
    if (!f)
        return -1;
    fprintf(f, "%d,", rc);
    if (s->steps || s->rows)
        fprintf(f, "%ld,%ld,%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.6f,", s->steps, s->nrhs,
                s->rows, s->t_reached, s->max_G, s->max_Gdot, s->max_ebal, s->max_pres,
                s->wall);
    else
        fputs(",,,,,,,,,", f);
    if (rc)
        quoted_message(err, msg, sizeof msg);
    fprintf(f, "%s\n", msg);
    if (fclose(f) != 0 || rename(part, path) != 0) {
        remove(part);
        return -1;
    }
    return 0;
}

typedef struct batch {
    opts *o;
    const char *text;          /* the model file, read once */
    char **pname;              /* [np] the grid's parameter names */
    size_t np;
} batch;

/* One point: load with its values, run into DIR/.NAME.csv.part, rename,
 * status.  Returns the point's exit code (128 + signal when interrupted). */
static int run_point(batch *B, const char *name, char **val)
{
    opts *o = B->o;
    char part[4096], csv[4096];
    snprintf(part, sizeof part, "%s/.%s.csv.part", o->outdir, name);
    snprintf(csv, sizeof csv, "%s/%s.csv", o->outdir, name);
    remove(csv);
    char st[4096];
    snprintf(st, sizeof st, "%s/%s.status", o->statusdir, name);
    remove(st);
    hs_error err;
    hs_error_init(&err);
    hs_params *pp = &o->params;        /* the command line's, then the point's */
    size_t n0 = pp->n;
    hs_summary sum;
    memset(&sum, 0, sizeof sum);
    int rc = 0;
    for (size_t j = 0; j < B->np && !rc; j++)
        rc = hs_params_add(pp, B->pname[j], strlen(B->pname[j]), val[j], &err);
    hs_overrides ov = o->ov;
    hs_model *m = NULL;
    if (!rc) {
        hs_params_apply(pp, &ov);
        m = hs_model_load_string(o->model, B->text, &ov, &err);
        rc = m ? 0 : err.code ? err.code : HS_EXIT_MODEL;
    }
    if (m) {
        hs_run_opts ro = { NULL, part, o->columns, o->precision, NULL, 0, &hs_cli_interrupted };
        rc = hs_run(m, &ro, &sum, &err);
        hs_model_free(m);
    }
    for (size_t j = n0; j < pp->n; j++) {    /* back to the command line's */
        free(pp->name[j]);
        free(pp->text[j]);
    }
    pp->n = n0;
    if (batch_signal) {
        remove(part);
        return 128 + batch_signal;
    }
    if (sum.rows > 0 && access(part, F_OK) == 0) {
        if (rename(part, csv) != 0 && !rc) {
            hs_error_init(&err);
            rc = hs_error_set(&err, HS_EXIT_USAGE, "cannot rename '%s' to '%s': %s", part,
                              csv, strerror(errno));
        }
    } else {
        remove(part);
    }
    if (write_status(o->statusdir, name, rc, &sum, &err) != 0) {
        fprintf(stderr, "holosim: batch: cannot write the status of '%s' in '%s'\n", name,
                o->statusdir);
        return rc ? rc : HS_EXIT_USAGE;
    }
    printf("%s\t%d\n", name, rc);
    fflush(stdout);
    return rc;
}

/* Every point of the points file, in order. */
static int run_points(batch *B, char *pts)
{
    char *save = NULL, *line = strtok_r(pts, "\n", &save);
    if (!line)
        return hs_cli_usage_error(hs_usage_batch, "batch: the points file '%s' is empty",
                                  B->o->points);
    size_t cap = 1;
    for (const char *p = line; *p; p++)
        cap += *p == '\t';
    char **head = calloc(cap, sizeof *head), **f = calloc(cap + 1, sizeof *f);
    int worst = 0;
    if (!head || !f) {
        free(head);
        free(f);
        return hs_cli_usage_error("", "%s", "out of memory");
    }
    size_t nh = split_tabs(line, head, cap);
    B->pname = head + 1;
    B->np = nh - 1;
    int bad_header = strcmp(head[0], "name") != 0;
    if (bad_header)
        worst = hs_cli_usage_error(hs_usage_batch, "batch: the points file '%s' must start "
                                   "with a header 'name<TAB>PARAM...'", B->o->points);
    for (long row = 2; !bad_header && (line = strtok_r(NULL, "\n", &save)); row++) {
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
            line[len - 1] = '\0';
        if (!line[0])
            continue;
        size_t nf = split_tabs(line, f, cap + 1);
        if (nf != nh || !f[0][0] || f[0][0] == '.' || strchr(f[0], '/')) {
            fprintf(stderr, "holosim: batch: %s:%ld: expected a name (not starting with '.', "
                    "no '/') and %zu values\n", B->o->points, row, nh - 1);
            worst = HS_EXIT_USAGE;
            break;
        }
        int rc = run_point(B, f[0], f + 1);
        if (rc > 128) {
            worst = rc;
            break;
        }
        if (rc)
            worst = 1;
    }
    free(head);
    free(f);
    return worst;
}

int hs_cli_batch(int argc, char **argv)
{
    opts o;
    int rc = hs_cli_parse_opts(argc, argv, hs_usage_batch, CMD_BATCH, &o);
    if (rc) {
        hs_cli_free_opts(&o);
        return rc < 0 ? 0 : rc;
    }
    const char *missing = !o.model ? "MODEL" : !o.points ? "--points FILE"
                        : !o.outdir ? "--outdir DIR" : !o.statusdir ? "--status-dir DIR" : NULL;
    if (missing || o.npos || strcmp(o.model, "-") == 0) {
        hs_cli_free_opts(&o);
        return hs_cli_usage_error(hs_usage_batch, "batch: %s",
                                  missing ? (!o.model ? "missing MODEL" : !o.points
                                             ? "missing --points FILE" : !o.outdir
                                             ? "missing --outdir DIR" : "missing --status-dir DIR")
                                  : o.npos ? "more than one MODEL" : "MODEL must be a file");
    }
    hs_error err;
    hs_error_init(&err);
    char *text = slurp(o.model, &err), *pts = text ? slurp(o.points, &err) : NULL;
    if (!text || !pts) {
        free(text);
        hs_cli_free_opts(&o);
        return hs_cli_fail(&err);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    batch B = { &o, text, NULL, 0 };
    rc = run_points(&B, pts);
    free(pts);
    free(text);
    hs_cli_free_opts(&o);
    return rc;
}
