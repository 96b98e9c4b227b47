/* Tests of the native kernels' cache against hostile caches (src/native):
 * an attacker who renames the cache directory at every step of a build
 * and a load, FIFOs, directories and links in place of entries, locks and
 * failure records, compilers that add run-time instrumentation, builds
 * that fail for reasons not the code's.  The kernels are check_native.c's,
 * the ordinary cache and policy check_native_cache.c's.
 *
 * Every test uses a cache under a temporary directory ($HOLOSIM_CACHE is
 * set for the whole suite), never the user's.  Compile work is kept small:
 * each build is one compiler run on a few hundred lines, most tests share
 * one tiny program. */
#define _GNU_SOURCE                 /* setresuid, setgroups */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include "check_main.h"
#include "expr/expr.h"
#include "expr/prog.h"
#include "native/native.h"
#include "native/nat.h"     /* white-box: the build without its lock */
#include "native_fixture.h"

/* ---- hostile caches ---- */

/* The key of p's entry: built once in a cache of its own. */
static void key_of(const hs_prog *p, char key[33])
{
    char dir[512], note[512], path[1024];
    fresh(dir, sizeof dir);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    hs_native *h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    hs_native_free(h);
    ck_assert_int_eq(count_entries(dir, path, sizeof path), 1);
    snprintf(key, 33, "%s", strrchr(path, '/') + 2);
}

/* An attacker's kernels: another program (x + 1000) and a constructor that
 * leaves a mark where it ran. */
static char *evil_source(const char *marker, size_t *len)
{
    hs_dag *d = hs_dag_new();
    const hs_node *x = hs_sym(d, hs_dag_symbol(d, "x")), *y = hs_sym(d, hs_dag_symbol(d, "y"));
    const hs_node *e[2] = {hs_add(d, x, hs_num(d, 1000)), y};
    hs_error err;
    hs_error_init(&err);
    hs_prog *ep = hs_prog_compile(d, e, 2, &err);
    ck_assert_ptr_nonnull(ep);
    size_t n;
    char *k = hs_native_source((const hs_prog *const *)&ep, 1, 0, &n);
    ck_assert_ptr_nonnull(k);
    char head[1024];
    int w = snprintf(head, sizeof head,
                     "#include <fcntl.h>\n#include <unistd.h>\n"
                     "__attribute__((constructor)) static void pwn(void)\n"
                     "{ close(open(\"%s\", O_WRONLY | O_CREAT, 0666)); }\n", marker);
    char *s = malloc((size_t)w + n + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, head, (size_t)w);
    memcpy(s + w, k, n + 1);
    *len = (size_t)w + n;
    free(k);
    hs_prog_free(ep);
    hs_dag_free(d);
    return s;
}

static int swap_to, swap_from;          /* the victim's pipes to and from the attacker */

/* In the victim: tell the attacker each step, wait until it has acted. */
static void victim_hook(const char *step, const char *name)
{
    char line[512], ack;
    int w = snprintf(line, sizeof line, "%s %s\n", step, strrchr(name, '/') ? "-" : name);
    if (write(swap_to, line, (size_t)w) != w || read(swap_from, &ack, 1) != 1)
        _exit(9);
}

static void become(uid_t id)
{
    if (id == 0)
        return;
    if (setgroups(0, NULL) || setresgid(id, id, id) || setresuid(id, id, id))
        _exit(8);
}

static void put_file(const char *path, const char *s, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd >= 0) {
        ssize_t w = write(fd, s, n);
        (void)w;
        fchmod(fd, 0666);
        close(fd);
    }
}

/* The attacker: owns the directory above the cache; prepares a directory
 * with its own kernels under the victim's key, and at step `target` moves
 * the victim's native/ aside and its own in, planting its source or object
 * under the work file's name. */
