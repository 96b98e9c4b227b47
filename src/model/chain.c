/* The structured embedding (loader.h, model.h: hs_chain).
 *
 * An embedding written through defines, p_k = p_{k-1} + l*[sin(th_k),
 * -cos(th_k)], is a sparse system: expanded, every point depends on every
 * earlier coordinate (a dense metric, n^2 angle differences, an O(n^3)
 * Cholesky per evaluation).  Here the defines the embedding reads become
 * internal unknowns z_j, each tied to the others by its own defining
 * equation z_j = Phi_j(q, z) (the define's text with the defines it reads
 * kept as symbols), and the ambient coordinates that are not a define
 * become unknowns of their own (x_a = X_a(q, z)).  The unknowns carry the
 * ambient masses (0 for a pure intermediate); the dynamics solve the
 * sparse saddle-point system of the Cartesian form with the coordinates
 * massless (dynamics/chain.c):
 *
 *     M_z z'' = F + C_z^T lambda,    0 = Q + C_q^T lambda,
 *     C_z z'' + C_q q'' = gamma,     C = z - Phi(q, z),
 *
 * gamma = D(D Phi) with the accelerations left out (two total
 * derivatives, velocities of q and z independent symbols, the time's
 * partial derivative included: a chart that moves, Phi_j(t, q, z), is
 * one of these systems too).  Only the
 * local partial derivatives of each Phi_j are taken, so the work and the
 * program are linear in the model for a chain or a tree.  The program
 * evaluates them at the state: each unknown's symbol is replaced by the
 * define's expansion and its velocity by the expansion's total
 * derivative (the compiler's value numbering shares the prefixes of the
 * expanded sums, so their evaluation stays linear).
 *
 * Built for an embedding whose pieces are all of this kind (model.h:
 * hs_chain says which models); such a model forms neither the metric nor
 * the dense path's Q (forms.c, structured_kinetic), and the check at the
 * initial state factors the same system (hs_chain_regular).  An ambient
 * mass that reads positions, m_a(q, z) on unknown j, is read the same way
 * and adds -m_a' z_j' to F_j and 1/2 dm_a/dy z_j'^2 to the row of each
 * unknown y it reads (mass_terms). */
#include "loader.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../linalg/linalg.h"

/* Below this many coordinates the dense metric is cheaper (bench/structure.sh:
 * chains in absolute angles, the VM, us per right-hand side, dense against
 * structured, medians of 5: 16 links 2.7 / 4.6, 24 links 6.1 / 7.1, 32
 * links 12.1 / 9.1, 48 links 28.2 / 14.1). */
#define HS_CHAIN_MIN_N HS_LANG_CHAIN_MIN_N

typedef struct chainb {
    loader *L;
    int *def_sym;              /* [ndef] the symbol of a define met, or -1 */
    size_t *order;             /* [ndef] defines met, in the order met */
    size_t nmet;
    unsigned char *def_const;  /* [ndef] 1: reads no t, q or q' (inlined) */
    unsigned char *state;      /* [nstate] t, q and q' symbols */
    size_t nstate;
    int oom;
    const hs_node **Xloc;      /* [namb] the points' local forms (the constraints read them) */
} chainb;

static chainb *cur_builder(loader *L)
{
    return L->opaque_ctx;
}

/* The loader's lookup of a define while chain.c parses: its symbol (or its
 * expansion, for a define of parameters only).  Never NULL: a failure is
 * recorded (L->err, or B->oom) and seen by parse_local. */
static const hs_node *opaque_def(loader *L, size_t i)
{
    chainb *B = cur_builder(L);
    hs_dag *d = L->m->dag;
    if (B->def_sym[i] < 0 && !B->def_const[i]) {
        /* a define of parameters only stays what it is; its expansion
         * (settled now, when nothing read it before: a define only a
         * constraint names) is the loader's own, the defines it reads
         * expanded, not kept as symbols */
        const hs_node *(*od)(loader *, size_t) = L->opaque;
        const hs_node *(*oa)(loader *, size_t) = L->opaque_amb;
        L->opaque = NULL;
        L->opaque_amb = NULL;
        int bad = hs_ld_settle(L, NAME_DEF, i) || !L->def[i].expr;
        L->opaque = od;
        L->opaque_amb = oa;
        if (bad) {
            B->oom |= !L->err->code;         /* the error is recorded: parse_local sees it */
            return scalar_zero(L);
        }
        size_t ns;
        const int32_t *s = hs_node_symbols(L->def[i].expr, &ns);
        B->def_const[i] = 1;
        for (size_t z = 0; z < ns && B->def_const[i]; z++)
            B->def_const[i] = !((size_t)s[z] < B->nstate && B->state[s[z]]);
    }
    if (B->def_const[i])
        return L->def[i].expr;
    if (B->def_sym[i] < 0) {
        char name[300];
        snprintf(name, sizeof name, "{%s}", L->def[i].name);
        int s = hs_dag_symbol(d, name);
        if (s < 0) {
            B->oom = 1;
            return scalar_zero(L);
        }
        B->def_sym[i] = s;
        B->order[B->nmet++] = i;
    }
    return hs_sym(d, B->def_sym[i]);
}

