/* libFuzzer harness for the model loader and a short run.
 *
 * Input: the text of a model file (at most MAX_LEN bytes; copied so it is
 * NUL-terminated).  hs_model_load_string; when it loads and n <= 50, the
 * model runs for 0.01 time units from its t0 with dt = 0.005 (set on a
 * shallow copy of the model: hs_run takes the model as const), CSV to
 * /dev/null, no report.
 *
 * A model whose settings make a run slow (rtol 1e-300, an implicit method
 * on a large system) is not a bug: the run is stopped through hs_run's
 * stop flag after RUN_CPU_SECONDS of CPU time (ITIMER_VIRTUAL, SIGVTALRM:
 * libFuzzer's own -timeout uses SIGALRM).  A hang where that flag is not
 * looked at (loading, compiling, the consistent start) still runs into
 * libFuzzer's -timeout and is a finding. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "integrate/integrate.h"
#include "model/model.h"
#include "../run_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* a run's CPU budget: 1 s, so that loading plus a run stopped by it stays
 * under the 2 s that fuzz-regress allows each input */
enum { MAX_LEN = 64 * 1024, MAX_N = 50, RUN_CPU_SECONDS = 1 };

static volatile sig_atomic_t stop;
static FILE *devnull;

static void on_vtalrm(int sig)
{
    (void)sig;
    stop = 1;
}

static void arm(int seconds)
{
    struct itimerval it = {{0, 0}, {seconds, 0}};
    setitimer(ITIMER_VIRTUAL, &it, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* GSL's handler left at its default (abort), as main leaves it: holosim
     * reaches no GSL report (src/linalg/linalg.h), so an abort is a finding */
    devnull = fopen("/dev/null", "w");
    if (!devnull)
        abort();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_vtalrm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGVTALRM, &sa, NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_LEN)
        return -1;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    hs_overrides ov;
    hs_overrides_init(&ov);
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("fuzz.yaml", text, &ov, &err);
    if (!m) {
        if (!err.code || !err.msg[0]) {
            fprintf(stderr, "hs_model_load_string failed without an error message\n");
            abort();
        }
    } else if (m->n <= MAX_N) {
        hs_model run = *m;         /* shallow: only the settings differ */
        run.set.t_end = m->t0 + 0.01;
        run.set.dt = 0.005;
        hs_run_opts ro = {.precision = 17, .stop = &stop};
        hs_summary sum;
        hs_error rerr;
        hs_error_init(&rerr);
        stop = 0;
        arm(RUN_CPU_SECONDS);
        int rc = run_csv(&run, ro, devnull, NULL, NULL, &sum, &rerr);
        arm(0);
        if (rc && (!rerr.code || !rerr.msg[0])) {
            fprintf(stderr, "hs_run returned %d without an error message\n", rc);
            abort();
        }
    }
    hs_model_free(m);
    free(text);
    return 0;
}