static void attacker(const char *cache, const char *key, const char *target, int rd, int wr,
                     const char *src, size_t len)
{
    char evil[700], native[700], old[700], path[1500];
    snprintf(evil, sizeof evil, "%s/evil", cache);
    snprintf(native, sizeof native, "%s/native", cache);
    snprintf(old, sizeof old, "%s/native.old", cache);
    if (mkdir(evil, 0777) || chmod(evil, 0777))
        _exit(3);
    int efd = open(evil, O_RDONLY | O_DIRECTORY);
    hs_nat_cc cc;
    char why[512];
    if (efd < 0 || hs_nat_cc_find(&cc, why, sizeof why)
        || hs_nat_build(&cc, "-O1", src, len, efd, key, 0, why, sizeof why))
        _exit(4);
    /* the build tried the object in a child: that mark is the attacker's own */
    snprintf(path, sizeof path, "%s/../marks/pwned", cache);
    unlink(path);
    snprintf(path, sizeof path, "%s/k%s.so", evil, key);
    struct stat sb;
    if (stat(path, &sb))
        _exit(5);
    char *obj = malloc((size_t)sb.st_size);
    int ofd = open(path, O_RDONLY);
    if (!obj || ofd < 0 || read(ofd, obj, (size_t)sb.st_size) != sb.st_size)
        _exit(6);
    close(ofd);
    if (write(wr, "R", 1) != 1)
        _exit(7);
    FILE *f = fdopen(rd, "r");
    char line[512];
    int done = 0;
    while (f && fgets(line, sizeof line, f)) {
        char step[64], name[256];
        if (sscanf(line, "%63s %255s", step, name) != 2)
            _exit(10);
        if (!done && strcmp(step, target) == 0) {
            done = 1;
            if (rename(native, old) || rename(evil, native))
                _exit(11);
            size_t n = strlen(name);
            snprintf(path, sizeof path, "%s/%s", native, name);
            if (n > 2 && strcmp(name + n - 2, ".c") == 0)
                put_file(path, src, len);
            else if (n > 3 && strcmp(name + n - 3, ".so") == 0)
                put_file(path, obj, (size_t)sb.st_size);
        }
        if (write(wr, "k", 1) != 1)
            _exit(12);
    }
    _exit(done ? 0 : 13);
}

/* An attacker who can rename the cache directory (it owns the directory
 * above) swaps in its own at each step of a build and a load: the victim's
 * process never runs the attacker's code and loads its own kernels.  Two
 * unprivileged users when the suite runs as root, else one user playing
 * both parts (the fd-relative steps are the same). */
START_TEST(test_swap_attack)
{
    static const char *const steps[] = {"dir-held", "source-written", "compiled", "sealed",
                                        "renamed", "entry-verified", "loading"};
    hs_prog *p = tiny();
    char key[33];
    key_of(p, key);
    uid_t victim = 0, thief = 0;
    if (geteuid() == 0) {
        victim = 61001;
        thief = 61002;
    } else {
        fprintf(stderr, "check_native: not root: the swap attack runs as one user "
                        "(two users need root to switch)\n");
    }
    for (size_t si = 0; si < sizeof steps / sizeof steps[0]; si++) {
        for (int cached = 0; cached < 2; cached++) {
            char base[] = "/tmp/check_native_swap.XXXXXX";
            ck_assert_ptr_nonnull(mkdtemp(base));
            ck_assert_int_eq(chmod(base, 0755), 0);
            char cache[600], marker[700], cmd[800];
            snprintf(cache, sizeof cache, "%s/cache", base);
            snprintf(marker, sizeof marker, "%s/marks/pwned", base);
            ck_assert_int_eq(mkdir(cache, 0777), 0);
            ck_assert_int_eq(chmod(cache, 0777), 0);
            snprintf(cmd, sizeof cmd, "%s/marks", base);
            ck_assert_int_eq(mkdir(cmd, 0777), 0);
            ck_assert_int_eq(chmod(cmd, 0777), 0);
            if (thief)
                ck_assert_int_eq(chown(cache, thief, thief), 0);
            size_t len;
            char *src = evil_source(marker, &len);
            if (cached) {           /* the victim's own entry is there already */
                pid_t v = fork();
                ck_assert_int_ge(v, 0);
                if (v == 0) {
                    become(victim);
                    hs_native_opts o = opts(HS_NATIVE_ALWAYS, cache);
                    hs_native_status st;
                    char note[512];
                    _exit(load1(p, &o, &st, note, sizeof note) ? 0 : 1);
                }
                int status;
                ck_assert_int_eq(waitpid(v, &status, 0), v);
                ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
            }
            int to_a[2], from_a[2];
            ck_assert_int_eq(pipe(to_a), 0);
            ck_assert_int_eq(pipe(from_a), 0);
            pid_t a = fork();
            ck_assert_int_ge(a, 0);
            if (a == 0) {
                close(to_a[1]);
                close(from_a[0]);
                become(thief);
                attacker(cache, key, steps[si], to_a[0], from_a[1], src, len);
            }
            close(to_a[0]);
            close(from_a[1]);
            char ready;
            ck_assert_int_eq(read(from_a[0], &ready, 1), 1);
            pid_t v = fork();
            ck_assert_int_ge(v, 0);
            if (v == 0) {
                become(victim);
                setenv("TMPDIR", "/tmp", 1);
                swap_to = to_a[1];
                swap_from = from_a[0];
                hs_nat_test_hook = victim_hook;
                hs_native_opts o = opts(HS_NATIVE_ALWAYS, cache);
                hs_native_status st;
                char note[512];
                hs_native *h = load1(p, &o, &st, note, sizeof note);
                const double in[3] = {0.7, -1.25, 3.5};
                int bad = !h ? 1 : compare(p, hs_native_fn(h, 0), in, "after a swap") ? 2 : 0;
                if (bad == 1)
                    fprintf(stderr, "%s\n", note);
                _exit(bad);
            }
            close(to_a[1]);
            close(from_a[0]);
            int vs, as;
            ck_assert_int_eq(waitpid(v, &vs, 0), v);
            ck_assert_int_eq(waitpid(a, &as, 0), a);
            int marked = access(marker, F_OK) == 0;
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
            ck_assert_int_eq(system(cmd), 0);
            free(src);
            ck_assert_msg(!marked, "step %s (%s): the attacker's code ran in the victim",
                          steps[si], cached ? "cached" : "built");
            ck_assert_msg(WIFEXITED(vs) && WEXITSTATUS(vs) == 0,
                          "step %s (%s): the victim did not load its own kernels (status %d)",
                          steps[si], cached ? "cached" : "built", vs);
            /* a step the cached path never reaches: the attacker waited in vain */
            ck_assert(WIFEXITED(as));
            ck_assert_msg(WEXITSTATUS(as) == 0 || WEXITSTATUS(as) == 13,
                          "attacker status %d", WEXITSTATUS(as));
        }
    }
    tiny_free(p);
}
END_TEST

