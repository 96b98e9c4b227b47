/* The three forms of a model file into one set of symbolic kernels
 * (loader.h):
 *
 *   Cartesian    M from `mass`, Q = forces - grad U
 *   Lagrangian   M = d2L/dv2, Q = dL/dq - (d2L/dv dq) v - d2L/dv dt + forces
 *   embedding    x = X(t, q) substituted into the ambient kinetic energy,
 *                potential and forces (DX^T F), then the Lagrangian form
 *
 * then the constraint kernels G_q, G_t, Gdot = D G and gamma = D(D G). */
#include "loader.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* Q_i = dL/dq_i - dp_i/dt - sum_j (dp_i/dq_j) v_j + F_i, in one sum so
 * that like terms of the product rule cancel (the metric's derivatives
 * read as by hand).  A sum dp_i/dq_j is multiplied by v_j term by term,
 * so that its velocity products meet those of dL/dq_i: what is left is
 * the Christoffel form -Gamma_ijk v_j v_k, not two large sums that cancel
 * only numerically.  *terms (capacity *cap) is scratch; NULL when out of
 * memory. */
static const hs_node *generalized_force(hs_model *m, const hs_node *Lg, const hs_node *p,
                                        const hs_node *F, size_t i, const hs_node **dpq,
                                        const hs_node ***terms, size_t *cap)
{
    hs_dag *d = m->dag;
    size_t n = m->n, nt = 0, need = 3;
    hs_gradient(d, p, m->sym_q, n, dpq);
    for (size_t j = 0; j < n; j++)
        need += dpq[j]->kind == HS_ADD ? dpq[j]->nargs : 1;
    if (need > *cap) {
        const hs_node **nb = realloc(*terms, need * sizeof *nb);
        if (!nb)
            return NULL;
        *terms = nb;
        *cap = need;
    }
    const hs_node **t = *terms;
    t[nt++] = hs_diff(d, Lg, m->sym_q[i]);
    t[nt++] = hs_neg(d, hs_diff(d, p, m->sym_t));
    for (size_t j = 0; j < n; j++) {
        const hs_node *vj = hs_sym(d, m->sym_v[j]);
        if (dpq[j]->kind == HS_ADD)
            for (uint32_t z = 0; z < dpq[j]->nargs; z++)
                t[nt++] = hs_neg(d, hs_mul(d, dpq[j]->args[z], vj));
        else if (!hs_is_num(dpq[j], 0))
            t[nt++] = hs_neg(d, hs_mul(d, dpq[j], vj));
    }
    t[nt++] = F;
    return hs_addn(d, t, nt);
}

/* Lagrangian form: M = d2L/dv2, Q = dL/dq - (d2L/dv dq) v - d2L/dv dt + F;
 * the momenta p = dL/dv go to p[n] (the embedding form reads them). */
static int lagrangian_kernels(loader *L, const hs_node *Lg, const hs_node *const *F,
                              yaml_node_t *where, const hs_node **p)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n, tcap = n + 3;
    const hs_node **dpq = xcalloc(n, sizeof *dpq);
    const hs_node **terms = xcalloc(tcap, sizeof *terms);
    unsigned char *is_v = xcalloc((size_t)hs_dag_nsymbols(d), 1);
    int rc = 0;
    if (!dpq || !terms || !is_v) {
        rc = hs_error_nomem(L->err);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        is_v[m->sym_v[i]] = 1;
    /* p = dL/dv (only the velocities L uses), then row i of M = dp_i/dv_j, j <= i */
    hs_gradient(d, Lg, m->sym_v, n, p);
    for (size_t i = 0; i < n && !hs_dag_failed(d); i++) {
        hs_gradient(d, p[i], m->sym_v, i + 1, &m->M[i * n]);
        for (size_t j = 0; j <= i; j++) {
            const hs_node *Mij = m->M[i * n + j];
            m->M[j * n + i] = Mij;
            size_t ns;
            const int32_t *sy = hs_node_symbols(Mij, &ns);
            for (size_t z = 0; z < ns; z++)
                if (is_v[sy[z]]) {
                    rc = hs_ytree_error(L->y, L->err, where,
                                        "the kinetic energy is not quadratic in the velocities: "
                                        "d2T/d%s'd%s' depends on %s", m->qname[i],
                                        m->qname[j], hs_dag_symbol_name(d, sy[z]));
                    goto out;
                }
        }
        m->Q[i] = generalized_force(m, Lg, p[i], F[i], i, dpq, &terms, &tcap);
        if (!m->Q[i]) {
            rc = hs_error_nomem(L->err);
            goto out;
        }
    }
out:
    free(is_v);
    free(terms);
    free(dpq);
    return rc ? rc : hs_ld_dag_check(L);
}

