/* The system of the rows held when some are let go (internal.h): open
 * contacts, sliding friction, an event's release.  C = G_q M^-1 G_q^T is
 * formed over the held rows only, so an evaluation costs what the held
 * set costs (none held: a = M^-1 Q); the held set's structure (its rows,
 * the pairs of them that share a column, its bandwidth) changes only at
 * events and is rebuilt at the first evaluation after one. */
#include "internal.h"
#include "../linalg/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hs_heldwork {
    int dirty;            /* the held set changed since the structure was built */
    int ok;               /* the structure matches w->released */
    int used;             /* the last evaluation solved with it */
    size_t kh;            /* rows held */
    uint32_t *row;        /* [k] the held rows, increasing */
    uint32_t *place;      /* [k] a row's index among the held (UINT32_MAX: let go) */
    uint32_t *pi, *pj, *ei, *ej;  /* [npair] w's pairs of two held rows, in held indices */
    size_t np;
    int banded;           /* factored in band storage (bandwidth bw) */
    size_t bw;
    double *buf;          /* [cap] the storage of C_h, dense kh x kh or band kh x (bw+1) */
    size_t cap;
    gsl_matrix C;         /* C_h on buf (a view) */
    double *rhs;          /* [k]: its right-hand side, then its solution */
};

void hs_dyn_held_free(hs_work *w)
{
    if (!w->hw)
        return;
    hs_heldwork *h = w->hw;
    void *f[] = { h->row, h->place, h->pi, h->pj, h->ei, h->ej, h->buf, h->rhs };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        free(f[i]);
    free(h);
    w->hw = NULL;
}

/* The capacities, once: the held system is never larger than every row's
 * (band storage within w's bandwidth, dense within k x k). */
static hs_heldwork *held_new(const hs_model *m, const hs_work *w)
{
    size_t k = m->k, np = w->npair ? w->npair : 1;
    hs_heldwork *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->cap = w->banded ? k * (w->bw + 1) : k * k;
    h->row = malloc(k * sizeof *h->row);
    h->place = malloc(k * sizeof *h->place);
    h->pi = malloc(np * sizeof *h->pi);
    h->pj = malloc(np * sizeof *h->pj);
    h->ei = malloc(np * sizeof *h->ei);
    h->ej = malloc(np * sizeof *h->ej);
    h->buf = malloc((h->cap ? h->cap : 1) * sizeof *h->buf);
    h->rhs = malloc(k * sizeof *h->rhs);
    if (!h->row || !h->place || !h->pi || !h->pj || !h->ei || !h->ej || !h->buf || !h->rhs) {
        void *f[] = { h->row, h->place, h->pi, h->pj, h->ei, h->ej, h->buf, h->rhs };
        for (size_t i = 0; i < sizeof f / sizeof *f; i++)
            free(f[i]);
        free(h);
        return NULL;
    }
    h->dirty = 1;
    return h;
}

void hs_dyn_held_changed(hs_work *w)
{
    if (w->hw)
        w->hw->dirty = 1;
}

/* The held rows, their pairs (a diagonal mass) and the storage: band when
 * narrow (as build_pairs decides for every row) or when a dense kh x kh
 * would not fit in w's band storage. */
static void rebuild(const hs_model *m, const hs_work *w, hs_heldwork *h)
{
    size_t k = m->k;
    h->kh = 0;
    for (size_t i = 0; i < k; i++)
        if (!hs_dyn_is_released_(w, i))
            h->row[h->kh++] = (uint32_t)i;
    size_t kh = h->kh;
    h->np = 0;
    h->bw = 0;
    if (m->mass_kind != HS_MASS_FULL) {
        /* a held row's place among the held ones (UINT32_MAX: let go); a
         * pair keeps the order of its rows (i >= j), the places follow */
        for (size_t i = 0, r = 0; i < k; i++)
            h->place[i] = hs_dyn_is_released_(w, i) ? UINT32_MAX : (uint32_t)r++;
        for (size_t p = 0; p < w->npair; p++) {
            uint32_t a = h->place[w->pair_i[p]], b = h->place[w->pair_j[p]];
            if (a == UINT32_MAX || b == UINT32_MAX)
                continue;
            h->pi[h->np] = a;
            h->pj[h->np] = b;
            h->ei[h->np] = w->pair_pi[p];
            h->ej[h->np++] = w->pair_pj[p];
            if (a - b > h->bw)
                h->bw = a - b;
        }
        h->banded = (kh >= HS_BAND_MIN_K && h->bw * HS_BAND_RATIO <= kh) ||
                    kh * kh > h->cap;
    } else {
        h->banded = 0;        /* the full kind: dense, as for every row */
    }
    if (h->banded && h->bw == 0)
        h->bw = 1;            /* room for the norm slot the condition estimate reads */
    gsl_matrix_view v = hs_la_mview(h->buf, kh ? kh : 1,
                                              h->banded ? h->bw + 1 : (kh ? kh : 1));
    h->C = v.matrix;
    h->dirty = 0;
    h->ok = 1;
}

