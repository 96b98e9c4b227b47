/* A thin layer over libyaml's document API for the model loader: load a
 * whole file, look nodes up, and turn positions (libyaml's 0-based marks,
 * offsets inside scalars) into 1-based FILE:LINE:COLUMN errors with the
 * source line. */
#ifndef HS_YTREE_H
#define HS_YTREE_H

#include <stddef.h>
#include <yaml.h>

#include "../util/error.h"

typedef struct hs_ytree {
    const char *file;      /* name shown in errors ("-" = <stdin>) */
    char *text;            /* the whole file, NUL-terminated */
    size_t len;
    yaml_document_t doc;
    int loaded;
} hs_ytree;

/* Read `path` ("-" = standard input) and parse one YAML document.
 * Returns 0, or an error code with err set (YAML syntax errors positioned,
 * an empty file, more than one document). */
int hs_ytree_load(hs_ytree *y, const char *path, hs_error *err);
/* Parse from memory (text is copied). */
int hs_ytree_load_string(hs_ytree *y, const char *name, const char *text,
                         size_t len, hs_error *err);
void hs_ytree_free(hs_ytree *y);

yaml_node_t *hs_ytree_root(hs_ytree *y);
yaml_node_t *hs_ytree_node(hs_ytree *y, int id);

/* The 1-based file position of byte `off` of a scalar's value, following
 * the scalar through quotes, escapes and folded lines. */
void hs_ytree_scalar_pos(const hs_ytree *y, const yaml_node_t *n, size_t off,
                         int *line, int *col);

/* Record an error at a node (its start), or at an offset inside a scalar. */
int hs_ytree_error(const hs_ytree *y, hs_error *err, const yaml_node_t *n,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int hs_ytree_error_in(const hs_ytree *y, hs_error *err, const yaml_node_t *n,
                      size_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Fill file, line, column and source line of err from a file position. */
void hs_ytree_place(const hs_ytree *y, hs_error *err, int line, int col);

/* The scalar's text (NUL-terminated by libyaml) or NULL if not a scalar. */
const char *hs_ytree_str(const yaml_node_t *n);
/* Parse a scalar as a finite number; 0 on success, else an error. */
int hs_ytree_number(const hs_ytree *y, const yaml_node_t *n, double *out,
                    hs_error *err);
/* Kind names for messages: "a mapping", "a list", "a scalar". */
const char *hs_ytree_kind(const yaml_node_t *n);

#endif
