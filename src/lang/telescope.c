/* Sums that telescope: a family entry whose whole value is a running sum
 * over its own index,
 *
 *     x[i=A..B]: sum(j=A..i, BODY)          (or -sum(...))
 *
 * is the textbook way to write a chain's points, and written out it is
 * dense: member i holds i terms, the Jacobian a full triangle, the metric
 * N^3 work per evaluation.  The same numbers come from the running sum
 * S[i] = S[i-1] + BODY(j = i), each member reading the one before: the
 * form the structured path of an embedding recognizes (model/chain.c), at
 * O(N).  Before the families are written out, such an entry of `define`
 * becomes
 *
 *     x[i=A..A]: sum(j=A..i, BODY)
 *     x[i=(A)+1..B]: x[i-1] + sum(j=i..i, BODY)
 *
 * and such an entry of `embedding` reads a define family x__sum made so
 * (x[i=A..B]: x__sum[i]; a negated sum sums the negated terms, the same
 * numbers since negation is exact).  The terms are added in the same
 * order as the written-out sum's, left to right.  Only the whole value, a
 * sum whose lower bound is written as the family's and whose upper bound
 * is its index, is taken; anything else is written out as before. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct span {
    size_t a, b;               /* [a, b) of the text */
} span;

static span trimmed(const char *t, size_t a, size_t b)
{
    while (a < b && (t[a] == ' ' || t[a] == '\t'))
        a++;
    while (b > a && (t[b - 1] == ' ' || t[b - 1] == '\t'))
        b--;
    return (span){ a, b };
}

static int same(const char *t, span x, const char *u, span y)
{
    return x.b - x.a == y.b - y.a && memcmp(t + x.a, u + y.a, x.b - x.a) == 0;
}

/* "VAR=LO..HI" in t[a, b): the three spans; 0 when it is not one range. */
static int range_of(const char *t, size_t a, size_t b, span *var, span *lo, span *hi)
{
    size_t eq = 0, ne = hs_fm_binding_at(t, a, b, &eq);
    if (!ne)
        return 0;
    *var = trimmed(t, a, ne);
    for (size_t d = eq + 1; d + 1 < b; d++)
        if (t[d] == '.' && t[d + 1] == '.') {
            *lo = trimmed(t, eq + 1, d);
            *hi = trimmed(t, d + 2, b);
            return lo->b > lo->a && hi->b > hi->a && !memchr(t + eq + 1, ',', b - eq - 1);
        }
    return 0;
}

/* A key NAME[VAR=LO..HI] and nothing else. */
static int family_key(const char *k, span *name, span *var, span *lo, span *hi)
{
    size_t n = strlen(k), i = 0;
    span all = trimmed(k, 0, n);
    i = all.a;
    if (i >= all.b || !hs_fm_is_id0((unsigned char)k[i]))
        return 0;
    while (i < all.b && hs_fm_is_id((unsigned char)k[i]))
        i++;
    *name = (span){ all.a, i };
    if (i >= all.b || k[i] != '[' || hs_fm_close_of(k, i, all.b) != all.b - 1)
        return 0;
    return range_of(k, i + 1, all.b - 1, var, lo, hi);
}

/* A value [-]sum(J=LO..HI, BODY), the whole of it. */
static int whole_sum(const char *v, int *neg, span *j, span *lo, span *hi, span *body)
{
    span all = trimmed(v, 0, strlen(v));
    size_t i = all.a;
    *neg = i < all.b && v[i] == '-';
    if (*neg)
        i = trimmed(v, i + 1, all.b).a;
    if (all.b - i < 5 || memcmp(v + i, "sum", 3) != 0)
        return 0;
    size_t p = trimmed(v, i + 3, all.b).a;
    if (p >= all.b || v[p] != '(' || hs_fm_close_of(v, p, all.b) != all.b - 1)
        return 0;
    size_t cm = hs_fm_comma_of(v, p + 1, all.b - 1);
    if (cm >= all.b - 1 || !range_of(v, p + 1, cm, j, lo, hi))
        return 0;
    *body = trimmed(v, cm + 1, all.b - 1);
    return body->b > body->a;
}

/* Whether any key of map begins with prefix (a name the rewrite would take). */
static int taken(fam *F, int map, const char *prefix)
{
    if (!map || NODEP(F, map)->type != YAML_MAPPING_NODE)
        return 0;
    size_t n = strlen(prefix);
    yaml_node_t *m = NODEP(F, map);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const char *ks = hs_ytree_str(NODEP(F, p->key));
        if (ks && strncmp(ks, prefix, n) == 0)
            return 1;
    }
    return 0;
}