int hs_dyn_held_alloc(const hs_model *m, hs_work *w)
{
    return w->hw || (w->hw = held_new(m, w)) ? 0 : -1;
}

int hs_dyn_held_ready(const hs_model *m, hs_work *w)
{
    hs_heldwork *h = w->hw;
    if (!w->nreleased || !h) {                    /* every row's C: hs_dyn_solve_C */
        if (h)
            h->used = 0;
        return 0;
    }
    if (h->dirty)
        rebuild(m, w, h);
    h->used = h->ok;
    return h->ok;
}

int hs_dyn_held_small(const hs_work *w)
{
    const hs_heldwork *h = w->hw;
    return h->kh == 0 || (!h->banded && h->kh <= HS_SMALL_K && !w->full_rcond);
}

/* C_h = G_q,h M^-1 G_q,h^T into h's storage. */
static void assemble(const hs_model *m, hs_work *w, hs_heldwork *h, const double *Gq)
{
    size_t n = m->n, kh = h->kh, tda = h->C.tda;
    const int *st = m->gq_start, *col = m->gq_col;
    double *C = h->C.data;
    memset(C, 0, kh * tda * sizeof *C);
    if (m->mass_kind != HS_MASS_FULL) {
        /* C_ab = sum_c Gq_ac Minv_c Gq_bc over the columns rows a, b share */
        for (size_t p = 0; p < h->np; p++) {
            double c = Gq[h->ei[p]] * w->Minv[col[h->ei[p]]] * Gq[h->ej[p]];
            if (h->banded)
                C[h->pj[p] * tda + (h->pi[p] - h->pj[p])] += c;
            else
                C[h->pi[p] * tda + h->pj[p]] += c;
        }
        for (size_t a = 0; !h->banded && a < kh; a++)
            for (size_t b = 0; b < a; b++)
                C[b * tda + a] = C[a * tda + b];
        return;
    }
    /* Y_a = M^-1 G_q,row[a]^T (w->Y's first kh rows), C_ab = G_q,row[a] . Y_b */
    for (size_t a = 0; a < kh; a++) {
        double *y = w->Y->data + a * w->Y->tda;
        memset(y, 0, n * sizeof *y);
        for (int p = st[h->row[a]]; p < st[h->row[a] + 1]; p++)
            y[col[p]] = Gq[p];
        hs_dyn_solve_mass(m, w, y);
    }
    for (size_t a = 0; a < kh; a++)
        for (size_t b = 0; b <= a; b++) {
            const double *y = w->Y->data + b * w->Y->tda;
            double s = 0;
            for (int p = st[h->row[a]]; p < st[h->row[a] + 1]; p++)
                s += Gq[p] * y[col[p]];
            C[a * tda + b] = C[b * tda + a] = s;
        }
}

