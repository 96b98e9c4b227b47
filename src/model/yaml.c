/* The loader's YAML helpers (loader.h): a key of a mapping, the type a
 * node must have, the keys a mapping may have (with "did you mean"),
 * expressions cut at a comma by a flow collection, and the scalars every
 * parsed expression came from (positions of run-time errors). */
#include "loader.h"
#include "../util/suggest.h"
#include "../util/vec.h"

#include <string.h>

char *hs_ld_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

int hs_ld_expect(loader *L, yaml_node_t *n, yaml_node_type_t type, const char *what)
{
    if (n && n->type == type)
        return 0;
    const char *want = type == YAML_MAPPING_NODE ? "a mapping"
                     : type == YAML_SEQUENCE_NODE ? "a list" : "a scalar";
    return hs_ytree_error(L->y, L->err, n, "%s must be %s, found %s%s", what, want,
                          hs_ytree_kind(n), type == YAML_MAPPING_NODE ? " (KEY: VALUE entries, "
                          "or {K: V})" : type == YAML_SEQUENCE_NODE ? " ([a, b], or - items)" : "");
}

/* The pair of a mapping with this key, or NULL. */
static yaml_node_pair_t *find_pair(loader *L, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    FOR_PAIRS(map, p) {
        const char *ks = hs_ytree_str(NODE(L, p->key));
        if (ks && strcmp(ks, key) == 0)
            return p;
    }
    return NULL;
}

yaml_node_t *hs_ld_get(loader *L, yaml_node_t *map, const char *key)
{
    yaml_node_pair_t *p = find_pair(L, map, key);
    return p ? NODE(L, p->value) : NULL;
}

yaml_node_t *hs_ld_get_key(loader *L, yaml_node_t *map, const char *key)
{
    yaml_node_pair_t *p = find_pair(L, map, key);
    return p ? NODE(L, p->key) : NULL;
}

/* '(' minus ')' in a plain scalar (0 for any other node). */
static long paren_balance(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    long b = 0;
    for (size_t i = 0; i < n->data.scalar.length; i++)
        b += n->data.scalar.value[i] == '(' ? 1 : n->data.scalar.value[i] == ')' ? -1 : 0;
    return b;
}

/* In a flow collection, piece[0] opens more parentheses than it closes and
 * the pieces after it (keys whose value is empty, or items) close them: the
 * text the user meant, joined with ", ". */
static int cut_error(loader *L, yaml_node_t **piece, size_t npiece)
{
    char hint[256];
    size_t len = 0;
    long b = 0;
    for (size_t i = 0; i < npiece && (i == 0 || b > 0); i++) {
        const char *s = hs_ytree_str(piece[i]);
        len += (size_t)snprintf(hint + (len < sizeof hint ? len : sizeof hint - 1),
                                len < sizeof hint ? sizeof hint - len : 1, "%s%s",
                                i ? ", " : "", s ? s : "");
        b += paren_balance(piece[i]);
    }
    if (b != 0 || len >= sizeof hint)
        return 0;                      /* not a cut expression: the parser will tell */
    return hs_ytree_error(L->y, L->err, piece[0], "'%s' is cut at a comma: YAML splits a "
                          "flow collection ({...} or [...]) at every comma; quote the "
                          "expression: \"%s\"", hs_ytree_str(piece[0]), hint);
}

int hs_ld_check_flow_cuts(loader *L, yaml_node_t *root)
{
    (void)root;                        /* every node of the document, once */
    yaml_document_t *doc = &L->y->doc;
    for (yaml_node_t *n = doc->nodes.start; n < doc->nodes.top; n++) {
        yaml_node_t *piece[8];
        if (n->type == YAML_MAPPING_NODE && n->data.mapping.style == YAML_FLOW_MAPPING_STYLE) {
            FOR_PAIRS(n, p) {
                if (paren_balance(NODE(L, p->value)) <= 0)
                    continue;
                size_t np = 0;
                piece[np++] = NODE(L, p->value);
                /* the rest went into keys of empty values */
                for (yaml_node_pair_t *q = p + 1; q < n->data.mapping.pairs.top && np < 8; q++) {
                    const char *v = hs_ytree_str(NODE(L, q->value));
                    if (!v || *v)
                        break;
                    piece[np++] = NODE(L, q->key);
                }
                if (np > 1 && cut_error(L, piece, np))
                    return L->err->code;
            }
        } else if (n->type == YAML_SEQUENCE_NODE &&
                   n->data.sequence.style == YAML_FLOW_SEQUENCE_STYLE) {
            FOR_ITEMS(n, it) {
                if (paren_balance(NODE(L, *it)) <= 0)
                    continue;
                size_t np = 0;
                for (yaml_node_item_t *j = it; j < n->data.sequence.items.top && np < 8; j++)
                    piece[np++] = NODE(L, *j);
                if (np > 1 && cut_error(L, piece, np))
                    return L->err->code;
            }
        }
    }
    return 0;
}

int hs_ld_add_src(loader *L, yaml_node_t *n)
{
    srcinfo *si = L->si;
    if (HS_VEC_RESERVE(si->node, si->cap, si->nsrc + 1))
        return -1;
    si->node[si->nsrc] = n;
    return (int)si->nsrc++;
}

/* A mapping's keys: scalars, unique, among allowed[] when given.  A table
 * for the duplicates (and for a long allowed[], e.g. the coordinates), so a
 * mapping of 100,000 keys is checked in linear time. */
int hs_ld_check_keys(loader *L, yaml_node_t *map, const char *const *allowed,
                     size_t nallowed, const char *where)
{
    hs_strmap seen = { 0 }, ok = { 0 };
    int rc = 0;
    for (size_t i = 0; i < nallowed && !rc; i++)
        if (hs_strmap_put(&ok, allowed[i], strlen(allowed[i]), (long)i, NULL) < 0)
            rc = hs_error_nomem(L->err);
    FOR_PAIRS(map, p) {
        if (rc)
            break;
        yaml_node_t *k = NODE(L, p->key);
        const char *ks = hs_ytree_str(k);
        if (!ks) {
            rc = hs_ytree_error(L->y, L->err, k, "keys in %s must be scalars (NAME: VALUE)",
                                where);
            break;
        }
        int r = hs_strmap_put(&seen, ks, strlen(ks), 0, NULL);
        if (r) {
            rc = r < 0 ? hs_error_nomem(L->err)
                       : hs_ytree_error(L->y, L->err, k, "duplicate key '%s' in %s: give each "
                                        "key once", ks, where);
            break;
        }
        if (!allowed || hs_strmap_get(&ok, ks, strlen(ks)) >= 0)
            continue;
        const char *near = hs_nearest(ks, allowed, nallowed);
        if (near)
            rc = hs_ytree_error(L->y, L->err, k, "unknown key '%s' in %s (did you mean '%s'?)",
                                ks, where, near);
        else {
            char list[400];     /* what may stand there: the fix is one of these */
            size_t len = 0;
            list[0] = '\0';
            for (size_t i = 0; i < nallowed && len + 1 < sizeof list; i++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                        i ? ", " : "", allowed[i]);
            rc = hs_ytree_error(L->y, L->err, k, "unknown key '%s' in %s (the keys there are "
                                "%s)", ks, where, list);
        }
    }
    hs_strmap_free(&seen);
    hs_strmap_free(&ok);
    return rc;
}
