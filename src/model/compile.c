/* Kernels into bytecode programs (loader.h): parameter values folded in,
 * the mass structure (constant diagonal, diagonal, full) and the sparsity
 * of G_q found on the folded kernels; the mass matrix checked at t0. */
#include "loader.h"

#include <math.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

/* ---------- compile ---------- */

int hs_ld_compile(loader *L)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n, k = m->k;
    size_t nsym = (size_t)hs_dag_nsymbols(d);
    const hs_node **map = xcalloc(nsym, sizeof *map);
    size_t cap = n * n + 4 * n + 6 * k + k * n + m->nout + m->namb + 8;
    const hs_node **r = xcalloc(cap, sizeof *r);
    if (!map || !r) {
        free(map);
        free(r);
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    }
    for (size_t j = 0; j < m->npar; j++)
        map[m->sym_p[j]] = hs_num(d, m->pval[j]);
#define FOLD(e) hs_subst(d, (e), map, nsym)

    /* mass structure */
    const hs_node **Mf = xcalloc(n * n, sizeof *Mf);
    if (!Mf)
        goto oom;
    int diag = 1, constant = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            Mf[i * n + j] = FOLD(m->M[i * n + j]);
            if (i != j && !hs_is_num(Mf[i * n + j], 0))
                diag = 0;
            if (i == j && Mf[i * n + j]->kind != HS_NUM)
                constant = 0;
        }
    m->mass_kind = !diag ? HS_MASS_FULL : constant ? HS_MASS_CONST_DIAG : HS_MASS_DIAG;
    size_t nr = 0;
    m->off_M = nr;
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        m->Mconst = xcalloc(n, sizeof *m->Mconst);
        if (!m->Mconst)
            goto oom;
        for (size_t i = 0; i < n; i++)
            m->Mconst[i] = Mf[i * n + i]->value;
    } else if (m->mass_kind == HS_MASS_DIAG) {
        for (size_t i = 0; i < n; i++)
            r[nr++] = Mf[i * n + i];
    } else {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++)
                r[nr++] = Mf[i * n + j];
    }
    free(Mf);
    m->off_Q = nr;
    for (size_t i = 0; i < n; i++)
        r[nr++] = FOLD(m->Q[i]);
    /* sparsity of G_q from the folded symbolic Jacobian */
    const hs_node **Gq = xcalloc(k * n, sizeof *Gq);
    m->gq_start = xcalloc(k + 1, sizeof *m->gq_start);
    if (!Gq || !m->gq_start) {
        free(Gq);
        goto oom;
    }
    m->nnz = 0;
    for (size_t i = 0; i < k * n; i++) {
        Gq[i] = FOLD(m->G_q[i]);
        if (!hs_is_num(Gq[i], 0))
            m->nnz++;
    }
    m->gq_col = xcalloc(m->nnz, sizeof *m->gq_col);
    if (!m->gq_col) {
        free(Gq);
        goto oom;
    }
    m->off_Gq = nr;
    size_t z = 0;
    for (size_t i = 0; i < k; i++) {
        m->gq_start[i] = (int)z;
        for (size_t j = 0; j < n; j++)
            if (!hs_is_num(Gq[i * n + j], 0)) {
                m->gq_col[z++] = (int)j;
                r[nr++] = Gq[i * n + j];
            }
    }
    m->gq_start[k] = (int)z;
    m->off_gamma = nr;
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->gamma[i]);
    m->off_Pd = nr;
    r[nr++] = FOLD(m->P_nc);
    m->off_Pt = nr;
    r[nr++] = FOLD(m->P_t);
    m->off_Gb = m->off_Gdotb = nr;
    if (m->set.stabilize == HS_STAB_BAUMGARTE) {
        for (size_t i = 0; i < k; i++)
            r[nr++] = FOLD(m->G[i]);
        m->off_Gdotb = nr;
        for (size_t i = 0; i < k; i++)
            r[nr++] = FOLD(m->Gdot[i]);
    }
    m->ndyn = nr;
    if (hs_ld_dag_check(L)) {
        free(Gq);
        goto out;
    }
    m->prog_dyn = hs_prog_compile(d, r, nr, L->err);
    if (!m->prog_dyn) {
        free(Gq);
        goto out;
    }

    /* position program: G | G_q non-zeros | G_t */
    nr = 0;
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->G[i]);
    for (size_t i = 0; i < k * n; i++)
        if (!hs_is_num(Gq[i], 0))
            r[nr++] = Gq[i];
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->G_t[i]);
    free(Gq);
    m->prog_pos = hs_prog_compile(d, r, nr, L->err);
    if (!m->prog_pos)
        goto out;

    /* aux program: G | Gdot | G_t | U | P_nc | outputs | ambient */
    nr = 0;
    m->off_G = nr;
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->G[i]);
    m->off_Gdot = nr;
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->Gdot[i]);
    m->off_Gt = nr;
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->G_t[i]);
    m->off_U = nr;
    r[nr++] = FOLD(m->U);
    m->off_Pnc = nr;
    r[nr++] = FOLD(m->P_nc);
    m->off_out = nr;
    for (size_t i = 0; i < m->nout; i++)
        r[nr++] = FOLD(m->out[i]);
    m->off_amb = nr;
    for (size_t i = 0; i < m->namb; i++)
        r[nr++] = FOLD(m->amb[i]);
    m->naux = nr;
    if (hs_ld_dag_check(L))
        goto out;
    m->prog_aux = hs_prog_compile(d, r, nr, L->err);
    m->nin = nsym;
    goto out;