/* The map that sets every velocity to 0 (hs_subst), or NULL. */
const hs_node **hs_ld_velocity_zero_map(loader *L, size_t *ns)
{
    hs_model *m = L->m;
    *ns = (size_t)hs_dag_nsymbols(m->dag);
    const hs_node **vz = xcalloc(*ns, sizeof *vz);
    for (size_t i = 0; vz && i < m->n; i++)
        vz[m->sym_v[i]] = scalar_zero(L);
    return vz;
}

/* T with every velocity set to 0: the velocity-free part T0 of a kinetic
 * energy (non-zero in a moving chart); NULL when out of memory. */
static const hs_node *velocity_free(loader *L, const hs_node *T)
{
    size_t ns;
    const hs_node **vz = hs_ld_velocity_zero_map(L, &ns);
    if (!vz)
        return NULL;
    const hs_node *T0 = hs_subst(L->m->dag, T, vz, ns);
    free(vz);
    return T0;
}

/* P_nc = F . v, the power of the forces not derived from the potential. */
static const hs_node *force_power(loader *L, const hs_node *const *F, const hs_node *const *v,
                                  size_t n)
{
    hs_model *m = L->m;
    const hs_node **pw = xcalloc(n, sizeof *pw);
    if (!pw)
        return NULL;
    for (size_t i = 0; i < n; i++)
        pw[i] = hs_mul(m->dag, F[i], v ? v[i] : hs_sym(m->dag, m->sym_v[i]));
    const hs_node *P = hs_addn(m->dag, pw, n);
    free(pw);
    return P;
}

/* The state of one kernel build, shared by the steps below. */
typedef struct kbuild {
    loader *L;
    yaml_node_t *root, *pot, *frc;
    const hs_node **F;          /* [n] generalized forces (not from U) */
    const hs_node *Lsym, *T0;   /* generalized forms: L and T(v = 0) */
    const hs_node **p;          /* [n] momenta dL/dv (generalized forms) */
    const hs_node *Tamb;        /* embedding: the ambient kinetic energy, else NULL */
    const hs_node *FXt;         /* embedding: F_a . X_t, the ambient forces' power
                                 * on the chart's own motion */
} kbuild;

/* Cartesian: M from `mass`, Q = F - grad U. */
static int cartesian_form(kbuild *B)
{
    loader *L = B->L;
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n;
    const hs_node *zero = scalar_zero(L);
    yaml_node_t *mass = hs_ld_get(L, B->root, "mass");
    if (hs_ld_read_model_mass(L, mass))
        return L->err->code;
    /* a diagonal list is M_diag alone: n entries to check, not n^2 */
    for (size_t i = 0; i < (m->M ? n * n : n); i++) {
        const hs_node *Mi = m->M ? m->M[i] : m->M_diag[i];
        if (Mi != zero && hs_ld_forbid_velocity(L, Mi, mass, "the mass matrix"))
            return L->err->code;
    }
    for (size_t i = 0; i < n; i++)
        B->F[i] = zero;
    if (B->frc && hs_ld_read_per_coord(L, B->frc, "'forces'", SCOPE_MODEL, zero, B->F))
        return L->err->code;
    for (size_t i = 0; i < n; i++)
        m->Q[i] = hs_sub(d, B->F[i], hs_diff(d, m->U, m->sym_q[i]));
    if (!(m->P_nc = force_power(L, B->F, NULL, n)))
        return hs_error_nomem(L->err);
    m->has_nc_forces = B->frc != NULL;
    return 0;
}

/* Lagrangian: `kinetic` (with `potential`) or `lagrangian`. */
static int lagrangian_form(kbuild *B)
{
    loader *L = B->L;
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n;
    const hs_node *zero = scalar_zero(L);
    yaml_node_t *kin = hs_ld_get(L, B->root, "kinetic"), *lag = hs_ld_get(L, B->root, "lagrangian");
    const hs_node *Lg;
    for (size_t i = 0; i < n; i++)
        B->F[i] = zero;
    if (B->frc && hs_ld_read_per_coord(L, B->frc, "'forces'", SCOPE_MODEL, zero, B->F))
        return L->err->code;
    if (kin) {
        const hs_node *T = hs_ld_parse(L, kin, SCOPE_MODEL, "'kinetic'");
        if (!T)
            return L->err->code;
        Lg = hs_sub(d, T, m->U);
        B->T0 = velocity_free(L, T);
    } else {
        if (B->pot)
            return hs_ytree_error(L->y, L->err, hs_ld_get_key(L, B->root, "potential"),
                                  "'potential' goes with 'kinetic'; a 'lagrangian' "
                                  "already contains the potential");
        if (!(Lg = hs_ld_parse(L, lag, SCOPE_MODEL, "'lagrangian'")))
            return L->err->code;
        const hs_node *L0 = velocity_free(L, Lg);
        if (!L0)
            return hs_error_nomem(L->err);
        m->U = hs_neg(d, L0);                      /* U = -L(t, q, 0) */
        m->has_potential = 1;
    }
    B->Lsym = Lg;
    if (!B->T0)
        return hs_error_nomem(L->err);
    if (lagrangian_kernels(L, Lg, B->F, kin ? kin : lag, B->p))
        return L->err->code;
    if (!(m->P_nc = force_power(L, B->F, NULL, n)))
        return hs_error_nomem(L->err);
    m->has_nc_forces = B->frc != NULL;
    return 0;
}