int hs_dyn_held_solve(const hs_model *m, hs_work *w, double t, const double *dyn,
                      double *acc)
{
    hs_heldwork *h = w->hw;
    size_t n = m->n, kh = h->kh;
    const int *st = m->gq_start, *col = m->gq_col;
    const double *Gq = dyn + m->off_Gq, *z = w->z->data;
    memset(w->Lambda, 0, m->k * sizeof *w->Lambda);
    w->nskip = 0;
    if (!kh) {                                    /* nothing held: a = M^-1 Q */
        w->rcond = 1;
        return 0;
    }
    assemble(m, w, h, Gq);
    /* rhs = G_q M^-1 Q + gamma (+ Baumgarte terms), the held rows */
    double *rhs = h->rhs;
    for (size_t a = 0; a < kh; a++) {
        size_t i = h->row[a];
        double s = dyn[m->off_gamma + i];
        for (int p = st[i]; p < st[i + 1]; p++)
            s += Gq[p] * z[col[p]];
        if (m->set.stabilize == HS_STAB_BAUMGARTE)
            s += 2 * m->set.alpha * dyn[m->off_Gdotb + i] +
                 m->set.beta * m->set.beta * dyn[m->off_Gb + i];
        rhs[a] = s;
    }
    hs_csys sys = { kh, h->banded ? NULL : &h->C, h->banded ? &h->C : NULL, h->banded,
                    NULL };
    int fc = hs_dyn_factor_C(w, &sys, m->k - w->rank0, t);
    if (fc) {
        h->used = 0;
        return fc;
    }
    for (size_t a = 0; w->nskip && a < kh; a++)
        if (w->skip[a])
            rhs[a] = 0;                           /* dependent rows: solved by the others */
    if (h->banded)                                /* rhs <- C_h^-1 rhs */
        hs_la_band_svx(&h->C, rhs);
    else
        hs_la_small_svx(&h->C, rhs);
    for (size_t a = 0; a < kh; a++)
        rhs[a] = -rhs[a];                         /* Lambda = -C^-1 (...) */
    if (w->nskip)                                 /* the least-norm multiplier */
        hs_la_small_minnorm(&h->C, w->skip, rhs, w->mnwork);
    for (size_t a = 0; a < kh; a++)
        w->Lambda[h->row[a]] = rhs[a];
    /* a = z + M^-1 G_q^T Lambda */
    if (m->mass_kind != HS_MASS_FULL) {
        for (size_t a = 0; a < kh; a++) {
            size_t i = h->row[a];
            for (int p = st[i]; p < st[i + 1]; p++)
                acc[col[p]] += w->Minv[col[p]] * Gq[p] * rhs[a];
        }
    } else {
        for (size_t a = 0; a < kh; a++) {
            const double *y = w->Y->data + a * w->Y->tda;
            for (size_t c = 0; c < n; c++)
                acc[c] += y[c] * rhs[a];
        }
    }
    return 0;
}

/* C_ii of the last evaluation, 1 where it is not positive: the pivot of
 * a row decoupled from the others. */
static double diag_C(const hs_model *m, hs_work *w, size_t i)
{
    const double *Gq = w->dyn + m->off_Gq;
    const int *st = m->gq_start, *col = m->gq_col;
    double s = 0;
    if (m->mass_kind != HS_MASS_FULL) {
        for (int p = st[i]; p < st[i + 1]; p++)
            s += Gq[p] * w->Minv[col[p]] * Gq[p];
    } else {
        double *y = w->tmpn->data;
        memset(y, 0, m->n * sizeof *y);
        for (int p = st[i]; p < st[i + 1]; p++)
            y[col[p]] = Gq[p];
        hs_dyn_solve_mass(m, w, y);
        for (int p = st[i]; p < st[i + 1]; p++)
            s += Gq[p] * y[col[p]];
    }
    return s > 0 ? s : 1;
}

void hs_dyn_solve_C(const hs_model *m, hs_work *w, double *x)
{
    const hs_heldwork *h = w->hw;
    if (!h || !h->used) {
        if (w->Cs)
            hs_la_spd_solve(w->Cs, x);      /* (factored: its memory is held) */
        else if (w->banded)
            hs_la_band_svx(w->Cb, x);
        else
            hs_la_small_svx(w->C, x);
        return;
    }
    double *xh = h->rhs;                          /* gathered, solved, scattered */
    for (size_t a = 0; a < h->kh; a++)
        xh[a] = x[h->row[a]];
    if (h->kh)
        (h->banded ? hs_la_band_svx : hs_la_small_svx)(&h->C, xh);
    /* a row outside the factor's held set (held since: the caller's
     * Newton iteration after an event) is solved by its diagonal alone,
     * as in every row's C with it cut out */
    for (size_t i = 0; i < m->k; i++)
        if (h->place[i] == UINT32_MAX && x[i] != 0) {
            double l = sqrt(diag_C(m, w, i));
            x[i] = x[i] / l / l;
        }
    for (size_t a = 0; a < h->kh; a++)
        x[h->row[a]] = xh[a];
}
