/* SPDX-License-Identifier: BSD-3-Clause */
/* The names of a type description: the predefined types and the constructors. */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "typedesc_internal.h"
#include "util/common.h"

const char *const tj_typedesc_ctor_names[CT_COUNT] = {
    "contiguous",    "vector",         "hvector", "subarray", "resized", "dup",
    "indexed_block", "hindexed_block", "indexed", "hindexed", "struct",  "darray",
};

bool tj_typedesc_lookup_named(const char *name, MPI_Datatype *type)
{
    const struct {
        const char *name;
        MPI_Datatype type;
    } named[] = {
        {"BYTE", MPI_BYTE},
        {"CHAR", MPI_CHAR},
        {"SIGNED_CHAR", MPI_SIGNED_CHAR},
        {"UNSIGNED_CHAR", MPI_UNSIGNED_CHAR},
        {"SHORT", MPI_SHORT},
        {"UNSIGNED_SHORT", MPI_UNSIGNED_SHORT},
        {"INT", MPI_INT},
        {"UNSIGNED", MPI_UNSIGNED},
        {"LONG", MPI_LONG},
        {"UNSIGNED_LONG", MPI_UNSIGNED_LONG},
        {"LONG_LONG", MPI_LONG_LONG},
        {"LONG_LONG_INT", MPI_LONG_LONG_INT},
        {"UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG},
        {"FLOAT", MPI_FLOAT},
        {"DOUBLE", MPI_DOUBLE},
        {"LONG_DOUBLE", MPI_LONG_DOUBLE},
        {"INT8_T", MPI_INT8_T},
        {"INT16_T", MPI_INT16_T},
        {"INT32_T", MPI_INT32_T},
        {"INT64_T", MPI_INT64_T},
        {"UINT8_T", MPI_UINT8_T},
        {"UINT16_T", MPI_UINT16_T},
        {"UINT32_T", MPI_UINT32_T},
        {"UINT64_T", MPI_UINT64_T},
        {"C_BOOL", MPI_C_BOOL},
        {"C_COMPLEX", MPI_C_COMPLEX},
        {"C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX},
        {"C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX},
        {"C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX},
        {"FLOAT_INT", MPI_FLOAT_INT},
        {"DOUBLE_INT", MPI_DOUBLE_INT},
        {"LONG_INT", MPI_LONG_INT},
        {"2INT", MPI_2INT},
        {"SHORT_INT", MPI_SHORT_INT},
        {"LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT},
        {"PACKED", MPI_PACKED},
        {"WCHAR", MPI_WCHAR},
        {"AINT", MPI_AINT},
        {"OFFSET", MPI_OFFSET},
        {"COUNT", MPI_COUNT},
    };

    name = tj_typedesc_strip_prefix(name, "MPI_");
    for (size_t i = 0; i < TJ_ARRAY_SIZE(named); i++)
        if (strcmp(name, named[i].name) == 0 && named[i].type != MPI_DATATYPE_NULL) {
            *type = named[i].type;
            return true;
        }
    return false;
}

int tj_typedesc_lookup_ctor(const char *name)
{
    name = tj_typedesc_strip_prefix(tj_typedesc_strip_prefix(name, "MPI_TYPE_"), "CREATE_");
    for (int i = 0; i < CT_COUNT; i++)
        if (strcasecmp(name, tj_typedesc_ctor_names[i]) == 0)
            return i;
    return -1;
}

void tj_typedesc_ctor_list(char *buf, size_t len)
{
    size_t at = 0;

    buf[0] = '\0';
    for (int i = 0; i < CT_COUNT && at < len; i++) {
        int n = snprintf(buf + at, len - at, "%s%s",
                         i == 0              ? ""
                         : i + 1 == CT_COUNT ? " or "
                                             : ", ",
                         tj_typedesc_ctor_names[i]);
        if (n < 0)
            break;
        at += (size_t)n;
    }
}