/* Embedding forces: a mapping ambient name -> expression, or a list of
 * namb expressions, into Fa[namb]. */
static int embedding_forces(loader *L, yaml_node_t *frc, const hs_node **Fa)
{
    size_t na = L->namb;
    if (frc->type == YAML_MAPPING_NODE) {
        const char **an = xcalloc(na, sizeof *an);
        for (size_t j = 0; an && j < na; j++)
            an[j] = L->amb[j].name;
        int bad = !an || hs_ld_check_keys(L, frc, an, na, "'forces' (ambient names)");
        free(an);
        for (size_t j = 0; !bad && j < na; j++) {
            yaml_node_t *v = hs_ld_get(L, frc, L->amb[j].name);
            if (v && !(Fa[j] = hs_ld_parse(L, v, SCOPE_MODEL, "a force")))
                bad = 1;
        }
        return bad;
    }
    if (frc->type == YAML_SEQUENCE_NODE && seq_len(frc) == na) {
        size_t j = 0;
        FOR_ITEMS(frc, it) {
            if (!(Fa[j++] = hs_ld_parse(L, NODE(L, *it), SCOPE_MODEL, "a force")))
                return 1;
        }
        return 0;
    }
    return hs_ytree_error(L->y, L->err, frc, "'forces' must map ambient names to "
                          "expressions (or list %zu of them)", na);
}

/* The embedding's first derivatives, column by column (entry i * na + a):
 * J = dX/dq (only the coordinates each X_a uses are differentiated) and
 * K = M_a J; Xt = dX/dt and KXt = M_a Xt. */
typedef struct embjac {
    size_t n, na;
    const hs_node **J, **K, **Xt, **KXt;
} embjac;

/* Sums x . y = sum_a x[a] y[a] over the ambient coordinates, each distinct
 * pair of nodes (x[a], y[a]) multiplied once and weighted by its count: a
 * chain's metric repeats one product down every link below the pair, and
 * multiplying it once per link costs n^3 node constructions. */
typedef struct pairsum {
    struct pslot { const hs_node *x, *y; size_t epoch, k; } *slot;
    size_t cap, epoch;                 /* cap: a power of 2, >= 2 na */
    const hs_node **x, **y, **terms;   /* [na] distinct pairs, first occurrence first */
    double *count;                     /* [na] */
    const hs_node *zero;
} pairsum;

static const hs_node *pair_sum(hs_dag *d, pairsum *P, const hs_node *const *x,
                               const hs_node *const *y, size_t na)
{
    size_t np = 0, mask = P->cap - 1;
    P->epoch++;
    for (size_t a = 0; a < na; a++) {
        if (x[a] == P->zero || y[a] == P->zero)
            continue;
        size_t h = ((size_t)x[a]->id * 2654435761u ^ (size_t)y[a]->id * 2246822519u) & mask;
        struct pslot *s;
        while ((s = &P->slot[h])->epoch == P->epoch && (s->x != x[a] || s->y != y[a]))
            h = (h + 1) & mask;
        if (s->epoch == P->epoch) {
            P->count[s->k] += 1;
            continue;
        }
        *s = (struct pslot){x[a], y[a], P->epoch, np};
        P->x[np] = x[a];
        P->y[np] = y[a];
        P->count[np++] = 1;
    }
    for (size_t k = 0; k < np; k++) {
        const hs_node *t = hs_mul(d, P->x[k], P->y[k]);
        P->terms[k] = P->count[k] == 1 ? t : hs_mul(d, hs_num(d, P->count[k]), t);
    }
    return hs_addn(d, P->terms, np);
}

/* J and Xt of the embedding. */
static void embedding_jacobian(loader *L, embjac *E, const int *qidx, int *syms,
                              const hs_node **grad)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = E->n, na = E->na;
    const hs_node *zero = scalar_zero(L);
    for (size_t z = 0; z < n * na; z++)
        E->J[z] = zero;
    for (size_t a = 0; a < na; a++) {
        size_t ns, nq = 0;
        const int32_t *s = hs_node_symbols(L->ambX[a], &ns);
        for (size_t z = 0; z < ns; z++)
            if (qidx[s[z]] >= 0)
                syms[nq++] = s[z];
        hs_gradient(d, L->ambX[a], syms, nq, grad);
        for (size_t z = 0; z < nq; z++)
            E->J[(size_t)qidx[syms[z]] * na + a] = grad[z];
        E->Xt[a] = hs_diff(d, L->ambX[a], m->sym_t);
    }
}

