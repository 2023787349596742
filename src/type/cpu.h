/* The CPU packer: packs and unpacks host buffers straight from a strided block. */
#ifndef TJ_TYPE_CPU_H
#define TJ_TYPE_CPU_H

#include <stdint.h>

#include "type/block.h"
#include "type/layout.h"

/* Pack @p count objects of @p block starting at @p typed into @p packed (count * size bytes),
 * in typemap order. */
void tj_cpu_pack(const tj_block_t *block, const void *typed, int64_t count, void *packed);

/* Unpack @p count objects from @p packed into the layout at @p typed. Elements are written in
 * typemap order, so where the layout overlaps itself the last write wins, as in MPI_Unpack. */
void tj_cpu_unpack(const tj_block_t *block, const void *packed, int64_t count, void *typed);

/* The same for a finished layout: its parts in typemap order. */
void tj_cpu_pack_layout(const tj_layout_t *l, const void *typed, int64_t count, void *packed);
void tj_cpu_unpack_layout(const tj_layout_t *l, const void *packed, int64_t count, void *typed);

#endif /* TJ_TYPE_CPU_H */
