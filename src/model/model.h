/* The compiled model: a model file (any of the three forms of the model
 * format, holosim-model(5)) turned into symbolic kernels and bytecode programs.
 * Immutable after hs_model_load returns (like MuJoCo's mjModel): every run
 * keeps its own state (hs_work in dynamics.h), so a sweep or a test loads
 * one model and runs it many times.
 *
 * Kernels (symbolic, parameters as symbols; compiled with parameter values
 * folded in):
 *   M [n*n]   mass matrix / metric       Q [n]     generalized force
 *             (or M_diag [n] alone: a diagonal `mass` list; hs_model_M;
 *             neither for a structured embedding: hs_chain, Q all 0)
 *   G [k]     constraints                G_q       Jacobian, sparse by rows:
 *             the entries G_q_nz of row i at columns G_q_col[G_q_start[i] ..
 *             G_q_start[i+1]-1], increasing (hs_model_G_q); no k x n array
 *   G_t [k]   dG/dt                      Gdot [k]  D G = G_t + G_q v
 *   gamma [k] D(D G)                     U         potential (0 if none)
 *   P_nc      F_nc . v, power of the forces not derived from the potential
 *   P_t       dE/dt - R.v - P_nc along solutions: the power of whatever E
 *             does not account for (a moving chart, a time-dependent mass
 *             or potential; 0 for time-independent models), so that
 *             E - E0 - W_R - W_nc - W_t = 0 for every model; in a moving
 *             embedding it also depends on the accelerations: P_t + bT . a
 *
 * Energy (holosim(1), OUTPUT): E = T + U with T the kinetic energy in the
 * frame of the model's `mass`: v^T M v / 2 + Tx, where Tx = T1 + T0 (the
 * parts of the ambient kinetic energy linear in and free of q') in the
 * embedding form and 0 otherwise.  The Jacobi integral is
 * H = q' . dL/dq' - L = v^T M v / 2 - T0 + U (T0 the velocity-free part of
 * the kinetic energy; H = E in the Cartesian form). */
#ifndef HS_MODEL_H
#define HS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "../expr/expr.h"
#include "../util/error.h"

typedef enum { HS_FORM_CARTESIAN, HS_FORM_LAGRANGIAN, HS_FORM_EMBEDDING } hs_form;
typedef enum { HS_MASS_CONST_DIAG, HS_MASS_DIAG, HS_MASS_FULL } hs_mass_kind;
typedef enum { HS_STAB_PROJECTION, HS_STAB_BAUMGARTE, HS_STAB_NONE } hs_stab;
typedef enum { HS_CONS_PROJECT, HS_CONS_REJECT } hs_cons_mode;

/* Run settings: from the file's `simulate` and `consistency`, then the
 * command line's overrides. */
typedef struct hs_settings {
    double t_end;          /* NAN until given */
    double dt;             /* NAN = (t_end - t0)/1000 */
    char method[16];       /* the stepper's name, "" for the default (src/integrate
                            * checks it and owns the default) */
    hs_srcpos method_pos;  /* where the file names it (src < 0: the command line
                            * or the default) */
    double step;           /* the fixed-step methods' step (NAN: chosen by them) */
    hs_srcpos step_pos;    /* where the file gives it (src < 0: not there) */
    double rtol, atol;
    hs_stab stabilize;
    double alpha, beta;    /* Baumgarte gains */
    hs_cons_mode mode;
    double tol;            /* consistency tolerance */
    int strict_rank;       /* consistency.dependent: 0 allow (redundant constraints
                            * and singular positions solved with minimum-norm
                            * multipliers), 1 reject (a rank loss is an error) */
    int interpolate;       /* simulate.output: 0 exact, 1 interpolate */
} hs_settings;

/* The keywords of the settings, in enum order, shared by the model file
 * and the command line; hs_keyword gives the index of s, or -1. */