/* A FIFO (or a directory, or a link) in place of the entry, the lock or
 * the failure record: no run waits on it, none is loaded; always builds
 * past it. */
START_TEST(test_fifo_entries)
{
    hs_prog *p = tiny();
    char key[33];
    key_of(p, key);
    static const char *const ext[] = {".so", ".lock", ".fail"};
    for (int kind = 0; kind < 3; kind++) {
        char dir[512], sub[600], path[700];
        fresh(dir, sizeof dir);
        snprintf(sub, sizeof sub, "%s/native", dir);
        ck_assert_int_eq(mkdir(sub, 0700), 0);
        for (size_t i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/k%s%s", sub, key, ext[i]);
            if (kind == 0)
                ck_assert_int_eq(mkfifo(path, 0600), 0);
            else if (kind == 1)
                ck_assert_int_eq(mkdir(path, 0700), 0);
            else
                ck_assert_int_eq(symlink("/dev/zero", path), 0);
        }
        pid_t c = fork();
        ck_assert_int_ge(c, 0);
        if (c == 0) {
            alarm(60);
            hs_native_status st;
            char note[512];
            hs_native_opts o = opts(HS_NATIVE_AUTO, dir);
            o.work = 0;
            if (load1(p, &o, &st, note, sizeof note) || st != HS_NATIVE_SHORT)
                _exit(2);
            o.work = 1e12;
            if (load1(p, &o, &st, note, sizeof note) || st == HS_NATIVE_CACHED)
                _exit(3);
            /* always: a FIFO or link at the entry's name is replaced by the
             * build; a directory there stays, and the kernels are still built
             * (in a temporary directory) or the VM is used */
            o = opts(HS_NATIVE_ALWAYS, dir);
            hs_native *h = load1(p, &o, &st, note, sizeof note);
            if (kind != 1 && !h)
                _exit(4);
            if (h)
                check_tiny(h, p);
            hs_native_free(h);
            _exit(0);
        }
        int status;
        ck_assert_int_eq(waitpid(c, &status, 0), c);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "kind %d: status %d (SIGALRM: blocked on a FIFO)", kind, status);
    }
    tiny_free(p);
}
END_TEST

/* $CC with instrumentation: the words dropped, the kernels load; a
 * compiler that instruments by itself: its object is tried in a child,
 * refused there, never loaded here. */
