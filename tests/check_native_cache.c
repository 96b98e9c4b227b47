/* Tests of the native kernels' cache and policy (src/native): cached
 * loads, truncated and altered entries rebuilt, concurrent builders,
 * unusable cache directories, no compiler, a failing compiler, a compiler
 * that produces garbage, the background build of `auto`, work files of a
 * build that died.  The kernels themselves are check_native.c's.
 *
 * Every test uses a cache under a temporary directory ($HOLOSIM_CACHE is
 * set for the whole suite), never the user's.  Compile work is kept small:
 * each build is one compiler run on a few hundred lines, the tests share
 * one tiny program. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "native/native.h"
#include "native/nat.h"     /* white-box: the build without its lock */
#include "native_fixture.h"

/* ---- cache ---- */

START_TEST(test_cache_hit_and_policies)
{
    hs_prog *p = tiny();
    char dir[512], note[512], path[1024];
    fresh(dir, sizeof dir);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_NEVER, dir);
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_OFF);
    ck_assert_str_eq(note, "");

    o.policy = HS_NATIVE_AUTO;                     /* short run, nothing cached */
    o.work = 1000;
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_SHORT);
    ck_assert_str_eq(note, "");
    char sub[600];
    snprintf(sub, sizeof sub, "%s/native", dir);
    ck_assert_msg(access(sub, F_OK) != 0, "a short run created %s", sub);

    o.policy = HS_NATIVE_ALWAYS;
    hs_native *h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    ck_assert_int_eq(st, HS_NATIVE_BUILT);
    ck_assert_str_eq(note, "");
    check_tiny(h, p);
    ck_assert_int_eq(count_entries(dir, path, sizeof path), 1);
    ck_assert_str_eq(hs_native_path(h), path);
    hs_native_free(h);

    o.policy = HS_NATIVE_AUTO;                     /* cached: used even when short */
    h = load1(p, &o, &st, note, sizeof note);
    ck_assert_int_eq(st, HS_NATIVE_CACHED);
    check_tiny(h, p);
    hs_native_free(h);
    o.policy = HS_NATIVE_ALWAYS;
    h = load1(p, &o, &st, note, sizeof note);
    ck_assert_int_eq(st, HS_NATIVE_CACHED);
    hs_native_free(h);

    /* other flags, another chunk size: other entries */
    o.opt = "-O0";
    h = load1(p, &o, &st, note, sizeof note);
    ck_assert_int_eq(st, HS_NATIVE_BUILT);
    check_tiny(h, p);
    hs_native_free(h);
    ck_assert_int_eq(count_entries(dir, NULL, 0), 2);

    /* no work files left behind */
    DIR *d = opendir(sub);
    for (struct dirent *e; (e = readdir(d));)
        ck_assert_msg(!strstr(e->d_name, ".tmp."), "left behind: %s", e->d_name);
    closedir(d);
    ck_assert_ptr_null(hs_native_fn(NULL, 0));
    hs_native_free(NULL);
    ck_assert_str_eq(hs_native_policy_names[HS_NATIVE_ALWAYS], "always");
    tiny_free(p);
}
END_TEST

/* Truncated, altered, and trailer-less entries: not loaded; always
 * rebuilds, auto falls back to the VM quietly. */
START_TEST(test_cache_corrupt)
{
    hs_prog *p = tiny();
    char dir[512], note[512], path[1024];
    fresh(dir, sizeof dir);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    hs_native_free(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_BUILT);
    ck_assert_int_eq(count_entries(dir, path, sizeof path), 1);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    for (int damage = 0; damage < 4; damage++) {
        if (damage == 0) {
            ck_assert_int_eq(truncate(path, sb.st_size / 2), 0);
        } else if (damage == 3) {
            ck_assert_int_eq(truncate(path, sb.st_size - 93), 0);   /* trailer gone */
        } else {
            /* one byte flipped in the code (1) or in the trailer's hash (2) */
            int fd = open(path, O_RDWR);
            off_t at = damage == 1 ? sb.st_size / 3 : sb.st_size - 5;
            unsigned char c;
            ck_assert(pread(fd, &c, 1, at) == 1);
            c ^= 0x10;
            ck_assert(pwrite(fd, &c, 1, at) == 1);
            close(fd);
        }
        ck_assert(!hs_nat_entry_ok(path, strrchr(path, '/') + 2));
        o.policy = HS_NATIVE_AUTO;
        o.work = 0;
        ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
        ck_assert_int_eq(st, HS_NATIVE_SHORT);
        o.policy = HS_NATIVE_ALWAYS;
        hs_native *h = load1(p, &o, &st, note, sizeof note);
        ck_assert_msg(h != NULL, "damage %d: %s", damage, note);
        ck_assert_int_eq(st, HS_NATIVE_BUILT);
        check_tiny(h, p);
        hs_native_free(h);
        ck_assert_int_eq(stat(path, &sb), 0);
    }
    tiny_free(p);
}
END_TEST