extern const char *const hs_stab_names[3];      /* hs_stab */
extern const char *const hs_cons_mode_names[2]; /* hs_cons_mode */
extern const char *const hs_dependent_names[2]; /* consistency.dependent: allow, reject */
extern const char *const hs_output_names[2];    /* simulate.output: exact, interpolate */
int hs_keyword(const char *const *names, size_t n, const char *s);

/* The numeric settings, one table for the file (simulate.KEY) and the
 * command line (OPTION): each a number or an expression of numbers, pi and
 * the parameters (after --set), > 0 where positive says so. */
typedef enum { HS_NUM_T_END, HS_NUM_DT, HS_NUM_STEP, HS_NUM_RTOL, HS_NUM_ATOL, HS_NUM_ALPHA,
               HS_NUM_BETA, HS_NUM_COUNT } hs_numset;
typedef struct hs_numset_def {
    const char *key;           /* "t_end" */
    size_t off;                /* offsetof(hs_settings, ...) */
    int positive;              /* 1: > 0; 0: t_end (checked against t0), alpha, beta (>= 0) */
} hs_numset_def;
extern const hs_numset_def hs_numsets[HS_NUM_COUNT];
/* Numeric setting i of s, and where the model file gives it (src < 0: the
 * command line, or not given; kept for the methods' options, step). */
double hs_settings_num(const hs_settings *s, hs_numset i);
hs_srcpos hs_settings_pos(const hs_settings *s, hs_numset i);

/* What the command line overrides (NAN / "" / -1 = keep the file's). */
typedef struct hs_overrides {
    size_t nset;                   /* --set NAME=VALUE, in order: the last one of a
                                    * name wins */
    const char *const *set_name;
    const double *set_value;       /* the value, unless set_text gives one */
    const char *const *set_text;   /* NULL, or [nset] an expression of numbers, pi
                                    * and other parameters (NULL entry: set_value) */
    /* NULL, or where entry i came from: when it came from a file (--params),
     * place err (message set) at byte off of its text, or at its name when
     * off < 0, and return 1; return 0 for an entry of the command line
     * itself, which the loader shows as the --set option with a caret. */
    int (*set_place)(const void *ctx, size_t i, long off, hs_error *err);
    /* how the caller names its options in messages (NULL: the library's,
     * hs_optnames_library); a table that outlives the model */
    const hs_optnames *names;
    const void *set_place_ctx;
    hs_settings s;                 /* fields given on the command line */
    /* [HS_NUM_COUNT] NULL, or a numeric setting given on the command line as
     * an expression (--t-end '2*pi/w'): evaluated after the parameters,
     * then it overrides as a number in s would */
    const char *num_text[HS_NUM_COUNT];
    const char *num_option[HS_NUM_COUNT]; /* how the caller names it in messages
                                           * ("--t-end"; NULL: the key, "t_end") */
    int has_stabilize, has_mode, has_output, has_dependent;
    /* parameters kept as program inputs (not folded into constants), with
     * every parameter derived from them: the ones a sweep varies, so that
     * one compiled model (one native build) serves all its points */
    size_t nkeep;
    const char *const *keep;
    size_t nstop;                  /* --stop-when COND, in order: events named */
    const char *const *stop_when;  /* stop_when (stop_when_1, _2, ... when several) */
    /* equilibrium, modes: the kernels M, Q, G alone.  The outputs, events,
     * drawing and the defines none of M, Q, G reads are not parsed (the
     * names are still checked), so a value they cannot take at these
     * parameters (an output NaN above a critical speed) does not stop the
     * analysis; the model has no outputs, events or drawing then. */
    int statics;
    /* derive: the dense kernels complete (M, Q) for every model; without it
     * a structured embedding (hs_chain) leaves Q at 0, as its
     * accelerations do not use it */
    int dense;
    /* --input NAME=SRC (model/inputs.c), in command-line order, the last of
     * a name winning: SRC a table (a text ending in .csv: columns t and
     * NAME, or t and one other) or an expression of t and parameters */
    size_t ninput;
    const char *const *input_name;
    const char *const *input_text;
    /* linearize: each input stays a symbol of its own, at the value of its
     * source at t = input_t (NaN: at t0; 0 without a source), so that d/du
     * can be taken */
    int input_symbols;
    double input_t;
    /* with statics: the outputs parsed all the same (linearize reads them) */
    int keep_outputs;
} hs_overrides;

