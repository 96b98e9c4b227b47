/* `holosim columns`: every column a run of the model can write, one per
 * line, the default ones first, from the column tables of src/io (so a
 * column added there shows up here without a change). */
#include "cli.h"

#include <stdio.h>

#include "../io/columns.h"

int hs_cli_columns(int argc, char **argv)
{
    opts o;
    int rc = hs_cli_parse_opts(argc, argv, hs_usage_columns, CMD_COLUMNS, &o);
    if (rc || !o.model || o.npos) {
        hs_cli_free_opts(&o);
        return rc < 0 ? 0 : rc ? rc : hs_cli_usage_error(hs_usage_columns, "%s",
                                                         "columns: expected one MODEL");
    }
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load(o.model, &o.ov, &err);
    hs_cli_free_opts(&o);
    if (!m)
        return hs_cli_fail(&err);
    hs_columns cs;
    size_t ndefault;
    rc = hs_columns_catalog(m, &cs, &ndefault, &err);
    if (rc) {
        hs_cli_fail(&err);
    } else {
        for (size_t i = 0; i < cs.n; i++)
            printf("%s\n", cs.c[i].name);
        if (fflush(stdout) || ferror(stdout)) {
            fprintf(stderr, "holosim: cannot write the column list\n");
            rc = HS_EXIT_USAGE;
        }
    }
    hs_columns_free(&cs);
    hs_model_free(m);
    return rc;
}
