/* holosim: the command line.  main alone prints errors and returns the exit
 * code the error carries (0 ok, 1 usage or output, 2 model error, 3
 * inconsistent initial data, 4 numerical failure, 5 out of memory, 128 +
 * signal when interrupted); the commands live in their own files (cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>


#include "../integrate/integrate.h"
#include "../util/suggest.h"

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
    "  columns MODEL             every column a run can write, one per line\n"
    "  derive MODEL              print the symbolic M, Q, G, G_q, Gdot, gamma\n"
    "  derive --wrt NAME EXPR    print the simplified derivative of EXPR\n"
    "  eval EXPR [NAME=VALUE]... evaluate an expression (17 digits)\n"
    "  batch MODEL --points F ... many points of a grid in one process (for sweeps)\n"
    "  equilibrium MODEL         nearest equilibrium, multipliers, stability\n"
    "  modes MODEL               eigenvalues and mode shapes at that equilibrium\n"
    "  linearize MODEL           A, B, C, D at an equilibrium, poles, zeros, Bode\n"
    "  animate MODEL [RUN.csv] -o OUT   the model's drawing moving: a page (.html),\n"
    "                            a GIF (.gif) or a video (.mp4, with ffmpeg)\n"
    "  floquet MODEL --period T  Floquet multipliers of the motion over a period\n"
    "  lyapunov MODEL            Lyapunov exponents of the motion (--spectrum: all)\n"
    "  help [COMMAND]            this text, or one command's options\n"
    "  help methods              the steppers: name, order, kind\n"
    "\n"
    "MODEL is a file path, or - for standard input.  Options may come before or\n"
    "after the operands; -- ends the options.\n"
    "  -h, --help                this text\n"
    "  -V, --version             print the version\n"
    "\n"
    "exit status: 0 success, 1 usage or output error, 2 model error,\n"
    "3 inconsistent initial data, 4 numerical failure, 5 out of memory,\n"
    "130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP (complete rows kept).\n"
    "See holosim(1), and holosim-model(5) for the model format.\n";

const char hs_usage_run[] =
    "usage: holosim run MODEL [OPTIONS]\n"
    "\n"
    "Integrate the model from its initial data and write one CSV row per output\n"
    "time t0, t0+dt, ..., t_end.\n"
    "\n"
    "  -o, --output FILE         write the CSV to FILE (default: standard output)\n"
    "  --set NAME=EXPR[,...]     override parameters (repeatable; the last of a name\n"
    "                            wins): an expression of numbers, pi and parameters;\n"
    "                            parameters derived from them are recomputed\n"
    "  --params FILE.yaml        overrides from a file (NAME: EXPR per line), applied\n"
    "                            in command-line order with the --set options\n"
    "  --input NAME=SRC          give input NAME (the model's `inputs`; repeatable,\n"
    "                            the last of a name wins): an expression of t and\n"
    "                            parameters, or FILE.csv (columns t and NAME: linear\n"
    "                            between rows, held outside them; the run steps to\n"
    "                            every row's time)\n"
    "  --t-end T                 end time (overrides simulate.t_end); T and the\n"
    "                            numbers below (H, X) may be expressions of\n"
    "                            numbers, pi and parameters: --t-end '2*pi/w'\n"
    "  --dt H                    output interval (default (t_end - t0)/1000)\n"
    "  --method NAME             stepper ('holosim help methods'): rk2 rk4 rkf45\n"
    "                            rkck rk8pd rk1imp rk2imp rk4imp bsimp msadams\n"
    "                            msbdf dop853; fixed step: rattle rattle4 rattle6\n"
    "                            rattle8 (the default: see 'holosim help methods')\n"
    "  --step H                  step of rattle* (must divide dt; default: from\n"
    "                            rtol and atol over the first interval)\n"
    "  --rtol X, --atol X        error tolerances (default 1e-9 each)\n"
    "  --stabilize KIND          projection (default) | baumgarte | none\n"
    "  --alpha X, --beta X       Baumgarte gains (default 10, 10)\n"
    "  --output-mode MODE        exact (default: the stepper stops at every row) |\n"
    "                            interpolate (free steps, rows interpolated)\n"
    "  --consistency MODE        project (default) | reject\n"
    "  --tolerance X             consistency tolerance (default 1e-10)\n"
    "  --dependent MODE          allow (default: redundant constraints, minimum-norm\n"
    "                            multipliers) | reject (dependent constraints: error)\n"
    "  --native=MODE             native kernels (same numbers, faster): auto\n"
    "                            (default: cached builds; long runs build in the\n"
    "                            background) | always (build now) | never\n"
    "  --no-native               the built-in evaluator only\n"
    "  --columns LIST            comma list of columns or globs ('lambda_*');\n"
    "                            'default', 'all' allowed; see 'holosim columns MODEL'\n"
    "  --precision N             significant digits, 1..17 (default 17)\n"
    "  --progress                progress line with the time left on stderr from\n"
    "                            the start (on a terminal it also appears by\n"
    "                            itself after 2 s, unless -q)\n"
    "  --summary FILE            write the run summary as one CSV row to FILE\n"
    "  --final COL[,COL...]      add to the summary a field final_COL per column: its\n"
    "                            value in the last row written (any column the run\n"
    "                            writes, sensitivities too)\n"
    "  --stop-when COND          stop the run where COND becomes true (repeatable):\n"
    "                            'a > b', 'a < b' or an expression whose zero\n"
    "                            crossing stops it; COND reads what outputs read\n"
    "                            (x'', lambda_NAME, R_x, T, U, E, H, ...)\n"
    "  --events FILE             write a CSV row for every event (first column\n"
    "                            'event', then the run's columns); - for standard\n"
    "                            output when -o names a file\n"
    "  -q, --quiet               no summary on stderr (moved initial data are still\n"
    "                            reported)\n"
    "  --quiet-projection        no report of the consistency projection, nor the\n"
    "                            warning that a condition is true at the start\n"
    "  --sensitivity P1,P2,...   also integrate d(q, q', lambda)/dp for these\n"
    "                            parameters (exact derivatives, forward): columns\n"
    "                            t, q, q', lambda_*, then per p dq/dp, dq'/dp,\n"
    "                            dlambda_NAME/dp; no contacts, --columns, nor events\n"
    "                            that change the state; a stop event ends it, its\n"
    "                            message with dt_stop/dp; n + k at most 6000; its\n"
    "                            summary knows rows, t_reached, wall_s, --final\n"
    "                            (holosim(1), SENSITIVITIES)\n"
    "\n"
    "Every valued option also takes the form --option=VALUE; short flags bundle\n"
    "(-qo FILE, -oFILE).\n";

const char hs_usage_check[] =
    "usage: holosim check MODEL [--set NAME=EXPR]... [--params FILE.yaml]\n"
    "                           [--input NAME=SRC]... [--consistency MODE]\n"
    "                           [--tolerance X] [--dependent MODE]\n"
    "\n"
    "Load and compile the model and report: n, k, each constraint's residual\n"
    "at t0 (position and velocity), the rank of G_q, whether the mass matrix is\n"
    "positive definite, what the consistency step would change, and the inputs\n"
    "with their sources.  No integration.\n";

const char hs_usage_columns[] =
    "usage: holosim columns MODEL [--set NAME=EXPR]... [--params FILE.yaml]\n"
    "\n"
    "List every column 'holosim run MODEL' can write, one per line: the default\n"
    "columns first, then those --columns can add (accelerations, reactions,\n"
    "energies, work integrals, ambient positions, ...).\n";

const char hs_usage_batch[] =
    "usage: holosim batch MODEL --points FILE.tsv --outdir DIR --status-dir SDIR\n"
    "                           [-j N] [RUN-OPTIONS...]\n"
    "\n"
    "Run many points of a parameter grid in one process (what holosim-sweep(1)\n"
    "calls): the model file is read once, each point gets its own run.\n"
    "FILE.tsv has a header 'name<TAB>P1<TAB>...' and one row 'NAME<TAB>v1...' per\n"
    "point (values as --set takes them, applied after the command line's); each\n"
    "NAME once, not empty, not starting with '.', without '/'.\n"
    "Each point writes DIR/NAME.csv (as DIR/.NAME.csv.PID.part, renamed when the run\n"
    "has ended with at least one row) and SDIR/NAME.status, one line:\n"
    "exit,steps,rhs_evals,rows,t_reached,max_G,max_Gdot,max_energy_balance,\n"
    "max_power_residual,wall_s,impacts,transitions,t_rest[,final_COL...],\"message\"\n"
    "(the fields of run's --summary but model; all but exit and message empty for\n"
    "a point that never integrated), then prints NAME<TAB>EXIT.  RUN-OPTIONS: those of run, except\n"
    "-o, --summary and --progress.  -j, --jobs N: N worker processes take the\n"
    "points in turn.  Exit status 0 when every point succeeded,\n"
    "1 otherwise; 128 + the signal when interrupted (the point being run leaves\n"
    "no files).\n";

const char hs_usage_derive[] =
    "usage: holosim derive MODEL [--set NAME=EXPR]... [--params FILE.yaml]\n"
    "       holosim derive --wrt NAME EXPR\n"
    "\n"
    "Print the model's symbolic kernels (M, Q, G, G_q, Gdot = D G, gamma =\n"
    "D(D G)), or the simplified derivative of one expression with respect to\n"
    "NAME (every name in EXPR is a free symbol; x' is a symbol too).  An EXPR\n"
    "that starts with '-' goes after '--'.\n";

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

int hs_cli_nomem(void)
{
    hs_error e;
    hs_error_init(&e);
    hs_error_nomem(&e);
    return hs_cli_fail(&e);
}

/* One line saying what is wrong, one saying where help is. */
int hs_cli_usage_error(const char *cmd_usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "holosim: error: ");     /* one style: as the loader's errors */
    fprintf(stderr, fmt, arg);
    const char *cmd = strstr(cmd_usage, "holosim ");
    char name[16] = "";
    if (cmd && sscanf(cmd + 8, "%15[a-z]", name) == 1 && strcmp(name, "COMMAND") != 0)
        fprintf(stderr, "\ntry 'holosim help %s'\n", name);
    else
        fprintf(stderr, "\ntry 'holosim --help'\n");
    return HS_EXIT_USAGE;
}

