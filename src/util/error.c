#include "error.h"

#include <stdarg.h>
#include <string.h>

void hs_error_init(hs_error *e)
{
    memset(e, 0, sizeof *e);
    e->offset = -1;
}

int hs_error_set(hs_error *e, int code, const char *fmt, ...)
{
    if (e->code)
        return e->code;
    hs_error_init(e);
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

int hs_error_at(hs_error *e, int code, const char *file, int line, int column,
                const char *source_line, const char *fmt, ...)
{
    if (e->code)
        return e->code;
    hs_error_init(e);
    e->code = code;
    if (file)
        snprintf(e->file, sizeof e->file, "%s", file);
    e->line = line;
    e->column = column;
    size_t n = 0;
    if (source_line)
        while (source_line[n] && source_line[n] != '\n' && source_line[n] != '\r' &&
               n + 1 < sizeof e->source)
            n++;
    if (source_line)
        memcpy(e->source, source_line, n);
    e->source[n] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

int hs_error_nomem(hs_error *e)
{
    return hs_error_set(e, HS_EXIT_NOMEM, "out of memory");
}

int hs_error_append(hs_error *e, const char *fmt, ...)
{
    if (!e->code)
        return 0;
    size_t len = strlen(e->msg);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg + len, sizeof e->msg - len, fmt, ap);
    va_end(ap);
    return e->code;
}

int hs_error_recode(hs_error *e, int code)
{
    if (e->code && e->code != HS_EXIT_NOMEM)
        e->code = code;
    return e->code;
}

int hs_error_adopt(hs_error *e, const hs_error *from, int code)
{
    if (e->code || !from->code)
        return e->code;
    *e = *from;
    return code ? hs_error_recode(e, code) : e->code;
}

void hs_error_locate(hs_error *e, const char *text, size_t len, size_t offset)
{
    if (offset > len)
        offset = len;
    int line = 1;
    size_t start = 0;
    for (size_t i = 0; i < offset; i++)
        if (text[i] == '\n') {
            line++;
            start = i + 1;
        }
    e->line = line;
    e->column = (int)(offset - start) + 1;
    e->offset = (long)offset;
    size_t n = 0;
    while (start + n < len && text[start + n] != '\n' && text[start + n] != '\r'
           && n + 1 < sizeof e->source)
        n++;
    memcpy(e->source, text + start, n);
    e->source[n] = '\0';
}

void hs_error_print(const hs_error *e, FILE *f)
{
    hs_error_print_as(e, f, "error");
}

void hs_error_print_as(const hs_error *e, FILE *f, const char *kind)
{
    if (e->file[0])
        fprintf(f, "%s:", e->file);
    if (e->line > 0)
        fprintf(f, "%d:%d:", e->line, e->column);
    fprintf(f, "%s%s: %s\n", (e->file[0] || e->line > 0) ? " " : "", kind, e->msg);
    if (e->source[0] && e->column > 0) {   /* a file line, or a command-line text */
        fprintf(f, "    %s\n    ", e->source);
        /* keep tabs so the caret lines up under tab-indented text; one
         * space per character, not per byte (UTF-8 continuation bytes
         * 10xxxxxx take no column on a terminal) */
        for (int i = 0; i + 1 < e->column && e->source[i]; i++)
            if (((unsigned char)e->source[i] & 0xC0) != 0x80)
                fputc(e->source[i] == '\t' ? '\t' : ' ', f);
        fputs("^\n", f);
    }
}

const hs_exit_code hs_exit_codes[] = {
    { HS_OK, "success" },
    { HS_EXIT_USAGE, "usage or output error" },
    { HS_EXIT_MODEL, "model error" },
    { HS_EXIT_INCONSISTENT, "inconsistent initial data" },
    { HS_EXIT_NUMERIC, "numerical failure" },
    { HS_EXIT_NOMEM, "out of memory" },
    { HS_EXIT_SIGHUP, "interrupted by SIGHUP" },
    { HS_EXIT_INTERRUPT, "interrupted by SIGINT" },
    { HS_EXIT_SIGTERM, "interrupted by SIGTERM" },
    { -1, NULL },
};

const char *hs_exit_text(int code)
{
    for (const hs_exit_code *e = hs_exit_codes; e->text; e++)
        if (e->code == code)
            return e->text;
    return "unknown exit code";
}

const hs_optnames hs_optnames_library = { {
    [HS_OPT_SET] = "set",
    [HS_OPT_INPUT] = "input",
    [HS_OPT_STOP_WHEN] = "stop_when",
    [HS_OPT_STEP] = "step",
    [HS_OPT_T_END] = "t_end",
    [HS_OPT_OUTPUT_MODE] = "output_mode",
    [HS_OPT_COLUMNS] = "columns",
    [HS_OPT_INPUTS] = "inputs",
    [HS_OPT_OUTPUTS] = "outputs",
    [HS_OPT_NATIVE_ALWAYS] = "native policy 'always'",
    [HS_OPT_SENSITIVITY] = "sensitivity",
    [HS_OPT_MODE_COUNT] = "count",
    [HS_OPT_FINAL] = "final",
} };

const char *hs_optname(const hs_optnames *names, hs_opt o)
{
    if (o < 0 || o >= HS_OPT_COUNT)
        return "?";
    const char *s = names ? names->name[o] : NULL;
    return s ? s : hs_optnames_library.name[o];
}
