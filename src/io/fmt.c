/* Shortest round-trip formatting with long double (64-bit mantissa on
 * x86-64): scale x by a power of ten, round to p digits, and accept the
 * digits when the decimal value lies within 0.498 ulp of x by an
 * extended-precision check (its error is below 1e-3 ulp); values in the
 * doubtful band fall back to snprintf, which is exact. */
#include "fmt.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P10_MIN (-350)
#define P10_MAX 350

static long double p10[P10_MAX - P10_MIN + 1];
static int p10_ready;

static int ld_ok;   /* long double really carries 64 mantissa bits */

static void init_p10(void)
{
    for (int k = P10_MIN; k <= P10_MAX; k++)
        p10[k - P10_MIN] = powl(10.0L, (long double)k);
    /* where long double is double (or computed as double, as under
     * valgrind, or with the x87 set to 53 bits) the fast path cannot decide:
     * probe once and fall back to snprintf for everything */
    volatile long double one = 1.0L, tiny = 0x1p-60L;
    ld_ok = LDBL_MANT_DIG >= 64 && one + tiny != one;
    p10_ready = 1;
}

static long double pow10l_(int k)
{
    return p10[k - P10_MIN];
}

static const uint64_t u10[] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
    10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
    100000000000000000ULL,
};

/* v >= 0 (below 2^62) rounded half up to an integer, as (uint64_t)(v +
 * 0.5L) would round it, without the x87 control-word switches a
 * truncating conversion costs (it was a third of the time here): llrintl
 * rounds half to even in the current mode, and an exact half it rounded
 * down is moved up. */
static uint64_t round_half_up(long double v)
{
#if defined(__x86_64__) && defined(__GNUC__)
    long long d;                           /* llrintl without the call */
    long double vv = v;
    __asm__("fistpll %0" : "=m"(d) : "t"(vv) : "st");
#else
    long long d = llrintl(v);
#endif
    if ((long double)d - v == -0.5L)
        d++;
    return (uint64_t)d;
}

/* Lay out p digits (D, exactly p digits) with decimal exponent e10 as %g. */
static size_t layout(char *buf, int neg, uint64_t D, int p, int e10)
{
    static const char two[] = "00010203040506070809101112131415161718192021222324"
                              "25262728293031323334353637383940414243444546474849"
                              "50515253545556575859606162636465666768697071727374"
                              "75767778798081828384858687888990919293949596979899";
    char dig[20];
    int last = p - 1;
    for (; last >= 1; last -= 2) {         /* two digits per division */
        unsigned r = (unsigned)(D % 100);
        D /= 100;
        dig[last] = two[2 * r + 1];
        dig[last - 1] = two[2 * r];
    }
    if (last == 0)
        dig[0] = (char)('0' + D % 10);
    int nd = p;
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    char *o = buf;
    if (neg)
        *o++ = '-';
    if (e10 < -4 || e10 >= p) {            /* d.ddde+XX */
        *o++ = dig[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, dig + 1, (size_t)nd - 1);
            o += nd - 1;
        }
        *o++ = 'e';
        int e = e10;
        *o++ = e < 0 ? '-' : '+';
        if (e < 0)
            e = -e;
        if (e >= 100) {
            *o++ = (char)('0' + e / 100);
            e %= 100;
        }
        *o++ = (char)('0' + e / 10);
        *o++ = (char)('0' + e % 10);
    } else if (e10 < 0) {                  /* 0.000ddd */
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -e10 - 1; i++)
            *o++ = '0';
        memcpy(o, dig, (size_t)nd);
        o += nd;
    } else {                               /* ddd.ddd */
        int ip = e10 + 1;
        for (int i = 0; i < ip; i++)
            *o++ = i < nd ? dig[i] : '0';
        if (nd > ip) {
            *o++ = '.';
            memcpy(o, dig + ip, (size_t)(nd - ip));
            o += nd - ip;
        }
    }
    *o = '\0';
    return (size_t)(o - buf);
}

/* The decimal window around x: x itself (extended), its decimal
 * exponent, the distances within which a candidate is accepted, and
 * beyond which it is rejected (between: too close to call). */
typedef struct window {
    long double lx;
    int e10;
    long double lim_hi, lim_lo, doubt_hi, doubt_lo;
    double ulpu, ulpu_below;  /* the ulps above and below x in units of D17's
                               * last digit, 10^(e10 - 16) (0: no shortcut) */
} window;

/* The p-digit candidate from the 17 digits D17 (div = 10^(17 - p)): 0
 * accepted (its digits and exponent into *Dp, *ep), 1 rejected, -1 too
 * close to call. */