START_TEST(test_runtime_flags)
{
    ck_assert(hs_nat_runtime_flag("-fsanitize=address"));
    ck_assert(hs_nat_runtime_flag("-fsanitize=undefined"));
    ck_assert(hs_nat_runtime_flag("-pg"));
    ck_assert(hs_nat_runtime_flag("-p"));
    ck_assert(hs_nat_runtime_flag("-fprofile-generate"));
    ck_assert(hs_nat_runtime_flag("--coverage"));
    ck_assert(hs_nat_runtime_flag("-shared-libasan"));
    ck_assert(hs_nat_runtime_flag("-fopenmp"));
    ck_assert(!hs_nat_runtime_flag("-O2"));
    ck_assert(!hs_nat_runtime_flag("-pipe"));
    ck_assert(!hs_nat_runtime_flag("-march=native"));
    ck_assert(!hs_nat_runtime_flag("-fno-sanitize=all"));
    hs_prog *p = tiny();
    char dir[512], note[512], cc[700];
    fresh(dir, sizeof dir);
    char *old_cc = getenv("CC") ? strdup(getenv("CC")) : NULL;
    const char *base = old_cc && *old_cc ? old_cc : "cc";
    char words[600];
    snprintf(words, sizeof words, "%s -fsanitize=address -pg -fprofile-arcs", base);
    setenv("CC", words, 1);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    hs_native *h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    check_tiny(h, p);
    hs_native_free(h);
    hs_nat_cc c;
    char why[256];
    ck_assert_int_eq(hs_nat_cc_find(&c, why, sizeof why), 0);
    ck_assert_uint_eq(c.dropped, 3);
    for (size_t i = 0; i < c.nwords; i++)
        ck_assert(!hs_nat_runtime_flag(c.argv[i]));
    hs_nat_cc_free(&c);

    /* the instrumentation hidden in a wrapper: loaded in a child first */
    char body[800];
    snprintf(body, sizeof body, "exec %s -fsanitize=address \"$@\"", base);
    script(dir, "asancc", body, cc, sizeof cc);
    setenv("CC", cc, 1);
    h = load1(p, &o, &st, note, sizeof note);
    if (h) {                  /* a toolchain whose ASan objects load anywhere */
        check_tiny(h, p);
        hs_native_free(h);
    } else {
        ck_assert_msg(strstr(note, "do not load"), "%s", note);
    }
    if (old_cc)
        setenv("CC", old_cc, 1);
    else
        unsetenv("CC");
    free(old_cc);
    tiny_free(p);
}
END_TEST

/* A build stopped by a signal, or starved of disk, is not the code's
 * fault: not remembered, auto tries again; an empty record from an older
 * run is no record ("failed ()" never appears). */
START_TEST(test_transient_failures)
{
    hs_prog *p = tiny();
    static const char *const bodies[] = {
        "kill -TERM $$",
        "echo 'kernels.c:9:1: fatal error: error writing to /tmp/ccX.s: No space left on device' >&2; exit 1",
        "echo 'gcc: fatal error: Killed signal terminated program cc1' >&2; exit 1",
        "exit 1"};
    char *old_cc = getenv("CC") ? strdup(getenv("CC")) : NULL;
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        char dir[512], note[512], cc[700], path[800];
        fresh(dir, sizeof dir);
        script(dir, "flakycc", bodies[i], cc, sizeof cc);
        setenv("CC", cc, 1);
        hs_native_status st;
        hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
        ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
        ck_assert_int_eq(st, HS_NATIVE_FAILED);
        ck_assert_msg(!strstr(note, "()"), "%s", note);
        DIR *d = opendir(strcat(strcpy(path, dir), "/native"));
        ck_assert_ptr_nonnull(d);
        for (struct dirent *e; (e = readdir(d));)
            ck_assert_msg(!strstr(e->d_name, ".fail"), "%s: recorded %s", bodies[i], e->d_name);
        closedir(d);
        o.policy = HS_NATIVE_AUTO;
        o.work = 1e12;
        ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
        ck_assert_msg(!strstr(note, "earlier build"), "%s", note);
        /* an empty record: ignored and removed */
        char key[33];
        if (i == 0) {
            if (old_cc)
                setenv("CC", old_cc, 1);
            else
                unsetenv("CC");
            key_of(p, key);
            char fail[900];
            snprintf(fail, sizeof fail, "%s/native/k%s.fail", dir, key);
            FILE *f = fopen(fail, "w");
            ck_assert_ptr_nonnull(f);
            fclose(f);
            o.work = 1e12;
            ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
            ck_assert_msg(!strstr(note, "earlier build") && !strstr(note, "()"), "%s", note);
            ck_assert_int_ne(access(fail, F_OK), 0);
        }
    }
    if (old_cc)
        setenv("CC", old_cc, 1);
    else
        unsetenv("CC");
    free(old_cc);
    tiny_free(p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("native_hostile");
    TCase *tc = tcase_create("native_hostile");
    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
    tcase_add_test(tc, test_swap_attack);
    tcase_add_test(tc, test_fifo_entries);
    tcase_add_test(tc, test_runtime_flags);
    tcase_add_test(tc, test_transient_failures);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
