/* libholosim's run entries that `holosim run` is a client of (make check,
 * through tests/api.sh): inputs and stop conditions at load, a bad input
 * source positioned, the event rows (to a callback and gathered), the stop
 * flag, the summary, the messages handed to the caller, and nothing
 * written on standard output or error by the library during a run that
 * projects its initial data.  (tests/api_python.py compares the numbers
 * with the command line's.)  Prints "N passed, N failed". */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holosim.h"

static int pass, fail;
#define CHECK(c, ...) do { if (c) pass++; else { fail++; printf("FAIL: " __VA_ARGS__); \
                                                   printf("\n"); } } while (0)

typedef struct seen {
    size_t rows, events, headers, ncols;
    char first_event[64];
    volatile sig_atomic_t *flag;
    size_t flag_at;                /* set the flag at this row */
    char messages[4096];
    int kinds;
} seen;

static int on_row(void *ctx, const double *row, size_t ncols)
{
    seen *s = ctx;
    (void)row;
    s->ncols = ncols;
    if (++s->rows == s->flag_at)
        *s->flag = 1;
    return 0;
}

static int on_header(void *ctx, const char *const *names, size_t ncols)
{
    seen *s = ctx;
    s->headers++;
    return !(ncols > 0 && strcmp(names[0], "t") == 0);
}

static int on_event(void *ctx, const char *event, const double *row, size_t ncols)
{
    seen *s = ctx;
    (void)row;
    (void)ncols;
    if (!s->events++)
        snprintf(s->first_event, sizeof s->first_event, "%s", event);
    return 0;
}

static void on_message(void *ctx, int kind, const char *text)
{
    seen *s = ctx;
    s->kinds |= kind;
    strncat(s->messages, text, sizeof s->messages - strlen(s->messages) - 1);
}

/* Standard output and error into a file while a run goes; what they got. */
static long quiet_run(const holosim_model *m, const holosim_run_options *o, holosim_error *e,
                      int *ok)
{
    fflush(stdout);
    fflush(stderr);
    FILE *tmp = tmpfile();
    int out = dup(1), err = dup(2);
    dup2(fileno(tmp), 1);
    dup2(fileno(tmp), 2);
    holosim_result *r = holosim_run(m, o, NULL, NULL, e);
    fflush(stdout);
    fflush(stderr);
    dup2(out, 1);
    dup2(err, 2);
    close(out);
    close(err);
    *ok = r != NULL;
    holosim_result_free(r);
    long n = ftell(tmp) > 0 ? ftell(tmp) : (fseek(tmp, 0, SEEK_END), ftell(tmp));
    fclose(tmp);
    return n;
}

