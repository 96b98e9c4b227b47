/* Private to src/model: the load-time expansion of the model language's
 * larger forms into plain format-1 nodes of the same YAML document, before
 * the loader reads it (loader.h):
 *
 *   family.c  indexed families (`x[i=1..N]` keys and list items), list
 *             parameters, references `x[i-1]` checked against the ranges,
 *             `sum(i=a..b, ...)` and `prod(...)`, the mass matrix by entries
 *   body.c    force elements (`springs`), `dissipation`, rigid `bodies`
 *             and the total time derivative `D(...)`, written out as
 *             defines, potential, forces and kinetic energy
 *
 * Every node made here keeps its template (the node of the file it came
 * from) and the index values it was made at (ytree.h: hs_ytree_origin), so
 * an error in a generated entry points at the template and names the
 * index. A file that uses none of these forms is left untouched. */
#ifndef HS_FAMILY_H
#define HS_FAMILY_H

#include "loader.h"

#define FM_MAX_ENV 16       /* nested indices (families, sums) */
#define FM_MAX_DIM 4        /* indices of one name: x[i, j, k, l] */
#define FM_MAX_COUNT 10000000L /* values of one range */

typedef struct fm_bind {
    const char *name;
    size_t len;
    long val;
} fm_bind;

typedef struct fm_base {          /* an indexed name: its index ranges */
    int ndim;
    long lo[FM_MAX_DIM], hi[FM_MAX_DIM];
} fm_base;

typedef struct fm_ref {           /* a reference checked after the expansion */
    char *name;                   /* the expanded name */
    size_t base;                  /* index into nm (the base name) */
    int ndim;
    long idx[FM_MAX_DIM];
    int node;                     /* the node it appears in */
    size_t off;                   /* its offset in that node's value */
} fm_ref;

typedef struct fam {
    loader *L;
    hs_ytree *y;
    yaml_document_t *doc;
    hs_error *err;
    int params;                   /* the file's `parameters` mapping, or 0 */
    ld_tab ptab;                  /* parameter name -> pair index */
    signed char *pstate;          /* [npar] 0 new, 1 busy, 2 done */
    double *pval;
    unsigned char *pused;         /* [npar] gives a range or an index */
    size_t npar;
    hs_dag *dag;                  /* scratch: index arithmetic */
    fm_bind env[FM_MAX_ENV];
    int nenv;
    size_t capo, caps, capn;      /* capacities of the ytree's origin, seg, notes */
    char *out;                    /* the value being built */
    size_t olen, ocap;
    size_t seg0;                  /* its first segment */
    long note;                    /* the note of nodes made now, or -1 */
    ld_tab names;                 /* every declared indexed name */
    ld_tab bases;                 /* base name -> index into base */
    fm_base *base;
    char **str;                   /* owned strings (the tables' keys) */
    size_t nstr, capstr;
    size_t nbase, capbase;
    fm_ref *ref;
    size_t nref, capref;
    int depth;
    const char *section;          /* the root key being expanded (derive's list) */
} fam;

/* family.c: node making (every new node gets an origin) */
int hs_fm_add_scalar(fam *F, const char *s, size_t len, int tmpl, int identity);
int hs_fm_add_seq(fam *F, int tmpl);
int hs_fm_add_map(fam *F, int tmpl);
int hs_fm_append_item(fam *F, int seq, int item);
int hs_fm_append_pair(fam *F, int map, int key, int val);
/* The value of key in mapping id (0 when absent), and the pair's key. */
int hs_fm_get(fam *F, int map, const char *key, int *keyid);
int hs_fm_oom(fam *F);
/* The template of a node (itself for a node of the file). */
int hs_fm_tmpl(fam *F, int id);

/* body.c: springs, dissipation, bodies and D(...) on the expanded root;
 * 0 when the file uses none of them. */
int hs_bd_uses(fam *F, int root);
int hs_bd_expand(fam *F, int root);

#endif
