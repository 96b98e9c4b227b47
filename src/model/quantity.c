/* The quantities a model's names make (model.h): the one table. */
#include "model.h"

#include <stdio.h>
#include <string.h>

#define COL HS_QTY_COLUMN
#define DEF (HS_QTY_COLUMN | HS_QTY_DEFAULT)

/* In the order of the columns of `--columns all`. */
const hs_quantity hs_quantities[HS_NQUANTITIES] = {
    { HS_QTY_T, HS_PER_MODEL, "t", "", DEF | HS_QTY_STATE, "the time" },
    { HS_QTY_Q, HS_PER_COORD, "", "", DEF | HS_QTY_STATE, "coordinate" },
    { HS_QTY_V, HS_PER_COORD, "", "'", DEF | HS_QTY_STATE, "the velocity of coordinate" },
    { HS_QTY_A, HS_PER_COORD, "", "''", COL | HS_QTY_DERIVED,
      "the acceleration of coordinate" },
    { HS_QTY_LAMBDA, HS_PER_CONSTRAINT, "lambda_", "", DEF | HS_QTY_DERIVED,
      "the multiplier of constraint" },
    { HS_QTY_G, HS_PER_CONSTRAINT, "G_", "", DEF, "the residual of constraint" },
    { HS_QTY_GDOT, HS_PER_CONSTRAINT, "Gdot_", "", DEF,
      "the velocity residual of constraint" },
    { HS_QTY_CLOSED, HS_PER_CONTACT, "closed_", "", DEF, "the state (1 closed) of contact" },
    { HS_QTY_E, HS_PER_MODEL, "E", "", DEF | HS_QTY_DERIVED, "the total energy" },
    { HS_QTY_TKIN, HS_PER_MODEL, "T", "", COL | HS_QTY_DERIVED, "the kinetic energy" },
    { HS_QTY_U, HS_PER_MODEL, "U", "", COL | HS_QTY_DERIVED, "the potential" },
    { HS_QTY_H, HS_PER_MODEL, "H", "", COL | HS_QTY_DERIVED, "the Jacobi integral" },
    { HS_QTY_R, HS_PER_COORD, "R_", "", COL | HS_QTY_DERIVED,
      "the reaction on coordinate" },
    { HS_QTY_PR, HS_PER_MODEL, "P_R", "", COL, "the power of the reactions" },
    { HS_QTY_PRES, HS_PER_MODEL, "power_residual", "", COL,
      "the residual of the power identity" },
    { HS_QTY_WR, HS_PER_MODEL, "W_R", "", COL, "the work of the reactions" },
    { HS_QTY_WNC, HS_PER_MODEL, "W_nc", "", COL,
      "the work of the non-conservative forces" },
    { HS_QTY_PNC, HS_PER_MODEL, "P_nc", "", COL,
      "the power of the non-conservative forces" },
    { HS_QTY_WT, HS_PER_MODEL, "W_t", "", COL,
      "the work of the time dependence" },
    { HS_QTY_EBAL, HS_PER_MODEL, "energy_balance", "", COL, "the energy balance" },
    { HS_QTY_EIMP, HS_PER_CONTACTS, "E_impact", "", DEF,
      "the kinetic energy lost in impacts" },
    { HS_QTY_OUT, HS_PER_OUTPUT, "", "", DEF, "output" },
    { HS_QTY_AMB, HS_PER_AMB, "", "", COL, "ambient name" },
    { HS_QTY_AMBV, HS_PER_AMB, "", "'", COL, "the velocity of ambient name" },
    /* the first column of the events file (--events), not of the rows */
    { HS_QTY_EVENT, HS_PER_MODEL, "event", "", 0, "the events file's column" },
};

size_t hs_quantity_count(const hs_model *m, const hs_quantity *q)
{
    switch (q->per) {
    case HS_PER_MODEL: return 1;
    case HS_PER_COORD: return m->n;
    case HS_PER_CONSTRAINT: return m->k;
    case HS_PER_OUTPUT: return m->nout;
    case HS_PER_AMB: return m->namb;
    case HS_PER_CONTACT: return m->ncontact;
    case HS_PER_CONTACTS: return m->ncontact ? 1 : 0;
    }
    return 0;
}

const char *hs_quantity_base(const hs_model *m, const hs_quantity *q, size_t i)
{
    switch (q->per) {
    case HS_PER_MODEL: return NULL;
    case HS_PER_COORD: return m->qname[i];
    case HS_PER_CONSTRAINT: return m->cname[i];
    case HS_PER_OUTPUT: return m->outname[i];
    case HS_PER_AMB: return m->ambname[i];
    case HS_PER_CONTACT: return m->cname[m->contact0 + i];
    case HS_PER_CONTACTS: return NULL;
    }
    return NULL;
}

size_t hs_quantity_name(const hs_model *m, const hs_quantity *q, size_t i, char *buf,
                        size_t size)
{
    const char *b = hs_quantity_base(m, q, i);
    int len = snprintf(buf, size, "%s%s%s", q->prefix, b ? b : "", q->suffix);
    return len < 0 ? 0 : (size_t)len;
}

const hs_quantity *hs_quantity_model(const char *s, size_t len)
{
    for (size_t e = 0; e < HS_NQUANTITIES; e++) {
        const hs_quantity *q = &hs_quantities[e];
        if (q->per == HS_PER_MODEL && strlen(q->prefix) == len &&
            memcmp(q->prefix, s, len) == 0)
            return q;
    }
    return NULL;
}
