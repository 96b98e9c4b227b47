/* Errors as values: the first error recorded in a context is kept and
 * carried up to main, which alone prints it and picks the exit code.
 *
 * Printed form (the compiler convention):
 *     FILE:LINE:COLUMN: error: MESSAGE
 *         the offending source line
 *         ^
 * FILE and the position are omitted when unknown.  Lines and columns are
 * 1-based; columns count bytes. */
#ifndef HS_ERROR_H
#define HS_ERROR_H

#include <stdio.h>

/* Exit codes of the program (holosim(1), EXIT STATUS), each with its text
 * in hs_exit_codes: the one table; the help text and the manual are
 * checked against it (tests/check_error.c, tests/cli_docs.sh). */
enum {
    HS_OK = 0,
    HS_EXIT_USAGE = 1,     /* bad command line, unwritable output */
    HS_EXIT_MODEL = 2,     /* model or expression error */
    HS_EXIT_INCONSISTENT = 3, /* initial data rejected / projection failed */
    HS_EXIT_NUMERIC = 4,   /* numerical failure during a run */
    HS_EXIT_NOMEM = 5,     /* out of memory, whatever the layer */
    HS_EXIT_SIGHUP = 129,  /* 128 + the signal: a run stopped by the caller */
    HS_EXIT_INTERRUPT = 130, /* SIGINT, or a library caller's stop flag */
    HS_EXIT_SIGTERM = 143
};

typedef struct hs_exit_code {
    int code;
    const char *text;      /* "model error" */
} hs_exit_code;

/* Every exit code, in increasing order, ended by { -1, NULL }. */
extern const hs_exit_code hs_exit_codes[];

/* The text of an exit code ("unknown exit code" for one not in the table). */
const char *hs_exit_text(int code);

/* How the caller names the options a message may point to: the command
 * line's ("--set", "--t-end") or the library's (the names of its fields:
 * "set", "t_end").  The core's messages take the name from the table the
 * caller handed it (hs_overrides.names, hs_native_opts.names), never a
 * flag of their own. */
typedef enum hs_opt {
    HS_OPT_SET,          /* parameter overrides NAME=EXPR */
    HS_OPT_INPUT,        /* input signals NAME=SRC */
    HS_OPT_STOP_WHEN,    /* stop conditions */
    HS_OPT_STEP,         /* the fixed step */
    HS_OPT_T_END,        /* the end time */
    HS_OPT_OUTPUT_MODE,  /* rows at exact steps or interpolated */
    HS_OPT_COLUMNS,      /* the column list */
    HS_OPT_INPUTS,       /* linearize: the inputs chosen */
    HS_OPT_OUTPUTS,      /* linearize: the outputs chosen */
    HS_OPT_NATIVE_ALWAYS, /* build the native kernels whatever the cache says */
    HS_OPT_SENSITIVITY,  /* the parameters of the sensitivities */
    HS_OPT_MODE_COUNT,   /* modes: how many of the lowest */
    HS_OPT_FINAL,        /* the columns whose last values the summary shows */
    HS_OPT_COUNT
} hs_opt;

typedef struct hs_optnames {
    const char *name[HS_OPT_COUNT];
} hs_optnames;

/* The library's names (the fields of include/holosim.h). */
extern const hs_optnames hs_optnames_library;

/* names' spelling of o (names NULL: the library's). */
const char *hs_optname(const hs_optnames *names, hs_opt o);

typedef struct hs_error {
    int code;              /* exit code; 0 while no error is recorded */
    char file[512];        /* "" when the error has no file */
    int line, column;      /* 1-based; 0 when unknown */
    long offset;           /* byte offset inside the parsed text, -1 if none */
    char msg[1024];
    char source[512];      /* the offending source line ("" = none) */
} hs_error;

/* An empty error (code 0, no position). */
void hs_error_init(hs_error *e);

/* Record an error unless one is already recorded; returns e->code after
 * the call (so `return hs_error_set(...)` propagates the first error).
 * Clears position fields of a new error. */
int hs_error_set(hs_error *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same, with a position and the source line it refers to (line may be
 * NULL; only its first line is kept). */
int hs_error_at(hs_error *e, int code, const char *file, int line, int column,
                const char *source_line, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* The one out-of-memory path: records "out of memory" with HS_EXIT_NOMEM
 * (unless an error is already recorded); returns e->code. */
int hs_error_nomem(hs_error *e);

/* Add context to the recorded error: fmt's text appended to the message
 * (cut at the message's capacity).  No-op without a recorded error.
 * Returns e->code. */
int hs_error_append(hs_error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Change the exit code of a recorded error (message and position kept);
 * out of memory stays out of memory.  Returns e->code. */
int hs_error_recode(hs_error *e, int code);

/* Carry an error recorded in another context (a work area, a nested
 * parse) into e: unless e already holds one (first kept, left as it is),
 * from is copied and recoded to code when code != 0.  Returns e->code. */
int hs_error_adopt(hs_error *e, const hs_error *from, int code);

/* Store the source line of `text` that contains byte `offset`, and set
 * line/column of e relative to text (1-based), plus e->offset. */
void hs_error_locate(hs_error *e, const char *text, size_t len, size_t offset);

/* Print as described above. */
void hs_error_print(const hs_error *e, FILE *f);

/* The same with another word than "error" (a warning: the run goes on). */
void hs_error_print_as(const hs_error *e, FILE *f, const char *kind);

#endif
