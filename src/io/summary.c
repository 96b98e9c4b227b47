/* The run summary's fields, listed once (summary.h). */
#include "summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "../util/suggest.h"

typedef enum {
    F_MODEL,      /* text, in quotes; a run summary's only */
    F_EXIT,       /* int */
    F_COUNT,      /* long; < 0 empty */
    F_NUM,        /* double, %.17g; NaN empty */
    F_SECONDS,    /* double, %.6f */
    F_FINALS,     /* one field final_NAME per --final column */
    F_MESSAGE,    /* text, in quotes (a status: empty when there is none) */
} fkind;

enum { RUN = 1 };   /* a field of the run: empty in a status of a point that never integrated */

static const struct field {
    const char *name;
    fkind kind;
    size_t off;
    unsigned flags;
} fields[] = {
    { "model", F_MODEL, offsetof(hs_sumrow, model), 0 },
    { "exit", F_EXIT, offsetof(hs_sumrow, exit), 0 },
    { "steps", F_COUNT, offsetof(hs_sumrow, steps), RUN },
    { "rhs_evals", F_COUNT, offsetof(hs_sumrow, nrhs), RUN },
    { "rows", F_COUNT, offsetof(hs_sumrow, rows), RUN },
    { "t_reached", F_NUM, offsetof(hs_sumrow, t_reached), RUN },
    { "max_G", F_NUM, offsetof(hs_sumrow, max_G), RUN },
    { "max_Gdot", F_NUM, offsetof(hs_sumrow, max_Gdot), RUN },
    { "max_energy_balance", F_NUM, offsetof(hs_sumrow, max_ebal), RUN },
    { "max_power_residual", F_NUM, offsetof(hs_sumrow, max_pres), RUN },
    { "wall_s", F_SECONDS, offsetof(hs_sumrow, wall), RUN },
    { "impacts", F_COUNT, offsetof(hs_sumrow, impacts), RUN },
    { "transitions", F_COUNT, offsetof(hs_sumrow, transitions), RUN },
    { "t_rest", F_NUM, offsetof(hs_sumrow, t_rest), RUN },
    { "final_", F_FINALS, 0, RUN },
    { "message", F_MESSAGE, offsetof(hs_sumrow, message), 0 },
};
enum { NFIELDS = sizeof fields / sizeof *fields };

void hs_sumrow_init(hs_sumrow *r)
{
    memset(r, 0, sizeof *r);
    r->steps = r->nrhs = r->rows = -1;
    r->impacts = r->transitions = -1;
    r->t_reached = r->max_G = r->max_Gdot = r->max_ebal = r->max_pres = (double)NAN;
    r->wall = r->t_rest = (double)NAN;
}

#define AT(r, f, type) (*(const type *)((const char *)(r) + (f)->off))

void hs_summary_header(FILE *f, const hs_sumrow *r, hs_sum_style st)
{
    hs_table t;
    hs_table_init(&t, f, HS_TABLE_G17);
    for (size_t i = 0; i < NFIELDS; i++) {
        const struct field *d = &fields[i];
        if (d->kind == F_MODEL && st == HS_SUM_STATUS)
            continue;
        if (d->kind != F_FINALS)
            hs_table_text(&t, d->name);
        for (size_t j = 0; d->kind == F_FINALS && j < r->nfinal; j++)
            hs_table_text2(&t, d->name, r->final_name[j]);
    }
    hs_table_end(&t);
}

static void field(hs_table *t, const struct field *d, const hs_sumrow *r, hs_sum_style st)
{
    const char *s;
    long c;
    switch (d->kind) {
    case F_MODEL:
        hs_table_quoted(t, AT(r, d, char *) ? AT(r, d, char *) : "");
        break;
    case F_EXIT:
        hs_table_int(t, AT(r, d, int));
        break;
    case F_COUNT:
        if ((c = AT(r, d, long)) >= 0)
            hs_table_int(t, c);
        else
            hs_table_empty(t);
        break;
    case F_NUM:
        hs_table_num(t, AT(r, d, double));
        break;
    case F_SECONDS:
        hs_table_fixed(t, AT(r, d, double), 6);
        break;
    case F_FINALS:
        for (size_t j = 0; j < r->nfinal; j++)
            hs_table_num(t, r->final ? r->final[j] : (double)NAN);
        break;
    case F_MESSAGE:
        s = AT(r, d, char *);
        if (st == HS_SUM_FILE || (s && s[0]))
            hs_table_quoted(t, s ? s : "");
        else
            hs_table_empty(t);
        break;
    }
}

void hs_summary_record(FILE *f, const hs_sumrow *r, hs_sum_style st)
{
    hs_table t;
    hs_table_init(&t, f, HS_TABLE_G17);
    for (size_t i = 0; i < NFIELDS; i++) {
        const struct field *d = &fields[i];
        if (d->kind == F_MODEL && st == HS_SUM_STATUS)
            continue;
        if ((d->flags & RUN) && st == HS_SUM_STATUS && !r->integrated) {
            size_t n = d->kind == F_FINALS ? r->nfinal : 1;
            for (size_t j = 0; j < n; j++)
                hs_table_empty(&t);
            continue;
        }
        field(&t, d, r, st);
    }
    hs_table_end(&t);
}

size_t hs_summary_nfinal_max(const char *list)
{
    size_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    return n;
}

/* "--final: unknown column 'x'' (did you mean 'x''?); the columns of this
 * run: t,x,..." */
static int bad_final(const char *opt, const char *what, const char *name,
                     const char *const *col, size_t ncol, hs_error *err)
{
    char list[2048];
    size_t len = 0;
    list[0] = '\0';
    for (size_t j = 0; j < ncol && len + 1 < sizeof list; j++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", j ? "," : "", col[j]);
    const char *near = hs_nearest(name, col, ncol);
    char hint[160] = "";
    if (near && strcmp(what, "unknown column") == 0)
        snprintf(hint, sizeof hint, " (did you mean '%.100s'?)", near);
    return hs_error_set(err, HS_EXIT_MODEL, "%s: %s '%.200s'%s; the columns of this run: %s",
                        opt, what, name, hint, list);
}

int hs_summary_finals(const char *list, const char *const *col, size_t ncol,
                      const hs_optnames *names, size_t *idx, size_t *nfinal, hs_error *err)
{
    const char *opt = hs_optname(names, HS_OPT_FINAL);
    *nfinal = 0;
    for (const char *p = list;; p++) {
        const char *end = p + strcspn(p, ",");
        const char *a = p, *b = end;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(b - a < 255 ? b - a : 255), a);
        if (!name[0])
            return hs_error_set(err, HS_EXIT_MODEL, "%s wants column names separated by "
                                "commas, got '%.200s'", opt, list);
        size_t j = 0;
        while (j < ncol && strcmp(col[j], name) != 0)
            j++;
        if (j == ncol)
            return bad_final(opt, "unknown column", name, col, ncol, err);
        for (size_t i = 0; i < *nfinal; i++)
            if (idx[i] == j)
                return bad_final(opt, "column named twice", name, col, ncol, err);
        idx[(*nfinal)++] = j;
        if (!*end)
            return 0;
        p = end;
    }
}
