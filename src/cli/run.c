/* `holosim run`: load, integrate, write the CSV and the summary.
 *
 * Nothing is clobbered: an output that is the model file or the other
 * output is refused before the model is read; -o and --summary are checked
 * for writing (without creating or truncating them) before the run; the
 * CSV file is created or truncated only when its first row is complete
 * (io/out.h), the summary only at the end of a run that started.  SIGINT,
 * SIGTERM and SIGHUP stop the run after the current step with the complete
 * rows written: exit 128 + the signal's number (130, 143, 129); a second
 * signal half a second or more after the first ends the process at once
 * (sooner, it is the same request delivered twice: timeout(1) signals its
 * command, then the command's process group, which holds the command). */
#define _XOPEN_SOURCE 700   /* realpath */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../include/holosim.h"
#include "../api/internal.h"
#include "../integrate/integrate.h"

volatile sig_atomic_t hs_cli_interrupted;   /* the number of the signal */

static struct timespec first_signal;      /* when hs_cli_interrupted was set */

static void on_signal(int sig)
{
    struct timespec now;                   /* clock_gettime: async-signal-safe */
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (hs_cli_interrupted) {              /* a second one */
        double dt = (double)(now.tv_sec - first_signal.tv_sec) +
                    1e-9 * (double)(now.tv_nsec - first_signal.tv_nsec);
        if (dt < 0.5)                      /* the first, delivered twice */
            return;
        signal(sig, SIG_DFL);              /* the default action, now */
        raise(sig);
        return;
    }
    first_signal = now;
    hs_cli_interrupted = sig;
}

/* SIGHUP ignored when holosim started (nohup) stays ignored; SIGINT is
 * caught even when ignored (a shell ignores it for a background job, and
 * `kill -INT` of that job must still stop it cleanly). */
