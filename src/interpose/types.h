/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Type_commit, MPI_Type_free and MPI_Type_dup: the record typejit keeps of each type, which
 * every wrapper with a datatype argument looks up. */
#ifndef TJ_INTERPOSE_TYPES_H
#define TJ_INTERPOSE_TYPES_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "type/table.h"
#include "util/common.h"

/* The record of @p type, borrowed for the calling MPI call (tj_table_return gives it back): made
 * on first use for named types (which are never committed); NULL for a type typejit has no
 * record of. */
const tj_type_info_t *tj_interpose_record_named(MPI_Datatype type);
static inline const tj_type_info_t *tj_interpose_lookup(MPI_Datatype type)
{
    const tj_type_info_t *found = tj_table_get(type);
    return TJ_LIKELY(found != NULL) ? found : tj_interpose_record_named(type);
}

/* Translate @p type and record it (MPI_Type_commit). */
void tj_interpose_record(MPI_Datatype type);

/* The one-line description of a record, as tj_type_describe writes it. */
void tj_interpose_describe(const tj_type_info_t *info, char *buf, size_t len);

#endif /* TJ_INTERPOSE_TYPES_H */
