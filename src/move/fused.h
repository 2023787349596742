/* SPDX-License-Identifier: BSD-3-Clause */
/* Fused moves: several strided datatypes of one device buffer packed (or unpacked) by one
 * kernel launch (templates/fused.cu), for the sends a Startall starts together and the slices
 * of a collective. */
#ifndef TJ_MOVE_FUSED_H
#define TJ_MOVE_FUSED_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/cuda.h"
#include "jit/gen.h"
#include "gpu/batch.h"
#include "type/table.h"

/* One member: @p count objects of the strided type @p info, object 0 at byte @p typed from the
 * typed buffer, its packed bytes at byte @p packed from the packed base (either may be
 * negative). */
typedef struct {
    const tj_type_info_t *info;
    int64_t typed, packed, count;
} tj_fused_item_t;

/* Move the @p n items between the device (or managed) buffer @p typed of context @p ctx and the
 * packed side at device address @p packed (device staging, or the mapping of pinned staging, in
 * that context) with one fused kernel launch, and wait for it, or leave the wait to @p batch
 * (as tj_move says). @p where: what the caller's query of the buffer found in this call (the
 * set's first member's allocation), or NULL: asked here. False, with nothing moved, when
 * the set does not fit: TYPEJIT_JIT=off, fewer than two items or more than TJ_FUSED_MAX, a type
 * that is not strided, a count below 1, typed bytes outside the buffer's allocation or not in
 * @p ctx, an unpack whose items could write a byte twice, no kernel; the caller then moves the
 * items one by one. A launch or synchronisation that fails also returns false (warned once):
 * both directions may be redone, packs and disjoint unpacks being idempotent. */
bool tj_fused_move(const char *typed, tj_gpu_ctx_t ctx, const tj_gpu_ptr_t *where,
                   tj_devptr_t packed, const tj_fused_item_t *items, int n, tj_dir_t dir,
                   tj_batch_t *batch);

#endif /* TJ_MOVE_FUSED_H */
