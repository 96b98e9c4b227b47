/* The kernels of the analysis (internal.h): exact symbolic derivatives of
 * the model's kernels (hs_diff, parameter values folded in with hs_subst
 * as model/compile.c does), two programs, evaluation into dense matrices;
 * and the check that the model does not change with time. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>

#include "../io/fmt.h"
#include "../linalg/linalg.h"

/* One build: the fold maps and the roots of the program being assembled. */
typedef struct build {
    hs_an *a;
    hs_dag *d;
    size_t nsym;
    const hs_node **fold;       /* [nsym] parameter -> its value */
    const hs_node **rest;       /* [nsym] the same, and every velocity -> 0 */
    const hs_node **roots;
    size_t nroots, cap;
    hs_error *err;
} build;

static int push(build *b, const hs_node *e)
{
    if (b->nroots == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        const hs_node **r = realloc(b->roots, cap * sizeof *r);
        if (!r)
            return -1;
        b->roots = r;
        b->cap = cap;
    }
    b->roots[b->nroots++] = e;
    return 0;
}

/* Append entry (r, c, g) to a list whose capacity doubles. */
static int list_push(hs_ak_list *l, size_t *cap, int r, int c, int g)
{
    if (l->cnt == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        int *nr = realloc(l->r, nc * sizeof *nr);
        if (nr)
            l->r = nr;
        int *ncl = nr ? realloc(l->c, nc * sizeof *ncl) : NULL;
        if (ncl)
            l->c = ncl;
        int *ng = ncl ? realloc(l->g, nc * sizeof *ng) : NULL;
        if (!ng)
            return -1;
        l->g = ng;
        *cap = nc;
    }
    l->r[l->cnt] = r;
    l->c[l->cnt] = c;
    l->g[l->cnt++] = g;
    return 0;
}

/* A derivative kernel: a root and its place in a list (skipped when it is
 * the constant 0). */
static int entry(build *b, hs_ak_list *l, size_t *cap, const hs_node *e, int r, int c, int g)
{
    if (hs_is_num(e, 0))
        return 0;
    return push(b, e) || list_push(l, cap, r, c, g) ? -1 : 0;
}

static void list_free(hs_ak_list *l)
{
    free(l->r);
    free(l->c);
    free(l->g);
}

/* ---------- the time check ---------- */

/* A kernel entry that mentions t after folding: M (i, j), Q (i) or G (i). */
enum { TK_M, TK_Q, TK_G };
typedef struct tdep {
    int kind;
    size_t i, j;
    const hs_node *e;           /* the kernel as the model keeps it */
} tdep;

/* The node of e that has t as a direct argument (the innermost place the
 * time enters), following the first argument that depends on t. */
static const hs_node *time_node(const hs_node *e, int t)
{
    for (int guard = 0; guard <= HS_MAX_DEPTH && e->nargs; guard++) {
        const hs_node *next = NULL;
        for (uint32_t i = 0; i < e->nargs; i++)
            if (e->args[i]->kind == HS_SYM && e->args[i]->sym == t)
                return e;
        for (uint32_t i = 0; i < e->nargs && !next; i++)
            if (hs_depends_on(e->args[i], t))
                next = e->args[i];
        if (!next)
            break;
        e = next;
    }
    return e;
}

/* Exit 2 at the place the time enters the kernel entry td. */
static int time_error(build *b, const tdep *td)
{
    hs_model *m = b->a->m;
    const hs_node *at = time_node(td->e, m->sym_t);
    char what[160], sub[72];
    size_t len = hs_format(m->dag, at, sub, sizeof sub);
    if (len >= sizeof sub)
        memcpy(sub + sizeof sub - 4, "...", 4);
    if (td->kind == TK_M)
        snprintf(what, sizeof what, "the %s M[%s,%s]", m->form == HS_FORM_CARTESIAN
                 ? "mass matrix" : "metric d2T/dv2 of the reduced Lagrangian",
                 m->qname[td->i], m->qname[td->j]);
    else if (td->kind == TK_Q)
        snprintf(what, sizeof what, "the generalized force Q[%s] (%s)", m->qname[td->i],
                 m->form == HS_FORM_CARTESIAN ? "forces and potential"
                 : "from the reduced Lagrangian and the forces");
    else
        snprintf(what, sizeof what, "constraint '%s' (a moving, rheonomic constraint)",
                 m->cname[td->i]);
    hs_error_set(b->err, HS_EXIT_MODEL, "%s depends on time through '%s': a model that "
                 "changes with time has no equilibrium (equilibrium and modes need M, Q "
                 "and G independent of t; for a steadily turning system, write the model in a "
                 "chart that turns with it, as models/hoop_equilibrium.yaml does, and its "
                 "relative equilibrium is an equilibrium there)", what, sub);
    hs_srcpos p = at->pos;
    if (p.src < 0 && td->kind == TK_G)
        p = m->cpos[td->i];
    if (p.src >= 0)
        hs_model_place(m, p, b->err);
    else
        snprintf(b->err->file, sizeof b->err->file, "%s", m->file);
    return HS_EXIT_MODEL;
}

