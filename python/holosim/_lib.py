"""The C library under the package: include/holosim.h declared to cffi in
ABI mode (no compiler needed) and lib/libholosim.so.0 opened.

Where the library is looked for, in order: the file named by the
environment variable HOLOSIM_LIB; beside the package in the source tree
(python/holosim -> lib/); beside it once installed (PREFIX/lib/python3/
dist-packages/holosim -> PREFIX/lib/); then the dynamic loader's own path.
"""
import os

import sys

DEBIAN = "/usr/lib/python3/dist-packages"


def debian_fallback(module):
    """A Python that does not see Debian's packages (a pyenv or a virtual
    environment of the same version): Debian's directory appended to
    sys.path, last, when it holds `module` (python3-cffi, python3-numpy)."""
    if os.path.isdir(os.path.join(DEBIAN, module)) and DEBIAN not in sys.path:
        sys.path.append(DEBIAN)


try:
    import cffi
except ImportError:
    debian_fallback("cffi")
    import cffi

CDEF = """
const char *holosim_version(void);
typedef struct holosim_error {
    int code;
    int line, column;
    char file[512];
    char message[1024];
    char text[2200];
} holosim_error;
const char *holosim_exit_text(int code);
typedef struct holosim_model holosim_model;
holosim_model *holosim_model_load(const char *path, const char *const *set,
                                  size_t nset, holosim_error *err);
holosim_model *holosim_model_load_text(const char *name, const char *text,
                                       const char *const *set, size_t nset,
                                       holosim_error *err);
void holosim_model_free(holosim_model *m);
const char *holosim_model_name(const holosim_model *m);
size_t holosim_model_ncoords(const holosim_model *m);
const char *holosim_model_coord(const holosim_model *m, size_t i);
size_t holosim_model_nconstraints(const holosim_model *m);
const char *holosim_model_constraint(const holosim_model *m, size_t j);
size_t holosim_model_nparams(const holosim_model *m);
const char *holosim_model_param(const holosim_model *m, size_t i, double *value);
typedef struct holosim_load_options {
    const char *const *set;
    size_t nset;
    const char *const *inputs;
    size_t ninputs;
    const char *const *stop_when;
    size_t nstop_when;
} holosim_load_options;
void holosim_load_options_init(holosim_load_options *lo);
holosim_model *holosim_model_load_with(const char *path, const holosim_load_options *lo,
                                       holosim_error *err);
holosim_model *holosim_model_load_text_with(const char *name, const char *text,
                                            const holosim_load_options *lo,
                                            holosim_error *err);
typedef struct holosim_run_summary {
    long steps, nrhs, rows;
    long projections;
    long splits;
    double max_G, max_Gdot;
    double max_energy_balance, max_power_residual;
    double t_reached;
    double wall;
    long events;
    const char *stopped_by;
    const char *stop_text;
    long impacts;
    long transitions;
    int rested;
    double t_rest;
    const char *rest_contact;
    size_t k, rank0;
    long nrobust, nsingular;
    double worst_rcond;
    int augmented;
} holosim_run_summary;
typedef struct holosim_run_options {
    double t_end;
    double dt;
    const char *method;
    double step;
    double rtol, atol;
    int output_mode;
    const char *columns;
    int native;
    volatile int *stop;
    int (*header)(void *ctx, const char *const *names, size_t ncols);
    void *header_ctx;
    int (*events)(void *ctx, const char *event, const double *row, size_t ncols);
    void *events_ctx;
    int keep_events;
    void (*message)(void *ctx, int kind, const char *text);
    void *message_ctx;
    holosim_run_summary *summary;
    int progress;
    int no_residuals;
} holosim_run_options;
void holosim_run_options_init(holosim_run_options *o);
typedef int (*holosim_row_fn)(void *ctx, const double *row, size_t ncols);
typedef struct holosim_result holosim_result;
holosim_result *holosim_run(const holosim_model *m, const holosim_run_options *o,
                            holosim_row_fn fn, void *ctx, holosim_error *err);
void holosim_result_free(holosim_result *r);
size_t holosim_result_ncols(const holosim_result *r);
const char *holosim_result_column(const holosim_result *r, size_t j);
size_t holosim_result_nrows(const holosim_result *r);
const double *holosim_result_data(const holosim_result *r);
long holosim_result_steps(const holosim_result *r);
long holosim_result_nrhs(const holosim_result *r);
size_t holosim_result_nevents(const holosim_result *r);
const char *holosim_result_event(const holosim_result *r, size_t i);
const double *holosim_result_event_data(const holosim_result *r);
holosim_result *holosim_sensitivity(const holosim_model *m, const char *const *params,
                                    size_t np, const holosim_run_options *o,
                                    holosim_row_fn fn, void *ctx, holosim_error *err);
typedef struct holosim_check_report {
    size_t n, k, nparams;
    size_t rank;
    double max_G, max_Gdot;
    double tolerance;
} holosim_check_report;
int holosim_check(const holosim_model *m, holosim_check_report *r, holosim_error *err);
typedef struct holosim_equilibrium {
    size_t n, k;
    double *q, *lambda;
    double res_Q, res_G;
    int iterations;
    int stable;
    const char *verdict;
} holosim_equilibrium;
typedef struct holosim_modes {
    size_t n, count;
    double *sigma, *omega;
    double *shape, *shape_im;
    int stable;
    const char *verdict;
} holosim_modes;
int holosim_equilibrium_find(const holosim_model *m, holosim_equilibrium *eq,
                             holosim_error *err);
void holosim_equilibrium_free(holosim_equilibrium *eq);
int holosim_modes_find(const holosim_model *m, holosim_modes *md, holosim_error *err);
void holosim_modes_free(holosim_modes *md);
typedef struct holosim_floquet {
    size_t dim;
    double period;
    double *re, *im;
    double *monodromy;
    double mu_max;
    double gap;
    int periodic_model;
    double tolerance;
    const char *verdict;
} holosim_floquet;
int holosim_floquet_find(const holosim_model *m, double period, holosim_floquet *fl,
                         holosim_error *err);
void holosim_floquet_free(holosim_floquet *fl);
typedef struct holosim_lyapunov {
    size_t count;
    double *lambda;
    size_t nrows;
    double *history;
} holosim_lyapunov;
int holosim_lyapunov_find(const holosim_model *m, double t_end, double every, int spectrum,
                          holosim_lyapunov *ly, holosim_error *err);
void holosim_lyapunov_free(holosim_lyapunov *ly);
typedef struct holosim_statespace {
    size_t nx, nu, ny;
    double *A, *B, *C, *D;
    char **xname, **uname, **yname;
} holosim_statespace;
int holosim_linearize(const holosim_model *m, const char *const *inputs, size_t ninputs,
                      const char *const *outputs, size_t noutputs, int at_initial,
                      holosim_statespace *ss, holosim_error *err);
void holosim_statespace_free(holosim_statespace *ss);
"""

SONAME = "libholosim.so.0"


def _candidates():
    env = os.environ.get("HOLOSIM_LIB")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "lib", SONAME)        # the source tree
    yield os.path.join(here, "..", "..", "..", SONAME)         # PREFIX/lib
    yield SONAME                                               # the loader's path


def _open():
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ffi, ffi.dlopen(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("holosim: cannot find %s (run `make` in the repository, or set "
                      "HOLOSIM_LIB to the library's path); tried: %s"
                      % (SONAME, "; ".join(tried)))


ffi, lib = _open()