/* Two processes build the same entry at once, through the policy (one
 * waits for the other's lock) and through the bare build (both compile,
 * both rename): both succeed and the entry is valid. */
START_TEST(test_concurrent_builders)
{
    hs_prog *p = tiny();
    char dir[512], path[1024];
    for (int bare = 0; bare < 2; bare++) {
        fresh(dir, sizeof dir);
        pid_t pid[2];
        for (int i = 0; i < 2; i++) {
            pid[i] = fork();
            ck_assert_int_ge(pid[i], 0);
            if (pid[i] == 0) {
                hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
                char note[512];
                hs_native_status st;
                int ok;
                if (bare) {
                    /* what the policy would build, minus the lock */
                    size_t len;
                    char *src = hs_native_source((const hs_prog *const *)&p, 1, 0, &len);
                    hs_nat_cc cc;
                    char why[512], d[4096];
                    int dfd = -1;
                    ok = src && hs_nat_cc_find(&cc, why, sizeof why) == 0
                         && hs_nat_cache_dir(dir, 1, d, sizeof d, &dfd, why, sizeof why) == 0
                         && hs_nat_build(&cc, "-O1", src, len, dfd, "0123456789abcdef0123456789abcdef",
                                         0, why, sizeof why) == 0;
                    _exit(ok ? 0 : 1);
                }
                hs_native *h = load1(p, &o, &st, note, sizeof note);
                ok = h && (st == HS_NATIVE_BUILT || st == HS_NATIVE_CACHED);
                if (ok) {
                    const double in[3] = {0.7, -1.25, 3.5};
                    ok = compare(p, hs_native_fn(h, 0), in, "concurrent") == 0;
                }
                _exit(ok ? 0 : 1);
            }
        }
        for (int i = 0; i < 2; i++) {
            int status;
            ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
            ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "builder %d failed", i);
        }
        ck_assert_int_eq(count_entries(dir, path, sizeof path), 1);
        ck_assert(hs_nat_entry_ok(path, strrchr(path, '/') + 2));
    }
    tiny_free(p);
}
END_TEST

START_TEST(test_unusable_cache_dir)
{
    hs_prog *p = tiny();
    char dir[512], file[600], note[512];
    fresh(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    char below[700];
    snprintf(below, sizeof below, "%s/cache", file);     /* under a regular file: ENOTDIR,
                                                          * even for root */
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, below);
    hs_native *h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    ck_assert_int_eq(st, HS_NATIVE_BUILT);
    ck_assert_msg(strstr(note, "temporary directory") && strstr(note, "cannot create"), "%s",
                  note);
    ck_assert_str_eq(hs_native_path(h), "");
    check_tiny(h, p);
    hs_native_free(h);

    o.policy = HS_NATIVE_AUTO;                       /* a long run: no build, a note */
    o.work = 1e12;
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "cannot create") && strstr(note, "VM"), "%s", note);

    /* a directory that others may write is not used */
    char open_dir[600];
    snprintf(open_dir, sizeof open_dir, "%s/open", dir);
    ck_assert_int_eq(mkdir(open_dir, 0700), 0);
    snprintf(below, sizeof below, "%s/native", open_dir);
    ck_assert_int_eq(mkdir(below, 0700), 0);
    ck_assert_int_eq(chmod(below, 0777), 0);
    o.policy = HS_NATIVE_ALWAYS;
    o.cache_dir = open_dir;
    h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL && strstr(note, "not yours alone"), "%s", note);
    hs_native_free(h);
    ck_assert_int_eq(count_entries(open_dir, NULL, 0), 0);

    /* read-only for a non-root user: still read, never written */
    if (geteuid() != 0) {
        char ro[600];
        snprintf(ro, sizeof ro, "%s/ro", dir);
        ck_assert_int_eq(mkdir(ro, 0500), 0);
        o.cache_dir = ro;
        h = load1(p, &o, &st, note, sizeof note);
        ck_assert_msg(h != NULL && strstr(note, "temporary directory"), "%s", note);
        hs_native_free(h);
    }
    tiny_free(p);
}
END_TEST