void hs_overrides_init(hs_overrides *o);

/* An event (holosim-model(5), EVENTS): a zero crossing of its function
 * g (model->evf) in a direction, and what happens there.  `when: a > b`
 * and `a >= b` become g = a - b, direction up; `a < b`, `a <= b`: down. */
typedef enum { HS_EV_STOP, HS_EV_RECORD, HS_EV_RELEASE,
               HS_EV_HOLD,     /* released constraints held again (a plastic impact) */
               HS_EV_IMPACT,   /* a contact's gap reaching 0 while it is open */
               HS_EV_OPEN,     /* a closed contact's multiplier going below 0 */
               HS_EV_SLIPSTOP, /* a sliding friction element's slip rate at 0 */
               HS_EV_UNSTICK,  /* a sticking one's force beyond mu_static |N| */
               HS_EV_NACTIONS  /* (what each does: integrate/actions.c) */
} hs_ev_action;
/* The actions an `events` entry may name (stop, record, release, hold:
 * the first HS_EV_NWRITTEN of hs_ev_action, model/events.c). */
enum { HS_EV_NWRITTEN = HS_EV_HOLD + 1 };
typedef struct hs_event {
    char *name;            /* the key, or stop_when[_N] for --stop-when */
    char *text;            /* the condition as written (messages) */
    int dir;               /* +1 up (- to +), -1 down, 0 both */
    int cmp;               /* 1: a comparison (a < b...): true on the dir side */
    hs_ev_action action;
    size_t nrel;
    size_t *rel;           /* [nrel] the constraints a release lets go, a hold
                            * takes back */
    size_t contact;        /* HS_EV_IMPACT, HS_EV_OPEN: the contact's constraint;
                            * HS_EV_SLIPSTOP, HS_EV_UNSTICK: the friction row */
    hs_srcpos pos;         /* the start of `when` (src < 0: the command line) */
} hs_event;

/* The drawing (holosim-model(5), DRAW; model/draw.c): points as
 * expressions of t and q, and the lines, circles and ground marks between
 * them; the `draw` key, or a default inferred from the coordinate names. */
typedef enum { HS_DRAW_LINE, HS_DRAW_CIRCLE, HS_DRAW_GROUND } hs_draw_kind;
typedef struct hs_draw_item {
    hs_draw_kind kind;
    size_t npt;
    size_t *pt;            /* [npt] point indices: a polyline (2: a segment), or
                            * the one point of a circle or ground mark */
    size_t rout;           /* circle: its radius is output rout of prog */
    unsigned rgb;          /* 0xRRGGBB */
} hs_draw_item;
typedef struct hs_drawing {
    int dim;               /* 2 or 3 */
    int inferred;          /* 1: no `draw` key, the default */
    size_t npt;
    char **ptname;         /* [npt] */
    unsigned *ptrgb;       /* [npt] the colour of each point's dot */
    unsigned char *ptdot;  /* [npt] 1: the point is drawn as a dot (`dots`) */
    size_t nitem;
    hs_draw_item *item;    /* [nitem] */
    /* out[0 .. npt*dim-1]: the points' coordinates, point by point; then
     * the circles' radii; inputs t, q and parameters (hs_model_inputs) */
    hs_prog *prog;
    size_t nout;
    char note[1024];       /* the default said in words ("" for a `draw` key) */
    hs_error none;         /* code != 0: nothing to draw, and why (positioned) */
} hs_drawing;


