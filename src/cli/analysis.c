/* `holosim equilibrium` and `holosim modes`: the equilibrium nearest the
 * initial position, its stability, the eigenvalues and mode shapes of the
 * linearization, its state-space matrix (src/analysis). */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/analysis.h"
#include "../io/fmt.h"
#include "../io/table.h"

#define TWO_PI 6.283185307179586

const char hs_usage_equilibrium[] =
    "usage: holosim equilibrium MODEL [--set NAME=VALUE]... [--params FILE] [--csv]\n"
    "                                 [--linalg auto|dense|sparse]\n"
    "\n"
    "Find the equilibrium nearest the model's initial position: Newton's method\n"
    "(exact symbolic Jacobian, line search) on Q(q, 0) + G_q^T lambda = 0,\n"
    "G(q) = 0.  Report q*, the multipliers lambda* (the reaction G_q^T lambda*\n"
    "holds the system there), the residual and the stability verdict of the\n"
    "linearization (holosim help modes):\n"
    "  stable     every eigenvalue has sigma <= 0 (to round-off), none is 0, and\n"
    "             a repeated one on the imaginary axis has independent shapes\n"
    "  marginal   no sigma > 0, but an eigenvalue s = 0 (a neutral direction: a\n"
    "             family of equilibria, a critical speed) or a repeated s = i omega\n"
    "             without independent shapes (a Jordan block): the linearization\n"
    "             cannot decide, the nonlinear terms do\n"
    "  unstable   an eigenvalue has sigma > 0\n"
    "Only M, Q and G are read: the outputs, events and drawing are not (a value\n"
    "they cannot take at these parameters does not stop the analysis).  Values\n"
    "at round-off (below 64 eps of the point's size, of the largest force for a\n"
    "multiplier) are shown as 0.  Beyond n + k = 2000 Newton is sparse (the\n"
    "saddle-point Jacobian factored by KLU) and the verdict is that of the 10\n"
    "lowest modes (holosim help modes), undecided for a model that is not\n"
    "conservative (with --csv: stable 0, verdict undecided).\n"
    "\n"
    "  --set NAME=VALUE          override a parameter (repeatable)\n"
    "  --params FILE             parameters from a YAML file\n"
    "  --csv                     a header (the coordinates, lambda_NAME for each\n"
    "                            constraint, stable, verdict) and one row; stable\n"
    "                            is 1 for the verdict stable, else 0\n"
    "  --linalg KIND             auto, dense or sparse: the dense Newton (auto up\n"
    "                            to n + k = 2000) or the sparse one (auto beyond)\n"
    "\n"
    "exit status: 2 when M, Q or G depend on time, 3 when no equilibrium is found\n"
    "(Newton's answer is verified: exit 0 only with a residual at round-off of the\n"
    "size of the forces).\n";

const char hs_usage_modes[] =
    "usage: holosim modes MODEL [--set NAME=VALUE]... [--params FILE] [--csv] [--linearize]\n"
    "                           [--count K] [--linalg auto|dense|sparse]\n"
    "\n"
    "Linearize at the equilibrium nearest the initial position (on the tangent\n"
    "space of the constraints) and list each eigenvalue s = sigma + i omega with\n"
    "omega >= 0 (a complex pair once), sorted by omega, then by sigma descending:\n"
    "frequency, period and mode shape d in the model's coordinates, complex,\n"
    "scaled so that its largest component is 1 at phase 0:\n"
    "q_i - q*_i ~ |d_i| e^(sigma t) cos(omega t + arg d_i).  The table shows d_NAME\n"
    "when every shape is real, else |d_NAME| and arg_NAME (degrees).\n"
    "Conservative and undamped: K phi = omega^2 M phi; otherwise the first-order\n"
    "form.  The verdict (stable, marginal, unstable) is that of\n"
    "holosim help equilibrium; parts of a shape below 1e-13 are shown as 0.\n"
    "\n"
    "  --set NAME=VALUE          override a parameter (repeatable)\n"
    "  --params FILE             parameters from a YAML file\n"
    "  --csv                     header mode,sigma,omega,d_NAME...,im_d_NAME... and\n"
    "                            one row per eigenvalue: d_ the real, im_d_ the\n"
    "                            imaginary parts of the shape\n"
    "  --linearize               the state-space matrix A (dx/dt = A x) in n - r of\n"
    "                            the model's coordinates and their velocities\n"
    "                            (r the rank of G_q: k, or fewer when redundant)\n"
    "                            (with --csv: A alone, one row per state)\n"
    "  --count K                 the K lowest modes alone (omega^2 nearest 0); K a\n"
    "                            positive integer at most n - k\n"
    "  --linalg KIND             auto, dense or sparse: the dense analysis (auto up\n"
    "                            to n + k = 2000) or the sparse one (auto beyond)\n"
    "\n"
    "Beyond n + k = 2000 (holosim(1), SPARSE ANALYSIS) equilibrium and modes are\n"
    "sparse: Newton on the saddle-point Jacobian factored by KLU, and the K lowest\n"
    "modes (10 without --count) by shift-invert Lanczos; conservative models only,\n"
    "and --linearize stays dense (exit 2 there).\n"
    "\n"
    "exit status: 1 for a --count that is not a positive integer or exceeds n - k,\n"
    "2 when M, Q or G depend on time, 3 when no equilibrium is found.\n";

