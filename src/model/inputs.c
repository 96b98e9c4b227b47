/* Inputs (holosim-model(5), INPUTS): `inputs: [F, tau]` names quantities
 * a run gives from outside.  Each is a parameter of value 0 (the last
 * entries of the loader's parameters) that no parameter or initial value
 * may read; a --input NAME=SRC replaces it, in every expression that reads
 * it, by SRC: an expression of t and parameters, or a table (a CSV file of
 * columns t and NAME) written as the piecewise linear function of t it
 * describes, held before its first and after its last row (model.h:
 * hs_input_table, three VM slots for the piece t lies in), whose times the
 * run steps to (m->brk).  A model without inputs loads as before: nothing
 * here runs. */
#include "loader.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../util/suggest.h"
#include "../util/vec.h"

enum { MAX_TABLE_BYTES = 1 << 26 };   /* 64 MiB of CSV */

static int ident_ok(const char *s)
{
    if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return 0;
    size_t n = 0;
    for (const char *p = s; *p; p++, n++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
              (*p >= '0' && *p <= '9')))
            return 0;
    return n <= 64;
}

int hs_ld_read_inputs(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    yaml_node_t *in = hs_ld_get(L, root, "inputs");
    m->input0 = L->npar;
    if (!in)
        return 0;
    if (hs_ld_expect(L, in, YAML_SEQUENCE_NODE, "'inputs'"))
        return L->err->code;
    size_t n = seq_len(in);
    named *a = realloc(L->par, (L->npar + n + 1) * sizeof *a);
    if (!a)
        return hs_error_nomem(L->err);
    L->par = a;
    FOR_ITEMS(in, it) {
        yaml_node_t *e = NODE(L, *it);
        const char *s = hs_ytree_str(e);
        if (!s)
            return hs_ytree_error(L->y, L->err, e, "an input must be a name (inputs: [F, "
                                  "tau]), found %s", hs_ytree_kind(e));
        if (!ident_ok(s))
            return hs_ytree_error(L->y, L->err, e, "'%s' is not a valid input name (letters, "
                                  "digits, _; not starting with a digit)", s);
        const hs_quantity *q = hs_quantity_model(s, strlen(s));
        if (q || hs_is_language_word(s, strlen(s)) || strcmp(s, "lambda") == 0)
            return hs_ytree_error(L->y, L->err, e, "'%s' is reserved and cannot name an "
                                  "input%s%s", s, q ? ": it names " : "", q ? q->what : "");
        for (size_t j = m->input0; j < L->npar; j++)
            if (strcmp(L->par[j].name, s) == 0)
                return hs_ytree_error(L->y, L->err, e, "duplicate input '%s' (first at line "
                                      "%d, column %d)", s,
                                      (int)L->par[j].key->start_mark.line + 1,
                                      (int)L->par[j].key->start_mark.column + 1);
        named *p = &L->par[L->npar];
        memset(p, 0, sizeof *p);
        p->key = e;
        p->ov = -1;
        if (!(p->name = hs_ld_strdup(s)))
            return hs_error_nomem(L->err);
        L->npar++;
        L->ninput++;
    }
    m->ninput = L->ninput;
    if (!(m->input_desc = xcalloc(n, sizeof *m->input_desc)))
        return hs_error_nomem(L->err);
    char none[80];
    snprintf(none, sizeof none, "0 (no %s)", hs_optname(m->names, HS_OPT_INPUT));
    for (size_t j = 0; j < n; j++)
        if (!(m->input_desc[j] = hs_ld_strdup(none)))
            return hs_error_nomem(L->err);
    return 0;
}

/* ---------- --input NAME=SRC ---------- */

/* An error about `--input NAME=TEXT` (no file position): exit 2. */
static int option_error(loader *L, const char *name, const char *text, long off,
                        const char *fmt, const char *arg)
{
    char opt[600], msg[1100];
    const char *on = hs_optname(L->m->names, HS_OPT_INPUT);
    snprintf(opt, sizeof opt, "%s %s=%s", on, name, text);
    snprintf(msg, sizeof msg, fmt, arg);
    hs_error_set(L->err, HS_EXIT_MODEL, "%s: %s", opt, msg);
    if (off >= 0) {
        hs_error_locate(L->err, opt, strlen(opt), strlen(on) + strlen(name) + 2 + (size_t)off);
        L->err->line = 0;
    }
    return L->err->code;
}

