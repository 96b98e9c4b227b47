/* Shortest round-trip formatting (of 15, 16 or 17 digits): scale x by a
 * power of ten, round to p digits, and accept the digits when the decimal
 * value lies within 0.498 ulp of x; values in the doubtful band (0.498 to
 * 0.502 ulp) fall back to snprintf, which is exact.  Normal doubles take
 * the integer path (128-bit products with a table of 10^s to 128 bits:
 * the 17 digits are the correctly rounded ones, as %.17g's); subnormals,
 * and compilers without 128-bit integers, the extended path (long double,
 * 64-bit mantissa on x86-64; its error is below 1e-3 ulp).  Timings:
 * bench/README.md, "CSV numbers". */
#include "fmt.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P10_MIN (-350)
#define P10_MAX 350

/* Tables filled once per process (pthread_once: the only writes, so two
 * threads formatting at once read the same finished tables). */
static long double p10[P10_MAX - P10_MIN + 1];
static pthread_once_t p10_once = PTHREAD_ONCE_INIT;

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

static const char two[] = "00010203040506070809101112131415161718192021222324"
                          "25262728293031323334353637383940414243444546474849"
                          "50515253545556575859606162636465666768697071727374"
                          "75767778798081828384858687888990919293949596979899";

/* The 8 digits of v < 10^8 (32-bit arithmetic, two digits a lookup). */
static void digits8(char *d, uint32_t v)
{
    uint32_t a = v / 10000, b = v % 10000;
    memcpy(d, two + 2 * (a / 100), 2);
    memcpy(d + 2, two + 2 * (a % 100), 2);
    memcpy(d + 4, two + 2 * (b / 100), 2);
    memcpy(d + 6, two + 2 * (b % 100), 2);
}