void hs_cli_catch_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old, sa;
        if (sigs[i] == SIGHUP && sigaction(sigs[i], NULL, &old) == 0 &&
            old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static const char *signal_name(int sig)
{
    return sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGINT";
}

/* The inputs (the model, every --params file) and the outputs (files.c):
 * no output is an input or another output. */
static int check_coincide(const opts *o)
{
    int use_stdout = !o->output || strcmp(o->output, "-") == 0;
    if (o->events && strcmp(o->events, "-") == 0 && use_stdout) {
        fprintf(stderr, "holosim: --events - and the trajectory would both go to standard "
                "output: give the trajectory a file with -o, or the events one\n");
        return HS_EXIT_USAGE;
    }
    return hs_cli_check_files(o, NULL, NULL, "standard output (the CSV)",
                              o->output ? NULL : "-");
}

/* Writable, checked without creating or truncating anything: an existing
 * file opened for appending and closed; a new one needs a writable
 * directory (a read-only file system says so too). */
static int check_writable(const char *opt, const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    int e = errno;
    if (e == ENXIO)             /* a FIFO with no reader yet: nothing to check */
        return 0;
    if (e == ENOENT) {
        errno = 0;
        char *c = hs_cli_canon_path(path), *slash = c ? strrchr(c, '/') : NULL;
        if (!c && errno == ENOMEM)
            return hs_cli_nomem();
        if (slash) {
            *slash = '\0';
            e = access(c[0] ? c : "/", W_OK | X_OK) == 0 ? 0 : errno;
        }
        free(c);
        if (!slash)
            e = ENOENT;         /* its directory does not exist */
        if (!e)
            return 0;
    }
    if (strcmp(opt, "-o") == 0)
        fprintf(stderr, "holosim: cannot open '%s' for writing: %s\n", path, strerror(e));
    else if (strcmp(opt, "--events") == 0)
        fprintf(stderr, "holosim: cannot write the events file '%s': %s\n", path, strerror(e));
    else
        fprintf(stderr, "holosim: cannot write summary '%s': %s\n", path, strerror(e));
    return HS_EXIT_USAGE;
}

/* ---------- the summary ---------- */

static int write_summary(const char *path, const hs_model *m, const hs_summary *s, int rc,
                         const hs_error *err, int quiet, const hs_cli_final *F)
{
    char stop[700] = "";
    if (!rc && s->stopped_by)
        snprintf(stop, sizeof stop, "stopped by event '%s' (%.500s) at t=%.17g", s->stopped_by,
                 s->stop_text ? s->stop_text : "", s->t_reached);
    if (!quiet && stop[0])
        fprintf(stderr, "holosim: %s\n", stop);
    if (!quiet && s->rank0 < s->k)
        fprintf(stderr, "holosim: redundant constraints: rank of G_q is %zu of %zu at the "
                "start; lambda_* are the minimum-norm multipliers (least Euclidean norm of "
                "all that give the same reactions)\n", s->rank0, s->k);
    if (!quiet && s->nsingular)
        fprintf(stderr, "holosim: %ld near-singular evaluations passed with the "
                "rank-revealing solve (worst reciprocal condition of C %.3g)\n",
                s->nsingular, s->worst_rcond);
    if (!quiet && s->augmented)
        fprintf(stderr, "holosim: singular mass matrix: solved through [M G_q^T; G_q 0]\n");
    if (!quiet && (s->impacts || s->transitions)) {   /* contacts and friction */
        fprintf(stderr, "holosim: %ld impact%s, %ld other contact and friction transition%s",
                s->impacts, s->impacts == 1 ? "" : "s", s->transitions,
                s->transitions == 1 ? "" : "s");
        if (s->rested)
            fprintf(stderr, "; contact '%s' at rest from its accumulation point t=%.17g",
                    s->rest_contact, s->t_rest);
        fputc('\n', stderr);
    }
    if (!quiet)
        fprintf(stderr, "holosim: %ld steps, %ld rhs evaluations, %ld rows to t=%.6g; "
                "max |G| %.3g, max |Gdot| %.3g, max |energy_balance| %.3g, "
                "max |power_residual| %.3g; %.3f s\n", s->steps, s->nrhs, s->rows,
                s->t_reached, s->max_G, s->max_Gdot, s->max_ebal, s->max_pres, s->wall);
    if (!path)
        return 0;
    hs_sumrow r;
    hs_cli_sumrow(&r, s, rc, F);
    return hs_cli_summary_file(path, &r, m, rc, err, stop);
}

/* ---------- native kernels ---------- */

struct hs_native *hs_cli_native(const hs_model *m, const opts *o, double runs)
{
    char note[512];
    hs_native *h = hs_api_native(m, (int)o->native, runs, note, sizeof note);
    if (note[0] && !o->quiet)
        fprintf(stderr, "holosim: %s\n", note);
    return h;
}

/* ---------- the run, through the library ---------- */

/* What holosim_run's callbacks need: the CLI's sinks (the CSV behind
 * --final's keeper, the events file or animate's observer) fed with the
 * rows the library hands over, so the formatting stays io/'s. */
typedef struct cli_run {
    const hs_model *m;
    const opts *o;
    const char *columns;
    hs_sink *sink, *evs;
    int write_failed;              /* the CSV failed: the run was told to stop */
    int nomem;
} cli_run;

/* The header: the columns (with their kinds, which a sink may read)
 * selected again from the model, as the run selected them. */
static int cli_header(void *ctx, const char *const *names, size_t ncols)
{
    cli_run *c = ctx;
    (void)names;
    (void)ncols;
    hs_error e;
    hs_error_init(&e);
    hs_columns cols;
    if (hs_columns_select(c->m, c->columns, &cols, &e)) {
        c->nomem = 1;              /* the run's own selection succeeded */
        return 1;
    }
    hs_sink_header(c->sink, &cols);
    if (c->evs)
        hs_sink_header(c->evs, &cols);
    hs_columns_free(&cols);
    return 0;
}

/* A row to the CSV; a failed write ends the run after its step, as the
 * integrator ends it on a failed sink. */
static int cli_row(void *ctx, const double *row, size_t n)
{
    cli_run *c = ctx;
    hs_sink_row(c->sink, row, n);
    if (c->sink->failed)
        c->write_failed = 1;
    return c->sink->failed;
}

static int cli_event(void *ctx, const char *event, const double *row, size_t n)
{
    cli_run *c = ctx;
    hs_sink_event_row(c->evs, event, row, n);
    return 0;
}

/* The run's messages on stderr, unless the options silence them. */
static void cli_message(void *ctx, int kind, const char *text)
{
    const cli_run *c = ctx;
    if ((kind == HOLOSIM_MSG_REPORT && c->o->quiet_projection) ||
        (kind == HOLOSIM_MSG_NOTE && c->o->quiet))
        return;
    fputs(text, stderr);
}

static void import_summary(hs_summary *s, const holosim_run_summary *p)
{
    *s = (hs_summary){
        .steps = p->steps, .nrhs = p->nrhs, .rows = p->rows,
        .projections = p->projections, .splits = p->splits,
        .max_G = p->max_G, .max_Gdot = p->max_Gdot,
        .max_ebal = p->max_energy_balance, .max_pres = p->max_power_residual,
        .t_reached = p->t_reached, .wall = p->wall, .events = p->events,
        .stopped_by = p->stopped_by, .stop_text = p->stop_text,
        .impacts = p->impacts, .transitions = p->transitions,
        .rested = p->rested, .t_rest = p->t_rest, .rest_contact = p->rest_contact,
        .k = p->k, .rank0 = p->rank0, .nrobust = p->nrobust, .nsingular = p->nsingular,
        .worst_rcond = p->worst_rcond, .augmented = p->augmented,
    };
}

/* holosim_run on m with the command line's options, the rows to c's
 * sinks: 0, or the exit code with *herr set (lib 1: the library's error,
 * its text as printed) or e set (lib 0). */
static int run_library(hs_model *m, cli_run *c, hs_summary *sum, holosim_error *herr,
                       hs_error *e, int *lib)
{
    const opts *o = c->o;
    holosim_run_options ho;
    holosim_run_options_init(&ho);
    holosim_run_summary ps;
    memset(&ps, 0, sizeof ps);
    ho.columns = c->columns;
    ho.native = (int)o->native;
    ho.stop = &hs_cli_interrupted;
    ho.header = cli_header;
    ho.header_ctx = c;
    ho.events = c->evs ? cli_event : NULL;
    ho.events_ctx = c;
    ho.message = cli_message;
    ho.message_ctx = c;
    ho.summary = &ps;
    /* AUTO shows the line unless the projection report is silenced or the
     * CSV itself goes to a terminal (integrate.h) */
    ho.progress = o->progress ? HOLOSIM_PROGRESS_ON
                : o->quiet || o->quiet_projection || c->sink->tty ? HOLOSIM_PROGRESS_OFF
                                                                   : HOLOSIM_PROGRESS_AUTO;
    ho.no_residuals = o->quiet && !o->summary;
    *lib = 0;
    holosim_model *h = hs_api_adopt(m);
    if (!h)
        return hs_error_nomem(e);
    holosim_result *r = holosim_run(h, &ho, cli_row, c, herr);
    int ok = r != NULL;
    holosim_result_free(r);
    holosim_model_free(h);
    import_summary(sum, &ps);
    if (c->nomem)
        return hs_error_nomem(e);
    if (ok || (c->write_failed && herr->code == HOLOSIM_ESTOPPED))
        return 0;                  /* a failed CSV: hs_sink_finish says so */
    *lib = 1;
    hs_error_set(e, herr->code, "%s", herr->message);
    snprintf(e->file, sizeof e->file, "%s", herr->file);
    e->line = herr->line;
    e->column = herr->column;
    return e->code;
}

/* ---------- the command ---------- */

/* The run itself, on a loaded model whose outputs are checked (cli.h). */
int hs_cli_run_model(hs_model *m, const opts *o, const char *path, FILE *out,
                     const char *columns)
{
    hs_error err;
    hs_error_init(&err);
    /* the sink creates no file before its first row: a run that fails
     * earlier leaves an existing file as it was */
    hs_sink_args sa = { .f = out, .path = path, .precision = o->precision, .model = m };
    hs_sink *sink = hs_sink_open(NULL, &sa, &err);
    if (!sink)
        return hs_cli_fail(&err);
    return hs_cli_run_model_to(m, o, sink, NULL, columns);
}

int hs_cli_run_model_to(hs_model *m, const opts *o, hs_sink *sink, hs_sink_fn *spy,
                        const char *columns)
{
    hs_error err;
    hs_error_init(&err);
    hs_cli_catch_signals();
    int ev_stdout = o->events && strcmp(o->events, "-") == 0;
    hs_sink_args ea = { .f = ev_stdout ? stdout : NULL, .path = ev_stdout ? NULL : o->events,
                        .precision = o->precision, .events = 1, .model = m };
    hs_cli_final F;               /* --final: looked up before anything runs */
    int rc = hs_cli_final_columns(&F, o, m, columns, &err);
    if (rc) {
        hs_sink_close(sink, 0);
        hs_sink_close(spy ? &spy->base : NULL, 0);
        return hs_cli_fail(&err);
    }
    sink = hs_cli_final_sink(sink, &F);        /* NULL: sink closed, out of memory */
    hs_sink *evs = sink && o->events ? hs_sink_open(NULL, &ea, &err) : NULL;
    if (!sink || (o->events && !evs)) {
        hs_sink_close(sink, 0);
        hs_sink_close(spy ? &spy->base : NULL, 0);
        hs_cli_final_free(&F);
        return err.code ? hs_cli_fail(&err) : hs_cli_nomem();
    }
    if (spy) {                              /* the events file behind the observer */
        spy->next = evs;
        evs = &spy->base;
    }
    cli_run c = { .m = m, .o = o, .columns = columns, .sink = sink, .evs = evs };
    hs_summary sum;
    holosim_error herr;
    int lib;
    rc = run_library(m, &c, &sum, &herr, &err, &lib);
    rc = hs_sink_finish(sink, "the CSV", 0, rc, &err);
    rc = hs_sink_finish(evs, "the events CSV", !rc, rc, &err);   /* none: the header alone */
    int sig = hs_cli_interrupted;
    if (rc == 130 && sig) {                 /* 128 + the signal's number */
        hs_error_append(&err, " (%s)", signal_name(sig));
        rc = hs_error_recode(&err, 128 + sig);
        lib = 0;                            /* (a message without a position) */
    }
    int src = write_summary(o->summary, m, &sum, rc, &err, o->quiet || rc, &F);
    hs_cli_final_free(&F);
    if (rc && lib)
        fputs(herr.text, stderr);           /* as hs_cli_fail prints it */
    else if (rc)
        hs_cli_fail(&err);
    return rc ? rc : src;
}

int hs_cli_run(int argc, char **argv)
{
    opts o;
    int rc;
    if (hs_cli_begin(argc, argv, hs_usage_run, CMD_RUN, &o, &rc) ||
        hs_cli_one_model(&o, hs_usage_run, "run", &rc))
        return rc;
    if ((rc = check_coincide(&o)) ||
        (o.final && !o.summary &&
         (rc = hs_cli_usage_error(hs_usage_run, "%s names fields of the summary: "
                                  "give --summary FILE too", "--final")))) {
        hs_cli_free_opts(&o);
        return rc;
    }
    if (o.sensitivity)
        o.ov.dense = 1;               /* the variational system is dense */
    hs_model *m = hs_cli_load(&o, &rc);
    if (!m)
        return rc;
    if (hs_cli_check_method(m, &rc)) {
        hs_cli_free_opts(&o);
        return rc;
    }
    /* -o and --summary writable before anything runs; neither is created
     * or truncated here (the CSV at its first row, the summary at the end) */
    const char *path = o.output && strcmp(o.output, "-") != 0 ? o.output : NULL;
    if ((path && (rc = check_writable("-o", path))) ||
        (o.summary && (rc = check_writable("--summary", o.summary))) ||
        (o.events && strcmp(o.events, "-") != 0 &&
         (rc = check_writable("--events", o.events)))) {
        hs_model_free(m);
        hs_cli_free_opts(&o);
        return rc;
    }
    rc = o.sensitivity ? hs_cli_run_sens(m, &o, path)
                       : hs_cli_run_model(m, &o, path, path ? NULL : stdout, o.columns);
    hs_model_free(m);
    hs_cli_free_opts(&o);
    return rc;
}