static const char *num(char *buf, double x)
{
    hs_fmt_double(buf, x == 0 ? 0.0 : x);     /* no "-0" */
    return buf;
}

/* Load, analyse, find the equilibrium and its modes: 0, or the exit code
 * after printing the error. */
typedef struct session {
    hs_model *m;
    hs_an *a;
    hs_equil eq;
    hs_modes md;
    int undecided;           /* equilibrium, sparse: no verdict (why: the message) */
    char why[1024];
} session;

/* A write error on standard output (a full disk, a closed pipe): exit 1. */
static int flushed(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    fprintf(stderr, "holosim: cannot write the output\n");
    return HS_EXIT_USAGE;
}

static void session_free(session *s)
{
    hs_an_equil_free(&s->eq);
    hs_an_modes_free(&s->md);
    hs_an_free(s->a);
    hs_model_free(s->m);
}

/* The analysis of the loaded model s->m. */
static int session_start(session *s, size_t count, int linalg, int verdict_only)
{
    hs_error err;
    hs_error_init(&err);
    if (!(s->a = hs_an_new(s->m, &err)))
        return hs_cli_fail(&err);
    hs_an_set_path(s->a, (hs_an_path)linalg);
    if (hs_an_equilibrium(s->a, s->m->q0, &s->eq, &err))
        return hs_cli_fail(&err);
    if (hs_an_modes_lowest(s->a, &s->eq, count, &s->md, &err)) {
        /* equilibrium on the sparse path: the point stands without a verdict
         * when its modes cannot be had (a damped or gyroscopic model) */
        if (!verdict_only || !hs_an_sparse(s->a) || err.code != HS_EXIT_INCONSISTENT)
            return hs_cli_fail(&err);
        s->undecided = 1;
        snprintf(s->why, sizeof s->why, "%s", err.msg);
    }
    return 0;
}

/* Options, one MODEL, then the session; 0 to go on, else *rc is the exit.
 * The caller frees o and s in every case. */
static int open_analysis(int argc, char **argv, const char *usage, unsigned cmd,
                         const char *name, opts *o, session *s, int *rc)
{
    memset(s, 0, sizeof *s);
    if (hs_cli_begin(argc, argv, usage, cmd, o, rc) || hs_cli_one_model(o, usage, name, rc))
        return -1;
    o->ov.statics = 1;              /* no outputs, events or drawing: M, Q, G alone */
    o->ov.input_symbols = 1;        /* each input at its value at t0 */
    o->ov.input_t = NAN;
    if (!(s->m = hs_cli_load(o, rc)))
        return -1;
    *rc = session_start(s, o->count, o->linalg, cmd == CMD_EQUILIBRIUM);
    return *rc ? -1 : 0;
}

