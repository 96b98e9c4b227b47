/* The CSV columns: which exist for a model (holosim(1), OUTPUT), the
 * default set, `--columns` selection, header and row writing. */
#ifndef HS_COLUMNS_H
#define HS_COLUMNS_H

#include "../model/model.h"
#include "../util/error.h"
#include "out.h"

typedef hs_qty hs_col_kind;    /* the quantity of model.h a column shows */

typedef struct hs_col {
    hs_col_kind kind;
    size_t idx;
    char *name;
} hs_col;

typedef struct hs_columns {
    size_t n;
    hs_col *c;
} hs_columns;

/* Everything one row can show, filled by the integrator. */
typedef struct hs_row {
    double t;
    const double *q, *v, *a, *Lambda;   /* [n], [n], [n], [k] */
    const double *aux;                  /* model->prog_aux outputs */
    const double *out;                  /* [nout] the model's `outputs` (prog_out) */
    const double *Gz;                   /* [nnz] G_q non-zeros (model->gq_*) */
    double T;                           /* kinetic energy in the frame of the
                                         * model's mass (model.h): E = T + U */
    double H;                           /* Jacobi integral q'.dL/dq' - L */
    double W_R, W_nc, W_t, E0;
    int bare;                           /* only t, q, v are set (the columns
                                         * show nothing else; no monitors) */
} hs_row;

/* Select columns: list = NULL for the default set; otherwise a comma list
 * of names (spaces around a name ignored), where `default` and `all` stand
 * for those sets and a name with * ? or [ is a glob (fnmatch) standing for
 * every column it matches, in the order of `all`.  An unknown name or a
 * glob that matches nothing: HS_EXIT_USAGE with the valid names in the
 * message. */
int hs_columns_select(const hs_model *m, const char *list, hs_columns *out,
                      hs_error *err);
/* Every column a run can write (`holosim columns`): the default ones in
 * their order, then each other one in the order of `all`; *ndefault = the
 * number of default ones. */
int hs_columns_catalog(const hs_model *m, hs_columns *out, size_t *ndefault,
                       hs_error *err);
void hs_columns_free(hs_columns *c);
void hs_columns_header(const hs_columns *c, hs_out *o);
/* Write one row.  Every value must be finite, and so must energy_balance
 * and power_residual (the run's monitors, shown or not): otherwise nothing
 * of the row is written and the error (HS_EXIT_NUMERIC) names the column,
 * its value and the time. */
int hs_columns_row(const hs_model *m, const hs_columns *c, const hs_row *r, hs_out *o,
                   hs_error *err);
/* The events file (--events): the header with a first column `event`,
 * and a row that starts with the event's name (an identifier, or
 * quoted as RFC 4180 says when it is not). */
void hs_columns_header_events(const hs_columns *c, hs_out *o);
int hs_columns_event_row(const hs_model *m, const hs_columns *c, const hs_row *r,
                         const char *name, hs_out *o, hs_error *err);
/* Value of one column (energy_balance, power residual ...). */
double hs_column_value(const hs_model *m, const hs_col *c, const hs_row *r);

#endif
