/* Every file a command reads or writes, compared in one place: no output
 * may be an input (the model, a --params or --points file, an --input
 * table, a CSV operand, standard input when one of them is "-") or another
 * output.  The option
 * table (opts.c) marks each option that names a file as an input or an
 * output, and the parser records it in opts.files, so an option added
 * there is checked here without more code; a command adds the files it
 * derives itself (standard output, the CSV operand of animate, each batch
 * point's CSV and status).
 *
 * Two paths name one file when both exist and have one device and inode
 * (symbolic and hard links, ./x, stdin and stdout through fstat), or, when
 * neither exists yet, when their canonical names (directory resolved, a
 * dangling link followed) are equal.  Two names of /dev/null or of a
 * terminal are fine: only a regular file, or one to be created, is
 * clobbered. */
#define _XOPEN_SOURCE 700   /* realpath */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct fileid {
    const char *what;          /* "the model file", "-o", ... for messages */
    const char *path;
    int out;                   /* an output */
    int exists;                /* dev, ino, mode valid */
    dev_t dev;
    ino_t ino;
    mode_t mode;
    char *canon;               /* absolute path with every link resolved, or NULL */
    int nomem;                 /* canon not found for want of memory */
} fileid;

struct hs_cli_files {
    fileid *f;
    size_t n, cap;
};

static char *canon(const char *path, int depth)
{
    char *r = realpath(path, NULL);
    if (r)
        return r;
    struct stat st;
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    if (depth < 16 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        size_t cap = (size_t)st.st_size + 2 > 4096 ? (size_t)st.st_size + 2 : 4096;
        char *link = malloc(cap);
        ssize_t n = link ? readlink(path, link, cap - 1) : -1;
        if (n <= 0) {
            free(link);
            return NULL;
        }
        link[n] = '\0';
        char *target = malloc(dlen + (size_t)n + 2);
        if (!target) {
            free(link);
            return NULL;
        }
        if (link[0] == '/' || !slash)
            snprintf(target, (size_t)n + 1, "%s", link);
        else
            snprintf(target, dlen + (size_t)n + 2, "%.*s/%s", (int)dlen, path, link);
        free(link);
        r = canon(target, depth + 1);
        free(target);
        return r;
    }
    char *dir = strndup(slash ? path : ".", slash ? (dlen ? dlen : 1) : 1);
    char *rd = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (!rd)
        return NULL;
    const char *base = slash ? slash + 1 : path;
    size_t len = strlen(rd) + strlen(base) + 2;
    r = malloc(len);
    if (r)
        snprintf(r, len, "%s/%s", rd, base);
    free(rd);
    return r;
}

char *hs_cli_canon_path(const char *path)
{
    return canon(path, 0);
}

/* "-" is standard input for an input, standard output for an output. */
static void identify(fileid *f, const char *what, const char *path, int out)
{
    struct stat st;
    int fd = strcmp(path, "-") == 0 ? (out ? 1 : 0) : -1;
    memset(f, 0, sizeof *f);
    f->what = what;
    f->path = path;
    f->out = out;
    if (fd >= 0 ? fstat(fd, &st) == 0 : stat(path, &st) == 0) {
        f->exists = 1;
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        f->mode = st.st_mode;
    }
    if (fd < 0 && !f->exists) {
        errno = 0;
        f->canon = canon(path, 0);
        f->nomem = !f->canon && errno == ENOMEM;
    }
}

/* Same file, and one that writing would clobber. */
static int clobbers(const fileid *a, const fileid *b)
{
    if (a->exists && b->exists)
        return a->dev == b->dev && a->ino == b->ino && S_ISREG(a->mode);
    return !a->exists && !b->exists && a->canon && b->canon && strcmp(a->canon, b->canon) == 0;
}

hs_cli_files *hs_cli_files_new(const opts *o)
{
    hs_cli_files *F = calloc(1, sizeof *F);
    if (!F)
        return NULL;
    if (o->model && hs_cli_files_add(F, "the model file", o->model, 0)) {
        hs_cli_files_free(F);
        return NULL;
    }
    for (size_t i = 0; i < o->nfiles; i++)
        if (!o->files[i].out && hs_cli_files_add(F, o->files[i].what, o->files[i].path, 0)) {
            hs_cli_files_free(F);
            return NULL;
        }
    for (size_t i = 0; i < o->ninput; i++)      /* --input NAME=FILE.csv */
        if (hs_model_input_is_table(o->input_text[i]) &&
            hs_cli_files_add(F, "the --input table", o->input_text[i], 0)) {
            hs_cli_files_free(F);
            return NULL;
        }
    return F;
}

int hs_cli_files_add(hs_cli_files *F, const char *what, const char *path, int out)
{
    if (F->n == F->cap) {
        size_t c = F->cap ? 2 * F->cap : 8;
        fileid *nf = realloc(F->f, c * sizeof *nf);
        if (!nf)
            return -1;
        F->f = nf;
        F->cap = c;
    }
    identify(&F->f[F->n], what, path, out);
    if (F->f[F->n].nomem)
        return -1;
    F->n++;
    return 0;
}

static int refuse(const fileid *out, const fileid *in, int model)
{
    fprintf(stderr, "holosim: %s '%s' and %s '%s' are the same file: refusing to %s\n",
            out->what, out->path, in->what, in->path,
            model ? "overwrite the model with it"
            : !in->out ? "overwrite an input with it" : "write two outputs into it");
    return HS_EXIT_USAGE;
}

int hs_cli_files_check(hs_cli_files *F, const opts *o)
{
    for (size_t i = 0; i < o->nfiles; i++)
        if (o->files[i].out && hs_cli_files_add(F, o->files[i].what, o->files[i].path, 1))
            return hs_cli_nomem();
    /* inputs first, whatever the order they were added in */
    for (size_t j = 0; j < F->n; j++) {
        if (!F->f[j].out)
            continue;
        for (size_t i = 0; i < F->n; i++)
            if (!F->f[i].out && clobbers(&F->f[i], &F->f[j]))
                return refuse(&F->f[j], &F->f[i], i == 0 && o->model);
        for (size_t i = 0; i < j; i++)
            if (F->f[i].out && clobbers(&F->f[i], &F->f[j]))
                return refuse(&F->f[j], &F->f[i], 0);
    }
    return 0;
}

int hs_cli_files_check_one(const hs_cli_files *F, const char *what, const char *path)
{
    fileid g;
    struct stat st;
    if (stat(path, &st) != 0)           /* to be created: only an output names it */
        return 0;
    memset(&g, 0, sizeof g);
    g.what = what;
    g.path = path;
    g.out = 1;
    g.exists = 1;
    g.dev = st.st_dev;
    g.ino = st.st_ino;
    g.mode = st.st_mode;
    for (size_t i = 0; i < F->n; i++)
        if (clobbers(&F->f[i], &g))
            return refuse(&g, &F->f[i], i == 0 && strcmp(F->f[0].what, "the model file") == 0);
    return 0;
}

void hs_cli_files_free(hs_cli_files *F)
{
    if (!F)
        return;
    for (size_t i = 0; i < F->n; i++)
        free(F->f[i].canon);
    free(F->f);
    free(F);
}

int hs_cli_check_files(const opts *o, const char *what_in, const char *in,
                       const char *what_out, const char *out)
{
    hs_cli_files *F = hs_cli_files_new(o);
    int rc = !F || (in && hs_cli_files_add(F, what_in, in, 0)) ||
                     (out && hs_cli_files_add(F, what_out, out, 1))
             ? hs_cli_nomem() : hs_cli_files_check(F, o);
    hs_cli_files_free(F);
    return rc;
}
