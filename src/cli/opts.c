/* The options of run, check and derive: one table (name, the commands
 * that take it, whether it takes a value, its handler), one parser. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
typedef struct optdef optdef;
typedef int (*opt_handler)(const optdef *d, opts *o, const char *val, const char *usage);
struct optdef {
    const char *name, *alias;  /* "--output", "-o" */
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
    else if (strcmp(d->name, "--quiet-projection") == 0)
        o->quiet_projection = 1;
    else
        o->quiet = 1;
    return 0;
}

static int opt_set(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    const char *eq = strchr(val, '=');
    double x;
    if (!eq || eq == val)
        return hs_cli_usage_error(usage, "--set wants NAME=VALUE, got '%s'", val);
    char *nm = strndup(val, (size_t)(eq - val));
    if (!nm || hs_cli_parse_double(eq + 1, &x)) {
        free(nm);
        return hs_cli_usage_error(usage, "--set: '%s' is not NAME=NUMBER", val);
    }
    o->set_name[o->nset] = nm;
    o->set_value[o->nset++] = x;
    return 0;
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

static int opt_tolerance(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    if (hs_cli_parse_double(val, &o->ov.s.tol) || !(o->ov.s.tol > 0))
        return hs_cli_usage_error(usage, "--tolerance wants a positive number, got '%s'", val);
    return 0;
}

/* --t-end, --dt, --rtol, --atol, --alpha, --beta: a number into a setting. */
static int opt_number(const optdef *d, opts *o, const char *val, const char *usage)
{
    double *dst = (double *)((char *)&o->ov.s + d->field);
    if (hs_cli_parse_double(val, dst) || (d->positive && !(*dst > 0))) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s wants a %snumber, got '%.60s'", d->name,
                 d->positive ? "positive " : "", val);
        return hs_cli_usage_error(usage, "%s", msg);
    }
    return 0;
}

/* --wrt, -o, --columns, --summary: the text itself. */
static int opt_text(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)usage;
    const char **dst = strcmp(d->name, "--wrt") == 0 ? &o->wrt
                     : strcmp(d->name, "--output") == 0 ? &o->output
                     : strcmp(d->name, "--columns") == 0 ? &o->columns : &o->summary;
    *dst = val;
    return 0;
}

static int opt_method(const optdef *d, opts *o, const char *val, const char *usage)
{
    (void)d;
    (void)usage;
    if (!hs_method_known(val)) {
        fprintf(stderr, "holosim: unknown method '%s'; choose one of: %s\n", val,
                hs_method_list());
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

#define ALL (CMD_RUN | CMD_CHECK | CMD_DERIVE)
#define NUM(name, field, pos) \
    { name, NULL, CMD_RUN, 1, opt_number, offsetof(hs_settings, field), pos }

static const optdef optdefs[] = {
    { "--progress", NULL, CMD_RUN, 0, opt_flag, 0, 0 },
    { "--quiet", "-q", CMD_RUN, 0, opt_flag, 0, 0 },
    { "--quiet-projection", NULL, CMD_RUN, 0, opt_flag, 0, 0 },
    { "--set", NULL, ALL, 1, opt_set, 0, 0 },
    { "--consistency", NULL, ALL, 1, opt_consistency, 0, 0 },
    { "--tolerance", NULL, ALL, 1, opt_tolerance, 0, 0 },
    { "--wrt", NULL, CMD_CHECK | CMD_DERIVE, 1, opt_text, 0, 0 },
    NUM("--t-end", t_end, 0),
    NUM("--dt", dt, 1),
    NUM("--rtol", rtol, 1),
    NUM("--atol", atol, 1),
    NUM("--alpha", alpha, 1),
    NUM("--beta", beta, 1),
    { "--output", "-o", CMD_RUN, 1, opt_text, 0, 0 },
    { "--columns", NULL, CMD_RUN, 1, opt_text, 0, 0 },
    { "--summary", NULL, CMD_RUN, 1, opt_text, 0, 0 },
    { "--method", NULL, CMD_RUN, 1, opt_method, 0, 0 },
    { "--stabilize", NULL, CMD_RUN, 1, opt_stabilize, 0, 0 },
    { "--precision", NULL, CMD_RUN, 1, opt_precision, 0, 0 },
    { "--output-mode", NULL, CMD_RUN, 1, opt_output_mode, 0, 0 },
};

static const optdef *find_opt(const char *name)
{
    for (size_t i = 0; i < sizeof optdefs / sizeof *optdefs; i++)
        if (strcmp(name, optdefs[i].name) == 0 ||
            (optdefs[i].alias && strcmp(name, optdefs[i].alias) == 0))
            return &optdefs[i];
    return NULL;
}

/* One option argument at argv[*i] (maybe consuming the next as its value). */
static int one_option(int argc, char **argv, int *i, const char *usage, unsigned cmd, opts *o)
{
    const char *a = argv[*i];
    char name[64];
    const char *val = NULL;
    const char *eq = strchr(a, '=');
    if (strncmp(a, "--", 2) == 0 && eq && (size_t)(eq - a) < sizeof name) {
        memcpy(name, a, (size_t)(eq - a));
        name[eq - a] = '\0';
        val = eq + 1;
    } else {
        snprintf(name, sizeof name, "%s", a);
    }
    const optdef *d = find_opt(name);
    if (!d)
        return hs_cli_usage_error(usage, "unknown option '%s'", name);
    if (!d->has_value) {
        if (!(d->cmds & cmd))
            return hs_cli_usage_error(usage, "unknown option '%s'", name);
        return d->handle(d, o, NULL, usage);
    }
    if (!val) {
        if (*i + 1 >= argc)
            return hs_cli_usage_error(usage, "option '%s' needs a value", name);
        val = argv[++*i];
    }
    if (!(d->cmds & cmd))
        return hs_cli_usage_error(usage, "unknown option '%s'", name);
    return d->handle(d, o, val, usage);
}

int hs_cli_parse_opts(int argc, char **argv, const char *cmd_usage, unsigned cmd, opts *o)
{
    memset(o, 0, sizeof *o);
    hs_overrides_init(&o->ov);
    o->precision = 17;
    o->set_name = calloc((size_t)argc + 1, sizeof *o->set_name);
    o->set_value = calloc((size_t)argc + 1, sizeof *o->set_value);
    o->pos = calloc((size_t)argc + 1, sizeof *o->pos);
    if (!o->set_name || !o->set_value || !o->pos)
        return hs_cli_usage_error("", "%s", "out of memory");
    int no_more_opts = 0;
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        if (no_more_opts || a[0] != '-' || strcmp(a, "-") == 0) {
            if (!o->model)
                o->model = a;
            else
                o->pos[o->npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            no_more_opts = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(cmd_usage, stdout);
            return -1;
        }
        int rc = one_option(argc, argv, &i, cmd_usage, cmd, o);
        if (rc)
            return rc;
    }
    o->ov.nset = o->nset;
    o->ov.set_name = o->set_name;
    o->ov.set_value = o->set_value;
    return 0;
}

void hs_cli_free_opts(opts *o)
{
    for (size_t i = 0; i < o->nset; i++)
        free((char *)o->set_name[i]);
    free(o->set_name);
    free(o->set_value);
    free(o->pos);
}
