/* Kernels into bytecode programs (loader.h): parameter values folded in,
 * except those the caller keeps as inputs (whose largest subexpressions
 * are hoisted into constants of the model); the mass structure (constant
 * diagonal, diagonal, full) and the sparsity of G_q found on the folded
 * kernels; the mass matrix checked at t0. */
#include "loader.h"
#include "../linalg/linalg.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

/* One compilation.  Parameters stay program inputs (one compiled model
 * serves every parameter value: a sweep, a cached native build), but the
 * largest subexpressions that depend on parameters only are hoisted out of
 * the programs: each becomes an input symbol of its own ("#1", "#2", ...),
 * its value computed once per model (m->hoist_*), so a right-hand side
 * does no more arithmetic than with the values folded in. */
typedef struct cbuild {
    loader *L;
    unsigned char *is_par;      /* [nsym at start] parameters kept as inputs */
    const hs_node **map;        /* [nsym at start] the others: their values */
    size_t nsym0;
    hs_idmap memo;              /* node id -> its hoisted form (const hs_node *) */
    size_t nkept;               /* parameters kept: nothing to hoist when 0 */
    const hs_node **r;          /* [rcap] roots of the program being built */
    size_t nr, rcap;
    const hs_node **Gq;         /* [nnz] folded structural non-zeros of G_q, by rows */
    unsigned char *any_par;     /* [nsym at start] every parameter symbol */
    int oom;
} cbuild;

/* e depends on parameters only (no t, q, v, nor a hoisted symbol). */
static int params_only(const cbuild *C, const hs_node *e)
{
    size_t ns;
    const int32_t *sy = hs_node_symbols(e, &ns);
    for (size_t z = 0; z < ns; z++)
        if ((size_t)sy[z] >= C->nsym0 || !C->is_par[sy[z]])
            return 0;
    return ns > 0;
}

static void memo_put(cbuild *C, const hs_node *e, const hs_node *v)
{
    const hs_node **slot = HS_IDMAP_PUT(&C->memo, e->id, const hs_node *);
    if (slot)
        *slot = v;
    else
        C->oom = 1;
}

/* A new input symbol standing for the parameter-only expression e. */
static const hs_node *hoist_symbol(cbuild *C, const hs_node *e)
{
    hs_model *m = C->L->m;
    size_t cap = m->nhoist + 1;
    const hs_node **ex = realloc(m->hoist_expr, cap * sizeof *ex);
    if (ex)
        m->hoist_expr = ex;
    int *sy = realloc(m->hoist_sym, cap * sizeof *sy);
    if (sy)
        m->hoist_sym = sy;
    if (!ex || !sy) {
        C->oom = 1;
        return e;
    }
    char name[32];
    snprintf(name, sizeof name, "#%zu", m->nhoist + 1);
    m->hoist_expr[m->nhoist] = e;
    m->hoist_sym[m->nhoist] = hs_dag_symbol(m->dag, name);
    return hs_sym(m->dag, m->hoist_sym[m->nhoist++]);
}

/* e with its largest parameter-only subexpressions (not a bare parameter,
 * not a number) replaced by hoisted symbols. */
static const hs_node *hoist(cbuild *C, const hs_node *e)
{
    if (e->kind == HS_NUM || e->kind == HS_SYM || C->oom)
        return e;
    const hs_node *const *done = HS_IDMAP_GET(&C->memo, e->id, const hs_node *);
    if (done)
        return *done;
    const hs_node *r;
    if (params_only(C, e)) {
        r = hoist_symbol(C, e);
    } else {
        const hs_node *a[64], **args = e->nargs <= 64 ? a : malloc(e->nargs * sizeof *args);
        if (!args) {
            C->oom = 1;
            return e;
        }
        int changed = 0;
        size_t na = 0, np = 0, npn = 0;   /* parameter-only terms: all, not numbers */
        const hs_node *p[64], **pp = e->nargs <= 64 ? p : malloc(e->nargs * sizeof *pp);
        if (!pp)
            C->oom = 1;
        int nary = pp && (e->kind == HS_ADD || e->kind == HS_MUL);
        for (uint32_t j = 0; j < e->nargs; j++) {
            const hs_node *x = e->args[j];
            if (nary && (x->kind == HS_NUM || params_only(C, x))) {
                pp[np++] = x;        /* a sum or product: its parameter-only */
                npn += x->kind != HS_NUM;    /* terms as one hoisted term */
                continue;
            }
            args[na] = hoist(C, x);
            changed |= args[na++] != x;
        }
        if (nary && npn >= 1 && np >= 2) {
            hs_dag *d = C->L->m->dag;
            args[na++] = hoist_symbol(C, e->kind == HS_ADD ? hs_addn(d, pp, np)
                                                           : hs_muln(d, pp, np));
            changed = 1;
        } else {
            for (size_t j = 0; j < np; j++)       /* nothing to group: as they were */
                args[na++] = hoist(C, pp[j]);
        }
        r = changed ? hs_rebuild(C->L->m->dag, e->kind, args, na, e) : e;
        if (pp != p)
            free(pp);
        if (args != a)
            free(args);
    }
    memo_put(C, e, r);
    return r;
}

