/* Private to src/api/: the model handle and the helpers its files share
 * (api.c: models, check, equilibrium and modes; run.c: runs; motion.c: Floquet,
 * Lyapunov, linearization; sens.c: runs with sensitivities). */
#ifndef HS_API_INTERNAL_H
#define HS_API_INTERNAL_H

#include <stddef.h>

#include "../../include/holosim.h"
#include "../model/model.h"
#include "../util/error.h"

struct holosim_model {
    hs_model *m;
    char *path;                /* a file, or NULL */
    char *name, *text;         /* a text: what errors call it, and the text */
    size_t nset;
    char **set_name, **set_text;   /* [nset] the overrides, split at '=' */
    size_t ninput;
    char **input_name, **input_text;   /* [ninput] the inputs' sources, split at '=' */
    size_t nstop;
    char **stop_when;              /* [nstop] the stop conditions */
    int borrowed;                  /* m is the caller's (hs_api_adopt): not freed */
};

/* A handle over a model the caller loaded and keeps (the command line's,
 * loaded with its own options and messages): runs alone (holosim_run;
 * the analyses load from a source, which it has none of); freeing the
 * handle leaves m.  NULL out of memory. */
holosim_model *hs_api_adopt(hs_model *m);

/* How an analysis loads the model again (hs_overrides' fields of the same
 * meaning): M, Q, G alone; the dense kernels; the outputs kept; the
 * inputs as symbols. */
enum { HS_API_STATICS = 1, HS_API_DENSE = 2, HS_API_OUTPUTS = 4, HS_API_INPUTS = 8 };

/* h's source loaded again with its overrides.  NULL with e set. */
hs_model *hs_api_load(const holosim_model *h, unsigned flags, hs_error *e);

/* e into the public form (the text as the command line prints it);
 * returns its code.  out NULL: the code alone. */
int hs_api_export_error(holosim_error *out, const hs_error *e);
void hs_api_clear_error(holosim_error *err);   /* NULL is fine */

struct holosim_result {
    size_t ncols;
    char **names;              /* [ncols] */
    size_t nrows, cap;
    double *data;              /* [cap * ncols] rows gathered (no callback) */
    long steps, nrhs;
    size_t nevents, evcap;
    char **evname;             /* [nevents] the events' names */
    double *evdata;            /* [evcap * ncols] event rows gathered */
};

struct hs_native;
/* The native kernels of a run of m (policy an hs_native_policy) for
 * `runs` runs of it, or NULL for the VM; what is worth telling written
 * into note[size] ("" when nothing). */
struct hs_native *hs_api_native(const hs_model *m, int policy, double runs, char *note,
                                size_t size);

/* A row of n values to fn (when given) or into r's buffer; r's count of
 * rows grows (by the row fn said stop at too).  0, 1 when fn said stop,
 * -1 out of memory. */
int hs_api_result_push(holosim_result *r, holosim_row_fn fn, void *ctx, const double *x,
                       size_t n);

/* The run options into the settings, as the command line's overrides are
 * put: 0, or an exit code with e set (a method name too long, a bad
 * output_mode). */
int hs_api_apply_options(hs_settings *s, const holosim_run_options *o, hs_error *e);

/* A copy of x [n] (malloc; at least one element), or NULL. */
double *hs_api_dup_doubles(const double *x, size_t n);

#endif
