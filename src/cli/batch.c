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
 * DIR/.NAME.csv.PID.part and renamed to DIR/NAME.csv when the run has ended
 * with at least one row (a run that failed during integration keeps its
 * rows), then SDIR/NAME.status is written (through a .part and a rename):
 * one line `exit,steps,rhs_evals,rows,t_reached,max_G,max_Gdot,
 * max_energy_balance,max_power_residual,wall_s,message` (the nine metrics
 * empty for a point that never integrated; the message, the first line of
 * what `holosim run` would print on stderr, in double quotes).  Then
 * `NAME<TAB>EXIT` on stdout.  Exit 0 when every point succeeded, 1
 * otherwise; on SIGINT/SIGTERM/SIGHUP the point being run is abandoned
 * (its .part removed, no status) and the exit is 128 + the signal.
 * --jobs N: N worker processes take the points in turn (the model text and
 * the points are read before they fork). */
#define _DEFAULT_SOURCE         /* MAP_ANONYMOUS (POSIX.1-2024, not -2008) */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../integrate/integrate.h"
#include "../util/map.h"

static volatile sig_atomic_t batch_signal;

static void on_signal(int sig)
{
    batch_signal = sig;
    hs_cli_interrupted = 1;
}

/* The limits of `holosim run` (a model file, see hs_ytree_load) and of a
 * points file: 1,000,000 points of a few values each. */
#define MAX_MODEL_BYTES ((size_t)64 << 20)
#define MAX_POINTS_BYTES ((size_t)256 << 20)

/* The whole of a file, at most max bytes ("-" is refused: the points come
 * from a file too); what names it in messages. */
static char *slurp(const char *path, size_t max, const char *what, size_t *lenp, hs_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        hs_error_set(err, HS_EXIT_USAGE, "cannot read %s '%s': %s", what, path, strerror(errno));
        return NULL;
    }
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    int big = 0;
    while (buf) {
        len += fread(buf + len, 1, cap - len - 1, f);
        if (len > max) {                  /* more than max bytes: stop reading */
            big = 1;
            break;
        }
        if (len + 1 < cap)
            break;
        char *nb = realloc(buf, cap *= 2);
        if (!nb)
            free(buf);
        buf = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad || big) {
        free(buf);
        if (big)
            hs_error_set(err, what[0] == 'm' ? HS_EXIT_MODEL : HS_EXIT_USAGE,
                         "%s: %s file larger than %zu MiB", path, what, max >> 20);
        else
            hs_error_set(err, HS_EXIT_USAGE, "cannot read %s '%s'", what, path);
        return NULL;
    }
    buf[len] = '\0';
    if (lenp)
        *lenp = len;
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

/* The first line of text (tabs and carriage returns as blanks). */
static void first_line(const char *line, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = line; *p && *p != '\n' && n + 1 < cap; p++)
        out[n++] = *p == '\t' || *p == '\r' ? ' ' : *p;
    out[n] = '\0';
}

/* The first line of the error as `holosim run` prints it. */
static void error_line(const hs_error *e, char *out, size_t cap)
{
    char line[sizeof e->msg + sizeof e->file + 64];
    if (e->file[0] && e->line > 0)
        snprintf(line, sizeof line, "%s:%d:%d: error: %s", e->file, e->line, e->column, e->msg);
    else if (e->file[0])
        snprintf(line, sizeof line, "%s: error: %s", e->file, e->msg);
    else
        snprintf(line, sizeof line, "holosim: error: %s", e->msg);
    first_line(line, out, cap);
}

/* DIR/PREFIX NAME SUFFIX, however long (malloc'd; NULL: out of memory): a
 * path is never cut, so DIR/m.yaml.csv cannot become DIR/m.yaml. */
static char *point_path(const char *dir, const char *prefix, const char *name,
                        const char *suffix)
{
    size_t len = strlen(dir) + strlen(prefix) + strlen(name) + strlen(suffix) + 32;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/%s%s%s", dir, prefix, name, suffix);
    return p;
}