/* The structured embedding (model/chain.c, dynamics/chain.c): the
 * defines an embedding reads kept as internal unknowns z (nz of them, with
 * the ambient masses and forces), each tied to the others by its defining
 * equation z_j = Phi_j(q, z).  B = [dPhi/dq dPhi/dz] has nb structural
 * entries; the dynamics solve the sparse saddle-point system instead of
 * the dense metric.  Built for an embedding model of at least
 * HS_LANG_CHAIN_MIN_N coordinates with a diagonal ambient mass (a list)
 * that reads neither t nor a velocity (one that reads positions adds its
 * terms to Q and F) and at least one define read by the embedding
 * (constraints and a moving chart included; model/chain.c); NULL
 * otherwise (and for the loads of statics and hs_overrides.dense).  With it neither the metric
 * (M and M_diag NULL, mass_kind HS_MASS_FULL without outputs) nor Q (all
 * 0) is derived: the accelerations, T and the check at t0 come from the
 * structure alone.
 * prog: B entries (nb) | gamma (nz) | mass (nz) | force (nz) | Q (n) |
 * z' (nz) | constraint entries (ncb) | their gamma (k) | P_nc | P_t |
 * [bT (n) | T0] (a chart that moves: m->nbT n) | [G_q non-zeros (nnz) |
 * [G | Gdot] (Baumgarte)] (the model's constraints, k > 0: loops closed
 * over the chain; the expanded G_q for the reaction's power and the rows,
 * the local derivatives and gamma for the solve), inputs as prog_dyn's. */
typedef struct hs_chain {
    size_t nz, nb;
    uint32_t *b_row;       /* [nb] the unknown j whose Phi_j the entry differentiates */
    uint32_t *b_col;       /* [nb] with respect to q_r (r < n) or z_j (n + j) */
    size_t ncb;            /* local derivatives of the model's constraints G(t, q, z) */
    uint32_t *cb_row, *cb_col;     /* [ncb] the constraint; q_r or z_j as b_col */
    const hs_node **root;  /* [nroot] the symbolic outputs before P_nc, P_t */
    size_t nroot;
    size_t off_gamma, off_mass, off_F, off_Q, off_zdot, off_Pnc, off_Pt, off_bT, off_T0;
    size_t off_cb, off_cgamma;     /* the constraints' local derivatives, their gamma */
    size_t off_Gq, off_Gb, off_Gdotb, nout;
    hs_prog *prog;
} hs_chain;