/* An ambient name in a constraint: the point's local form (a define's
 * symbol, for a point written as one), not its expansion. */
static const hs_node *opaque_amb(loader *L, size_t a)
{
    return cur_builder(L)->Xloc[a];
}

/* Parse the scalar of a define, an ambient name or (amb: ambient names
 * read locally too) a constraint with defines kept as symbols. */
static const hs_node *parse_local(chainb *B, yaml_node_t *val, const char *what, int amb)
{
    loader *L = B->L;
    L->opaque = opaque_def;
    L->opaque_amb = amb ? opaque_amb : NULL;
    L->opaque_ctx = B;
    const hs_node *e = hs_ld_parse(L, val, SCOPE_MODEL, what);
    L->opaque = NULL;
    L->opaque_amb = NULL;
    L->opaque_ctx = NULL;
    return e;
}

/* A symbol of name "{NAME}" plus suffix; -1 when out of memory. */
static int aux_symbol(hs_dag *d, const char *name, const char *suffix)
{
    char buf[300];
    snprintf(buf, sizeof buf, "{%s}%s", name, suffix);
    return hs_dag_symbol(d, buf);
}

typedef struct unknowns {
    size_t nz;
    int *zsym, *zdsym;             /* [nz] symbols of z_j, z_j' */
    const hs_node **phi;           /* [nz] local defining expressions */
    const hs_node **full;          /* [nz] their expansions in (t, q) */
    const hs_node **fullv;         /* [nz] D of the expansions */
    const hs_node **mass, **force; /* [nz] */
    long *amb_of;                  /* [namb] unknown of each ambient coordinate */
    const hs_node **mloc;          /* [namb] an ambient mass that reads positions, read
                                    * with the defines kept (NULL: none moves; an
                                    * entry NULL: a constant) */
    const hs_node **gloc;          /* [k] the model's constraints with the defines kept
                                    * as symbols (NULL: none, or contacts: the dense
                                    * path takes the model, compile.c) */
} unknowns;

static void unknowns_free(unknowns *U)
{
    free(U->zsym); free(U->zdsym); free(U->phi); free(U->full); free(U->fullv);
    free(U->mass); free(U->force); free(U->amb_of); free(U->gloc); free(U->mloc);
}

/* Whether e reads a velocity or the time (flags by symbol). */
static int reads_any(const hs_node *e, const unsigned char *flag, size_t nflag)
{
    size_t ns;
    const int32_t *s = hs_node_symbols(e, &ns);
    for (size_t z = 0; z < ns; z++)
        if ((size_t)s[z] < nflag && flag[s[z]])
            return 1;
    return 0;
}

/* Sum of two entries (either may be NULL: none yet). */
static const hs_node *plus(hs_dag *d, const hs_node *a, const hs_node *b)
{
    return a ? hs_add(d, a, b) : b;
}

/* The unknowns: the defines met (in the order met), then the ambient
 * coordinates that are not one define.  0, 1 (not a structured model),
 * or an error code. */
