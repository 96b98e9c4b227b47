/* Private to src/model: the state of one model load, shared by the files
 * that do its jobs in order:
 *
 *   read.c      the YAML tree into a model description: names (coordinates,
 *               parameters, defines, ambient names) resolved lazily, each
 *               expression parsed with its file position, mass, forces,
 *               constraints, initial data, outputs
 *   settings.c  the `simulate` and `consistency` keys, the keyword tables
 *               the command line shares, the command line's overrides
 *   forms.c     the three forms (Cartesian, Lagrangian, embedding) into one
 *               set of symbolic kernels M, Q, G, G_q, G_t, Gdot, gamma, U,
 *               P_nc, P_t
 *   compile.c   the kernels, parameter values folded in, into the bytecode
 *               programs; the mass matrix checked at the initial state
 *   names.c     the name tables (hashed: loading stays linear in the
 *               number of names), clash and column checks, parameters and
 *               defines settled in dependency order with an explicit stack
 *   model.c     the top level (hs_model_load), and the model object
 *               (free, source positions, the derivation printout)
 *   hints.c     the hints of error messages (did you mean ...)
 *
 * Every error is recorded in L->err at its file position (ytree.h). */
#ifndef HS_LOADER_H
#define HS_LOADER_H

#include <stdlib.h>

#include "model.h"
#include "../lang/lang.h"
#include "../util/map.h"

/* Documented limits (holosim(1), LIMITS).  A sparse model (the Cartesian
 * form with a diagonal mass and no contacts: no n x n or k x n array on
 * its path, C factored sparse) may have MAX_COORDS coordinates and
 * MAX_CONSTRAINTS constraints; any other keeps an n x n symbolic mass
 * matrix (MAX_DENSE_COORDS) or a dense k x n G_q (k*n <= MAX_DENSE). */
#define MAX_COORDS 100000
#define MAX_CONSTRAINTS 100000
#define MAX_DENSE_COORDS 5000
#define MAX_DENSE 1e7        /* entries of a dense k x n G_q (80 MB) */

/* What a name may resolve to while parsing: parameters see only parameters,
 * initial data see parameters, model expressions see everything the model
 * defines, outputs and events (SCOPE_OUTPUT) also what the dynamics
 * computes at a state: x'', lambda_NAME, R_q, T, U, E, H (events.c). */
enum scope { SCOPE_PARAM, SCOPE_INITIAL, SCOPE_MODEL, SCOPE_OUTPUT };
enum { ST_NONE, ST_BUSY, ST_DONE };   /* lazy evaluation of named entries */
/* The kinds of named entries in loader.names (a value is index * NAME_KINDS
 * + kind). */
enum { NAME_PAR, NAME_DEF, NAME_AMB, NAME_KINDS };
/* Nested parses left (a define or parameter met while parsing another, when
 * the dependency order did not settle it first): more is an error. */
#define MAX_NEST 64

typedef struct named {
    char *name;
    yaml_node_t *key, *val;
    int state;
    long ov;                   /* parameters: the last --set of the name, or -1 */
    const hs_node *expr;       /* defines: the parsed node */
} named;

typedef struct srcinfo {       /* private part of hs_model */
    hs_ytree y;
    yaml_node_t **node;        /* [nsrc] scalar of each parsed expression */
    size_t nsrc, cap;
    hs_strmap coords;             /* coordinate name -> index (keys: qname) */
    hs_lang_info lang;         /* what the language's expansion learnt (lang.h) */
} srcinfo;