/* Write SDIR/NAME.status through a .part and a rename: the summary's
 * record (io/summary.h) from exit on; 0 or -1. */
static int write_status(const char *sdir, const char *name, int rc, hs_sumrow *r,
                        const char *stopped_by, const char *stop_text, const hs_error *err)
{
    char sfx[48], msg[2400] = "";
    snprintf(sfx, sizeof sfx, ".status.%ld.part", (long)getpid());
    char *part = point_path(sdir, ".", name, sfx), *path = point_path(sdir, "", name, ".status");
    FILE *f = part && path ? fopen(part, "w") : NULL;
    if (!f) {
        free(part);
        free(path);
        return -1;
    }
    if (rc)
        error_line(err, msg, sizeof msg);
    else if (stopped_by) {        /* what `run` says of a run an event ended */
        char stop[700];
        snprintf(stop, sizeof stop, "stopped by event '%s' (%.500s) at t=%.17g", stopped_by,
                 stop_text ? stop_text : "", r->t_reached);
        first_line(stop, msg, sizeof msg);
    }
    r->message = msg;
    hs_summary_record(f, r, HS_SUM_STATUS);
    int rc2 = 0;
    if (fclose(f) != 0 || rename(part, path) != 0) {
        remove(part);
        rc2 = -1;
    }
    free(part);
    free(path);
    return rc2;
}

typedef struct batch {
    opts *o;
    const char *text;          /* the model file, read once */
    char **pname;              /* [np] the grid's parameter names */
    size_t np;
    size_t npts, stride;       /* points; fields per row in the rows array */
    hs_model *base;            /* the model kept for hs_model_repoint */
    hs_native *native;         /* its native kernels (NULL: the VM) */
    int native_tried;
    hs_native *own_native;     /* those of the last point loaded apart */
    double *x;                 /* [np] a point's values */
} batch;

/* The grid values as numbers (all of them plain numbers), or -1. */
static int numeric(const batch *B, char **val, double *x)
{
    for (size_t j = 0; j < B->np; j++)
        if (hs_cli_parse_double(val[j], &x[j]))
            return -1;
    return 0;
}

/* The model at this point: the kept model moved to the point's values
 * (derived once, the programs and native kernels shared), or, for the
 * first point and any point that needs it (a value that is an expression,
 * an error to report with its position), a full load with the point's
 * values as --set.  NULL with *rc and err set when that fails. */
static hs_model *point_model(batch *B, char **val, int *rc, hs_error *err)
{
    opts *o = B->o;
    int num = numeric(B, val, B->x) == 0;
    if (B->base && num &&
        hs_model_repoint(B->base, (const char *const *)B->pname, B->x, B->np) == 0) {
        *rc = 0;
        return B->base;
    }
    hs_params *pp = &o->params;        /* the command line's, then the point's */
    size_t n0 = pp->n;
    *rc = 0;
    for (size_t j = 0; j < B->np && !*rc; j++)
        *rc = hs_params_add(pp, B->pname[j], strlen(B->pname[j]), val[j], err);
    hs_overrides ov = o->ov;
    ov.keep = (const char *const *)B->pname;   /* what varies stays an input: every */
    ov.nkeep = B->np;                          /* point has the same programs */
    hs_model *m = NULL;
    if (!*rc) {
        hs_params_apply(pp, &ov);
        m = hs_model_load_string(o->model, B->text, &ov, err);
        *rc = m ? 0 : err->code ? err->code : HS_EXIT_MODEL;
    }
    for (size_t j = n0; j < pp->n; j++) {    /* back to the command line's */
        free(pp->name[j]);
        free(pp->text[j]);
    }
    pp->n = n0;
    if (m && num && !B->base)
        B->base = m;                          /* kept for the points to come */
    return m;
}

/* A point's run of the loaded model m into part (the finals looked up
 * first, into F); the exit code. */