typedef struct hs_model {
    char *file;            /* as given ("<stdin>" for -) */
    char *name;            /* `name:` or "" */
    const hs_optnames *names; /* the caller's option names (hs_overrides.names) */
    hs_form form;
    size_t n, k;           /* coordinates, constraints */
    char **qname;          /* [n] */
    char **vname;          /* [n] "x'" */
    char **cname;          /* [k] */
    hs_srcpos *cpos;       /* [k] start of each constraint's expression */
    /* contacts (holosim-model(5), CONTACTS; model/contacts.c): the
     * ncontact constraints contact0 .. contact0 + ncontact - 1 (after the
     * bilateral ones; the friction elements' rows follow) are one-sided: held
     * (closed) or let go (open) by the run, each with two events of its
     * own (HS_EV_IMPACT, HS_EV_OPEN) after the file's and --stop-when's */
    size_t ncontact, contact0;
    double *restitution;   /* [ncontact] Newton's coefficient e in [0, 1] */
    const hs_node **restitution_expr;   /* [ncontact] its expression of parameters */
    /* friction elements (holosim-model(5), FRICTION; model/friction.c):
     * rows fric0 .. k - 1 (after the contacts), each a `slip` held while
     * it sticks, let go while it slides; two events each after the
     * contacts' */
    size_t nfriction, fric0;
    double *fric_mu, *fric_mus;    /* [nfriction] kinetic and static coefficients */
    const hs_node **fric_mu_expr, **fric_mus_expr;  /* their expressions of parameters */
    size_t *fric_norm_start;       /* [nfriction + 1] into fric_norm */
    size_t *fric_norm, nfric_norm; /* the normal rows of each element */
    size_t npar;
    char **pname;          /* [npar] */
    double *pval;          /* [npar] after --set and recomputation */
    const hs_node **par_expr;      /* [npar] each parameter's expression (NULL: a
                                    * number given by the caller) */
    unsigned char *par_kept;       /* [npar] a program input (hs_overrides.keep and
                                    * what is computed from those) */
    size_t *par_order;     /* [npar] the order they were evaluated in (each
                            * after those it mentions) */
    size_t npar_done;
    /* inputs (`inputs`, model/inputs.c): the parameters input0 .. npar - 1,
     * 0 unless a --input gives them a source, which replaces them in every
     * expression (a table: piecewise linear in t, held before and after) */
    size_t ninput, input0;
    char **input_desc;     /* [ninput] its source in words (check): "0 (no --input)",
                            * "table FILE: N rows, t from A to B", "t/2" */
    double *brk;           /* [nbrk] the input tables' times, increasing: a run's
                            * steps end there (no step across a kink) */
    size_t nbrk;
    size_t ntab;
    struct hs_input_table *tab;    /* [ntab] the tables an input reads */
    size_t nout;
    char **outname;        /* [nout] `outputs` */
    size_t namb;
    char **ambname;        /* [namb] embedding form: ambient names */
    int has_potential, has_nc_forces;

    double t0;
    double *q0, *v0;       /* [n] as written (before projection) */
    const hs_node **init_expr;    /* [2n+1] the expressions of q0, v0 and t0
                                   * (NULL: 0), of parameters */
    unsigned char *lock;   /* [n] consistency.lock */
    hs_settings set;

    /* symbolic kernels (see above); parameters appear as symbols */
    hs_dag *dag;
    int sym_t;
    int *sym_q, *sym_v;    /* [n] */
    int *sym_p;            /* [npar] */
    const hs_node **M;     /* [n*n] row-major, or NULL when M_diag holds M */
    const hs_node **M_diag;        /* [n] the diagonal of a mass given as a diagonal
                                    * list (every other entry 0), or NULL */
    const hs_node **Q, **G, **G_t, **Gdot, **gamma;
    size_t *G_q_start;     /* [k+1] the symbolic Jacobian by rows: the columns */
    size_t *G_q_col;       /* [G_q_start[k]] a constraint's expression uses ... */
    const hs_node **G_q_nz;        /* [G_q_start[k]] ... and dG_i/dq_col there */
    const hs_node *U, *P_nc, *P_t;
    const hs_node *T0;     /* velocity-free part of T (H = v^T M v/2 - T0 + U) */
    const hs_node *Tx;     /* T - v^T M v/2: T1 + T0 of an embedding, else 0 */
    const hs_node **bT;    /* [n] dT/dq' at q' = 0 (T1 = bT . q'), or NULL */
    const hs_node **ambv;  /* [namb] ambient velocities X_t + DX q' */
    const hs_node **out;   /* [nout] */
    const hs_node **amb;   /* [namb] */
    size_t nev;
    hs_event *ev;          /* [nev] events: the file's, then --stop-when */
    const hs_node **evf;   /* [nev] their functions g */
    const hs_node **ev_root; /* [nev] g as compiled into prog_ev (parameters folded,
                              * kept ones hoisted): the root of one event's own
                              * program (locating one crossing evaluates one g) */
    /* What outputs and events read beyond (t, q, v) and parameters: the
     * accelerations x'' and the multipliers lambda_NAME are VM inputs of
     * their own (filled from the dynamics at the state, dynamics.h);
     * R_q, T, U, E, H are expressions of those and of the kernels. */
    int *sym_a;            /* [n] symbol of x'' (-1: nothing reads it) */
    int *sym_lam;          /* [k] symbol of lambda_NAME (-1: nothing reads it) */

    /* compiled: values folded in, sparsity found */
    size_t nin;            /* length of the input vector (symbols) */
    hs_mass_kind mass_kind;
    double *Mconst;        /* [n] constant diagonal (HS_MASS_CONST_DIAG), from the
                            * parameters by hs_model_eval_constants */
    /* parameter-only subexpressions hoisted out of the programs: input
     * symbol hoist_sym[i] holds the value of hoist_expr[i] */
    size_t nhoist;
    int *hoist_sym;        /* [nhoist] */
    const hs_node **hoist_expr;   /* [nhoist] expressions of parameters */
    double *hoist_val;     /* [nhoist] their values at pval */
    size_t nnz;            /* structural non-zeros of G_q */
    int *gq_start;         /* [k+1] row starts into gq_col */
    int *gq_col;           /* [nnz] */

    /* prog_dyn: M (diag n, or lower triangle n(n+1)/2, or none: a constant
     * diagonal, or a structured embedding's, whose prog_dyn is not run) | Q (n) |
     * G_q non-zeros (nnz) | gamma (k) | P_nc | P_t | bT (nbT: n, or 0 when
     * T1 = 0) | [baumgarte: G (k) | Gdot (k)] */
    hs_prog *prog_dyn;
    size_t off_M, off_Q, off_Gq, off_gamma, off_Pd, off_Pt, off_bT, nbT, off_Gb, off_Gdotb,
           ndyn;
    /* prog_aux: G | Gdot | G_t | U | P_nc | ambient | Tx | T0 | ambient
     * velocities */
    hs_prog *prog_aux;
    size_t off_G, off_Gdot, off_Gt, off_U, off_Pnc, off_amb, off_Tx, off_T0,
           off_ambv, naux;
    /* prog_out: the outputs (nout); prog_ev: the event functions (nev).
     * out_dyn, ev_dyn: the program reads x'' or lambda_NAME, so it runs
     * after hs_dyn_accel at the same state. */
    hs_prog *prog_out, *prog_ev;
    int out_dyn, ev_dyn;
    /* prog_pos: G (k) | G_q non-zeros (nnz) | G_t (k): projection */
    hs_prog *prog_pos;

    hs_chain *chain;       /* the structured embedding, or NULL (the dense path) */

    hs_drawing *draw;      /* the drawing (never NULL after a load but a statics one) */
    const hs_node **draw_expr;    /* [draw->nout] what draw->prog computes */

    void *src;             /* private: source texts for positioned messages */
} hs_model;