/* The folded parameters' values substituted, then the kept parameters'
 * largest subexpressions hoisted. */
static const hs_node *fold(cbuild *C, const hs_node *e)
{
    e = hs_subst(C->L->m->dag, e, C->map, C->nsym0);
    return C->nkept ? hoist(C, e) : e;
}

/* e depends on no state symbol (t, q, v): on parameters at most. */
static int state_free(const cbuild *C, const hs_node *e)
{
    size_t ns;
    const int32_t *sy = hs_node_symbols(e, &ns);
    for (size_t z = 0; z < ns; z++)
        if ((size_t)sy[z] >= C->nsym0 || !C->any_par[sy[z]])
            return 0;
    return 1;
}

/* Room for cnt more roots (-1 when out of memory). */
static int reserve(cbuild *C, size_t cnt)
{
    if (C->nr + cnt <= C->rcap)
        return 0;
    size_t cap = C->rcap ? C->rcap : 64;
    while (cap < C->nr + cnt)
        cap *= 2;
    const hs_node **r = realloc(C->r, cap * sizeof *r);
    if (!r) {
        C->oom = 1;
        return -1;
    }
    C->r = r;
    C->rcap = cap;
    return 0;
}

/* A folded non-zero entry of M (index i * n + j). */
typedef struct mentry {
    size_t at;
    const hs_node *f;
} mentry;

/* The mass structure from the folded M: constant diagonal (kept as numbers,
 * no program output), diagonal (n outputs) or full (the lower triangle).
 * Only the non-zero entries are folded and kept (the entries are folded in
 * row order, as the program's node order depends on it): a chain of n
 * coordinates has n^2 zeros, and an n x n copy costs more than the rest of
 * its compilation. */
static int mass_outputs(cbuild *C)
{
    hs_model *m = C->L->m;
    if (m->chain) {             /* a structured embedding: no metric formed */
        m->mass_kind = HS_MASS_FULL;
        m->off_M = C->nr;
        return 0;
    }
    size_t n = m->n, nz = 0, cap = 2 * n;
    mentry *Mf = xcalloc(cap, sizeof *Mf);
    if (!Mf)
        return -1;
    int diag = 1, constant = 1;
    const hs_node *zero = hs_num(m->dag, 0);   /* the one 0 node: no visit of the entry */
    for (size_t i = 0; i < n; i++)
        for (size_t j = m->M ? 0 : i; j < (m->M ? n : i + 1); j++) {    /* M_diag: i */
            const hs_node *f = hs_model_M(m, i, j);
            if (f == zero)
                continue;
            if (i == j && !state_free(C, f))
                constant = 0;
            f = fold(C, f);
            if (hs_is_num(f, 0))
                continue;
            diag &= i == j;
            if (nz == cap) {
                mentry *g = realloc(Mf, 2 * cap * sizeof *g);
                if (!g) {
                    free(Mf);
                    return -1;
                }
                Mf = g;
                cap *= 2;
            }
            Mf[nz++] = (mentry){ i * n + j, f };
        }
    m->mass_kind = !diag ? HS_MASS_FULL : constant ? HS_MASS_CONST_DIAG : HS_MASS_DIAG;
    m->off_M = C->nr;
    if (reserve(C, m->mass_kind == HS_MASS_FULL ? n * (n + 1) / 2 : n)) {
        free(Mf);
        return -1;
    }
    size_t z = 0;               /* next non-zero entry, in row order */
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        m->Mconst = xcalloc(n, sizeof *m->Mconst);
        if (!m->Mconst) {
            free(Mf);
            return -1;
        }
        /* the values: hs_model_eval_constants, after the hoisted ones */
    } else if (m->mass_kind == HS_MASS_DIAG) {
        for (size_t i = 0; i < n; i++) {
            while (z < nz && Mf[z].at < i * n + i)
                z++;
            C->r[C->nr++] = z < nz && Mf[z].at == i * n + i ? Mf[z].f : zero;
        }
    } else {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++) {
                while (z < nz && Mf[z].at < i * n + j)
                    z++;
                C->r[C->nr++] = z < nz && Mf[z].at == i * n + j ? Mf[z].f : zero;
            }
    }
    free(Mf);
    return 0;
}

