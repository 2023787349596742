/* SPDX-License-Identifier: BSD-3-Clause */
/* A datatype's element type, found through its constructors (see element.h). */
#include "type/element.h"

#include <stdbool.h>
#include <stdlib.h>

#include "type/contents.h"
#include "util/common.h"

/* Nesting followed at most. */
#define ELEMENT_DEPTH 16

/* Calls @p fn with each predefined type @p type is made of (a F90 parameterized type counts as
 * one), through its constructors, until @p fn returns false. False when it did, or when the
 * constructors cannot be followed (too deep, refused by the MPI, out of memory). */
static bool each_element(MPI_Datatype type, int depth,
                         bool (*fn)(MPI_Datatype e, int combiner, void *arg), void *arg)
{
    tj_contents_t *c;
    bool ok = true;

    if (tj_contents_new(type, &c) != TJ_OK)
        return false;
    if (tj_combiner_named(c->env.combiner))
        ok = fn(type, c->env.combiner, arg);
    else if (depth >= ELEMENT_DEPTH || c->env.nd < 1)
        ok = false;
    for (MPI_Count i = 0; i < c->env.nd && ok && !tj_combiner_named(c->env.combiner); i++)
        ok = each_element(c->types[i], depth + 1, fn, arg);
    tj_contents_delete(c);
    return ok;
}

/* The one element met so far: false at the second kind, or a parameterized type. */
static bool same_element(MPI_Datatype e, int combiner, void *arg)
{
    MPI_Datatype *found = arg;

    if (combiner != MPI_COMBINER_NAMED || (*found != MPI_DATATYPE_NULL && *found != e))
        return false;
    *found = e;
    return true;
}

const char *tj_element_ctype(MPI_Datatype e, int *size, int *kind)
{
    /* Each integer type with its fixed-size twin; a 64-bit long is moved as a long long. The
     * table is built on each call: some MPIs' handles are addresses known only at load time. */
    const struct {
        MPI_Datatype type, twin;
        int size;
        const char *ctype;
    } ints[] = {
        {MPI_SIGNED_CHAR, MPI_INT8_T, 1, "signed char"},
        {MPI_UNSIGNED_CHAR, MPI_UINT8_T, 1, "unsigned char"},
        {MPI_SHORT, MPI_INT16_T, 2, "short"},
        {MPI_UNSIGNED_SHORT, MPI_UINT16_T, 2, "unsigned short"},
        {MPI_INT, MPI_INT32_T, 4, "int"},
        {MPI_UNSIGNED, MPI_UINT32_T, 4, "unsigned int"},
        {MPI_LONG_LONG, MPI_INT64_T, 8, "long long"},
        {MPI_UNSIGNED_LONG_LONG, MPI_UINT64_T, 8, "unsigned long long"},
    };

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
    if (sizeof(long) == 8 && e == MPI_LONG)
        e = MPI_LONG_LONG;
    else if (sizeof(long) == 8 && e == MPI_UNSIGNED_LONG)
        e = MPI_UNSIGNED_LONG_LONG;
    for (size_t i = 0; i < TJ_ARRAY_SIZE(ints); i++)
        if (e == ints[i].type || e == ints[i].twin) {
            *size = ints[i].size;
            return ints[i].ctype;
        }
    return NULL;
}

MPI_Datatype tj_type_element(MPI_Datatype type)
{
    MPI_Datatype found = MPI_DATATYPE_NULL;

    if (type == MPI_DATATYPE_NULL || !each_element(type, 0, same_element, &found))
        return MPI_DATATYPE_NULL;
    return found;
}

/* Whether @p e is made of two scalars (the complex types, and the pair types of MPI_MINLOC and
 * MPI_MAXLOC): aligned to a part, not to the whole. */
static bool two_parts(MPI_Datatype e, int combiner)
{
    if (combiner == MPI_COMBINER_F90_COMPLEX)
        return true;
    if (combiner != MPI_COMBINER_NAMED)
        return false;
    return e == MPI_C_FLOAT_COMPLEX || e == MPI_C_DOUBLE_COMPLEX ||
           e == MPI_C_LONG_DOUBLE_COMPLEX || e == MPI_COMPLEX || e == MPI_DOUBLE_COMPLEX ||
#ifdef MPI_CXX_FLOAT_COMPLEX
           e == MPI_CXX_FLOAT_COMPLEX || e == MPI_CXX_DOUBLE_COMPLEX ||
           e == MPI_CXX_LONG_DOUBLE_COMPLEX ||
#endif
           e == MPI_2INT || e == MPI_FLOAT_INT || e == MPI_DOUBLE_INT || e == MPI_LONG_INT ||
           e == MPI_SHORT_INT || e == MPI_LONG_DOUBLE_INT || e == MPI_2REAL ||
           e == MPI_2DOUBLE_PRECISION || e == MPI_2INTEGER;
}

/* The smallest alignment of the elements met so far. */
static bool least_alignment(MPI_Datatype e, int combiner, void *arg)
{
    int *align = arg, size, a = 8;

    if (PMPI_Type_size(e, &size) != MPI_SUCCESS || size <= 0)
        a = 1;
    else if (two_parts(e, combiner))
        size /= 2;
    while (a > 1 && size % a != 0)
        a /= 2;
    if (a < *align)
        *align = a;
    return true;
}

int tj_type_alignment(MPI_Datatype type)
{
    int align = 8;

    if (type == MPI_DATATYPE_NULL || !each_element(type, 0, least_alignment, &align))
        return 1;
    return align;
}
