/* The options of run, check, derive and columns: one table (name, short
 * letter, the commands that take it, whether it takes a value, its
 * handler), one parser with the GNU conventions: options and operands in
 * any order, `--` ends the options, short flags bundled (-qo FILE, -oFILE),
 * --name=value for every valued option, "did you mean" for a misspelt one. */
#include "cli.h"

#include "../analysis/analysis.h"
#include "../integrate/integrate.h"
#include "../native/native.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/suggest.h"

int hs_cli_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* A handler gets the option's name and value (NULL for a flag) and
 * returns 0 or an exit code (after printing the usage error). */
/* The core's messages name options as the command line spells them. */
const hs_optnames hs_cli_optnames = { {
    [HS_OPT_SET] = "--set",
    [HS_OPT_INPUT] = "--input",
    [HS_OPT_STOP_WHEN] = "--stop-when",
    [HS_OPT_STEP] = "--step",
    [HS_OPT_T_END] = "--t-end",
    [HS_OPT_OUTPUT_MODE] = "--output-mode",
    [HS_OPT_COLUMNS] = "--columns",
    [HS_OPT_INPUTS] = "--inputs",
    [HS_OPT_OUTPUTS] = "--outputs",
    [HS_OPT_NATIVE_ALWAYS] = "--native=always",
    [HS_OPT_SENSITIVITY] = "--sensitivity",
    [HS_OPT_MODE_COUNT] = "--count",
    [HS_OPT_FINAL] = "--final",
} };

typedef struct optdef optdef;
typedef int (*opt_handler)(const optdef *d, opts *o, const char *val, const char *usage);
struct optdef {
    const char *name;          /* "--output" */
    char letter;               /* 'o' for -o, or 0 */
    unsigned cmds;             /* CMD_* that accept it */
    int has_value;
    opt_handler handle;
    size_t field;              /* numeric options: offset of the setting in hs_settings */
    int positive;              /* numeric options: must be > 0 */
};

static int opt_flag(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)val;
    (void)usage;
    if (strcmp(d->name, "--progress") == 0)
        o->progress = 1;
    else if (strcmp(d->name, "--csv") == 0)
        o->csv = 1;
    else if (strcmp(d->name, "--linearize") == 0)
        o->linearize = 1;
    else if (strcmp(d->name, "--quiet-projection") == 0)
        o->quiet_projection = 1;
    else if (strcmp(d->name, "--spectrum") == 0)
        o->spectrum = 1;
    else if (strcmp(d->name, "--find") == 0)
        o->find = 1;
    else
        o->quiet = 1;
    return 0;
}

static int is_name_start(int c) { return isalpha(c) || c == '_'; }
static int is_name_char(int c) { return isalnum(c) || c == '_'; }

/* Length of "NAME=" (spaces allowed around NAME) at s, or 0. */
static size_t name_eq(const char *s, const char **name, size_t *len)
{
    const char *p = s;
    while (*p == ' ')
        p++;
    if (!is_name_start((unsigned char)*p))
        return 0;
    *name = p;
    while (is_name_char((unsigned char)*p))
        p++;
    *len = (size_t)(p - *name);
    while (*p == ' ')
        p++;
    if (*p != '=' || p[1] == '=')
        return 0;
    return (size_t)(p + 1 - s);
}

/* --set NAME=EXPR[,NAME=EXPR...]: split at the commas outside parentheses
 * that a NAME= follows, so atan2(1, 2) and if(a < b, 1, 2) stay whole. */
static int opt_set(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    const char *p = val;
    for (;;) {
        const char *name;
        size_t len, skip = name_eq(p, &name, &len);
        if (!skip)
            return hs_cli_usage_error(usage, "--set wants NAME=EXPR (several separated by "
                                      "commas), got '%s'", val);
        const char *e = p + skip, *next = NULL;
        int depth = 0;
        for (const char *q = e; *q && !next; q++) {
            const char *nm;
            size_t nl;
            if (*q == '(')
                depth++;
            else if (*q == ')' && depth > 0)
                depth--;
            else if (*q == ',' && depth == 0 && name_eq(q + 1, &nm, &nl))
                next = q;
        }
        size_t tl = next ? (size_t)(next - e) : strlen(e);
        char *text = malloc(tl + 1);
        hs_error err;
        hs_error_init(&err);
        if (!text)
            return hs_cli_nomem();
        memcpy(text, e, tl);
        text[tl] = '\0';
        int rc = hs_params_add(&o->params, name, len, text, &err);
        free(text);
        if (rc)
            return hs_cli_fail(&err);
        if (!next)
            return 0;
        p = next + 1;
    }
}

