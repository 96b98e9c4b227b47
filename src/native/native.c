/* The policy (native.h): cached entry, synchronous build, background build
 * or the VM; dlopen and the kernels' addresses. */
#define _XOPEN_SOURCE 700          /* nice() for the background builder */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nat.h"

const char *const hs_native_policy_names[3] = {"never", "auto", "always"};

struct hs_native {
    void *dl;              /* dlopen handle */
    int fd;                /* the verified entry, loaded as /proc/self/fd/<fd>: held
                            * open while loaded, so no other file takes its name */
    size_t n;
    hs_kernel_fn *fn;      /* [n] */
    char path[4400];       /* as loaded; "" when built in a temporary directory */
};

void hs_native_opts_init(hs_native_opts *o)
{
    o->policy = HS_NATIVE_AUTO;
    o->work = 0;
    o->auto_work = HS_NATIVE_AUTO_WORK;
    o->chunk = HS_NATIVE_CHUNK;
    o->cache_dir = NULL;
    o->opt = "-O1";
}

/* One attempt: what is known about it, and what to tell the caller. */
typedef struct attempt {
    hs_native_opts o;
    const hs_prog *const *progs;
    size_t nprogs;
    hs_nat_buf src;        /* the C source */
    hs_nat_cc cc;
    char key[33];
    char dir[4096];        /* the cache's native/ directory (for messages) */
    int dfd;               /* ... held open: every step works relative to it */
    int dir_state;         /* hs_nat_cache_dir: 0 rw, 1 ro, -1 unusable */
    int unloadable;        /* the cached entry is intact but does not load */
    char why[1024];        /* the last reason something did not work */
    char *note;
    size_t notecap;
    hs_native_status status;
} attempt;

static hs_native *give_up(attempt *a, hs_native_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The VM, with a note (fmt NULL: nothing to tell). */
static hs_native *give_up(attempt *a, hs_native_status st, const char *fmt, ...)
{
    a->status = st;
    if (fmt && a->notecap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->note, a->notecap, fmt, ap);
        va_end(ap);
    }
    return NULL;
}

/* KEY: the format, the compiler, the flags, the source. */
static void make_key(attempt *a)
{
    hs_nat_buf h = {NULL, 0, 0, 0};
    hs_nat_printf(&h, "holosim native %d\n%s\n%s", HS_NAT_FORMAT, a->cc.id, a->o.opt);
    for (size_t i = 0; hs_nat_flag(&a->cc, i); i++)
        hs_nat_printf(&h, " %s", hs_nat_flag(&a->cc, i));
    uint64_t k[2] = {0x686f6c6f73696d00u, HS_NAT_FORMAT};
    if (h.p)
        hs_nat_hash(h.p, h.n, k);
    hs_nat_hash(a->src.p, a->src.n, k);
    hs_nat_hex(k, a->key);
    free(h.p);
}

/* dlopen the verified entry fd (taken over) and find every kernel; NULL
 * with a->why set on failure. */
static hs_native *open_entry(attempt *a, int fd, const char *path)
{
    hs_native *h = calloc(1, sizeof *h);
    if (h) {
        h->fd = fd;
        h->fn = calloc(a->nprogs, sizeof *h->fn);
    } else {
        close(fd);
    }
    if (!h || !h->fn) {
        snprintf(a->why, sizeof a->why, "out of memory");
        goto fail;
    }
    h->n = a->nprogs;
    char self[64];
    if (hs_nat_fd_path(fd, self, sizeof self)) {
        snprintf(a->why, sizeof a->why, "/proc/self/fd is not available to load the kernels");
        goto fail;
    }
    if (hs_nat_test_hook)
        hs_nat_test_hook("loading", self);
    h->dl = dlopen(self, RTLD_NOW | RTLD_LOCAL);
    if (!h->dl) {
        const char *e = dlerror();
        snprintf(a->why, sizeof a->why, "dlopen: %s", e ? e : "failed");
        goto fail;
    }
    for (size_t i = 0; i < a->nprogs; i++) {
        if (!a->progs[i])
            continue;
        char name[64];
        snprintf(name, sizeof name, "hs_native_p%zu", i);
        void *f = dlsym(h->dl, name);
        if (!f) {
            snprintf(a->why, sizeof a->why, "no symbol %s in the shared object", name);
            goto fail;
        }
        /* POSIX guarantees this conversion for dlsym's result */
        memcpy(&h->fn[i], &f, sizeof f);
    }
    snprintf(h->path, sizeof h->path, "%s", path);
    return h;
fail:
    hs_native_free(h);
    return NULL;
}

static void entry_path(const attempt *a, char *path, size_t cap)
{
    snprintf(path, cap, "%s/k%s.so", a->dir, a->key);
}

/* The cached entry, if it is there and intact (a->unloadable = 1 when it
 * is intact but dlopen refuses it). */
static hs_native *from_cache(attempt *a)
{
    if (a->dfd < 0)
        return NULL;
    int fd = hs_nat_entry_open(a->dfd, a->key);
    if (fd < 0)
        return NULL;
    char path[4400];
    entry_path(a, path, sizeof path);
    hs_native *h = open_entry(a, fd, path);
    a->unloadable = !h;
    return h;
}