/* The sparsity of G_q from the folded Jacobian: gq_start, gq_col, nnz, and
 * the folded non-zeros (no folded k x n copy: see mass_outputs). */
static int jacobian_structure(cbuild *C)
{
    hs_model *m = C->L->m;
    size_t k = m->k, cap = k + 1;
    const hs_node *zero = hs_num(m->dag, 0);
    C->Gq = xcalloc(cap, sizeof *C->Gq);
    m->gq_col = xcalloc(cap, sizeof *m->gq_col);
    m->gq_start = xcalloc(k + 1, sizeof *m->gq_start);
    if (!C->Gq || !m->gq_col || !m->gq_start)
        return -1;
    m->nnz = 0;
    for (size_t i = 0; i < k; i++) {
        m->gq_start[i] = (int)m->nnz;
        for (size_t z = m->G_q_start[i]; z < m->G_q_start[i + 1]; z++) {
            const hs_node *e = m->G_q_nz[z];
            size_t j = m->G_q_col[z];
            if (e == zero || hs_is_num(e = fold(C, e), 0))
                continue;
            if (m->nnz == cap) {
                const hs_node **g = realloc(C->Gq, 2 * cap * sizeof *g);
                if (g)
                    C->Gq = g;
                int *c = realloc(m->gq_col, 2 * cap * sizeof *c);
                if (c)
                    m->gq_col = c;
                if (!g || !c)
                    return -1;
                cap *= 2;
            }
            m->gq_col[m->nnz] = (int)j;
            C->Gq[m->nnz++] = e;
        }
    }
    m->gq_start[k] = (int)m->nnz;
    return 0;
}

/* Append the folded kernels e[0..cnt-1] to the roots (folded together:
 * what they share is folded once). */
static void push(cbuild *C, const hs_node *const *e, size_t cnt)
{
    if (reserve(C, cnt))
        return;
    const hs_node **r = C->r + C->nr;
    hs_subst_many(C->L->m->dag, e, cnt, C->map, C->nsym0, r);
    for (size_t i = 0; C->nkept && i < cnt; i++)
        r[i] = hoist(C, r[i]);
    C->nr += cnt;
}

/* Append the structural non-zeros of the folded G_q, row by row. */
static void push_gq(cbuild *C)
{
    const hs_model *m = C->L->m;
    if (reserve(C, m->nnz))
        return;
    for (size_t z = 0; z < m->nnz; z++)
        C->r[C->nr++] = C->Gq[z];
}

