/* Growable arrays (vec.h). */
#include "vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int hs_vec_reserve(void *pptr, size_t *cap, size_t need, size_t size, size_t min)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : (min ? min : 1);
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return -1;
        nc *= 2;
    }
    if (nc > SIZE_MAX / size)
        return -1;
    void *p;
    memcpy(&p, pptr, sizeof p);          /* the caller's T *, whatever T */
    void *q = realloc(p, nc * size);
    if (!q)
        return -1;
    memcpy(pptr, &q, sizeof q);
    *cap = nc;
    return 0;
}