static int collect(chainb *B, const hs_node **Xloc, const hs_node *const *Ma,
                   const hs_node *const *Fa, unknowns *U)
{
    loader *L = B->L;
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t na = L->namb;
    /* the defines: each met define's own text, read the same way (more
     * defines may be met: the list grows while it is walked) */
    const hs_node **phi = xcalloc(L->ndef, sizeof *phi);
    if (!phi)
        return hs_error_nomem(L->err);
    for (size_t w = 0; w < B->nmet; w++) {
        size_t i = B->order[w];
        if (!(phi[w] = parse_local(B, L->def[i].val, "a define", 0)) || B->oom) {
            free(phi);
            return L->err->code ? L->err->code : hs_error_nomem(L->err);
        }
    }
    size_t cap = B->nmet + na;
    U->zsym = xcalloc(cap, sizeof *U->zsym);
    U->zdsym = xcalloc(cap, sizeof *U->zdsym);
    U->phi = phi;
    U->full = xcalloc(cap, sizeof *U->full);
    U->fullv = xcalloc(cap, sizeof *U->fullv);
    U->mass = xcalloc(cap, sizeof *U->mass);
    U->force = xcalloc(cap, sizeof *U->force);
    U->amb_of = xcalloc(na, sizeof *U->amb_of);
    if (!U->zsym || !U->zdsym || !U->full || !U->fullv || !U->mass || !U->force ||
        !U->amb_of)
        return hs_error_nomem(L->err);
    if (cap > L->ndef) {                       /* room for the ambient unknowns */
        const hs_node **grown = realloc(phi, cap * sizeof *grown);
        if (!grown)
            return hs_error_nomem(L->err);     /* phi is freed with U */
        U->phi = grown;
    }
    for (size_t w = 0; w < B->nmet; w++) {
        size_t i = B->order[w];
        if (hs_ld_settle(L, NAME_DEF, i) || !L->def[i].expr)
            return L->err->code ? L->err->code : 1;
        U->zsym[w] = B->def_sym[i];
        U->full[w] = L->def[i].expr;
    }
    U->nz = B->nmet;
    for (size_t a = 0; a < na; a++) {
        for (size_t b = 0; b < na; b++)
            if (b != a && !hs_is_num(Ma[a * na + b], 0))
                return 1;                       /* a full ambient mass */
        if (reads_any(Ma[a * na + a], B->state, B->nstate) && !(U->mloc && U->mloc[a]))
            return 1;                           /* a mass that moves with t or q' */
        long j = -1;
        if (Xloc[a]->kind == HS_SYM)
            for (size_t w = 0; w < B->nmet && j < 0; w++)
                if (U->zsym[w] == Xloc[a]->sym)
                    j = (long)w;
        if (j < 0) {
            j = (long)U->nz++;
            U->zsym[j] = aux_symbol(d, L->amb[a].name, "");
            U->phi[j] = Xloc[a];
            U->full[j] = L->ambX[a];
        }
        U->amb_of[a] = j;
        U->mass[j] = plus(d, U->mass[j], Ma[a * na + a]);
        U->force[j] = plus(d, U->force[j], Fa[a]);
    }
    for (size_t j = 0; j < U->nz; j++) {
        char nm[40];
        snprintf(nm, sizeof nm, "%zu'", j);
        U->zdsym[j] = aux_symbol(d, "z", nm);
        if (U->zsym[j] < 0 || U->zdsym[j] < 0)
            return hs_error_nomem(L->err);
        if (!U->mass[j])
            U->mass[j] = scalar_zero(L);
        if (!U->force[j])
            U->force[j] = scalar_zero(L);
        U->fullv[j] = hs_total_diff(d, U->full[j], m->sym_t, m->n, m->sym_q, m->sym_v);
    }
    return 0;
}

/* What the local derivatives of functions of (t, q, z) need: each
 * symbol's column (q_r: r, z_j: n + j, else -1), the velocity symbols,
 * and the symbols of the unknowns and their velocities (nqz of each) for
 * the total derivative. */
typedef struct localctx {
    hs_dag *d;
    int sym_t;
    const long *col;
    const unsigned char *tv;
    size_t ns, nqz;
    const int *qs, *vs;
} localctx;

/* How many (function, unknown read) pairs f[0 .. nf-1] have, into *count;
 * 1 where one reads a velocity (not a position: the caller declines). */
static int count_local(const localctx *x, const hs_node *const *f, size_t nf, size_t *count)
{
    *count = 0;
    for (size_t i = 0; i < nf; i++) {
        if (reads_any(f[i], x->tv, x->ns))
            return 1;
        size_t k;
        const int32_t *s = hs_node_symbols(f[i], &k);
        for (size_t z = 0; z < k; z++)
            *count += (size_t)s[z] < x->ns && x->col[s[z]] >= 0;
    }
    return 0;
}

/* Their entries, function by function: row[e] = i, cl[e] its column,
 * der[e] = df_i/d(that unknown); and gam[i] = D(D f_i), the total
 * derivative taken twice (the velocity-dependent part of f_i''). */
static void local_derivs(const localctx *x, const hs_node *const *f, size_t nf, uint32_t *row,
                         uint32_t *cl, const hs_node **der, const hs_node **gam)
{
    size_t e = 0;
    for (size_t i = 0; i < nf; i++) {
        size_t k;
        const int32_t *s = hs_node_symbols(f[i], &k);
        for (size_t z = 0; z < k; z++)
            if ((size_t)s[z] < x->ns && x->col[s[z]] >= 0) {
                row[e] = (uint32_t)i;
                cl[e] = (uint32_t)x->col[s[z]];
                der[e++] = hs_diff(x->d, f[i], s[z]);
            }
        const hs_node *D1 = hs_total_diff(x->d, f[i], x->sym_t, x->nqz, x->qs, x->vs);
        gam[i] = hs_total_diff(x->d, D1, x->sym_t, x->nqz, x->qs, x->vs);
    }
}

