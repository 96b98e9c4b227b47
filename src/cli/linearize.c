/* `holosim linearize`: the state-space model A, B, C, D at an operating
 * point (src/analysis/statespace.c), its poles and transmission zeros, a
 * file by extension (ssfile.c) or the Bode rows. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../analysis/analysis.h"
#include "../io/fmt.h"
#include "../io/table.h"

const char hs_usage_linearize[] =
    "usage: holosim linearize MODEL [--inputs U1,...] [--outputs Y1,...]\n"
    "                         [--at equilibrium|initial|t=T] [-o FILE] [--bode W1:W2[:N]]\n"
    "\n"
    "The continuous-time linear model dx/dt = A x + B u, y = C x + D u at an\n"
    "operating point, from exact symbolic derivatives: x the n - k coordinates\n"
    "modes --linearize keeps and their velocities (the same A), u the inputs\n"
    "(the model's `inputs`, entering the forces or the potential), y columns:\n"
    "coordinates x, velocities x', accelerations x'', outputs, multipliers\n"
    "lambda_NAME, reactions R_x (D exact where an output reads an acceleration\n"
    "or a multiplier).\n"
    "Prints the matrices, the poles (eigenvalues of A) and the finite\n"
    "transmission zeros of each output/input pair.\n"
    "\n"
    "  --inputs U1,...           the inputs, in order (default: every input)\n"
    "  --outputs Y1,...          the outputs, in order (default: the coordinates)\n"
    "  --at POINT                equilibrium (default: the one nearest the initial\n"
    "                            position, inputs at their values at t0) |\n"
    "                            initial (the initial position as it is) |\n"
    "                            t=T (the equilibrium with the inputs at time T)\n"
    "  -o, --output FILE         write A, B, C, D and the names: .mat (MAT 5),\n"
    "                            .py (NumPy), .m (Octave/MATLAB), .csv\n"
    "                            (matrix,row,column,value)\n"
    "  --bode W1:W2[:N]          instead of the report: CSV rows\n"
    "                            w,pair,mag_db,phase_deg for N (default 50)\n"
    "                            frequencies from W1 to W2 rad per time unit\n"
    "                            (logarithmic), every output/input pair\n"
    "  --input NAME=SRC          an input's value: an expression of t, or FILE.csv\n"
    "  --set NAME=VALUE          override a parameter (repeatable)\n"
    "  --params FILE             parameters from a YAML file\n"
    "\n"
    "exit status: 2 for a name that is no input or column and when M, Q or G\n"
    "depend on time, 3 when no equilibrium is found.\n";

static const char *num(char *buf, double x)
{
    hs_fmt_double(buf, x == 0 ? 0.0 : x);
    return buf;
}

/* "a,b,c" into the list *out (pointers into a copy kept in *store). */
static int split_list(const char *s, char **store, const char ***out, size_t *n)
{
    *n = 0;
    *out = NULL;
    if (!s)
        return 0;
    *store = malloc(strlen(s) + 1);
    *out = calloc(strlen(s) + 2, sizeof **out);
    if (!*store || !*out)
        return -1;
    strcpy(*store, s);
    for (char *p = strtok(*store, ", "); p; p = strtok(NULL, ", "))
        (*out)[(*n)++] = p;
    return 0;
}

static void print_matrix(const char *name, const double *X, size_t r, size_t c,
                         char *const *rn, char *const *cn)
{
    char b[32];
    printf("%s (%zu x %zu):\n", name, r, c);
    if (!r || !c)
        return;
    printf("  %-12s", "");
    for (size_t j = 0; j < c; j++)
        printf(" %24s", cn[j]);
    putchar('\n');
    for (size_t i = 0; i < r; i++) {
        printf("  %-12s", rn[i]);
        for (size_t j = 0; j < c; j++)
            printf(" %24s", num(b, X[i * c + j]));
        putchar('\n');
    }
}

static void print_complex_list(const double *re, const double *im, size_t n)
{
    char b[32], b2[32];
    for (size_t i = 0; i < n; i++) {
        if (im[i] == 0)
            printf("  %s\n", num(b, re[i]));
        else
            printf("  %s %s %si\n", num(b, re[i]), im[i] < 0 ? "-" : "+",
                   num(b2, fabs(im[i])));
    }
}

static int cmp_re(const void *pa, const void *pb)
{
    const double *a = pa, *b = pb;
    return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1];
}

/* Sorted by real part, then imaginary (pairs (re, im) in z[2n]); -1 out
 * of memory. */
static int sort_pairs(double *re, double *im, size_t n)
{
    double *z = malloc(2 * n * sizeof *z + 1);
    if (!z)
        return -1;
    for (size_t i = 0; i < n; i++) {
        z[2 * i] = re[i];
        z[2 * i + 1] = im[i];
    }
    qsort(z, n, 2 * sizeof *z, cmp_re);
    for (size_t i = 0; i < n; i++) {
        re[i] = z[2 * i];
        im[i] = z[2 * i + 1];
    }
    free(z);
    return 0;
}

