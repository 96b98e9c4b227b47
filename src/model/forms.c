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

#include <string.h>


/* Lagrangian form: M = d2L/dv2, Q = dL/dq - (d2L/dv dq) v - d2L/dv dt + F. */
static int lagrangian_kernels(loader *L, const hs_node *Lg, const hs_node *const *F,
                              yaml_node_t *where)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n;
    const hs_node **p = xcalloc(n, sizeof *p);
    if (!p)
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    for (size_t i = 0; i < n && !hs_dag_failed(d); i++)
        p[i] = hs_diff(d, Lg, m->sym_v[i]);
    for (size_t i = 0; i < n && !hs_dag_failed(d); i++) {
        for (size_t j = 0; j <= i; j++) {
            const hs_node *Mij = hs_diff(d, p[i], m->sym_v[j]);
            m->M[i * n + j] = m->M[j * n + i] = Mij;
            for (size_t l = 0; l < n; l++)
                if (hs_depends_on(Mij, m->sym_v[l])) {
                    free(p);
                    return hs_ytree_error(L->y, L->err, where,
                                          "the kinetic energy is not quadratic in the velocities: "
                                          "d2T/d%s'd%s' depends on %s'", m->qname[i],
                                          m->qname[j], m->qname[l]);
                }
        }
        const hs_node *Qi = hs_diff(d, Lg, m->sym_q[i]);
        Qi = hs_sub(d, Qi, hs_diff(d, p[i], m->sym_t));
        for (size_t j = 0; j < n; j++)
            Qi = hs_sub(d, Qi, hs_mul(d, hs_diff(d, p[i], m->sym_q[j]), hs_sym(d, m->sym_v[j])));
        m->Q[i] = hs_add(d, Qi, F[i]);
    }
    free(p);
    return hs_ld_dag_check(L);
}

/* T with every velocity set to 0: the velocity-free part T0 of a kinetic
 * energy (non-zero in a moving chart). */
static const hs_node *velocity_free(loader *L, const hs_node *T)
{
    hs_model *m = L->m;
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    const hs_node **vz = xcalloc(ns, sizeof *vz);
    if (!vz)
        return scalar_zero(L);
    for (size_t i = 0; i < m->n; i++)
        vz[m->sym_v[i]] = scalar_zero(L);
    const hs_node *T0 = hs_subst(m->dag, T, vz, ns);
    free(vz);
    return T0;
}

