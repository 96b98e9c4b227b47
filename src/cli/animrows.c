/* The trajectory of `holosim animate` into frames (animate.h): a CSV
 * file read (only the columns the drawing and the plots read are parsed,
 * and only on the rows kept as frames), or the rows of a run handed over
 * in memory (io/sink.h, hs_sink_fn), the impacts the run records with
 * them. */
#define _DEFAULT_SOURCE     /* strsep */
#include "animate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    const char *name;          /* for messages */
    FILE *f;
    char *line, *pend;         /* the current line, the last line not kept */
    size_t lcap, pcap;
    long lineno, pend_no;
    int has_pend;
    size_t ncol;               /* fields in the header */
    long *want;                /* [nwant] column of each value read, or -1 */
    size_t nwant;              /* 1 (t) + n (q) + nplot */
    double *row;               /* [nwant] */
} reader;

/* The 0-based column of name in the header fields, or -1. */
static long find_col(char **cols, size_t ncol, const char *name)
{
    for (size_t i = 0; i < ncol; i++)
        if (strcmp(cols[i], name) == 0)
            return (long)i;
    return -1;
}

static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

/* The values this reader wants from one line (fields as %.17g, or any
 * strtod number); an error at the field that is not a number. */
static int parse_row(reader *R, const char *line, long lineno, hs_error *err)
{
    const char *p = line;
    long maxc = 0;
    for (size_t w = 0; w < R->nwant; w++)
        if (R->want[w] > maxc)
            maxc = R->want[w];
    for (long c = 0; c <= maxc; c++) {
        const char *start = p;
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        for (size_t w = 0; w < R->nwant; w++) {
            if (R->want[w] != c)
                continue;
            char *e;
            errno = 0;
            double v = strtod(start, &e);
            while (e < end && (*e == ' ' || *e == '\t'))
                e++;
            if (e == start || e != end) {
                hs_error_at(err, HS_EXIT_MODEL, R->name, (int)lineno, (int)(start - line) + 1,
                            line, "field %ld of line %ld is not a number", c + 1, lineno);
                return err->code;
            }
            if (!isfinite(v)) {                /* nan, inf, 1e999: never drawn as nothing */
                hs_error_at(err, HS_EXIT_MODEL, R->name, (int)lineno, (int)(start - line) + 1,
                            line, "field %ld of line %ld is not a finite number ('%.*s')",
                            c + 1, lineno, (int)(end - start < 40 ? end - start : 40), start);
                return err->code;
            }
            R->row[w] = v;
        }
        if (!*end && c < maxc) {
            hs_error_at(err, HS_EXIT_MODEL, R->name, (int)lineno, (int)strlen(line) + 1, line,
                        "line %ld has %ld fields; the header has %zu", lineno, c + 1, R->ncol);
            return err->code;
        }
        p = end + 1;
    }
    return 0;
}

static int add_frame(anim_rows *E, const double *row)
{
    const hs_model *m = E->m;
    for (size_t i = 0; i < m->n; i++)
        E->q[i] = E->qcol[i] >= 0 ? row[E->qcol[i]] : m->q0[i];
    hs_draw_eval(m, row[0], E->q, E->in, E->regs, E->val);
    return hs_anim_add(E->A, row[0], E->val, row + 1 + m->n);
}

/* Read the rows into frames.  The header names the columns; the drawing's
 * coordinates and the plotted columns must be there. */
