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
 * (tj_table_claim), builds the layout holding no lock and settles it in the type table; any
 * other waits for that and takes the record. @p info, a copy of the
 * type's record, is replaced by the record as it is then: a layout, a strided block (a layout
 * that is one), or neither (the system MPI's; also when the build failed), never pending. Like a
 * copy from tj_table_get it holds no reference of its own. */
void tj_lazy_build(MPI_Datatype type, tj_type_info_t *info);

/* tj_lazy_build when @p info is pending; nothing else (one load). For a call that has found a
 * device buffer: host calls never build a layout. */
static inline void tj_lazy_resolve(MPI_Datatype type, tj_type_info_t *info)
{
    if (info->pending)
        tj_lazy_build(type, info);
}

/* @p info itself (NULL too), or, when it is pending, @p own: a copy of it resolved. For callers
 * that hold the record as const. */
static inline const tj_type_info_t *tj_lazy_info(MPI_Datatype type, const tj_type_info_t *info,
                                                 tj_type_info_t *own)
{
    if (info == NULL || !info->pending)
        return info;
    *own = *info;
    tj_lazy_build(type, own);
    return own;
}

#endif /* TJ_TYPE_LAZY_H */
