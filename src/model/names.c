/* Names of a model file (loader.h): hashed name tables (util/map.h), so
 * that loading stays linear in the number of names; the clash checks (names
 * unique across coordinates, parameters, defines and ambient names; CSV
 * columns unique); and parameters and defines settled in dependency order
 * with an explicit stack, so a chain of 100,000 `p0: p1, p1: p2, ...` costs
 * no stack depth. */
#include "loader.h"

#include <stdint.h>
#include <string.h>

#include "../util/suggest.h"
#include "../util/vec.h"

/* ---------- lookups ---------- */

long hs_ld_find_coord(const hs_model *m, const char *s, size_t len)
{
    const srcinfo *si = m->src;
    return hs_strmap_get(&si->coords, s, len);
}

long hs_ld_find_named(const loader *L, int kind, const char *s, size_t len)
{
    long v = hs_strmap_get(&L->names, s, len);
    return v >= 0 && v % NAME_KINDS == kind ? v / NAME_KINDS : -1;
}

long hs_ld_find_constraint(const loader *L, const char *s, size_t len)
{
    return hs_strmap_get(&L->cons, s, len);
}

const hs_quantity *hs_ld_quantity(const loader *L, const char *s, size_t len, size_t *idx)
{
    for (size_t e = 0; e < HS_NQUANTITIES; e++) {
        const hs_quantity *q = &hs_quantities[e];
        size_t pl = strlen(q->prefix);
        long i = -1;
        if (q->per == HS_PER_MODEL)
            i = pl == len && memcmp(q->prefix, s, len) == 0 ? 0 : -1;
        else if (pl && !q->suffix[0] && len > pl && memcmp(q->prefix, s, pl) == 0)
            i = q->per == HS_PER_COORD ? hs_ld_find_coord(L->m, s + pl, len - pl)
              : q->per == HS_PER_CONSTRAINT ? hs_ld_find_constraint(L, s + pl, len - pl) : -1;
        if (i >= 0) {
            *idx = (size_t)i;
            return q;
        }
    }
    return NULL;
}

/* Names must be unique across coordinates, parameters, defines, ambient
 * names: each entered into one table, the first clash reported. */
int hs_ld_check_clashes(loader *L)
{
    static const char *const what[NAME_KINDS] = { "parameter", "define", "ambient name" };
    named *a[NAME_KINDS] = { L->par, L->def, L->amb };
    size_t n[NAME_KINDS] = { L->npar, L->ndef, L->namb };
    for (int g = 0; g < NAME_KINDS; g++)
        for (size_t i = 0; i < n[g]; i++) {
            const char *s = a[g][i].name;
            const char *kind = g == NAME_PAR && hs_ld_is_input(L, i) ? "input" : what[g];
            if (hs_ld_find_coord(L->m, s, strlen(s)) >= 0)
                return hs_ytree_error(L->y, L->err, a[g][i].key,
                                      "%s '%s' has the name of a coordinate; rename one of "
                                      "them", kind, s);
            long old;
            int r = hs_strmap_put(&L->names, s, strlen(s), (long)i * NAME_KINDS + g, &old);
            if (r < 0)
                return hs_error_nomem(L->err);
            if (r > 0) {
                int og = (int)(old % NAME_KINDS);
                size_t oi = (size_t)(old / NAME_KINDS);
                return hs_ytree_error(L->y, L->err, a[g][i].key,
                                      "%s '%s' clashes with %s '%s' at line %d; rename one "
                                      "of them", kind, s, og == NAME_PAR &&
                                      hs_ld_is_input(L, oi) ? "input" : what[og], s,
                                      (int)a[og][old / NAME_KINDS].key->start_mark.line + 1);
            }
        }
    return 0;
}

/* ---------- every name means one thing ---------- */

/* The names of a model: the quantities of the table (model.h) for its
 * coordinates, constraints, outputs and ambient names, then its parameters
 * and defines.  A name made twice would be two columns of one name, or a
 * column that shows one thing while expressions read another under its
 * name (a define lambda_rod beside the multiplier of constraint rod):
 * refused at the name the user chose (a coordinate, output, ambient name,
 * parameter or define), naming the quantity it would hide. */