/* prog_dyn: M | Q | G_q non-zeros | gamma | P_nc | P_t | [bT] | [G | Gdot]. */
static int compile_dyn(cbuild *C)
{
    hs_model *m = C->L->m;
    size_t n = m->n, k = m->k;
    C->nr = 0;
    if (mass_outputs(C))
        return hs_error_nomem(C->L->err);
    m->off_Q = C->nr;
    push(C, m->Q, n);
    if (jacobian_structure(C))
        return hs_error_nomem(C->L->err);
    m->off_Gq = C->nr;
    push_gq(C);
    m->off_gamma = C->nr;
    push(C, m->gamma, k);
    m->off_Pd = C->nr;
    push(C, &m->P_nc, 1);
    m->off_Pt = C->nr;
    push(C, &m->P_t, 1);
    m->off_bT = C->nr;
    m->nbT = 0;
    for (size_t i = 0; m->bT && i < n && !m->nbT; i++)
        if (!hs_is_num(fold(C, m->bT[i]), 0))
            m->nbT = n;              /* a moving embedding with T1 != 0 */
    if (m->nbT)
        push(C, m->bT, n);
    m->off_Gb = m->off_Gdotb = C->nr;
    if (m->set.stabilize == HS_STAB_BAUMGARTE) {
        push(C, m->G, k);
        m->off_Gdotb = C->nr;
        push(C, m->Gdot, k);
    }
    m->ndyn = C->nr;
    if (C->oom)
        return hs_error_nomem(C->L->err);
    if (hs_ld_dag_check(C->L))
        return C->L->err->code;
    m->prog_dyn = hs_prog_compile(m->dag, C->r, C->nr, C->L->err);
    return m->prog_dyn ? 0 : C->L->err->code;
}

/* Constraints the structured path solves: equalities that hold for the
 * whole run (no contact, friction, release or hold, no locked coordinate
 * at the start).  The others, and dependent constraints (the check at the
 * start), take the dense path: the load is done again there. */
static int chain_serves_constraints(const hs_model *m)
{
    if (m->ncontact || m->nfriction)
        return 0;
    for (size_t e = 0; e < m->nev; e++)
        if (m->ev[e].action != HS_EV_STOP && m->ev[e].action != HS_EV_RECORD)
            return 0;
    for (size_t i = 0; m->lock && i < m->n; i++)
        if (m->lock[i])
            return 0;
    return 1;
}

/* The structured embedding's program (model.h: hs_chain), if the model
 * has one: with masses that read neither t nor a velocity (chain.c
 * checks; one that reads positions brings its terms in the roots).  A
 * chart that moves adds bT and T0 (the dynamics take T2 = T - T1 - T0 and
 * add bT . a to P_t); the model's constraints, extra rows of the same
 * saddle-point system (their local derivatives and gamma in the roots),
 * add the expanded G_q (and G, Gdot for Baumgarte's stabilization). */
static int compile_chain(cbuild *C)
{
    hs_model *m = C->L->m;
    hs_chain *c = m->chain;
    if (!c)
        return 0;
    if (m->k && !chain_serves_constraints(m)) {
        C->L->dense_retry = 1;
        return hs_error_set(C->L->err, HS_EXIT_MODEL, "internal: the structured path does "
                            "not serve these constraints (the dense path does)");
    }
    C->nr = 0;
    push(C, c->root, c->nroot);
    c->off_Pnc = C->nr;
    push(C, &m->P_nc, 1);
    c->off_Pt = C->nr;
    push(C, &m->P_t, 1);
    c->off_bT = c->off_T0 = C->nr;
    if (m->nbT) {
        push(C, m->bT, m->nbT);
        c->off_T0 = C->nr;
        push(C, &m->T0, 1);
    }
    c->off_Gq = C->nr;
    push_gq(C);                /* the expanded G_q: the reaction's power and the rows */
    c->off_Gb = c->off_Gdotb = C->nr;
    if (m->k && m->set.stabilize == HS_STAB_BAUMGARTE) {
        push(C, m->G, m->k);
        c->off_Gdotb = C->nr;
        push(C, m->Gdot, m->k);
    }
    c->nout = C->nr;
    if (C->oom)
        return hs_error_nomem(C->L->err);
    if (hs_ld_dag_check(C->L))
        return C->L->err->code;
    c->prog = hs_prog_compile(m->dag, C->r, C->nr, C->L->err);
    return c->prog ? 0 : C->L->err->code;
}

/* prog_pos: G | G_q non-zeros | G_t (projection, rank). */
static int compile_pos(cbuild *C)
{
    hs_model *m = C->L->m;
    C->nr = 0;
    push(C, m->G, m->k);
    push_gq(C);
    push(C, m->G_t, m->k);
    if (C->oom)
        return hs_error_nomem(C->L->err);
    m->prog_pos = hs_prog_compile(m->dag, C->r, C->nr, C->L->err);
    return m->prog_pos ? 0 : C->L->err->code;
}

/* prog_aux: G | Gdot | G_t | U | P_nc | ambient | Tx | T0 | ambient
 * velocities (output rows). */
