/* Hashing, the compiler, the cache directory and its entries, one build.
 *
 * An entry is the shared object followed by a trailer line (TRAILER_LEN
 * bytes, text):  "HSNATIVE<f> <key:32 hex> <size:16 hex> <hash:32 hex>\n".
 * The dynamic loader maps segments by the ELF program headers and ignores
 * bytes past them, so the file stays loadable; the trailer lets a reader
 * check, before dlopen, that the entry is complete (size) and intact (hash)
 * and belongs to this key, whatever happened to the file since (a build
 * killed halfway cannot leave one: it is renamed into place only when
 * finished, but a disk or a user can truncate or alter it). */
#define _XOPEN_SOURCE 700          /* realpath */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nat.h"

extern char **environ;

#define TRAILER_LEN 93                      /* 10 + 32 + 1 + 16 + 1 + 32 + 1 */
#define MAX_ENTRY ((off_t)1 << 31)          /* larger files are not entries */
#define STALE_S 3600                        /* work files older than this: removed */

/* -std=c11: ISO C, no GNU extensions (and no FP contraction by default);
 * -ffp-contract=off said anyway (clang contracts a*b+c by default);
 * -fno-builtin-fmin/fmax: GCC takes fmin and fmax as commutative and may
 * swap their operands, but fmin(-0, +0) is one zero and fmin(+0, -0) the
 * other (glibc returns the second operand of equal ones), so the calls
 * stay as written, in the VM's order.  GCC only (clang refuses them):
 * -fno-tree-dse -fno-dse: the emitted code has no dead store to remove
 * (each output written once, a register stored once per chunk), and GCC's
 * search for them is up to a third of the compile time of programs with
 * many outputs (bench/README.md). */
static const char *const flags[] = {
    "-std=c11", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math",
    "-fno-builtin-fmin", "-fno-builtin-fmax", "-g0", "-pipe", NULL};
static const char *const gcc_flags[] = {"-fno-tree-dse", "-fno-dse", NULL};

const char *hs_nat_flag(const hs_nat_cc *cc, size_t i)
{
    size_t n = sizeof flags / sizeof flags[0] - 1;
    if (i < n)
        return flags[i];
    return cc->gcc && i - n < 2 ? gcc_flags[i - n] : NULL;
}

/* ---- hashing (MurmurHash3 x64 128, seeded by h) ---- */

static uint64_t rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

static uint64_t fmix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdu;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53u;
    return k ^ k >> 33;
}

void hs_nat_hash(const void *p, size_t n, uint64_t h[2])
{
    const uint64_t c1 = 0x87c37b91114253d5u, c2 = 0x4cf5ad432745937fu;
    const unsigned char *s = p;
    uint64_t a = h[0], b = h[1], x, y;
    size_t len = n;
    for (; n >= 16; n -= 16, s += 16) {
        memcpy(&x, s, 8);
        memcpy(&y, s + 8, 8);
        a ^= rotl(x * c1, 31) * c2;
        a = (rotl(a, 27) + b) * 5 + 0x52dce729;
        b ^= rotl(y * c2, 33) * c1;
        b = (rotl(b, 31) + a) * 5 + 0x38495ab5;
    }
    unsigned char t[16] = {0};
    if (n)
        memcpy(t, s, n);
    memcpy(&x, t, 8);
    memcpy(&y, t + 8, 8);
    a ^= rotl(x * c1, 31) * c2;
    b ^= rotl(y * c2, 33) * c1;
    a ^= len;
    b ^= len;
    a += b;
    b += a;
    a = fmix(a);
    b = fmix(b);
    a += b;
    b += a;
    h[0] = a;
    h[1] = b;
}

void hs_nat_hex(const uint64_t h[2], char out[33])
{
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
}

/* ---- the compiler ---- */

/* path names an executable regular file */
static int executable(const char *path, struct stat *st)
{
    return stat(path, st) == 0 && S_ISREG(st->st_mode) && access(path, X_OK) == 0;
}

