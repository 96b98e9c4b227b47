/* Parameter overrides from the command line: `--set NAME=EXPR` and
 * `--params FILE.yaml` (a mapping NAME -> number or expression), kept in
 * command-line order as the texts the loader evaluates
 * (hs_overrides.set_text): the last entry of a name wins.
 *
 *   hs_params_add      one NAME=TEXT of a --set
 *   hs_params_read     every entry of a --params file, in file order; the
 *                      file's structure and each expression's syntax are
 *                      checked here, with FILE:LINE:COLUMN positions
 *   hs_params_apply    point an hs_overrides at the entries; the loader's
 *                      later errors about an entry of a file (no such
 *                      parameter, an unknown name, a non-finite value) are
 *                      placed in that file through hs_overrides.set_place
 *
 * Every error here is a usage error (exit 1). */
#ifndef HS_PARAMS_H
#define HS_PARAMS_H

#include <stddef.h>

#include "../lang/ytree.h"
#include "../model/model.h"

typedef struct hs_param_src {
    int file;              /* index into files, or -1: a --set */
    yaml_node_t *key, *val;
} hs_param_src;

typedef struct hs_params {
    size_t n, cap;
    char **name, **text;   /* [n] */
    double *value;         /* [n] the text as a plain number, else NAN */
    hs_param_src *src;     /* [n] */
    hs_ytree **files;      /* [nfiles] the --params files, kept for positions */
    size_t nfiles;
} hs_params;

void hs_params_init(hs_params *p);
void hs_params_free(hs_params *p);

/* Append NAME=TEXT (name: an identifier of len bytes); 0 or an error code. */
int hs_params_add(hs_params *p, const char *name, size_t len, const char *text,
                  hs_error *err);

/* Read a --params file ("-" = standard input) and append its entries. */
int hs_params_read(hs_params *p, const char *path, hs_error *err);

/* Fill ov's set_* fields (ov keeps pointers into p: p must outlive it). */
void hs_params_apply(const hs_params *p, hs_overrides *ov);

#endif
