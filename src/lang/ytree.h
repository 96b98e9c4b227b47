/* A thin layer over libyaml's document API for the model loader: load a
 * whole file, look nodes up, and turn positions (libyaml's 0-based marks,
 * offsets inside scalars) into 1-based FILE:LINE:COLUMN errors with the
 * source line.
 *
 * Before libyaml builds the document, the text is checked: UTF-16 and
 * UTF-32 files, NUL bytes, invalid UTF-8 and control characters are
 * refused with a message, and a first pass over libyaml's own event stream
 * refuses nesting deeper than HS_YTREE_MAX_DEPTH and more nodes, anchors
 * or aliases than the limits below (libyaml's scanner is quadratic in the
 * nesting of [ and {, its composer in the number of anchors, its document
 * 85 times the size of a file of short scalars).
 *
 * Positions: lines are counted at libyaml's line breaks (LF, CR, CR LF,
 * NEL U+0085, LS U+2028, PS U+2029), so they agree with libyaml's marks.
 * Columns count bytes from the start of the line (a UTF-8 character is 1 to
 * 4 columns), as hs_error's contract says; line 1 starts after a UTF-8 byte
 * order mark, so the source line shown in an error holds no BOM. */
#ifndef HS_YTREE_H
#define HS_YTREE_H

#include <stddef.h>
#include <yaml.h>

#include "../util/error.h"

/* Limits of a model file's YAML (a model nests 3 or 4 levels deep; libyaml
 * takes about 170 bytes of memory per node). */
#define HS_YTREE_MAX_DEPTH 64         /* lists and mappings, block and flow */
#define HS_YTREE_MAX_NODES 2000000    /* scalars, lists and mappings */
#define HS_YTREE_MAX_ANCHORS 1000     /* &name */
#define HS_YTREE_MAX_ALIASES 100000   /* *name */

/* Nodes added to the document after loading (model/family.c expands
 * indexed families into new nodes): each keeps the node of the file it was
 * made from (its template), a map from its value's bytes to the template's
 * (segments: bytes out..out+len come from src..src+len; a segment of length
 * 0 maps all its bytes to src), and the index values it was made at (a
 * note added to its error messages). */
typedef struct hs_ytree_seg {
    size_t out, src, len;
} hs_ytree_seg;
typedef struct hs_ytree_origin {
    int tmpl;              /* id of the template, a node of the file */
    long note;             /* offset of its note in notes, or -1 */
    size_t seg, nseg;      /* its segments in seg[] (nseg 0: the identity) */
} hs_ytree_origin;

typedef struct hs_ytree {
    const char *file;      /* name shown in errors ("-" = <stdin>) */
    char *text;            /* the whole file, NUL-terminated */
    size_t len;
    yaml_document_t doc;
    int loaded;
    int norig;             /* nodes of the file (ids 1..norig); 0: none added */
    hs_ytree_origin *origin;  /* [id - norig - 1] of an added node */
    size_t norigin;
    hs_ytree_seg *seg;
    size_t nseg;
    char *notes;           /* NUL-terminated notes, one after another */
    size_t nnotes;
} hs_ytree;

/* A place in the text: 1-based line, 1-based column in bytes from the
 * start of the line, 0-based byte offset from the start of the text (a
 * BOM included). */
typedef struct hs_ytree_pos {
    int line, col;
    size_t off;
} hs_ytree_pos;

/* Read `path` ("-" = standard input) and parse one YAML document.
 * Returns 0, or an error code with err set (encoding and YAML syntax
 * errors positioned, an empty file, more than one document). */
int hs_ytree_load(hs_ytree *y, const char *path, hs_error *err);
/* Parse from memory (text is copied; the same checks as hs_ytree_load). */
int hs_ytree_load_string(hs_ytree *y, const char *name, const char *text,
                         size_t len, hs_error *err);
void hs_ytree_free(hs_ytree *y);

yaml_node_t *hs_ytree_root(hs_ytree *y);
yaml_node_t *hs_ytree_node(hs_ytree *y, int id);

/* The place of a libyaml mark of a parse of `text` (UTF-8, libyaml's
 * mark.index counts characters, a CR LF pair as two, and no BOM). */
hs_ytree_pos hs_ytree_mark_pos(const char *text, size_t len, yaml_mark_t m);
/* The place of byte `off` of `text` (clamped to len). */
hs_ytree_pos hs_ytree_offset_pos(const char *text, size_t len, size_t off);

/* The 1-based file position of byte `off` of a scalar's value, following
 * the scalar through quotes, escapes and folded lines. */
void hs_ytree_scalar_pos(const hs_ytree *y, const yaml_node_t *n, size_t off,
                         int *line, int *col);

/* The note of an added node (the index values it was made at), or NULL. */
const char *hs_ytree_note(const hs_ytree *y, const yaml_node_t *n);

/* Record an error at a node (its start), or at an offset inside a scalar;
 * an added node's error is placed in its template, its note appended. */
int hs_ytree_error(const hs_ytree *y, hs_error *err, const yaml_node_t *n,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int hs_ytree_error_in(const hs_ytree *y, hs_error *err, const yaml_node_t *n,
                      size_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Fill file, line, column, offset and source line of err from a file
 * position (line and column as above). */
void hs_ytree_place(const hs_ytree *y, hs_error *err, int line, int col);

/* The scalar's text (NUL-terminated by libyaml) or NULL if not a scalar. */
const char *hs_ytree_str(const yaml_node_t *n);
/* Parse a scalar as a finite number; 0 on success, else an error. */
int hs_ytree_number(const hs_ytree *y, const yaml_node_t *n, double *out,
                    hs_error *err);
/* Kind names for messages: "a mapping", "a list", "a scalar". */
const char *hs_ytree_kind(const yaml_node_t *n);

#endif
