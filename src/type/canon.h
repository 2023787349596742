/* SPDX-License-Identifier: BSD-3-Clause */
/* Canonical passes over an IR chain. None of them changes the order in which bytes are packed. */
#ifndef TJ_TYPE_CANON_H
#define TJ_TYPE_CANON_H

#include <stdbool.h>

#include "type/ir.h"

/* A stream whose stride equals its dense child's extent becomes one larger dense node. */
bool tj_canon_dense_fold(tj_ir_t *ir);

/* A stream of one element is removed; its offset moves to its child. */
bool tj_canon_stream_elide(tj_ir_t *ir);

/* A stream whose stride equals count * stride of its child stream merges with the child. */
bool tj_canon_stream_flatten(tj_ir_t *ir);

/* Apply the three passes until none changes the chain. Returns true if anything changed. */
bool tj_canon_simplify(tj_ir_t *ir);

/* Wrap the chain in a new outermost stream, as tj_ir_push_stream, and simplify: the result is
 * what tj_canon_simplify gives, provided the chain was already simplified. TJ_ERR_NOT_STRIDED
 * when the chain is full. */
tj_status_t tj_canon_push(tj_ir_t *ir, int64_t offset, int64_t count, int64_t stride);

/* Sum every offset into the outermost node and zero the others, so that two chains of the same
 * shape at different displacements compare equal once the offset is taken out. Returns the
 * summed offset through @p offset; false on overflow. */
bool tj_canon_hoist_offsets(tj_ir_t *ir, int64_t *offset);

/* True if the two chains have the same nodes (kinds, counts, strides, extents, offsets). */
bool tj_canon_equal(const tj_ir_t *a, const tj_ir_t *b);

#endif /* TJ_TYPE_CANON_H */