static int report(const hs_model *m, const hs_equil *eq, const char *at,
                  const hs_statespace *ss)
{
    char b[32];
    size_t N = ss->nx;
    double *re = calloc(N + 2, sizeof *re), *im = calloc(N + 2, sizeof *im);
    if (!re || !im) {
        free(re);
        free(im);
        return hs_cli_nomem();
    }
    printf("model: %s%s%s\n", m->file, m->name[0] ? " -- " : "", m->name);
    printf("operating point (%s):", at);
    for (size_t i = 0; i < m->n; i++)
        printf("%s %s = %s", i ? "," : "", m->qname[i], num(b, eq->q[i]));
    putchar('\n');
    for (size_t j = 0; j < m->ninput; j++)
        printf("%s %s = %s", j ? "," : "inputs at:", m->pname[m->input0 + j],
               num(b, m->pval[m->input0 + j]));
    if (m->ninput)
        putchar('\n');
    printf("dx/dt = A x + B u, y = C x + D u; x = deviations of (");
    for (size_t i = 0; i < N; i++)
        printf("%s%s", i ? ", " : "", ss->xname[i]);
    printf(")\n");
    print_matrix("A", ss->A, N, N, ss->xname, ss->xname);
    print_matrix("B", ss->B, N, ss->nu, ss->xname, ss->uname);
    print_matrix("C", ss->C, ss->ny, N, ss->yname, ss->xname);
    print_matrix("D", ss->D, ss->ny, ss->nu, ss->yname, ss->uname);
    int rc = hs_ss_poles(ss, re, im);
    if (!rc && !(rc = sort_pairs(re, im, N))) {
        printf("poles (eigenvalues of A):\n");
        print_complex_list(re, im, N);
    }
    for (size_t i = 0; i < ss->ny && !rc; i++)
        for (size_t j = 0; j < ss->nu && !rc; j++) {
            size_t nz = 0;
            rc = hs_ss_zeros(ss, i, j, re, im, &nz);
            if (rc == 1) {
                printf("zeros of %s/%s: none (the transfer function is 0)\n", ss->yname[i],
                       ss->uname[j]);
                rc = 0;
                continue;
            }
            if (rc || (rc = sort_pairs(re, im, nz)))
                break;
            printf("zeros of %s/%s:%s\n", ss->yname[i], ss->uname[j], nz ? "" : " none");
            print_complex_list(re, im, nz);
        }
    free(re);
    free(im);
    if (rc == -1)
        return hs_cli_nomem();
    if (rc) {
        fprintf(stderr, "holosim: error: the eigenvalue solver did not converge\n");
        return HS_EXIT_INCONSISTENT;
    }
    return 0;
}

/* --bode W1:W2[:N] */
static int parse_bode(const char *s, double *w1, double *w2, long *np)
{
    char *end;
    *w1 = strtod(s, &end);
    if (*end != ':')
        return -1;
    *w2 = strtod(end + 1, &end);
    *np = 50;
    if (*end == ':') {
        *np = strtol(end + 1, &end, 10);
    }
    return *end || !(*w1 > 0) || !(*w2 > *w1) || !isfinite(*w2) || *np < 2 || *np > 1000000
           ? -1 : 0;
}

static int bode(const hs_statespace *ss, double w1, double w2, long np)
{
    size_t nyu = ss->ny * ss->nu;
    double *re = calloc(nyu + 1, sizeof *re), *im = calloc(nyu + 1, sizeof *im);
    if (!re || !im) {
        free(re);
        free(im);
        return hs_cli_nomem();
    }
    static const char *const head[] = { "w", "pair", "mag_db", "phase_deg" };
    hs_table t;
    hs_table_init(&t, stdout, HS_TABLE_SHORTEST);
    hs_table_header(&t, head, 4);
    int rc = 0;
    for (long k = 0; k < np && !rc; k++) {
        double w = w1 * pow(w2 / w1, (double)k / (double)(np - 1));
        if (k == np - 1)
            w = w2;
        rc = hs_ss_response(ss, w, re, im);
        for (size_t i = 0; i < ss->ny && !rc; i++)
            for (size_t j = 0; j < ss->nu; j++) {
                double x = re[i * ss->nu + j], y = im[i * ss->nu + j];
                double mag = hypot(x, y);
                char pair[512];
                snprintf(pair, sizeof pair, "%s/%s", ss->yname[i], ss->uname[j]);
                hs_table_num(&t, w);
                hs_table_text(&t, pair);
                if (mag > 0)
                    hs_table_num(&t, 20 * log10(mag));
                else
                    hs_table_text(&t, "-inf");    /* a zero of the response */
                hs_table_num(&t, atan2(y, x) * (180 / 3.14159265358979323846));
                hs_table_end(&t);
            }
    }
    free(re);
    free(im);
    if (rc == -1)
        return hs_cli_nomem();
    if (rc) {
        fprintf(stderr, "holosim: error: --bode: j w I - A is singular at a frequency of "
                "the range (a pole on the imaginary axis)\n");
        return HS_EXIT_INCONSISTENT;
    }
    return 0;
}