typedef struct taken {
    const hs_quantity *q;       /* NULL: a parameter or define */
    const char *kind;           /* then "parameter" or "define" */
    const char *base;           /* the coordinate, constraint ... (NULL per model) */
    yaml_node_t *node;          /* where it comes from (NULL: built in) */
} taken;

typedef struct namecheck {
    loader *L;
    hs_strmap tab;              /* name -> index into str, who */
    struct made {
        char *str;              /* the name (owned) */
        taken who;
    } *e;                       /* [n] */
    size_t n, cap;
} namecheck;

/* A name the user wrote as it is: a coordinate, output, ambient name,
 * parameter or define. */
static int is_bare(const taken *t)
{
    return !t->q || (t->q->per != HS_PER_MODEL && !t->q->prefix[0] && !t->q->suffix[0]);
}

/* "the Jacobi integral H", "R_x, the reaction on coordinate 'x'", "a
 * coordinate", "a parameter" */
static void describe(const taken *t, const char *name, char *buf, size_t size)
{
    if (!t->q)
        snprintf(buf, size, "a %s", t->kind);
    else if (t->q->per == HS_PER_MODEL || t->q->per == HS_PER_CONTACTS)
        snprintf(buf, size, "%s %s", t->q->what, name);
    else if (is_bare(t))
        snprintf(buf, size, "%s %s", t->q->what[0] == 'o' || t->q->what[0] == 'a' ? "an" : "a",
                 t->q->what);
    else
        snprintf(buf, size, "%s, %s '%s'", name, t->q->what, t->base);
}

static int name_add(namecheck *C, const char *name, taken who)
{
    loader *L = C->L;
    char *str = NULL;
    if (HS_VEC_RESERVE(C->e, C->cap, C->n + 1) || !(str = hs_ld_strdup(name)))
        return hs_error_nomem(L->err);
    size_t i = C->n++;
    C->e[i] = (struct made){ str, who };
    long old;
    int r = hs_strmap_put(&C->tab, str, strlen(str), (long)i, &old);
    if (r <= 0)
        return r < 0 ? hs_error_nomem(L->err) : 0;
    const taken *o = &C->e[old].who, *t = &C->e[i].who;
    char was[200], at[64] = "";
    describe(o, name, was, sizeof was);
    if (o->node)
        snprintf(at, sizeof at, " (line %d, column %d)", (int)o->node->start_mark.line + 1,
                 (int)o->node->start_mark.column + 1);
    const char *kind = t->q ? t->q->what : t->kind;
    if (!is_bare(t)) {                  /* two quantities of the table */
        char is[200];
        describe(t, name, is, sizeof is);
        return hs_ytree_error(L->y, L->err, t->node, "the column '%s' (%s) is also the "
                              "column of %s%s: rename one of them", name, is, was, at);
    }
    if (is_bare(o))
        return hs_ytree_error(L->y, L->err, t->node, "%s '%s' has the name of %s%s: "
                              "rename one of them", kind, name, was, at);
    return hs_ytree_error(L->y, L->err, t->node, "%s '%s' would hide %s%s, a %s%s: rename "
                          "the %s", kind, name, was, at,
                          o->q->flags & HS_QTY_COLUMN ? "column" : "built-in name",
                          o->q->flags & HS_QTY_DERIVED ? " outputs and events read" : "",
                          kind);
}

/* Where the i-th name of a per-thing entry is written in the file. */
static yaml_node_t *thing_node(loader *L, yaml_node_t *root, hs_qty_per per, size_t i)
{
    yaml_node_t *n;
    switch (per) {
    case HS_PER_COORD:
        n = hs_ld_get(L, root, "coordinates");
        return NODE(L, n->data.sequence.items.start[i]);
    case HS_PER_CONTACT:
        i += L->m->contact0;
        /* fall through */
    case HS_PER_CONSTRAINT:
        if (i >= L->m->fric0)
            return hs_ld_friction_node(L, root, i - L->m->fric0);
        if (i >= L->m->contact0)
            return hs_ld_contact_node(L, root, i - (L->m->contact0));
        n = hs_ld_get(L, root, "constraints");
        return n->type == YAML_MAPPING_NODE ? NODE(L, n->data.mapping.pairs.start[i].key)
                                            : NODE(L, n->data.sequence.items.start[i]);
    case HS_PER_OUTPUT:
        n = hs_ld_get(L, root, "outputs");
        return NODE(L, n->data.mapping.pairs.start[i].key);
    case HS_PER_AMB:
        return L->amb[i].key;
    case HS_PER_MODEL:
    case HS_PER_CONTACTS:
        break;
    }
    return NULL;
}

