/* `holosim check`: load, compile, the consistency and rank report. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../consistency/consistency.h"
#include "../dynamics/dynamics.h"
#include "../integrate/integrate.h"

int hs_cli_check(int argc, char **argv)
{
    int rc;
    hs_model *m = hs_cli_model(argc, argv, hs_usage_check, CMD_CHECK, "check", &rc);
    if (!m || hs_cli_check_method(m, &rc))
        return rc;
    hs_error err;
    hs_error_init(&err);
    static const char *const masses[] = { "constant diagonal", "diagonal", "full" };
    char sizes[96];
    printf("model: %s%s%s\n", m->file, m->name[0] ? " -- " : "", m->name);
    printf("form: %s; %s, %zu parameter%s\n", hs_model_form_name(m),
           hs_model_sizes(m, sizes, sizeof sizes), m->npar - m->ninput,
           m->npar - m->ninput == 1 ? "" : "s");
    for (size_t j = 0; j < m->ninput; j++)      /* `inputs`: each with its source */
        printf("%s %s = %s\n", j ? "      " : "inputs:", m->pname[m->input0 + j],
               m->input_desc[j]);
    int semidef = 0;             /* massless coordinates (the load allowed them) */
    if (m->mass_kind == HS_MASS_CONST_DIAG)
        for (size_t i = 0; i < m->n; i++)
            semidef |= m->Mconst[i] == 0;
    if (m->chain)
        printf("metric d2T/dv2: not formed (a structured embedding), positive definite "
               "at t0\n");
    else
        printf("mass matrix: %s, %s at t0\n", masses[m->mass_kind],
               semidef ? "singular (massless coordinates held by the constraints)"
                       : "positive definite");
    if (m->k)
        printf("G_q: %zu structural non-zeros of %zu\n", m->nnz, m->n * m->k);
    else
        printf("constraints: none (an unconstrained system: no multipliers, no residuals)\n");
    if (m->chain)
        printf("dynamics: structured embedding, %zu internal unknowns (the defines the "
               "embedding reads), %zu local derivatives: a sparse solve, not the dense metric\n",
               m->chain->nz, m->chain->nb);
    printf("compiled: %zu expression nodes; %zu + %zu + %zu bytecode instructions "
           "(dynamics, output, projection)\n", hs_dag_nnodes(m->dag),
           hs_prog_ninstr(m->chain ? m->chain->prog : m->prog_dyn),
           hs_prog_ninstr(m->prog_aux) +
           hs_prog_ninstr(m->prog_out) + hs_prog_ninstr(m->prog_ev), hs_prog_ninstr(m->prog_pos));
    hs_work *w = hs_work_new(m);
    double *q = malloc(m->n * sizeof *q), *v = malloc(m->n * sizeof *v);
    double *G = calloc(m->k + 1, sizeof *G), *Gt = calloc(m->k + 1, sizeof *Gt);
    if (!w || !q || !v || !G || !Gt) {
        rc = hs_cli_nomem();
        goto out;
    }
    memcpy(q, m->q0, m->n * sizeof *q);
    memcpy(v, m->v0, m->n * sizeof *v);
    printf("t0 = %.17g\n", m->t0);
    if (m->k) {
        if (hs_dyn_contacts_open(m, w, m->t0, q, v) ||
            hs_dyn_friction_start(m, w, m->t0, q, v) ||
            hs_dyn_constraints_sparse(m, w, m->t0, q, G, Gt)) {
            rc = hs_cli_fail(hs_work_err(w));
            goto out;
        }
        printf("constraint residuals at t0 (tolerance %g):\n", m->set.tol);
        for (size_t i = 0; i < m->k; i++) {
            double s = Gt[i];   /* + G_q v over the row's non-zeros, in column order */
            for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++)
                s += hs_work_con_Gq(m, w)[z] * v[m->gq_col[z]];
            if (i >= m->fric0)        /* a friction element: sliding or sticking */
                printf("  %-16s slip = %-12.6g  slip rate = %-12.6g %s\n", m->cname[i],
                       G[i] + hs_dyn_friction_offset(w, i), s,
                       hs_dyn_is_released(w, i) ? "sliding" : "sticking");
            else if (i >= m->contact0)      /* a contact: open or closed at t0 */
                printf("  %-16s gap = %-12.6g  gap rate = %-12.6g %s\n", m->cname[i], G[i],
                       s, hs_dyn_is_released(w, i) ? "open" : "closed");
            else
                printf("  %-16s G = %-12.6g  G_t + G_q v = %-12.6g %s\n", m->cname[i], G[i], s,
                       fabs(G[i]) <= m->set.tol && fabs(s) <= m->set.tol ? "ok" : "VIOLATED");
        }
        char msg[800];
        size_t rank = hs_cons_rank(m, w, m->t0, q, msg, sizeof msg, NULL);
        if (rank == m->k && msg[0])          /* too large to compute (rank.c) */
            printf("rank of G_q at t0: not certified (%s)\n", msg);
        else
            printf("rank of G_q at t0: %zu of %zu%s%s\n", rank, m->k, rank < m->k ? ": " : "",
                   msg);
        if (rank < m->k)
            printf("redundant constraints: %s\n", m->set.strict_rank ? "refused "
                   "(consistency.dependent: reject)" : "allowed; lambda_* are the "
                   "minimum-norm multipliers (least Euclidean norm of all that give the "
                   "same reactions)");
    }
    rc = hs_cons_start(m, w, q, v, stdout, &err);
    if (rc) {
        hs_cli_fail(&err);
    } else {
        printf("initial data: consistent%s\n", memcmp(q, m->q0, m->n * sizeof *q) ||
               memcmp(v, m->v0, m->n * sizeof *v) ? " after projection" : "");
        if (hs_dyn_accel(m, w, m->t0, q, v, NULL, NULL) || hs_dyn_aux(m, w, m->t0, q, v))
            rc = hs_cli_fail(hs_work_err(w));
        else {  /* E in the frame of the model's mass (an embedding: the ambient one) */
            hs_work_stats st = hs_work_get_stats(w);
            printf("%sE0 = %.17g\n", !m->k ? "" : m->chain ? "the structured saddle-point "
                   "system with the constraints' rows regular at t0; " : st.augmented ? "M singular at t0: "
                   "solved through [M G_q^T; G_q 0]; " : st.robust ? "C = G_q M^-1 G_q^T "
                   "singular or nearly so at t0: the rank-revealing solve; " : st.nskip ?
                   "C = G_q M^-1 G_q^T singular at t0: the Cholesky skips the dependent "
                   "rows; " : "C = G_q M^-1 G_q^T positive definite at t0; ",
                   hs_dyn_kinetic(m, w) + hs_work_aux(w)[m->off_U]);
        }
    }
out:
    free(q);
    free(v);
    free(G);
    free(Gt);
    hs_work_free(w);
    hs_model_free(m);
    return rc;
}
