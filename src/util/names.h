/* Lists of names at scale, for the model loader: which names repeat an
 * earlier one, and whether a name is in a list, without comparing every
 * pair (a model of n coordinates has mappings of n keys: n^2 string
 * comparisons are seconds at n = 4096).
 *
 *   hs_names_repeated   dup[i] = 1 when s[i] equals some s[j], j < i
 *   hs_names_sorted     a sorted copy of a list, for hs_names_has
 *   hs_names_has        binary search in a sorted copy */
#ifndef HS_NAMES_H
#define HS_NAMES_H

#include <stddef.h>

/* s[i] may be NULL (counts as ""); NULL when out of memory; free() it. */
unsigned char *hs_names_repeated(const char *const *s, size_t n);

/* The pointers of s sorted by strcmp; NULL when out of memory; free() it. */
const char **hs_names_sorted(const char *const *s, size_t n);

int hs_names_has(const char *const *sorted, size_t n, const char *name);

#endif