/* The quantities a model's names make, one table (quantity.c) from which
 * the CSV columns (io/columns.c), the reserved names, the clash checks,
 * the hints and what outputs and events read are all generated.  An entry
 * is per model (one name: E), per coordinate, constraint, output or
 * ambient name (a name per thing: prefix + NAME + suffix, R_x, lambda_rod,
 * x''); every name it makes means that quantity alone (a parameter,
 * define, output or coordinate of that name is an error).  How each is
 * computed: by its id, in hs_column_value (io/columns.c) for a row and in
 * the loader for the expressions that read it (model/events.c). */
typedef enum {
    HS_QTY_T, HS_QTY_Q, HS_QTY_V, HS_QTY_A, HS_QTY_LAMBDA, HS_QTY_G, HS_QTY_GDOT,
    HS_QTY_CLOSED, HS_QTY_E, HS_QTY_TKIN, HS_QTY_U, HS_QTY_H, HS_QTY_R, HS_QTY_PR, HS_QTY_PRES,
    HS_QTY_WR, HS_QTY_WNC, HS_QTY_PNC, HS_QTY_WT, HS_QTY_EBAL, HS_QTY_EIMP, HS_QTY_OUT, HS_QTY_AMB,
    HS_QTY_AMBV,
    HS_QTY_EVENT
} hs_qty;
typedef enum { HS_PER_MODEL, HS_PER_COORD, HS_PER_CONSTRAINT, HS_PER_OUTPUT,
               HS_PER_AMB,
               HS_PER_CONTACT,      /* per contact (constraints contact0 ..) */
               HS_PER_CONTACTS      /* one name, for a model with contacts only */
} hs_qty_per;
enum { HS_QTY_COLUMN = 1,    /* a column of a run's rows */
       HS_QTY_DEFAULT = 2,   /* ... among the default ones */
       HS_QTY_STATE = 4,     /* t, q, v: every model expression reads it */
       HS_QTY_DERIVED = 8 }; /* computed by the dynamics: outputs and events
                              * (only) read it */