#define NT 5        /* times per sample point */
#define TIME_TOL 1e-9

/* Evaluate the roots (the entries td) at two points (q, v) and NT times
 * each; an entry whose values vary by more than TIME_TOL of their size
 * depends on time.  (A moving chart often leaves t in the kernels as
 * sin(w t)^2 + cos(w t)^2 and the like: the reduced Lagrangian is time-
 * independent, and that variation is round-off.) */
static int time_vary(build *b, const tdep *td, size_t nt)
{
    static const double toff[NT] = { 0, 0.3183098861837907, 1.4142135623730951,
                                     2.718281828459045, 4.669201609102990 };
    hs_model *m = b->a->m;
    hs_prog *p = hs_prog_compile(b->d, b->roots, b->nroots, b->err);
    if (!p)
        return b->err->code;
    double *in = calloc(b->nsym, sizeof *in), *regs = calloc(hs_prog_nregs(p) + 1, sizeof *regs);
    double *out = calloc(nt, sizeof *out), *first = calloc(nt, sizeof *first);
    double *big = calloc(nt, sizeof *big), *var = calloc(nt, sizeof *var);
    int *seen = calloc(nt, sizeof *seen), *ok = calloc(nt, sizeof *ok), rc = 0;
    if (!in || !regs || !out || !first || !big || !var || !seen || !ok) {
        rc = hs_error_nomem(b->err);
        goto done;
    }
    for (size_t j = 0; j < m->npar; j++)
        in[m->sym_p[j]] = m->pval[j];
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < m->n; i++) {
            double f = fmod(0.6180339887498949 * (double)(i + 1), 1.0);
            in[m->sym_q[i]] = m->q0[i] + (s ? 0.05 * (1 + f) : 0);
            in[m->sym_v[i]] = m->v0[i] + (i % 2 ? -0.1 : 0.1) * (1 + f) * (s + 1);
        }
        for (size_t e = 0; e < nt; e++)
            seen[e] = 0;
        for (int j = 0; j < NT; j++) {
            in[m->sym_t] = m->t0 + toff[j];
            hs_prog_eval(p, in, regs, out);
            for (size_t e = 0; e < nt; e++) {
                if (!isfinite(out[e]))
                    continue;
                if (!seen[e]++)
                    first[e] = out[e];
                big[e] = fmax(big[e], fabs(out[e]));
                var[e] = fmax(var[e], fabs(out[e] - first[e]));
            }
        }
        for (size_t e = 0; e < nt; e++)
            ok[e] += seen[e] >= 2;
    }
    /* no two finite values at either point: cannot tell, take the time
     * dependence as real */
    for (size_t e = 0; e < nt && !rc; e++)
        if (!ok[e] || var[e] > TIME_TOL * big[e])
            rc = time_error(b, &td[e]);
done:
    hs_prog_free(p);
    free(in); free(regs); free(out); free(first); free(big); free(var); free(seen); free(ok);
    return rc;
}

