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

/* A predefined type's entry: its name without the prefix, and the handle of that name. */
/* clang-format off */
#define NAMED(_name) {#_name, MPI_##_name}
/* clang-format on */

bool tj_typedesc_lookup_named(const char *name, MPI_Datatype *type)
{
    const struct {
        const char *name;
        MPI_Datatype type;
    } named[] = {
        NAMED(BYTE),
        NAMED(CHAR),
        NAMED(SIGNED_CHAR),
        NAMED(UNSIGNED_CHAR),
        NAMED(SHORT),
        NAMED(UNSIGNED_SHORT),
        NAMED(INT),
        NAMED(UNSIGNED),
        NAMED(LONG),
        NAMED(UNSIGNED_LONG),
        NAMED(LONG_LONG),
        NAMED(LONG_LONG_INT),
        NAMED(UNSIGNED_LONG_LONG),
        NAMED(FLOAT),
        NAMED(DOUBLE),
        NAMED(LONG_DOUBLE),
        NAMED(INT8_T),
        NAMED(INT16_T),
        NAMED(INT32_T),
        NAMED(INT64_T),
        NAMED(UINT8_T),
        NAMED(UINT16_T),
        NAMED(UINT32_T),
        NAMED(UINT64_T),
        NAMED(C_BOOL),
        NAMED(C_COMPLEX),
        NAMED(C_FLOAT_COMPLEX),
        NAMED(C_DOUBLE_COMPLEX),
        NAMED(C_LONG_DOUBLE_COMPLEX),
        NAMED(FLOAT_INT),
        NAMED(DOUBLE_INT),
        NAMED(LONG_INT),
        NAMED(2INT),
        NAMED(SHORT_INT),
        NAMED(LONG_DOUBLE_INT),
        NAMED(PACKED),
        NAMED(WCHAR),
        NAMED(AINT),
        NAMED(OFFSET),
        NAMED(COUNT),
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
