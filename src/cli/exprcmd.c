/* `holosim derive` (a model's kernels, or the derivative of one
 * expression) and `holosim eval`. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../expr/expr.h"

/* Free symbols for `derive --wrt` and `eval`. */
typedef struct freesyms {
    int strict;               /* eval: only the given names */
    size_t n;
    char **name;
} freesyms;

static const hs_node *free_lookup(void *ctx, hs_dag *d, const char *s, size_t len,
                                  int primed, size_t off, int *status, hs_error *err)
{
    freesyms *fs = ctx;
    (void)off;
    (void)err;
    char name[160];
    if (len + 3 > sizeof name) {
        *status = HS_RESOLVE_UNKNOWN;
        return NULL;
    }
    memcpy(name, s, len);
    for (int i = 0; i < primed; i++)       /* x' and x'' are symbols of their own */
        name[len++] = '\'';
    name[len] = '\0';
    if (fs->strict) {
        int sym = hs_dag_find_symbol(d, name);
        if (sym < 0) {
            *status = HS_RESOLVE_UNKNOWN;
            return NULL;
        }
        *status = HS_RESOLVE_OK;
        return hs_sym(d, sym);
    }
    *status = HS_RESOLVE_OK;
    return hs_sym(d, hs_dag_symbol(d, name));
}

static int expr_error(const hs_error *e, const char *text)
{
    hs_error c = *e;
    if (c.offset >= 0)
        hs_error_locate(&c, text, strlen(text), (size_t)c.offset);
    return hs_cli_fail(&c);
}

static int cmd_derive_wrt(const char *wrt, const char *text)
{
    hs_dag *d = hs_dag_new();
    if (!d)
        return hs_cli_nomem();
    freesyms fs = { 0, 0, NULL };
    hs_resolver r = { .lookup = free_lookup, .ctx = &fs, .locate = NULL };
    hs_error err;
    hs_error_init(&err);
    const hs_node *e = hs_parse(d, text, strlen(text), 0, &r, &err);
    int rc = 0;
    if (!e) {
        rc = expr_error(&err, text);
    } else {
        int sym = hs_dag_find_symbol(d, wrt);
        const hs_node *de = sym < 0 ? hs_num(d, 0) : hs_diff(d, e, sym);
        if (hs_dag_failed(d)) {
            rc = expr_error(hs_dag_error(d), text);
        } else if (hs_fprint_shared(stdout, d, &de, NULL, 1)) {
            rc = hs_cli_nomem();
        }
    }
    hs_dag_free(d);
    return rc;
}

int hs_cli_derive(int argc, char **argv)
{
    opts o;
    int rc;
    if (hs_cli_begin(argc, argv, hs_usage_derive, CMD_DERIVE, &o, &rc))
        return rc;
    if (o.wrt) {
        const char *text = o.model;
        size_t npos = o.npos;
        const char *wrt = o.wrt;
        hs_cli_free_opts(&o);
        if (!text || npos)
            return hs_cli_usage_error(hs_usage_derive, "%s", "derive --wrt NAME needs exactly one EXPR");
        return cmd_derive_wrt(wrt, text);
    }
    hs_model *m = NULL;
    o.ov.dense = 1;                      /* Q too, for a structured embedding */
    if (hs_cli_one_model(&o, hs_usage_derive, "derive", &rc) || !(m = hs_cli_load(&o, &rc)))
        return rc;
    hs_cli_free_opts(&o);
    rc = hs_model_print_derivation(m, stdout);
    hs_model_free(m);
    return rc ? hs_cli_nomem() : 0;
}

/* The operands of eval: -h/--help anywhere, -- ends the options, and an
 * argument such as -x^2 is an expression (eval has no other option, so
 * a leading '-' needs no `--`).  Returns 0, -1 after the help, or an exit
 * code. */
static int eval_operands(int argc, char **argv, char **ops, int *nops)
{
    int done = 0;
    *nops = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!done && strcmp(a, "--") == 0) {
            done = 1;
        } else if (!done && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            fputs(hs_usage_eval, stdout);
            return -1;
        } else if (!done && a[0] == '-' && a[1] == '-') {
            return hs_cli_usage_error(hs_usage_eval, "unknown option '%s' (eval takes only "
                                      "--help)", a);
        } else {
            ops[(*nops)++] = argv[i];
        }
    }
    if (*nops == 0)
        return hs_cli_usage_error(hs_usage_eval, "%s", "eval: missing EXPR");
    return 0;
}

static int eval_expr(int argc, char **argv);

