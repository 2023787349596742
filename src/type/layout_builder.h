/* SPDX-License-Identifier: BSD-3-Clause */
/* Building a layout part by part: runs, copies of strided chains and of other layouts added in
 * typemap order, parts that continue one another merged, evenly spaced ones folded into strided
 * shapes; and the layouts of a chain and of a block made that way. */
#ifndef TJ_TYPE_LAYOUT_BUILDER_H
#define TJ_TYPE_LAYOUT_BUILDER_H

#include "type/layout.h"

/* Fewest consecutive parts of one shape and length, evenly spaced, that are folded into one
 * part of a strided shape (tj_layout_builder_t.fold). Fewer save little (at most 7 parts, 112
 * bytes), and each fold takes one of the TJ_LAYOUT_MAX_SHAPES shapes and makes the layout's
 * kernel its own where a table kernel would serve other layouts of runs too. */
#define TJ_LAYOUT_FOLD_MIN 8

/* Builds a layout part by part, merging parts that continue one another, and folding evenly
 * spaced ones: TJ_LAYOUT_FOLD_MIN or more consecutive parts of the same shape and length (runs of
 * L bytes, or single repetitions of a shape), each the same distance D after the one before,
 * become one part of a shape that repeats that unit D bytes apart, and later such parts at the
 * next step extend it. Parts are never reordered: the packed bytes stay the typemap's. */
typedef struct {
    tj_layout_store_t *store;
    int nshapes;
    tj_block_t shapes[TJ_LAYOUT_MAX_SHAPES];
    tj_status_t st; /* the first failure; every call after it does nothing */
    bool fold;      /* fold evenly spaced parts (set by tj_layout_builder_init) */
    int64_t streak; /* the last parts that are equal and evenly spaced: how many, */
    int64_t step;   /* and the distance between them */
} tj_layout_builder_t;

void tj_layout_builder_init(tj_layout_builder_t *b);

/* Room for @p n more parts (a hint: the member count). */
void tj_layout_builder_reserve(tj_layout_builder_t *b, int64_t n);

/* @p len contiguous bytes at @p disp. */
void tj_layout_builder_add_run(tj_layout_builder_t *b, int64_t disp, int64_t len);

/* @p bl copies, @p ext bytes apart, of the simplified chain @p ir (offsets not hoisted) at
 * @p disp. */
void tj_layout_builder_add_chain(tj_layout_builder_t *b, int64_t disp, int64_t bl,
                                 const tj_ir_t *ir, int64_t ext);

/* @p bl copies, @p ext bytes apart, of the layout @p child at @p disp: its parts, for each of
 * its frame elements. */
void tj_layout_builder_add_layout(tj_layout_builder_t *b, int64_t disp, int64_t bl,
                                  const tj_layout_t *child, int64_t ext);

/* The layout built (no frame, start 0), or the first failure: TJ_ERR_NOT_STRIDED when there
 * would be more than TJ_LAYOUT_MAX_PARTS parts (tj_layout_builder_too_many), TJ_ERR_NOMEM,
 * TJ_ERR_OVERFLOW. The builder is reset either way. */
tj_status_t tj_layout_builder_end(tj_layout_builder_t *b, tj_layout_t **out);

/* Whether the builder failed for having too many parts. */
bool tj_layout_builder_too_many(const tj_layout_builder_t *b);

/* A one-part layout of the simplified chain @p ir (offsets not hoisted): its dimensions past
 * the 16 a block has become the frame. */
tj_status_t tj_layout_builder_from_chain(const tj_ir_t *ir, tj_layout_t **out);

/* The layout of a strided block (one part, no frame), finished: for the serial unpack of a
 * strided type whose objects overlap. */
tj_status_t tj_layout_builder_from_block(const tj_block_t *block, int64_t size, tj_layout_t **out);

#endif /* TJ_TYPE_LAYOUT_BUILDER_H */