/* An expression of t and parameters. */
static const hs_node *parse_source(loader *L, const char *name, const char *text)
{
    hs_model *m = L->m;
    hs_error pe;
    L->in_source = 1;
    const hs_node *e = hs_ld_parse_text(L, text, SCOPE_MODEL, &pe);
    L->in_source = 0;
    if (!e) {
        if (!L->err->code)
            option_error(L, name, text, pe.offset, "%s", pe.msg);
        return NULL;
    }
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    unsigned char *used = xcalloc(ns, 1);
    if (!used) {
        hs_error_nomem(L->err);
        return NULL;
    }
    hs_symbols_used(e, used, ns);
    used[m->sym_t] = 0;
    for (size_t p = 0; p < m->input0; p++)
        used[m->sym_p[p]] = 0;
    for (size_t s = 0; s < ns; s++)
        if (used[s]) {
            option_error(L, name, text, -1, "an input's source is an expression of t and "
                         "parameters; it reads '%s'", hs_dag_symbol_name(m->dag, (int)s));
            e = NULL;
            break;
        }
    free(used);
    return e;
}

/* ---------- tables ---------- */

typedef struct table {
    const char *path, *text;
    size_t len;
    double *t, *y;
    size_t n, cap;
} table;

/* An error at line `line`, byte `col` (0-based) of the table. */
static int table_error(loader *L, const table *T, int line, const char *ls, size_t col,
                       const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int table_error(loader *L, const table *T, int line, const char *ls, size_t col,
                       const char *fmt, ...)
{
    char msg[600], src[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t k = 0;
    while (ls && ls[k] && ls[k] != '\n' && ls[k] != '\r' && k + 1 < sizeof src) {
        src[k] = ls[k];
        k++;
    }
    src[k] = '\0';
    return hs_error_at(L->err, HS_EXIT_MODEL, T->path, line, (int)col + 1, src, "%s", msg);
}

/* The cells of one line: [b, e) byte ranges, spaces and quotes trimmed. */
static size_t split(const char *s, size_t len, size_t *b, size_t *e, size_t cap)
{
    size_t n = 0, i = 0;
    for (;;) {
        size_t j = i;
        while (j < len && s[j] != ',')
            j++;
        size_t x = i, y = j;
        while (x < y && (s[x] == ' ' || s[x] == '\t'))
            x++;
        while (y > x && (s[y - 1] == ' ' || s[y - 1] == '\t'))
            y--;
        if (y - x >= 2 && s[x] == '"' && s[y - 1] == '"') {
            x++;
            y--;
        }
        if (n < cap) {
            b[n] = x;
            e[n] = y;
        }
        n++;
        if (j >= len)
            return n;
        i = j + 1;
    }
}

enum { MAX_COLS = 256 };

/* The header: which cells hold t and the input's values. */
static int header(loader *L, table *T, const char *name, const char *ls, size_t ll,
                  size_t *ct, size_t *cy)
{
    size_t b[MAX_COLS], e[MAX_COLS];
    size_t nc = split(ls, ll, b, e, MAX_COLS);
    if (nc > MAX_COLS)
        return table_error(L, T, 1, ls, 0, "more than %d columns", MAX_COLS);
    long t = -1, y = -1;
    for (size_t c = 0; c < nc; c++) {
        if (e[c] - b[c] == 1 && ls[b[c]] == 't' && t < 0)
            t = (long)c;
        else if (e[c] - b[c] == strlen(name) && memcmp(ls + b[c], name, e[c] - b[c]) == 0)
            y = (long)c;
    }
    if (t < 0)
        return table_error(L, T, 1, ls, 0, "the input table has no column 't' (the header "
                           "names the columns: t,%s)", name);
    if (y < 0 && nc == 2)
        y = 1 - t;
    if (y < 0)
        return table_error(L, T, 1, ls, 0, "the input table has no column '%s' (and more "
                           "than one column besides t: name the input's column %s)", name,
                           name);
    *ct = (size_t)t;
    *cy = (size_t)y;
    return 0;
}

/* A cell as a finite number. */
static int cell(loader *L, table *T, int line, const char *ls, size_t b, size_t e,
                const char *col, double *v)
{
    char buf[128];
    size_t n = e - b < sizeof buf - 1 ? e - b : sizeof buf - 1;
    memcpy(buf, ls + b, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    *v = strtod(buf, &end);
    if (n == 0 || *end || end == buf)
        return table_error(L, T, line, ls, b, "'%s' in column %s is not a number", buf, col);
    if (!isfinite(*v) || errno == ERANGE)
        return table_error(L, T, line, ls, b, "'%s' in column %s is not a finite number",
                           buf, col);
    return 0;
}

static int read_rows(loader *L, table *T, const char *name)
{
    const char *s = T->text, *end = s + T->len;
    int line = 0;
    size_t ct = 0, cy = 0, need = 0;
    int have_header = 0;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t ll = nl ? (size_t)(nl - s) : (size_t)(end - s);
        const char *ls = s;
        s = nl ? nl + 1 : end;
        line++;
        if (ll && ls[ll - 1] == '\r')
            ll--;
        size_t k = 0;
        while (k < ll && (ls[k] == ' ' || ls[k] == '\t'))
            k++;
        if (k == ll)
            continue;
        if (!have_header) {
            if (header(L, T, name, ls, ll, &ct, &cy))
                return L->err->code;
            have_header = 1;
            need = (ct > cy ? ct : cy) + 1;
            continue;
        }
        size_t b[MAX_COLS], e[MAX_COLS];
        size_t nc = split(ls, ll, b, e, MAX_COLS);
        if (nc < need)
            return table_error(L, T, line, ls, ll, "%zu cell%s, the header names %zu "
                               "columns", nc, nc == 1 ? "" : "s", need);
        double t, y;
        if (cell(L, T, line, ls, b[ct], e[ct], "t", &t) ||
            cell(L, T, line, ls, b[cy], e[cy], name, &y))
            return L->err->code;
        if (T->n && !(t > T->t[T->n - 1]))
            return table_error(L, T, line, ls, b[ct], "t = %.17g is not after the previous "
                               "row's t = %.17g: the times must increase strictly", t,
                               T->t[T->n - 1]);
        if (HS_VEC_RESERVE(T->t, T->cap, T->n + 1))
            return hs_error_nomem(L->err);
        size_t cap = T->cap;
        double *ny = realloc(T->y, cap * sizeof *ny);
        if (!ny)
            return hs_error_nomem(L->err);
        T->y = ny;
        T->t[T->n] = t;
        T->y[T->n++] = y;
    }
    if (!have_header)
        return hs_error_at(L->err, HS_EXIT_MODEL, T->path, 1, 1, "", "the input table is "
                           "empty (a header t,%s and rows of numbers expected)", name);
    if (!T->n)
        return hs_error_at(L->err, HS_EXIT_MODEL, T->path, line, 1, "", "the input table has "
                           "a header but no rows");
    return 0;
}

/* The table as input j of the model: three slots, the expression
 * a + s (t - t0) of its piece. */
static const hs_node *add_table(loader *L, const char *name, table *T)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    hs_input_table *tab = realloc(m->tab, (m->ntab + 1) * sizeof *tab);
    if (!tab) {
        hs_error_nomem(L->err);
        return NULL;
    }
    m->tab = tab;
    char sa[96], ss[96], st[96];       /* '@': no name a user can write */
    snprintf(sa, sizeof sa, "%s@value", name);
    snprintf(ss, sizeof ss, "%s@slope", name);
    snprintf(st, sizeof st, "%s@start", name);
    hs_input_table *tb = &m->tab[m->ntab];
    *tb = (hs_input_table){ T->n, T->t, T->y, hs_dag_symbol(d, sa), hs_dag_symbol(d, ss),
                            hs_dag_symbol(d, st) };
    if (tb->sym_a < 0 || tb->sym_s < 0 || tb->sym_t0 < 0) {
        hs_error_nomem(L->err);
        return NULL;
    }
    T->t = T->y = NULL;                 /* the model owns them now */
    m->ntab++;
    const hs_node *t = hs_sym(d, m->sym_t);
    return hs_add(d, hs_sym(d, tb->sym_a),
                  hs_mul(d, hs_sym(d, tb->sym_s), hs_sub(d, t, hs_sym(d, tb->sym_t0))));
}

/* x in the fewest of 15, 16, 17 digits that read back as x. */
static const char *short_num(char *buf, double x)
{
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, 32, "%.*g", p, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

static char *slurp(loader *L, const char *name, const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        option_error(L, name, path, -1, "cannot open the input table: %s", strerror(errno));
        return NULL;
    }
    char *buf = malloc(MAX_TABLE_BYTES + 1);
    size_t n = buf ? fread(buf, 1, MAX_TABLE_BYTES + 1, f) : 0;
    int bad = !buf || ferror(f);
    fclose(f);
    if (!buf) {
        hs_error_nomem(L->err);
        return NULL;
    }
    if (bad || n > MAX_TABLE_BYTES || memchr(buf, '\0', n)) {
        option_error(L, name, path, -1, "%s", bad ? "cannot read the input table"
                     : n > MAX_TABLE_BYTES ? "the input table is larger than 64 MiB"
                     : "a NUL byte in the input table (a binary file?)");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static const hs_node *read_table(loader *L, const char *name, const char *path)
{
    hs_model *m = L->m;
    table T = { path, NULL, 0, NULL, NULL, 0, 0 };
    char *text = slurp(L, name, path, &T.len);
    if (!text)
        return NULL;
    T.text = text;
    const hs_node *e = NULL;
    size_t nrows = 0;
    double first = 0, last = 0;
    if (!read_rows(L, &T, name)) {
        double *b = realloc(m->brk, (m->nbrk + T.n + 1) * sizeof *b);
        if (!b) {
            hs_error_nomem(L->err);
            e = NULL;
        } else {
            m->brk = b;
            memcpy(b + m->nbrk, T.t, T.n * sizeof *b);
            m->nbrk += T.n;
            nrows = T.n;
            first = T.t[0];
            last = T.t[T.n - 1];
            e = add_table(L, name, &T);
        }
    }
    char desc[700], t0[32], t1[32];
    if (e) {
        snprintf(desc, sizeof desc, "table %s: %zu row%s, t from %s to %s", path, nrows,
                 nrows == 1 ? "" : "s", short_num(t0, first), short_num(t1, last));
        size_t j = (size_t)hs_ld_find_named(L, NAME_PAR, name, strlen(name)) - m->input0;
        free(m->input_desc[j]);
        if (!(m->input_desc[j] = hs_ld_strdup(desc))) {
            hs_error_nomem(L->err);
            e = NULL;
        }
    }
    free(text);
    free(T.t);
    free(T.y);
    return e && !hs_ld_dag_check(L) ? e : NULL;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

int hs_model_input_is_table(const char *s)
{
    size_t n = strlen(s);
    return n > 4 && (strcmp(s + n - 4, ".csv") == 0 || strcmp(s + n - 4, ".CSV") == 0);
}

/* --input NAME that names no input: exit 2, with what NAME is instead. */
static int not_an_input(loader *L, const char *nm)
{
    char hint[200] = "";
    long p = hs_ld_find_named(L, NAME_PAR, nm, strlen(nm));
    if (p >= 0)
        snprintf(hint, sizeof hint, " ('%s' is a parameter: %s %s=VALUE)", nm,
                 hs_optname(L->m->names, HS_OPT_SET), nm);
    else if (hs_ld_find_coord(L->m, nm, strlen(nm)) >= 0)
        snprintf(hint, sizeof hint, " ('%s' is a coordinate)", nm);
    else if (!L->ninput)
        snprintf(hint, sizeof hint, " (it has no inputs: declare them with inputs: [%s])", nm);
    else {
        const char *names[64];
        size_t k = 0;
        for (size_t i = L->npar - L->ninput; i < L->npar && k < 64; i++)
            names[k++] = L->par[i].name;
        const char *near = hs_nearest(nm, names, k);
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
    }
    return hs_error_set(L->err, HS_EXIT_MODEL, "%s %s: the model has no input '%s'%s",
                        hs_optname(L->m->names, HS_OPT_INPUT), nm, nm, hint);
}

int hs_ld_input_values(loader *L)
{
    hs_model *m = L->m;
    size_t n0 = L->npar - L->ninput;
    if (!L->ov || !L->ov->input_symbols || !L->insrc)
        return 0;
    double t = isnan(L->ov->input_t) ? m->t0 : L->ov->input_t, saved = L->pin[m->sym_t];
    L->pin[m->sym_t] = t;
    int rc = 0;
    for (size_t j = 0; j < L->ninput && !rc; j++) {
        double v;
        if (!L->insrc[j])
            continue;
        const hs_input_table *tb = NULL;
        for (size_t k = 0; k < m->ntab; k++)
            if (L->intab && L->intab[j] == (long)k)
                tb = &m->tab[k];
        if (tb)
            v = hs_model_table_value(tb, t);
        else if (hs_eval_node(L->insrc[j], L->pin, &v)) {
            rc = hs_error_nomem(L->err);
            break;
        }
        if (!isfinite(v))
            rc = hs_error_set(L->err, HS_EXIT_MODEL, "%s %s: the value at t = %g is %g",
                              hs_optname(m->names, HS_OPT_INPUT), L->par[n0 + j].name, t, v);
        else
            m->pval[n0 + j] = L->pin[m->sym_p[n0 + j]] = v;
    }
    L->pin[m->sym_t] = saved;
    return rc;
}

int hs_ld_read_input_sources(loader *L)
{
    hs_model *m = L->m;
    const hs_overrides *ov = L->ov;
    size_t n0 = L->npar - L->ninput;
    if (!ov || !ov->ninput)
        return 0;
    long *last = xcalloc(L->ninput, sizeof *last);
    L->insrc = xcalloc(L->ninput, sizeof *L->insrc);
    L->intab = xcalloc(L->ninput, sizeof *L->intab);
    if (!last || !L->insrc || !L->intab) {
        free(last);
        return hs_error_nomem(L->err);
    }
    for (size_t j = 0; j < L->ninput; j++)
        last[j] = L->intab[j] = -1;
    int rc = 0;
    for (size_t i = 0; i < ov->ninput && !rc; i++) {
        const char *nm = ov->input_name[i];
        long p = hs_ld_find_named(L, NAME_PAR, nm, strlen(nm));
        if (p < 0 || !hs_ld_is_input(L, (size_t)p))
            rc = not_an_input(L, nm);
        else
            last[(size_t)p - n0] = (long)i;
    }
    for (size_t j = 0; j < L->ninput && !rc; j++) {
        if (last[j] < 0)
            continue;
        const char *nm = L->par[n0 + j].name, *text = ov->input_text[last[j]];
        const hs_node *e = hs_model_input_is_table(text) ? read_table(L, nm, text) : parse_source(L, nm, text);
        if (e && hs_model_input_is_table(text))
            L->intab[j] = (long)m->ntab - 1;
        if (!e) {
            rc = L->err->code ? L->err->code : HS_EXIT_MODEL;
            break;
        }
        L->insrc[j] = e;
        if (!hs_model_input_is_table(text)) {
            free(m->input_desc[j]);
            if (!(m->input_desc[j] = hs_ld_strdup(text))) {
                rc = hs_error_nomem(L->err);
                break;
            }
        }
    }
    free(last);
    if (!rc && m->nbrk) {             /* the tables' times, increasing, once each */
        qsort(m->brk, m->nbrk, sizeof *m->brk, cmp_double);
        size_t k = 0;
        for (size_t i = 0; i < m->nbrk; i++)
            if (!k || m->brk[i] != m->brk[k - 1])
                m->brk[k++] = m->brk[i];
        m->nbrk = k;
    }
    return rc;
}