typedef struct hs_quantity {
    hs_qty id;
    hs_qty_per per;
    const char *prefix, *suffix;   /* the name: prefix (per model), or
                                    * prefix + NAME + suffix */
    unsigned flags;                /* HS_QTY_* */
    const char *what;              /* for messages: "the Jacobi integral" */
} hs_quantity;
#define HS_NQUANTITIES 25
extern const hs_quantity hs_quantities[HS_NQUANTITIES];   /* in column order */
/* How many names entry q makes for m (1 per model), and the NAME of the
 * i-th (NULL per model). */
size_t hs_quantity_count(const hs_model *m, const hs_quantity *q);
const char *hs_quantity_base(const hs_model *m, const hs_quantity *q, size_t i);
/* The i-th name of q into buf[size] (a longer one is cut); its length. */
size_t hs_quantity_name(const hs_model *m, const hs_quantity *q, size_t i, char *buf,
                        size_t size);
/* The per-model entry named s, or NULL. */
const hs_quantity *hs_quantity_model(const char *s, size_t len);

/* Entry (i, j) of the symbolic M and of the symbolic G_q: NULL where the
 * entry is structurally 0 (off the diagonal of M_diag, a coordinate the
 * constraint does not use); G_q's by a binary search of row i. */
const hs_node *hs_model_M(const hs_model *m, size_t i, size_t j);
const hs_node *hs_model_G_q(const hs_model *m, size_t i, size_t j);

/* The saddle-point system of a structured embedding (model/chain.c; the
 * layout: dynamics/chain.c), unknowns (q'' [n], z'' [nz], lambda [nz],
 * mu [k]; mu = -Lambda, the multipliers of the model's constraints):
 * hs_chain_sys_new orders its pattern once (NULL when out of memory);
 * hs_chain_sys_factor fills it from the outputs o of m->chain->prog and
 * factors it (0, or -1 when it is singular: the metric is not positive
 * definite there, or the constraints are dependent); hs_chain_sys_solve
 * then puts (q'', z'', lambda, mu) into x[n + 2 nz + k];
 * hs_chain_sys_solve_rhs solves in place for a right-hand side x of the
 * caller's.  hs_chain_regular: the system at a state regular (1),
 * singular or not finite (0), an ambient mass negative (2: the saddle-point
 * system can be regular with it, the motion is not), or out of memory (-1);
 * with_constraints 0 leaves the constraints' rows out (nothing to solve
 * there: their diagonal is 1). */
typedef struct hs_chain_sys hs_chain_sys;
hs_chain_sys *hs_chain_sys_new(const hs_model *m);
void hs_chain_sys_free(hs_chain_sys *s);                /* NULL is fine */
int hs_chain_sys_factor(hs_chain_sys *s, const double *o);
void hs_chain_sys_solve(hs_chain_sys *s, const double *o, double *x);
void hs_chain_sys_solve_rhs(hs_chain_sys *s, double *x);
int hs_chain_regular(const hs_model *m, double t, const double *q, const double *v,
                     int with_constraints);
/* An --input text that names a table (FILE.csv, FILE.CSV), not an
 * expression: what the loader reads and the command line compares with
 * its outputs. */
int hs_model_input_is_table(const char *text);

/* Load, validate and compile a model file ("-" = standard input).
 * Returns NULL with err set (exit code 2 for model errors, 1 for a --set of
 * an unknown parameter). */
hs_model *hs_model_load(const char *path, const hs_overrides *ov, hs_error *err);
hs_model *hs_model_load_string(const char *name, const char *text,
                               const hs_overrides *ov, hs_error *err);