/* K = M_a J and KXt = M_a Xt, a row of M_a at a time (usually one entry). */
static void embedding_mass_times(loader *L, embjac *E, const hs_node *const *Ma, int *rows,
                                 const hs_node **terms)
{
    hs_dag *d = L->m->dag;
    size_t n = E->n, na = E->na;
    const hs_node *zero = scalar_zero(L);
    for (size_t a = 0; a < na; a++) {
        size_t nb = 0;
        for (size_t b = 0; b < na; b++)
            if (Ma[a * na + b] != zero)
                rows[nb++] = (int)b;
        for (size_t i = 0; i <= n; i++) {
            const hs_node *const *col = i < n ? E->J + i * na : E->Xt;
            size_t nt = 0;
            for (size_t z = 0; z < nb; z++)
                if (col[rows[z]] != zero)
                    terms[nt++] = hs_mul(d, Ma[a * na + rows[z]], col[rows[z]]);
            *(i < n ? &E->K[i * na + a] : &E->KXt[a]) = hs_addn(d, terms, nt);
        }
    }
}

/* T = 1/2 v^T (J^T M_a J) v + (Xt^T M_a J) v + 1/2 Xt^T M_a Xt, term by
 * term (each metric entry j <= i once: v_i v_j for j < i stands for both
 * halves); *T0 receives the velocity-free part.  NULL when out of memory. */
static const hs_node *metric_kinetic(loader *L, const embjac *E, pairsum *P,
                                     const hs_node **T0)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = E->n, na = E->na, nt = 0;
    const hs_node *half = hs_num(d, 0.5);
    const hs_node **terms = xcalloc(n * (n + 1) / 2 + n + 1, sizeof *terms);
    if (!terms)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const hs_node *vi = hs_sym(d, m->sym_v[i]);
        for (size_t j = 0; j <= i; j++) {
            const hs_node *Mij = pair_sum(d, P, E->J + i * na, E->K + j * na, na);
            if (Mij == P->zero)
                continue;
            const hs_node *vj = hs_sym(d, m->sym_v[j]);
            terms[nt++] = i == j ? hs_muln(d, (const hs_node *[]){half, Mij, vi, vi}, 4)
                                 : hs_muln(d, (const hs_node *[]){Mij, vi, vj}, 3);
        }
        const hs_node *ci = pair_sum(d, P, E->Xt, E->K + i * na, na);
        if (ci != P->zero)
            terms[nt++] = hs_mul(d, ci, vi);
    }
    *T0 = hs_mul(d, half, pair_sum(d, P, E->Xt, E->KXt, na));
    terms[nt++] = *T0;
    const hs_node *T = hs_addn(d, terms, nt);
    free(terms);
    return T;
}

/* The scratch of embedding_form. */
typedef struct embscratch {
    const hs_node **Ma, **Fa, **buf, **grad;
    int *qidx, *syms;
    pairsum P;
} embscratch;

static void embscratch_free(embscratch *S)
{
    free(S->Ma); free(S->Fa); free(S->buf); free(S->grad);
    free(S->qidx); free(S->syms);
    free(S->P.slot); free(S->P.x); free(S->P.count);
}

static int embscratch_init(loader *L, embscratch *S)
{
    size_t n = L->m->n, na = L->namb, ns = (size_t)hs_dag_nsymbols(L->m->dag);
    *S = (embscratch){ xcalloc(na * na, sizeof *S->Ma), xcalloc(na, sizeof *S->Fa),
                       xcalloc(2 * n * na + 2 * na, sizeof *S->buf),
                       xcalloc(na + n + 1, sizeof *S->grad), xcalloc(ns, sizeof *S->qidx),
                       xcalloc(na + n + 1, sizeof *S->syms),
                       { NULL, 1, 0, NULL, NULL, NULL, NULL, scalar_zero(L) } };
    while (S->P.cap < 2 * na)
        S->P.cap *= 2;
    S->P.slot = xcalloc(S->P.cap, sizeof *S->P.slot);
    S->P.x = xcalloc(3 * na, sizeof *S->P.x);
    S->P.count = xcalloc(na, sizeof *S->P.count);
    if (!S->Ma || !S->Fa || !S->buf || !S->grad || !S->qidx || !S->syms || !S->P.slot ||
        !S->P.x || !S->P.count)
        return hs_error_nomem(L->err);
    S->P.y = S->P.x + na;
    S->P.terms = S->P.x + 2 * na;
    for (size_t s = 0; s < ns; s++)
        S->qidx[s] = -1;
    for (size_t i = 0; i < n; i++)
        S->qidx[L->m->sym_q[i]] = (int)i;
    return 0;
}

/* A structured embedding (chain.c: a diagonal ambient mass): T = 1/2
 * sum_a m_a x_a'^2 over the ambient velocities, the powers; no metric (M
 * NULL) and no Q (0): the accelerations come from the structure.  A chart
 * that does not move has T1 = T0 = 0 (outputs and events read T as
 * v^T M v / 2); one that moves (a point reads t) has x_a' = J_a v + X_t,a
 * and the energy's bookkeeping (time_power) needs T0 = 1/2 sum m_a
 * X_t,a^2, F_a . X_t and p = dT/dv (read at v = 0 only: T1 = p(0) . v),
 * the last from the ambient velocities, O(n) terms per point. */
