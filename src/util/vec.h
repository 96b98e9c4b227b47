/* Growable arrays: an array `T *p` with its capacity `size_t cap` (in
 * elements), grown by doubling.
 *
 *   if (HS_VEC_RESERVE(p, cap, n + 1))    room for n + 1 elements
 *       return out_of_memory();
 *   p[n++] = x;
 *
 * On failure the array is unchanged (still valid, still owned). */
#ifndef HS_VEC_H
#define HS_VEC_H

#include <stddef.h>

/* *pptr (a T ** passed as void *) holds at least need elements of size
 * bytes: 0, or -1 when out of memory.  A new array starts at min (>= 1)
 * elements. */
int hs_vec_reserve(void *pptr, size_t *cap, size_t need, size_t size, size_t min);

/* The test inline (a push onto a stack in a hot walk costs no call);
 * `need` and `cap` are read twice: pass plain expressions. */
#define HS_VEC_RESERVE(p, cap, need) \
    ((need) <= (cap) ? 0 : hs_vec_reserve(&(p), &(cap), (need), sizeof *(p), 16))

#endif