typedef struct loader {
    hs_model *m;
    srcinfo *si;
    hs_ytree *y;
    hs_error *err;
    const hs_overrides *ov;
    int scope;
    named *par; size_t npar;
    named *def; size_t ndef;
    named *amb; size_t namb;   /* embedding: val = X expression scalar */
    named *out; size_t nout;   /* outputs: val = the expression's scalar */
    hs_strmap names;              /* parameters, defines, ambient names */
    hs_strmap cons;               /* constraint name -> index (keys: m->cname) */
    double *pin;               /* [nsymbols] parameter values (NaN: not yet) */
    int depth;                 /* nested hs_ld_parse calls */
    const hs_node **ambX, **ambV; /* [namb] X(t,q), D X */
    yaml_node_t *cur;          /* the scalar being parsed (for positions) */
    const hs_node *vMv2;       /* v^T M v / 2, built when an output first needs it */
    int cond;                  /* the next hs_ld_parse* may be a comparison a OP b */
    yaml_node_t *t_end_node;   /* simulate.t_end, for its range check */
    /* while chain.c reads a text: a define resolves to opaque(L, index),
     * its own symbol, instead of its expansion */
    const hs_node *(*opaque)(struct loader *L, size_t def);
    /* and, while it reads a constraint, an ambient name to its local form */
    const hs_node *(*opaque_amb)(struct loader *L, size_t amb);
    void *opaque_ctx;
    size_t ninput;             /* inputs: the last ninput entries of par */
    const hs_node **insrc;     /* [ninput] each input's source (NULL: none) */
    long *intab;               /* [ninput] its table in m->tab, or -1 */
    int in_source;             /* parsing an input's source: inputs not visible */
    int dense_retry;           /* the load failed because the structured path cannot
                                * serve the model (constraints with what it does not
                                * solve): load.c loads it again on the dense path */
    char *retry_text;          /* then the file's text, kept for that second load */
    const hs_node **chain_bT;  /* [n] a structured embedding in a chart that moves:
                                * dT/dq' at q' = 0 from the structure (chain.c),
                                * for forms.c's bookkeeping; else NULL */
} loader;

#define NODE(L, id) hs_ytree_node((L)->y, (id))
#define FOR_PAIRS(map, p)                                                   \
    for (yaml_node_pair_t *p = (map)->data.mapping.pairs.start;             \
         p < (map)->data.mapping.pairs.top; p++)
#define FOR_ITEMS(seq, it)                                                  \
    for (yaml_node_item_t *it = (seq)->data.sequence.items.start;           \
         it < (seq)->data.sequence.items.top; it++)

static inline void *xcalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

static inline size_t map_len(const yaml_node_t *n)
{
    return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
}