/* --input NAME=SRC: a table (FILE.csv) or an expression of t; the model
 * checks both. */
static int opt_input(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    const char *name;
    size_t len, skip = name_eq(val, &name, &len);
    if (!skip || !val[skip])
        return hs_cli_usage_error(usage, "--input wants NAME=EXPR or NAME=FILE.csv, got "
                                  "'%s'", val);
    char *nm = malloc(len + 1), *tx = malloc(strlen(val + skip) + 1);
    if (!nm || !tx) {
        free(nm);
        free(tx);
        return hs_cli_nomem();
    }
    memcpy(nm, name, len);
    nm[len] = '\0';
    strcpy(tx, val + skip);
    o->input_name[o->ninput] = nm;
    o->input_text[o->ninput++] = tx;
    o->ov.ninput = o->ninput;
    o->ov.input_name = (const char *const *)o->input_name;
    o->ov.input_text = (const char *const *)o->input_text;
    return 0;
}

static int opt_params(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    (void)usage;
    hs_error err;
    hs_error_init(&err);
    return hs_params_read(&o->params, val, &err) ? hs_cli_fail(&err) : 0;
}

static int opt_consistency(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    int kw = hs_keyword(hs_cons_mode_names, 2, val);
    if (kw < 0)
        return hs_cli_usage_error(usage, "--consistency must be project or reject, got '%s'",
                                  val);
    o->ov.s.mode = (hs_cons_mode)kw;
    o->ov.has_mode = 1;
    return 0;
}

static int opt_dependent(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    int kw = hs_keyword(hs_dependent_names, 2, val);
    if (kw < 0)
        return hs_cli_usage_error(usage, "--dependent must be allow or reject, got '%s'", val);
    o->ov.s.strict_rank = kw;
    o->ov.has_dependent = 1;
    return 0;
}

static int opt_tolerance(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    if (hs_cli_parse_double(val, &o->ov.s.tol) || !(o->ov.s.tol > 0))
        return hs_cli_usage_error(usage, "--tolerance wants a positive number, got '%s'", val);
    return 0;
}

/* Text strtod reads to its end (a number, perhaps out of range). */
static int plain_number(const char *s)
{
    char *end;
    (void)strtod(s, &end);
    return end != s && !*end;
}

/* --t-end, --dt, --step, --rtol, --atol, --alpha, --beta: a number into a
 * setting, or an expression's text for the loader (hs_overrides.num_text). */
static int opt_number(const optdef *d, opts *o, const char *val, const char *usage)
{
    double *dst = (double *)((char *)&o->ov.s + d->field);
    for (size_t i = 0; i < HS_NUM_COUNT; i++)
        if (hs_numsets[i].off == d->field)
            o->ov.num_text[i] = NULL;                  /* the last one given wins */
    if (hs_cli_parse_double(val, dst) && !plain_number(val)) {
        /* an expression ('2*pi/w'): the loader evaluates it with the
         * parameters after --set */
        for (size_t i = 0; i < HS_NUM_COUNT; i++)
            if (hs_numsets[i].off == d->field) {
                o->ov.num_text[i] = val;
                o->ov.num_option[i] = d->name;
                *dst = NAN;
                return 0;
            }
    }
    if (hs_cli_parse_double(val, dst) || (d->positive && !(*dst > 0))) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s wants a %snumber, got '%.60s'", d->name,
                 d->positive ? "positive " : "", val);
        return hs_cli_usage_error(usage, "%s", msg);
    }
    return 0;
}

/* --wrt, -o, --columns, --summary: the text itself (a file name of an
 * output is not empty: refused here, before anything runs). */
/* modes --count K: a positive integer (its bound, n - k, is the model's). */
static int opt_count(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(val, &end, 10);
    if (!isdigit((unsigned char)val[0]) || *end || errno || x == 0 || x > (1ULL << 40))
        return hs_cli_usage_error(usage, "--count wants a positive integer (how many of "
                                  "the lowest modes), got '%s'", val);
    o->count = (size_t)x;
    return 0;
}