int hs_cli_eval(int argc, char **argv)
{
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    int nops = 0;
    if (!ops)
        return hs_cli_nomem();
    int rc = eval_operands(argc, argv, ops, &nops);
    if (!rc)
        rc = eval_expr(nops, ops);
    free(ops);
    return rc < 0 ? 0 : rc;
}

/* NAME of NAME=VALUE must read as a variable: a function name or `pi`
 * (which the parser takes for what they are) would be silently ignored. */
static int check_binding(hs_dag *d, const char *name)
{
    freesyms any = { 0, 0, NULL };
    hs_resolver r = { .lookup = free_lookup, .ctx = &any, .locate = NULL };
    hs_error e;
    hs_error_init(&e);
    const hs_node *b = hs_parse(d, name, strlen(name), 0, &r, &e);
    if (b && b->kind == HS_SYM)
        return 0;
    if (e.code == HS_EXIT_NOMEM)
        return hs_cli_fail(&e);
    char msg[400];
    if (b && b->kind == HS_NUM)
        snprintf(msg, sizeof msg, "eval: '%.60s' cannot be bound: it is the constant %.17g, "
                 "not a variable", name, b->value);
    else
        snprintf(msg, sizeof msg, "eval: '%.60s' cannot be bound: %.200s", name,
                 b ? "it is not a single name" : e.msg);
    return hs_cli_usage_error(hs_usage_eval, "%s", msg);
}

/* argv[0] is the expression, the others NAME=VALUE. */
static int eval_expr(int argc, char **argv)
{
    const char *text = argv[0];
    hs_dag *d = hs_dag_new();
    double *vals = calloc((size_t)argc, sizeof *vals);
    int rc = 0;
    if (!d || !vals) {
        free(vals);
        hs_dag_free(d);
        return hs_cli_nomem();
    }
    for (int i = 1; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        char name[160];
        size_t len = eq ? (size_t)(eq - argv[i]) : 0;
        if (!eq || len == 0 || len >= sizeof name || hs_cli_parse_double(eq + 1, &vals[i])) {
            rc = hs_cli_usage_error(hs_usage_eval, "eval: '%s' is not NAME=NUMBER", argv[i]);
            goto out;
        }
        memcpy(name, argv[i], len);
        name[len] = '\0';
        if ((rc = check_binding(d, name)))
            goto out;
        if (hs_dag_symbol(d, name) < 0) {  /* the name becomes a known symbol */
            rc = hs_cli_fail(hs_dag_error(d));
            goto out;
        }
    }
    {
        freesyms fs = { 1, 0, NULL };
        hs_resolver r = { .lookup = free_lookup, .ctx = &fs, .locate = NULL };
        hs_error err;
        hs_error_init(&err);
        const hs_node *e = hs_parse(d, text, strlen(text), 0, &r, &err);
        if (!e) {
            if (!strncmp(err.msg, "unknown name '", 14))     /* the value is missing */
                hs_error_append(&err, " (give its value after the expression: holosim "
                                "eval EXPR NAME=VALUE; a velocity as x\'=VALUE)");
            rc = expr_error(&err, text);
            goto out;
        }
        int ns = hs_dag_nsymbols(d);
        double *in = calloc((size_t)ns + 1, sizeof *in);
        if (!in) {
            rc = hs_cli_nomem();
            goto out;
        }
        for (int i = 1; i < argc; i++) {
            char name[160];
            size_t len = (size_t)(strchr(argv[i], '=') - argv[i]);
            memcpy(name, argv[i], len);
            name[len] = '\0';
            in[hs_dag_find_symbol(d, name)] = vals[i];
        }
        hs_prog *p = hs_prog_compile(d, &e, 1, &err);
        if (!p) {
            free(in);
            rc = hs_cli_fail(&err);
            goto out;
        }
        double *regs = calloc(hs_prog_nregs(p) + 1, sizeof *regs), val = NAN;
        if (regs) {
            hs_prog_eval(p, in, regs, &val);
            hs_srcpos pos;
            const char *what;
            if (!isfinite(val) && hs_prog_find_nonfinite(p, in, regs, &pos, &what)) {
                hs_error_init(&err);
                hs_error_set(&err, HS_EXIT_NUMERIC, "%s", what);
                err.offset = pos.off;
                rc = expr_error(&err, text);
            } else {
                printf("%.17g\n", val);
            }
        } else {
            rc = hs_cli_nomem();
        }
        free(regs);
        free(in);
        hs_prog_free(p);
    }
out:
    free(vals);
    hs_dag_free(d);
    return rc;
}
