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

const char *tj_element_ctype(MPI_Datatype e, int *size, int *kind)
{
    *kind = TJ_ELEMENT_INTEGER;
    if (e == MPI_FLOAT || e == MPI_DOUBLE) {
        *kind = TJ_ELEMENT_FLOAT;
        *size = e == MPI_FLOAT ? 4 : 8;
        return e == MPI_FLOAT ? "float" : "double";
    }
    if (e == MPI_BYTE) {
        *kind = TJ_ELEMENT_BYTE;
        *size = 1;
        return "unsigned char";
    }
    if (e == MPI_SIGNED_CHAR || e == MPI_INT8_T)
        return *size = 1, "signed char";
    if (e == MPI_UNSIGNED_CHAR || e == MPI_UINT8_T)
        return *size = 1, "unsigned char";
    if (e == MPI_SHORT || e == MPI_INT16_T)
        return *size = 2, "short";
    if (e == MPI_UNSIGNED_SHORT || e == MPI_UINT16_T)
        return *size = 2, "unsigned short";
    if (e == MPI_INT || e == MPI_INT32_T)
        return *size = 4, "int";
    if (e == MPI_UNSIGNED || e == MPI_UINT32_T)
        return *size = 4, "unsigned int";
    if (e == MPI_LONG_LONG || e == MPI_INT64_T || (e == MPI_LONG && sizeof(long) == 8))
        return *size = 8, "long long";
    if (e == MPI_UNSIGNED_LONG_LONG || e == MPI_UINT64_T ||
        (e == MPI_UNSIGNED_LONG && sizeof(long) == 8))
        return *size = 8, "unsigned long long";
    return NULL;
}

MPI_Datatype tj_type_element(MPI_Datatype type)
{
    return type == MPI_DATATYPE_NULL ? MPI_DATATYPE_NULL : element(type, 0);
}
