/* SPDX-License-Identifier: BSD-3-Clause */
/* The type IR: a chain of stream nodes ending in one dense node, outermost first. */
#ifndef TJ_TYPE_IR_H
#define TJ_TYPE_IR_H

#include <stddef.h>
#include <stdint.h>

#include "typejit.h"

/* Strided datatypes are chains (each level has one child), so the IR is an array. A chain longer
 * than this is reported as not strided rather than truncated. */
#define TJ_IR_MAX_NODES 48

typedef enum { TJ_IR_DENSE, TJ_IR_STREAM } tj_ir_kind_t;

/* One level. Every address of the level is its parent's address plus `offset`; a stream adds
 * `i * stride` for its i-th of `count` children; a dense node covers `extent` contiguous bytes.
 * All values are bytes, 64-bit and signed: negative offsets and strides are legal MPI. */
typedef struct {
    tj_ir_kind_t kind;
    int64_t offset;
    int64_t count;  /* stream only */
    int64_t stride; /* stream only */
    int64_t extent; /* dense only */
} tj_ir_node_t;

typedef struct {
    int n;                              /* number of nodes; node[n - 1] is the dense leaf */
    tj_ir_node_t node[TJ_IR_MAX_NODES]; /* node[0] is the outermost level */
} tj_ir_t;

/* Start a chain with its dense leaf. */
void tj_ir_init_dense(tj_ir_t *ir, int64_t offset, int64_t extent);

/* Wrap the chain in a new outermost stream; TJ_ERR_NOT_STRIDED when the chain is full. */
tj_status_t tj_ir_push_stream(tj_ir_t *ir, int64_t offset, int64_t count, int64_t stride);

/* Bytes one instance of the chain covers (product of counts times the dense extent), or -1 on
 * overflow. */
int64_t tj_ir_size(const tj_ir_t *ir);

/* Text such as "stream{off=0,count=4,stride=64} > dense{off=0,extent=16}". Returns the length the
 * full text needs, as snprintf. */
int tj_ir_format(const tj_ir_t *ir, char *buf, size_t len);

#endif /* TJ_TYPE_IR_H */