static int read_rows(reader *R, anim_rows *E, hs_error *err)
{
    const hs_model *m = E->m;
    hs_anim *A = E->A;
    const char *const *plots = (const char *const *)A->plotname;
    size_t nplot = A->nplot;
    ssize_t len = getline(&R->line, &R->lcap, R->f);
    if (len <= 0) {
        hs_error_at(err, HS_EXIT_MODEL, R->name, 1, 1, "", "the CSV is empty: no header");
        return err->code;
    }
    chomp(R->line);
    char *hdr = strdup(R->line);
    char **cols = calloc((size_t)len + 1, sizeof *cols);
    if (!hdr || !cols) {
        free(hdr);
        free(cols);
        return hs_error_nomem(err);
    }
    for (char *s = hdr, *tok; (tok = strsep(&s, ","));) {
        while (*tok == ' ' || *tok == '"')
            tok++;
        size_t n = strlen(tok);
        while (n && (tok[n - 1] == ' ' || tok[n - 1] == '"'))
            tok[--n] = '\0';
        cols[R->ncol++] = tok;
    }
    R->nwant = 1 + m->n + nplot;
    R->want = calloc(R->nwant, sizeof *R->want);
    R->row = calloc(R->nwant, sizeof *R->row);
    char miss[3][400] = { "", "", "" };   /* time, the drawing, the plots */
    size_t nmiss[3] = { 0, 0, 0 };
    int rc = 0;
    if (!R->want || !R->row)
        rc = hs_error_nomem(err);
    for (size_t w = 0; !rc && w < R->nwant; w++) {
        const char *name = w == 0 ? "t" : w <= m->n ? m->qname[w - 1] : plots[w - 1 - m->n];
        int needed = w == 0 || w > m->n || hs_draw_reads(m, w - 1);
        R->want[w] = needed ? find_col(cols, R->ncol, name) : -1;
        if (w >= 1 && w <= m->n)
            E->qcol[w - 1] = R->want[w] >= 0 ? (long)w : -1;
        if (needed && R->want[w] < 0) {
            int g = w == 0 ? 0 : w <= m->n ? 1 : 2;
            size_t l = strlen(miss[g]);
            snprintf(miss[g] + l, sizeof miss[g] - l, "%s'%s'", nmiss[g] ? ", " : "", name);
            nmiss[g]++;
        }
    }
    if (!rc && nmiss[0] + nmiss[1] + nmiss[2]) {
        char msg[1300] = "";
        static const char *const why[3] = { "(the time)", "(the drawing reads %s)",
                                            "(--plot)" };
        for (int g = 0; g < 3; g++) {
            if (!nmiss[g])
                continue;
            size_t l = strlen(msg);
            snprintf(msg + l, sizeof msg - l, "%s%s ", l ? "; " : "", miss[g]);
            l = strlen(msg);
            snprintf(msg + l, sizeof msg - l, why[g], nmiss[g] > 1 ? "them" : "it");
        }
        hs_error_at(err, HS_EXIT_MODEL, R->name, 1, 1, R->line, "the CSV has no column%s %s",
                    nmiss[0] + nmiss[1] + nmiss[2] > 1 ? "s" : "", msg);
        rc = err->code;
    }
    free(hdr);
    free(cols);
    if (rc)
        return rc;
    long lineno = 1;
    double tlast = -INFINITY;
    while (!rc && !hs_cli_interrupted && (len = getline(&R->line, &R->lcap, R->f)) > 0) {
        lineno++;
        chomp(R->line);
        if (!R->line[0])
            continue;
        /* t first: most rows are not kept */
        char *e = NULL;
        const char *tf = R->line;
        for (long c = 0; c < R->want[0] && tf; c++)
            tf = (tf = strchr(tf, ',')) ? tf + 1 : NULL;
        double t = tf ? strtod(tf, &e) : (double)NAN;
        if (!tf || e == tf || !isfinite(t)) {
            hs_error_at(err, HS_EXIT_MODEL, R->name, (int)lineno,
                        tf ? (int)(tf - R->line) + 1 : 1, R->line, "the time of line %ld is "
                        "not a number", lineno);
            return err->code;
        }
        if (t < tlast) {
            hs_error_at(err, HS_EXIT_MODEL, R->name, (int)lineno, (int)(tf - R->line) + 1,
                        R->line, "time goes back at line %ld (t = %.17g after %.17g)", lineno,
                        t, tlast);
            return err->code;
        }
        tlast = t;
        if (!hs_anim_wants(A, t)) {
            char *sw = R->pend;            /* keep it: it may be the last */
            size_t sc = R->pcap;
            R->pend = R->line, R->pcap = R->lcap;
            R->line = sw, R->lcap = sc;
            R->pend_no = lineno;
            R->has_pend = 1;
            continue;
        }
        R->has_pend = 0;
        if (parse_row(R, R->line, lineno, err))
            return err->code;
        if (add_frame(E, R->row))
            return hs_error_nomem(err);
    }
    if (hs_cli_interrupted)                /* the caller says so */
        return 0;
    if (R->has_pend) {                     /* the last row is always a frame */
        if (parse_row(R, R->pend, R->pend_no, err))
            return err->code;
        if (add_frame(E, R->row))
            return hs_error_nomem(err);
    }
    if (!A->nframe) {
        hs_error_at(err, HS_EXIT_MODEL, R->name, 2, 1, "", "the CSV has a header and no rows");
        return err->code;
    }
    return 0;
}

