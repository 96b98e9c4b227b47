/* "Did you mean ...?": the candidate nearest to a misspelt word.
 *
 *   hs_edit_distance   Levenshtein distance, case-insensitive (words of at
 *                      most 64 bytes; longer ones are "far")
 *   hs_nearest         the closest of a list of candidates, or NULL when
 *                      none is close enough to be a likely typo
 *
 * Shared by the model loader (unknown keys) and the command line (unknown
 * options and commands). */
#ifndef HS_SUGGEST_H
#define HS_SUGGEST_H

#include <stddef.h>

size_t hs_edit_distance(const char *a, const char *b);

/* The candidate nearest to s: distance at most 1 for words shorter than 4
 * bytes, 2 below 8, else 3; NULL when none qualifies. */
const char *hs_nearest(const char *s, const char *const *cand, size_t n);

#endif