static int structured_kinetic(kbuild *B, const hs_node *const *Ma, const hs_node *const *Fa)
{
    loader *L = B->L;
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n, na = L->namb;
    const hs_node *zero = scalar_zero(L);
    const hs_node **terms = xcalloc(na, sizeof *terms);
    m->ambv = xcalloc(na, sizeof *m->ambv);
    if (!terms || !m->ambv) {
        free(terms);
        return hs_error_nomem(L->err);
    }
    for (size_t a = 0; a < na; a++) {
        m->ambv[a] = L->ambV[a];
        terms[a] = hs_mul(d, Ma[a * na + a], hs_pow(d, L->ambV[a], hs_num(d, 2)));
    }
    const hs_node *T = hs_mul(d, hs_num(d, 0.5), hs_addn(d, terms, na));
    free(terms);
    free(m->M);
    m->M = NULL;                        /* not formed: hs_model_M is not called */
    for (size_t i = 0; i < n; i++)
        m->Q[i] = B->F[i] = B->p[i] = zero;
    m->P_nc = force_power(L, Fa, L->ambV, na);
    m->has_nc_forces = B->frc != NULL;
    B->FXt = zero;
    B->T0 = zero;
    const hs_node *T2 = T;
    int moving = 0;
    for (size_t a = 0; a < na && !moving; a++) {
        size_t ns;
        const int32_t *s = hs_node_symbols(L->ambX[a], &ns);
        for (size_t z = 0; z < ns && !moving; z++)
            moving = s[z] == m->sym_t;
    }
    if (moving) {
        size_t ns;
        const hs_node **vz = hs_ld_velocity_zero_map(L, &ns);
        const hs_node **t0 = xcalloc(2 * na, sizeof *t0);
        if (!vz || !t0) {
            free(vz);
            free(t0);
            return hs_error_nomem(L->err);
        }
        hs_subst_many(d, L->ambV, na, vz, ns, t0 + na);     /* X_t, one memo for all */
        for (size_t a = 0; a < na; a++) {
            const hs_node *Xt = t0[na + a];
            t0[a] = hs_mul(d, Ma[a * na + a], hs_pow(d, Xt, hs_num(d, 2)));
            t0[na + a] = hs_mul(d, Fa[a], Xt);
        }
        B->T0 = hs_mul(d, hs_num(d, 0.5), hs_addn(d, t0, na));
        B->FXt = hs_addn(d, t0 + na, na);
        free(t0);
        /* T2 = T - T1 - T0, T1 = p(0) . v: the quantities read T2 as
         * v^T M v / 2 and add T1 + T0 (derived.c); p(0) from the
         * structure (chain.c: O(n) nodes), else the gradient of T */
        if (L->chain_bT)
            memcpy(B->p, L->chain_bT, n * sizeof *B->p);
        else
            hs_gradient(d, T, m->sym_v, n, B->p);
        const hs_node **t1 = xcalloc(n, sizeof *t1);
        if (t1)
            hs_subst_many(d, B->p, n, vz, ns, t1);
        for (size_t i = 0; t1 && i < n; i++)
            t1[i] = hs_mul(d, t1[i], hs_sym(d, m->sym_v[i]));
        free(vz);
        if (!t1)
            return hs_error_nomem(L->err);
        T2 = hs_sub(d, T, hs_add(d, hs_addn(d, t1, n), B->T0));
        free(t1);
    }
    B->Tamb = T;
    B->Lsym = hs_sub(d, T, m->U);
    L->vMv2 = T2;
    return m->P_nc ? 0 : hs_error_nomem(L->err);
}

/* Each ambient mass that is a number once the parameters are known (the
 * diagonal of Ma) must not be negative: the metric of a negative one may
 * be positive definite at t0 and singular later (a run that ended in
 * "step size underflow").  0 is allowed: a point that only relays others. */
static int ambient_masses_ok(loader *L, yaml_node_t *mass, size_t na, const hs_node **Ma)
{
    hs_model *m = L->m;
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    double *in = xcalloc(ns + 1, sizeof *in);
    if (!in)
        return hs_error_nomem(L->err);
    for (size_t s = 0; s < ns; s++)
        in[s] = NAN;
    for (size_t j = 0; j < m->npar; j++)
        if (m->sym_p[j] >= 0 && (size_t)m->sym_p[j] < ns)
            in[m->sym_p[j]] = m->pval[j];
    int rc = 0;
    for (size_t j = 0; j < na && !rc; j++) {
        double v = NAN;
        if (hs_eval_node(Ma[j * na + j], in, &v)) {
            rc = hs_error_nomem(L->err);
            break;
        }
        if (!(v < 0))                      /* >= 0, or not a number before t0 */
            continue;
        yaml_node_t *e = mass;
        if (mass && mass->type == YAML_SEQUENCE_NODE && seq_len(mass) == na) {
            e = NODE(L, mass->data.sequence.items.start[j]);
            if (e->type == YAML_SEQUENCE_NODE && seq_len(e) == na)
                e = NODE(L, e->data.sequence.items.start[j]);
        }
        rc = hs_ytree_error(L->y, L->err, e, "the ambient mass of '%s' is %g: an ambient "
                            "mass must be > 0 (or 0 on a point that only relays others)",
                            L->amb[j].name, v);
    }
    free(in);
    return rc;
}

