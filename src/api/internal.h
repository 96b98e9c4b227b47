/* Private to src/api/: the model handle and the helpers its files share
 * (api.c: models, runs, check, equilibrium and modes; motion.c: Floquet,
 * Lyapunov, linearization). */
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
};

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

/* A copy of x [n] (malloc; at least one element), or NULL. */
double *hs_api_dup_doubles(const double *x, size_t n);

#endif
