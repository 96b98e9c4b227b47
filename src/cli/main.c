/* holosim: the command line.  main alone prints errors and picks the exit
 * code (0 ok, 1 usage, 2 model error, 3 inconsistent initial data, 4
 * numerical failure, 130 interrupted); the commands live in their own
 * files (cli.h). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#ifndef HS_VERSION
#define HS_VERSION "0.0.0"
#endif

const char hs_usage_main[] =
    "usage: holosim COMMAND [ARGS]\n"
    "\n"
    "Simulate mechanical systems under ideal holonomic constraints (Lagrange's\n"
    "equations of the first kind) from a YAML model file; write CSV.\n"
    "\n"
    "commands:\n"
    "  run MODEL [OPTIONS]       integrate and write CSV (stdout or -o FILE)\n"
    "  check MODEL [OPTIONS]     load, compile, consistency and rank report\n"
    "  derive MODEL              print the symbolic M, Q, G, G_q, Gdot, gamma\n"
    "  derive --wrt NAME EXPR    print the simplified derivative of EXPR\n"
    "  eval EXPR [NAME=VALUE]... evaluate an expression (17 digits)\n"
    "  equilibrium MODEL         nearest equilibrium, multipliers, stability\n"
    "  modes MODEL               eigenvalues and mode shapes at that equilibrium\n"
    "  help [COMMAND]            this text, or one command's options\n"
    "\n"
    "MODEL is a file path, or - for standard input.\n"
    "  --help, -h                this text\n"
    "  --version                 print the version\n"
    "\n"
    "exit status: 0 success, 1 usage or output error, 2 model error,\n"
    "3 inconsistent initial data, 4 numerical failure, 130 hs_cli_interrupted.\n"
    "See holosim(1) for the model format.\n";

const char hs_usage_run[] =
    "usage: holosim run MODEL [OPTIONS]\n"
    "\n"
    "Integrate the model from its initial data and write one CSV row per output\n"
    "time t0, t0+dt, ..., t_end.\n"
    "\n"
    "  -o, --output FILE         write the CSV to FILE (default: standard output)\n"
    "  --set NAME=VALUE          override a parameter (repeatable); parameters\n"
    "                            derived from it are recomputed\n"
    "  --t-end T                 end time (overrides simulate.t_end)\n"
    "  --dt H                    output interval (default (t_end - t0)/1000)\n"
    "  --method NAME             stepper: rk2 rk4 rkf45 rkck rk8pd (default) rk1imp\n"
    "                            rk2imp rk4imp bsimp msadams msbdf\n"
    "  --rtol X, --atol X        error tolerances (default 1e-9 each)\n"
    "  --stabilize KIND          projection (default) | baumgarte | none\n"
    "  --alpha X, --beta X       Baumgarte gains (default 10, 10)\n"
    "  --output-mode MODE        exact (default: the stepper stops at every row) |\n"
    "                            interpolate (free steps, rows by Hermite interpolation)\n"
    "  --consistency MODE        project (default) | reject\n"
    "  --tolerance X             consistency tolerance (default 1e-10)\n"
    "  --columns LIST            comma list of columns; 'default', 'all' allowed\n"
    "  --precision N             significant digits, 1..17 (default 17)\n"
    "  --progress                progress bar on stderr (only on a terminal)\n"
    "  --summary FILE            write the run summary as one CSV row to FILE\n"
    "  -q, --quiet               no consistency report and no summary on stderr\n";

const char hs_usage_check[] =
    "usage: holosim check MODEL [--set NAME=VALUE]... [--consistency MODE]\n"
    "                           [--tolerance X]\n"
    "\n"
    "Load and compile the model and report: n, k, each constraint's residual\n"
    "at t0 (position and velocity), the rank of G_q, whether the mass matrix is\n"
    "positive definite, and what the consistency step would change.  No\n"
    "integration.\n";

const char hs_usage_derive[] =
    "usage: holosim derive MODEL [--set NAME=VALUE]...\n"
    "       holosim derive --wrt NAME EXPR\n"
    "\n"
    "Print the model's symbolic kernels (M, Q, G, G_q, Gdot = D G, gamma =\n"
    "D(D G)), or the simplified derivative of one expression with respect to\n"
    "NAME (every name in EXPR is a free symbol; x' is a symbol too).\n";

const char hs_usage_eval[] =
    "usage: holosim eval EXPR [NAME=VALUE]...\n"
    "\n"
    "Evaluate EXPR with the given values and print the result with 17\n"
    "significant digits.  Velocities may be given as x'=VALUE.\n";

int hs_cli_fail(const hs_error *e)
{
    if (!e->file[0] && e->line == 0)
        fputs("holosim: ", stderr);
    hs_error_print(e, stderr);
    return e->code ? e->code : 1;
}

/* One line saying what is wrong, one saying where help is. */
int hs_cli_usage_error(const char *cmd_usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "holosim: ");
    fprintf(stderr, fmt, arg);
    const char *cmd = strstr(cmd_usage, "holosim ");
    char name[16] = "";
    if (cmd && sscanf(cmd + 8, "%15[a-z]", name) == 1 && strcmp(name, "COMMAND") != 0)
        fprintf(stderr, "\ntry 'holosim help %s'\n", name);
    else
        fprintf(stderr, "\ntry 'holosim --help'\n");
    return HS_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    if (argc < 2) {
        fputs(hs_usage_main, stderr);
        return HS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(hs_usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("holosim %s\n", HS_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0) {
        const char *c = argc > 2 ? argv[2] : "";
        fputs(strcmp(c, "run") == 0 ? hs_usage_run : strcmp(c, "check") == 0 ? hs_usage_check
              : strcmp(c, "derive") == 0 ? hs_usage_derive : strcmp(c, "eval") == 0 ? hs_usage_eval
              : strcmp(c, "equilibrium") == 0 ? hs_usage_equilibrium
              : strcmp(c, "modes") == 0 ? hs_usage_modes : hs_usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "run") == 0)
        return hs_cli_run(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0)
        return hs_cli_check(argc - 2, argv + 2);
    if (strcmp(cmd, "derive") == 0)
        return hs_cli_derive(argc - 2, argv + 2);
    if (strcmp(cmd, "eval") == 0)
        return hs_cli_eval(argc - 2, argv + 2);
    if (strcmp(cmd, "equilibrium") == 0)
        return hs_cli_equilibrium(argc - 2, argv + 2);
    if (strcmp(cmd, "modes") == 0)
        return hs_cli_modes(argc - 2, argv + 2);
    fprintf(stderr, "holosim: unknown command '%s'\n\n%s", cmd, hs_usage_main);
    return HS_EXIT_USAGE;
}