int hs_cli_csv_has_column(const char *csv, const char *name)
{
    FILE *f = fopen(csv, "r");
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    if (f && getline(&line, &cap, f) > 0) {
        chomp(line);
        for (char *s = line, *tok; !found && (tok = strsep(&s, ","));)
            found = strcmp(tok, name) == 0;
    }
    free(line);
    if (f)
        fclose(f);
    return found;
}

/* ---------- the evaluation ---------- */

int hs_cli_anim_rows_init(anim_rows *E, hs_anim *A)
{
    const hs_model *m = A->m;
    memset(E, 0, sizeof *E);
    E->A = A;
    E->m = m;
    size_t nin = m->nin > hs_prog_nin(m->draw->prog) ? m->nin : hs_prog_nin(m->draw->prog);
    E->in = calloc(nin + 1, sizeof *E->in);
    E->regs = calloc(hs_prog_nregs(m->draw->prog) + 1, sizeof *E->regs);
    E->q = calloc(m->n + 1, sizeof *E->q);
    E->val = calloc(m->draw->nout + 1, sizeof *E->val);
    E->qcol = calloc(m->n + 1, sizeof *E->qcol);
    E->pend = calloc(1 + m->n + A->nplot, sizeof *E->pend);
    if (!E->in || !E->regs || !E->q || !E->val || !E->qcol || !E->pend)
        return -1;
    hs_model_inputs(m, E->in);
    for (size_t i = 0; i < m->n; i++)
        E->qcol[i] = (long)(1 + i);
    return 0;
}

void hs_cli_anim_rows_free(anim_rows *E)
{
    free(E->in);
    free(E->regs);
    free(E->q);
    free(E->val);
    free(E->qcol);
    free(E->pend);
    memset(E, 0, sizeof *E);
}

int hs_cli_anim_read_csv(anim_rows *E, const char *csv, hs_error *err)
{
    reader R = { .name = csv };
    R.f = fopen(csv, "r");
    if (!R.f) {
        fprintf(stderr, "holosim: cannot read '%s': %s\n", csv, strerror(errno));
        return HS_EXIT_USAGE;
    }
    int rc = read_rows(&R, E, err);
    fclose(R.f);
    free(R.line);
    free(R.pend);
    free(R.want);
    free(R.row);
    return rc;
}

/* ---------- a run's rows in memory ---------- */

/* A row of the run (t, q, the plots): a frame when the animation wants
 * its time, else kept aside (it may be the last). */
static void run_row(void *ctx, const double *x, size_t n)
{
    anim_rows *E = ctx;
    if (E->nomem)
        return;
    if (!hs_anim_wants(E->A, x[0])) {
        memcpy(E->pend, x, n * sizeof *x);
        E->has_pend = 1;
        return;
    }
    E->has_pend = 0;
    if (add_frame(E, x))
        E->nomem = 1;              /* said after the run (rows_end) */
}

/* An event of the run: "CONTACT:impact" or "CONTACT:rest" (the last
 * impact, at the accumulation point) is an impact of that contact. */
static void run_event(void *ctx, const char *event, const double *x, size_t n)
{
    anim_rows *E = ctx;
    const hs_model *m = E->m;
    const char *colon = strrchr(event, ':');
    (void)n;
    if (E->nomem || !colon || (strcmp(colon, ":impact") != 0 && strcmp(colon, ":rest") != 0))
        return;
    for (size_t j = 0; j < m->ncontact; j++) {
        const char *name = m->cname[m->contact0 + j];
        if (strlen(name) == (size_t)(colon - event) && strncmp(name, event, strlen(name)) == 0) {
            if (hs_anim_add_impact(E->A, x[0], j))
                E->nomem = 1;
            return;
        }
    }
}

void hs_cli_anim_sinks(anim_rows *E, hs_sink_fn *rows, hs_sink_fn *events)
{
    hs_sink_fn_init(rows, E, NULL, run_row, NULL);
    hs_sink_fn_init(events, E, NULL, NULL, run_event);
}

int hs_cli_anim_rows_end(anim_rows *E, hs_error *err)
{
    if (E->nomem || (E->has_pend && add_frame(E, E->pend)))
        return hs_error_nomem(err);
    E->has_pend = 0;
    if (!E->A->nframe) {
        hs_error_set(err, HS_EXIT_MODEL, "the run made no rows");
        return err->code;
    }
    return 0;
}