static const struct {
    const char *name, *usage;
    int (*run)(int argc, char **argv);
} commands[] = {
    { "run", hs_usage_run, hs_cli_run },
    { "check", hs_usage_check, hs_cli_check },
    { "columns", hs_usage_columns, hs_cli_columns },
    { "derive", hs_usage_derive, hs_cli_derive },
    { "eval", hs_usage_eval, hs_cli_eval },
    { "batch", hs_usage_batch, hs_cli_batch },
    { "equilibrium", hs_usage_equilibrium, hs_cli_equilibrium },
    { "modes", hs_usage_modes, hs_cli_modes },
    { "animate", hs_usage_animate, hs_cli_animate },
    { "floquet", hs_usage_floquet, hs_cli_floquet },
    { "lyapunov", hs_usage_lyapunov, hs_cli_lyapunov },
    { "linearize", hs_usage_linearize, hs_cli_linearize },
};
enum { NCOMMANDS = sizeof commands / sizeof *commands };

/* The command named s, or -1 after printing what is wrong (with the
 * nearest command name when one is close). */
static int find_command(const char *s)
{
    const char *names[NCOMMANDS + 1];
    for (int i = 0; i < NCOMMANDS; i++) {
        if (strcmp(s, commands[i].name) == 0)
            return i;
        names[i] = commands[i].name;
    }
    names[NCOMMANDS] = "help";
    const char *near = hs_nearest(s, names, NCOMMANDS + 1);
    for (int i = 0; i <= NCOMMANDS && !near; i++)   /* two letters swapped: rnu */
        if (strlen(s) == strlen(names[i]))
            for (size_t j = 0; s[j + 1] && !near; j++)
                if (s[j] == names[i][j + 1] && s[j + 1] == names[i][j] &&
                    strcmp(s + j + 2, names[i] + j + 2) == 0 &&
                    strncmp(s, names[i], j) == 0)
                    near = names[i];
    char msg[400];
    if (near) {
        snprintf(msg, sizeof msg, "unknown command '%.100s' (did you mean '%s'?)", s, near);
    } else {                               /* every command, from the table */
        size_t len = (size_t)snprintf(msg, sizeof msg, "unknown command '%.100s'; the "
                                      "commands are", s);
        for (int i = 0; i <= NCOMMANDS && len + 1 < sizeof msg; i++)
            len += (size_t)snprintf(msg + len, sizeof msg - len, "%s %s", i ? "," : "",
                                    names[i]);
    }
    hs_cli_usage_error(hs_usage_main, "%s", msg);
    return -1;
}

