/* The model language: the forms a model file may use beyond format 1,
 * rewritten into plain format-1 entries of the same YAML document before
 * the model layer reads it.  One door:
 *
 *   hs_lang_expand   indexed families (`x[i=1..N]`), list parameters,
 *                    `sum(...)`/`prod(...)`, the mass matrix by entries,
 *                    springs, dissipation, rigid bodies and `D(...)`,
 *                    written out in place (a file that uses none of them
 *                    is left untouched), then points written out in full
 *                    (x3: a + b + c after x2: a + b) as a chain of
 *                    defines
 *
 * Every node made here keeps its template and the index values it was made
 * at (ytree.h: hs_ytree_origin), so an error in a generated entry points at
 * the template and names the index.  Below the model layer: nothing here
 * knows the loaded model. */
#ifndef HS_LANG_H
#define HS_LANG_H

#include <stddef.h>

#include "../util/error.h"
#include "ytree.h"

/* The fewest coordinates for which the structured path of an embedding
 * (model/chain.c) is taken: below, the dense metric is cheaper
 * (bench/structure.sh).  Points written out in full are rewritten as a
 * chain of defines (prefix.c) from this size on. */
#define HS_LANG_CHAIN_MIN_N 32

/* Values given to parameters from outside the file (a --set, a sweep's
 * point), in order: the last entry of a name wins.  Entry i is text[i]
 * (an expression of numbers, pi and other parameters) when text and
 * text[i] are not NULL, else value[i]. */
typedef struct hs_lang_sets {
    size_t n;
    const char *const *name;     /* [n] */
    const double *value;         /* [n] */
    const char *const *text;     /* NULL or [n] */
    const hs_optnames *names;    /* the caller's option names (NULL: the library's) */
} hs_lang_sets;

/* A spring of the language (body.c), for the drawing: its ends, each the
 * name of a point of `points` or of a body (end NULL where the file gives
 * the coordinates themselves) and the texts of its dim coordinates. */
typedef struct hs_lang_spring {
    char *name;
    int dim;
    char *end[2];
    char *at[2][3];
} hs_lang_spring;

/* What the expansion learnt that the loaded model keeps. */
typedef struct hs_lang_info {
    char **spar;         /* [nspar] parameters that size a family or give an
                          * index: a new value of one needs a new load */
    size_t nspar;
    char *families;      /* "# family in SECTION: TEMPLATE (...)" lines, or NULL */
    hs_lang_spring *spring;  /* [nspring] in the order of the file */
    size_t nspring;
} hs_lang_info;

/* The top-level keys the language adds to format 1 (points, bodies,
 * springs, dissipation): the loader checks a file's keys against format
 * 1's and these before the expansion, so a misspelt key is named first. */
extern const char *const *const hs_lang_keys;
extern const size_t hs_lang_nkeys;

/* Rewrite y's document in place into format 1.  sets may be NULL; info
 * gathers (the caller frees it with hs_lang_info_free, also on error).
 * Returns 0, or an exit code with err set at the position. */
int hs_lang_expand(hs_ytree *y, const hs_lang_sets *sets, hs_lang_info *info, hs_error *err);
void hs_lang_info_free(hs_lang_info *info);

/* Is name one of info's structural parameters? */
int hs_lang_structural(const hs_lang_info *info, const char *name);

#endif
