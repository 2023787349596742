/* SPDX-License-Identifier: BSD-3-Clause */
/* A datatype's element type, found through its constructors (see element.h). */
#include "type/element.h"

#include <stdbool.h>
#include <stdlib.h>

#include "type/contents.h"

/* Nesting followed at most. */
#define ELEMENT_DEPTH 16

static MPI_Datatype element(MPI_Datatype type, int depth)
{
    tj_contents_t *c;
    MPI_Datatype found = MPI_DATATYPE_NULL;
    bool ok = true;

    if ((c = malloc(sizeof(*c))) == NULL)
        return MPI_DATATYPE_NULL;
    if (tj_contents_get(type, c) != TJ_OK) {
        free(c);
        return MPI_DATATYPE_NULL;
    }
    if (c->env.combiner == MPI_COMBINER_NAMED)
        found = type;
    else if (depth >= ELEMENT_DEPTH || c->env.nd < 1 || tj_combiner_named(c->env.combiner))
        ok = false;
    for (MPI_Count i = 0; i < c->env.nd && ok; i++) {
        MPI_Datatype e = element(c->types[i], depth + 1);
        if (e == MPI_DATATYPE_NULL || (found != MPI_DATATYPE_NULL && e != found))
            ok = false;
        else
            found = e;
    }
    tj_contents_free(c);
    free(c);
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
