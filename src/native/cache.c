/* Hashing, the compiler, the cache directory and its entries, one build.
 *
 * An entry is the shared object followed by a trailer line (TRAILER_LEN
 * bytes, text):  "HSNATIVE<f> <key:32 hex> <size:16 hex> <hash:32 hex>\n".
 * The dynamic loader maps segments by the ELF program headers and ignores
 * bytes past them, so the file stays loadable; the trailer lets a reader
 * check, before dlopen, that the entry is complete (size) and intact (hash)
 * and belongs to this key, whatever happened to the file since (a build
 * killed halfway cannot leave one: it is renamed into place only when
 * finished, but a disk or a user can truncate or alter it).
 *
 * Names are looked up once.  The cache directory is opened once (its last
 * component not followed), its owner and mode checked on the descriptor,
 * and every later step works relative to that descriptor: the source is
 * written with openat, the compiler runs with the directory as its working
 * directory (fchdir in the child) and relative file names, the object is
 * sealed and renamed with renameat, and an entry is opened with O_NOFOLLOW
 * and O_NONBLOCK (a FIFO never blocks) and checked with fstat (a regular
 * file of ours that nobody else may write) before its bytes are hashed and
 * the same descriptor is loaded through /proc/self/fd.  Whoever renames or
 * replaces the directory by name afterwards changes nothing we do. */
#define _GNU_SOURCE                /* posix_spawn_file_actions_addfchdir_np, realpath */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

/* Words of $CC that change the run-time of the object rather than its
 * code: instrumentation needing a run-time library of its own (sanitizers,
 * profiling, coverage, OpenMP), which would make dlopen fail or abort a
 * process that does not carry that run-time.  They are dropped. */
static const char *const runtime_prefixes[] = {
    "-fsanitize", "-fprofile", "-fauto-profile", "-fcoverage", "-ftest-coverage",
    "--coverage", "-pg", "-shared-lib", "-static-lib", "-finstrument-functions",
    "-fopenmp", "-fxray", "-fcs-profile", NULL};

int hs_nat_runtime_flag(const char *w)
{
    if (strcmp(w, "-p") == 0)
        return 1;
    for (size_t i = 0; runtime_prefixes[i]; i++)
        if (strncmp(w, runtime_prefixes[i], strlen(runtime_prefixes[i])) == 0)
            return 1;
    return 0;
}

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
        if (cc->nwords > 0 && hs_nat_runtime_flag(s)) {
            cc->dropped++;
            continue;
        }
        cc->argv[cc->nwords++] = s;
    }
    struct stat st;
    if (search_path(cc, &st)) {
        snprintf(why, whycap, "no C compiler ('%s' %s)", cc->argv[0],
                 strchr(cc->argv[0], '/') ? "is not an executable file" : "not found in PATH");
        return -1;
    }
    /* the compiler runs in the cache directory: a relative name made absolute */
    if (cc->path[0] != '/') {
        char cwd[4096], abs[4096];
        int w = getcwd(cwd, sizeof cwd) ? snprintf(abs, sizeof abs, "%s/%s", cwd, cc->path) : -1;
        if (w < 0 || (size_t)w >= sizeof abs) {
            snprintf(why, whycap, "no C compiler ('%s': the working directory is unknown)",
                     cc->argv[0]);
            return -1;
        }
        memcpy(cc->path, abs, (size_t)w + 1);
        if (strchr(cc->argv[0], '/'))
            cc->argv[0] = cc->path;
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

/* ---- the test hook ---- */

void (*hs_nat_test_hook)(const char *step, const char *name);

static void hook(const char *step, const char *name)
{
    if (hs_nat_test_hook)
        hs_nat_test_hook(step, name);
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

/* fd is a directory of ours that nobody else may write (others could plant
 * code there, or rename its entries). */
static int held_dir_ok(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid()
           && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

int hs_nat_hold_dir(const char *path, char *why, size_t whycap)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whycap, "cache directory %s %s", path,
                 errno == ENOTDIR || errno == ELOOP ? "is not a directory" : strerror(errno));
        return -1;
    }
    if (!held_dir_ok(fd)) {
        snprintf(why, whycap, "cache directory %s is not yours alone", path);
        close(fd);
        return -1;
    }
    return fd;
}

int hs_nat_cache_dir(const char *override, int create, char *dir, size_t cap, int *dfd,
                     char *why, size_t whycap)
{
    const char *base = override, *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    const char *env = getenv("HOLOSIM_CACHE");
    int w;
    *dfd = -1;
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
    if (lstat(dir, &st)) {
        if (!create) {
            snprintf(why, whycap, "no cache directory %s", dir);
            return -1;
        }
        if (mkdirs(dir)) {
            snprintf(why, whycap, "cannot create cache directory %s: %s", dir, strerror(errno));
            return -1;
        }
    }
    int fd = hs_nat_hold_dir(dir, why, whycap);
    if (fd < 0)
        return -1;
    hook("dir-held", dir);
    *dfd = fd;
    if (faccessat(fd, ".", W_OK, AT_EACCESS)) {
        snprintf(why, whycap, "cache directory %s is not writable: %s", dir, strerror(errno));
        return 1;
    }
    return 0;
}