/* Ambient masses that move, m_a(q, z) on unknown j: the kinetic energy
 * 1/2 m_a z_j'^2 adds -m_a' z_j' to row z_j of the right-hand side and
 * 1/2 dm_a/dy z_j'^2 to the row of each unknown y it reads (Lagrange's
 * equations in (q, z) with z = Phi(q, z) as constraints), in the local
 * symbols: into Qx [n] and Fx [nz], NULL where nothing is added. */
static void mass_terms(const localctx *x, const unknowns *U, size_t na, size_t n,
                       const hs_node **Qx, const hs_node **Fx)
{
    hs_dag *d = x->d;
    for (size_t a = 0; U->mloc && a < na; a++) {
        const hs_node *ma = U->mloc[a];
        if (!ma)
            continue;
        size_t j = (size_t)U->amb_of[a];
        const hs_node *zd = hs_sym(d, U->zdsym[j]);
        const hs_node *half = hs_mul(d, hs_num(d, 0.5), hs_pow(d, zd, hs_num(d, 2)));
        const hs_node *mdot = hs_total_diff(d, ma, x->sym_t, x->nqz, x->qs, x->vs);
        Fx[j] = plus(d, Fx[j], hs_neg(d, hs_mul(d, mdot, zd)));
        size_t k;
        const int32_t *s = hs_node_symbols(ma, &k);
        for (size_t z = 0; z < k; z++) {
            if ((size_t)s[z] >= x->ns || x->col[s[z]] < 0)
                continue;
            size_t c = (size_t)x->col[s[z]];
            const hs_node *t = hs_mul(d, hs_diff(d, ma, s[z]), half);
            if (c < n)
                Qx[c] = plus(d, Qx[c], t);
            else
                Fx[c - n] = plus(d, Fx[c - n], t);
        }
    }
}

/* The moving masses' terms (mass_terms) back in (t, q, q') through map,
 * added to the roots Q and F of c.  0, or an error code. */
static int moving_masses(loader *L, const localctx *x, const unknowns *U, const hs_node **map,
                         size_t ns, hs_chain *c)
{
    hs_dag *d = x->d;
    size_t n = L->m->n, nz = U->nz;
    const hs_node **loc = xcalloc(n + nz, sizeof *loc), **full = xcalloc(n + nz, sizeof *full);
    if (!loc || !full) {
        free(loc);
        free(full);
        return hs_error_nomem(L->err);
    }
    mass_terms(x, U, L->namb, n, loc, loc + n);
    const hs_node *zero = scalar_zero(L);
    for (size_t i = 0; i < n + nz; i++)
        if (!loc[i])
            loc[i] = zero;
    hs_subst_many(d, loc, n + nz, map, ns, full);
    for (size_t r = 0; r < n; r++)
        c->root[c->off_Q + r] = hs_add(d, c->root[c->off_Q + r], full[r]);
    for (size_t j = 0; j < nz; j++)
        c->root[c->off_F + j] = hs_add(d, c->root[c->off_F + j], full[n + j]);
    free(loc);
    free(full);
    return 0;
}

/* A chart that moves: bT = dT/dq' at q' = 0 = J^T M X_t (J = dz/dq, X_t
 * the unknowns' velocities at q' = 0, M their masses), from the
 * structure instead of the expanded T: J = (I - Phi_z)^-1 Phi_q, so bT =
 * Phi_q^T y with (I - Phi_z)^T y = M X_t, a triangular system solved
 * symbolically from the last unknown to the first (y_k = w_k + sum over
 * the unknowns j that read z_k of dPhi_j/dz_k y_j): O(entries of B) nodes
 * where the gradient of the expanded T has O(n^2).  loc: B's entries in
 * the local symbols (b_row, b_col), map: back to (t, q, q').  Into
 * L->chain_bT; 0, or an error code. */
