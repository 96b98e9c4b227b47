/* The `mass` of a model (holosim-model(5), MASS): a diagonal list or a
 * symmetric matrix of expressions; the Cartesian form's own mass keeps a
 * diagonal list as its n entries alone (hs_model.M_diag). */
#include "loader.h"

#include <stdio.h>

static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

/* Mass: a diagonal list (n entries) or a symmetric n x n list of lists,
 * stored in M[n*n]; a diagonal list into Mdiag[n] alone when Mdiag is not
 * NULL (M is not touched then). */
static int read_mass(loader *L, yaml_node_t *n, size_t dim, const hs_node **M,
                     const hs_node **Mdiag)
{
    hs_dag *d = L->m->dag;
    if (n && n->type == YAML_SCALAR_NODE && dim <= 8) {
        /* the same mass on every coordinate: show the list to write */
        char list[200] = "";
        size_t len = 0;
        for (size_t i = 0; i < dim && len < sizeof list; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%.20s", i ? ", " : "",
                                    hs_ytree_str(n));
        if (dim == 1)
            return hs_ytree_error(L->y, L->err, n, "'mass' must be a list, found a scalar: "
                                  "write [%s]", list);
        return hs_ytree_error(L->y, L->err, n, "'mass' must be a list, found a scalar: for "
                              "the same mass on each of the %zu coordinates write [%s]", dim,
                              list);
    }
    if (hs_ld_expect(L, n, YAML_SEQUENCE_NODE, "'mass'"))
        return L->err->code;
    if (seq_len(n) != dim)
        return hs_ytree_error(L->y, L->err, n, "'mass' has %zu entr%s; expected %zu (a "
                              "diagonal) or %zu row%s", seq_len(n),
                              seq_len(n) == 1 ? "y" : "ies", dim, dim, plural(dim));
    yaml_node_t *first = NODE(L, *n->data.sequence.items.start);
    const hs_node *zero = scalar_zero(L);        /* one lookup, not dim^2 */
    for (size_t i = 0; (!Mdiag || first->type == YAML_SEQUENCE_NODE) && i < dim * dim; i++)
        M[i] = zero;
    if (first->type != YAML_SEQUENCE_NODE) {
        size_t i = 0;
        FOR_ITEMS(n, it) {
            yaml_node_t *e = NODE(L, *it);
            if (e->type != YAML_SCALAR_NODE)
                return hs_ytree_error(L->y, L->err, e, "'mass' mixes a diagonal list and "
                                      "matrix rows");
            const hs_node **at = Mdiag ? &Mdiag[i] : &M[i * dim + i];
            if (!(*at = hs_ld_parse(L, e, SCOPE_MODEL, "a mass entry")))
                return L->err->code;
            i++;
        }
        return 0;
    }
    size_t i = 0;
    FOR_ITEMS(n, it) {
        yaml_node_t *row = NODE(L, *it);
        if (row->type != YAML_SEQUENCE_NODE || seq_len(row) != dim)
            return hs_ytree_error(L->y, L->err, row, "mass matrix row %zu must be a list of "
                                  "%zu entr%s", i + 1, dim, dim == 1 ? "y" : "ies");
        size_t j = 0;
        FOR_ITEMS(row, jt) {
            M[i * dim + j] = hs_ld_parse(L, NODE(L, *jt), SCOPE_MODEL, "a mass entry");
            if (!M[i * dim + j])
                return L->err->code;
            j++;
        }
        i++;
    }
    for (i = 0; i < dim; i++)
        for (size_t j = 0; j < i; j++)
            if (M[i * dim + j] != M[j * dim + i]) {
                yaml_node_t *row = NODE(L, n->data.sequence.items.start[i]);
                yaml_node_t *e = NODE(L, row->data.sequence.items.start[j]);
                char a[128], b[128];
                hs_format(d, M[i * dim + j], a, sizeof a);
                hs_format(d, M[j * dim + i], b, sizeof b);
                return hs_ytree_error(L->y, L->err, e, "mass matrix is not symmetric: entry "
                                      "(%zu,%zu) is %s but (%zu,%zu) is %s; give both the "
                                      "same value", i + 1, j + 1, a, j + 1, i + 1, b);
            }
    return 0;
}

int hs_ld_read_mass(loader *L, yaml_node_t *n, size_t dim, const hs_node **M)
{
    return read_mass(L, n, dim, M, NULL);
}

int hs_ld_read_model_mass(loader *L, yaml_node_t *n)
{
    hs_model *m = L->m;
    size_t dim = m->n;
    /* rows: the matrix; anything else a diagonal list or an error */
    int diag = !(n && n->type == YAML_SEQUENCE_NODE && seq_len(n) > 0 &&
                 NODE(L, *n->data.sequence.items.start)->type == YAML_SEQUENCE_NODE);
    if (!diag && dim > MAX_DENSE_COORDS)
        return hs_ytree_error(L->y, L->err, n, "a mass matrix of %zu coordinates (the limit "
                              "is %d: it is kept as n x n; a diagonal mass, a list, has "
                              "none)", dim, MAX_DENSE_COORDS);
    if (diag ? !(m->M_diag = xcalloc(dim, sizeof *m->M_diag))
             : !(m->M = xcalloc(dim * dim, sizeof *m->M)))
        return hs_error_nomem(L->err);
    return read_mass(L, n, dim, m->M, m->M_diag);
}