/* Embedding: x = X(t, q) and x' = J v + Xt (J = dX/dq, Xt = dX/dt) in the
 * ambient T = 1/2 x'^T M_a x'; generalized forces J^T F; then the
 * Lagrangian form.  T is written through its metric J^T M_a J (the same
 * function as the square of x', as a sum of velocity monomials, whose
 * derivatives cost O(n^2) nodes for a chain where those of the square cost
 * O(n^3), and whose Q comes out in Christoffel form). */
static int embedding_form(kbuild *B)
{
    loader *L = B->L;
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n, na = L->namb;
    const hs_node *zero = scalar_zero(L), *T = NULL;
    embscratch S;
    int bad = embscratch_init(L, &S);
    embjac E = { n, na, NULL, NULL, NULL, NULL };
    if (!bad)
        E = (embjac){ n, na, S.buf, S.buf + n * na, S.buf + 2 * n * na, S.buf + 2 * n * na + na };
    if (!bad)
        bad = hs_ld_read_mass(L, hs_ld_get(L, B->root, "mass"), na, S.Ma);
    if (!bad)
        bad = ambient_masses_ok(L, hs_ld_get(L, B->root, "mass"), na, S.Ma);
    for (size_t j = 0; !bad && j < na; j++)
        S.Fa[j] = zero;
    if (!bad && B->frc)
        bad = embedding_forces(L, B->frc, S.Fa);
    /* the structured embedding (chain.c) needs neither the metric nor Q */
    if (!bad && !L->err->code && (!L->ov || (!L->ov->statics && !L->ov->dense)))
        bad = hs_ld_build_chain(L, S.Ma, S.Fa);
    if (!bad && m->chain) {
        bad = structured_kinetic(B, S.Ma, S.Fa);
        embscratch_free(&S);
        return bad ? bad : hs_ld_dag_check(L);
    }
    if (!bad) {
        embedding_jacobian(L, &E, S.qidx, S.syms, S.grad);
        embedding_mass_times(L, &E, S.Ma, S.syms, S.grad);
        T = metric_kinetic(L, &E, &S.P, &B->T0);
        if (!T)
            bad = hs_error_nomem(L->err);
    }
    for (size_t i = 0; !bad && i < n; i++) {
        size_t nt = 0;
        for (size_t a = 0; a < na; a++)
            if (S.Fa[a] != zero && E.J[i * na + a] != zero)
                S.grad[nt++] = hs_mul(d, S.Fa[a], E.J[i * na + a]);
        B->F[i] = hs_addn(d, S.grad, nt);
    }
    if (!bad) {
        m->P_nc = force_power(L, S.Fa, L->ambV, na);     /* F_a . x' */
        size_t nt = 0;
        for (size_t a = 0; a < na; a++)
            S.grad[nt++] = hs_mul(d, S.Fa[a], E.Xt[a]);
        B->FXt = hs_addn(d, S.grad, nt);
        m->ambv = xcalloc(na, sizeof *m->ambv);
        if (!m->ambv || !m->P_nc || !B->T0)
            bad = hs_error_nomem(L->err);
        for (size_t a = 0; !bad && a < na; a++)
            m->ambv[a] = L->ambV[a];
        B->Lsym = hs_sub(d, T, m->U);
        B->Tamb = T;
    }
    m->has_nc_forces = B->frc != NULL;
    embscratch_free(&S);
    if (bad || L->err->code)
        return L->err->code ? L->err->code : HS_EXIT_MODEL;
    return lagrangian_kernels(L, B->Lsym, B->F, hs_ld_get(L, B->root, "mass"), B->p);
}

/* Embedding: the kinetic energy T = T2 + T1 + T0 of the ambient velocities
 * (parts quadratic in, linear in and free of q'), with T1 = bT . q' and
 * bT = dT/dq' at q' = 0 = p(q' = 0).  Sets m->bT and m->Tx = T1 + T0;
 * returns T1 (NULL when out of memory). */
static const hs_node *linear_part(kbuild *B)
{
    loader *L = B->L;
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n, ns;
    const hs_node **vz = hs_ld_velocity_zero_map(L, &ns);
    const hs_node **terms = xcalloc(n, sizeof *terms);
    m->bT = xcalloc(n, sizeof *m->bT);
    const hs_node *T1 = NULL;
    if (vz && terms && m->bT) {
        hs_subst_many(d, B->p, n, vz, ns, m->bT);       /* one memo for all */
        for (size_t i = 0; i < n; i++)
            terms[i] = hs_mul(d, m->bT[i], hs_sym(d, m->sym_v[i]));
        T1 = hs_addn(d, terms, n);
        m->Tx = hs_add(d, T1, B->T0);
    }
    free(vz);
    free(terms);
    return T1;
}