static inline int candidate(const window *w, uint64_t D17, int p, uint64_t div, uint64_t *Dp,
                            int *ep)
{
    /* Without the extended check (units: of D17's last digit; D17 is
     * within 0.5 unit of x, plus 0.011 of rounding): a candidate whose
     * digits are d units from D17's is at least d - 0.52 from x, rejected
     * beyond 0.502 ulp; D17 itself is accepted when 0.52 unit is below
     * 0.498 ulp on both sides (x >= 10^e10, so an ulp is 1.1 units or
     * more; not always below a power of two). */
    uint64_t rem = D17 % div;
    if (div > 1 && (double)(rem < div - rem ? rem : div - rem) - 0.52 >
                       0.502 * w->ulpu + 0.01)
        return 1;
    if (div == 1 && 0.498 * w->ulpu_below > 0.53) {
        *Dp = D17;
        *ep = w->e10;
        return 0;
    }
    uint64_t D = (D17 + div / 2) / div;
    int e = w->e10;
    if (div > 1 && rem == div / 2)         /* a tie of the integer rounding: */
        D = round_half_up(w->lx * pow10l_(p - 1 - w->e10));   /* round directly */
    if (D >= u10[p]) {
        D /= 10;
        e++;
    }
    long double diff = (long double)(long long)D * pow10l_(e - p + 1) - w->lx;
    if (diff < w->lim_hi && -diff < w->lim_lo) {
        *Dp = D;
        *ep = e;
        return 0;
    }
    return diff < w->doubt_hi && -diff < w->doubt_lo ? -1 : 1;
}

size_t hs_fmt_double(char *buf, double x)
{
    if (x == 0) {            /* -0 too: a sign on zero only puzzles a reader */
        memcpy(buf, "0", 2);
        return 1;
    }
    if (!isfinite(x))
        return (size_t)snprintf(buf, 32, "%.17g", x);
    if (!p10_ready)
        init_p10();
    if (!ld_ok)
        goto exact;
    int neg = x < 0;
    double ax = fabs(x);
    /* x = mant 2^e2 with mant in [0.5, 1), from the bits (frexp and ldexpl
     * were a fifth of the time here) */
    uint64_t bits;
    memcpy(&bits, &ax, sizeof bits);
    int be = (int)(bits >> 52), e2;
    int pow2 = (bits & 0xFFFFFFFFFFFFFULL) == 0;
    if (be == 0) {                         /* subnormal */
        double mant = frexp(ax, &e2);
        pow2 = mant == 0.5;
    } else {
        e2 = be - 1022;
    }
    /* ulp of x: 2^(e2-53) for normal numbers, 2^-1074 below (a double:
     * exact, subnormal or not) */
    double ulpd;
    if (e2 - 53 >= -1022) {
        uint64_t ub = (uint64_t)(e2 - 53 + 1023) << 52;
        memcpy(&ulpd, &ub, sizeof ulpd);
    } else {
        ulpd = ldexp(1.0, e2 - 53 < -1074 ? -1074 : e2 - 53);
    }
    long double ulp = ulpd;
    /* at a power of two the next double below is half as far */
    long double ulp_below = (pow2 && e2 - 54 >= -1074) ? ulp / 2 : ulp;
    /* floor((e2 - 1) log10(2)) in integers: 78913 / 2^18 is log10(2) to
     * 1e-7, exact for |e2| < 1700 (floor() was a library call) */
    int e10 = (e2 - 1) >= 0 ? ((e2 - 1) * 78913) >> 18 : -((-(e2 - 1) * 78913 + 262143) >> 18);
    long double lx = ax;
    if (lx >= pow10l_(e10 + 1))
        e10++;
    else if (lx < pow10l_(e10))
        e10--;
    /* 17 digits by one scaling; 16 and 15 by integer rounding of those
     * (a double rounding can only make a candidate fail its check, never
     * pass a wrong one) */
    uint64_t D17 = round_half_up(lx * pow10l_(16 - e10));
    if (D17 >= u10[17]) {                  /* 9.99.. rounded up to 10^17 */
        e10++;
        D17 = round_half_up(lx * pow10l_(16 - e10));
    }
    double ulpu = be ? (double)(ulp * pow10l_(16 - e10)) : 0;   /* subnormal: none */
    const window wd = { lx, e10, 0.498L * ulp, 0.498L * ulp_below, 0.502L * ulp,
                        0.502L * ulp_below, be ? ulpu : (double)INFINITY,
                        be ? (double)(ulp_below * pow10l_(16 - e10)) : 0 };
    uint64_t D = 0;
    int e = 0, p = 15;
    /* 15, 16, 17 digits; the divisors are constants (a 64-bit division by
     * a variable cost a sixth of the time here) */
    int r = candidate(&wd, D17, 15, 100, &D, &e);
    if (r > 0) {
        p = 16;
        r = candidate(&wd, D17, 16, 10, &D, &e);
    }
    if (r > 0) {
        p = 17;
        r = candidate(&wd, D17, 17, 1, &D, &e);
    }
    if (r == 0)
        return layout(buf, neg, D, p, e);
exact:
    for (int q = 15; q <= 17; q++) {
        int len = snprintf(buf, 32, "%.*g", q, x);
        if (q == 17 || strtod(buf, NULL) == x)
            return (size_t)len;
    }
    return 0;
}