/* Refuse a model whose M, Q or G depend on t (exit 2, positioned). */
static int time_check(build *b)
{
    hs_model *m = b->a->m;
    size_t n = m->n, k = m->k, nt = 0;
    tdep *td = calloc((m->M ? n * (n + 1) / 2 : n) + n + k, sizeof *td);
    if (!td)
        return hs_error_nomem(b->err);
    b->nroots = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t j = m->M ? 0 : i; j <= i && !rc; j++) {     /* M_diag: its diagonal */
            const hs_node *f = hs_subst(b->d, hs_model_M(m, i, j), b->fold, b->nsym);
            if (hs_depends_on(f, m->sym_t)) {
                td[nt++] = (tdep){ TK_M, i, j, hs_model_M(m, i, j) };
                rc = push(b, f);
            }
        }
    for (size_t i = 0; i < n + k && !rc; i++) {
        const hs_node *e = i < n ? m->Q[i] : m->G[i - n];
        const hs_node *f = hs_subst(b->d, e, b->fold, b->nsym);
        if (hs_depends_on(f, m->sym_t)) {
            td[nt++] = (tdep){ i < n ? TK_Q : TK_G, i < n ? i : i - n, 0, e };
            rc = push(b, f);
        }
    }
    if (rc)
        rc = hs_error_nomem(b->err);
    else if (nt)
        rc = time_vary(b, td, nt);
    free(td);
    return rc;
}

/* ---------- the derivative kernels ---------- */

/* One row of G_q: its entries that are not 0, by column ascending. */
typedef struct gq_entry {
    size_t c;
    const hs_node *e;
} gq_entry;

/* The Hessian entries d2G_j/dq_r dq_c (r >= c) of row j: only the
 * columns the row's gradient uses, in the order of (r, c) ascending. */
static int hessian_row(build *b, gq_entry *row, size_t len, size_t j, size_t *chg)
{
    hs_an *a = b->a;
    for (size_t i = 1; i < len; i++)             /* a few entries: insertion sort */
        for (size_t t = i; t > 0 && row[t].c < row[t - 1].c; t--) {
            gq_entry x = row[t];
            row[t] = row[t - 1];
            row[t - 1] = x;
        }
    int rc = 0;
    for (size_t r = 0; r < len && !rc; r++)
        for (size_t c = 0; c <= r && !rc; c++)
            rc = entry(b, &a->hg, chg, hs_diff(b->d, row[r].e, a->m->sym_q[row[c].c]),
                       (int)row[r].c, (int)row[c].c, (int)j);
    return rc;
}

/* prog_eq: Q(q,0) | G | G_q | dQ(q,0)/dq | d2G_j/dq2 (r >= c).  No k x n
 * array: G_q is kept by rows, as the model stores it. */
static int build_eq(build *b)
{
    hs_an *a = b->a;
    hs_model *m = a->m;
    hs_dag *d = b->d;
    size_t n = m->n, k = m->k, cgq = 0, cqq = 0, chg = 0, widest = 1;
    for (size_t j = 0; j < k; j++)
        if (m->G_q_start[j + 1] - m->G_q_start[j] > widest)
            widest = m->G_q_start[j + 1] - m->G_q_start[j];
    const hs_node **Gq = calloc(m->G_q_start[k] + 1, sizeof *Gq);
    gq_entry *row = calloc(widest, sizeof *row);
    unsigned char *used = calloc(b->nsym, 1);
    int rc = !Gq || !used || !row;
    b->nroots = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = push(b, hs_subst(d, m->Q[i], b->rest, b->nsym));
    a->off_G = b->nroots;
    for (size_t j = 0; j < k && !rc; j++)
        rc = push(b, hs_subst(d, m->G[j], b->fold, b->nsym));
    a->off_Gq = b->nroots;
    for (size_t j = 0; j < k && !rc; j++)
        for (size_t z = m->G_q_start[j]; z < m->G_q_start[j + 1] && !rc; z++) {
            Gq[z] = hs_subst(d, m->G_q_nz[z], b->fold, b->nsym);
            rc = entry(b, &a->gq, &cgq, Gq[z], (int)j, (int)m->G_q_col[z], 0);
        }
    a->off_Qq = b->nroots;
    for (size_t i = 0; i < n && !rc; i++) {
        const hs_node *Q0 = b->roots[i];
        memset(used, 0, b->nsym);
        hs_symbols_used(Q0, used, b->nsym);
        for (size_t c = 0; c < n && !rc; c++)
            if (used[m->sym_q[c]])
                rc = entry(b, &a->qq, &cqq, hs_diff(d, Q0, m->sym_q[c]), (int)i, (int)c, 0);
    }
    a->off_Hg = b->nroots;
    for (size_t j = 0; j < k && !rc; j++) {
        size_t len = 0;
        for (size_t z = m->G_q_start[j]; z < m->G_q_start[j + 1]; z++)
            if (!hs_is_num(Gq[z], 0))
                row[len++] = (gq_entry){ m->G_q_col[z], Gq[z] };
        rc = hessian_row(b, row, len, j, &chg);
    }
    a->neq = b->nroots;
    free(Gq);
    free(row);
    free(used);
    if (rc)
        return hs_error_nomem(b->err);
    return 0;
}

