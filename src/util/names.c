/* Lists of names at scale (names.h): sorting instead of pairs. */
#include "names.h"

#include <stdlib.h>
#include <string.h>

/* A name and its place in the list: ties sort by place. */
typedef struct ref {
    const char *s;
    size_t i;
} ref;

static int ref_cmp(const void *pa, const void *pb)
{
    const ref *a = pa, *b = pb;
    int c = strcmp(a->s, b->s);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

static int str_cmp(const void *pa, const void *pb)
{
    return strcmp(*(const char *const *)pa, *(const char *const *)pb);
}

unsigned char *hs_names_repeated(const char *const *s, size_t n)
{
    ref *r = malloc((n ? n : 1) * sizeof *r);
    unsigned char *dup = calloc(n ? n : 1, 1);
    if (!r || !dup) {
        free(r);
        free(dup);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        r[i] = (ref){ s[i] ? s[i] : "", i };
    qsort(r, n, sizeof *r, ref_cmp);
    /* in a run of equal names, all but the first in list order repeat */
    for (size_t i = 1; i < n; i++)
        if (strcmp(r[i].s, r[i - 1].s) == 0)
            dup[r[i].i] = 1;
    free(r);
    return dup;
}

const char **hs_names_sorted(const char *const *s, size_t n)
{
    const char **c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return NULL;
    memcpy(c, s, n * sizeof *c);
    qsort(c, n, sizeof *c, str_cmp);
    return c;
}

int hs_names_has(const char *const *sorted, size_t n, const char *name)
{
    return bsearch(&name, sorted, n, sizeof *sorted, str_cmp) != NULL;
}
