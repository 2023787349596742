/* A datatype's element type, found through its constructors (see element.h). */
#include "type/element.h"

#include <stdbool.h>
#include <stdlib.h>

/* Nesting followed at most. */
#define ELEMENT_DEPTH 16

static MPI_Datatype element(MPI_Datatype type, int depth)
{
    int ni, na, nd, combiner, *ints;
    MPI_Aint *aints;
    MPI_Datatype *types, found = MPI_DATATYPE_NULL;
    bool ok = true;

    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return MPI_DATATYPE_NULL;
    if (combiner == MPI_COMBINER_NAMED)
        return type;
    if (depth >= ELEMENT_DEPTH || nd < 1)
        return MPI_DATATYPE_NULL;
    ints = malloc((size_t)(ni > 0 ? ni : 1) * sizeof(int));
    aints = malloc((size_t)(na > 0 ? na : 1) * sizeof(MPI_Aint));
    types = malloc((size_t)nd * sizeof(MPI_Datatype));
    if (ints == NULL || aints == NULL || types == NULL ||
        PMPI_Type_get_contents(type, ni, na, nd, ints, aints, types) != MPI_SUCCESS) {
        free(ints);
        free(aints);
        free(types);
        return MPI_DATATYPE_NULL;
    }
    for (int i = 0; i < nd; i++) {
        MPI_Datatype e = ok ? element(types[i], depth + 1) : MPI_DATATYPE_NULL;
        int ci, ca, cd, cc;
        if (e == MPI_DATATYPE_NULL || (found != MPI_DATATYPE_NULL && e != found))
            ok = false;
        else
            found = e;
        /* The derived types get_contents returned are the caller's to free. */
        if (PMPI_Type_get_envelope(types[i], &ci, &ca, &cd, &cc) == MPI_SUCCESS &&
            cc != MPI_COMBINER_NAMED)
            PMPI_Type_free(&types[i]);
    }
    free(ints);
    free(aints);
    free(types);
    return ok ? found : MPI_DATATYPE_NULL;
}

MPI_Datatype tj_type_element(MPI_Datatype type)
{
    return type == MPI_DATATYPE_NULL ? MPI_DATATYPE_NULL : element(type, 0);
}
