/* Small CSV tables written field by field (table.h). */
#include "table.h"

#include <math.h>
#include <string.h>

#include "fmt.h"

void hs_table_init(hs_table *t, FILE *f, hs_table_numfmt numfmt)
{
    t->f = f;
    t->numfmt = numfmt;
    t->nfield = 0;
}

static void sep(hs_table *t)
{
    if (t->nfield++)
        fputc(',', t->f);
}

/* s with each double quote doubled */
static void put_doubled(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
}

/* a, then b, in double quotes */
static void put_quoted(FILE *f, const char *a, const char *b)
{
    fputc('"', f);
    put_doubled(f, a);
    put_doubled(f, b);
    fputc('"', f);
}

static int needs_quotes(const char *s)
{
    return s[strcspn(s, ",\"\n\r")] != '\0';
}

void hs_table_text2(hs_table *t, const char *a, const char *b)
{
    sep(t);
    if (needs_quotes(a) || needs_quotes(b)) {
        put_quoted(t->f, a, b);
    } else {
        fputs(a, t->f);
        fputs(b, t->f);
    }
}

void hs_table_text(hs_table *t, const char *s)
{
    hs_table_text2(t, s, "");
}

void hs_table_quoted(hs_table *t, const char *s)
{
    sep(t);
    put_quoted(t->f, s, "");
}

void hs_table_num(hs_table *t, double x)
{
    sep(t);
    if (!isfinite(x))
        return;
    char b[40];
    if (t->numfmt == HS_TABLE_G17)
        snprintf(b, sizeof b, "%.17g", x == 0 ? 0.0 : x);
    else
        hs_fmt_double(b, x == 0 ? 0.0 : x);
    fputs(b, t->f);
}

void hs_table_fixed(hs_table *t, double x, int decimals)
{
    sep(t);
    if (isfinite(x))
        fprintf(t->f, "%.*f", decimals, x);
}

void hs_table_int(hs_table *t, long x)
{
    sep(t);
    fprintf(t->f, "%ld", x);
}

void hs_table_empty(hs_table *t)
{
    sep(t);
}

void hs_table_end(hs_table *t)
{
    fputc('\n', t->f);
    t->nfield = 0;
}

void hs_table_header(hs_table *t, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hs_table_text(t, names[i]);
    hs_table_end(t);
}