static void print_header(const hs_model *m, const hs_equil *eq)
{
    char sizes[96];
    printf("model: %s%s%s\n", m->file, m->name[0] ? " -- " : "", m->name);
    size_t dof = m->n - (eq->rank < m->k ? eq->rank : m->k);  /* redundant: n - rank */
    printf("form: %s; %s, %zu degree%s of freedom\n", hs_model_form_name(m),
           hs_model_sizes(m, sizes, sizeof sizes), dof, dof == 1 ? "" : "s");
}

static void print_verdict(const hs_modes *md)
{
    char b[32];
    if (md->verdict == HS_AN_UNSTABLE)
        printf("stability: unstable (an eigenvalue has sigma = %s > 0)\n",
               num(b, md->sigma_max));
    else if (md->nzero)
        printf("stability: marginal (%zu eigenvalue%s s = 0: a neutral direction, a family "
               "of equilibria or a zero-frequency mode; no sigma > 0, but the linearization "
               "cannot decide: the nonlinear terms do)\n", md->nzero,
               md->nzero == 1 ? "" : "s");
    else if (md->verdict == HS_AN_MARGINAL)
        printf("stability: marginal (the eigenvalue s = i*%.6g is repeated without "
               "independent mode shapes, a Jordan block: the linear motion grows like t; no "
               "sigma > 0, but the linearization cannot decide: the nonlinear terms do)\n",
               md->jordan_omega);
    else
        printf("stability: stable (every eigenvalue of the linearization has sigma <= 0, none "
               "is 0 and those on the imaginary axis have independent mode shapes: linear, "
               "spectral stability)\n");
}

static void print_equilibrium(const hs_model *m, const hs_equil *eq)
{
    char b[32], b2[32];
    printf("equilibrium (Newton from the initial position: %d step%s", eq->iterations,
           eq->iterations == 1 ? "" : "s");
    if (eq->floor > 0)      /* a flat equilibrium: Q ~ dq^3 there, q* to about eps^(1/3) */
        printf("; stopped where the residual cannot decrease any more, at %.2g of the "
               "start's: a flat equilibrium, q* known less well than round-off", eq->floor);
    printf("):\n");
    for (size_t i = 0; i < m->n; i++)
        printf("  %s = %s\n", m->qname[i], num(b, eq->q[i]));
    if (m->k && eq->rank < m->k)
        printf("multipliers (the reaction G_q^T lambda holds the system; the constraints are "
               "redundant there, rank of G_q %zu of %zu: not unique, these are the "
               "minimum-norm ones, least Euclidean norm):\n", eq->rank, m->k);
    else if (m->k)
        printf("multipliers (the reaction G_q^T lambda holds the system):\n");
    for (size_t j = 0; j < m->k; j++)
        printf("  lambda_%s = %s\n", m->cname[j], num(b, eq->lambda[j]));
    printf("residual: max |Q + G_q^T lambda| = %s, max |G| = %s\n", num(b, eq->res_Q),
           num(b2, eq->res_G));
}

int hs_cli_equilibrium(int argc, char **argv)
{
    opts o;
    session s;
    int rc;
    if (open_analysis(argc, argv, hs_usage_equilibrium, CMD_EQUILIBRIUM, "equilibrium", &o, &s, &rc)) {
        hs_cli_free_opts(&o);
        session_free(&s);
        return rc;
    }
    const hs_model *m = s.m;
    if (o.csv) {
        hs_table t;
        hs_table_init(&t, stdout, HS_TABLE_SHORTEST);
        for (size_t i = 0; i < m->n; i++)
            hs_table_text(&t, m->qname[i]);
        for (size_t j = 0; j < m->k; j++)
            hs_table_text2(&t, "lambda_", m->cname[j]);
        hs_table_text(&t, "stable");
        hs_table_text(&t, "verdict");
        hs_table_end(&t);
        for (size_t i = 0; i < m->n; i++)
            hs_table_num(&t, s.eq.q[i]);
        for (size_t j = 0; j < m->k; j++)
            hs_table_num(&t, s.eq.lambda[j]);
        hs_table_int(&t, s.undecided ? 0 : s.md.stable);
        hs_table_text(&t, s.undecided ? "undecided" : hs_an_verdict_names[s.md.verdict]);
        hs_table_end(&t);
    } else {
        print_header(m, &s.eq);
        print_equilibrium(m, &s.eq);
        if (s.undecided)
            printf("stability: undecided (%s)\n", s.why);
        else
            print_verdict(&s.md);
    }
    hs_cli_free_opts(&o);
    session_free(&s);
    return flushed();
}