static int run_one(batch *B, hs_model *m, const char *part, hs_cli_final *F,
                   hs_summary *sum, hs_error *err)
{
    opts *o = B->o;
    int rc = hs_cli_final_columns(F, o, m, o->columns, err);
    if (rc)
        return rc;
    hs_sink_args sa = { .path = part, .precision = o->precision, .model = m };
    hs_run_opts ro = { .out = hs_cli_final_sink(hs_sink_open(NULL, &sa, err), F),
                       .columns = o->columns, .precision = o->precision,
                       .progress = HS_PROGRESS_OFF, .stop = &hs_cli_interrupted };
    /* the same programs at every point: one native build serves all */
    if (m != B->base || !B->native_tried) {
        hs_native *nat = hs_cli_native(m, o, (double)(B->npts > 1 ? B->npts : 1));
        if (m == B->base) {
            B->native = nat;
            B->native_tried = 1;
        } else {
            hs_native_free(B->own_native);
            B->own_native = nat;
        }
    }
    ro.native = m == B->base ? B->native : B->own_native;
    rc = ro.out ? hs_run(m, &ro, sum, err) : err->code ? err->code : hs_error_nomem(err);
    return hs_sink_finish(ro.out, "the CSV", 0, rc, err);
}

/* --final's columns looked up once, before any point runs, in the first
 * point's model (every point's run has the same columns): an unknown one
 * fails the batch with one message and exit 2, not every point.  A first
 * point that does not load is left to report itself. */
static int check_finals(batch *B, char **rows)
{
    opts *o = B->o;
    if (!o->final || !B->npts)
        return 0;
    hs_error err;
    hs_error_init(&err);
    int rc;
    hs_model *m = point_model(B, rows + 1, &rc, &err);
    if (!m)
        return 0;
    hs_cli_final F;
    if (o->sensitivity) {
        rc = hs_cli_sens_finals(m, o, &err);
    } else {
        rc = hs_cli_final_columns(&F, o, m, o->columns, &err);
        hs_cli_final_free(&F);
    }
    if (m != B->base)
        hs_model_free(m);
    return rc ? hs_cli_fail(&err) : 0;
}

/* One point: load with its values, run into DIR/.NAME.csv.PID.part, rename,
 * status.  Returns the point's exit code (128 + signal when interrupted). */
static int run_point(batch *B, const char *name, char **val)
{
    opts *o = B->o;
    /* the process in the part's name: two processes that run one point (a
     * Slurm job submitted twice) each write their own, and the last rename wins */
    char sfx[48];
    snprintf(sfx, sizeof sfx, ".csv.%ld.part", (long)getpid());
    char *part = point_path(o->outdir, ".", name, sfx), *csv = point_path(o->outdir, "", name, ".csv"),
         *st = point_path(o->statusdir, "", name, ".status");
    if (!part || !csv || !st) {
        free(part);
        free(csv);
        free(st);
        return hs_cli_nomem();
    }
    remove(csv);
    remove(st);
    free(st);
    hs_error err;
    hs_error_init(&err);
    hs_summary sum;
    memset(&sum, 0, sizeof sum);
    hs_cli_final F;
    memset(&F, 0, sizeof F);
    hs_sumrow r;
    hs_sumrow_init(&r);
    int rc, sens = 0;
    hs_model *m = point_model(B, val, &rc, &err);
    if (m && o->sensitivity) {
        sens = 1;
        rc = hs_cli_sens_point(m, o, part, &F, &r, &err);
        if (m != B->base)
            hs_model_free(m);
    } else if (m) {
        rc = run_one(B, m, part, &F, &sum, &err);
        if (m != B->base)
            hs_model_free(m);
    }
    if (batch_signal) {
        remove(part);
        free(part);
        free(csv);
        hs_cli_final_free(&F);
        return 128 + batch_signal;
    }
    if (!sens)
        hs_cli_sumrow(&r, &sum, rc, &F);
    if (!F.n && o->final)              /* never looked up: empty fields all the same */
        r.nfinal = hs_summary_nfinal_max(o->final);
    if ((sens ? r.rows : sum.rows) > 0 && access(part, F_OK) == 0) {
        if (rename(part, csv) != 0 && !rc) {
            hs_error_init(&err);
            rc = hs_error_set(&err, HS_EXIT_USAGE, "cannot rename '%s' to '%s': %s", part,
                              csv, strerror(errno));
        }
    } else {
        remove(part);
    }
    free(part);
    free(csv);
    r.exit = rc;
    int wst = write_status(o->statusdir, name, rc, &r, sum.stopped_by, sum.stop_text, &err);
    hs_cli_final_free(&F);
    if (wst != 0) {
        fprintf(stderr, "holosim: batch: cannot write the status of '%s' in '%s'\n", name,
                o->statusdir);
        return rc ? rc : HS_EXIT_USAGE;
    }
    char line[4200];                 /* one write: workers share stdout */
    int len = snprintf(line, sizeof line, "%s\t%d\n", name, rc);
    if (len > 0 && write(STDOUT_FILENO, line, (size_t)len) < 0)
        return rc ? rc : HS_EXIT_USAGE;
    return rc;
}