void hs_model_free(hs_model *m);                /* NULL is fine */

/* The model's constant inputs into a VM input vector in[nin]: the
 * parameters and the hoisted parameter expressions (and the input tables'
 * slots at t0). */
void hs_model_inputs(const hs_model *m, double *in);

/* An input table (model/inputs.c): rows (t[i], y[i]), t increasing.  In
 * the expressions the input is a + s (t - t0), three VM input slots that
 * hold the piece t lies in (t_i <= t < t_i+1: y_i, its slope, t_i; before
 * the first row y_0, 0; from the last on y_n-1, 0): one evaluation costs
 * the same whatever the table's length, and the derivatives in t are those
 * of the piece. */
typedef struct hs_input_table {
    size_t n;
    double *t, *y;         /* [n] */
    int sym_a, sym_s, sym_t0;
} hs_input_table;
/* Set the tables' slots of in[nin] for time t.  hint: NULL, or [ntab] the
 * last piece of each table (a run moves through them in order: O(1)). */
void hs_model_tables_at(const hs_model *m, double t, double *in, size_t *hint);
/* The value of table tb at time t. */
double hs_model_table_value(const hs_input_table *tb, double t);

/* Recompute hoist_val and Mconst from pval (after a change of parameters).
 * Returns 0, or HS_EXIT_MODEL with err placed at the expression that is
 * not finite. */
int hs_model_eval_constants(hs_model *m, hs_error *err);

/* Another point of a sweep without loading again: the parameters named
 * name[0..n-1] take value[i] and every other parameter, the hoisted
 * constants, the initial data and the constant mass are recomputed from
 * their expressions, so that m is the model hs_model_load would give with
 * these values as --set (for parameters the model was loaded to keep as
 * inputs: hs_overrides.keep; the programs do not change).  Returns 0, or -1
 * when this point needs a full load (a value not finite, a name not kept,
 * a mass not positive definite at t0, t_end not after t0: the load says
 * why, with the file position); m is then unusable until a call returns 0.
 * The `point` fields change: t0, q0, v0, pval, hoist_val, Mconst. */
int hs_model_repoint(hs_model *m, const char *const *name, const double *value, size_t n);
/* Whether parameter `name` sizes an indexed family or gives an index
 * (holosim-model(5), FAMILIES): a new value changes the model's structure,
 * so hs_model_repoint refuses it (a full load is needed). */
int hs_model_structural(const hs_model *m, const char *name);

/* The contacts' restitutions and the friction coefficients from their
 * expressions at the parameters in in[] (hs_model_inputs): 0, or -1 when
 * one is out of its range (hs_model_repoint then needs a full load). */
int hs_model_eval_coefficients(hs_model *m, const double *in);

/* Evaluate the drawing at (t, q): in[nin] holds the model's inputs
 * (hs_model_inputs), regs[hs_prog_nregs(m->draw->prog)], out[m->draw->nout]. */
void hs_draw_eval(const hs_model *m, double t, const double *q, double *in, double *regs,
                  double *out);
/* 1 when a drawing point reads coordinate i. */
int hs_draw_reads(const hs_model *m, size_t i);

/* Turn a node's source position into FILE:LINE:COLUMN + source line in err
 * (used for run-time domain errors).  Leaves err's message alone. */
void hs_model_place(const hs_model *m, hs_srcpos p, hs_error *err);

/* Print the symbolic kernels (`holosim derive MODEL`).  0, or
 * HS_EXIT_NOMEM when out of memory (nothing or not all printed). */
int hs_model_print_derivation(const hs_model *m, FILE *f);
/* "Cartesian", "Lagrangian" or "embedding"; and "n = 2 coordinates, k = 1
 * constraint" (singular where the count is 1) into buf[size]. */
const char *hs_model_form_name(const hs_model *m);
const char *hs_model_sizes(const hs_model *m, char *buf, size_t size);

#endif