oom:
    hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
out:
#undef FOLD
    free(map);
    free(r);
    return L->err->code;
}

/* Mass positive definite at the initial state (exit 2 otherwise). */
int hs_ld_check_mass_at_start(loader *L, yaml_node_t *where)
{
    hs_model *m = L->m;
    size_t n = m->n;
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        for (size_t i = 0; i < n; i++)
            if (!(m->Mconst[i] > 0))
                return hs_ytree_error(L->y, L->err, where, "%s is not positive definite: "
                                      "diagonal entry %zu (%s) is %g",
                                      m->form == HS_FORM_CARTESIAN ? "mass matrix"
                                                                   : "metric d2T/dv2",
                                      i + 1, m->qname[i], m->Mconst[i]);
        return 0;
    }
    double *in = xcalloc(m->nin, sizeof *in);
    double *regs = xcalloc(hs_prog_nregs(m->prog_dyn), sizeof *regs);
    double *out = xcalloc(m->ndyn, sizeof *out);
    gsl_matrix *M = gsl_matrix_alloc(n, n);
    int rc = 0;
    if (!in || !regs || !out || !M) {
        rc = hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
        goto done;
    }
    in[m->sym_t] = m->t0;
    for (size_t i = 0; i < n; i++) {
        in[m->sym_q[i]] = m->q0[i];
        in[m->sym_v[i]] = m->v0[i];
    }
    hs_prog_eval(m->prog_dyn, in, regs, out);
    const char *what = m->form == HS_FORM_CARTESIAN ? "mass matrix" : "metric d2T/dv2";
    if (m->mass_kind == HS_MASS_DIAG) {
        for (size_t i = 0; i < n; i++)
            if (!(out[m->off_M + i] > 0)) {
                rc = hs_ytree_error(L->y, L->err, where, "%s is not positive definite at "
                                    "the initial state: entry %zu (%s) is %g", what, i + 1,
                                    m->qname[i], out[m->off_M + i]);
                goto done;
            }
    } else {
        size_t z = m->off_M;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++) {
                gsl_matrix_set(M, i, j, out[z]);
                gsl_matrix_set(M, j, i, out[z++]);
            }
        int bad = 0;
        for (size_t i = 0; i < n * n; i++)
            if (!isfinite(M->data[i]))
                bad = 1;
        if (bad || gsl_linalg_cholesky_decomp1(M) != GSL_SUCCESS)
            rc = hs_ytree_error(L->y, L->err, where, "%s is not positive definite at the "
                                "initial state (t=%g)%s", what, m->t0,
                                m->form == HS_FORM_CARTESIAN ? "" :
                                ": the coordinates are singular there");
    }
done:
    free(in);
    free(regs);
    free(out);
    if (M)
        gsl_matrix_free(M);
    return rc;
}

/* ---------- top level ---------- */
