/* What outputs and events read beyond the model's own names (loader.h).
 *
 * At a state the dynamics computes the accelerations a = q'' and the
 * multipliers Lambda; outputs and events read them as VM inputs of their
 * own (symbols x'' and lambda_NAME, made when first read, so a model that
 * reads none has none).  Everything else they may read is an expression
 * of those and of the kernels, built here symbolically (parameters folded
 * in with the rest at compilation):
 *
 *   R_q  = sum_j dG_j/dq Lambda_j          (the reaction, G_q^T Lambda)
 *   T    = v^T M v / 2 + Tx,  U,  E = T + U,  H = v^T M v / 2 - T0 + U
 *   X''  = D(X_t + DX q') + DX q''         (an ambient name's acceleration)
 *
 * the same quantities as the CSV columns of those names (model.h, whose
 * table says which names outputs and events read; no parameter or define
 * may take one of them, names.c). */
#include "loader.h"

#include <math.h>
#include <string.h>

#include "../util/suggest.h"

/* m->sym_a and m->sym_lam, every entry -1 (no symbol yet). */
static int ensure_syms(loader *L)
{
    hs_model *m = L->m;
    if (!m->sym_a) {
        m->sym_a = xcalloc(m->n, sizeof *m->sym_a);
        if (!m->sym_a)
            return hs_error_nomem(L->err);
        for (size_t i = 0; i < m->n; i++)
            m->sym_a[i] = -1;
    }
    if (!m->sym_lam) {
        m->sym_lam = xcalloc(m->k, sizeof *m->sym_lam);
        if (!m->sym_lam)
            return hs_error_nomem(L->err);
        for (size_t i = 0; i < m->k; i++)
            m->sym_lam[i] = -1;
    }
    return 0;
}

/* The symbol named prefix+name+suffix, made now (a name no parameter can
 * have: a primed one, or lambda_NAME, met only after the parameters). */
static int make_sym(loader *L, const char *prefix, const char *name, const char *suffix)
{
    size_t len = strlen(prefix) + strlen(name) + strlen(suffix) + 1;
    char *s = malloc(len);
    if (!s)
        return -1;
    snprintf(s, len, "%s%s%s", prefix, name, suffix);
    int sym = hs_dag_symbol(L->m->dag, s);
    free(s);
    return sym;
}

static const hs_node *coord_accel(loader *L, size_t i)
{
    hs_model *m = L->m;
    if (ensure_syms(L))
        return NULL;
    if (m->sym_a[i] < 0 && (m->sym_a[i] = make_sym(L, "", m->qname[i], "''")) < 0) {
        hs_error_nomem(L->err);
        return NULL;
    }
    return hs_sym(m->dag, m->sym_a[i]);
}

const hs_node *hs_ld_accel(loader *L, size_t i, int amb)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    if (!amb)
        return coord_accel(L, i);
    /* d/dt of X_t + DX q' = D(X_t + DX q') + sum_j dX/dq_j q_j'' */
    const hs_node *V = L->ambV[i];
    const hs_node *acc = hs_total_diff(d, V, m->sym_t, m->n, m->sym_q, m->sym_v);
    for (size_t j = 0; j < m->n && acc; j++) {
        if (!hs_depends_on(V, m->sym_v[j]))
            continue;
        const hs_node *aj = coord_accel(L, j);
        acc = aj ? hs_add(d, acc, hs_mul(d, hs_diff(d, V, m->sym_v[j]), aj)) : NULL;
    }
    return acc;
}

/* v^T M v / 2 from the symbolic M (built once, on first use). */
static const hs_node *half_vMv(loader *L)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n;
    if (L->vMv2)
        return L->vMv2;
    const hs_node *s = hs_num(d, 0);
    for (size_t i = 0; i < n; i++)
        for (size_t j = m->M ? 0 : i; j <= i; j++) {         /* M_diag: its diagonal */
            const hs_node *Mij = hs_model_M(m, i, j);
            if (hs_is_num(Mij, 0))
                continue;
            const hs_node *vv = hs_mul(d, hs_sym(d, m->sym_v[i]), hs_sym(d, m->sym_v[j]));
            /* the diagonal once with 1/2, each pair below it twice with 1/2 */
            s = hs_add(d, s, hs_mul(d, hs_mul(d, hs_num(d, i == j ? 0.5 : 1.0), Mij), vv));
        }
    return L->vMv2 = s;
}

/* lambda_NAME of constraint j. */
static const hs_node *multiplier(loader *L, size_t j)
{
    hs_model *m = L->m;
    if (ensure_syms(L))
        return NULL;
    if (m->sym_lam[j] < 0 && (m->sym_lam[j] = make_sym(L, "lambda_", m->cname[j], "")) < 0) {
        hs_error_nomem(L->err);
        return NULL;
    }
    return hs_sym(m->dag, m->sym_lam[j]);
}

const hs_node *hs_ld_derived(loader *L, const char *s, size_t len)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t i;
    const hs_quantity *q = hs_ld_quantity(L, s, len, &i);
    if (!q || !(q->flags & HS_QTY_DERIVED))
        return NULL;
    switch (q->id) {
    case HS_QTY_U:
        return m->U;
    case HS_QTY_TKIN:
        return hs_add(d, half_vMv(L), m->Tx);
    case HS_QTY_E:
        return hs_add(d, hs_add(d, half_vMv(L), m->Tx), m->U);
    case HS_QTY_H:
        return hs_add(d, hs_sub(d, half_vMv(L), m->T0), m->U);
    case HS_QTY_LAMBDA:
        return multiplier(L, i);
    case HS_QTY_R: {
        const hs_node *R = hs_num(d, 0);
        for (size_t j = 0; j < m->k && R; j++) {
            const hs_node *g = hs_model_G_q(m, j, i);
            if (!g || hs_is_num(g, 0))
                continue;
            const hs_node *lam = multiplier(L, j);
            R = lam ? hs_add(d, R, hs_mul(d, g, lam)) : NULL;
        }
        return R;
    }
    default:                /* x'': a coordinate with two primes (read.c) */
        return NULL;
    }
}

/* ---------- events ---------- */