/* The operating point --at names: 0 (equilibrium), 1 (initial); *t for t=T. */
static int parse_at(const char *s, double *t)
{
    *t = NAN;
    if (!s || strcmp(s, "equilibrium") == 0)
        return 0;
    if (strcmp(s, "initial") == 0)
        return 1;
    if (strncmp(s, "t=", 2) == 0 && !hs_cli_parse_double(s + 2, t))
        return 0;
    return -1;
}

static int linearize_cmd(opts *o, hs_model *m, int at, const char *atname)
{
    hs_error err;
    hs_error_init(&err);
    hs_an *a = hs_an_new(m, &err);
    hs_equil eq;
    memset(&eq, 0, sizeof eq);
    hs_statespace ss;
    memset(&ss, 0, sizeof ss);
    char *us = NULL, *ys = NULL;
    const char **u = NULL, **y = NULL;
    size_t nu = 0, ny = 0;
    int rc = 0;
    if (!a)
        return hs_cli_fail(&err);
    if (at == 1 ? hs_an_point(a, m->q0, &eq, &err) : hs_an_equilibrium(a, m->q0, &eq, &err)) {
        rc = hs_cli_fail(&err);
        goto out;
    }
    if (split_list(o->lin_inputs, &us, &u, &nu) || split_list(o->lin_outputs, &ys, &y, &ny)) {
        rc = hs_cli_nomem();
        goto out;
    }
    if (!o->lin_inputs) {               /* every input */
        free(u);
        u = calloc(m->ninput + 1, sizeof *u);
        if (!u) {
            rc = hs_cli_nomem();
            goto out;
        }
        for (nu = 0; nu < m->ninput; nu++)
            u[nu] = m->pname[m->input0 + nu];
    }
    if (!o->lin_outputs) {              /* the coordinates */
        free(y);
        y = calloc(m->n + 1, sizeof *y);
        if (!y) {
            rc = hs_cli_nomem();
            goto out;
        }
        for (ny = 0; ny < m->n; ny++)
            y[ny] = m->qname[ny];
    }
    if (hs_an_statespace(a, &eq, u, nu, y, ny, &ss, &err)) {
        rc = hs_cli_fail(&err);
        goto out;
    }
    if (at == 1 && (eq.res_Q > 1e-9 || eq.res_G > 1e-9))
        fprintf(stderr, "holosim: warning: the initial state is not an equilibrium (max |Q + "
                "G_q^T lambda| = %.3g, max |G| = %.3g): the linearization leaves out the "
                "motion there\n", eq.res_Q, eq.res_G);
    if (o->output && (rc = hs_cli_ss_write(o->output, &ss, m->file)))
        goto out;
    if (o->bode) {
        double w1, w2;
        long np;
        if (parse_bode(o->bode, &w1, &w2, &np)) {
            rc = hs_cli_usage_error(hs_usage_linearize, "--bode wants W1:W2[:N], 0 < W1 < "
                                    "W2, N >= 2, got '%s'", o->bode);
            goto out;
        }
        rc = bode(&ss, w1, w2, np);
    } else if (!o->output) {
        rc = report(m, &eq, atname, &ss);
    }
out:
    free(us);
    free(ys);
    free(u);
    free(y);
    hs_statespace_free(&ss);
    hs_an_equil_free(&eq);
    hs_an_free(a);
    return rc;
}

int hs_cli_linearize(int argc, char **argv)
{
    opts o;
    int rc;
    if (hs_cli_begin(argc, argv, hs_usage_linearize, CMD_LINEARIZE, &o, &rc) ||
        hs_cli_one_model(&o, hs_usage_linearize, "linearize", &rc))
        return rc;
    double t;
    int at = parse_at(o.lin_at, &t);
    if (at < 0) {
        rc = hs_cli_usage_error(hs_usage_linearize, "--at wants equilibrium, initial or t=T, "
                                "got '%s'", o.lin_at);
        hs_cli_free_opts(&o);
        return rc;
    }
    if (o.output && !hs_cli_ss_kind(o.output)) {
        rc = hs_cli_usage_error(hs_usage_linearize, "-o wants FILE.mat, FILE.py, FILE.m or "
                                "FILE.csv, got '%s'", o.output);
        hs_cli_free_opts(&o);
        return rc;
    }
    if (o.output && (rc = hs_cli_check_files(&o, NULL, NULL, NULL, NULL))) {
        hs_cli_free_opts(&o);     /* -o onto the model, a --params file, an --input table */
        return rc;
    }
    o.ov.statics = 1;               /* M, Q, G and the outputs */
    o.ov.keep_outputs = 1;
    o.ov.input_symbols = 1;
    o.ov.input_t = t;
    hs_model *m = hs_cli_load(&o, &rc);
    if (!m)
        return rc;
    rc = linearize_cmd(&o, m, at, o.lin_at ? o.lin_at : "equilibrium");
    if (!rc && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "holosim: cannot write the output\n");
        rc = HS_EXIT_USAGE;
    }
    hs_model_free(m);
    hs_cli_free_opts(&o);
    return rc;
}