/* equilibrium, modes --linalg auto|dense|sparse (analysis.h: hs_an_path). */
static int opt_linalg(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    int kw = hs_keyword(hs_an_path_names, 3, val);
    if (kw < 0)
        return hs_cli_usage_error(usage, "--linalg must be auto, dense or sparse, got '%s'",
                                  val);
    o->linalg = kw;
    return 0;
}

static int opt_text(const optdef *d, opts *o, const char *val, const char *usage)
{
    if (!val[0] && (strcmp(d->name, "--output") == 0 || strcmp(d->name, "--summary") == 0
                    || strcmp(d->name, "--events") == 0))
        return hs_cli_usage_error(usage, "%s needs a file name, got ''", d->name);
    const char **dst = strcmp(d->name, "--wrt") == 0 ? &o->wrt
                     : strcmp(d->name, "--output") == 0 ? &o->output
                     : strcmp(d->name, "--columns") == 0 ? &o->columns
                     : strcmp(d->name, "--points") == 0 ? &o->points
                     : strcmp(d->name, "--outdir") == 0 ? &o->outdir
                     : strcmp(d->name, "--status-dir") == 0 ? &o->statusdir
                     : strcmp(d->name, "--events") == 0 ? &o->events
                     : strcmp(d->name, "--period") == 0 ? &o->period
                     : strcmp(d->name, "--every") == 0 ? &o->every
                     : strcmp(d->name, "--sensitivity") == 0 ? &o->sensitivity
                     : strcmp(d->name, "--final") == 0 ? &o->final
                     : strcmp(d->name, "--fps") == 0 ? &o->fps
                     : strcmp(d->name, "--size") == 0 ? &o->size
                     : strcmp(d->name, "--frames") == 0 ? &o->frames
                     : strcmp(d->name, "--speed") == 0 ? &o->speed
                     : strcmp(d->name, "--trail") == 0 ? &o->trail
                     : strcmp(d->name, "--plot") == 0 ? &o->plot
                     : strcmp(d->name, "--inputs") == 0 ? &o->lin_inputs
                     : strcmp(d->name, "--outputs") == 0 ? &o->lin_outputs
                     : strcmp(d->name, "--at") == 0 ? &o->lin_at
                     : strcmp(d->name, "--bode") == 0 ? &o->bode : &o->summary;
    *dst = val;
    return 0;
}

/* --stop-when COND: kept in order; the loader parses each (an event). */
static int opt_stop_when(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    if (!val[strspn(val, " \t")])
        return hs_cli_usage_error(usage, "--stop-when wants a condition such as 'x > 1', "
                                  "got '%s'", val);
    o->stop_when[o->ov.nstop++] = val;
    o->ov.stop_when = o->stop_when;
    return 0;
}

static int opt_jobs(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    double x;
    if (hs_cli_parse_double(val, &x) || x < 1 || x > 1024 || x != floor(x))
        return hs_cli_usage_error(usage, "--jobs wants an integer 1..1024, got '%s'", val);
    o->jobs = (long)x;
    return 0;
}

static int opt_native(const optdef *d, opts *o, const char *val, const char *usage)
{
    if (strcmp(d->name, "--no-native") == 0) {
        o->native = HS_NATIVE_NEVER;
        return 0;
    }
    int kw = hs_keyword(hs_native_policy_names, 3, val);
    if (kw < 0)
        return hs_cli_usage_error(usage, "--native must be always, auto or never, got '%s'",
                                  val);
    o->native = (hs_native_policy)kw;
    return 0;
}

static int opt_method(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    (void)usage;
    if (!hs_stepper_find(val)) {
        char names[512], hint[64];
        fprintf(stderr, "holosim: error: unknown method '%s'%s; choose one of: %s\n"
                "try 'holosim help methods'\n", val, hs_stepper_hint(val, hint, sizeof hint),
                hs_stepper_names(names, sizeof names));
        return HS_EXIT_USAGE;
    }
    snprintf(o->ov.s.method, sizeof o->ov.s.method, "%s", val);
    return 0;
}

static int opt_stabilize(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    int kw = hs_keyword(hs_stab_names, 3, val);
    if (kw < 0)
        return hs_cli_usage_error(usage, "--stabilize must be projection, baumgarte or none, "
                                  "got '%s'", val);
    o->ov.s.stabilize = (hs_stab)kw;
    o->ov.has_stabilize = 1;
    return 0;
}