/* prog_lin: M (lower triangle) | dQ/dv at v = 0. */
static int build_lin(build *b)
{
    hs_an *a = b->a;
    hs_model *m = a->m;
    hs_dag *d = b->d;
    size_t n = m->n, cmm = 0, cqv = 0;
    unsigned char *used = calloc(b->nsym, 1);
    int rc = !used;
    b->nroots = 0;
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t j = m->M ? 0 : i; j <= i && !rc; j++)
            rc = entry(b, &a->mm, &cmm, hs_subst(d, hs_model_M(m, i, j), b->rest, b->nsym),
                       (int)i, (int)j, 0);
    a->off_Qv = b->nroots;
    for (size_t i = 0; i < n && !rc; i++) {
        const hs_node *Qf = hs_subst(d, m->Q[i], b->fold, b->nsym);
        memset(used, 0, b->nsym);
        hs_symbols_used(Qf, used, b->nsym);
        for (size_t c = 0; c < n && !rc; c++)
            if (used[m->sym_v[c]])
                rc = entry(b, &a->qv, &cqv, hs_subst(d, hs_diff(d, Qf, m->sym_v[c]), b->rest,
                                                     b->nsym), (int)i, (int)c, 0);
    }
    a->nlin = b->nroots;
    free(used);
    if (rc)
        return hs_error_nomem(b->err);
    return 0;
}

/* A derivative that could not be formed (a power of a negative base, a
 * size limit): exit 2 at its position. */
static int dag_check(build *b)
{
    if (!hs_dag_failed(b->d))
        return 0;
    const hs_error *de = hs_dag_error(b->d);
    if (de->code == HS_EXIT_NOMEM)
        return hs_error_nomem(b->err);
    hs_error_set(b->err, HS_EXIT_MODEL, "%s (while deriving the equilibrium conditions)",
                 de->msg);
    hs_srcpos p = hs_dag_error_pos(b->d);
    if (p.src >= 0)
        hs_model_place(b->a->m, p, b->err);
    return HS_EXIT_MODEL;
}

static int compile_both(build *b)
{
    hs_an *a = b->a;
    if (build_eq(b) || dag_check(b))
        return b->err->code;
    if (!(a->prog_eq = hs_prog_compile(b->d, b->roots, b->nroots, b->err)))
        return b->err->code;
    if (build_lin(b) || dag_check(b))
        return b->err->code;
    if (!(a->prog_lin = hs_prog_compile(b->d, b->roots, b->nroots, b->err)))
        return b->err->code;
    size_t nregs = hs_prog_nregs(a->prog_eq);
    if (hs_prog_nregs(a->prog_lin) > nregs)
        nregs = hs_prog_nregs(a->prog_lin);
    a->nin = (size_t)hs_dag_nsymbols(b->d);
    a->in = calloc(a->nin + 1, sizeof *a->in);
    a->regs = calloc(nregs + 1, sizeof *a->regs);
    a->out_eq = calloc(a->neq + 1, sizeof *a->out_eq);
    a->out_lin = calloc(a->nlin + 1, sizeof *a->out_lin);
    if (!a->in || !a->regs || !a->out_eq || !a->out_lin)
        return hs_error_nomem(b->err);
    hs_model *m = a->m;
    a->in[m->sym_t] = m->t0;
    for (size_t j = 0; j < m->npar; j++)
        a->in[m->sym_p[j]] = m->pval[j];
    return 0;
}

