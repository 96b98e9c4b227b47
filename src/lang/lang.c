/* The door of the model language (lang.h): families first (they may
 * write bodies, springs and D(...) out of templates), then bodies,
 * springs, dissipation and D(...) on the expanded root, then points
 * written out in full as a chain of defines. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int hs_lang_structural(const hs_lang_info *info, const char *name)
{
    for (size_t i = 0; info && i < info->nspar; i++)
        if (strcmp(info->spar[i], name) == 0)
            return 1;
    return 0;
}

void hs_lang_info_free(hs_lang_info *info)
{
    if (!info)
        return;
    for (size_t i = 0; i < info->nspar; i++)
        free(info->spar[i]);
    free(info->spar);
    free(info->families);
    for (size_t i = 0; i < info->nspring; i++) {
        hs_lang_spring *S = &info->spring[i];
        free(S->name);
        for (int e = 0; e < 2; e++) {
            free(S->end[e]);
            for (int c = 0; c < 3; c++)
                free(S->at[e][c]);
        }
    }
    free(info->spring);
    memset(info, 0, sizeof *info);
}

int hs_lang_expand(hs_ytree *y, const hs_lang_sets *sets, hs_lang_info *info, hs_error *err)
{
    yaml_node_t *root = hs_ytree_root(y);
    if (!root || root->type != YAML_MAPPING_NODE)
        return 0;
    fam F;
    memset(&F, 0, sizeof F);
    F.sets = sets;
    F.info = info;
    F.y = y;
    F.doc = &y->doc;
    F.err = err;
    F.note = -1;
    int fams = hs_fm_uses(&F, 1), bodies = hs_bd_uses(&F, 1);
    int rc = 0;
    if (!fams && !bodies) {    /* only points written out in full, if any */
        rc = hs_fm_prefix(&F);
        hs_fm_free(&F);
        return rc ? (err->code ? err->code : HS_EXIT_MODEL) : 0;
    }
    y->norig = (int)(F.doc->nodes.top - F.doc->nodes.start);
    rc = hs_fm_params(&F);
    if (!rc && fams)
        rc = hs_fm_telescope(&F);
    if (!rc && fams)
        rc = hs_fm_expand(&F);
    if (!rc && bodies)
        rc = hs_bd_expand(&F, 1);
    if (!rc)
        rc = hs_fm_prefix(&F);
    if (!rc && y->norigin + (size_t)y->norig > HS_YTREE_MAX_NODES)
        rc = hs_ytree_error(y, err, hs_ytree_root(y), "the families expand to more than "
                            "%d YAML nodes", HS_YTREE_MAX_NODES);
    hs_fm_free(&F);
    return rc ? (err->code ? err->code : HS_EXIT_MODEL) : 0;
}
