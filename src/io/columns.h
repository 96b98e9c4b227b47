/* The columns of a run: which exist for a model (holosim(1), OUTPUT), the
 * default set, `--columns` selection, and a row's values picked from what
 * the integrator and dynamics computed (the policy every output format
 * shares: never inf or nan).  Writing them is a sink's job (sink.h). */
#ifndef HS_COLUMNS_H
#define HS_COLUMNS_H

#include "../model/model.h"
#include "../util/error.h"

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

/* Everything one row can show, filled by the integrator from dynamics'
 * evaluations at the row's state (the monitors computed there, by
 * hs_dyn_balance and hs_dyn_power_residual).  Fill it with designated
 * initializers: a field left out is 0 or NULL. */
typedef struct hs_row {
    double t;
    const double *q, *v, *a, *Lambda;   /* [n], [n], [n], [k] */
    const double *aux;                  /* model->prog_aux outputs */
    const double *out;                  /* [nout] the model's `outputs` (prog_out) */
    const double *Gz;                   /* [nnz] G_q non-zeros (model->gq_*) */
    const double *W;                    /* [3] W_R, W_nc, W_t */
    double T;                           /* kinetic energy in the frame of the
                                         * model's mass (model.h) */
    double E;                           /* T + U */
    double H;                           /* Jacobi integral q'.dL/dq' - L */
    double ebal, pres;                  /* the monitors: energy_balance,
                                         * power_residual */
    const unsigned char *released;      /* [k] the constraints let go (NULL: none;
                                         * an open contact is let go) */
    double E_impact;                    /* the kinetic energy lost in impacts */
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
/* The row's values, one per column, into x[c->n].  Every value must be
 * finite, and so must energy_balance and power_residual (the run's
 * monitors, shown or not; not checked in a bare row): otherwise the error
 * (HS_EXIT_NUMERIC) names the column, its value and the time, and says
 * whether rows were written before (first: this is the first row). */
int hs_columns_values(const hs_model *m, const hs_columns *c, const hs_row *r, int first,
                      double *x, hs_error *err);
/* Value of one column. */
double hs_column_value(const hs_model *m, const hs_col *c, const hs_row *r);

#endif