/* argv[0] in $PATH (as execvp would find it) into cc->path. */
static int search_path(hs_nat_cc *cc, struct stat *st)
{
    const char *name = cc->argv[0];
    if (strchr(name, '/')) {
        snprintf(cc->path, sizeof cc->path, "%s", name);
        return executable(cc->path, st) ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    for (const char *s = path;; s++) {
        const char *e = strchr(s, ':');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        int w = n ? snprintf(cc->path, sizeof cc->path, "%.*s/%s", (int)n, s, name)
                  : snprintf(cc->path, sizeof cc->path, "./%s", name);
        if (w > 0 && (size_t)w < sizeof cc->path && executable(cc->path, st))
            return 0;
        if (!e)
            return -1;
        s = e;
    }
}

int hs_nat_cc_find(hs_nat_cc *cc, char *why, size_t whycap)
{
    memset(cc, 0, sizeof *cc);
    const char *env = getenv("CC");
    if (!env || !env[strspn(env, " \t")])
        env = "cc";
    cc->words = strdup(env);
    if (!cc->words) {
        snprintf(why, whycap, "out of memory");
        return -1;
    }
    char *save = NULL;
    for (char *s = strtok_r(cc->words, " \t", &save); s; s = strtok_r(NULL, " \t", &save)) {
        if (cc->nwords + 1 >= HS_NAT_MAXWORDS) {
            snprintf(why, whycap, "CC has more than %d words", HS_NAT_MAXWORDS - 2);
            return -1;
        }
        cc->argv[cc->nwords++] = s;
    }
    struct stat st;
    if (search_path(cc, &st)) {
        snprintf(why, whycap, "no C compiler ('%s' %s)", cc->argv[0],
                 strchr(cc->argv[0], '/') ? "is not an executable file" : "not found in PATH");
        return -1;
    }
    /* GCC by the name of the file cc resolves to (cc -> ... -> gcc-12) */
    char real[4096];
    const char *base = realpath(cc->path, real) ? strrchr(real, '/') : NULL;
    cc->gcc = base && strstr(base, "gcc") && !strstr(base, "clang");
    /* the executable's size and time stand for its version: no process is
     * started just to look an entry up */
    snprintf(cc->id, sizeof cc->id, "%s|%s|%lld|%lld.%09ld", env, cc->path,
             (long long)st.st_size, (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    return 0;
}

void hs_nat_cc_free(hs_nat_cc *cc)
{
    free(cc->words);
    cc->words = NULL;
}

/* ---- the cache directory ---- */

/* mkdir -p, the directories it creates 0700. */
static int mkdirs(char *path)
{
    for (char *s = path + 1;; s++) {
        if (*s != '/' && *s)
            continue;
        char c = *s;
        *s = '\0';
        int r = mkdir(path, 0700);
        int e = errno;
        *s = c;
        if (r && e != EEXIST) {
            errno = e;
            return -1;
        }
        if (!c)
            return 0;
    }
}

int hs_nat_cache_dir(const char *override, int create, char *dir, size_t cap, char *why,
                     size_t whycap)
{
    const char *base = override, *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    const char *env = getenv("HOLOSIM_CACHE");
    int w;
    if (!base && env && *env)
        base = env;
    if (base)
        w = snprintf(dir, cap, "%s/native", base);
    else if (xdg && xdg[0] == '/')
        w = snprintf(dir, cap, "%s/holosim/native", xdg);
    else if (home && *home)
        w = snprintf(dir, cap, "%s/.cache/holosim/native", home);
    else {
        snprintf(why, whycap, "no cache directory (HOME is not set)");
        return -1;
    }
    if (w < 0 || (size_t)w >= cap) {
        snprintf(why, whycap, "cache directory name too long");
        return -1;
    }
    struct stat st;
    if (stat(dir, &st) && !create) {
        snprintf(why, whycap, "no cache directory %s", dir);
        return -1;
    }
    if (stat(dir, &st) && mkdirs(dir)) {
        snprintf(why, whycap, "cannot create cache directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(why, whycap, "cache directory %s is not a directory", dir);
        return -1;
    }
    /* others could plant code there */
    if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        snprintf(why, whycap, "cache directory %s is not yours alone", dir);
        return -1;
    }
    if (access(dir, W_OK)) {
        snprintf(why, whycap, "cache directory %s is not writable: %s", dir, strerror(errno));
        return 1;
    }
    return 0;
}

/* ---- entries ---- */

static int read_all(int fd, unsigned char *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* The trailer of n bytes of content under key. */
static void trailer(const unsigned char *p, size_t n, const char *key, char out[TRAILER_LEN + 1])
{
    uint64_t h[2] = {HS_NAT_FORMAT, n};
    char hex[33];
    hs_nat_hash(p, n, h);
    hs_nat_hex(h, hex);
    snprintf(out, TRAILER_LEN + 1, "HSNATIVE%d %.32s %016llx %s\n", HS_NAT_FORMAT, key,
             (unsigned long long)n, hex);
}

int hs_nat_entry_ok(const char *path, const char *key)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    unsigned char *p = NULL;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()
             && !(st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_size > TRAILER_LEN
             && st.st_size < MAX_ENTRY;
    if (ok) {
        size_t n = (size_t)st.st_size;
        p = malloc(n);
        ok = p && read_all(fd, p, n) == 0;
        if (ok) {
            char want[TRAILER_LEN + 1];
            trailer(p, n - TRAILER_LEN, key, want);
            ok = memcmp(p + n - TRAILER_LEN, want, TRAILER_LEN) == 0;
        }
    }
    free(p);
    close(fd);
    return ok;
}

/* Remove work files of builds that died (older than STALE_S). */
static void sweep_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    time_t now = time(NULL);
    char path[4608];
    struct stat st;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] != 'k' || !strstr(e->d_name, ".tmp."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime > STALE_S)
            unlink(path);
    }
    closedir(d);
}

/* The first line of the compiler's output that says "error" (else the
 * first line), into why. */
static void first_error(const char *log, char *why, size_t whycap)
{
    FILE *f = fopen(log, "r");
    char line[512], first[512] = "";
    if (f) {
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = '\0';
            if (!first[0])
                snprintf(first, sizeof first, "%s", line);
            if (strstr(line, "error")) {
                snprintf(first, sizeof first, "%s", line);
                break;
            }
        }
        fclose(f);
    }
    snprintf(why, whycap, "%s", first[0] ? first : "the compiler failed without a message");
}