/* ---- entries ---- */

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO;
            return -1;
        }
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

/* Open name in dfd without following a link and without blocking on a FIFO
 * or a device, and keep it only if it is a regular file of ours that nobody
 * else may write. */
static int open_own(int dfd, const char *name, int how, mode_t mode)
{
    int fd = openat(dfd, name, how | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, mode);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()
        || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    /* back to blocking reads and writes (a regular file never blocks) */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

/* The descriptor is a complete, intact entry for key (reads it whole). */
static int fd_entry_ok(int fd, const char *key)
{
    struct stat st;
    unsigned char *p = NULL;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()
             && !(st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_size > TRAILER_LEN
             && st.st_size < MAX_ENTRY;
    if (ok) {
        size_t n = (size_t)st.st_size;
        p = malloc(n);
        ok = p && pread(fd, p, n, 0) == (ssize_t)n;
        if (ok) {
            char want[TRAILER_LEN + 1];
            trailer(p, n - TRAILER_LEN, key, want);
            ok = memcmp(p + n - TRAILER_LEN, want, TRAILER_LEN) == 0;
        }
    }
    free(p);
    return ok;
}

static void entry_name(const char *key, const char *ext, char *out, size_t cap)
{
    snprintf(out, cap, "k%.32s%s", key, ext);
}

int hs_nat_entry_open(int dfd, const char *key)
{
    char name[64];
    entry_name(key, ".so", name, sizeof name);
    int fd = open_own(dfd, name, O_RDONLY, 0);
    if (fd < 0)
        return -1;
    if (!fd_entry_ok(fd, key)) {
        close(fd);
        return -1;
    }
    hook("entry-verified", name);
    return fd;
}

int hs_nat_entry_ok(const char *path, const char *key)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return 0;
    int ok = fd_entry_ok(fd, key);
    close(fd);
    return ok;
}

int hs_nat_fd_path(int fd, char *out, size_t cap)
{
    int w = snprintf(out, cap, "/proc/self/fd/%d", fd);
    struct stat a, b;
    /* /proc must show this very file (no /proc, or another mounted there: no) */
    if (w < 0 || (size_t)w >= cap || stat(out, &a) || fstat(fd, &b) || a.st_dev != b.st_dev
        || a.st_ino != b.st_ino)
        return -1;
    return 0;
}

/* Remove work files of builds that died (older than STALE_S). */
static void sweep_stale(int dfd)
{
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    time_t now = time(NULL);
    struct stat st;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] != 'k' || !strstr(e->d_name, ".tmp."))
            continue;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)
            && now - st.st_mtime > STALE_S)
            unlinkat(dfd, e->d_name, 0);
    }
    closedir(d);
}

/* Does a line of the compiler's output say the machine, not the code, is
 * at fault (a full disk, no memory, a process killed)? */
static int transient_line(const char *line)
{
    static const char *const words[] = {
        "No space left", "Disk quota", "File too large", "Killed", "killed",
        "signal", "terminated", "memory exhausted", "out of memory", "Cannot allocate",
        "Interrupt", "Resource temporarily", "Input/output error", "Read-only file system",
        NULL};
    for (size_t i = 0; words[i]; i++)
        if (strstr(line, words[i]))
            return 1;
    return 0;
}

/* The first line of the compiler's output that says "error" (else the
 * first line), into why; 1 when that output reads as the code's fault (an
 * error line, no sign of a transient cause), else 0. */
static int first_error(int logfd, char *why, size_t whycap)
{
    char line[512], first[512] = "";
    int err = 0, transient = 0;
    int fd = logfd >= 0 ? dup(logfd) : -1;
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f && fd >= 0)
        close(fd);
    if (f) {
        rewind(f);
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = '\0';
            transient |= transient_line(line);
            if (!first[0] || (!err && strstr(line, "error"))) {
                snprintf(first, sizeof first, "%s", line);
                err = strstr(line, "error") != NULL;
            }
        }
        fclose(f);
    }
    struct statvfs fs;                    /* no output at all: a full disk cannot write it */
    if (!first[0] && logfd >= 0 && fstatvfs(logfd, &fs) == 0 && fs.f_bavail == 0)
        snprintf(why, whycap, "the compiler failed without a message: the cache's file "
                 "system is full (no space left on device)");
    else
        snprintf(why, whycap, "%s", first[0] ? first : "the compiler failed without a message");
    return err && !transient;
}