static int opt_output_mode(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    int kw = hs_keyword(hs_output_names, 2, val);
    if (kw < 0)
        return hs_cli_usage_error(usage, "--output-mode must be exact or interpolate, got "
                                  "'%s'", val);
    o->ov.s.interpolate = kw;
    o->ov.has_output = 1;
    return 0;
}

static int opt_precision(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    double x;
    if (hs_cli_parse_double(val, &x) || x < 1 || x > 17 || x != floor(x))
        return hs_cli_usage_error(usage, "--precision wants an integer 1..17, got '%s'", val);
    o->precision = (int)x;
    return 0;
}

#define ALL (CMD_RUN | CMD_CHECK | CMD_DERIVE | CMD_COLUMNS | CMD_BATCH | CMD_ANIMATE)
#define RUNS (CMD_RUN | CMD_BATCH | CMD_ANIMATE)  /* run, batch (per point), animate */
#define FLOW (CMD_FLOQUET | CMD_LYAPUNOV)
#define NUM(name, field, pos) \
    { name, 0, RUNS, 1, opt_number, offsetof(hs_settings, field), pos }

static const optdef optdefs[] = {
    { "--progress", 0, CMD_RUN | CMD_ANIMATE, 0, opt_flag, 0, 0 },
    { "--quiet", 'q', RUNS, 0, opt_flag, 0, 0 },
    { "--quiet-projection", 0, RUNS, 0, opt_flag, 0, 0 },
    { "--set", 0, ALL | CMD_EQUILIBRIUM | CMD_MODES | FLOW, 1, opt_set, 0, 0 },
    { "--params", 0, ALL | CMD_EQUILIBRIUM | CMD_MODES | FLOW, 1, opt_params, 0, 0 },
    { "--input", 0, ALL | CMD_EQUILIBRIUM | CMD_MODES | FLOW, 1, opt_input, 0, 0 },
    { "--consistency", 0, RUNS | CMD_CHECK | CMD_DERIVE, 1, opt_consistency, 0, 0 },
    { "--tolerance", 0, RUNS | CMD_CHECK | CMD_DERIVE, 1, opt_tolerance, 0, 0 },
    { "--dependent", 0, RUNS | CMD_CHECK | CMD_DERIVE, 1,
      opt_dependent, 0, 0 },
    { "--wrt", 0, CMD_DERIVE, 1, opt_text, 0, 0 },
    { "--csv", 0, CMD_EQUILIBRIUM | CMD_MODES | FLOW, 0, opt_flag, 0, 0 },
    { "--linearize", 0, CMD_MODES, 0, opt_flag, 0, 0 },
    { "--count", 0, CMD_MODES, 1, opt_count, 0, 0 },
    { "--linalg", 0, CMD_EQUILIBRIUM | CMD_MODES, 1, opt_linalg, 0, 0 },
    { "--t-end", 0, RUNS | CMD_LYAPUNOV, 1, opt_number, offsetof(hs_settings, t_end), 0 },
    NUM("--dt", dt, 1),
    NUM("--step", step, 1),
    { "--rtol", 0, RUNS | FLOW, 1, opt_number, offsetof(hs_settings, rtol), 1 },
    { "--atol", 0, RUNS | FLOW, 1, opt_number, offsetof(hs_settings, atol), 1 },
    NUM("--alpha", alpha, 1),
    NUM("--beta", beta, 1),
    { "--output", 'o', CMD_RUN | CMD_ANIMATE, 1, opt_text, 0, 0 },
    { "--columns", 0, RUNS, 1, opt_text, 0, 0 },
    { "--summary", 0, CMD_RUN | CMD_ANIMATE, 1, opt_text, 0, 0 },
    { "--events", 0, CMD_RUN | CMD_ANIMATE, 1, opt_text, 0, 0 },
    { "--final", 0, CMD_RUN | CMD_BATCH, 1, opt_text, 0, 0 },
    { "--stop-when", 0, RUNS, 1, opt_stop_when, 0, 0 },
    { "--method", 0, RUNS | FLOW, 1, opt_method, 0, 0 },
    { "--stabilize", 0, RUNS, 1, opt_stabilize, 0, 0 },
    { "--precision", 0, RUNS, 1, opt_precision, 0, 0 },
    { "--output-mode", 0, RUNS, 1, opt_output_mode, 0, 0 },
    { "--native", 0, RUNS | FLOW, 1, opt_native, 0, 0 },
    { "--no-native", 0, RUNS | FLOW, 0, opt_native, 0, 0 },
    { "--points", 0, CMD_BATCH, 1, opt_text, 0, 0 },
    { "--outdir", 0, CMD_BATCH, 1, opt_text, 0, 0 },
    { "--status-dir", 0, CMD_BATCH, 1, opt_text, 0, 0 },
    { "--jobs", 'j', CMD_BATCH, 1, opt_jobs, 0, 0 },
    { "--fps", 0, CMD_ANIMATE, 1, opt_text, 0, 0 },
    { "--size", 0, CMD_ANIMATE, 1, opt_text, 0, 0 },
    { "--frames", 0, CMD_ANIMATE, 1, opt_text, 0, 0 },
    { "--speed", 0, CMD_ANIMATE, 1, opt_text, 0, 0 },
    { "--trail", 0, CMD_ANIMATE, 1, opt_text, 0, 0 },
    { "--plot", 0, CMD_ANIMATE, 1, opt_text, 0, 0 },
    /* floquet, lyapunov (src/cli/flow.c) */
    { "--period", 0, CMD_FLOQUET, 1, opt_text, 0, 0 },
    { "--every", 0, CMD_LYAPUNOV, 1, opt_text, 0, 0 },
    { "--spectrum", 0, CMD_LYAPUNOV, 0, opt_flag, 0, 0 },
    { "--find", 0, CMD_FLOQUET, 0, opt_flag, 0, 0 },
    { "--sensitivity", 0, CMD_RUN | CMD_BATCH, 1, opt_text, 0, 0 },
    /* linearize */
    { "--inputs", 0, CMD_LINEARIZE, 1, opt_text, 0, 0 },
    { "--outputs", 0, CMD_LINEARIZE, 1, opt_text, 0, 0 },
    { "--at", 0, CMD_LINEARIZE | CMD_ANIMATE, 1, opt_text, 0, 0 },
    { "--bode", 0, CMD_LINEARIZE, 1, opt_text, 0, 0 },
    { "--output", 'o', CMD_LINEARIZE, 1, opt_text, 0, 0 },
    { "--set", 0, CMD_LINEARIZE, 1, opt_set, 0, 0 },
    { "--params", 0, CMD_LINEARIZE, 1, opt_params, 0, 0 },
    { "--input", 0, CMD_LINEARIZE, 1, opt_input, 0, 0 },
};
enum { NOPTS = sizeof optdefs / sizeof *optdefs };