START_TEST(test_no_compiler)
{
    hs_prog *p = tiny();
    char dir[512], note[512];
    fresh(dir, sizeof dir);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    char *old_cc = getenv("CC") ? strdup(getenv("CC")) : NULL;
    char *old_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

    setenv("CC", "/nonexistent/cc", 1);
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "no C compiler") && strstr(note, "/nonexistent/cc")
                  && strstr(note, "VM") && !strchr(note, '\n'), "%s", note);

    unsetenv("CC");
    setenv("PATH", dir, 1);                       /* no cc there */
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_msg(strstr(note, "'cc' not found in PATH"), "%s", note);
    o.policy = HS_NATIVE_AUTO;                     /* short: quiet */
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_SHORT);
    ck_assert_str_eq(note, "");
    o.work = 1e12;                                 /* long: says why */
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "not found in PATH"), "%s", note);

    if (old_path)
        setenv("PATH", old_path, 1);
    if (old_cc)
        setenv("CC", old_cc, 1);
    free(old_cc);
    free(old_path);
    tiny_free(p);
}
END_TEST

/* A compiler that fails: the note carries its error; auto remembers it.
 * One that writes garbage: dlopen fails, the VM is used. */
START_TEST(test_failing_compiler)
{
    hs_prog *p = tiny();
    char dir[512], note[512], cc[700];
    fresh(dir, sizeof dir);
    char *old_cc = getenv("CC") ? strdup(getenv("CC")) : NULL;
    script(dir, "badcc", "echo 'kernels.c:1:1: error: planted failure' >&2; exit 1", cc,
           sizeof cc);
    setenv("CC", cc, 1);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "build failed") && strstr(note, "planted failure"), "%s", note);
    o.policy = HS_NATIVE_AUTO;
    o.work = 1e12;
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "earlier build") && strstr(note, "planted failure"), "%s", note);

    /* garbage with exit status 0: loaded in a child first, refused there,
     * never sealed as an entry; remembered as the code's failure */
    script(dir, "junkcc",
           "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && echo junk > \"$2\"; shift; done; exit 0",
           cc, sizeof cc);
    setenv("CC", cc, 1);
    o.policy = HS_NATIVE_ALWAYS;
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "do not load") && strstr(note, "dlopen"), "%s", note);
    ck_assert_int_eq(count_entries(dir, NULL, 0), 0);
    o.policy = HS_NATIVE_AUTO;
    o.work = 1e12;
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "earlier build") && strstr(note, "do not load"), "%s", note);

    if (old_cc)
        setenv("CC", old_cc, 1);
    else
        unsetenv("CC");
    free(old_cc);
    tiny_free(p);
}
END_TEST

/* auto on a long run: the VM now, a detached build, the entry next time.
 * The caller does not wait for the compiler. */
START_TEST(test_auto_background)
{
    hs_prog *p = tiny();
    char dir[512], note[512];
    fresh(dir, sizeof dir);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_AUTO, dir);
    o.work = 1e12;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_int_eq(st, HS_NATIVE_PENDING);
    ck_assert_msg(strstr(note, "background"), "%s", note);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    ck_assert_msg(waited < 0.5, "auto waited %.3f s", waited);
    hs_native *h = NULL;
    o.work = 0;
    for (int i = 0; i < 600 && !h; i++) {         /* up to 30 s */
        h = load1(p, &o, &st, note, sizeof note);
        if (!h) {
            ck_assert_int_eq(st, HS_NATIVE_SHORT);
            nanosleep(&(struct timespec){0, 50000000}, NULL);
        }
    }
    ck_assert_msg(h != NULL, "the background build did not finish");
    ck_assert_int_eq(st, HS_NATIVE_CACHED);
    check_tiny(h, p);
    hs_native_free(h);
    tiny_free(p);
}
END_TEST

/* Work files of a build that died are swept by the next build. */
START_TEST(test_stale_work_files)
{
    hs_prog *p = tiny();
    char dir[512], note[512], stale[700];
    fresh(dir, sizeof dir);
    snprintf(stale, sizeof stale, "%s/native", dir);
    ck_assert_int_eq(mkdir(stale, 0700), 0);
    snprintf(stale, sizeof stale, "%s/native/k0123.999.0.tmp.c", dir);
    FILE *f = fopen(stale, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, stale, old, 0), 0);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    hs_native *h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    ck_assert_int_ne(access(stale, F_OK), 0);
    hs_native_free(h);
    tiny_free(p);
}
END_TEST
static Suite *suite(void)
{
    Suite *s = suite_create("native_cache");
    TCase *tc = tcase_create("native_cache");
    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
    tcase_add_test(tc, test_cache_hit_and_policies);
    tcase_add_test(tc, test_cache_corrupt);
    tcase_add_test(tc, test_concurrent_builders);
    tcase_add_test(tc, test_unusable_cache_dir);
    tcase_add_test(tc, test_no_compiler);
    tcase_add_test(tc, test_failing_compiler);
    tcase_add_test(tc, test_auto_background);
    tcase_add_test(tc, test_stale_work_files);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