/* How a build ended: the code's fault is remembered, the rest retried. */
enum { BUILD_OK, BUILD_CODE, BUILD_TRANSIENT };

/* Run the compiler in the held directory on c into so (names relative to
 * it), its output into logfd. */
static int compile(const hs_nat_cc *cc, const char *opt, int dfd, const char *c,
                   const char *so, int logfd, char *why, size_t whycap)
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
        if (!hs_nat_runtime_flag(s))
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
    posix_spawn_file_actions_adddup2(&fa, logfd, 1);
    posix_spawn_file_actions_adddup2(&fa, logfd, 2);
    posix_spawn_file_actions_addfchdir_np(&fa, dfd);
    posix_spawnattr_init(&at);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    int e = posix_spawn(&pid, cc->path, &fa, &at, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (e) {
        snprintf(why, whycap, "cannot run %s: %s", cc->path, strerror(e));
        return BUILD_TRANSIENT;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno == ECHILD) {     /* SIGCHLD ignored: reaped already; the object says */
            struct stat st;
            if (fstatat(dfd, so, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)
                && st.st_size > 0)
                return BUILD_OK;
            first_error(logfd, why, whycap);
            return BUILD_TRANSIENT;
        }
        if (errno != EINTR) {
            snprintf(why, whycap, "waiting for the compiler: %s", strerror(errno));
            return BUILD_TRANSIENT;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return BUILD_OK;
    int code = first_error(logfd, why, whycap);
    if (WIFSIGNALED(status)) {
        snprintf(why, whycap, "the compiler was stopped by signal %d", WTERMSIG(status));
        return BUILD_TRANSIENT;
    }
    return code ? BUILD_CODE : BUILD_TRANSIENT;
}

/* Load the object in a child process first: an object that dlopen refuses
 * or that aborts the process loading it (a run-time it needs is missing)
 * never becomes an entry. */
static int probe(int fd, char *why, size_t whycap)
{
    char path[64];
    if (hs_nat_fd_path(fd, path, sizeof path)) {
        snprintf(why, whycap, "/proc/self/fd is not available to load the kernels");
        return BUILD_TRANSIENT;
    }
    int pfd[2];
    if (pipe(pfd)) {
        snprintf(why, whycap, "cannot test the built kernels: %s", strerror(errno));
        return BUILD_TRANSIENT;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, whycap, "cannot test the built kernels: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        return BUILD_TRANSIENT;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 1);
            dup2(nul, 2);
        }
        alarm(30);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        const char *e = h ? "+" : dlerror();
        ssize_t w = write(pfd[1], e ? e : "failed", strlen(e ? e : "failed"));
        (void)w;
        _exit(h ? 0 : 1);
    }
    close(pfd[1]);
    char msg[400];
    size_t got = 0;
    for (ssize_t r; got < sizeof msg - 1
                    && ((r = read(pfd[0], msg + got, sizeof msg - 1 - got)) > 0 || (r < 0 && errno == EINTR));)
        if (r > 0)
            got += (size_t)r;
    msg[got] = '\0';
    close(pfd[0]);
    int status = 0;
    pid_t r;
    while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    int loaded = got == 1 && msg[0] == '+';
    if (r < 0 ? loaded : WIFEXITED(status) && WEXITSTATUS(status) == 0 && loaded)
        return BUILD_OK;                    /* (r < 0: SIGCHLD ignored, the pipe told) */
    if (r < 0)
        status = 1 << 8;
    if (WIFSIGNALED(status))
        snprintf(why, whycap, "the built kernels do not load (signal %d: a run-time library "
                 "the compiler's flags need?)", WTERMSIG(status));
    else
        snprintf(why, whycap, "the built kernels do not load: dlopen: %s",
                 got ? msg : "failed");
    return BUILD_CODE;
}

/* Append the trailer to the object so in dfd. */
static int seal(int dfd, const char *so, const char *key, char *why, size_t whycap)
{
    int fd = open_own(dfd, so, O_RDWR, 0);
    struct stat st;
    unsigned char *p = NULL;
    errno = 0;
    int ok = fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < MAX_ENTRY;
    int r = ok ? BUILD_OK : BUILD_TRANSIENT;
    if (ok && (r = probe(fd, why, whycap)) != BUILD_OK)
        ok = 0;
    else if (ok) {
        size_t n = (size_t)st.st_size;
        char t[TRAILER_LEN + 1];
        p = malloc(n);
        ok = p && pread(fd, p, n, 0) == (ssize_t)n;
        if (ok) {
            trailer(p, n, key, t);
            ok = pwrite(fd, t, TRAILER_LEN, st.st_size) == TRAILER_LEN
                 && fchmod(fd, 0700) == 0;
        }
        if (!ok)
            r = BUILD_TRANSIENT;
    }
    if (!ok && r == BUILD_TRANSIENT)
        snprintf(why, whycap, "finishing %s: %s", so, strerror(errno ? errno : EIO));
    free(p);
    if (fd >= 0 && close(fd) && ok) {
        snprintf(why, whycap, "finishing %s: %s", so, strerror(errno));
        ok = 0;
        r = BUILD_TRANSIENT;
    }
    return ok ? BUILD_OK : r;
}

