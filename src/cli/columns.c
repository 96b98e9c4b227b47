/* `holosim columns`: every column a run of the model can write, one per
 * line, the default ones first, from the column tables of src/io (so a
 * column added there shows up here without a change). */
#include "cli.h"

#include <stdio.h>

#include "../io/columns.h"

int hs_cli_columns(int argc, char **argv)
{
    int rc;
    hs_model *m = hs_cli_model(argc, argv, hs_usage_columns, CMD_COLUMNS, "columns", &rc);
    if (!m)
        return rc;
    hs_error err;
    hs_error_init(&err);
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