static int moving_bT(loader *L, const unknowns *U, const hs_chain *c, const hs_node *const *loc,
                     const hs_node **map, size_t ns)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n, nz = U->nz, nb = c->nb;
    /* forward order: z_k before every unknown that reads it (Kahn) */
    size_t *deg = xcalloc(nz + 1, sizeof *deg), *order = xcalloc(nz + 1, sizeof *order);
    size_t *cstart = xcalloc(n + nz + 2, sizeof *cstart), *cent = xcalloc(nb + 1, sizeof *cent);
    size_t *pos = xcalloc(n + nz + 1, sizeof *pos), nv;
    const hs_node **y = xcalloc(nz + 1, sizeof *y), **vz = hs_ld_velocity_zero_map(L, &nv);
    const hs_node **xt = xcalloc(nz + 1, sizeof *xt), **bT = xcalloc(n + 1, sizeof *bT);
    int rc = 0;
    if (!deg || !order || !cstart || !cent || !pos || !y || !vz || !xt || !bT) {
        rc = hs_error_nomem(L->err);
        goto out;
    }
    for (size_t e = 0; e < nb; e++) {          /* B by columns */
        cstart[c->b_col[e] + 1]++;
        if (c->b_col[e] >= n)
            deg[c->b_row[e]]++;
    }
    for (size_t i = 0; i < n + nz; i++)
        cstart[i + 1] += cstart[i];
    memcpy(pos, cstart, (n + nz) * sizeof *pos);
    for (size_t e = 0; e < nb; e++)
        cent[pos[c->b_col[e]]++] = e;
    size_t head = 0, tail = 0;
    for (size_t j = 0; j < nz; j++)
        if (!deg[j])
            order[tail++] = j;
    while (head < tail) {
        size_t k = order[head++];
        for (size_t p = cstart[n + k]; p < cstart[n + k + 1]; p++)
            if (!--deg[c->b_row[cent[p]]])
                order[tail++] = c->b_row[cent[p]];
    }
    if (tail != nz) {                          /* a cycle: the structure is not a tree */
        rc = 1;
        goto out;
    }
    /* X_t: the expansions' velocities with q' = 0 */
    hs_subst_many(d, U->fullv, nz, vz, nv, xt);
    for (size_t w = nz; w-- > 0;) {
        size_t k = order[w];
        const hs_node *s = hs_mul(d, U->mass[k], xt[k]);
        for (size_t p = cstart[n + k]; p < cstart[n + k + 1]; p++)
            s = hs_add(d, s, hs_mul(d, loc[cent[p]], y[c->b_row[cent[p]]]));
        y[k] = s;
    }
    for (size_t r = 0; r < n; r++) {
        const hs_node *s = scalar_zero(L);
        for (size_t p = cstart[r]; p < cstart[r + 1]; p++)
            s = hs_add(d, s, hs_mul(d, loc[cent[p]], y[c->b_row[cent[p]]]));
        bT[r] = s;
    }
    if (!(L->chain_bT = xcalloc(n + 1, sizeof *L->chain_bT))) {
        rc = hs_error_nomem(L->err);
        goto out;
    }
    hs_subst_many(d, bT, n, map, ns, L->chain_bT);
out:
    free(deg); free(order); free(cstart); free(cent); free(pos); free(y); free(vz); free(xt);
    free(bT);
    return rc;
}

/* The local derivatives, gamma and the other roots, in the local symbols
 * (q, z, q', z'), into the hs_chain of m.  0, 1 (not structured), or an
 * error code. */