static void modes_csv(const hs_model *m, const hs_modes *md)
{
    hs_table t;
    hs_table_init(&t, stdout, HS_TABLE_SHORTEST);
    hs_table_text(&t, "mode");
    hs_table_text(&t, "sigma");
    hs_table_text(&t, "omega");
    for (size_t i = 0; i < m->n; i++)
        hs_table_text2(&t, "d_", m->qname[i]);
    for (size_t i = 0; i < m->n; i++)
        hs_table_text2(&t, "im_d_", m->qname[i]);
    hs_table_end(&t);
    for (size_t r = 0; r < md->count; r++) {
        hs_table_int(&t, (long)r + 1);
        hs_table_num(&t, md->sigma[r]);
        hs_table_num(&t, md->omega[r]);
        for (size_t i = 0; i < m->n; i++)
            hs_table_num(&t, md->shape[r * m->n + i]);
        for (size_t i = 0; i < m->n; i++)
            hs_table_num(&t, md->shape_im[r * m->n + i]);
        hs_table_end(&t);
    }
}

/* The width of a text column headed `pre` NAME. */
static int col_width(const char *pre, const char *name)
{
    int w = (int)(strlen(pre) + strlen(name)) + 1;
    return w < 12 ? 12 : w;
}

/* Any shape with an imaginary part: the table shows magnitude and phase. */
static int complex_shapes(const hs_modes *md)
{
    for (size_t e = 0; e < md->count * md->n; e++)
        if (md->shape_im[e] != 0)
            return 1;
    return 0;
}

static void shape_cells(const hs_model *m, const hs_modes *md, size_t r, int cplx)
{
    for (size_t i = 0; i < m->n; i++) {
        double re = md->shape[r * m->n + i], im = md->shape_im[r * m->n + i];
        if (!cplx) {
            printf(" %*.6g", col_width("d_", m->qname[i]), re + 0.0);
            continue;
        }
        printf(" %*.6g", col_width("|d_|", m->qname[i]), hypot(re, im));
        if (re == 0 && im == 0)
            printf(" %*s", col_width("arg_", m->qname[i]), "-");
        else        /* (-180, 180]: atan2 of a +0 imaginary part */
            printf(" %*.6g", col_width("arg_", m->qname[i]),
                   atan2(im + 0.0, re) * (360 / TWO_PI));
    }
}

static void modes_text(const hs_model *m, const hs_equil *eq, const hs_modes *md, int sparse)
{
    print_header(m, eq);
    print_equilibrium(m, eq);
    if (!md->dof) {
        printf("no degrees of freedom left (n = k): no modes\n");
        print_verdict(md);
        return;
    }
    printf("linearization on the tangent space ker G_q: %s\n", md->conservative
           ? "conservative and undamped, solved as K phi = omega^2 M phi"
           : "damping, gyroscopic or circulatory terms, solved in first-order form");
    if (md->count < md->dof && md->conservative)
        printf("the %zu lowest of %zu (omega^2 nearest 0%s)\n", md->count, md->dof,
               sparse ? ": sparse shift-invert Lanczos" : "");
    int cplx = complex_shapes(md);
    printf("%4s %13s %13s %13s %13s ", "mode", "sigma", "omega", "freq", "period");
    char h[300];
    for (size_t i = 0; i < m->n; i++) {
        snprintf(h, sizeof h, "%s%s%s", cplx ? "|d_" : "d_", m->qname[i], cplx ? "|" : "");
        printf(" %*s", col_width(cplx ? "|d_|" : "d_", m->qname[i]), h);
        if (cplx) {
            snprintf(h, sizeof h, "arg_%s", m->qname[i]);
            printf(" %*s", col_width("arg_", m->qname[i]), h);
        }
    }
    putchar('\n');
    for (size_t r = 0; r < md->count; r++) {
        double w = md->omega[r];
        printf("%4zu %13.6g %13.6g %13.6g ", r + 1, md->sigma[r] + 0.0, w, w / TWO_PI);
        if (w > 0)
            printf("%13.6g ", TWO_PI / w);
        else
            printf("%13s ", "-");
        shape_cells(m, md, r, cplx);
        putchar('\n');
    }
    if (cplx)
        printf("(sigma, omega in 1/time; freq = omega/2pi; period = 2pi/omega; mode shape d, "
               "complex: |d_| its magnitude, arg_ its phase in degrees, largest component 1 "
               "at phase 0: q - q* ~ |d| e^(sigma t) cos(omega t + arg))\n");
    else
        printf("(sigma, omega in 1/time; freq = omega/2pi; period = 2pi/omega; d_: mode shape, "
               "real, largest component 1)\n");
    print_verdict(md);
}