static int compile_aux(cbuild *C)
{
    hs_model *m = C->L->m;
    size_t k = m->k;
    C->nr = 0;
    m->off_G = C->nr;
    push(C, m->G, k);
    m->off_Gdot = C->nr;
    push(C, m->Gdot, k);
    m->off_Gt = C->nr;
    push(C, m->G_t, k);
    m->off_U = C->nr;
    push(C, &m->U, 1);
    m->off_Pnc = C->nr;
    push(C, &m->P_nc, 1);
    m->off_amb = C->nr;
    push(C, m->amb, m->namb);
    m->off_Tx = C->nr;
    push(C, &m->Tx, 1);
    m->off_T0 = C->nr;
    push(C, &m->T0, 1);
    m->off_ambv = C->nr;
    if (m->ambv)
        push(C, m->ambv, m->namb);
    m->naux = C->nr;
    if (C->oom)
        return hs_error_nomem(C->L->err);
    if (hs_ld_dag_check(C->L))
        return C->L->err->code;
    m->prog_aux = hs_prog_compile(m->dag, C->r, C->nr, C->L->err);
    return m->prog_aux ? 0 : C->L->err->code;
}

/* Do the roots read an acceleration x'' or a multiplier lambda_NAME? */
static int reads_dynamics(cbuild *C)
{
    const hs_model *m = C->L->m;
    for (size_t r = 0; r < C->nr; r++) {
        for (size_t i = 0; m->sym_a && i < m->n; i++)
            if (m->sym_a[i] >= 0 && hs_depends_on(C->r[r], m->sym_a[i]))
                return 1;
        for (size_t j = 0; m->sym_lam && j < m->k; j++)
            if (m->sym_lam[j] >= 0 && hs_depends_on(C->r[r], m->sym_lam[j]))
                return 1;
    }
    return 0;
}

/* prog_out: the outputs; prog_ev: the event functions (model/events.c). */
static int compile_out_ev(cbuild *C)
{
    hs_model *m = C->L->m;
    C->nr = 0;
    push(C, m->out, m->nout);
    if (C->oom)
        return hs_error_nomem(C->L->err);
    m->out_dyn = reads_dynamics(C);
    if (hs_ld_dag_check(C->L) || !(m->prog_out = hs_prog_compile(m->dag, C->r, C->nr,
                                                                 C->L->err)))
        return C->L->err->code;
    C->nr = 0;
    push(C, m->evf, m->nev);
    if (C->oom)
        return hs_error_nomem(C->L->err);
    if (!(m->ev_root = xcalloc(m->nev ? m->nev : 1, sizeof *m->ev_root)))
        return hs_error_nomem(C->L->err);
    memcpy(m->ev_root, C->r, m->nev * sizeof *m->ev_root);
    m->ev_dyn = reads_dynamics(C);
    if (hs_ld_dag_check(C->L) || !(m->prog_ev = hs_prog_compile(m->dag, C->r, C->nr,
                                                               C->L->err)))
        return C->L->err->code;
    return 0;
}

/* Which parameters stay program inputs (is_par: those the caller keeps and
 * those computed from them), and the numbers the others fold into. */
static int fold_map(cbuild *C)
{
    hs_model *m = C->L->m;
    const hs_overrides *ov = C->L->ov;
    if (!(m->par_kept = xcalloc(m->npar, 1)))
        return hs_error_nomem(C->L->err);
    for (size_t o = 0; o < m->npar_done; o++) {
        size_t j = m->par_order[o];
        int keep = 0;
        for (size_t s = 0; ov && s < ov->nkeep && !keep; s++)
            keep = strcmp(ov->keep[s], m->pname[j]) == 0;
        if (!keep && m->par_expr[j]) {
            size_t ns;
            const int32_t *sy = hs_node_symbols(m->par_expr[j], &ns);
            for (size_t z = 0; z < ns && !keep; z++)
                keep = (size_t)sy[z] < C->nsym0 && C->is_par[sy[z]];
        }
        C->is_par[m->sym_p[j]] = m->par_kept[j] = (unsigned char)keep;
        C->any_par[m->sym_p[j]] = 1;
        C->nkept += (size_t)keep;
        if (!keep)
            C->map[m->sym_p[j]] = hs_num(m->dag, m->pval[j]);
    }
    return 0;
}