static int write_file(int dfd, const char *name, const char *s, size_t n)
{
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int r = write_all(fd, s, n);
    int e = errno;
    if (close(fd) && !r) {
        r = -1;
        e = errno;
    }
    if (r)
        unlinkat(dfd, name, 0);
    errno = e;
    return r;
}

/* Remember (or forget) the code's failure of key in dfd: written in full
 * under a work name and renamed, never an empty or partial record. */
static void record_failure(int dfd, const char *key, const char *why)
{
    char fail[64], tmp[128];
    static _Atomic unsigned serial;
    entry_name(key, ".fail", fail, sizeof fail);
    if (!why) {
        unlinkat(dfd, fail, 0);
        return;
    }
    snprintf(tmp, sizeof tmp, "k%.32s.%ld.%u.tmp.fail", key, (long)getpid(), serial++);
    char line[1100];
    snprintf(line, sizeof line, "%s\n", why[0] ? why : "the compiler failed without a message");
    if (write_file(dfd, tmp, line, strlen(line)) == 0 && renameat(dfd, tmp, dfd, fail))
        unlinkat(dfd, tmp, 0);
}

int hs_nat_earlier_failure(int dfd, const char *key, char *why, size_t whycap)
{
    char fail[64], buf[1100];
    entry_name(key, ".fail", fail, sizeof fail);
    int fd = open_own(dfd, fail, O_RDONLY, 0);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    if (!buf[0]) {                  /* no reason: not a record (an older, cut one) */
        unlinkat(dfd, fail, 0);
        return 0;
    }
    snprintf(why, whycap, "%s", buf);
    return 1;
}

int hs_nat_build(const hs_nat_cc *cc, const char *opt, const char *src, size_t len,
                 int dfd, const char *key, int record, char *why, size_t whycap)
{
    static _Atomic unsigned serial;      /* work files of concurrent builds differ */
    char base[128], c[160], so[160], log[160], fin[64];
    snprintf(base, sizeof base, "k%.32s.%ld.%u.tmp", key, (long)getpid(), serial++);
    snprintf(c, sizeof c, "%s.c", base);
    snprintf(so, sizeof so, "%s.so", base);
    snprintf(log, sizeof log, "%s.log", base);
    entry_name(key, ".so", fin, sizeof fin);
    sweep_stale(dfd);
    errno = 0;
    int r = BUILD_TRANSIENT;
    int logfd = -1;
    if (write_file(dfd, c, src, len)) {
        snprintf(why, whycap, "cannot write %s: %s", c, strerror(errno));
        goto done;
    }
    hook("source-written", c);
    logfd = openat(dfd, log, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (logfd < 0) {
        snprintf(why, whycap, "cannot write %s: %s", log, strerror(errno));
        goto done;
    }
    if ((r = compile(cc, opt, dfd, c, so, logfd, why, whycap)) != BUILD_OK)
        goto done;
    hook("compiled", so);
    if ((r = seal(dfd, so, key, why, whycap)) != BUILD_OK)
        goto done;
    hook("sealed", so);
    if (renameat(dfd, so, dfd, fin)) {
        snprintf(why, whycap, "cannot rename %s: %s", so, strerror(errno));
        r = BUILD_TRANSIENT;
        goto done;
    }
    hook("renamed", fin);
done:
    /* the code's failure is remembered, so that auto does not retry it on
     * every run; a success forgets an earlier failure; an interrupted or
     * starved build is neither */
    if (r == BUILD_OK)
        record_failure(dfd, key, NULL);
    else if (r == BUILD_CODE && record)
        record_failure(dfd, key, why);
    if (logfd >= 0)
        close(logfd);
    unlinkat(dfd, c, 0);
    unlinkat(dfd, so, 0);
    unlinkat(dfd, log, 0);
    return r == BUILD_OK ? 0 : -1;
}

/* ---- the build lock ---- */

int hs_nat_lock(int dfd, const char *key, int wait)
{
    char name[64];
    entry_name(key, ".lock", name, sizeof name);
    int fd = open_own(dfd, name, O_RDWR | O_CREAT, 0600);
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

int hs_nat_locked(int dfd, const char *key)
{
    char name[64];
    entry_name(key, ".lock", name, sizeof name);
    int fd = open_own(dfd, name, O_RDWR, 0);
    if (fd < 0)
        return 0;
    struct flock fl = {0};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    int busy = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    close(fd);
    return busy;
}