/* P_t, the power of whatever E does not account for, so that
 * E - E0 - W_R - W_nc - W_t = 0 for every model (model.h). */
static int time_power(kbuild *B)
{
    loader *L = B->L;
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n;
    m->T0 = B->T0;
    m->Tx = scalar_zero(L);
    if (B->Lsym) {
        /* generalized forms: the energy function h = T2 - T0 + U obeys
         * dh/dt = -dL/dt + (F + R).v.  The Lagrangian form's E = T2 + U is
         * h + T0, so P_t = -dL/dt + D T0 (0 for a time-independent L
         * without a velocity-free T0).  The embedding's E = T + U is
         * h + T1 + 2 T0 and its P_nc = F_a . x' = F.v + F_a . X_t, so
         * P_t = -dL/dt + D(T1 + 2 T0) - F_a . X_t, plus bT . a (the part of
         * dT1/dt that needs the accelerations; added by the integrator) */
        const hs_node *moving = B->T0, *Pt = hs_neg(d, hs_diff(d, B->Lsym, m->sym_t));
        if (B->Tamb) {
            const hs_node *T1 = linear_part(B);
            if (!T1)
                return hs_error_nomem(L->err);
            moving = hs_add(d, T1, hs_mul(d, hs_num(d, 2.0), B->T0));
            Pt = hs_sub(d, Pt, B->FXt);
        }
        m->P_t = hs_add(d, Pt, hs_total_diff(d, moving, m->sym_t, n, m->sym_q, m->sym_v));
        return 0;
    }
    /* Cartesian: P_t = D(T + U) + v.Q - P_nc, with T = v^T M v / 2 and D
     * the total derivative at fixed velocities: dE/dt = D(T + U) + v.M a
     * and M a = Q + R along solutions */
    const hs_node **terms = xcalloc((m->M ? n * n : n) + 2 * n, sizeof *terms);
    if (!terms)
        return hs_error_nomem(L->err);
    size_t nt = 0;
    const hs_node *zero = hs_num(d, 0);          /* the one 0 node: no visit */
    for (size_t i = 0; i < n; i++)
        for (size_t j = m->M ? 0 : i; j < (m->M ? n : i + 1); j++)     /* M_diag: i alone */
            if (hs_model_M(m, i, j) != zero)
                terms[nt++] = hs_mul(d, hs_model_M(m, i, j),
                                     hs_mul(d, hs_sym(d, m->sym_v[i]), hs_sym(d, m->sym_v[j])));
    const hs_node *E = hs_add(d, hs_mul(d, hs_num(d, 0.5), hs_addn(d, terms, nt)), m->U);
    nt = 0;
    terms[nt++] = hs_total_diff(d, E, m->sym_t, n, m->sym_q, m->sym_v);
    for (size_t i = 0; i < n; i++)
        terms[nt++] = hs_mul(d, hs_sym(d, m->sym_v[i]), m->Q[i]);
    terms[nt++] = hs_neg(d, m->P_nc);
    m->P_t = hs_addn(d, terms, nt);
    free(terms);
    return 0;
}

static int long_cmp(const void *pa, const void *pb)
{
    long a = *(const long *)pa, b = *(const long *)pb;
    return (a > b) - (a < b);
}