/* ---- auto: the background builder ---- */

/* Close every descriptor above 2 (the run's output files and pipes: a
 * reader of the run's output must see end-of-file when the run ends, not
 * when the build does). */
static void close_inherited(int keep)
{
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        int self = dirfd(d);
        for (struct dirent *e; (e = readdir(d));) {
            int fd = atoi(e->d_name);
            if (fd > 2 && fd != self && fd != keep)
                close(fd);
        }
        closedir(d);
        return;
    }
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
        if (fd != keep)
            close((int)fd);
}

/* The detached process: its own session, low priority, no terminal, no
 * inherited descriptors; builds unless another process is already at it,
 * then exits without running the parent's atexit handlers or flushing its
 * stdio buffers. */
static void background_worker(attempt *a)
{
    setsid();
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD, SIGALRM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    close_inherited(a->dfd);          /* the held cache directory stays */
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) {
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(nul, 2);
        if (nul > 2)
            close(nul);
    }
    errno = 0;
    if (nice(10) == -1 && errno)
        errno = 0;                /* a build at normal priority is fine too */
    int lock = hs_nat_lock(a->dfd, a->key, 0);
    if (lock != -2) {
        int fd = hs_nat_entry_open(a->dfd, a->key);
        if (fd >= 0)
            close(fd);
        else
            hs_nat_build(&a->cc, a->o.opt, a->src.p, a->src.n, a->dfd, a->key, 1, a->why,
                         sizeof a->why);
        hs_nat_unlock(lock);
    }
    _exit(0);
}

/* fork twice: the builder is adopted by init, the caller reaps the middle
 * process at once and never waits for the build. */
