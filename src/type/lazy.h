/* SPDX-License-Identifier: BSD-3-Clause */
/* Layouts built at a type's first device call. A committed type that is not one strided block is
 * recorded as pending (tj_type_info_t.pending); the first call that moves it on a device, or
 * asks for its description, builds its layout (type/flatten.h) and records it in the type table
 * for every later call. A program that never moves the type on a device pays nothing for it,
 * however many members it has. */
#ifndef TJ_TYPE_LAZY_H
#define TJ_TYPE_LAZY_H

#include <mpi.h>

#include "type/table.h"

/* Build the layout of the pending type @p type: the first thread to ask claims the record
 * (tj_table_claim), builds the layout holding no lock and replaces it in the type table; any
 * other waits for that and takes the record. Returns the record as it is then, borrowed besides
 * @p info (which stays valid): a layout, a strided block (a layout that is one), or neither (the
 * system MPI's; also when the build failed). Where the type was freed meanwhile, @p info itself,
 * still pending: it gets no kernel. */
const tj_type_info_t *tj_lazy_build(MPI_Datatype type, const tj_type_info_t *info);

/* tj_lazy_build when @p info is pending; else @p info (one load). For a call that has found a
 * device buffer: host calls never build a layout. NULL stays NULL. What it returns goes back
 * through tj_lazy_return before the caller returns. */
static inline const tj_type_info_t *tj_lazy_resolve(MPI_Datatype type, const tj_type_info_t *info)
{
    return info != NULL && info->pending ? tj_lazy_build(type, info) : info;
}

/* Give back what tj_lazy_resolve(type, @p info) returned. */
static inline void tj_lazy_return(const tj_type_info_t *info, const tj_type_info_t *resolved)
{
    if (resolved != info)
        tj_table_return(resolved);
}

#endif /* TJ_TYPE_LAZY_H */