/* Lay out p digits (D, exactly p digits) with decimal exponent e10 as %g. */
static size_t layout(char *buf, int neg, uint64_t D, int p, int e10)
{
    char all[17];                          /* D < 10^17 as 17 digits */
    all[0] = (char)('0' + D / 10000000000000000ULL);
    digits8(all + 1, (uint32_t)(D / 100000000 % 100000000));
    digits8(all + 9, (uint32_t)(D % 100000000));
    const char *dig = all + (17 - p);
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

#if defined(__SIZEOF_INT128__)
/* ---- the integer path (normal doubles, 128-bit integers) ----
 *
 * x = m 2^e exactly (m < 2^53); 10^s = P 2^q with P the top 128 bits of
 * 10^s (relative error below 2^-127).  X = x 10^s, s = 16 - e10, lies in
 * [10^16, 10^17); m P is a 181-bit product, and X is kept in fixed point
 * with 64 fractional bits (its error below 2^-63 of a unit of D17's last
 * digit, against decisions with margins of 0.004 ulp >= 0.002 units).
 * The candidates and their checks are the extended path's, in integers:
 * a candidate is accepted within 0.498 ulp of x, rejected beyond 0.502,
 * and left to the exact path between. */
typedef unsigned __int128 u128;

#define S_MIN (-300)
#define S_MAX 345
static u128 p10m[S_MAX - S_MIN + 1];   /* 10^s = p10m 2^p10q, p10m in [2^127, 2^128) */
static int p10q[S_MAX - S_MIN + 1];
static pthread_once_t p10i_once = PTHREAD_ONCE_INIT;

/* Bit b of the little-endian number a[n] (0 outside). */
static int bit_at(const uint64_t *a, int n, int b)
{
    return b >= 0 && b < 64 * n ? (int)((a[b / 64] >> (b % 64)) & 1) : 0;
}

/* The top 128 bits of a[n] (not 0) into p10m[i], their scale into
 * p10q[i] (minus `frac` fractional bits). */
static void record(const uint64_t *a, int n, int frac, int i)
{
    int top = 64 * n - 1;
    while (!bit_at(a, n, top))
        top--;
    u128 P = 0;
    for (int b = top; b > top - 128; b--)
        P = (P << 1) | (u128)bit_at(a, n, b);
    p10m[i] = P;
    p10q[i] = top - 127 - frac;
}

static void init_p10i(void)
{
    enum { NL = 26, FRAC = 64 * 24 };   /* 10^345 < 2^1147; 10^-300 > 2^-1000 */
    uint64_t a[NL];
    memset(a, 0, sizeof a);
    a[0] = 1;
    for (int s = 0; s <= S_MAX; s++) {   /* 10^s exactly */
        record(a, NL, 0, s - S_MIN);
        uint64_t carry = 0;
        for (int i = 0; i < NL; i++) {
            u128 v = (u128)a[i] * 10 + carry;
            a[i] = (uint64_t)v;
            carry = (uint64_t)(v >> 64);
        }
    }
    memset(a, 0, sizeof a);
    a[FRAC / 64] = 1;                    /* 1 with FRAC fractional bits */
    for (int s = -1; s >= S_MIN; s--) {  /* 10^s, truncated far below 2^-1000 */
        uint64_t rem = 0;
        for (int i = NL - 1; i >= 0; i--) {
            u128 v = ((u128)rem << 64) | a[i];
            a[i] = (uint64_t)(v / 10);
            rem = (uint64_t)(v % 10);
        }
        record(a, NL, FRAC, s - S_MIN);
    }
}

/* x (normal, not 0) as the extended path would write it, or 0 when this
 * path cannot tell. */
static size_t fmt_int(char *buf, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int neg = (int)(bits >> 63), be = (int)((bits >> 52) & 0x7FF);
    uint64_t frac = bits & 0xFFFFFFFFFFFFFULL;
    if (be == 0 || be == 0x7FF)
        return 0;
    pthread_once(&p10i_once, init_p10i);
    uint64_t m = frac | (1ULL << 52);
    int e = be - 1075, e2 = be - 1022;
    int pow2 = frac == 0 && be > 1;      /* the double below is half as far */
    int e10 = (e2 - 1) >= 0 ? ((e2 - 1) * 78913) >> 18 : -((-(e2 - 1) * 78913 + 262143) >> 18);
    for (int tries = 0; tries < 3; tries++) {
        int s = 16 - e10;
        if (s < S_MIN || s > S_MAX)
            return 0;
        u128 P = p10m[s - S_MIN];
        int r = -(e + p10q[s - S_MIN] + 64);   /* X 2^64 = m P >> r */
        if (r < 1 || r > 127)
            return 0;
        u128 lo = (u128)(uint64_t)P * m, hi = (u128)(uint64_t)(P >> 64) * m;
        u128 mid = (lo >> 64) + (uint64_t)hi;
        uint64_t l0 = (uint64_t)lo, l1 = (uint64_t)mid, l2 = (uint64_t)((hi >> 64) + (mid >> 64));
        u128 up = ((u128)l2 << 64) | l1, X;
        if (r >= 64) {
            X = up >> (r - 64);
        } else {
            if (l2 >> r)
                return 0;
            X = (up << (64 - r)) | (l0 >> r);
        }
        u128 U = P >> r, Ub = pow2 ? U >> 1 : U;   /* an ulp above, below */
        uint64_t I = (uint64_t)(X >> 64);
        uint64_t D17 = (uint64_t)((X + ((u128)1 << 63)) >> 64);
        if (D17 >= u10[17]) {
            e10++;
            continue;
        }
        if (D17 < u10[16]) {
            e10--;
            continue;
        }
        static const uint64_t divs[3] = { 100, 10, 1 };
        for (int p = 15; p <= 17; p++) {
            uint64_t div = divs[p - 15];
            uint64_t D = div == 1 ? D17 : (I + div / 2) / div;
            u128 c = (u128)(D * div) << 64, d;
            int above = c >= X;
            d = above ? c - X : X - c;
            u128 lim = above ? U : Ub;
            if (1000 * d < 498 * lim) {
                int eo = e10;
                if (D >= u10[p]) {
                    D /= 10;
                    eo++;
                }
                return layout(buf, neg, D, p, eo);
            }
            if (1000 * d < 502 * lim)
                return 0;                  /* too close to call */
        }
        return 0;
    }
    return 0;
}
#endif

size_t hs_fmt_double(char *buf, double x)
{
    if (x == 0) {            /* -0 too: a sign on zero only puzzles a reader */
        memcpy(buf, "0", 2);
        return 1;
    }
    if (!isfinite(x))
        return (size_t)snprintf(buf, 32, "%.17g", x);
#if defined(__SIZEOF_INT128__)
    size_t fast = fmt_int(buf, x);
    if (fast)
        return fast;
#endif
    pthread_once(&p10_once, init_p10);
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