int main(void)
{
    holosim_error e;
    holosim_load_options lo;
    holosim_run_options o;

    /* inputs: a table and an expression of t at load; the input's value
     * is what the run sees (a column `push` of cart_pole shows F) */
    holosim_load_options_init(&lo);
    const char *in1[] = { "F=models/cart_push.csv" };
    lo.inputs = in1;
    lo.ninputs = 1;
    holosim_model *cart = holosim_model_load_with("models/cart_pole.yaml", &lo, &e);
    CHECK(cart != NULL, "inputs table: %s", e.text);
    const char *in2[] = { "F=nosuch.csv" };
    lo.inputs = in2;
    CHECK(!holosim_model_load_with("models/cart_pole.yaml", &lo, &e) && e.code == 2 &&
          strstr(e.message, "cannot open the input table"), "missing table: %s", e.text);
    const char *in3[] = { "F=2*t+" };
    lo.inputs = in3;
    CHECK(!holosim_model_load_with("models/cart_pole.yaml", &lo, &e) && e.code == 2 &&
          strcmp(e.text, "holosim: error: input F=2*t+: expression expected at end of input "
                 "(an operand is missing here: a number, a name or a parenthesis)\n"
                 "    input F=2*t+\n                ^\n") == 0,
          "bad expression: %s", e.text);
    const char *in4[] = { "F" };
    lo.inputs = in4;
    CHECK(!holosim_model_load_with("models/cart_pole.yaml", &lo, &e) && e.code == 1,
          "input without '=': %s", e.text);
    const char *in5[] = { "nope=1" };
    lo.inputs = in5;
    CHECK(!holosim_model_load_with("models/cart_pole.yaml", &lo, &e) && e.code != 0,
          "unknown input: %s", e.text);

    /* a stop condition at load: the run ends there, the summary says so */
    holosim_load_options_init(&lo);
    const char *sw[] = { "theta > 0.5" };
    lo.stop_when = sw;
    lo.nstop_when = 1;
    const char *set[] = { "theta0=1" };
    lo.set = set;
    lo.nset = 1;
    holosim_model *pend = holosim_model_load_with("models/pendulum_angle.yaml", &lo, &e);
    if (!pend) {                   /* the angle's name differs: any stop */
        const char *sw2[] = { "t > 0.3" };
        lo.stop_when = sw2;
        lo.nset = 0;
        pend = holosim_model_load_with("models/pendulum_angle.yaml", &lo, &e);
    }
    CHECK(pend != NULL, "stop_when: %s", e.text);
    if (pend) {
        holosim_run_summary sum;
        holosim_run_options_init(&o);
        o.summary = &sum;
        holosim_result *r = holosim_run(pend, &o, NULL, NULL, &e);
        CHECK(r && sum.stopped_by && sum.stop_text && sum.rows == (long)holosim_result_nrows(r)
              && sum.steps == holosim_result_steps(r) && sum.nrhs == holosim_result_nrhs(r),
              "stopped by: %s", r ? (sum.stopped_by ? sum.stopped_by : "(none)") : e.text);
        holosim_result_free(r);
    }
    const char *sw3[] = { "  " };
    holosim_load_options_init(&lo);
    lo.stop_when = sw3;
    lo.nstop_when = 1;
    CHECK(!holosim_model_load_with("models/pendulum.yaml", &lo, &e) && e.code == 1,
          "empty stop condition: %s", e.text);

    /* events: to a callback (after one header), and gathered */
    holosim_model *sph = holosim_model_load("models/sphere_liftoff.yaml", NULL, 0, &e);
    CHECK(sph != NULL, "sphere: %s", e.text);
    if (sph) {
        seen s = { 0 };
        holosim_run_options_init(&o);
        o.header = on_header;
        o.header_ctx = &s;
        o.events = on_event;
        o.events_ctx = &s;
        holosim_run_summary sum;
        o.summary = &sum;
        holosim_result *r = holosim_run(sph, &o, on_row, &s, &e);
        CHECK(r && s.headers == 1 && s.events == 2 && strcmp(s.first_event, "leave") == 0 &&
              sum.events == 2 && s.rows == holosim_result_nrows(r),
              "events to a callback: %zu headers, %zu events: %s", s.headers, s.events,
              r ? "" : e.text);
        holosim_result_free(r);
        holosim_run_options_init(&o);
        o.keep_events = 1;
        r = holosim_run(sph, &o, NULL, NULL, &e);
        CHECK(r && holosim_result_nevents(r) == 2 &&
              strcmp(holosim_result_event(r, 0), "leave") == 0 &&
              strcmp(holosim_result_event(r, 1), "ground") == 0 &&
              holosim_result_event(r, 2) == NULL && holosim_result_event_data(r) &&
              holosim_result_event_data(r)[0] > 0.9 && holosim_result_event_data(r)[0] < 0.91,
              "events gathered: %s", r ? "" : e.text);
        holosim_result_free(r);
        holosim_run_options_init(&o);  /* without keep_events: none gathered, as before */
        r = holosim_run(sph, &o, NULL, NULL, &e);
        CHECK(r && holosim_result_nevents(r) == 0 && !holosim_result_event_data(r),
              "no events kept by default");
        holosim_result_free(r);
    }

    /* the stop flag: set during the run, it ends it after the step, the
     * rows so far kept */
    holosim_model *p = holosim_model_load("models/pendulum.yaml", NULL, 0, &e);
    if (p) {
        volatile sig_atomic_t flag = 0;
        seen s = { .flag = &flag, .flag_at = 5 };
        holosim_run_options_init(&o);
        o.stop = &flag;
        holosim_run_summary sum;
        o.summary = &sum;
        holosim_result *r = holosim_run(p, &o, on_row, &s, &e);
        CHECK(!r && e.code == HOLOSIM_ESTOPPED && strstr(e.message, "interrupted") &&
              s.rows >= 5 && s.rows < 10 && sum.rows == (long)s.rows,
              "stop flag: %zu rows, %s", s.rows, e.text);
        holosim_result_free(r);
        flag = 1;                  /* set before the run: no step taken */
        s.rows = 0;
        s.flag_at = 0;
        r = holosim_run(p, &o, on_row, &s, &e);
        CHECK(!r && e.code == HOLOSIM_ESTOPPED && s.rows == 1, "stop flag set before: %zu rows",
              s.rows);
        holosim_run_options_init(&o);
        o.native = 7;
        CHECK(!holosim_run(p, &o, NULL, NULL, &e) && e.code == 1 && strstr(e.message, "native"),
              "bad native policy: %s", e.text);
        holosim_run_options_init(&o);
        o.native = HOLOSIM_NATIVE_NEVER;
        o.progress = 5;
        CHECK(!holosim_run(p, &o, NULL, NULL, &e) && e.code == 1, "bad progress: %s", e.text);
    }

    /* a run that projects its initial data: the report to the message
     * callback, nothing on stdout or stderr, with or without a callback */
    holosim_model *sc = holosim_model_load("models/slider_crank.yaml", NULL, 0, &e);
    CHECK(sc != NULL, "slider_crank: %s", e.text);
    if (sc) {
        seen s = { 0 };
        holosim_run_options_init(&o);
        o.t_end = 0.1;
        int ok;
        long n = quiet_run(sc, &o, &e, &ok);
        CHECK(ok && n == 0, "no message callback: %ld bytes written (%s)", n, ok ? "" : e.text);
        o.message = on_message;
        o.message_ctx = &s;
        o.native = HOLOSIM_NATIVE_AUTO;
        n = quiet_run(sc, &o, &e, &ok);
        CHECK(ok && n == 0, "message callback: %ld bytes written", n);
        CHECK(strncmp(s.messages, "holosim: initial data projected", 31) == 0 &&
              (s.kinds & HOLOSIM_MSG_REPORT), "the report: %.200s", s.messages);
    }

    /* a run with sensitivities takes a run's options where they apply:
     * the native kernels (the same bits), the header, the summary (the
     * augmented system's counts, the stop event, pointing into the
     * handle's model), the messages, the stop flag */
    if (pend) {
        const char *pl[] = { "l" };
        seen s = { 0 };
        holosim_run_summary sum;
        holosim_run_options_init(&o);
        o.header = on_header;
        o.header_ctx = &s;
        o.message = on_message;
        o.message_ctx = &s;
        o.summary = &sum;
        holosim_result *vm = holosim_sensitivity(pend, pl, 1, &o, on_row, &s, &e);
        CHECK(vm && s.headers == 1 && sum.rows == (long)s.rows && sum.rows > 2 &&
              sum.steps > 0 && sum.nrhs > sum.steps && sum.steps == holosim_result_steps(vm) &&
              sum.nrhs == holosim_result_nrhs(vm) && sum.stopped_by &&
              strcmp(sum.stopped_by, "stop_when") == 0 && sum.stop_text &&
              isfinite(sum.t_reached) && sum.t_reached > 0,
              "sensitivity summary: %s stopped by %s", vm ? "" : e.text,
              sum.stopped_by ? sum.stopped_by : "(none)");
        CHECK(strstr(s.messages, "holosim: stopped by event 'stop_when'") &&
              (s.kinds & HOLOSIM_MSG_NOTE), "sensitivity stop note: %.300s", s.messages);
        holosim_result_free(vm);
        holosim_run_options_init(&o);
        holosim_result *a = holosim_sensitivity(pend, pl, 1, &o, NULL, NULL, &e);
        o.native = HOLOSIM_NATIVE_ALWAYS;
        holosim_result *b = holosim_sensitivity(pend, pl, 1, &o, NULL, NULL, &e);
        size_t na = a ? holosim_result_nrows(a) * holosim_result_ncols(a) : 0;
        CHECK(a && b && na > 0 && holosim_result_nrows(a) == holosim_result_nrows(b) &&
              memcmp(holosim_result_data(a), holosim_result_data(b), na * sizeof(double)) == 0,
              "sensitivity native always: the VM's bits (%s)", b ? "" : e.text);
        holosim_result_free(a);
        holosim_result_free(b);
        o.native = 9;
        CHECK(!holosim_sensitivity(pend, pl, 1, &o, NULL, NULL, &e) && e.code == 1 &&
              strstr(e.message, "native"), "sensitivity bad native: %s", e.text);
        holosim_run_options_init(&o);
        o.keep_events = 1;
        CHECK(!holosim_sensitivity(pend, pl, 1, &o, NULL, NULL, &e) && e.code == 1 &&
              strstr(e.message, "does not take events"), "sensitivity events: %s", e.text);
        volatile sig_atomic_t flag = 0;
        seen f = { .flag = &flag, .flag_at = 3 };
        holosim_run_options_init(&o);
        o.stop = &flag;
        o.summary = &sum;
        CHECK(!holosim_sensitivity(pend, pl, 1, &o, on_row, &f, &e) &&
              e.code == HOLOSIM_ESTOPPED && strstr(e.message, "stop flag") && f.rows == 3 &&
              sum.rows == 3, "sensitivity stop flag: %zu rows, %s", f.rows, e.text);
    }

    holosim_model_free(cart);
    holosim_model_free(pend);
    holosim_model_free(sph);
    holosim_model_free(p);
    holosim_model_free(sc);
    printf("%d passed, %d failed\n", pass, fail);
    return fail != 0;
}