static int derive(loader *L, unknowns *U)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n, nz = U->nz, ns = (size_t)hs_dag_nsymbols(d);
    long *col = xcalloc(ns, sizeof *col);
    unsigned char *tv = xcalloc(ns, 1);
    int *qs = xcalloc(n + nz, sizeof *qs), *vs = xcalloc(n + nz, sizeof *vs);
    hs_chain *c = xcalloc(1, sizeof *c);
    const hs_node **map = NULL;
    int rc = 0;
    if (!col || !tv || !qs || !vs || !c) {
        rc = hs_error_nomem(L->err);
        goto out;
    }
    for (size_t s = 0; s < ns; s++)
        col[s] = -1;
    for (size_t r = 0; r < n; r++) {
        col[m->sym_q[r]] = (long)r;
        tv[m->sym_v[r]] = 1;
        qs[r] = m->sym_q[r];
        vs[r] = m->sym_v[r];
    }
    for (size_t j = 0; j < nz; j++) {
        col[U->zsym[j]] = (long)(n + j);
        qs[n + j] = U->zsym[j];
        vs[n + j] = U->zdsym[j];
    }
    localctx x = { d, m->sym_t, col, tv, ns, n + nz, qs, vs };
    size_t nb, kl = U->gloc ? m->k : 0, ncb = 0;
    /* a define or a constraint reading a velocity: read.c says so */
    if (count_local(&x, U->phi, nz, &nb) || count_local(&x, U->gloc, kl, &ncb)) {
        rc = 1;
        goto out;
    }
    /* roots: B entries | gamma | mass | force | Q | z' | constraint entries | their gamma */
    c->nz = nz;
    c->nb = nb;
    c->ncb = ncb;
    c->nroot = nb + 4 * nz + n + ncb + kl;
    c->b_row = xcalloc(nb, sizeof *c->b_row);
    c->b_col = xcalloc(nb, sizeof *c->b_col);
    c->cb_row = xcalloc(ncb ? ncb : 1, sizeof *c->cb_row);
    c->cb_col = xcalloc(ncb ? ncb : 1, sizeof *c->cb_col);
    c->root = xcalloc(c->nroot, sizeof *c->root);
    const hs_node **loc = xcalloc(nb + nz + ncb + kl, sizeof *loc);
    if (!c->b_row || !c->b_col || !c->cb_row || !c->cb_col || !c->root || !loc) {
        free(loc);
        rc = hs_error_nomem(L->err);
        goto out;
    }
    /* the defines' local derivatives and gamma; the constraints' rows the same way */
    const hs_node **cl = loc + nb + nz;
    local_derivs(&x, U->phi, nz, c->b_row, c->b_col, loc, loc + nb);
    local_derivs(&x, U->gloc, kl, c->cb_row, c->cb_col, cl, cl + ncb);
    /* back to (t, q, q'): z -> its expansion, z' -> the expansion's D */
    map = xcalloc(ns, sizeof *map);
    if (!map) {
        free(loc);
        rc = hs_error_nomem(L->err);
        goto out;
    }
    for (size_t j = 0; j < nz; j++) {
        map[U->zsym[j]] = U->full[j];
        map[U->zdsym[j]] = U->fullv[j];
    }
    c->off_gamma = nb;
    c->off_mass = nb + nz;
    c->off_F = nb + 2 * nz;
    c->off_Q = nb + 3 * nz;
    c->off_zdot = nb + 3 * nz + n;
    c->off_cb = nb + 4 * nz + n;
    c->off_cgamma = c->off_cb + ncb;
    hs_subst_many(d, loc, nb + nz, map, ns, c->root);
    hs_subst_many(d, cl, ncb + kl, map, ns, c->root + c->off_cb);
    int moving = 0;
    for (size_t j = 0; j < nz && !moving; j++)
        moving = hs_depends_on(U->phi[j], m->sym_t);
    if (moving && (rc = moving_bT(L, U, c, loc, map, ns))) {
        free(loc);
        goto out;
    }
    free(loc);
    for (size_t j = 0; j < nz; j++) {
        c->root[c->off_mass + j] = U->mass[j];
        c->root[c->off_F + j] = U->force[j];
        c->root[c->off_zdot + j] = U->fullv[j];
    }
    const hs_node **g = c->root + c->off_Q;
    hs_gradient(d, m->U, m->sym_q, n, g);        /* Q = -grad U */
    for (size_t r = 0; r < n; r++)
        g[r] = hs_neg(d, g[r]);
    if (U->mloc && (rc = moving_masses(L, &x, U, map, ns, c)))
        goto out;
    if (hs_dag_failed(d)) {
        rc = hs_ld_dag_check(L);
        goto out;
    }
    m->chain = c;
    c = NULL;
out:
    free(map);
    if (c) {
        free(c->b_row); free(c->b_col); free(c->cb_row); free(c->cb_col); free(c->root);
        free(c);
    }
    free(col); free(tv); free(qs); free(vs);
    return rc;
}

/* U->mloc for the masses (the diagonal of Ma) that read positions: 0, 1
 * (not structured: a mass that reads t or a velocity, or no diagonal list
 * to read it from), or an error code. */
static int local_masses(chainb *B, const hs_node *const *Ma, unknowns *U)
{
    loader *L = B->L;
    hs_model *m = L->m;
    size_t na = L->namb;
    yaml_node_t *mass = NULL;
    for (size_t a = 0; a < na; a++) {
        const hs_node *ma = Ma[a * na + a];
        if (!reads_any(ma, B->state, B->nstate))
            continue;
        if (hs_depends_on(ma, m->sym_t))
            return 1;
        for (size_t r = 0; r < m->n; r++)
            if (hs_depends_on(ma, m->sym_v[r]))
                return 1;
        if (!mass) {
            mass = hs_ld_get(L, hs_ytree_root(L->y), "mass");
            if (!mass || mass->type != YAML_SEQUENCE_NODE || seq_len(mass) != na ||
                NODE(L, *mass->data.sequence.items.start)->type != YAML_SCALAR_NODE)
                return 1;
        }
        if (!U->mloc && !(U->mloc = xcalloc(na, sizeof *U->mloc)))
            return hs_error_nomem(L->err);
        yaml_node_t *e = NODE(L, mass->data.sequence.items.start[a]);
        if (!(U->mloc[a] = parse_local(B, e, "a mass entry", 1)) || B->oom)
            return L->err->code ? L->err->code : hs_error_nomem(L->err);
    }
    return 0;
}

