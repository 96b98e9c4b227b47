/* Parameter overrides of the command line (params.h): --set entries and
 * --params files, in command-line order. */
#include "params.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/suggest.h"

enum { MAX_PARAMS_BYTES = 1 << 20 };   /* a parameter file is a short list */

void hs_params_init(hs_params *p)
{
    memset(p, 0, sizeof *p);
}

void hs_params_free(hs_params *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->name[i]);
        free(p->text[i]);
    }
    free(p->name);
    free(p->text);
    free(p->value);
    free(p->src);
    for (size_t i = 0; i < p->nfiles; i++) {
        hs_ytree_free(p->files[i]);
        free(p->files[i]);
    }
    free(p->files);
    memset(p, 0, sizeof *p);
}

static int grow(hs_params *p)
{
    if (p->n < p->cap)
        return 0;
    size_t cap = p->cap ? 2 * p->cap : 8;
    char **nm = realloc(p->name, cap * sizeof *nm);
    if (nm)
        p->name = nm;
    char **tx = realloc(p->text, cap * sizeof *tx);
    if (tx)
        p->text = tx;
    double *v = realloc(p->value, cap * sizeof *v);
    if (v)
        p->value = v;
    hs_param_src *s = realloc(p->src, cap * sizeof *s);
    if (s)
        p->src = s;
    if (!nm || !tx || !v || !s)
        return -1;
    p->cap = cap;
    return 0;
}

/* A plain number (what a --set held before it took expressions), else NAN. */
static double plain_number(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    return end != s && !*end && errno != ERANGE && isfinite(v) ? v : (double)NAN;
}

static int add_entry(hs_params *p, const char *name, size_t len, const char *text,
                     hs_param_src src, hs_error *err)
{
    if (grow(p))
        return hs_error_nomem(err);
    char *nm = malloc(len + 1), *tx = malloc(strlen(text) + 1);
    if (!nm || !tx) {
        free(nm);
        free(tx);
        return hs_error_nomem(err);
    }
    memcpy(nm, name, len);
    nm[len] = '\0';
    strcpy(tx, text);
    p->name[p->n] = nm;
    p->text[p->n] = tx;
    p->value[p->n] = plain_number(tx);
    p->src[p->n++] = src;
    return 0;
}

int hs_params_add(hs_params *p, const char *name, size_t len, const char *text,
                  hs_error *err)
{
    hs_param_src src = { -1, NULL, NULL };
    return add_entry(p, name, len, text, src, err);
}

