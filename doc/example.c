/* libholosim from C (doc/api.md): load a model once, run it at three
 * lengths of the rod, print the period of each from the first upward zero
 * crossing of x after t = 0, and show an error as the command line would.
 *
 *   cc -Wall -Werror $(pkg-config --cflags holosim) doc/example.c \
 *      $(pkg-config --libs holosim) -o example
 */
#include <stdio.h>

#include <holosim.h>

int main(void)
{
    holosim_error err;
    for (int i = 1; i <= 3; i++) {
        char set[32];
        snprintf(set, sizeof set, "l=%d", i);
        const char *sets[] = { set };
        holosim_model *m = holosim_model_load("models/pendulum.yaml", sets, 1, &err);
        if (!m) {
            fputs(err.text, stderr);
            return err.code;
        }
        holosim_run_options o;
        holosim_run_options_init(&o);
        o.t_end = 10;
        o.dt = 0.001;
        o.columns = "t,x";
        holosim_result *r = holosim_run(m, &o, NULL, NULL, &err);
        if (!r) {
            fputs(err.text, stderr);
            holosim_model_free(m);
            return err.code;
        }
        const double *d = holosim_result_data(r);       /* rows of (t, x) */
        double first = -1;
        for (size_t k = 1; k < holosim_result_nrows(r); k++)
            if (d[2 * (k - 1) + 1] < 0 && d[2 * k + 1] >= 0) {  /* x crosses 0 upward */
                double t = d[2 * k];
                if (first < 0) {
                    first = t;
                } else {
                    printf("l = %d: period %.2f\n", i, t - first);
                    break;
                }
            }
        holosim_result_free(r);
        holosim_model_free(m);
    }
    holosim_model *bad = holosim_model_load_text("bad.yaml", "coordinates: [x]\nmass: [1]\n",
                                                 NULL, 0, &err);
    if (!bad)
        printf("exit code %d (%s):\n%s", err.code, holosim_exit_text(err.code), err.text);
    holosim_model_free(bad);
    return 0;
}