/* Options before the command: help and version; anything else is a
 * usage error with the nearest of them. */
static int main_option(const char *a)
{
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        fputs(hs_usage_main, stdout);
        return 0;
    }
    if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
        printf("holosim %s\n", HS_VERSION);
        return 0;
    }
    static const char *const known[] = { "--help", "--version" };
    const char *near = strncmp(a, "--", 2) == 0 ? hs_nearest(a, known, 2) : NULL;
    char msg[200];
    snprintf(msg, sizeof msg, "unknown option '%.100s'%s%s%s before the command", a,
             near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    return hs_cli_usage_error(hs_usage_main, "%s", msg);
}

/* The standard output written out and closed: a full disk, a full device
 * or a closed pipe is an error (exit 1), never a silent success. */
static int close_stdout(int rc)
{
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (!bad || rc)                      /* a failed command has said why */
        return rc;
    fprintf(stderr, "holosim: error: cannot write the standard output: %s\n",
            e ? strerror(e) : "write error");
    return HS_EXIT_USAGE;
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
    return close_stdout(dispatch(argc, argv));
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        fputs(hs_usage_main, stderr);
        return HS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (cmd[0] == '-' && cmd[1])
        return main_option(cmd);
    if (strcmp(cmd, "help") == 0) {
        if (argc > 3)
            return hs_cli_usage_error(hs_usage_main, "%s", "help takes at most one COMMAND");
        if (argc == 2 || strcmp(argv[2], "help") == 0) {
            fputs(hs_usage_main, stdout);
            return 0;
        }
        if (strcmp(argv[2], "methods") == 0) {       /* from the table itself */
            hs_stepper_print(stdout);
            return 0;
        }
        int c = find_command(argv[2]);
        if (c < 0)
            return HS_EXIT_USAGE;
        fputs(commands[c].usage, stdout);
        return 0;
    }
    int c = find_command(cmd);
    return c < 0 ? HS_EXIT_USAGE : commands[c].run(argc - 2, argv + 2);
}
