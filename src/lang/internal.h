/* Private to src/lang: the expansion of the model language's larger forms
 * into plain format-1 nodes of the same YAML document (lang.h), before the
 * model layer reads it:
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

#include "lang.h"
#include "../expr/expr.h"
#include "../util/map.h"

/* A node of the document by its id (1-based, libyaml's numbering). */
#define NODEP(F, id) (&(F)->doc->nodes.start[(id) - 1])

#define FM_MAX_ENV 16       /* nested indices (families, sums) */
#define FM_MAX_DIM 4        /* indices of one name: x[i, j, k, l] */
#define FM_MAX_COUNT 10000000L /* values of one range */
/* The expansion as a whole, checked as it grows (node.c: hs_fm_budget):
 * the text of every scalar made and the pieces mapping it to the file,
 * so that what the model layer then parses stays within seconds and a
 * few hundred MB (the model's expressions take some 250 times their
 * text). */
#define FM_MAX_TEXT (4 << 20)   /* bytes of text written out, all nodes */
#define FM_MAX_SEG (1 << 20)    /* pieces of that text (names, numbers, operators) */
#define FM_MAX_NODES 1000000    /* nodes made (each a define, output, ... later) */

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
    const hs_lang_sets *sets;     /* values from outside the file, or NULL */
    hs_lang_info *info;           /* what the model keeps */
    hs_ytree *y;
    yaml_document_t *doc;
    hs_error *err;
    int params;                   /* the file's `parameters` mapping, or 0 */
    hs_strmap ptab;                  /* parameter name -> pair index */
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
    hs_strmap names;                 /* every declared indexed name */
    hs_strmap bases;                 /* base name -> index into base */
    fm_base *base;
    char **str;                   /* owned strings (the tables' keys) */
    size_t nstr, capstr;
    size_t nbase, capbase;
    fm_ref *ref;
    size_t nref, capref;
    int depth;
    int cur;                      /* the template being rewritten (errors) */
    const char *section;          /* the root key being expanded (derive's list) */
    size_t made;                  /* bytes of the scalars made so far */
} fam;

/* family.c: does the document under root use families (a range, sum(,
 * prod( or a list parameter outside the verbatim sections)?  The file's
 * parameters as F's table; the families written out (the new root replaces
 * node 1's content); F's memory. */
int hs_fm_uses(fam *F, int root);
int hs_fm_params(fam *F);
int hs_fm_expand(fam *F);
void hs_fm_free(fam *F);

/* famtext.c: one text rewritten with the indices bound now */
enum { RW_EXPR, RW_KEY, RW_DECL };  /* an expression; a key or item (ranges bound); declaring */
/* A new scalar: template scalar id's bytes [a, b) rewritten, or id itself
 * when nothing changed (0 on error). */
int hs_fm_rewrite_scalar(fam *F, int id, size_t a, size_t b, int mode);
/* The range FIRST..LAST at t[r0..r1) of template tmpl. */
int hs_fm_eval_range(fam *F, int tmpl, const char *t, size_t r0, size_t r1, long *lo, long *hi);
int hs_fm_push(fam *F, int tmpl, const char *name, size_t len, long val);
/* Declare the member `name` of the family named by its first blen bytes. */
int hs_fm_declare(fam *F, const char *name, size_t blen, int ndim, const long *idx);
/* The bracket or parenthesis closing the one at t[a] (b when none); the
 * next top-level comma (b when none); `name = ...` at t[a..b) (the name's
 * end and *eq, else 0). */
size_t hs_fm_close_of(const char *t, size_t a, size_t b);
size_t hs_fm_comma_of(const char *t, size_t a, size_t b);
size_t hs_fm_binding_at(const char *t, size_t a, size_t b, size_t *eq);
size_t hs_fm_fmt_long(char *b, long v);     /* v in decimal, NUL-terminated */
/* text a constant of the parameters: 1 with its value in *v (NaN when it
 * has none), else 0 (it reads coordinates, defines, ...); records nothing
 * but the parameters' own errors. */
int hs_fm_const(fam *F, const char *text, double *v);