static int start_background(attempt *a)
{
    pid_t mid = fork();
    if (mid < 0)
        return -1;
    if (mid == 0) {
        pid_t w = fork();
        if (w == 0)
            background_worker(a);
        _exit(w < 0 ? 1 : 0);
    }
    int st = 0;
    while (waitpid(mid, &st, 0) < 0)
        if (errno != EINTR)
            return errno == ECHILD ? 0 : -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static hs_native *load_auto(attempt *a)
{
    if (a->unloadable)
        return give_up(a, HS_NATIVE_FAILED, "native: cannot load the cached kernels (%s); "
                       "using the VM (%s rebuilds them)", a->why,
                       hs_optname(a->o.names, HS_OPT_NATIVE_ALWAYS));
    if (!(a->o.work >= a->o.auto_work))
        return give_up(a, HS_NATIVE_SHORT, NULL);
    size_t ni = 0;
    for (size_t i = 0; i < a->nprogs; i++)
        ni += a->progs[i] ? hs_prog_ninstr(a->progs[i]) : 0;
    if (ni > HS_NATIVE_AUTO_MAX_INSTR)
        return give_up(a, HS_NATIVE_LARGE, "native: the kernels have %zu instructions, more "
                       "than auto builds unasked (%d: the compiler would take minutes and "
                       "gigabytes); using the VM (%s builds them)", ni,
                       HS_NATIVE_AUTO_MAX_INSTR, hs_optname(a->o.names, HS_OPT_NATIVE_ALWAYS));
    if (a->dir_state != 0)
        return give_up(a, HS_NATIVE_FAILED, "native: %s; using the VM", a->why);
    if (hs_nat_earlier_failure(a->dfd, a->key, a->why, sizeof a->why))
        return give_up(a, HS_NATIVE_FAILED, "native: an earlier build of these kernels "
                       "failed (%s); using the VM (%s retries)", a->why,
                       hs_optname(a->o.names, HS_OPT_NATIVE_ALWAYS));
    if (hs_nat_locked(a->dfd, a->key))
        return give_up(a, HS_NATIVE_PENDING, "native: kernels being built by another "
                       "process; using the VM for this run");
    if (start_background(a))
        return give_up(a, HS_NATIVE_FAILED, "native: cannot start a background build: %s; "
                       "using the VM", strerror(errno));
    return give_up(a, HS_NATIVE_PENDING, "native: building kernels in the background for "
                   "the next run (%s); using the VM for this run", a->dir);
}

/* ---- always: build now ---- */

/* Build in a fresh temporary directory, load, remove the files (the
 * mapping stays). */
static hs_native *build_in_tmp(attempt *a)
{
    const char *t = getenv("TMPDIR");
    char cachewhy[1024];
    snprintf(cachewhy, sizeof cachewhy, "%s", a->why);
    snprintf(a->dir, sizeof a->dir, "%s/holosim-native-XXXXXX", t && *t ? t : "/tmp");
    if (a->dfd >= 0)
        close(a->dfd);
    a->dfd = -1;
    if (!mkdtemp(a->dir))
        return give_up(a, HS_NATIVE_FAILED, "native: %s, and no temporary directory (%s); "
                       "using the VM", cachewhy, strerror(errno));
    a->dfd = hs_nat_hold_dir(a->dir, a->why, sizeof a->why);
    if (a->dfd < 0) {
        rmdir(a->dir);
        return give_up(a, HS_NATIVE_FAILED, "native: %s, and %s; using the VM", cachewhy,
                       a->why);
    }
    hs_native *h = NULL;
    if (hs_nat_build(&a->cc, a->o.opt, a->src.p, a->src.n, a->dfd, a->key, 0, a->why,
                     sizeof a->why) == 0)
        h = from_cache(a);
    char name[64];
    snprintf(name, sizeof name, "k%s.so", a->key);
    unlinkat(a->dfd, name, 0);
    rmdir(a->dir);           /* by name: at worst another empty directory stays */
    if (!h)
        return give_up(a, HS_NATIVE_FAILED, "native: build failed: %s; using the VM", a->why);
    h->path[0] = '\0';
    a->status = HS_NATIVE_BUILT;
    snprintf(a->note, a->notecap, "native: %s; built in a temporary directory", cachewhy);
    return h;
}

static hs_native *load_always(attempt *a)
{
    if (a->dir_state != 0)
        return build_in_tmp(a);
    /* one builder per key: the others wait for it and load its entry */
    int lock = hs_nat_lock(a->dfd, a->key, 1);
    hs_native *h = from_cache(a);
    if (h) {
        hs_nat_unlock(lock);
        a->status = HS_NATIVE_CACHED;
        return h;
    }
    int r = hs_nat_build(&a->cc, a->o.opt, a->src.p, a->src.n, a->dfd, a->key, 1, a->why,
                         sizeof a->why);
    hs_nat_unlock(lock);
    if (r)
        return give_up(a, HS_NATIVE_FAILED, "native: build failed: %s; using the VM", a->why);
    h = from_cache(a);
    if (!h)
        return give_up(a, HS_NATIVE_FAILED, "native: cannot load the built kernels: %s; "
                       "using the VM", a->why[0] ? a->why : "entry invalid");
    a->status = HS_NATIVE_BUILT;
    return h;
}

static hs_native *load(attempt *a)
{
    size_t live = 0;
    for (size_t i = 0; i < a->nprogs; i++)
        live += a->progs[i] != NULL;
    if (a->o.policy == HS_NATIVE_NEVER || !live)
        return give_up(a, HS_NATIVE_OFF, NULL);
    if (hs_nat_emit(&a->src, a->progs, a->nprogs, a->o.chunk))
        return give_up(a, HS_NATIVE_FAILED, "native: out of memory; using the VM");
    if (hs_nat_cc_find(&a->cc, a->why, sizeof a->why)) {
        if (a->o.policy == HS_NATIVE_AUTO && !(a->o.work >= a->o.auto_work))
            return give_up(a, HS_NATIVE_SHORT, NULL);
        return give_up(a, HS_NATIVE_FAILED, "native: %s; using the VM", a->why);
    }
    make_key(a);
    /* a short run only looks: it creates no directory */
    int create = a->o.policy == HS_NATIVE_ALWAYS || a->o.work >= a->o.auto_work;
    a->dir_state = hs_nat_cache_dir(a->o.cache_dir, create, a->dir, sizeof a->dir, &a->dfd,
                                    a->why, sizeof a->why);
    if (a->dir_state >= 0) {
        hs_native *h = from_cache(a);
        if (h) {
            a->status = HS_NATIVE_CACHED;
            return h;
        }
    }
    if (a->o.policy == HS_NATIVE_AUTO)
        return load_auto(a);
    return load_always(a);
}

hs_native *hs_native_load(const hs_prog *const *progs, size_t nprogs,
                          const hs_native_opts *o, hs_native_status *status,
                          char *note, size_t notecap)
{
    static char nonote[1];
    attempt *a = calloc(1, sizeof *a);
    if (notecap)
        note[0] = '\0';
    if (!a) {
        if (status)
            *status = HS_NATIVE_FAILED;
        if (notecap)
            snprintf(note, notecap, "native: out of memory; using the VM");
        return NULL;
    }
    if (o)
        a->o = *o;
    else
        hs_native_opts_init(&a->o);
    if (!a->o.chunk)
        a->o.chunk = HS_NATIVE_CHUNK;
    if (!a->o.opt || !*a->o.opt)
        a->o.opt = "-O1";
    if (!(a->o.auto_work > 0))
        a->o.auto_work = HS_NATIVE_AUTO_WORK;
    a->progs = progs;
    a->nprogs = nprogs;
    a->dfd = -1;
    a->note = notecap ? note : nonote;
    a->notecap = notecap ? notecap : sizeof nonote;
    hs_native *h = load(a);
    if (status)
        *status = a->status;
    free(a->src.p);
    hs_nat_cc_free(&a->cc);
    if (a->dfd >= 0)
        close(a->dfd);
    free(a);
    return h;
}

hs_kernel_fn hs_native_fn(const hs_native *h, size_t i)
{
    return h && i < h->n ? h->fn[i] : NULL;
}

const char *hs_native_path(const hs_native *h)
{
    return h ? h->path : "";
}

void hs_native_free(hs_native *h)
{
    if (!h)
        return;
    if (h->dl)
        dlclose(h->dl);
    if (h->fd >= 0)
        close(h->fd);
    free(h->fn);
    free(h);
}