static int is_ident(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

/* The syntax check of a value: every name is a free symbol here (which
 * names the model has is the loader's business), but no name takes a
 * prime: a parameter is a number. */
static const hs_node *free_name(void *ctx, hs_dag *d, const char *s, size_t len,
                                int primed, size_t off, int *status, hs_error *err)
{
    (void)ctx;
    (void)off;
    (void)err;
    char name[80];
    if (primed) {
        *status = HS_RESOLVE_NO_PRIME;
        return NULL;
    }
    snprintf(name, sizeof name, "%.*s", (int)(len < 79 ? len : 79), s);
    *status = HS_RESOLVE_OK;
    return hs_sym(d, hs_dag_symbol(d, name));
}

/* Positions of a value's bytes in its file, for the parser's messages. */
typedef struct at_value {
    const hs_ytree *y;
    const yaml_node_t *val;
} at_value;

static void locate(void *ctx, size_t off, int *line, int *col)
{
    const at_value *a = ctx;
    hs_ytree_scalar_pos(a->y, a->val, off, line, col);
}

static int check_syntax(hs_ytree *y, const hs_param_src *s, hs_error *err)
{
    hs_dag *d = hs_dag_new();
    if (!d)
        return hs_error_nomem(err);
    at_value a = { y, s->val };
    hs_resolver r = { .lookup = free_name, .ctx = &a, .locate = locate };
    hs_error pe;
    hs_error_init(&pe);
    const char *text = (const char *)s->val->data.scalar.value;
    const hs_node *e = hs_parse(d, text, s->val->data.scalar.length, 0, &r, &pe);
    hs_dag_free(d);
    if (e)
        return 0;
    if (pe.code == HS_EXIT_NOMEM)
        return hs_error_adopt(err, &pe, 0);
    hs_ytree_error_in(y, err, s->val, pe.offset >= 0 ? (size_t)pe.offset : 0, "%s", pe.msg);
    return hs_error_recode(err, HS_EXIT_USAGE);
}

/* The entries of a loaded file: a mapping of names to scalars. */
static int read_entries(hs_params *p, int fi, hs_error *err)
{
    hs_ytree *y = p->files[fi];
    yaml_node_t *root = hs_ytree_root(y);
    if (root->type != YAML_MAPPING_NODE) {
        hs_ytree_error(y, err, root, "a parameter file must be a mapping NAME: VALUE "
                       "(e.g. l: 2), found %s", hs_ytree_kind(root));
        return hs_error_recode(err, HS_EXIT_USAGE);
    }
    for (yaml_node_pair_t *q = root->data.mapping.pairs.start;
         q < root->data.mapping.pairs.top; q++) {
        hs_param_src s = { fi, hs_ytree_node(y, q->key), hs_ytree_node(y, q->value) };
        const char *k = hs_ytree_str(s.key);
        if (!k)
            hs_ytree_error(y, err, s.key, "a parameter name must be a scalar, found %s",
                           hs_ytree_kind(s.key));
        else if (!is_ident(k) || strlen(k) > 64)
            hs_ytree_error(y, err, s.key, "'%.64s' is not a valid parameter name (letters, "
                           "digits, _; not starting with a digit)", k);
        else if (s.val->type != YAML_SCALAR_NODE)
            hs_ytree_error(y, err, s.val, "the value of '%s' must be a number or an "
                           "expression, found %s", k, hs_ytree_kind(s.val));
        for (yaml_node_pair_t *o = root->data.mapping.pairs.start; !err->code && o < q; o++) {
            const char *ok = hs_ytree_str(hs_ytree_node(y, o->key));
            if (ok && strcmp(ok, k) == 0)
                hs_ytree_error(y, err, s.key, "duplicate parameter '%s' (first at line %d)",
                               k, (int)hs_ytree_node(y, o->key)->start_mark.line + 1);
        }
        if (err->code || check_syntax(y, &s, err))
            return hs_error_recode(err, HS_EXIT_USAGE);
        if (add_entry(p, k, strlen(k), (const char *)s.val->data.scalar.value, s, err))
            return err->code;
    }
    return 0;
}

/* The whole file, with messages that speak of a parameter file. */
static char *slurp(const char *path, size_t *len, hs_error *err)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        hs_error_set(err, HS_EXIT_USAGE, "--params: cannot open '%s': %s", path,
                     strerror(errno));
        return NULL;
    }
    char *buf = malloc(MAX_PARAMS_BYTES + 1);
    size_t n = buf ? fread(buf, 1, MAX_PARAMS_BYTES + 1, f) : 0;
    int bad = !buf || ferror(f);
    if (!is_stdin)
        fclose(f);
    if (!buf) {
        hs_error_nomem(err);
        return NULL;
    }
    if (bad || n > MAX_PARAMS_BYTES || memchr(buf, '\0', n)) {
        hs_error_set(err, HS_EXIT_USAGE, "--params: %s '%s'", bad ? "cannot read"
                     : n > MAX_PARAMS_BYTES ? "larger than 1 MiB:" : "a NUL byte (a binary file?) in", path);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int hs_params_read(hs_params *p, const char *path, hs_error *err)
{
    size_t len = 0;
    char *text = slurp(path, &len, err);
    if (!text)
        return err->code;
    hs_ytree **files = realloc(p->files, (p->nfiles + 1) * sizeof *files);
    hs_ytree *y = calloc(1, sizeof *y);
    if (files)
        p->files = files;
    if (!files || !y) {
        free(text);
        free(y);
        return hs_error_nomem(err);
    }
    p->files[p->nfiles++] = y;
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    int rc = hs_ytree_load_string(y, name, text, len, err);
    free(text);
    if (rc && strstr(err->msg, "empty model file")) {
        err->code = 0;      /* nothing but comments: no parameters */
        return 0;
    }
    if (rc) {
        char *mf = strstr(err->msg, "model file");
        if (mf && strlen(err->msg) + 4 < sizeof err->msg) {   /* "parameter file" */
            memmove(mf + 9, mf + 5, strlen(mf + 5) + 1);
            memcpy(mf, "parameter", 9);
        }
        return hs_error_recode(err, HS_EXIT_USAGE);
    }
    return read_entries(p, (int)p->nfiles - 1, err);
}

static int place(const void *ctx, size_t i, long off, hs_error *err)
{
    const hs_params *p = ctx;
    if (i >= p->n || p->src[i].file < 0)
        return 0;
    const hs_param_src *s = &p->src[i];
    hs_ytree *y = p->files[s->file];
    int line = (int)s->key->start_mark.line + 1, col = (int)s->key->start_mark.column + 1;
    if (off >= 0)
        hs_ytree_scalar_pos(y, s->val, (size_t)off, &line, &col);
    hs_ytree_place(y, err, line, col);
    return 1;
}

void hs_params_apply(const hs_params *p, hs_overrides *ov)
{
    ov->nset = p->n;
    ov->set_name = (const char *const *)p->name;
    ov->set_text = (const char *const *)p->text;
    ov->set_value = p->value;
    ov->set_place = place;
    ov->set_place_ctx = p;
}