static hs_an *an_new(hs_model *m, hs_error *err)
{
    hs_an *a = calloc(1, sizeof *a);
    build b = { a, m->dag, (size_t)hs_dag_nsymbols(m->dag), NULL, NULL, NULL, 0, 0, err };
    b.fold = calloc(b.nsym, sizeof *b.fold);
    b.rest = calloc(b.nsym, sizeof *b.rest);
    int rc = !a || !b.fold || !b.rest ? hs_error_nomem(err) : 0;
    if (!rc) {
        a->m = m;
        a->n = m->n;
        a->k = m->k;
        for (size_t j = 0; j < m->npar; j++)
            b.fold[m->sym_p[j]] = b.rest[m->sym_p[j]] = hs_num(m->dag, m->pval[j]);
        for (size_t i = 0; i < m->n; i++)
            b.rest[m->sym_v[i]] = hs_num(m->dag, 0);
        rc = time_check(&b);
    }
    if (!rc)
        rc = dag_check(&b) || compile_both(&b);
    free(b.fold);
    free(b.rest);
    free(b.roots);
    if (rc) {
        hs_an_free(a);
        return NULL;
    }
    return a;
}

int hs_ak_dense_only(const hs_an *a, const char *what, hs_error *err)
{
    if (a->n + a->k <= HS_AN_MAX)
        return 0;
    hs_error_set(err, HS_EXIT_MODEL, "%s: model too large for %s: n + k = %zu (it is dense; "
                 "the limit is %d; equilibrium and modes are sparse beyond it)", a->m->file,
                 what, a->n + a->k, HS_AN_MAX);
    return HS_EXIT_MODEL;
}

hs_an *hs_an_new(hs_model *m, hs_error *err)
{
    hs_an *r = an_new(m, err);
    return r;
}

void hs_an_free(hs_an *a)
{
    if (!a)
        return;
    hs_prog_free(a->prog_eq);
    hs_prog_free(a->prog_lin);
    list_free(&a->gq);
    list_free(&a->qq);
    list_free(&a->hg);
    list_free(&a->mm);
    list_free(&a->qv);
    free(a->in);
    free(a->regs);
    free(a->out_eq);
    free(a->out_lin);
    free(a);
}

/* ---------- evaluation ---------- */

static void set_q(hs_an *a, const double *q)
{
    for (size_t i = 0; i < a->n; i++)
        a->in[a->m->sym_q[i]] = q[i];
}

static int all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

int hs_ak_eval_eq(hs_an *a, const double *q)
{
    set_q(a, q);
    hs_prog_eval(a->prog_eq, a->in, a->regs, a->out_eq);
    return all_finite(a->out_eq, a->neq);
}

int hs_ak_eval_lin(hs_an *a, const double *q)
{
    set_q(a, q);
    hs_prog_eval(a->prog_lin, a->in, a->regs, a->out_lin);
    return all_finite(a->out_lin, a->nlin);
}

void hs_ak_fill_Gq(const hs_an *a, gsl_matrix *Gq)
{
    gsl_matrix_set_zero(Gq);
    for (size_t e = 0; e < a->gq.cnt; e++)
        gsl_matrix_set(Gq, (size_t)a->gq.r[e], (size_t)a->gq.c[e], a->out_eq[a->off_Gq + e]);
}

void hs_ak_fill_S(const hs_an *a, const double *lambda, gsl_matrix *S)
{
    gsl_matrix_set_zero(S);
    for (size_t e = 0; e < a->qq.cnt; e++)
        gsl_matrix_set(S, (size_t)a->qq.r[e], (size_t)a->qq.c[e], a->out_eq[a->off_Qq + e]);
    /* S += sum_j lambda_j d2G_j/dq2 (stored with r >= c) */
    for (size_t e = 0; e < a->hg.cnt; e++) {
        size_t r = (size_t)a->hg.r[e], c = (size_t)a->hg.c[e];
        double h = lambda[a->hg.g[e]] * a->out_eq[a->off_Hg + e];
        *gsl_matrix_ptr(S, r, c) += h;
        if (r != c)
            *gsl_matrix_ptr(S, c, r) += h;
    }
}

void hs_ak_fill_M(const hs_an *a, gsl_matrix *M)
{
    gsl_matrix_set_zero(M);
    for (size_t e = 0; e < a->mm.cnt; e++) {
        size_t r = (size_t)a->mm.r[e], c = (size_t)a->mm.c[e];
        gsl_matrix_set(M, r, c, a->out_lin[e]);
        gsl_matrix_set(M, c, r, a->out_lin[e]);
    }
}

