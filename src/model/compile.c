/* Kernels into bytecode programs (loader.h): parameter values folded in,
 * the mass structure (constant diagonal, diagonal, full) and the sparsity
 * of G_q found on the folded kernels; the mass matrix checked at t0. */
#include "loader.h"

#include <math.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

/* One compilation: the fold map (parameter symbol -> its value) and the
 * list of roots of the program being assembled. */
typedef struct cbuild {
    loader *L;
    const hs_node **map;        /* [nsym] */
    size_t nsym;
    const hs_node **r;          /* roots of the program being built */
    size_t nr;
    const hs_node **Gq;         /* [k*n] folded G_q */
} cbuild;

static const hs_node *fold(cbuild *C, const hs_node *e)
{
    return hs_subst(C->L->m->dag, e, C->map, C->nsym);
}

/* The mass structure from the folded M: constant diagonal (kept as numbers,
 * no program output), diagonal (n outputs) or full (the lower triangle). */
static int mass_outputs(cbuild *C)
{
    hs_model *m = C->L->m;
    size_t n = m->n;
    const hs_node **Mf = xcalloc(n * n, sizeof *Mf);
    if (!Mf)
        return -1;
    int diag = 1, constant = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            Mf[i * n + j] = fold(C, m->M[i * n + j]);
            if (i != j && !hs_is_num(Mf[i * n + j], 0))
                diag = 0;
            if (i == j && Mf[i * n + j]->kind != HS_NUM)
                constant = 0;
        }
    m->mass_kind = !diag ? HS_MASS_FULL : constant ? HS_MASS_CONST_DIAG : HS_MASS_DIAG;
    m->off_M = C->nr;
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        m->Mconst = xcalloc(n, sizeof *m->Mconst);
        if (!m->Mconst) {
            free(Mf);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            m->Mconst[i] = Mf[i * n + i]->value;
    } else if (m->mass_kind == HS_MASS_DIAG) {
        for (size_t i = 0; i < n; i++)
            C->r[C->nr++] = Mf[i * n + i];
    } else {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++)
                C->r[C->nr++] = Mf[i * n + j];
    }
    free(Mf);
    return 0;
}

/* The sparsity of G_q from the folded Jacobian: gq_start, gq_col, nnz. */
static int jacobian_structure(cbuild *C)
{
    hs_model *m = C->L->m;
    size_t n = m->n, k = m->k;
    C->Gq = xcalloc(k * n, sizeof *C->Gq);
    m->gq_start = xcalloc(k + 1, sizeof *m->gq_start);
    if (!C->Gq || !m->gq_start)
        return -1;
    m->nnz = 0;
    for (size_t i = 0; i < k * n; i++) {
        C->Gq[i] = fold(C, m->G_q[i]);
        if (!hs_is_num(C->Gq[i], 0))
            m->nnz++;
    }
    m->gq_col = xcalloc(m->nnz, sizeof *m->gq_col);
    if (!m->gq_col)
        return -1;
    size_t z = 0;
    for (size_t i = 0; i < k; i++) {
        m->gq_start[i] = (int)z;
        for (size_t j = 0; j < n; j++)
            if (!hs_is_num(C->Gq[i * n + j], 0))
                m->gq_col[z++] = (int)j;
    }
    m->gq_start[k] = (int)z;
    return 0;
}

/* Append the folded kernels e[0..cnt-1] to the roots. */
static void push(cbuild *C, const hs_node *const *e, size_t cnt)
{
    for (size_t i = 0; i < cnt; i++)
        C->r[C->nr++] = fold(C, e[i]);
}

/* Append the structural non-zeros of the folded G_q, row by row. */
static void push_gq(cbuild *C)
{
    const hs_model *m = C->L->m;
    for (size_t i = 0; i < m->k * m->n; i++)
        if (!hs_is_num(C->Gq[i], 0))
            C->r[C->nr++] = C->Gq[i];
}

/* prog_dyn: M | Q | G_q non-zeros | gamma | P_nc | P_t | [bT] | [G | Gdot]. */
static int compile_dyn(cbuild *C)
{
    hs_model *m = C->L->m;
    size_t n = m->n, k = m->k;
    C->nr = 0;
    if (mass_outputs(C))
        return hs_error_set(C->L->err, HS_EXIT_MODEL, "out of memory");
    m->off_Q = C->nr;
    push(C, m->Q, n);
    if (jacobian_structure(C))
        return hs_error_set(C->L->err, HS_EXIT_MODEL, "out of memory");
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
    if (hs_ld_dag_check(C->L))
        return C->L->err->code;
    m->prog_dyn = hs_prog_compile(m->dag, C->r, C->nr, C->L->err);
    return m->prog_dyn ? 0 : C->L->err->code;
}

/* prog_pos: G | G_q non-zeros | G_t (projection, rank). */
static int compile_pos(cbuild *C)
{
    hs_model *m = C->L->m;
    C->nr = 0;
    push(C, m->G, m->k);
    push_gq(C);
    push(C, m->G_t, m->k);
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

/* prog_out: the outputs; prog_ev: the event functions. */
static int compile_out_ev(cbuild *C)
{
    hs_model *m = C->L->m;
    C->nr = 0;
    push(C, m->out, m->nout);
    m->out_dyn = reads_dynamics(C);
    if (hs_ld_dag_check(C->L) || !(m->prog_out = hs_prog_compile(m->dag, C->r, C->nr,
                                                                 C->L->err)))
        return C->L->err->code;
    C->nr = 0;
    push(C, m->evf, m->nev);
    m->ev_dyn = reads_dynamics(C);
    if (hs_ld_dag_check(C->L) || !(m->prog_ev = hs_prog_compile(m->dag, C->r, C->nr,
                                                               C->L->err)))
        return C->L->err->code;
    return 0;
}

int hs_ld_compile(loader *L)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n, k = m->k;
    cbuild C = { L, NULL, (size_t)hs_dag_nsymbols(d), NULL, 0, NULL };
    size_t cap = n * n + 5 * n + 6 * k + k * n + m->nout + m->nev + 2 * m->namb + 10;
    C.map = xcalloc(C.nsym, sizeof *C.map);
    C.r = xcalloc(cap, sizeof *C.r);
    int rc = 0;
    if (!C.map || !C.r)
        rc = hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    for (size_t j = 0; !rc && j < m->npar; j++)
        C.map[m->sym_p[j]] = hs_num(d, m->pval[j]);
    if (!rc)
        rc = compile_dyn(&C);
    if (!rc)
        rc = compile_pos(&C);
    if (!rc)
        rc = compile_aux(&C);
    if (!rc)
        rc = compile_out_ev(&C);
    m->nin = C.nsym;
    free(C.map);
    free(C.r);
    free(C.Gq);
    return rc;
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