static const char *cmd_name(unsigned cmd)
{
    return cmd == CMD_RUN ? "run" : cmd == CMD_CHECK ? "check" : cmd == CMD_DERIVE ? "derive"
         : cmd == CMD_COLUMNS ? "columns" : cmd == CMD_BATCH ? "batch"
         : cmd == CMD_EQUILIBRIUM ? "equilibrium" : cmd == CMD_MODES ? "modes"
         : cmd == CMD_ANIMATE ? "animate" : cmd == CMD_FLOQUET ? "floquet"
         : cmd == CMD_LYAPUNOV ? "lyapunov" : cmd == CMD_LINEARIZE ? "linearize" : "eval";
}

/* The options that name a file, read or written: each recorded in
 * o->files, which files.c compares (an option added to optdefs that names
 * a file goes here too; tests/cli_hostile4.sh tries each). */
static const struct fileopt {
    const char *name, *what;
    int out;
} fileopts[] = {
    { "--params", "the --params file", 0 },
    { "--points", "the --points file", 0 },
    { "--output", "-o", 1 },
    { "--summary", "--summary", 1 },
    { "--events", "--events", 1 },
};

/* An option with its value: handled, and recorded when it names a file. */
static int handle(const optdef *d, opts *o, const char *val, const char *usage)
{
    int rc = d->handle(d, o, val, usage);
    for (size_t i = 0; !rc && i < sizeof fileopts / sizeof *fileopts; i++)
        if (strcmp(d->name, fileopts[i].name) == 0) {
            size_t k = 0;              /* given again: the last wins (not --params) */
            while (k < o->nfiles && (o->files[k].what != fileopts[i].what ||
                                     strcmp(d->name, "--params") == 0))
                k++;
            struct hs_cli_optfile *f = &o->files[k];
            o->nfiles += k == o->nfiles;
            f->what = fileopts[i].what;
            f->path = val;
            f->out = fileopts[i].out;
        }
    return rc;
}