void hs_ak_fill_D(const hs_an *a, gsl_matrix *D)
{
    gsl_matrix_set_zero(D);
    for (size_t e = 0; e < a->qv.cnt; e++)
        gsl_matrix_set(D, (size_t)a->qv.r[e], (size_t)a->qv.c[e], a->out_lin[a->off_Qv + e]);
}

int hs_ak_nonfinite(hs_an *a, int lin, const double *q, int code, const char *when,
                    hs_error *err)
{
    hs_srcpos pos;
    const char *what = "non-finite value";
    set_q(a, q);
    int found = hs_prog_find_nonfinite(lin ? a->prog_lin : a->prog_eq, a->in, a->regs, &pos,
                                       &what);
    hs_error_set(err, code, "%s %s", what, when);
    if (found && pos.src >= 0)
        hs_model_place(a->m, pos, err);
    else
        snprintf(err->file, sizeof err->file, "%s", a->m->file);
    return code;
}

const char *hs_ak_num(char *buf, double x)
{
    hs_fmt_double(buf, x);
    return buf;
}

void hs_ak_point(const hs_an *a, const double *q, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < a->n && len + 1 < cap; i++) {
        char num[32];
        int w = snprintf(buf + len, cap - len, "%s%s = %s", i ? ", " : "", a->m->qname[i],
                         hs_ak_num(num, q[i]));
        if (w < 0 || (size_t)w >= cap - len) {
            if (cap > 4)
                memcpy(buf + cap - 4, "...", 4);
            return;
        }
        len += (size_t)w;
    }
}

/* The tangent basis (modes.c) for large n, by the blocked (level 3) QR
 * G_q^T = Q R, Q = I - V W V^T (gsl_linalg_QR_decomp_r: V unit lower
 * trapezoidal in A, W k x k upper triangular): the last n - k columns of Q
 * are Q [0; I] = [-V1 W V2^T; I - V2 W V2^T], two products instead of the
 * n x n Q applied reflector by reflector (which took most of the time near
 * n + k = 2000).  1 when some |R_jj| falls below rank_tol of the largest
 * column of G_q^T (then the pivoted QR names the dependent constraint), 0
 * with T filled, -1 out of memory. */
int hs_ak_tangent_blocked(const gsl_matrix *Gq, gsl_matrix *T, double rank_tol)
{
    size_t k = Gq->size1, n = Gq->size2, m = n - k;
    gsl_matrix *A = hs_la_matrix_alloc(n, k), *W = hs_la_matrix_alloc(k, k);
    gsl_matrix *Y = hs_la_matrix_alloc(k, m ? m : 1);
    int rc = -1;
    if (!A || !W || !Y)
        goto done;
    gsl_matrix_transpose_memcpy(A, Gq);
    double r0 = 0;
    for (size_t j = 0; j < k; j++) {
        gsl_vector_const_view c = hs_la_column_const(A, j);
        r0 = fmax(r0, gsl_blas_dnrm2(&c.vector));
    }
    if (gsl_linalg_QR_decomp_r(A, W)) {
        rc = 1;
        goto done;
    }
    rc = 0;
    for (size_t j = 0; j < k && !rc; j++)
        rc = !(fabs(gsl_matrix_get(A, j, j)) > rank_tol * r0);
    if (rc || !m)
        goto done;
    gsl_matrix_const_view V1 = hs_la_submatrix_const(A, 0, 0, k, k);
    gsl_matrix_const_view V2 = hs_la_submatrix_const(A, k, 0, m, k);
    gsl_matrix_view T1 = hs_la_submatrix(T, 0, 0, k, m);
    gsl_matrix_view T2 = hs_la_submatrix(T, k, 0, m, m);
    gsl_matrix_transpose_memcpy(Y, &V2.matrix);                         /* V2^T */
    gsl_blas_dtrmm(CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, 1.0, W, Y);
    gsl_matrix_memcpy(&T1.matrix, Y);
    gsl_blas_dtrmm(CblasLeft, CblasLower, CblasNoTrans, CblasUnit, -1.0, &V1.matrix,
                   &T1.matrix);                                         /* -V1 W V2^T */
    gsl_matrix_set_identity(&T2.matrix);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, -1.0, &V2.matrix, Y, 1.0, &T2.matrix);
done:
    gsl_matrix_free(A);              /* (GSL's _free takes NULL) */
    gsl_matrix_free(W);
    gsl_matrix_free(Y);
    return rc;
}
