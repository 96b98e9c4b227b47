/* Native kernels: the bytecode programs of src/expr written out as C,
 * compiled by the system C compiler into a shared object, cached on disk and
 * loaded with dlopen.  The VM (hs_prog_eval) stays the reference and the
 * fallback: a native kernel computes the same doubles bit for bit (the
 * emitted code is generated from the same ops.def expressions, the same
 * powi/sign helpers, constants as hex literals, built with -std=c11
 * -ffp-contract=off, no fast-math), only faster.
 *
 *   hs_native_load   several programs of one model -> one shared object ->
 *                    one handle (NULL: use the VM; the note says why)
 *   hs_native_fn     the kernel of program i: same contract as hs_prog_eval
 *   hs_native_source the C text (what is compiled; for listings and tests)
 *
 * Policy (hs_native_opts.policy):
 *   never   the VM.
 *   always  a cached shared object, else build it now (waits for the
 *           compiler), else the VM with a note.
 *   auto    a cached shared object, else the VM for this run; when the run
 *           is expected to be long (work >= auto_work) a detached process
 *           builds it in the background for the next run.  Never starts a
 *           compiler that the caller waits for.
 *
 * Compiler: $CC if set and not empty (words split on blanks: "ccache gcc"
 * works), else `cc`, found in $PATH.  Flags: -O1 -std=c11 -fPIC -shared
 * -ffp-contract=off -fno-fast-math -fno-builtin-fmin -fno-builtin-fmax
 * -fno-tree-dse -fno-dse -g0 -pipe ... -lm (why: cache.c).
 *
 * Cache: $HOLOSIM_CACHE, else $XDG_CACHE_HOME/holosim, else
 * $HOME/.cache/holosim; entries in its native/ subdirectory:
 *   k<KEY>.so     the shared object, followed by a trailer line
 *                 "HSNATIVE<v> <KEY> <size> <hash>\n" (size and 128-bit hash
 *                 of the bytes before it), checked before every dlopen: a
 *                 truncated or altered entry is rebuilt (always) or ignored
 *                 (auto)
 *   k<KEY>.lock   fcntl lock held while one process builds KEY
 *   k<KEY>.fail   the compiler's first error: auto does not retry KEY
 *   k<KEY>.<pid>.<n>.tmp.{c,so,log}  work files of a build in progress
 * KEY = 128-bit hash of (format version, compiler words, compiler
 * executable's path, size and mtime, flags, emitted C source).  A build
 * writes temporary files in the same directory and rename(2)s the finished
 * entry into place, so concurrent builders never leave a partial entry.  A
 * directory that cannot be created or written, or that others may write,
 * is not used: `always` builds in a fresh temporary directory instead,
 * `auto` runs the VM.  The directory is opened once and used through that
 * descriptor only (cache.c); an entry is loaded as /proc/self/fd/N of the
 * descriptor that was checked.  Words of $CC that change the object's
 * run-time (sanitizers, profiling) are dropped, and each build is loaded in
 * a child process before it becomes an entry. */
#ifndef HS_NATIVE_H
#define HS_NATIVE_H

#include <stddef.h>

#include "../expr/expr.h"

/* Same contract as hs_prog_eval(p, in, regs, out): regs is scratch of
 * hs_prog_nregs(p) doubles (its contents afterwards differ from the VM's);
 * in, regs and out must not overlap. */
typedef void (*hs_kernel_fn)(const double *in, double *regs, double *out);

typedef enum { HS_NATIVE_NEVER, HS_NATIVE_AUTO, HS_NATIVE_ALWAYS } hs_native_policy;
/* "never", "auto", "always" in enum order (for the command line) */
extern const char *const hs_native_policy_names[3];

typedef enum hs_native_status {
    HS_NATIVE_CACHED,      /* loaded from the cache */
    HS_NATIVE_BUILT,       /* compiled now (always), then loaded */
    HS_NATIVE_OFF,         /* VM: policy never (or no programs) */
    HS_NATIVE_SHORT,       /* VM: auto, not cached, the run is too short to build */
    HS_NATIVE_PENDING,     /* VM: auto, a background build started or is running */
    HS_NATIVE_FAILED,      /* VM: no compiler, unusable cache, build or load failed */
    HS_NATIVE_LARGE        /* VM: auto, not cached, too large to build unasked */
} hs_native_status;

/* auto starts a background build when work >= this many instruction
 * evaluations: the VM takes 2.5-4 ns per instruction (bench/README.md),
 * so about 0.5-0.8 s of VM time, a run of a second or more */
#define HS_NATIVE_AUTO_WORK 2e8
/* auto builds no kernels of more instructions than this in the
 * background: the compiler takes about a minute and 1 GB per 250000
 * (a 60 x 60 cloth, bench/README.md), which nobody asked for */
#define HS_NATIVE_AUTO_MAX_INSTR 200000
/* instructions per emitted C function (compile time grows faster than
 * linearly with the size of a function; bench/README.md) */
#define HS_NATIVE_CHUNK 100

typedef struct hs_native_opts {
    hs_native_policy policy;
    double work;           /* expected instruction evaluations of this run
                            * (RHS evaluations x instructions); <= 0: unknown */
    double auto_work;      /* threshold for auto (HS_NATIVE_AUTO_WORK) */
    size_t chunk;          /* instructions per C function (HS_NATIVE_CHUNK) */
    const char *cache_dir; /* NULL: from the environment (above); else the
                            * directory holding native/ */
    const char *opt;       /* optimization flag ("-O1") */
    const hs_optnames *names; /* the caller's option names (NULL: the library's) */
} hs_native_opts;

void hs_native_opts_init(hs_native_opts *o);

typedef struct hs_native hs_native;

/* One shared object with one kernel per program (progs[i] may be NULL: no
 * kernel).  Returns NULL when the caller should use the VM: *status (may
 * be NULL) says why, and note[notecap] holds a one-line explanation for
 * the user ("native: ...", no newline) when something is worth telling
 * (a failure, a background build started, a temporary directory used),
 * else "".  The handle keeps no reference to the programs.  Never prints,
 * never exits; auto may fork a detached builder (its own session, no
 * inherited descriptors, exits with _exit). */
hs_native *hs_native_load(const hs_prog *const *progs, size_t nprogs,
                          const hs_native_opts *o, hs_native_status *status,
                          char *note, size_t notecap);

/* The kernel of progs[i] (NULL when progs[i] was NULL or i >= nprogs),
 * valid until hs_native_free.  Reentrant: all its state is in regs and on
 * the stack (at most 8 KB). */
hs_kernel_fn hs_native_fn(const hs_native *h, size_t i);

/* The shared object's path as loaded ("" after a build in a temporary
 * directory, which is removed at once). */
const char *hs_native_path(const hs_native *h);

void hs_native_free(hs_native *h);               /* NULL is fine */

/* The C source hs_native_load compiles (malloc'ed, NUL-terminated; *len
 * without the NUL), chunk = 0 for the default.  NULL on allocation
 * failure.  Program i becomes `void hs_native_p<i>(in, regs, out)`. */
char *hs_native_source(const hs_prog *const *progs, size_t nprogs, size_t chunk,
                       size_t *len);

#endif