/* FNV-1a of a point name, for the duplicate check. */
static size_t name_hash(const char *s)
{
    size_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* A point name as a file name: not empty, no '/', not starting with '.',
 * no control character; 0 or the offending byte's 1-based column. */
static size_t bad_name(const char *s)
{
    if (!s[0] || s[0] == '.')
        return 1;
    for (size_t i = 0; s[i]; i++)
        if (s[i] == '/' || (unsigned char)s[i] < 32 || s[i] == 127)
            return i + 1;
    return 0;
}

/* The points file: a header `name<TAB>P...` (into B->pname) and the rows,
 * split in place (into *rows, B->npts rows of 1 + np fields), each name
 * unique (two points with one name would write one CSV).  0 or an exit
 * code after a message `FILE:LINE:COLUMN: ...`. */
static int read_points(batch *B, char *pts, size_t ptslen, char ***rows)
{
    const char *file = B->o->points;
    const char *nul = memchr(pts, '\0', ptslen);
    if (nul) {                              /* strtok would end the file there */
        long ln = 1;
        const char *bol = pts;
        for (const char *p = pts; p < nul; p++)
            if (*p == '\n')
                ln++, bol = p + 1;
        fprintf(stderr, "holosim: batch: %s:%ld:%ld: the points file holds a NUL byte (at byte "
                "%zu): it is not text\n", file, ln, (long)(nul - bol) + 1, (size_t)(nul - pts));
        return HS_EXIT_USAGE;
    }
    if (!strncmp(pts, "\xEF\xBB\xBF", 3))   /* a UTF-8 byte-order mark */
        pts += 3;
    char *save = NULL, *line = strtok_r(pts, "\n", &save);
    if (!line)
        return hs_cli_usage_error(hs_usage_batch, "batch: the points file '%s' is empty", file);
    size_t cap = 1, nl = 0, ntab = 0;
    for (const char *p = line; *p; p++)
        cap += *p == '\t';
    /* rows: the lines with text, and no more than the tabs can make (each
     * row has cap - 1 of them): the memory follows the file's size */
    for (const char *p = save; p && *p; p++) {
        ntab += *p == '\t';
        nl += *p != '\n' && *p != '\r' && (p == save || p[-1] == '\n');
    }
    if (cap > 1 && ntab / (cap - 1) < nl)
        nl = ntab / (cap - 1) + 1;
    size_t nslot = 16;
    while (nslot < 2 * (nl + 1))
        nslot *= 2;
    char **head = calloc(cap, sizeof *head), **f = calloc((nl + 1) * (cap + 1), sizeof *f);
    long *slot = malloc(nslot * sizeof *slot), *lineof = malloc((nl + 1) * sizeof *lineof);
    int rc = 0;
    if (!head || !f || !slot || !lineof) {
        free(head);
        free(f);
        free(slot);
        free(lineof);
        return hs_cli_nomem();
    }
    memset(slot, 0xff, nslot * sizeof *slot);     /* -1: empty */
    size_t len0 = strlen(line);
    if (len0 && line[len0 - 1] == '\r')
        line[len0 - 1] = '\0';
    size_t nh = split_tabs(line, head, cap);
    B->pname = head + 1;
    B->np = nh - 1;
    *rows = f;
    if (strcmp(head[0], "name") != 0) {
        fprintf(stderr, "holosim: batch: %s:1:1: the points file must start with a header "
                "'name<TAB>PARAM...'\n", file);
        rc = HS_EXIT_USAGE;
    }
    hs_strmap seen = { 0 };
    for (size_t j = 1; !rc && j < nh; j++) {     /* one column per parameter */
        long first;
        int put = hs_strmap_put(&seen, head[j], strlen(head[j]), (long)j, &first);
        if (put < 0) {
            rc = hs_cli_nomem();
        } else if (put == 1) {
            fprintf(stderr, "holosim: batch: %s:1:%zu: parameter '%s' named twice in the "
                    "header (columns %ld and %zu): each parameter has one column\n", file,
                    (size_t)(head[j] - line) + 1, head[j], first + 1, j + 1);
            rc = HS_EXIT_USAGE;
        }
    }
    hs_strmap_free(&seen);
    for (long row = 2; !rc && (line = strtok_r(NULL, "\n", &save)); row++) {
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
            line[len - 1] = '\0';
        if (!line[0])
            continue;
        char **r = f + B->npts * (cap + 1);
        size_t nf = split_tabs(line, r, cap + 1), col = bad_name(r[0]);
        if (nf != nh || col) {
            fprintf(stderr, "holosim: batch: %s:%ld:%zu: %s\n", file, row, col ? col : 1,
                    col ? "a point name must not be empty, start with '.' or hold '/' or a "
                          "control character (it names the point's CSV)"
                        : "expected a name and as many values as the header has parameters");
            rc = HS_EXIT_USAGE;
            break;
        }
        size_t h = name_hash(r[0]) & (nslot - 1);
        for (; slot[h] >= 0; h = (h + 1) & (nslot - 1)) {
            const char *other = f[(size_t)slot[h] * (cap + 1)];
            if (!strcmp(other, r[0])) {
                fprintf(stderr, "holosim: batch: %s:%ld:1: point name '%s' given twice (first on "
                        "line %ld): each point needs a name of its own (it names its CSV)\n",
                        file, row, r[0], lineof[slot[h]]);
                rc = HS_EXIT_USAGE;
                break;
            }
        }
        if (rc)
            break;
        slot[h] = (long)B->npts;
        lineof[B->npts] = row;
        B->npts++;
    }
    free(slot);
    free(lineof);
    B->stride = cap + 1;
    return rc;
}

/* No point's CSV or status (nor their .part names) is an input: the
 * model, the points file, a --params file (files.c), before any point
 * runs. */
static int check_outputs(const batch *B, char **rows)
{
    hs_cli_files *F = hs_cli_files_new(B->o);
    int rc = F ? hs_cli_files_check(F, B->o) : hs_cli_nomem();
    for (size_t i = 0; !rc && i < B->npts; i++) {
        const char *name = rows[i * B->stride];
        char *p[3] = { point_path(B->o->outdir, "", name, ".csv"),
                       point_path(B->o->statusdir, "", name, ".status"), NULL };
        if (!p[0] || !p[1])
            rc = hs_cli_nomem();
        for (int k = 0; k < 2 && !rc; k++)
            rc = hs_cli_files_check_one(F, k ? "the status of a point" : "a point's CSV", p[k]);
        free(p[0]);
        free(p[1]);
    }
    hs_cli_files_free(F);
    return rc;
}

/* Points taken in turn from a counter (shared between workers); the exit
 * code: 0, 1 when a point failed, 128 + signal when interrupted. */
static int work(batch *B, char **rows, atomic_size_t *next)
{
    int worst = 0;
    for (;;) {
        size_t i = atomic_fetch_add(next, 1);
        if (i >= B->npts || batch_signal)
            break;
        char **r = rows + i * B->stride;
        int rc = run_point(B, r[0], r + 1);
        if (rc > 128)
            return rc;
        if (rc)
            worst = 1;
    }
    return batch_signal ? 128 + batch_signal : worst;
}

/* --jobs N: N worker processes share the counter (in shared memory); a
 * signal to this process is passed on to them. */
static int work_forked(batch *B, char **rows, long jobs)
{
    atomic_size_t *next = mmap(NULL, sizeof *next, PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t *pid = calloc((size_t)jobs, sizeof *pid);
    if (next == MAP_FAILED || !pid) {
        free(pid);
        return hs_cli_nomem();
    }
    atomic_init(next, 0);
    fflush(NULL);
    long started = 0;
    for (; started < jobs; started++) {
        pid[started] = fork();
        if (pid[started] == 0)
            _exit(work(B, rows, next));
        if (pid[started] < 0)
            break;
    }
    int worst = 0, forwarded = 0;
    for (long left = started; left > 0;) {
        int st;
        pid_t w = waitpid(-1, &st, 0);
        if (w < 0 && errno == EINTR) {
            if (batch_signal && !forwarded) {
                for (long j = 0; j < started; j++)
                    kill(pid[j], batch_signal);
                forwarded = 1;
            }
            continue;
        }
        if (w < 0)
            break;
        left--;
        int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (rc > worst)
            worst = rc;
    }
    if (started < jobs && !worst)          /* fork failed: run the rest here */
        worst = work(B, rows, next);
    munmap(next, sizeof *next);
    free(pid);
    return batch_signal ? 128 + batch_signal : worst;
}

int hs_cli_batch(int argc, char **argv)
{
    opts o;
    int rc;
    if (hs_cli_begin(argc, argv, hs_usage_batch, CMD_BATCH, &o, &rc))
        return rc;
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
    struct stat sd;                    /* the output folders, before any point runs */
    const char *nodir = stat(o.outdir, &sd) || !S_ISDIR(sd.st_mode) ? o.outdir
                      : stat(o.statusdir, &sd) || !S_ISDIR(sd.st_mode) ? o.statusdir : NULL;
    if (nodir) {
        fprintf(stderr, "holosim: batch: '%s' is not a directory (--%s): create it first\n", nodir,
                nodir == o.outdir ? "outdir" : "status-dir");
        hs_cli_free_opts(&o);
        return HS_EXIT_USAGE;
    }
    if (o.sensitivity)
        o.ov.dense = 1;                /* the variational system is dense (run.c) */
    hs_error err;
    hs_error_init(&err);
    size_t ptslen = 0;
    char *text = slurp(o.model, MAX_MODEL_BYTES, "model", NULL, &err);
    char *pts = text ? slurp(o.points, MAX_POINTS_BYTES, "points", &ptslen, &err) : NULL;
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
    batch B;
    memset(&B, 0, sizeof B);
    B.o = &o;
    B.text = text;
    char **rows = NULL;
    rc = read_points(&B, pts, ptslen, &rows);
    if (!rc)
        rc = check_outputs(&B, rows);
    if (!rc && !(B.x = calloc(B.np + 1, sizeof *B.x)))
        rc = hs_cli_nomem();
    if (!rc)
        rc = check_finals(&B, rows);
    if (!rc) {
        atomic_size_t next;
        atomic_init(&next, 0);
        rc = o.jobs > 1 && B.npts > 1 ? work_forked(&B, rows, o.jobs) : work(&B, rows, &next);
    }
    hs_native_free(B.native);
    hs_native_free(B.own_native);
    hs_model_free(B.base);
    free(B.x);
    free(B.pname ? B.pname - 1 : NULL);
    free(rows);
    free(pts);
    free(text);
    hs_cli_free_opts(&o);
    return rc;
}