/* Run the compiler on c into so, its output into log: 0 when it exits 0. */
static int compile(const hs_nat_cc *cc, const char *opt, const char *c, const char *so,
                   const char *log, char *why, size_t whycap)
{
    const char *argv[2 * HS_NAT_MAXWORDS + 16];
    char opts[256];
    size_t n = 0;
    for (size_t i = 0; i < cc->nwords; i++)
        argv[n++] = cc->argv[i];
    snprintf(opts, sizeof opts, "%s", opt);
    char *save = NULL;
    for (char *s = strtok_r(opts, " \t", &save); s && n < cc->nwords + HS_NAT_MAXWORDS;
         s = strtok_r(NULL, " \t", &save))
        argv[n++] = s;
    for (size_t i = 0; hs_nat_flag(cc, i); i++)
        argv[n++] = hs_nat_flag(cc, i);
    argv[n++] = "-o";
    argv[n++] = so;
    argv[n++] = c;
    argv[n++] = "-lm";
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none;
    sigemptyset(&none);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    int e = posix_spawn(&pid, cc->path, &fa, &at, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (e) {
        snprintf(why, whycap, "cannot run %s: %s", cc->path, strerror(e));
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno == ECHILD) {     /* SIGCHLD ignored: reaped already */
            if (access(so, R_OK) == 0)
                return 0;
            first_error(log, why, whycap);
            return -1;
        }
        if (errno != EINTR) {
            snprintf(why, whycap, "waiting for the compiler: %s", strerror(errno));
            return -1;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    first_error(log, why, whycap);
    return -1;
}

/* Append the trailer to the shared object at so. */
static int seal(const char *so, const char *key, char *why, size_t whycap)
{
    int fd = open(so, O_RDWR | O_CLOEXEC);
    struct stat st;
    unsigned char *p = NULL;
    int ok = fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < MAX_ENTRY;
    if (ok) {
        size_t n = (size_t)st.st_size;
        char t[TRAILER_LEN + 1];
        p = malloc(n);
        ok = p && read_all(fd, p, n) == 0;
        if (ok) {
            trailer(p, n, key, t);
            ok = lseek(fd, 0, SEEK_END) == st.st_size && write_all(fd, t, TRAILER_LEN) == 0
                 && fchmod(fd, 0700) == 0;
        }
    }
    if (!ok)
        snprintf(why, whycap, "finishing %s: %s", so, strerror(errno ? errno : EIO));
    free(p);
    if (fd >= 0 && close(fd))
        ok = 0;
    return ok ? 0 : -1;
}

static int write_file(const char *path, const char *s, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int r = write_all(fd, s, n);
    if (close(fd))
        r = -1;
    return r;
}

int hs_nat_build(const hs_nat_cc *cc, const char *opt, const char *src, size_t len,
                 const char *dir, const char *key, int record, char *why, size_t whycap)
{
    static _Atomic unsigned serial;      /* work files of concurrent builds differ */
    char base[4352], c[4400], so[4400], log[4400], fin[4400];
    snprintf(base, sizeof base, "%s/k%s.%ld.%u.tmp", dir, key, (long)getpid(), serial++);
    snprintf(c, sizeof c, "%s.c", base);
    snprintf(so, sizeof so, "%s.so", base);
    snprintf(log, sizeof log, "%s.log", base);
    snprintf(fin, sizeof fin, "%s/k%s.so", dir, key);
    sweep_stale(dir);
    errno = 0;
    int r = -1, compiler_failed = 0;
    if (write_file(c, src, len)) {
        snprintf(why, whycap, "cannot write %s: %s", c, strerror(errno));
    } else if (compile(cc, opt, c, so, log, why, whycap)) {
        compiler_failed = 1;
    } else if ((r = seal(so, key, why, whycap)) == 0 && rename(so, fin)) {
        snprintf(why, whycap, "cannot rename %s: %s", so, strerror(errno));
        r = -1;
    }
    /* a compiler error is remembered, so that auto does not retry it on
     * every run; a success forgets an earlier failure */
    char fail[4400];
    snprintf(fail, sizeof fail, "%s/k%s.fail", dir, key);
    if (r == 0 || (compiler_failed && record))
        unlink(fail);
    if (compiler_failed && record)
        (void)write_file(fail, why, strlen(why));
    unlink(c);
    unlink(so);
    unlink(log);
    return r;
}

/* ---- the build lock ---- */

static int lock_path(const char *dir, const char *key, char *path, size_t cap)
{
    int w = snprintf(path, cap, "%s/k%s.lock", dir, key);
    return w > 0 && (size_t)w < cap ? 0 : -1;
}

int hs_nat_lock(const char *dir, const char *key, int wait)
{
    char path[4400];
    if (lock_path(dir, key, path, sizeof path))
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    struct flock fl = {0};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    while (fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl) < 0) {
        if (errno != EINTR) {
            int busy = errno == EACCES || errno == EAGAIN;
            close(fd);
            return busy ? -2 : -1;
        }
    }
    return fd;
}

void hs_nat_unlock(int fd)
{
    if (fd >= 0)
        close(fd);               /* releases the fcntl lock */
}

int hs_nat_locked(const char *dir, const char *key)
{
    char path[4400];
    if (lock_path(dir, key, path, sizeof path))
        return 0;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct flock fl = {0};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    int busy = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    close(fd);
    return busy;
}