/* The constraints and their derivatives: G_q, G_t, Gdot = D G, gamma = D(D G). */
static int constraint_kernels(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n;
    if (hs_ld_read_constraints(L, hs_ld_get(L, root, "constraints")) ||
        hs_ld_read_contacts(L, hs_ld_get(L, root, "contacts")) ||
        hs_ld_read_friction(L, root))
        return L->err->code;
    size_t k = m->k;
    /* documented limits: the run keeps a dense copy of G_q (reactions, rank
     * diagnosis) and, for a full mass matrix, dense n x n factors */
    /* a sparse model keeps no dense G_q (loader.h) */
    int sparse = m->form == HS_FORM_CARTESIAN && !m->M && !m->ncontact && !m->nfriction;
    if (!sparse && (double)k * (double)n > MAX_DENSE)
        return hs_error_set(L->err, HS_EXIT_MODEL, "%s: model too large: %zu coordinates "
                            "and %zu constraints (holosim keeps a dense k x n Jacobian; the "
                            "limit is k*n <= %.0f)", L->y->file, n, k, MAX_DENSE);
    size_t cap = 2 * k + 1;                /* G_q by rows: grows with the entries */
    m->G_q_start = xcalloc(k + 1, sizeof *m->G_q_start);
    m->G_q_col = xcalloc(cap, sizeof *m->G_q_col);
    m->G_q_nz = xcalloc(cap, sizeof *m->G_q_nz);
    m->G_t = xcalloc(k, sizeof *m->G_t);
    m->Gdot = xcalloc(k, sizeof *m->Gdot);
    m->gamma = xcalloc(k, sizeof *m->gamma);
    if (!m->G_q_start || !m->G_q_col || !m->G_q_nz || !m->G_t || !m->Gdot || !m->gamma)
        return hs_error_nomem(L->err);
    /* row i: only the coordinates G_i uses (k * n derivative calls would
     * cost k * n even when each is 0 at once), in coordinate order */
    size_t nsym = (size_t)hs_dag_nsymbols(d);
    long *col = xcalloc(n, sizeof *col), *qidx = xcalloc(nsym, sizeof *qidx);
    if (!col || !qidx) {
        free(col);
        free(qidx);
        return hs_error_nomem(L->err);
    }
    for (size_t s = 0; s < nsym; s++)
        qidx[s] = -1;
    for (size_t j = 0; j < n; j++)
        qidx[m->sym_q[j]] = (long)j;
    size_t nz = 0;
    for (size_t i = 0; i < k && !hs_dag_failed(d); i++) {
        size_t ns, nc = 0;
        const int32_t *sy = hs_node_symbols(m->G[i], &ns);
        for (size_t z = 0; z < ns; z++)
            if (qidx[sy[z]] >= 0)
                col[nc++] = qidx[sy[z]];
        qsort(col, nc, sizeof *col, long_cmp);
        if (nz + nc > cap) {
            while (nz + nc > cap)
                cap *= 2;
            size_t *c2 = realloc(m->G_q_col, cap * sizeof *c2);
            if (c2)
                m->G_q_col = c2;
            const hs_node **g2 = realloc(m->G_q_nz, cap * sizeof *g2);
            if (g2)
                m->G_q_nz = g2;
            if (!c2 || !g2) {
                free(col);
                free(qidx);
                return hs_error_nomem(L->err);
            }
        }
        m->G_q_start[i] = nz;
        for (size_t c = 0; c < nc; c++, nz++) {
            m->G_q_col[nz] = (size_t)col[c];
            m->G_q_nz[nz] = hs_diff(d, m->G[i], m->sym_q[col[c]]);
        }
        m->G_q_start[i + 1] = nz;
        m->G_t[i] = hs_diff(d, m->G[i], m->sym_t);
        m->Gdot[i] = hs_total_diff(d, m->G[i], m->sym_t, n, m->sym_q, m->sym_v);
        m->gamma[i] = hs_total_diff(d, m->Gdot[i], m->sym_t, n, m->sym_q, m->sym_v);
    }
    free(col);
    free(qidx);
    return hs_ld_dag_check(L);
}

int hs_ld_build_kernels(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    size_t n = m->n;
    kbuild B = { L, root, hs_ld_get(L, root, "potential"), hs_ld_get(L, root, "forces"),
                 NULL, NULL, scalar_zero(L), NULL, NULL, NULL };
    /* the Cartesian form's M: its `mass` says dense or diagonal (cartesian_form) */
    if (m->form != HS_FORM_CARTESIAN && n > MAX_DENSE_COORDS)
        return hs_ytree_error(L->y, L->err, hs_ld_get(L, root, "coordinates"), "too many "
                              "coordinates for a model in generalized coordinates (%zu; the "
                              "limit is %d: its mass matrix is kept as n x n; the Cartesian "
                              "form with a diagonal mass takes up to %d)", n,
                              MAX_DENSE_COORDS, MAX_COORDS);
    if (m->form != HS_FORM_CARTESIAN)
        m->M = xcalloc(n * n, sizeof *m->M);
    m->Q = xcalloc(n, sizeof *m->Q);
    B.F = xcalloc(n, sizeof *B.F);
    B.p = xcalloc(n, sizeof *B.p);
    if ((m->form != HS_FORM_CARTESIAN && !m->M) || !m->Q || !B.F || !B.p) {
        free(B.F);
        free(B.p);
        return hs_error_nomem(L->err);
    }
    m->has_potential = B.pot != NULL;
    m->U = scalar_zero(L);
    int rc = 0;
    if (B.pot && (!(m->U = hs_ld_parse(L, B.pot, SCOPE_MODEL, "'potential'")) ||
                  hs_ld_forbid_velocity(L, m->U, B.pot, "the potential")))
        rc = L->err->code;
    if (!rc)
        rc = m->form == HS_FORM_CARTESIAN ? cartesian_form(&B)
           : m->form == HS_FORM_LAGRANGIAN ? lagrangian_form(&B) : embedding_form(&B);
    if (!rc && !m->P_nc)
        m->P_nc = scalar_zero(L);
    if (!rc)
        rc = time_power(&B);
    if (!rc)
        rc = constraint_kernels(L, root);
    free(B.F);
    free(B.p);
    return rc ? rc : L->err->code;
}
