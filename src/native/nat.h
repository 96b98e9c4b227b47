/* Private to src/native: the text buffer, the emitter (emit.c), hashing,
 * the compiler and the cache (cache.c); native.c is the policy on top. */
#ifndef HS_NAT_H
#define HS_NAT_H

#include <stddef.h>
#include <stdint.h>

#include "native.h"

/* Format of the emitted code and of the cache entry; bump on any change of
 * the emitter that the key's other parts would not see. */
#define HS_NAT_FORMAT 2

/* A growing text; failed = 1 after an allocation failure (then frozen). */
typedef struct hs_nat_buf {
    char *p;
    size_t n, cap;
    int failed;
} hs_nat_buf;

void hs_nat_put(hs_nat_buf *b, const char *s, size_t n);
void hs_nat_puts(hs_nat_buf *b, const char *s);
void hs_nat_printf(hs_nat_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Append the C source of the programs (emit.c). 0, or -1 on allocation
 * failure. */
int hs_nat_emit(hs_nat_buf *b, const hs_prog *const *progs, size_t nprogs, size_t chunk);

/* 128-bit hash of p[0..n-1], seeded by and written to h. */
void hs_nat_hash(const void *p, size_t n, uint64_t h[2]);
void hs_nat_hex(const uint64_t h[2], char out[33]);

/* The compiler: $CC's words (or "cc"), argv[0] found in $PATH (made
 * absolute: the compiler runs in the cache directory). */
#define HS_NAT_MAXWORDS 16
typedef struct hs_nat_cc {
    char *words;                       /* storage for argv's strings */
    const char *argv[HS_NAT_MAXWORDS]; /* the words of $CC, run-time flags dropped */
    size_t nwords;
    size_t dropped;                    /* words of $CC dropped (hs_nat_runtime_flag) */
    char path[4096];                   /* argv[0] resolved */
    char id[4352];                     /* words, path, size, mtime */
    int gcc;                           /* GCC (by its file name): GCC-only flags */
} hs_nat_cc;

/* 0, or -1 with why[] set (not found, too many words). */
int hs_nat_cc_find(hs_nat_cc *cc, char *why, size_t whycap);
void hs_nat_cc_free(hs_nat_cc *cc);

/* 1 when a compiler word changes the object's run-time rather than its code
 * (-fsanitize=..., -pg, -fprofile-..., --coverage, -shared-libasan, ...):
 * such words of $CC and of the optimization flag are dropped. */
int hs_nat_runtime_flag(const char *word);

/* The cache directory (created 0700 when missing and create is set), held
 * open: *dfd is a descriptor of it (its last component not followed, a
 * directory of ours that nobody else may write), which every later step
 * uses instead of its name.  Returns 0 when it can be read and written, 1
 * when it can only be read (*dfd set in both cases: close it), -1 when it
 * cannot be used or is missing (why[] says why; *dfd = -1). */
int hs_nat_cache_dir(const char *override, int create, char *dir, size_t cap, int *dfd,
                     char *why, size_t whycap);
/* path opened and checked as the cache directory is: a descriptor, or -1
 * with why[] set. */
int hs_nat_hold_dir(const char *path, char *why, size_t whycap);

/* A descriptor of dfd's k<key>.so when it is a complete, intact entry for
 * key (a regular file of ours nobody else may write; links not followed,
 * FIFOs never waited for), else -1. */
int hs_nat_entry_open(int dfd, const char *key);
/* The same check by path (for tests and listings). */
int hs_nat_entry_ok(const char *path, const char *key);
/* "/proc/self/fd/<fd>" into out, 0 when that name shows fd's file (its
 * device and inode checked), -1 when it does not (no /proc). */
int hs_nat_fd_path(int fd, char *out, size_t cap);

/* Build the entry for key in the held directory dfd: work files, compile
 * (the compiler's working directory is dfd), load-test in a child, trailer,
 * renameat.  0, or -1 with why[] holding the compiler's first error line or
 * the system error.  record = 1: on a failure of the code (the compiler's
 * error, an object that does not load) write k<key>.fail; a build stopped by
 * a signal or starved of disk or memory is not recorded. */
int hs_nat_build(const hs_nat_cc *cc, const char *opt, const char *src, size_t len,
                 int dfd, const char *key, int record, char *why, size_t whycap);
/* 1 with why[] set when an earlier build of key failed in the code's
 * fault (k<key>.fail), else 0. */
int hs_nat_earlier_failure(int dfd, const char *key, char *why, size_t whycap);

/* The per-key build lock (fcntl): returns the descriptor holding it, -2
 * when another process holds it (wait = 0), -1 when there is no lock to be
 * had (a file system without locks: building anyway is safe, only maybe
 * done twice). */
int hs_nat_lock(int dfd, const char *key, int wait);
void hs_nat_unlock(int fd);
/* 1 when another process holds the lock of key now. */
int hs_nat_locked(int dfd, const char *key);

/* Flag i of the compiler (NULL after the last): between $CC's words plus
 * the optimization flag and "-o". */
const char *hs_nat_flag(const hs_nat_cc *cc, size_t i);

/* Tests only: called at named steps ("dir-held", "source-written",
 * "compiled", "sealed", "renamed", "entry-verified", "loading") with the
 * name in play (the directory, a work file, the entry), so a test can play
 * an attacker who renames or replaces the directory between them.  NULL in
 * the program. */
extern void (*hs_nat_test_hook)(const char *step, const char *name);

#endif