static inline int hs_fm_is_id0(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static inline int hs_fm_is_id(int c) { return hs_fm_is_id0(c) || (c >= '0' && c <= '9'); }

/* telescope.c: entries of `define` and `embedding` whose value is a
 * running sum over their own index rewritten as a chain of defines (each
 * member the one before plus its term), before the families are written
 * out.  0 or an exit code. */
int hs_fm_telescope(fam *F);

/* prefix.c: entries of `embedding` and `define` written out in full, each
 * beginning with another entry's whole value, rewritten to read it (a
 * chain of defines), for an embedding of at least HS_LANG_CHAIN_MIN_N
 * coordinates.  0 or an exit code. */
int hs_fm_prefix(fam *F);

/* fammass.c: `mass` as a mapping of entries into the format-1 list. */
int hs_fm_mass_entries(fam *F, int root, int mass, int mkey);

/* node.c: node making (every new node gets an origin) */
int hs_fm_grow(void **p, size_t *cap, size_t need, size_t size);
int hs_fm_add_scalar(fam *F, const char *s, size_t len, int tmpl, int identity);
int hs_fm_add_seq(fam *F, int tmpl);
int hs_fm_add_map(fam *F, int tmpl);
int hs_fm_append_item(fam *F, int seq, int item);
int hs_fm_append_pair(fam *F, int map, int key, int val);
/* The value of key in mapping id (0 when absent), and the pair's key. */
int hs_fm_get(fam *F, int map, const char *key, int *keyid);
int hs_fm_oom(fam *F);
/* The expansion's limits before a text of `more` bytes is made (or
 * built that far) from template tmpl, or a node: 0, or the error placed
 * at the template with the index values bound now. */
int hs_fm_budget(fam *F, int tmpl, size_t more);
/* The template of a node (itself for a node of the file). */
int hs_fm_tmpl(fam *F, int id);

/* deriv.c: text, the root's edits, D(...) and dissipation */
typedef struct buf {
    char *s;
    size_t len, cap;
} buf;
int hs_bd_bprintf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *hs_bd_str(fam *F, int id);             /* a scalar's text or NULL */
size_t hs_bd_map_size(fam *F, int id);
/* The length of sequence id (-1: not a sequence); its item i. */
static inline int hs_bd_slen(fam *F, int id)
{
    yaml_node_t *n = NODEP(F, id);
    return n->type == YAML_SEQUENCE_NODE
               ? (int)(n->data.sequence.items.top - n->data.sequence.items.start) : -1;
}
static inline int hs_bd_item(fam *F, int seq, int i)
{
    return NODEP(F, seq)->data.sequence.items.start[i];
}
/* The mapping under key in the root, made when missing (0 on error). */
int hs_bd_section(fam *F, int root, const char *key, int tmpl);
int hs_bd_add_entry(fam *F, int map, const char *name, const char *text, int tmpl);
int hs_bd_text_has_D(fam *F);
/* forces -dR/dq' of the dissipation diss (NULL: none), then every D(...)
 * of the expression sections written out. */
int hs_bd_D_pass(fam *F, int root, const char *diss, size_t diss_off, int diss_tmpl);
/* 1 when one of the scalars nodes[n] reads t (through defines too), or
 * does not parse; 0 when none does.  Records no error. */
int hs_bd_moving(fam *F, int root, const int *nodes, size_t n);

/* body.c: springs, dissipation, bodies and D(...) on the expanded root;
 * 0 when the file uses none of them. */
int hs_bd_uses(fam *F, int root);
int hs_bd_expand(fam *F, int root);

/* bodypts.c: the bodies as the points of an embedding (their kinetic
 * energy the ambient one's; the structured path takes a chain of them).
 * hs_bd_points_ok: 1 when the model is bodies alone (no kinetic energy,
 * forces, mass or dissipation of its own, no damper, no contacts, no
 * Euler parameters, masses and inertias constants of the parameters with
 * J_k >= 0 for a body that turns about more than one axis, positions and
 * orientations that do not read t) with at least HS_LANG_CHAIN_MIN_N
 * coordinates.  hs_bd_points_begin adds `mass` (a list) and `embedding`
 * to the root; hs_bd_points_body the ambient points of body B: its
 * centre's moving coordinates (pos: the position's list), and with an
 * orientation (I[9] the inertia, row-major) its angle or the columns of
 * its rotation.  0 or an exit code. */
typedef struct hs_bd_points {
    int map, seq;                 /* the embedding and the mass list */
} hs_bd_points;
int hs_bd_points_ok(fam *F, int root, int bodies, int springs, int diss);
int hs_bd_points_begin(fam *F, int root, int tmpl, hs_bd_points *E);
int hs_bd_points_body(fam *F, hs_bd_points *E, const char *B, int key, const char *mass,
                      int pos, int ori, const char *const *I);

#endif