int hs_ld_build_chain(loader *L, const hs_node *const *Ma, const hs_node *const *Fa)
{
    if (L->m->n < HS_CHAIN_MIN_N)          /* the dense metric is cheaper */
        return 0;
    size_t na = L->namb;
    hs_model *m = L->m;
    size_t nst = (size_t)hs_dag_nsymbols(m->dag);
    const hs_node **Xloc = xcalloc(na, sizeof *Xloc);
    chainb B = { L, xcalloc(L->ndef, sizeof *B.def_sym), xcalloc(L->ndef, sizeof *B.order),
                 0, xcalloc(L->ndef, 1), xcalloc(nst, 1), nst, 0, Xloc };
    unknowns U;
    memset(&U, 0, sizeof U);
    int rc = 0;
    if (!B.def_sym || !B.order || !B.def_const || !B.state || !Xloc)
        rc = hs_error_nomem(L->err);
    for (size_t r = 0; !rc && r < m->n; r++)
        B.state[m->sym_q[r]] = B.state[m->sym_v[r]] = 1;
    if (!rc)
        B.state[m->sym_t] = 1;
    for (size_t i = 0; !rc && i < L->ndef; i++)
        B.def_sym[i] = -1;
    for (size_t a = 0; !rc && a < na; a++)
        if (!(Xloc[a] = parse_local(&B, L->amb[a].val, "an embedding", 0)) || B.oom)
            rc = L->err->code ? L->err->code : hs_error_nomem(L->err);
    /* the model's constraints, read the same way (before the unknowns are
     * collected: they may read defines no point reads); with contacts the
     * dense path takes the model (compile.c) */
    yaml_node_t *cons = m->k && !m->ncontact ? hs_ld_get(L, hs_ytree_root(L->y), "constraints")
                                             : NULL;
    if (!rc && cons && !(U.gloc = xcalloc(m->k, sizeof *U.gloc)))
        rc = hs_error_nomem(L->err);
    for (size_t i = 0; !rc && cons && i < m->k; i++) {
        yaml_node_t *val = cons->type == YAML_MAPPING_NODE
                               ? NODE(L, cons->data.mapping.pairs.start[i].value)
                               : NODE(L, cons->data.sequence.items.start[i]);
        if (!(U.gloc[i] = parse_local(&B, val, "a constraint", 1)) || B.oom)
            rc = L->err->code ? L->err->code : hs_error_nomem(L->err);
    }
    /* ambient masses that read positions: read the same way, for their
     * derivatives (a diagonal list; one that reads t or a velocity, or a
     * mass matrix, keeps the dense path) */
    if (!rc)
        rc = local_masses(&B, Ma, &U);
    /* structure: at least one define read by another or by a point */
    if (!rc && B.nmet)
        rc = collect(&B, Xloc, Ma, Fa, &U);
    if (!rc && B.nmet)
        rc = derive(L, &U);
    unknowns_free(&U);
    free(B.def_sym);
    free(B.order);
    free(B.def_const);
    free(B.state);
    free(Xloc);
    return rc == 1 ? 0 : rc;
}

void hs_chain_free(hs_chain *c)
{
    if (!c)
        return;
    free(c->b_row);
    free(c->b_col);
    free(c->cb_row);
    free(c->cb_col);
    free(c->root);
    hs_prog_free(c->prog);
    free(c);
}

/* ---- the saddle-point system (model.h; the layout: dynamics/chain.c) ---- */

struct hs_chain_sys {
    const hs_model *m;
    const hs_chain *c;
    size_t n, nt;
    int *src;                  /* [nt] the program output of each contribution, or -1 */
    double *k;                 /* [nt] its factor (or the constant) */
    hs_la_sparse *S;
    int rows_only;             /* 1: the constraints' rows as the identity */
};

/* The contributions: contribution t at (row[t], col[t]) is k[t] times
 * output src[t] (src[t] < 0: the constant k[t]).  The model's
 * constraints: their local derivatives [dG/dq dG/dz] in their rows and
 * the transpose in their columns (rows_only: a 1 on their diagonal
 * instead, the unconstrained system). */
static void pattern(const hs_model *m, const hs_chain *c, int rows_only, int *row, int *col,
                    int *src, double *k)
{
    size_t n = m->n, nz = c->nz, lam = n + nz, mu = n + 2 * nz, t = 0;
#define PUT(r_, c_, s_, k_) (row[t] = (r_), col[t] = (c_), src[t] = (s_), k[t++] = (k_))
    for (size_t i = 0; rows_only && i < m->k; i++)
        PUT((int)(mu + i), (int)(mu + i), -1, 1.0);
    for (size_t e = 0; !rows_only && e < c->ncb; e++) {
        int i = (int)(mu + c->cb_row[e]), j = (int)c->cb_col[e];
        PUT(i, j, (int)(c->off_cb + e), 1.0);
        PUT(j, i, (int)(c->off_cb + e), 1.0);
    }
    for (size_t e = 0; e < c->nb; e++) {
        int i = (int)(lam + c->b_row[e]), j = (int)c->b_col[e];
        PUT(j, i, (int)e, 1.0);           /* j < n: a q row; else a z row */
        PUT(i, j, (int)e, 1.0);
    }
    for (size_t z = 0; z < nz; z++) {
        int zj = (int)(n + z), lj = (int)(lam + z);
        PUT(zj, zj, (int)(c->off_mass + z), 1.0);
        PUT(zj, lj, -1, -1.0);
        PUT(lj, zj, -1, -1.0);
    }
#undef PUT
}