int hs_ld_check_names(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    namecheck C = { L, { 0 }, NULL, 0, 0 };
    int rc = 0;
    /* the quantities first, the names as the user wrote them last: a clash
     * is reported at the user's name */
    for (int bare = 0; bare < 2; bare++)
        for (size_t e = 0; e < HS_NQUANTITIES && !rc; e++) {
            const hs_quantity *q = &hs_quantities[e];
            taken t = { q, NULL, NULL, NULL };
            if (is_bare(&t) != bare)
                continue;
            for (size_t i = 0; i < hs_quantity_count(m, q) && !rc; i++) {
                char name[160];
                if (hs_quantity_name(m, q, i, name, sizeof name) >= sizeof name)
                    continue;           /* longer than any name a user can write */
                t.base = hs_quantity_base(m, q, i);
                t.node = thing_node(L, root, q->per, i);
                rc = name_add(&C, name, t);
            }
        }
    for (size_t i = 0; i < L->npar && !rc; i++)
        rc = name_add(&C, L->par[i].name, (taken){ NULL, hs_ld_is_input(L, i) ? "input"
                                                   : "parameter", NULL, L->par[i].key });
    for (size_t i = 0; i < L->ndef && !rc; i++)
        rc = name_add(&C, L->def[i].name, (taken){ NULL, "define", NULL, L->def[i].key });
    for (size_t i = 0; i < C.n; i++)
        free(C.e[i].str);
    free(C.e);
    hs_strmap_free(&C.tab);
    return rc;
}

/* ---------- where an entry is, what kind it is ---------- */

yaml_node_t *hs_ld_contact_node(loader *L, yaml_node_t *root, size_t c)
{
    yaml_node_t *cs = hs_ld_get(L, root, "contacts");
    return cs ? NODE(L, cs->data.mapping.pairs.start[c].key) : NULL;
}

int hs_ld_is_input(const loader *L, size_t par)
{
    return par >= L->npar - L->ninput && par < L->npar;
}

size_t hs_ld_friction_section_len(loader *L, yaml_node_t *root)
{
    yaml_node_t *fs = hs_ld_get(L, root, "friction");
    return fs && fs->type == YAML_MAPPING_NODE ? map_len(fs) : 0;
}

yaml_node_t *hs_ld_friction_node(loader *L, yaml_node_t *root, size_t f)
{
    yaml_node_t *fs = hs_ld_get(L, root, "friction"), *key = NULL;
    size_t ns = hs_ld_friction_section_len(L, root);
    if (f < ns)
        return NODE(L, fs->data.mapping.pairs.start[f].key);
    hs_ld_contact_friction(L, root, f - ns, &key);
    return key;
}

/* The contacts' `friction` keys: the c-th contact with one (or how many
 * there are, for c = SIZE_MAX), its key node into *key. */
size_t hs_ld_contact_friction(loader *L, yaml_node_t *root, size_t c, yaml_node_t **key)
{
    yaml_node_t *cs = hs_ld_get(L, root, "contacts");
    size_t cnt = 0;
    if (!cs || cs->type != YAML_MAPPING_NODE)
        return 0;
    FOR_PAIRS(cs, p) {
        yaml_node_t *v = NODE(L, p->value);
        yaml_node_t *k = v->type == YAML_MAPPING_NODE ? hs_ld_get_key(L, v, "friction") : NULL;
        if (!k)
            continue;
        if (cnt++ == c) {
            *key = k;
            return cnt;
        }
    }
    return cnt;
}
