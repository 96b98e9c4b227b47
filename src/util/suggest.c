/* Nearest-word suggestions (suggest.h). */
#include "suggest.h"

#include <ctype.h>
#include <string.h>

size_t hs_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t sub = prev + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t del = row[j] + 1, ins = row[j - 1] + 1;
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            prev = cur;
        }
    }
    return row[lb];
}

const char *hs_nearest(const char *s, const char *const *cand, size_t n)
{
    const char *best = NULL;
    size_t bd = 99;
    for (size_t i = 0; i < n; i++) {
        size_t d = hs_edit_distance(s, cand[i]);
        if (d < bd) {
            bd = d;
            best = cand[i];
        }
    }
    size_t len = strlen(s);
    return bd <= (len < 4 ? 1 : len < 8 ? 2 : 3) ? best : NULL;
}
