/* Tests of src/util/ containers: hs_idmap, hs_strmap (map.h) and
 * hs_vec_reserve (vec.h), against plain arrays as the reference. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/map.h"
#include "util/vec.h"

/* 20,000 keys spread over 64 bits (ids, and tag << 32 | id as the dag's
 * cache makes them), each found with its value after every growth; absent
 * keys are absent; a second put of a key returns its slot, not a new one. */
START_TEST(test_idmap)
{
    hs_idmap m = HS_IDMAP_INIT(double);
    enum { N = 20000 };
    for (uint64_t i = 0; i < N; i++) {
        uint64_t key = i % 2 ? i : (uint64_t)(i % 7) << 32 | i;
        double *v = hs_idmap_put(&m, key);
        ck_assert_ptr_nonnull(v);
        *v = (double)i + 0.5;
    }
    ck_assert_uint_eq(m.n, N);
    ck_assert_uint_le(2 * m.n, m.cap);       /* at most half full */
    for (uint64_t i = 0; i < N; i++) {
        uint64_t key = i % 2 ? i : (uint64_t)(i % 7) << 32 | i;
        const double *v = hs_idmap_get(&m, key);
        ck_assert_ptr_nonnull(v);
        ck_assert(*v == (double)i + 0.5);
    }
    ck_assert_ptr_null(hs_idmap_get(&m, (uint64_t)9 << 32 | 3));
    ck_assert_ptr_null(hs_idmap_get(&m, N + 1));
    double *again = hs_idmap_put(&m, 3);
    ck_assert(*again == 3.5);
    ck_assert_uint_eq(m.n, N);
    hs_idmap_clear(&m);
    ck_assert_uint_eq(m.n, 0);
    ck_assert_ptr_null(hs_idmap_get(&m, 3));
    ck_assert_uint_eq(hs_idmap_grow_bytes(&m), 0);
    hs_idmap_free(&m);
    ck_assert_ptr_null(hs_idmap_get(&m, 3));
    ck_assert_uint_gt(hs_idmap_grow_bytes(&m), 0);     /* empty: the first put allocates */
    ck_assert_int_eq(hs_idmap_reserve(&m, 1000), 0);   /* then 1000 puts allocate nothing */
    size_t cap = m.cap;
    for (uint64_t i = 0; i < 1000; i++)
        *(double *)hs_idmap_put(&m, i * 977) = 1;
    ck_assert_uint_eq(m.cap, cap);
    ck_assert_uint_eq(m.n, 1000);
    hs_idmap_free(&m);
    hs_idmap_free(&m);                                  /* twice is fine */
}
END_TEST

START_TEST(test_strmap)
{
    hs_strmap t = { 0 };
    enum { N = 5000 };
    static char names[N][24];
    for (long i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "x%ld", i);
        ck_assert_int_eq(hs_strmap_put(&t, names[i], strlen(names[i]), i, NULL), 0);
    }
    for (long i = 0; i < N; i++)
        ck_assert_int_eq(hs_strmap_get(&t, names[i], strlen(names[i])), i);
    /* a prefix, or the name with more after it, is another key */
    ck_assert_int_eq(hs_strmap_get(&t, "x12", 2), 1);
    ck_assert_int_eq(hs_strmap_get(&t, "x", 1), -1);
    ck_assert_int_eq(hs_strmap_get(&t, "x50000", 6), -1);
    long old = -1;
    ck_assert_int_eq(hs_strmap_put(&t, "x42", 3, 7, &old), 1);
    ck_assert_int_eq(old, 42);
    ck_assert_int_eq(hs_strmap_get(&t, "x42", 3), 42);   /* the first value kept */
    hs_strmap_free(&t);
    ck_assert_int_eq(hs_strmap_get(&t, "x1", 2), -1);
}
END_TEST

START_TEST(test_vec)
{
    int *a = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) {
        ck_assert_int_eq(HS_VEC_RESERVE(a, cap, n + 1), 0);
        ck_assert_uint_ge(cap, n + 1);
        a[n++] = i;
    }
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(a[i], i);
    size_t c = cap;
    ck_assert_int_eq(HS_VEC_RESERVE(a, cap, 10), 0);      /* enough: unchanged */
    ck_assert_uint_eq(cap, c);
    /* a size no memory holds: refused, the array kept as it was */
    ck_assert_int_eq(HS_VEC_RESERVE(a, cap, SIZE_MAX / 2), -1);
    ck_assert_uint_eq(cap, c);
    ck_assert_int_eq(a[999], 999);
    free(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("containers");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_idmap);
    tcase_add_test(tc, test_strmap);
    tcase_add_test(tc, test_vec);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