static inline size_t seq_len(const yaml_node_t *n)
{
    return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static inline const hs_node *scalar_zero(loader *L)
{
    return hs_num(L->m->dag, 0.0);
}

/* ---- family.c, body.c (family.h) ---- */

/* ---- read.c: YAML helpers ---- */

char *hs_ld_strdup(const char *s);
/* n must be a node of this type; else an error naming `what`. */
int hs_ld_expect(loader *L, yaml_node_t *n, yaml_node_type_t type, const char *what);
yaml_node_t *hs_ld_get(loader *L, yaml_node_t *map, const char *key);     /* value or NULL */
yaml_node_t *hs_ld_get_key(loader *L, yaml_node_t *map, const char *key); /* key or NULL */
/* Keep scalar n for positioned messages after loading (hs_model_place):
 * its hs_srcpos.src, or -1 when out of memory. */
int hs_ld_add_src(loader *L, yaml_node_t *n);
/* A plain scalar of a flow collection cut at a comma by YAML
 * (`{theta: atan2(x, y)}`): an error that says to quote it. */
int hs_ld_check_flow_cuts(loader *L, yaml_node_t *root);

/* ---- names.c ---- */

long hs_ld_find_coord(const hs_model *m, const char *s, size_t len);     /* -1: none */
long hs_ld_find_named(const loader *L, int kind, const char *s, size_t len); /* -1: none */
long hs_ld_find_constraint(const loader *L, const char *s, size_t len);     /* -1: none */
/* The quantity (model.h) an identifier names, per model (E), or made from
 * a coordinate or constraint by a prefix (R_x, lambda_rod: *idx = which);
 * NULL when none. */
const hs_quantity *hs_ld_quantity(const loader *L, const char *s, size_t len, size_t *idx);
/* A mapping's keys must be scalars, unique, and (allowed != NULL) among
 * allowed[]; an unknown key gets the nearest one suggested. */
int hs_ld_check_keys(loader *L, yaml_node_t *map, const char *const *allowed,
                     size_t nallowed, const char *where);
int hs_ld_check_clashes(loader *L);
/* Every name the model's quantities, coordinates, constraints, outputs,
 * ambient names, parameters and defines make (model.h: the columns and
 * what expressions read) is made once: else exit 2 at the name the user
 * chose, naming the quantity it would hide. */
int hs_ld_check_names(loader *L, yaml_node_t *root);
/* Parameter (NAME_PAR: evaluated) or define (NAME_DEF: parsed) i, after
 * the entries of its kind it mentions; returns 0 or L->err->code. */
int hs_ld_settle(loader *L, int kind, size_t i);

/* ---- read.c: expressions and sections ---- */

/* Parse a scalar as an expression in a scope; NULL with L->err set. */
const hs_node *hs_ld_parse(loader *L, yaml_node_t *n, int scope, const char *what);
/* Parse a text that is not in the file (the command line): NULL with the
 * parser's message and offset in *pe (a hint added), or with L->err set
 * (an error in a define it reads). */
const hs_node *hs_ld_parse_text(loader *L, const char *text, int scope, hs_error *pe);
/* Turn an error recorded in the dag (a fold to NaN, a size limit) into a
 * positioned model error; returns L->err->code. */
int hs_ld_dag_check(loader *L);
/* An error when e depends on a velocity (names `what`, placed at `where`). */
int hs_ld_forbid_velocity(loader *L, const hs_node *e, yaml_node_t *where, const char *what);
/* A list of n expressions or a mapping coordinate -> expression; missing
 * entries get dflt (NULL: every coordinate required). */
int hs_ld_read_per_coord(loader *L, yaml_node_t *n, const char *what, int scope,
                         const hs_node *dflt, const hs_node **out);
int hs_ld_read_names_map(loader *L, yaml_node_t *map, named **out, size_t *nout,
                         const char *what);
int hs_ld_read_coordinates(loader *L, yaml_node_t *root);
int hs_ld_eval_params(loader *L);
/* One entry whose mentions are settled (called by hs_ld_settle). */
int hs_ld_eval_param(loader *L, size_t i);
int hs_ld_parse_define(loader *L, size_t i);
int hs_ld_read_embedding(loader *L);
/* The names of the constraints (m->k, m->cname) and of the outputs
 * (L->out, m->nout, m->outname), read with the other names before any
 * expression; then the expressions of each (m->G, m->out). */
int hs_ld_read_constraint_names(loader *L, yaml_node_t *c);
int hs_ld_read_output_names(loader *L, yaml_node_t *o);
int hs_ld_read_constraints(loader *L, yaml_node_t *c);
int hs_ld_read_outputs(loader *L);
int hs_ld_read_initial(loader *L, yaml_node_t *root);

/* ---- inputs.c ---- */

/* `inputs: [F, ...]`: appended to L->par (val NULL), after `parameters`. */
int hs_ld_read_inputs(loader *L, yaml_node_t *root);
int hs_ld_is_input(const loader *L, size_t par);
/* What input `par` reads as in an expression of scope `scope` (lookup):
 * its source, or its symbol; NULL with *status/perr set when it cannot be
 * read there (parameters, initial data). */
const hs_node *hs_ld_input_node(loader *L, size_t par, int *status, hs_error *perr);
/* After the parameters: every --input checked and its source parsed (an
 * expression) or read (a table, into m->brk). */
int hs_ld_read_input_sources(loader *L);
/* hs_overrides.input_symbols: each input's value, its source at input_t
 * (NaN: t0), after the initial data. */
int hs_ld_input_values(loader *L);

/* ---- mass.c ---- */

/* `mass`: a diagonal list of dim entries or a symmetric dim x dim matrix,
 * into M[dim*dim]. */
int hs_ld_read_mass(loader *L, yaml_node_t *n, size_t dim, const hs_node **M);
/* The Cartesian form's `mass` into the model: a diagonal list into
 * m->M_diag[n] (m->M stays NULL), a matrix into m->M[n*n] (allocated
 * here). */
int hs_ld_read_model_mass(loader *L, yaml_node_t *n);

/* ---- events.c ---- */

/* Outputs and events: the acceleration of coordinate i (amb = 0) or of
 * ambient name i (amb = 1); a name the dynamics computes (lambda_NAME,
 * R_q, T, U, E, H), or NULL when s names none of them. */
const hs_node *hs_ld_accel(loader *L, size_t i, int amb);
const hs_node *hs_ld_derived(loader *L, const char *s, size_t len);
/* `events` and the command line's --stop-when into model->ev, evf. */
int hs_ld_read_events(loader *L, yaml_node_t *root);
/* contacts.c: the names (after the constraints': appended to m->cname,
 * m->k and m->ncontact), the gaps and restitutions (after the
 * constraints' expressions), the key of contact c, the two events of
 * each contact (after the file's events) */
int hs_ld_read_contact_names(loader *L, yaml_node_t *cs);
int hs_ld_read_contacts(loader *L, yaml_node_t *cs);
yaml_node_t *hs_ld_contact_node(loader *L, yaml_node_t *root, size_t c);
int hs_ld_contact_events(loader *L);
/* A coefficient: a number or an expression of parameters (its expression
 * into *expr, for a sweep's new point), its value into *v; what: "a
 * contact's restitution".  0 or the error code (positioned). */
int hs_ld_coefficient(loader *L, yaml_node_t *n, const char *what, const hs_node **expr,
                      double *v);
/* friction.c: the same for the `friction` section and the contacts'
 * `friction` keys (rows after the contacts; root: the model's mapping) */
int hs_ld_read_friction_names(loader *L, yaml_node_t *root);
int hs_ld_read_friction(loader *L, yaml_node_t *root);
/* The contacts' `friction` keys: the c-th contact with one (or how many
 * there are, for c = SIZE_MAX), its key node into *key (names.c). */
size_t hs_ld_contact_friction(loader *L, yaml_node_t *root, size_t c, yaml_node_t **key);
/* The entries of the `friction` section (0 without one). */
size_t hs_ld_friction_section_len(loader *L, yaml_node_t *root);
yaml_node_t *hs_ld_friction_node(loader *L, yaml_node_t *root, size_t f);
int hs_ld_friction_events(loader *L);
int hs_ld_check_defines(loader *L);

/* ---- draw.c ---- */

/* The `draw` key, or the default drawing, into m->draw (after the kernels). */
int hs_ld_read_draw(loader *L, yaml_node_t *root);
void hs_ld_free_draw(hs_model *m);

/* ---- hints.c: error paths only ---- */

/* After "unknown name 'M'" (pe, at pe->offset of text, parsed in scope):
 * " (did you mean 'm'?)", or why the name is not visible there, into
 * hint; "" when there is nothing to add. */
void hs_ld_name_hint(loader *L, const hs_error *pe, int scope, const char *text,
                     char *hint, size_t cap);
/* The parameter nearest to a misspelt name, or NULL. */
const char *hs_ld_nearest_param(loader *L, const char *s);
/* What to do about an expression `what` ("the potential", ...) that reads a
 * velocity where it must not: a ": ..." suffix for the message. */
const char *hs_ld_velocity_hint(const char *what);

/* ---- settings.c ---- */

int hs_ld_read_settings(loader *L, yaml_node_t *root);
/* The command line's overrides over the file's settings, then the
 * defaults that depend on both; checks t_end against t0. */
int hs_ld_apply_overrides(loader *L);
/* The value of a command-line option given as an expression of numbers, pi
 * and the parameters (read.c): into *out, sign 1 asking > 0, 0 >= 0, -1
 * any; a usage error (exit 1) shown on "OPTION TEXT" with a caret. */
int hs_ld_eval_option(loader *L, const char *option, const char *text, int sign, double *out);

/* ---- forms.c ---- */

/* M, Q, U, P_nc, P_t of the file's form, then G, G_q, G_t, Gdot, gamma. */
int hs_ld_build_kernels(loader *L, yaml_node_t *root);

/* ---- chain.c ---- */

/* The structured embedding (model.h: hs_chain) from the ambient mass
 * Ma [namb*namb] and forces Fa [namb], into m->chain when the model is of
 * that kind (else m->chain stays NULL).  0, or an error code. */
/* A map of every velocity symbol to 0 (forms.c), [*ns] the DAG's
 * symbols now; NULL when out of memory. */
const hs_node **hs_ld_velocity_zero_map(loader *L, size_t *ns);
int hs_ld_build_chain(loader *L, const hs_node *const *Ma, const hs_node *const *Fa);
void hs_chain_free(hs_chain *c);

/* ---- compile.c ---- */

/* Fold the parameter values in and compile prog_dyn, prog_pos, prog_aux;
 * find the mass structure and the sparsity of G_q. */
int hs_ld_compile(loader *L);
/* The mass matrix positive definite at the initial state (error at where). */
int hs_ld_check_mass_at_start(loader *L, yaml_node_t *where);

#endif