int hs_ld_build_kernels(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n;
    const hs_node *zero = scalar_zero(L);
    const hs_node *Lsym = NULL, *T0 = zero;   /* generalized forms: L, T(v = 0) */
    m->M = xcalloc(n * n, sizeof *m->M);
    m->Q = xcalloc(n, sizeof *m->Q);
    const hs_node **F = xcalloc(n, sizeof *F);
    if (!m->M || !m->Q || !F) {
        free(F);
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    }
    yaml_node_t *pot = hs_ld_get(L, root, "potential"), *frc = hs_ld_get(L, root, "forces");
    m->has_potential = pot != NULL;
    m->U = zero;
    if (pot && !(m->U = hs_ld_parse(L, pot, SCOPE_MODEL, "'potential'")))
        goto out;
    if (pot && hs_ld_forbid_velocity(L, m->U, pot, "the potential"))
        goto out;

    if (m->form == HS_FORM_CARTESIAN) {
        if (hs_ld_read_mass(L, hs_ld_get(L, root, "mass"), n, m->M))
            goto out;
        for (size_t i = 0; i < n * n; i++)
            if (hs_ld_forbid_velocity(L, m->M[i], hs_ld_get(L, root, "mass"), "the mass matrix"))
                goto out;
        for (size_t i = 0; i < n; i++)
            F[i] = zero;
        if (frc && hs_ld_read_per_coord(L, frc, "'forces'", SCOPE_MODEL, zero, F))
            goto out;
        for (size_t i = 0; i < n; i++)
            m->Q[i] = hs_sub(d, F[i], hs_diff(d, m->U, m->sym_q[i]));
        const hs_node **pw = xcalloc(n, sizeof *pw);
        if (!pw)
            goto oom;
        for (size_t i = 0; i < n; i++)
            pw[i] = hs_mul(d, F[i], hs_sym(d, m->sym_v[i]));
        m->P_nc = hs_addn(d, pw, n);
        free(pw);
        m->has_nc_forces = frc != NULL;
    } else if (m->form == HS_FORM_LAGRANGIAN) {
        yaml_node_t *kin = hs_ld_get(L, root, "kinetic"), *lag = hs_ld_get(L, root, "lagrangian");
        const hs_node *Lg;
        for (size_t i = 0; i < n; i++)
            F[i] = zero;
        if (frc && hs_ld_read_per_coord(L, frc, "'forces'", SCOPE_MODEL, zero, F))
            goto out;
        if (kin) {
            const hs_node *T = hs_ld_parse(L, kin, SCOPE_MODEL, "'kinetic'");
            if (!T)
                goto out;
            Lg = hs_sub(d, T, m->U);
            T0 = velocity_free(L, T);
        } else {
            if (pot) {
                hs_ytree_error(L->y, L->err, hs_ld_get_key(L, root, "potential"),
                                    "'potential' goes with 'kinetic'; a 'lagrangian' "
                                    "already contains the potential");
                goto out;
            }
            if (!(Lg = hs_ld_parse(L, lag, SCOPE_MODEL, "'lagrangian'")))
                goto out;
            /* U = -L(t, q, 0): the velocity-free part of the Lagrangian */
            const hs_node **vz = xcalloc((size_t)hs_dag_nsymbols(d), sizeof *vz);
            if (!vz)
                goto oom;
            for (size_t i = 0; i < n; i++)
                vz[m->sym_v[i]] = zero;
            m->U = hs_neg(d, hs_subst(d, Lg, vz, (size_t)hs_dag_nsymbols(d)));
            free(vz);
            m->has_potential = 1;
        }
        Lsym = Lg;
        if (lagrangian_kernels(L, Lg, F, kin ? kin : lag))
            goto out;
        const hs_node **pw = xcalloc(n, sizeof *pw);
        if (!pw)
            goto oom;
        for (size_t i = 0; i < n; i++)
            pw[i] = hs_mul(d, F[i], hs_sym(d, m->sym_v[i]));
        m->P_nc = hs_addn(d, pw, n);
        free(pw);
        m->has_nc_forces = frc != NULL;
    } else { /* embedding: T = 1/2 Xdot^T M_a Xdot, forces DX^T F */
        size_t na = L->namb;
        const hs_node **Ma = xcalloc(na * na, sizeof *Ma);
        const hs_node **Fa = xcalloc(na, sizeof *Fa);
        const hs_node **terms = xcalloc(na * na + na, sizeof *terms);
        if (!Ma || !Fa || !terms) {
            free(Ma); free(Fa); free(terms);
            goto oom;
        }
        int bad = hs_ld_read_mass(L, hs_ld_get(L, root, "mass"), na, Ma);
        for (size_t j = 0; j < na; j++)
            Fa[j] = zero;
        if (!bad && frc) {
            /* forces are per ambient name */
            if (frc->type == YAML_MAPPING_NODE) {
                const char **an = xcalloc(na, sizeof *an);
                for (size_t j = 0; an && j < na; j++)
                    an[j] = L->amb[j].name;
                bad = !an || hs_ld_check_keys(L, frc, an, na, "'forces' (ambient names)");
                free(an);
                for (size_t j = 0; !bad && j < na; j++) {
                    yaml_node_t *v = hs_ld_get(L, frc, L->amb[j].name);
                    if (v && !(Fa[j] = hs_ld_parse(L, v, SCOPE_MODEL, "a force")))
                        bad = 1;
                }
            } else if (frc->type == YAML_SEQUENCE_NODE && seq_len(frc) == na) {
                size_t j = 0;
                FOR_ITEMS(frc, it) {
                    if (!(Fa[j++] = hs_ld_parse(L, NODE(L, *it), SCOPE_MODEL, "a force"))) {
                        bad = 1;
                        break;
                    }
                }
            } else {
                bad = hs_ytree_error(L->y, L->err, frc, "'forces' must map ambient names "
                                     "to expressions (or list %zu of them)", na);
            }
        }
        size_t nt = 0;
        for (size_t a = 0; !bad && a < na; a++)
            for (size_t b = 0; b < na; b++)
                if (!hs_is_num(Ma[a * na + b], 0))
                    terms[nt++] = hs_mul(d, hs_mul(d, Ma[a * na + b], L->ambV[a]), L->ambV[b]);
        const hs_node *T = hs_mul(d, hs_num(d, 0.5), hs_addn(d, terms, nt));
        for (size_t i = 0; !bad && i < n; i++) {
            nt = 0;
            for (size_t a = 0; a < na; a++)
                terms[nt++] = hs_mul(d, Fa[a], hs_diff(d, L->ambX[a], m->sym_q[i]));
            F[i] = hs_addn(d, terms, nt);
        }
        nt = 0;
        for (size_t a = 0; !bad && a < na; a++)
            terms[nt++] = hs_mul(d, Fa[a], L->ambV[a]);
        m->P_nc = hs_addn(d, terms, nt);
        m->has_nc_forces = frc != NULL;
        free(Ma); free(Fa); free(terms);
        if (bad || L->err->code)
            goto out;
        Lsym = hs_sub(d, T, m->U);
        T0 = velocity_free(L, T);
        if (lagrangian_kernels(L, Lsym, F, hs_ld_get(L, root, "mass")))
            goto out;
    }
    if (!m->P_nc)
        m->P_nc = zero;
    if (Lsym) {
        /* generalized forms: E = T2 + U and the energy function h = T2 - T0 + U
         * obeys dh/dt = -dL/dt + (F + R).v, so P_t = -dL/dt + D T0, which is
         * identically 0 for a time-independent L without a velocity-free T0 */
        m->P_t = hs_add(d, hs_neg(d, hs_diff(d, Lsym, m->sym_t)),
                        hs_total_diff(d, T0, m->sym_t, n, m->sym_q, m->sym_v));
    } else {
        /* Cartesian: P_t = D(T + U) + v.Q - P_nc, with T = v^T M v / 2 and D
         * the total derivative at fixed velocities: dE/dt = D(T + U) + v.M a
         * and M a = Q + R along solutions */
        const hs_node **terms = xcalloc(n * n + 2 * n, sizeof *terms);
        if (!terms)
            goto oom;
        size_t nt = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                if (!hs_is_num(m->M[i * n + j], 0))
                    terms[nt++] = hs_mul(d, m->M[i * n + j],
                                         hs_mul(d, hs_sym(d, m->sym_v[i]), hs_sym(d, m->sym_v[j])));
        const hs_node *E = hs_add(d, hs_mul(d, hs_num(d, 0.5), hs_addn(d, terms, nt)), m->U);
        nt = 0;
        terms[nt++] = hs_total_diff(d, E, m->sym_t, n, m->sym_q, m->sym_v);
        for (size_t i = 0; i < n; i++)
            terms[nt++] = hs_mul(d, hs_sym(d, m->sym_v[i]), m->Q[i]);
        terms[nt++] = hs_neg(d, m->P_nc);
        m->P_t = hs_addn(d, terms, nt);
        free(terms);
    }

    if (hs_ld_read_constraints(L, hs_ld_get(L, root, "constraints")))
        goto out;
    size_t k = m->k;
    /* documented limits: the run keeps a dense copy of G_q (reactions, rank
     * diagnosis) and, for a full mass matrix, dense n x n factors */
    if ((double)k * (double)n > MAX_DENSE) {
        hs_error_set(L->err, HS_EXIT_MODEL, "%s: model too large: %zu coordinates and %zu "
                     "constraints (holosim keeps a dense k x n Jacobian; the limit is "
                     "k*n <= %.0f)", L->y->file, n, k, MAX_DENSE);
        goto out;
    }
    m->G_q = xcalloc(k * n, sizeof *m->G_q);
    m->G_t = xcalloc(k, sizeof *m->G_t);
    m->Gdot = xcalloc(k, sizeof *m->Gdot);
    m->gamma = xcalloc(k, sizeof *m->gamma);
    if (!m->G_q || !m->G_t || !m->Gdot || !m->gamma)
        goto oom;
    for (size_t i = 0; i < k && !hs_dag_failed(d); i++) {
        for (size_t j = 0; j < n; j++)
            m->G_q[i * n + j] = hs_diff(d, m->G[i], m->sym_q[j]);
        m->G_t[i] = hs_diff(d, m->G[i], m->sym_t);
        m->Gdot[i] = hs_total_diff(d, m->G[i], m->sym_t, n, m->sym_q, m->sym_v);
        m->gamma[i] = hs_total_diff(d, m->Gdot[i], m->sym_t, n, m->sym_q, m->sym_v);
    }
    hs_ld_dag_check(L);
    goto out;
oom:
    hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
out:
    free(F);
    return L->err->code;
}