/* The two entries of a running sum NAME over VAR=LO..HI into map. */
static int running(fam *F, int map, const char *name, const char *k, span var, span lo,
                   span hi, const char *v, span j, span body, int neg, int tmpl)
{
    size_t cap = strlen(name) + 4 * (strlen(k) + strlen(v)) + 64;
    char *key = malloc(cap), *text = malloc(cap);
    int rc = key && text ? 0 : hs_fm_oom(F);
    int vl = (int)(var.b - var.a), ll = (int)(lo.b - lo.a), hl = (int)(hi.b - hi.a);
    int jl = (int)(j.b - j.a), bl = (int)(body.b - body.a);
    const char *V = k + var.a, *L = k + lo.a, *H = k + hi.a, *J = v + j.a, *B = v + body.a;
    const char *n0 = neg ? "-(" : "", *n1 = neg ? ")" : "";
    if (!rc) {
        snprintf(key, cap, "%s[%.*s=%.*s..%.*s]", name, vl, V, ll, L, ll, L);
        snprintf(text, cap, "sum(%.*s=%.*s..%.*s, %s%.*s%s)", jl, J, ll, L, vl, V, n0, bl, B,
                 n1);
        rc = hs_bd_add_entry(F, map, key, text, tmpl);
    }
    if (!rc) {
        snprintf(key, cap, "%s[%.*s=(%.*s)+1..%.*s]", name, vl, V, ll, L, hl, H);
        snprintf(text, cap, "%s[%.*s-1] + sum(%.*s=%.*s..%.*s, %s%.*s%s)", name, vl, V, jl, J,
                 vl, V, vl, V, n0, bl, B, n1);
        rc = hs_bd_add_entry(F, map, key, text, tmpl);
    }
    free(key);
    free(text);
    return rc;
}

/* One entry of `define` (embed 0) or `embedding` (embed 1) at pair index
 * i of map: rewritten when it is a running sum.  *moved: the entry was
 * replaced (the caller drops the pair). */
static int entry(fam *F, int map, size_t i, int embed, int *moved)
{
    yaml_node_pair_t p = NODEP(F, map)->data.mapping.pairs.start[i];
    const char *k = hs_ytree_str(NODEP(F, p.key)), *v = hs_ytree_str(NODEP(F, p.value));
    span name, var, lo, hi, j, slo, shi, body;
    int neg;
    *moved = 0;
    if (!k || !v || !family_key(k, &name, &var, &lo, &hi) ||
        !whole_sum(v, &neg, &j, &slo, &shi, &body) || !same(k, lo, v, slo) ||
        !same(k, var, v, shi))
        return 0;
    char base[160];
    if (name.b - name.a > 100)
        return 0;
    snprintf(base, sizeof base, "%.*s%s", (int)(name.b - name.a), k + name.a,
             embed ? "__sum" : "");
    int defs = hs_fm_get(F, 1, "define", NULL);
    if (embed && taken(F, defs, base))
        return 0;
    if (embed && !(defs = hs_bd_section(F, 1, "define", p.value)))
        return F->err->code;
    if (running(F, defs, base, k, var, lo, hi, v, j, body, neg, p.value))
        return F->err->code;
    if (embed) {              /* x[i=A..B]: x__sum[i], in place of the sum */
        char text[240];
        snprintf(text, sizeof text, "%s[%.*s]", base, (int)(var.b - var.a), k + var.a);
        int nv = hs_fm_add_scalar(F, text, strlen(text), p.value, 1);
        if (!nv)
            return F->err->code;
        NODEP(F, map)->data.mapping.pairs.start[i].value = nv;
        return 0;
    }
    *moved = 1;
    return 0;
}

int hs_fm_telescope(fam *F)
{
    static const char *const sections[2] = { "define", "embedding" };
    for (int s = 0; s < 2; s++) {
        int map = hs_fm_get(F, 1, sections[s], NULL);
        if (!map || NODEP(F, map)->type != YAML_MAPPING_NODE)
            continue;
        size_t n = (size_t)(NODEP(F, map)->data.mapping.pairs.top -
                            NODEP(F, map)->data.mapping.pairs.start);
        for (size_t i = 0; i < n; i++) {
            int moved;
            if (entry(F, map, i, s == 1, &moved))
                return F->err->code;
            if (moved) {      /* its two entries were appended: drop the pair */
                yaml_node_t *m = NODEP(F, map);
                yaml_node_pair_t *ps = m->data.mapping.pairs.start;
                size_t len = (size_t)(m->data.mapping.pairs.top - ps);
                memmove(ps + i, ps + i + 1, (len - i - 1) * sizeof *ps);
                m->data.mapping.pairs.top--;
                n--;
                i--;
            }
        }
    }
    return 0;
}
