/* libholosim from several threads (make check): a host with its own GSL
 * error handler runs succeeding and failing models in 4 threads at once;
 * afterwards the handler is still its own and was never called (the
 * library reaches no GSL report), and every threaded run equals
 * the same run made alone, bit for bit.  Built against lib/libholosim.so
 * and include/holosim.h.  Prints "N passed, N failed". */
#include <gsl/gsl_errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "holosim.h"

static int pass, fail;
#define CHECK(c, ...) do { if (c) pass++; else { fail++; printf("FAIL: " __VA_ARGS__); \
                                                   printf("\n"); } } while (0)

static _Atomic int host_calls;

static void host_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    (void)gsl_errno;
    host_calls++;
    fprintf(stderr, "GSL's handler called: %s:%d: %s\n", file, line, reason);
}

/* One job: a model (a file, or a bad text), run options, what came out. */
typedef struct job {
    const char *path, *text;
    const char *set;
    double t_end;
    const char *method;
    holosim_result *r;
    holosim_error err;
    int modes;
    holosim_modes md;
} job;

static void *work(void *arg)
{
    job *j = arg;
    const char *set[1] = { j->set };
    holosim_model *m = j->path ? holosim_model_load(j->path, set, j->set ? 1 : 0, &j->err)
                               : holosim_model_load_text("bad.yaml", j->text, NULL, 0, &j->err);
    if (m) {
        holosim_run_options o;
        holosim_run_options_init(&o);
        o.t_end = j->t_end;
        o.dt = 0.01;
        o.method = j->method;
        o.columns = "all";
        j->r = holosim_run(m, &o, NULL, NULL, &j->err);
        if (j->modes)
            holosim_modes_find(m, &j->md, &j->err);
    }
    holosim_model_free(m);
    return NULL;
}

static int same_result(const job *a, const job *b)
{
    if (!a->r || !b->r)
        return !a->r && !b->r && a->err.code == b->err.code &&
               strcmp(a->err.text, b->err.text) == 0;
    size_t n = holosim_result_nrows(a->r), c = holosim_result_ncols(a->r);
    if (n != holosim_result_nrows(b->r) || c != holosim_result_ncols(b->r))
        return 0;
    if (a->modes && (a->md.count != b->md.count ||
                     memcmp(a->md.omega, b->md.omega, a->md.count * sizeof(double))))
        return 0;
    return memcmp(holosim_result_data(a->r), holosim_result_data(b->r),
                  n * c * sizeof(double)) == 0;
}

static void jobs_init(job *j)
{
    memset(j, 0, 4 * sizeof *j);
    j[0] = (job){ .path = "models/pendulum.yaml", .t_end = 2, .modes = 1 };
    j[1] = (job){ .path = "models/double_pendulum.yaml", .t_end = 1, .method = "msbdf" };
    j[2] = (job){ .text = "coordinates: [x]\nmass: [1]\npotential: x^^2\n" };
    j[3] = (job){ .path = "models/pendulum.yaml", .t_end = -1 };   /* t_end before t0 */
}

static void jobs_free(job *j)
{
    for (int i = 0; i < 4; i++) {
        holosim_result_free(j[i].r);
        holosim_modes_free(&j[i].md);
    }
}

int main(void)
{
    gsl_set_error_handler(host_handler);
    job seq[4], par[4];
    jobs_init(seq);
    jobs_init(par);
    for (int i = 0; i < 4; i++)
        work(&seq[i]);
    CHECK(gsl_set_error_handler(host_handler) == host_handler,
          "the host's handler after runs in sequence");
    CHECK(seq[0].r && seq[1].r && holosim_result_nrows(seq[0].r) == 201,
          "the good runs ran (%s%s)", seq[0].err.text, seq[1].err.text);
    CHECK(seq[0].md.count == 1, "pendulum: one mode");
    CHECK(!seq[2].r && seq[2].err.code == 2 && seq[2].err.line == 1,
          "the bad model fails with exit 2 at line 1 (%d %d)", seq[2].err.code,
          seq[2].err.line);
    CHECK(!seq[3].r && seq[3].err.code == 1 && strstr(seq[3].err.text, "t_end"),
          "t_end before t0 fails with exit 1: %s", seq[3].err.text);
    for (int round = 0; round < 3; round++) {
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&th[i], NULL, work, &par[i]);
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        for (int i = 0; i < 4; i++)
            CHECK(same_result(&seq[i], &par[i]), "round %d, job %d: threaded != in sequence",
                  round, i);
        CHECK(gsl_set_error_handler(host_handler) == host_handler,
              "the host's handler after runs in 4 threads (round %d)", round);
        jobs_free(par);
        jobs_init(par);
    }
    jobs_free(seq);
    CHECK(host_calls == 0, "the host's handler was called %d times", (int)host_calls);
    printf("%d passed, %d failed\n", pass, fail);
    return fail != 0;
}