int hs_ld_compile(loader *L)
{
    hs_model *m = L->m;
    size_t n = m->n, k = m->k;
    cbuild C;
    memset(&C, 0, sizeof C);
    hs_idmap_init(&C.memo, sizeof(const hs_node *));
    C.L = L;
    C.nsym0 = (size_t)hs_dag_nsymbols(m->dag);
    C.is_par = xcalloc(C.nsym0, 1);
    C.any_par = xcalloc(C.nsym0, 1);
    C.map = xcalloc(C.nsym0, sizeof *C.map);
    int rc = 0;
    if (!C.is_par || !C.any_par || !C.map || reserve(&C, 5 * n + 6 * k + 10))
        rc = hs_error_nomem(L->err);
    if (!rc)
        rc = fold_map(&C);
    if (!rc)
        rc = compile_dyn(&C);
    if (!rc)
        rc = compile_chain(&C);
    if (!rc)
        rc = compile_pos(&C);
    if (!rc)
        rc = compile_aux(&C);
    if (!rc)
        rc = compile_out_ev(&C);
    if (!rc && C.oom)
        rc = hs_error_nomem(L->err);
    m->nin = (size_t)hs_dag_nsymbols(m->dag);
    if (!rc && !(m->hoist_val = xcalloc(m->nhoist, sizeof *m->hoist_val)))
        rc = hs_error_nomem(L->err);
    if (!rc)
        rc = hs_model_eval_constants(m, L->err);
    free(C.is_par);
    free(C.any_par);
    free(C.map);
    hs_idmap_free(&C.memo);
    free(C.r);
    free(C.Gq);
    return rc;
}

/* Does a constraint involve coordinate c (a non-zero entry of G_q)?  The
 * set of such coordinates is made at the first call into *set (the caller
 * frees it): one pass over G_q, not one per massless coordinate. */
static int constrained(const hs_model *m, size_t c, unsigned char **set)
{
    if (!*set && (*set = xcalloc(m->n ? m->n : 1, 1)))
        for (size_t z = 0; z < m->nnz; z++)
            (*set)[m->gq_col[z]] = 1;
    if (*set)
        return (*set)[c];
    for (size_t z = 0; z < m->nnz; z++)       /* out of memory: the scan */
        if ((size_t)m->gq_col[z] == c)
            return 1;
    return 0;
}

/* A zero diagonal entry of M is allowed where a constraint involves the
 * coordinate (massless coordinates of natural-coordinate models: the
 * dynamics solves through [M G_q^T; G_q 0] then); a negative one, or a
 * coordinate with neither mass nor a constraint, is an error. */
static int massless_ok(const hs_model *m, size_t c, double Mi, unsigned char **set)
{
    return Mi == 0 && constrained(m, c, set);
}

/* Mass positive definite at the initial state, or positive semidefinite
 * with its zero directions constrained (exit 2 otherwise). */
