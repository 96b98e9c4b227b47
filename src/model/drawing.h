/* Private to the drawing's files (draw.c: the `draw` key, the program;
 * drawinfer.c: the default inferred from the names): the drawing under
 * construction and the helpers both use (drawbuild.c, prefix hs_dw_). */
#ifndef HS_MODEL_DRAWING_H
#define HS_MODEL_DRAWING_H

#include "loader.h"

#define LINE_RGB 0x1f3a5f        /* segments and polylines */
#define POINT_RGB 0xd62728       /* dots */
#define CIRCLE_RGB 0x1f77b4
#define GROUND_RGB 0x404040
#define SPRING_RGB 0x8c6d31      /* springs (inferred drawing) */

typedef struct dbuild {
    loader *L;
    hs_drawing *d;
    const hs_node **expr;      /* [nexpr] the program's roots: 3 per point, radii after */
    size_t nexpr, cap;
    size_t ptcap, itemcap;
    const hs_node **rad;       /* [nrad] circle radii */
    size_t nrad, radcap;
} dbuild;

int hs_dw_oom(loader *L);
/* *p grown (doubling) to hold need elements of size; -1 out of memory. */
int hs_dw_grow(void **p, size_t *cap, size_t need, size_t size);
/* A point named name at (x, y, z) (z NULL: a planar point); its index, or
 * -1 (out of memory, recorded). */
long hs_dw_add_point(dbuild *B, const char *name, const hs_node *x, const hs_node *y,
                     const hs_node *z);
long hs_dw_find_point(const hs_drawing *d, const char *s);   /* -1: none */
/* A new item of npt points (filled by the caller); NULL out of memory. */
hs_draw_item *hs_dw_add_item(dbuild *B, hs_draw_kind kind, size_t npt, unsigned rgb);
/* Whether the drawing already joins points a and b by a segment. */
int hs_dw_has_segment(const hs_drawing *d, size_t a, size_t b);
int hs_dw_long_cmp(const void *pa, const void *pb);

/* drawinfer.c: the default drawing of a model without a `draw` key. */
int hs_dw_infer(dbuild *B, yaml_node_t *root);

#endif