/* The state's names: the state coordinates, then their velocities. */
static const char *state_name(const hs_model *m, const hs_linear *lin, size_t i)
{
    return i < lin->dof ? m->qname[lin->state[i]] : m->vname[lin->state[i - lin->dof]];
}

static void linear_print(const hs_model *m, const hs_linear *lin, int csv)
{
    size_t m2 = 2 * lin->dof;
    char b[32];
    if (!csv && !m2) {
        printf("\nstate-space form: no state (n = k)\n");
        return;
    }
    if (!csv) {
        printf("\nstate-space form dx/dt = A x, x = deviations from (q*, 0) of (");
        for (size_t i = 0; i < m2; i++)
            printf("%s%s", i ? ", " : "", state_name(m, lin, i));
        printf(")\n");
        if (lin->nsolved) {
            printf("solved from them through the linearized constraints:");
            for (size_t j = 0; j < lin->nsolved; j++)
                printf(" %s", m->qname[lin->solved[j]]);
            printf(" (the best-conditioned columns of G_q: column-pivoted QR)\n");
        }
        if (lin->nsolved < lin->k)
            printf("(G_q has rank %zu of k = %zu there: the redundant constraints add nothing "
                   "to the linearized ones)\n", lin->nsolved, lin->k);
        printf("A:\n");
    } else {
        hs_table t;
        hs_table_init(&t, stdout, HS_TABLE_SHORTEST);
        hs_table_text(&t, "state");
        for (size_t i = 0; i < m2; i++)
            hs_table_text(&t, state_name(m, lin, i));
        hs_table_end(&t);
        for (size_t i = 0; i < m2; i++) {
            hs_table_text(&t, state_name(m, lin, i));
            for (size_t j = 0; j < m2; j++)
                hs_table_num(&t, lin->A[i * m2 + j]);
            hs_table_end(&t);
        }
        return;
    }
    for (size_t i = 0; i < m2; i++) {
        printf("  %-12s", state_name(m, lin, i));
        for (size_t j = 0; j < m2; j++)
            printf(" %24s", num(b, lin->A[i * m2 + j]));
        putchar('\n');
    }
}

int hs_cli_modes(int argc, char **argv)
{
    opts o;
    session s;
    int rc;
    if (open_analysis(argc, argv, hs_usage_modes, CMD_MODES, "modes", &o, &s, &rc)) {
        hs_cli_free_opts(&o);
        session_free(&s);
        return rc;
    }
    hs_linear lin;
    memset(&lin, 0, sizeof lin);
    if (o.linearize) {
        hs_error err;
        hs_error_init(&err);
        if (hs_an_linearize(s.a, &s.eq, &lin, &err)) {
            rc = hs_cli_fail(&err);
            goto out;
        }
    }
    if (o.csv && o.linearize)
        linear_print(s.m, &lin, 1);
    else if (o.csv)
        modes_csv(s.m, &s.md);
    else
        modes_text(s.m, &s.eq, &s.md, hs_an_sparse(s.a));
    if (o.linearize && !o.csv)
        linear_print(s.m, &lin, 0);
    rc = flushed();
out:
    hs_an_linear_free(&lin);
    hs_cli_free_opts(&o);
    session_free(&s);
    return rc;
}
