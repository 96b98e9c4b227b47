/* Force elements, dissipation, rigid bodies and D(...) (family.h). */
#include "family.h"

int hs_bd_uses(fam *F, int root)
{
    (void)F;
    (void)root;
    return 0;
}

int hs_bd_expand(fam *F, int root)
{
    (void)F;
    (void)root;
    return 0;
}