int hs_ld_check_mass_at_start(loader *L, yaml_node_t *where)
{
    hs_model *m = L->m;
    size_t n = m->n;
    if (m->chain) {             /* its saddle-point system regular: the metric is */
        int r = hs_chain_regular(m, m->t0, m->q0, m->v0, 1);
        if (r == 0 && m->k && hs_chain_regular(m, m->t0, m->q0, m->v0, 0) == 1) {
            L->dense_retry = 1;  /* dependent constraints: the dense path's robust solve */
            return hs_error_set(L->err, HS_EXIT_MODEL, "internal: dependent constraints "
                                "at the start (the dense path solves them)");
        }
        if (r == 2)
            return hs_ytree_error(L->y, L->err, where, "metric d2T/dv2 is not positive "
                                  "definite: an ambient mass is negative (each must be > 0, "
                                  "or 0 on a point that only relays others)");
        return r < 0 ? hs_error_nomem(L->err) : r ? 0
               : hs_ytree_error(L->y, L->err, where, "metric d2T/dv2 is not positive definite "
                                "at the initial state (the coordinates are singular there: "
                                "start elsewhere, or choose other coordinates)");
    }
    unsigned char *cset = NULL;           /* constrained(): made at its first use */
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        int rc = 0;
        for (size_t i = 0; i < n && !rc; i++)
            if (!(m->Mconst[i] > 0) && !massless_ok(m, i, m->Mconst[i], &cset))
                rc = hs_ytree_error(L->y, L->err, where, "%s is not positive definite: "
                                    "diagonal entry %zu (%s) is %g%s",
                                    m->form == HS_FORM_CARTESIAN ? "mass matrix"
                                                                 : "metric d2T/dv2",
                                    i + 1, m->qname[i], m->Mconst[i],
                                    m->Mconst[i] == 0 ? ", and no constraint involves it "
                                    "(it carries neither mass nor a constraint: give it a "
                                    "mass > 0 or drop it)" : m->form == HS_FORM_CARTESIAN ?
                                    ": give it a mass > 0 (0 only on a coordinate a "
                                    "constraint involves)" : ": the kinetic energy must "
                                    "have a positive coefficient of its velocity squared");
        free(cset);
        return rc;
    }
    double *in = xcalloc(m->nin, sizeof *in);
    double *regs = xcalloc(hs_prog_nregs(m->prog_dyn), sizeof *regs);
    double *out = xcalloc(m->ndyn, sizeof *out);
    gsl_matrix *M = hs_la_matrix_alloc(m->mass_kind == HS_MASS_FULL ? n : 1,
                                     m->mass_kind == HS_MASS_FULL ? n : 1);  /* n x n: full M */
    int rc = 0;
    if (!in || !regs || !out || !M) {
        rc = hs_error_nomem(L->err);
        goto done;
    }
    in[m->sym_t] = m->t0;
    for (size_t i = 0; i < n; i++) {
        in[m->sym_q[i]] = m->q0[i];
        in[m->sym_v[i]] = m->v0[i];
    }
    hs_model_inputs(m, in);
    hs_prog_eval(m->prog_dyn, in, regs, out);
    const char *what = m->form == HS_FORM_CARTESIAN ? "mass matrix" : "metric d2T/dv2";
    if (m->mass_kind == HS_MASS_DIAG) {
        for (size_t i = 0; i < n; i++)
            if (!(out[m->off_M + i] > 0) && !massless_ok(m, i, out[m->off_M + i], &cset)) {
                rc = hs_ytree_error(L->y, L->err, where, "%s is not positive definite at "
                                    "the initial state: entry %zu (%s) is %g%s", what, i + 1,
                                    m->qname[i], out[m->off_M + i], out[m->off_M + i] == 0 ?
                                    ", and no constraint involves it (it carries neither "
                                    "mass nor a constraint: give it a mass > 0 or drop it)"
                                    : ": a mass must be > 0 there (0 only on a constrained "
                                    "coordinate)");
                goto done;
            }
    } else {
        size_t z = m->off_M;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++) {
                gsl_matrix_set(M, i, j, out[z]);
                gsl_matrix_set(M, j, i, out[z++]);
            }
        int bad = 0, psd = m->k > 0, zero_rows = 0;
        for (size_t i = 0; i < n * n; i++)
            if (!isfinite(M->data[i]))
                bad = 1;
        /* zero rows where a constraint involves the coordinate: semidefinite,
         * the rest is for the dynamics' saddle-point check */
        for (size_t i = 0; i < n && psd; i++) {
            int zero = 1;
            for (size_t j = 0; j < n; j++)
                zero &= gsl_matrix_get(M, i, j) == 0;
            psd = gsl_matrix_get(M, i, i) > 0 || (zero && constrained(m, i, &cset));
            zero_rows += zero;
        }
        if (!bad && psd && zero_rows)
            ;
        else if (bad || hs_la_cholesky(M) != GSL_SUCCESS)
            rc = hs_ytree_error(L->y, L->err, where, "%s is not positive definite at the "
                                "initial state (t=%g)%s", what, m->t0,
                                m->form == HS_FORM_CARTESIAN ? ": every eigenvalue must be > "
                                "0 (or 0 along constrained coordinates); check its entries" :
                                ": the coordinates are singular there; start where they are "
                                "regular, or choose other coordinates");
    }
done:
    free(cset);
    free(in);
    free(regs);
    free(out);
    if (M)
        gsl_matrix_free(M);
    return rc;
}

/* ---------- top level ---------- */