/* An unknown long option: the nearest one the command takes, or the
 * commands that take it. */
static int unknown_long(const char *name, const char *usage, unsigned cmd)
{
    const char *cand[NOPTS + 1];
    size_t n = 0;
    const optdef *other = NULL;
    for (size_t i = 0; i < NOPTS; i++) {
        if (optdefs[i].cmds & cmd)
            cand[n++] = optdefs[i].name;
        else if (strcmp(optdefs[i].name, name) == 0)
            other = &optdefs[i];
    }
    cand[n++] = "--help";
    char msg[300];
    const char *near = hs_nearest(name, cand, n);
    if (other) {
        size_t l = (size_t)snprintf(msg, sizeof msg, "unknown option '%s' for '%s' (an "
                                    "option of", name, cmd_name(cmd));
        unsigned left = other->cmds;
        for (unsigned c = CMD_RUN; c <= CMD_ANIMATE; c <<= 1)
            if (other->cmds & c) {
                left &= ~c;
                l += (size_t)snprintf(msg + l, sizeof msg - l, "%s'%s'",
                                      left == other->cmds - c ? " " : !left ? " and " : ", ",
                                      cmd_name(c));
            }
        snprintf(msg + l, sizeof msg - l, ")");
    } else if (near) {
        snprintf(msg, sizeof msg, "unknown option '%.100s' (did you mean '%s'?)", name, near);
    } else {
        snprintf(msg, sizeof msg, "unknown option '%.100s'", name);
    }
    return hs_cli_usage_error(usage, "%s", msg);
}

/* The long option at argv[*i], maybe consuming the next argument as its
 * value. */
static int long_option(int argc, char **argv, int *i, const char *usage, unsigned cmd,
                       opts *o)
{
    const char *a = argv[*i], *eq = strchr(a, '=');
    char name[64];
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), a);
    const optdef *d = NULL;
    for (size_t k = 0; k < NOPTS && !d; k++)
        if (len < sizeof name && strcmp(name, optdefs[k].name) == 0 && (optdefs[k].cmds & cmd))
            d = &optdefs[k];
    if (!d && strcmp(name, "--help") == 0)      /* --help=...: the flag with a value */
        return hs_cli_usage_error(usage, "option '%s' takes no value", name);
    if (!d)
        return unknown_long(name, usage, cmd);
    if (!d->has_value) {
        if (eq)
            return hs_cli_usage_error(usage, "option '%s' takes no value", name);
        return d->handle(d, o, NULL, usage);
    }
    const char *val = eq ? eq + 1 : NULL;
    if (!val) {
        if (*i + 1 >= argc)
            return hs_cli_usage_error(usage, "option '%s' needs a value", name);
        val = argv[++*i];
    }
    return handle(d, o, val, usage);
}

/* A cluster of short options at argv[*i]: flags, then at most one option
 * with a value (the rest of the cluster, or the next argument). */
static int short_options(int argc, char **argv, int *i, const char *usage, unsigned cmd,
                         opts *o)
{
    const char *a = argv[*i];
    for (size_t j = 1; a[j]; j++) {
        const optdef *d = NULL;
        for (size_t k = 0; k < NOPTS && !d; k++)
            if (optdefs[k].letter == a[j] && (optdefs[k].cmds & cmd))
                d = &optdefs[k];
        if (a[j] == 'h') {
            fputs(usage, stdout);
            return -1;
        }
        if (!d) {
            char msg[200];
            int looks_operand = isdigit((unsigned char)a[1]) || a[1] == '.' ||
                                strpbrk(a, "^*/+()") != NULL;
            snprintf(msg, sizeof msg, "unknown option '-%c'%s", a[j], looks_operand ?
                     " (an operand that starts with '-' goes after '--')" : "");
            return hs_cli_usage_error(usage, "%s", msg);
        }
        if (!d->has_value) {
            int rc = d->handle(d, o, NULL, usage);
            if (rc)
                return rc;
            continue;
        }
        const char *val = a[j + 1] ? a + j + 1 : NULL;
        if (!val) {
            if (*i + 1 >= argc)
                return hs_cli_usage_error(usage, "option '%s' needs a value", d->name);
            val = argv[++*i];
        }
        return handle(d, o, val, usage);
    }
    return 0;
}

