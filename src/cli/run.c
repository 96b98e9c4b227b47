/* `holosim run`: load, integrate, write the CSV and the summary. */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../integrate/integrate.h"

volatile sig_atomic_t hs_cli_interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    hs_cli_interrupted = 1;
}

static int write_summary(const char *path, const hs_model *m, const hs_summary *s, int rc,
                         const hs_error *err, int quiet)
{
    if (!quiet)
        fprintf(stderr, "holosim: %ld steps, %ld rhs evaluations, %ld rows to t=%.6g; "
                "max |G| %.3g, max |Gdot| %.3g, max |energy_balance| %.3g, "
                "max |power_residual| %.3g; %.3f s\n", s->steps, s->nrhs, s->rows,
                s->t_reached, s->max_G, s->max_Gdot, s->max_ebal, s->max_pres, s->wall);
    if (!path)
        return 0;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "holosim: cannot write summary '%s': %s\n", path, strerror(errno));
        return HS_EXIT_USAGE;
    }
    fprintf(f, "model,exit,steps,rhs_evals,rows,t_reached,max_G,max_Gdot,max_energy_balance,"
            "max_power_residual,wall_s,message\n");
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", rc ? err->msg : "");
    for (char *p = msg; *p; p++)
        if (*p == '"' || *p == '\n')
            *p = '\'';
    fprintf(f, "\"%s\",%d,%ld,%ld,%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.6f,\"%s\"\n",
            m->file, rc, s->steps, s->nrhs, s->rows, s->t_reached, s->max_G, s->max_Gdot,
            s->max_ebal, s->max_pres, s->wall, msg);
    if (fclose(f) != 0) {
        fprintf(stderr, "holosim: cannot write summary '%s'\n", path);
        return HS_EXIT_USAGE;
    }
    return 0;
}

int hs_cli_run(int argc, char **argv)
{
    opts o;
    int rc = hs_cli_parse_opts(argc, argv, hs_usage_run, CMD_RUN, &o);
    if (rc) {
        hs_cli_free_opts(&o);
        return rc < 0 ? 0 : rc;
    }
    if (!o.model || o.npos) {
        hs_cli_free_opts(&o);
        return hs_cli_usage_error(hs_usage_run, "%s", !o.model ? "run: missing MODEL" : "run: more than "
                           "one MODEL");
    }
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load(o.model, &o.ov, &err);
    if (!m) {
        hs_cli_free_opts(&o);
        return hs_cli_fail(&err);
    }
    /* check that -o can be written before anything runs; hs_run opens it
     * (truncating) only once the initial data are consistent */
    const char *path = o.output && strcmp(o.output, "-") != 0 ? o.output : NULL;
    if (path) {
        int existed = access(path, F_OK) == 0;
        FILE *probe = fopen(path, "a");
        if (!probe) {
            fprintf(stderr, "holosim: cannot open '%s' for writing: %s\n", path,
                    strerror(errno));
            hs_model_free(m);
            hs_cli_free_opts(&o);
            return HS_EXIT_USAGE;
        }
        fclose(probe);
        if (!existed)
            remove(path);
    }
    signal(SIGINT, on_sigint);
    hs_run_opts ro = { path ? NULL : stdout, path, o.columns, o.precision,
                       o.quiet ? NULL : stderr, o.progress, &hs_cli_interrupted };
    hs_summary sum;
    rc = hs_run(m, &ro, &sum, &err);
    int src = write_summary(o.summary, m, &sum, rc, &err, o.quiet || rc);
    if (rc)
        hs_cli_fail(&err);
    hs_model_free(m);
    hs_cli_free_opts(&o);
    return rc ? rc : src;
}