void hs_chain_sys_free(hs_chain_sys *s)
{
    if (!s)
        return;
    hs_la_sparse_free(s->S);
    free(s->src);
    free(s->k);
    free(s);
}

static hs_chain_sys *sys_new(const hs_model *m, int rows_only)
{
    const hs_chain *c = m->chain;
    hs_chain_sys *s = xcalloc(1, sizeof *s);
    if (!s)
        return NULL;
    size_t ncon = rows_only ? m->k : 2 * c->ncb;
    *s = (hs_chain_sys){ m, c, m->n, 2 * c->nb + 3 * c->nz + ncon, NULL, NULL, NULL,
                         rows_only };
    int *row = xcalloc(s->nt, sizeof *row), *col = xcalloc(s->nt, sizeof *col);
    s->src = xcalloc(s->nt, sizeof *s->src);
    s->k = xcalloc(s->nt, sizeof *s->k);
    if (row && col && s->src && s->k) {
        pattern(m, c, rows_only, row, col, s->src, s->k);
        s->S = hs_la_sparse_new(s->n + 2 * c->nz + m->k, s->nt, row, col);
    }
    free(row);
    free(col);
    if (!s->S) {
        hs_chain_sys_free(s);
        return NULL;
    }
    return s;
}

hs_chain_sys *hs_chain_sys_new(const hs_model *m)
{
    return sys_new(m, 0);
}

int hs_chain_sys_factor(hs_chain_sys *s, const double *o)
{
    double *Ax = hs_la_sparse_values(s->S);
    const int *slot = hs_la_sparse_slots(s->S);
    for (size_t t = 0; t < s->nt; t++)
        Ax[slot[t]] += s->src[t] >= 0 ? s->k[t] * o[s->src[t]] : s->k[t];
    return hs_la_sparse_factor(s->S);
}

void hs_chain_sys_solve(hs_chain_sys *s, const double *o, double *x)
{
    const hs_model *m = s->m;
    const hs_chain *c = s->c;
    size_t n = s->n, nz = c->nz, mu = n + 2 * nz;
    memcpy(x, o + c->off_Q, n * sizeof *x);
    memcpy(x + n, o + c->off_F, nz * sizeof *x);
    for (size_t j = 0; j < nz; j++)
        x[n + nz + j] = -o[c->off_gamma + j];
    int baum = m->set.stabilize == HS_STAB_BAUMGARTE;
    for (size_t i = 0; i < m->k; i++)   /* G_q q'' = -(gamma + 2 alpha Gdot + beta^2 G) */
        x[mu + i] = s->rows_only ? 0
                    : -(o[c->off_cgamma + i] +
                        (baum ? 2 * m->set.alpha * o[c->off_Gdotb + i] +
                                m->set.beta * m->set.beta * o[c->off_Gb + i] : 0));
    hs_la_sparse_solve(s->S, x);
}

void hs_chain_sys_solve_rhs(hs_chain_sys *s, double *x)
{
    hs_la_sparse_solve(s->S, x);
}

int hs_chain_regular(const hs_model *m, double t, const double *q, const double *v,
                     int with_constraints)
{
    const hs_chain *c = m->chain;
    size_t n = m->n;
    double *in = xcalloc(m->nin, sizeof *in), *o = xcalloc(c->nout, sizeof *o);
    double *regs = xcalloc(hs_prog_nregs(c->prog), sizeof *regs);
    hs_chain_sys *s = in && o && regs ? sys_new(m, !with_constraints) : NULL;
    int rc = -1;
    if (s) {
        hs_model_inputs(m, in);
        in[m->sym_t] = t;
        if (m->ntab)
            hs_model_tables_at(m, t, in, NULL);
        for (size_t i = 0; i < n; i++) {
            in[m->sym_q[i]] = q[i];
            in[m->sym_v[i]] = v[i];
        }
        hs_prog_eval(c->prog, in, regs, o);
        int finite = 1, neg = 0;
        for (size_t i = 0; i < c->nout; i++)
            finite &= isfinite(o[i]);
        for (size_t j = 0; j < c->nz; j++)     /* M_z >= 0 (0: an intermediate) */
            neg |= o[c->off_mass + j] < 0;
        rc = neg ? 2 : finite && hs_chain_sys_factor(s, o) == 0;
    }
    hs_chain_sys_free(s);
    free(in); free(o); free(regs);
    return rc;
}