int hs_cli_parse_opts(int argc, char **argv, const char *cmd_usage, unsigned cmd, opts *o)
{
    memset(o, 0, sizeof *o);
    hs_overrides_init(&o->ov);
    o->ov.names = &hs_cli_optnames;
    o->native = HS_NATIVE_AUTO;
    hs_params_init(&o->params);
    o->precision = 17;
    o->pos = calloc((size_t)argc + 1, sizeof *o->pos);
    o->stop_when = calloc((size_t)argc + 1, sizeof *o->stop_when);
    o->input_name = calloc((size_t)argc + 1, sizeof *o->input_name);
    o->input_text = calloc((size_t)argc + 1, sizeof *o->input_text);
    o->files = calloc((size_t)argc + 1, sizeof *o->files);
    if (!o->pos || !o->stop_when || !o->input_name || !o->input_text || !o->files)
        return hs_cli_nomem();
    int no_more_opts = 0, rc = 0;
    for (int i = 0; i < argc && !rc; i++) {
        char *a = argv[i];
        if (no_more_opts || a[0] != '-' || a[1] == '\0') {
            if (!o->model)
                o->model = a;
            else
                o->pos[o->npos++] = a;
        } else if (strcmp(a, "--") == 0) {
            no_more_opts = 1;
        } else if (strcmp(a, "--help") == 0) {
            fputs(cmd_usage, stdout);
            rc = -1;
        } else {
            rc = a[1] == '-' ? long_option(argc, argv, &i, cmd_usage, cmd, o)
                             : short_options(argc, argv, &i, cmd_usage, cmd, o);
        }
    }
    hs_params_apply(&o->params, &o->ov);
    return rc;
}

int hs_cli_begin(int argc, char **argv, const char *usage, unsigned cmd, opts *o, int *rc)
{
    *rc = hs_cli_parse_opts(argc, argv, usage, cmd, o);
    if (!*rc)
        return 0;
    hs_cli_free_opts(o);
    if (*rc < 0)
        *rc = 0;                        /* the help was asked for */
    return -1;
}

int hs_cli_one_model(opts *o, const char *usage, const char *name, int *rc)
{
    if (o->model && !o->npos)
        return 0;
    char msg[80];
    snprintf(msg, sizeof msg, "%s: expected one MODEL (%s)", name,
             o->model ? "more than one MODEL given" : "missing MODEL");
    hs_cli_free_opts(o);
    *rc = hs_cli_usage_error(usage, "%s", msg);
    return -1;
}

hs_model *hs_cli_load(opts *o, int *rc)
{
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load(o->model, &o->ov, &err);
    if (!m) {
        hs_cli_free_opts(o);
        *rc = hs_cli_fail(&err);
    }
    return m;
}

hs_model *hs_cli_open(int argc, char **argv, const char *usage, unsigned cmd, const char *name,
                      opts *o, int *rc)
{
    if (hs_cli_begin(argc, argv, usage, cmd, o, rc) || hs_cli_one_model(o, usage, name, rc))
        return NULL;
    return hs_cli_load(o, rc);
}

int hs_cli_check_method(hs_model *m, int *rc)
{
    hs_error err;
    hs_error_init(&err);
    if (!hs_stepper_check(m, &err))
        return 0;
    hs_model_free(m);
    *rc = hs_cli_fail(&err);
    return -1;
}

hs_model *hs_cli_model(int argc, char **argv, const char *usage, unsigned cmd, const char *name,
                       int *rc)
{
    opts o;
    hs_model *m = hs_cli_open(argc, argv, usage, cmd, name, &o, rc);
    if (m)
        hs_cli_free_opts(&o);
    return m;
}

void hs_cli_free_opts(opts *o)
{
    hs_params_free(&o->params);
    free(o->pos);
    o->pos = NULL;
    free(o->stop_when);
    o->stop_when = NULL;
    for (size_t i = 0; i < o->ninput; i++) {
        free(o->input_name[i]);
        free(o->input_text[i]);
    }
    free(o->input_name);
    free(o->input_text);
    o->input_name = o->input_text = NULL;
    o->ninput = o->ov.ninput = 0;
    free(o->files);
    o->files = NULL;
    o->nfiles = 0;
    o->ov.stop_when = NULL;
    o->ov.nstop = 0;
}
