/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the canonical passes (dense folding, stream elision, stream flattening, offset
 * hoisting) on hand-built IR chains, and of the strided block built from them: counts, strides,
 * word size, footprint, disjointness, text round trip and overflow detection. No MPI needed. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "type/block.h"
#include "type/canon.h"
#include "type/ir.h"

/* One stream level of a chain description: offset, count, stride. */
typedef struct {
    int64_t offset, count, stride;
} level_t;

/* Build a chain from its stream levels (outermost first) over one dense leaf. */
static void chain(tj_ir_t *ir, int nlevels, const level_t *levels, int64_t dense_offset,
                  int64_t dense_extent)
{
    tj_ir_init_dense(ir, dense_offset, dense_extent);
    for (int i = nlevels - 1; i >= 0; i--)
        REQUIRE(tj_ir_push_stream(ir, levels[i].offset, levels[i].count, levels[i].stride) ==
                TJ_OK);
}

/* Compare two chains node by node; on a mismatch print both so the failure explains itself. */
static void check_ir_equal(const tj_ir_t *got, const tj_ir_t *want, int line)
{
    if (!tj_canon_equal(got, want)) {
        char a[1024], b[1024];
        tj_ir_format(got, a, sizeof(a));
        tj_ir_format(want, b, sizeof(b));
        fprintf(stderr, "%s:%d: CHECK failed: chain\n  got:  %s\n  want: %s\n", __FILE__, line, a,
                b);
        check_failures++;
    }
}

#define CHECK_IR(_got, _want) check_ir_equal((_got), (_want), __LINE__)

/* The levels of a block are compared field by field, with a readable message on failure. */
static void check_block(const tj_block_t *b, int64_t start, int64_t extent, int ndims,
                        const int64_t *counts, const int64_t *strides, int word, int line)
{
    bool same = b->start == start && b->extent == extent && b->ndims == ndims && b->word == word;
    int64_t size = 1;
    for (int d = 0; same && d < ndims; d++) {
        same = b->counts[d] == counts[d] && b->strides[d] == strides[d];
        size *= counts[d];
    }
    same = same && b->size == size;
    if (!same) {
        char text[1024];
        tj_block_format(b, text, sizeof(text));
        fprintf(stderr, "%s:%d: CHECK failed: block is \"%s\" size=%lld W=%d\n", __FILE__, line,
                text, (long long)b->size, b->word);
        check_failures++;
    }
}

#define CHECK_BLOCK(_b, _start, _extent, _ndims, _counts, _strides, _word)                         \
    check_block((_b), (_start), (_extent), (_ndims), (_counts), (_strides), (_word), __LINE__)

static void test_ir_basics(void)
{
    tj_ir_t ir;
    char text[256];
    int n;

    chain(&ir, 1, (const level_t[]){{0, 4, 64}}, 0, 16);
    CHECK_EQ_INT(ir.n, 2);
    CHECK(ir.node[0].kind == TJ_IR_STREAM && ir.node[1].kind == TJ_IR_DENSE);
    CHECK_EQ_INT(tj_ir_size(&ir), 64);
    n = tj_ir_format(&ir, text, sizeof(text));
    CHECK(strcmp(text, "stream{off=0,count=4,stride=64} > dense{off=0,extent=16}") == 0);
    CHECK_EQ_INT(n, (int)strlen(text));
    /* A short buffer still reports the full length, as snprintf does. */
    CHECK_EQ_INT(tj_ir_format(&ir, text, 8), n);
    CHECK(strlen(text) == 7);

    /* The chain has a fixed capacity; a full chain refuses another level. */
    tj_ir_init_dense(&ir, 0, 1);
    for (int i = 1; i < TJ_IR_MAX_NODES; i++)
        REQUIRE(tj_ir_push_stream(&ir, 0, 2, 3) == TJ_OK);
    CHECK_EQ_INT(ir.n, TJ_IR_MAX_NODES);
    CHECK_EQ_INT(tj_ir_push_stream(&ir, 0, 2, 3), TJ_ERR_NOT_STRIDED);
    CHECK_EQ_INT(ir.n, TJ_IR_MAX_NODES);

    /* The size of a chain is -1 when it does not fit in 64 bits. */
    chain(&ir, 2, (const level_t[]){{0, INT64_C(1) << 40, 1}, {0, INT64_C(1) << 40, 1}}, 0, 1);
    CHECK_EQ_INT(tj_ir_size(&ir), -1);
}

static void test_dense_fold(void)
{
    tj_ir_t ir, want;

    /* Stride equal to the dense extent: one larger dense node, offsets added. */
    chain(&ir, 1, (const level_t[]){{3, 5, 8}}, 4, 8);
    CHECK(tj_canon_dense_fold(&ir));
    tj_ir_init_dense(&want, 7, 40);
    CHECK_IR(&ir, &want);

    /* Stride different from the extent (a gap or an overlap): unchanged. */
    chain(&ir, 1, (const level_t[]){{0, 5, 12}}, 0, 8);
    want = ir;
    CHECK(!tj_canon_dense_fold(&ir));
    CHECK_IR(&ir, &want);
    chain(&ir, 1, (const level_t[]){{0, 5, 4}}, 0, 8);
    want = ir;
    CHECK(!tj_canon_dense_fold(&ir));
    CHECK_IR(&ir, &want);

    /* A negative stride never matches an extent, even of the same magnitude. */
    chain(&ir, 1, (const level_t[]){{0, 5, -8}}, 0, 8);
    want = ir;
    CHECK(!tj_canon_dense_fold(&ir));
    CHECK_IR(&ir, &want);

    /* Bottom-up: folding the innermost level enables the next one within the same sweep. */
    chain(&ir, 3, (const level_t[]){{1, 3, 96}, {2, 4, 24}, {0, 6, 4}}, 0, 4);
    CHECK(tj_canon_dense_fold(&ir));
    tj_ir_init_dense(&want, 3, 288);
    CHECK_IR(&ir, &want);

    /* Only the levels that match fold; a gap higher up stays a stream. */
    chain(&ir, 2, (const level_t[]){{16, 3, 100}, {0, 6, 4}}, 0, 4);
    CHECK(tj_canon_dense_fold(&ir));
    chain(&want, 1, (const level_t[]){{16, 3, 100}}, 0, 24);
    CHECK_IR(&ir, &want);

    /* A fold whose extent would overflow is left alone. */
    chain(&ir, 1, (const level_t[]){{0, INT64_C(1) << 62, 8}}, 0, 8);
    want = ir;
    CHECK(!tj_canon_dense_fold(&ir));
    CHECK_IR(&ir, &want);

    /* A lone dense node has nothing to fold. */
    tj_ir_init_dense(&ir, 5, 8);
    CHECK(!tj_canon_dense_fold(&ir));
    CHECK_EQ_INT(ir.n, 1);
}

static void test_stream_elide(void)
{
    tj_ir_t ir, want;

    /* A count-1 stream disappears and its offset moves to its child, whatever its stride. */
    chain(&ir, 1, (const level_t[]){{12, 1, 999}}, 4, 8);
    CHECK(tj_canon_stream_elide(&ir));
    tj_ir_init_dense(&want, 16, 8);
    CHECK_IR(&ir, &want);

    /* The child of an elided stream may itself be a stream. */
    chain(&ir, 2, (const level_t[]){{-8, 1, 64}, {2, 3, 16}}, 1, 4);
    CHECK(tj_canon_stream_elide(&ir));
    chain(&want, 1, (const level_t[]){{-6, 3, 16}}, 1, 4);
    CHECK_IR(&ir, &want);

    /* Several count-1 levels, stacked and separated, all go in one sweep. */
    chain(&ir, 4, (const level_t[]){{1, 1, 7}, {2, 2, 32}, {4, 1, 5}, {8, 1, 3}}, 16, 4);
    CHECK(tj_canon_stream_elide(&ir));
    chain(&want, 1, (const level_t[]){{3, 2, 32}}, 28, 4);
    CHECK_IR(&ir, &want);

    /* Streams of more than one element stay. */
    chain(&ir, 1, (const level_t[]){{0, 2, 7}}, 0, 4);
    want = ir;
    CHECK(!tj_canon_stream_elide(&ir));
    CHECK_IR(&ir, &want);

    /* Offsets whose sum overflows are not merged. */
    chain(&ir, 1, (const level_t[]){{INT64_MAX, 1, 0}}, 1, 4);
    want = ir;
    CHECK(!tj_canon_stream_elide(&ir));
    CHECK_IR(&ir, &want);
}

static void test_stream_flatten(void)
{
    tj_ir_t ir, want;

    /* Outer stride == inner count * inner stride: one stream of the product count. */
    chain(&ir, 2, (const level_t[]){{100, 3, 80}, {4, 5, 16}}, 0, 4);
    CHECK(tj_canon_stream_flatten(&ir));
    chain(&want, 1, (const level_t[]){{104, 15, 16}}, 0, 4);
    CHECK_IR(&ir, &want);

    /* Any other outer stride keeps both levels. */
    chain(&ir, 2, (const level_t[]){{0, 3, 96}, {0, 5, 16}}, 0, 4);
    want = ir;
    CHECK(!tj_canon_stream_flatten(&ir));
    CHECK_IR(&ir, &want);

    /* Negative strides: -48 == 3 * -16 merges; +48 over -16 does not. */
    chain(&ir, 2, (const level_t[]){{0, 2, -48}, {0, 3, -16}}, 0, 4);
    CHECK(tj_canon_stream_flatten(&ir));
    chain(&want, 1, (const level_t[]){{0, 6, -16}}, 0, 4);
    CHECK_IR(&ir, &want);
    chain(&ir, 2, (const level_t[]){{0, 2, 48}, {0, 3, -16}}, 0, 4);
    want = ir;
    CHECK(!tj_canon_stream_flatten(&ir));
    CHECK_IR(&ir, &want);

    /* Three levels in geometric progression collapse bottom-up in one sweep. */
    chain(&ir, 3, (const level_t[]){{1, 2, 240}, {2, 4, 60}, {4, 3, 20}}, 8, 4);
    CHECK(tj_canon_stream_flatten(&ir));
    chain(&want, 1, (const level_t[]){{7, 24, 20}}, 8, 4);
    CHECK_IR(&ir, &want);

    /* A transposed nesting (inner stride larger than outer) is never merged or reordered, even
     * when the other order would flatten: it packs in a different byte order. */
    chain(&ir, 2, (const level_t[]){{0, 4, 16}, {0, 3, 64}}, 0, 4);
    want = ir;
    CHECK(!tj_canon_stream_flatten(&ir));
    CHECK(!tj_canon_simplify(&ir));
    CHECK_IR(&ir, &want);

    /* Count or span overflow: not merged. */
    chain(&ir, 2,
          (const level_t[]){{0, INT64_C(1) << 40, INT64_C(1) << 40}, {0, INT64_C(1) << 40, 1}}, 0,
          1);
    want = ir;
    CHECK(!tj_canon_stream_flatten(&ir));
    CHECK_IR(&ir, &want);

    /* A single stream over the dense leaf has no stream child to merge with. */
    chain(&ir, 1, (const level_t[]){{0, 4, 4}}, 0, 4);
    want = ir;
    CHECK(!tj_canon_stream_flatten(&ir));
    CHECK_IR(&ir, &want);
}

static void test_simplify(void)
{
    tj_ir_t ir, want;

    /* The paper's figure 2, second fragment as translated: count-1 streams from hvectors,
     * a vector of bytes, over one byte. Everything but the two gaps disappears. */
    chain(&ir, 6,
          (const level_t[]){
              {0, 47, 131072}, {0, 1, 3172}, {0, 13, 256}, {0, 1, 100}, {0, 100, 1}, {0, 1, 1}},
          0, 1);
    CHECK(tj_canon_simplify(&ir));
    chain(&want, 2, (const level_t[]){{0, 47, 131072}, {0, 13, 256}}, 0, 100);
    CHECK_IR(&ir, &want);
    /* A fixed point: a second run changes nothing. */
    CHECK(!tj_canon_simplify(&ir));
    CHECK_IR(&ir, &want);

    /* All three passes: a fold at the bottom, an elision in the middle that brings two streams
     * together, and a flatten of those two. */
    chain(&ir, 4, (const level_t[]){{0, 2, 96}, {4, 1, 7}, {0, 3, 32}, {0, 2, 4}}, 0, 4);
    CHECK(tj_canon_simplify(&ir));
    chain(&want, 1, (const level_t[]){{4, 6, 32}}, 0, 8);
    CHECK_IR(&ir, &want);
    CHECK(!tj_canon_simplify(&ir));

    /* Everything contiguous becomes one dense node. */
    chain(&ir, 3, (const level_t[]){{0, 2, 48}, {0, 3, 16}, {0, 2, 8}}, 0, 8);
    CHECK(tj_canon_simplify(&ir));
    tj_ir_init_dense(&want, 0, 96);
    CHECK_IR(&ir, &want);

    /* Nothing to do: false, unchanged. */
    chain(&ir, 2, (const level_t[]){{0, 3, 100}, {0, 4, 12}}, 0, 8);
    want = ir;
    CHECK(!tj_canon_simplify(&ir));
    CHECK_IR(&ir, &want);

    /* Transposed: inner stride 64 > outer stride 16, stays transposed through simplify, also
     * after a fold below it. */
    chain(&ir, 3, (const level_t[]){{0, 4, 16}, {0, 3, 64}, {0, 2, 4}}, 0, 4);
    CHECK(tj_canon_simplify(&ir));
    chain(&want, 2, (const level_t[]){{0, 4, 16}, {0, 3, 64}}, 0, 8);
    CHECK_IR(&ir, &want);
}

/* A small value from a few that make the passes fire: the rules compare strides with extents
 * and with count * stride, so values are drawn from a set where such products meet. */
static int64_t pick(unsigned *seed, const int64_t *set, int n)
{
    *seed = *seed * 1103515245u + 12345u;
    return set[(*seed >> 16) % (unsigned)n];
}

/* tj_canon_push on a simplified chain gives what pushing and then simplifying gives, on
 * random chains of streams whose counts and strides often line up; also near overflow. */
static void test_push(void)
{
    static const int64_t counts[] = {0, 1, 1, 2, 3, 4, 8, INT64_C(1) << 40};
    static const int64_t sizes[] = {
        -16, -4, 1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, INT64_C(1) << 41, INT64_MAX / 2};
    static const int64_t offsets[] = {0, 0, 0, 4, -8, INT64_MAX - 8};
    unsigned seed = 12345;
    int merged = 0;

    for (int t = 0; t < 20000; t++) {
        tj_ir_t ir, want;
        int levels = 1 + t % 6;

        tj_ir_init_dense(&ir, pick(&seed, offsets, 6), pick(&seed, sizes, 17));
        for (int l = 0; l < levels; l++) {
            int64_t off = pick(&seed, offsets, 6), cnt = pick(&seed, counts, 8);
            int64_t str = pick(&seed, sizes, 17);
            tj_canon_simplify(&ir);
            want = ir;
            REQUIRE(tj_ir_push_stream(&want, off, cnt, str) == TJ_OK);
            tj_canon_simplify(&want);
            REQUIRE(tj_canon_push(&ir, off, cnt, str) == TJ_OK);
            merged += ir.n < want.n + 1;
            CHECK_IR(&ir, &want);
            if (check_failures > 0)
                return;
        }
    }
    /* The draws must exercise the merges, not only plain pushes. */
    CHECK(merged > 1000);

    /* A full chain still takes a stream that merges, and refuses one that does not. */
    {
        tj_ir_t ir;
        tj_ir_init_dense(&ir, 0, 1);
        for (int i = 0; i < TJ_IR_MAX_NODES - 1; i++)
            REQUIRE(tj_ir_push_stream(&ir, 0, 2, 1000 + i) == TJ_OK);
        CHECK(tj_canon_push(&ir, 0, 1, 7) == TJ_OK);
        CHECK(tj_canon_push(&ir, 0, 3, 7) == TJ_ERR_NOT_STRIDED);
        CHECK_EQ_INT(ir.n, TJ_IR_MAX_NODES);
    }
}

static void test_hoist(void)
{
    tj_ir_t ir, want;
    int64_t off = 12345;

    chain(&ir, 2, (const level_t[]){{3, 2, 64}, {-5, 3, 16}}, 7, 4);
    CHECK(tj_canon_hoist_offsets(&ir, &off));
    CHECK_EQ_INT(off, 5);
    chain(&want, 2, (const level_t[]){{5, 2, 64}, {0, 3, 16}}, 0, 4);
    CHECK_IR(&ir, &want);

    /* Same shape at another displacement: equal once the offsets are set aside. */
    tj_ir_t other;
    chain(&other, 2, (const level_t[]){{0, 2, 64}, {100, 3, 16}}, 0, 4);
    CHECK(tj_canon_hoist_offsets(&other, &off));
    CHECK_EQ_INT(off, 100);
    other.node[0].offset = 0;
    ir.node[0].offset = 0;
    CHECK_IR(&ir, &other);

    /* A lone dense node keeps its offset. */
    tj_ir_init_dense(&ir, -9, 4);
    CHECK(tj_canon_hoist_offsets(&ir, &off));
    CHECK_EQ_INT(off, -9);
    CHECK_EQ_INT(ir.node[0].offset, -9);

    /* Overflow: false, and the result argument is not written. */
    chain(&ir, 1, (const level_t[]){{INT64_MAX, 2, 8}}, 1, 4);
    off = 777;
    CHECK(!tj_canon_hoist_offsets(&ir, &off));
    CHECK_EQ_INT(off, 777);
}

static void test_canon_equal(void)
{
    tj_ir_t a, b;

    chain(&a, 1, (const level_t[]){{0, 4, 64}}, 0, 16);
    b = a;
    CHECK(tj_canon_equal(&a, &b));
    b.node[0].offset = 1;
    CHECK(!tj_canon_equal(&a, &b));
    b = a;
    b.node[0].count = 5;
    CHECK(!tj_canon_equal(&a, &b));
    b = a;
    b.node[0].stride = 65;
    CHECK(!tj_canon_equal(&a, &b));
    b = a;
    b.node[1].extent = 8;
    CHECK(!tj_canon_equal(&a, &b));
    tj_ir_init_dense(&b, 0, 64);
    CHECK(!tj_canon_equal(&a, &b));
}

static void test_block_from_ir(void)
{
    tj_ir_t ir;
    tj_block_t b, keep;

    /* node[n - 2], the innermost stream, is dimension 1; offsets of every level add up. */
    chain(&ir, 2, (const level_t[]){{64, 4, 1024}, {16, 3, 128}}, 32, 48);
    REQUIRE(tj_block_from_ir(&ir, 8192, &b) == TJ_OK);
    CHECK_BLOCK(&b, 112, 8192, 3, ((const int64_t[]){48, 3, 4}), ((const int64_t[]){1, 128, 1024}),
                16);
    CHECK_EQ_INT(b.size, 576);
    CHECK_EQ_INT(b.lo, 112);
    CHECK_EQ_INT(b.hi, 112 + 47 + 2 * 128 + 3 * 1024 + 1);
    CHECK(b.disjoint);

    /* A single dense node is a one-dimensional block. */
    tj_ir_init_dense(&ir, -4, 20);
    REQUIRE(tj_block_from_ir(&ir, 24, &b) == TJ_OK);
    CHECK_BLOCK(&b, -4, 24, 1, ((const int64_t[]){20}), ((const int64_t[]){1}), 4);

    /* A transposed chain keeps its dimension order. */
    chain(&ir, 2, (const level_t[]){{0, 4, 16}, {0, 3, 64}}, 0, 8);
    REQUIRE(tj_block_from_ir(&ir, 200, &b) == TJ_OK);
    CHECK_BLOCK(&b, 0, 200, 3, ((const int64_t[]){8, 3, 4}), ((const int64_t[]){1, 64, 16}), 8);
    CHECK(b.disjoint);

    /* Not a stream chain over a dense leaf, or more dimensions than a block holds. */
    memset(&keep, 0x5a, sizeof(keep));
    b = keep;
    ir.n = 0;
    CHECK_EQ_INT(tj_block_from_ir(&ir, 8, &b), TJ_ERR_NOT_STRIDED);
    chain(&ir, 1, (const level_t[]){{0, 4, 16}}, 0, 8);
    ir.node[1].kind = TJ_IR_STREAM;
    CHECK_EQ_INT(tj_block_from_ir(&ir, 8, &b), TJ_ERR_NOT_STRIDED);
    chain(&ir, 1, (const level_t[]){{0, 4, 16}}, 0, 8);
    ir.node[0].kind = TJ_IR_DENSE;
    CHECK_EQ_INT(tj_block_from_ir(&ir, 8, &b), TJ_ERR_NOT_STRIDED);
    tj_ir_init_dense(&ir, 0, 1);
    for (int i = 0; i < TJ_BLOCK_MAX_DIMS - 1; i++)
        REQUIRE(tj_ir_push_stream(&ir, 0, 2, INT64_C(3) << i) == TJ_OK);
    CHECK_EQ_INT(tj_block_from_ir(&ir, 8, &b), TJ_OK);
    CHECK_EQ_INT(b.ndims, TJ_BLOCK_MAX_DIMS);
    b = keep;
    REQUIRE(tj_ir_push_stream(&ir, 0, 2, INT64_C(3) << 20) == TJ_OK);
    CHECK_EQ_INT(tj_block_from_ir(&ir, 8, &b), TJ_ERR_NOT_STRIDED);

    /* Empty levels are invalid blocks; offsets that overflow are reported. */
    chain(&ir, 1, (const level_t[]){{0, 0, 16}}, 0, 8);
    CHECK_EQ_INT(tj_block_from_ir(&ir, 8, &b), TJ_ERR_INVALID);
    tj_ir_init_dense(&ir, 0, 0);
    CHECK_EQ_INT(tj_block_from_ir(&ir, 8, &b), TJ_ERR_INVALID);
    chain(&ir, 1, (const level_t[]){{INT64_MAX, 2, 16}}, 1, 8);
    CHECK_EQ_INT(tj_block_from_ir(&ir, 8, &b), TJ_ERR_OVERFLOW);
    /* Output written only on success. */
    CHECK(memcmp(&b, &keep, sizeof(b)) == 0);
}

static void test_block_make(void)
{
    tj_block_t b, keep;

    /* Validation: at least one dimension, at most TJ_BLOCK_MAX_DIMS, strides[0] == 1, counts of
     * at least 1. */
    memset(&keep, 0x5a, sizeof(keep));
    b = keep;
    CHECK_EQ_INT(tj_block_make(0, 8, 0, (const int64_t[]){8}, (const int64_t[]){1}, &b),
                 TJ_ERR_INVALID);
    {
        int64_t c[TJ_BLOCK_MAX_DIMS + 1], s[TJ_BLOCK_MAX_DIMS + 1];
        for (int d = 0; d <= TJ_BLOCK_MAX_DIMS; d++) {
            c[d] = 2;
            s[d] = d == 0 ? 1 : INT64_C(2) << d;
        }
        CHECK_EQ_INT(tj_block_make(0, 8, TJ_BLOCK_MAX_DIMS + 1, c, s, &b), TJ_ERR_INVALID);
        CHECK_EQ_INT(tj_block_make(0, 8, TJ_BLOCK_MAX_DIMS, c, s, &keep), TJ_OK);
        CHECK_EQ_INT(keep.ndims, TJ_BLOCK_MAX_DIMS);
        CHECK_EQ_INT(keep.size, 1 << TJ_BLOCK_MAX_DIMS);
        CHECK(keep.disjoint);
        b = keep;
    }
    CHECK_EQ_INT(tj_block_make(0, 8, 1, (const int64_t[]){8}, (const int64_t[]){2}, &b),
                 TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_block_make(0, 8, 1, (const int64_t[]){0}, (const int64_t[]){1}, &b),
                 TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_block_make(0, 8, 2, (const int64_t[]){8, 0}, (const int64_t[]){1, 8}, &b),
                 TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_block_make(0, 8, 2, (const int64_t[]){8, -3}, (const int64_t[]){1, 8}, &b),
                 TJ_ERR_INVALID);
    CHECK(memcmp(&b, &keep, sizeof(b)) == 0);

    /* Size is the product of counts; counts and strides are kept as given. */
    REQUIRE(tj_block_make(0, 256, 3, (const int64_t[]){16, 3, 2}, (const int64_t[]){1, 32, 128},
                          &b) == TJ_OK);
    CHECK_BLOCK(&b, 0, 256, 3, ((const int64_t[]){16, 3, 2}), ((const int64_t[]){1, 32, 128}), 16);
    CHECK_EQ_INT(b.size, 96);
}

static int word_of(int64_t start, int64_t extent, int ndims, const int64_t *counts,
                   const int64_t *strides)
{
    tj_block_t b;
    REQUIRE(tj_block_make(start, extent, ndims, counts, strides, &b) == TJ_OK);
    return b.word;
}

static void test_word(void)
{
    const int64_t c2[] = {16, 4}, s2[] = {1, 64};

    /* The largest of 16, 8, 4, 2, 1 dividing the run and every stride of a dimension of more
     * than one element; the start and the extent narrow a launch's word, not the object's. */
    CHECK_EQ_INT(word_of(0, 256, 2, c2, s2), 16);
    CHECK_EQ_INT(word_of(0, 256, 2, (const int64_t[]){24, 4}, s2), 8);
    CHECK_EQ_INT(word_of(0, 256, 2, (const int64_t[]){12, 4}, s2), 4);
    CHECK_EQ_INT(word_of(0, 256, 2, (const int64_t[]){6, 4}, s2), 2);
    CHECK_EQ_INT(word_of(0, 256, 2, (const int64_t[]){7, 4}, s2), 1);
    CHECK_EQ_INT(word_of(8, 256, 2, c2, s2), 16);
    CHECK_EQ_INT(word_of(3, 256, 2, c2, s2), 16);
    CHECK_EQ_INT(word_of(0, 255, 2, c2, s2), 16);
    CHECK_EQ_INT(word_of(0, 256, 2, c2, (const int64_t[]){1, 68}), 4);
    /* A dimension of one element never steps: its stride does not count. */
    CHECK_EQ_INT(word_of(0, 256, 3, (const int64_t[]){16, 1, 4}, (const int64_t[]){1, 3, 64}), 16);
    CHECK_EQ_INT(word_of(0, 256, 3, (const int64_t[]){16, 2, 4}, (const int64_t[]){1, 3, 64}), 1);
    CHECK_EQ_INT(word_of(0, 256, 2, c2, (const int64_t[]){1, -72}), 8);
    CHECK_EQ_INT(word_of(0, 256, 3, (const int64_t[]){16, 4, 2}, (const int64_t[]){1, 64, 1026}),
                 2);
    /* Strides beyond 32 bits count at full width. */
    CHECK_EQ_INT(word_of(0, 256, 2, c2, (const int64_t[]){1, (INT64_C(1) << 33) + 8}), 8);
    CHECK_EQ_INT(word_of(0, 256, 2, c2, (const int64_t[]){1, INT64_C(1) << 40}), 16);
    /* An extent of 0 (resized) constrains nothing. */
    CHECK_EQ_INT(word_of(0, 0, 2, c2, s2), 16);

    /* The helper itself, with a smaller ceiling. */
    CHECK_EQ_INT(tj_block_word_for((const int64_t[]){32, 64}, 2, 4), 4);
    CHECK_EQ_INT(tj_block_word_for((const int64_t[]){32, 64}, 2, 16), 16);
    CHECK_EQ_INT(tj_block_word_for((const int64_t[]){32, 6}, 2, 16), 2);
    CHECK_EQ_INT(tj_block_word_for(NULL, 0, 8), 8);
    CHECK_EQ_INT(tj_block_word_for((const int64_t[]){0, 0}, 2, 16), 16);
    CHECK_EQ_INT(tj_block_word_for((const int64_t[]){-24, 64}, 2, 16), 8);
    CHECK_EQ_INT(tj_block_word_for((const int64_t[]){INT64_MIN, 1}, 2, 16), 1);
    CHECK_EQ_INT(tj_block_word_for((const int64_t[]){INT64_MIN}, 1, 16), 16);
}

static tj_words_t words_of(const tj_block_t *b, int64_t count, uintptr_t typed, uintptr_t packed)
{
    return tj_block_words(b, count, typed, packed);
}

#define CHECK_WORDS(_w, _word, _edge)                                                              \
    do {                                                                                           \
        tj_words_t w_ = (_w);                                                                      \
        CHECK_EQ_INT(w_.word, _word);                                                              \
        CHECK_EQ_INT(w_.edge, _edge);                                                              \
    } while (0)

/* The words of a launch: the object's word narrowed by object 0's address (the typed pointer plus
 * the start), the packed address, and the extent only when more than one object moves; edges
 * where the runs are long and their typed bytes agree with their packed position modulo a wider
 * word. */
static void test_launch_words(void)
{
    tj_block_t b, e, r;
    tj_words_t all[TJ_BLOCK_WORDS_MAX], aligned[2];
    int n;

    /* 64 runs of 64 bytes, 512 apart, an odd extent: W 16 for one object, 1 for several. */
    REQUIRE(tj_block_make(0, 32769, 2, (const int64_t[]){64, 64}, (const int64_t[]){1, 512}, &b) ==
            TJ_OK);
    CHECK_EQ_INT(b.word, 16);
    CHECK_WORDS(words_of(&b, 1, 0, 0), 16, 0);
    CHECK_WORDS(words_of(&b, 0, 0, 0), 16, 0);
    CHECK_WORDS(words_of(&b, 2, 0, 0), 1, 0);
    CHECK_WORDS(words_of(&b, 1, 8, 0), 8, 0);
    CHECK_WORDS(words_of(&b, 1, 0, 4), 4, 0);
    CHECK_WORDS(words_of(&b, 1, 256 + 2, 16), 2, 0);
    REQUIRE(tj_block_make(0, 32776, 2, (const int64_t[]){64, 64}, (const int64_t[]){1, 512}, &b) ==
            TJ_OK);
    CHECK_WORDS(words_of(&b, 3, 0, 0), 8, 0);
    CHECK_EQ_INT(tj_block_words_aligned(&b, aligned), 2);
    CHECK_WORDS(aligned[0], 16, 0);
    CHECK_WORDS(aligned[1], 8, 0);
    /* Runs of 64 bytes are too short for edges: the word of the misaligned start alone. */
    CHECK_WORDS(words_of(&b, 1, 4, 4), 4, 0);

    /* Rows of 1001 floats padded by 16 bytes: W 4, every row's typed bytes agree with their
     * packed position modulo 16. */
    REQUIRE(tj_block_make(0, 64 * 4020, 2, (const int64_t[]){4004, 64}, (const int64_t[]){1, 4020},
                          &e) == TJ_OK);
    CHECK_EQ_INT(e.word, 4);
    CHECK_EQ_INT(e.edges_word, 16);
    CHECK_EQ_INT(tj_block_run(&e), 4004);
    CHECK_WORDS(words_of(&e, 1, 0, 0), 16, 4);
    CHECK_WORDS(words_of(&e, 1, 4, 4), 16, 4); /* both misaligned alike */
    CHECK_WORDS(words_of(&e, 1, 4, 12), 8, 4); /* they agree modulo 8 only */
    CHECK_WORDS(words_of(&e, 1, 4, 8), 4, 0);  /* not even modulo 8: no edges */
    CHECK_WORDS(words_of(&e, 1, 2, 2), 16, 2); /* the edges of a word of 2 */
    CHECK_WORDS(words_of(&e, 2, 0, 0), 16, 4); /* the extent minus the size: 1024 */
    CHECK_EQ_INT(tj_block_words_aligned(&e, aligned), 1);
    n = tj_block_words_all(&e, 1, all);
    CHECK(n >= 5 && n <= TJ_BLOCK_WORDS_MAX);
    for (int i = 0; i < n; i++)
        CHECK(all[i].edge == 0 ? e.word % all[i].word == 0
                               : all[i].edge < all[i].word && e.word % all[i].edge == 0 &&
                                     e.edges_word % all[i].word == 0);
    /* One row as the object, 4020 bytes apart: several objects agree modulo 16 too (the extent
     * is 16 past the size), but an object's packed bytes begin at 4004 * k: no edges, which
     * would move the window two objects share with two threads. Four rows as the object (16016
     * packed bytes): edges for several objects too. */
    REQUIRE(tj_block_make(0, 4020, 1, (const int64_t[]){4004}, (const int64_t[]){1}, &r) == TJ_OK);
    CHECK_EQ_INT(r.edges_word, 16);
    CHECK_WORDS(words_of(&r, 1, 0, 0), 16, 4);
    CHECK_WORDS(words_of(&r, 5, 0, 0), 4, 0);
    REQUIRE(tj_block_make(0, 4 * 4020, 2, (const int64_t[]){4004, 4}, (const int64_t[]){1, 4020},
                          &r) == TJ_OK);
    CHECK_WORDS(words_of(&r, 5, 0, 0), 16, 4);
    CHECK_WORDS(words_of(&r, 5, 0, 8), 8, 4);
    REQUIRE(tj_block_make(0, 4024, 1, (const int64_t[]){4004}, (const int64_t[]){1}, &r) == TJ_OK);
    CHECK_WORDS(words_of(&r, 5, 0, 0), 4, 0); /* 20 past the size: only modulo 4 */
    /* A run of 4099 bytes: W 1, the middle in words of 16. */
    REQUIRE(tj_block_make(0, 4099, 1, (const int64_t[]){4099}, (const int64_t[]){1}, &r) == TJ_OK);
    CHECK_WORDS(words_of(&r, 1, 0, 0), 16, 1);
    CHECK_WORDS(words_of(&r, 7, 3, 3), 1, 0);
    CHECK_WORDS(words_of(&r, 1, 3, 4), 1, 0);
    CHECK_WORDS(words_of(&r, 1, 3, 3), 16, 1);
    /* Contiguous dimensions continue the run; one of one element is skipped. */
    REQUIRE(tj_block_make(0, 0, 4, (const int64_t[]){100, 1, 10, 3},
                          (const int64_t[]){1, 7, 100, 1024}, &r) == TJ_OK);
    CHECK_EQ_INT(tj_block_run(&r), 1000);
    CHECK_EQ_INT(r.edges_word, 8); /* 1024 - 1000 */
    CHECK_EQ_INT(r.word, 4);
    CHECK_WORDS(words_of(&r, 1, 0, 0), 8, 4); /* runs of 1000 bytes, over 32 words of 8 */
}

static void test_footprint(void)
{
    tj_block_t b;

    /* Positive strides: lo is the start, hi one past the last byte. */
    REQUIRE(tj_block_make(10, 0, 2, (const int64_t[]){4, 3}, (const int64_t[]){1, 20}, &b) ==
            TJ_OK);
    CHECK_EQ_INT(b.lo, 10);
    CHECK_EQ_INT(b.hi, 10 + 40 + 4);

    /* A negative stride reaches below the start. */
    REQUIRE(tj_block_make(100, 0, 3, (const int64_t[]){4, 3, 2}, (const int64_t[]){1, -10, 50},
                          &b) == TJ_OK);
    CHECK_EQ_INT(b.lo, 80);
    CHECK_EQ_INT(b.hi, 154);

    /* Only negative: the last byte is the run of the start. */
    REQUIRE(tj_block_make(0, 0, 3, (const int64_t[]){8, 2, 3}, (const int64_t[]){1, -16, -64},
                          &b) == TJ_OK);
    CHECK_EQ_INT(b.lo, -16 - 128);
    CHECK_EQ_INT(b.hi, 8);
    CHECK(b.disjoint);

    /* The extent does not widen the footprint of one object. */
    REQUIRE(tj_block_make(0, 1000, 1, (const int64_t[]){4}, (const int64_t[]){1}, &b) == TJ_OK);
    CHECK_EQ_INT(b.lo, 0);
    CHECK_EQ_INT(b.hi, 4);
}

static tj_block_t make(int64_t start, int64_t extent, int ndims, const int64_t *counts,
                       const int64_t *strides)
{
    tj_block_t b;
    REQUIRE(tj_block_make(start, extent, ndims, counts, strides, &b) == TJ_OK);
    return b;
}

/* Whether @p w is among the @p n words of @p list. */
static bool listed(const tj_words_offsets_t *list, int n, tj_words_t w)
{
    for (int i = 0; i < n; i++)
        if (list[i].words.word == w.word && list[i].words.edge == w.edge)
            return true;
    return false;
}

/* The words of every placement of @p b whose typed buffer and packed bytes lie at multiples of
 * @p align from a 16-byte boundary: each listed once, each with a placement that selects it,
 * and every such placement's words listed. */
static int check_aligned_to(const tj_block_t *b, int64_t count, int align,
                            tj_words_offsets_t list[TJ_BLOCK_WORDS_MAX])
{
    int n = tj_block_words_aligned_to(b, count, align, list);
    int step = (align & -align) > 16 ? 16 : align & -align;

    CHECK(n >= 1 && n <= TJ_BLOCK_WORDS_MAX);
    CHECK_EQ_INT(list[0].typed_offset, 0);
    CHECK_EQ_INT(list[0].packed_offset, 0);
    for (int i = 0; i < n; i++) {
        tj_words_t w = tj_block_words(b, count, (uintptr_t)(b->start + list[i].typed_offset),
                                      (uintptr_t)list[i].packed_offset);
        CHECK(list[i].typed_offset % step == 0 && list[i].packed_offset % step == 0);
        CHECK_WORDS(w, list[i].words.word, list[i].words.edge);
        CHECK(!listed(list, i, list[i].words));
    }
    for (int t = 0; t < 64; t += step)
        for (int p = 0; p < 64; p += step)
            CHECK(listed(list, n,
                         tj_block_words(b, count, (uintptr_t)(b->start + 256 + t), (uintptr_t)p)));
    return n;
}

/* The words of element-aligned placements: a halo code's faces sent from d + offset, 8 bytes off
 * a 16-byte boundary, packed at sums of earlier packs. */
static void test_words_aligned_to(void)
{
    tj_words_offsets_t list[TJ_BLOCK_WORDS_MAX];
    tj_words_t all[TJ_BLOCK_WORDS_MAX], aligned[2];
    tj_block_t b;
    int n;

    /* 16 runs of 24 doubles 4576 bytes apart: W 16 on aligned buffers, 8 from d + 8 (or at an
     * odd packed double); runs of 192 bytes are too short for edges. */
    b = make(0, 68832, 2, (const int64_t[]){192, 16}, (const int64_t[]){1, 4576});
    CHECK_EQ_INT(check_aligned_to(&b, 1, 8, list), 2);
    CHECK_WORDS(list[0].words, 16, 0);
    CHECK_WORDS(list[1].words, 8, 0);
    CHECK_EQ_INT(list[1].typed_offset, 8); /* the typed buffer first */
    CHECK_EQ_INT(list[1].packed_offset, 0);
    CHECK_EQ_INT(check_aligned_to(&b, 2, 8, list), 2);
    CHECK_EQ_INT(check_aligned_to(&b, 1, 16, list), 1); /* 16-byte aligned: the aligned words */
    CHECK_EQ_INT(check_aligned_to(&b, 1, 64, list), 1);
    CHECK_WORDS(list[0].words, 16, 0);
    CHECK_EQ_INT(check_aligned_to(&b, 1, 4, list), 3);  /* floats: W 4 too */
    CHECK_EQ_INT(check_aligned_to(&b, 1, 24, list), 2); /* multiples of 24: of 8 modulo 16 */
    /* Bytes: every plain word, and edges of words up to 4 (32 of them fit in a run of 192). */
    CHECK_EQ_INT(check_aligned_to(&b, 1, 1, list), 8);

    /* The face's first point 8 bytes into the type: aligned buffers select W 8, d + 8 W 16. */
    b = make(8, 68832, 2, (const int64_t[]){192, 16}, (const int64_t[]){1, 4576});
    CHECK_EQ_INT(check_aligned_to(&b, 1, 8, list), 2);
    CHECK_WORDS(list[0].words, 8, 0);
    CHECK_WORDS(list[1].words, 16, 0);
    CHECK_EQ_INT(list[1].typed_offset, 8);
    CHECK_EQ_INT(check_aligned_to(&b, 1, 16, list), 1);
    CHECK_EQ_INT(tj_block_words_aligned(&b, aligned), 1);
    CHECK_WORDS(list[0].words, aligned[0].word, aligned[0].edge);

    /* The count matters through the extent: an odd one moves several objects in bytes. */
    b = make(0, 32769, 2, (const int64_t[]){64, 64}, (const int64_t[]){1, 512});
    CHECK_EQ_INT(check_aligned_to(&b, 1, 8, list), 2);
    CHECK_EQ_INT(check_aligned_to(&b, 2, 8, list), 1);
    CHECK_WORDS(list[0].words, 1, 0);
    CHECK_EQ_INT(check_aligned_to(&b, 1000, 8, list), 1);
    CHECK_WORDS(list[0].words, 1, 0);

    /* Rows of 1001 floats padded by 16 bytes, from any float: edges where the typed buffer and
     * the packed bytes agree modulo 8 or 16, none where they do not. */
    b = make(0, 64 * 4020, 2, (const int64_t[]){4004, 64}, (const int64_t[]){1, 4020});
    n = check_aligned_to(&b, 1, 4, list);
    CHECK_WORDS(list[0].words, 16, 4);
    CHECK(listed(list, n, (tj_words_t){8, 4}));
    CHECK(listed(list, n, (tj_words_t){4, 0}));
    CHECK(!listed(list, n, (tj_words_t){16, 2}));
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(check_aligned_to(&b, 1, 8, list), 2); /* 16 with edges of 4, and 8 with them */

    /* Every placement at all: the words of --all-words, one object or several. */
    n = tj_block_words_all(&b, 1, all);
    {
        int n1 = check_aligned_to(&b, 1, 1, list), m = n1;
        tj_words_offsets_t several[TJ_BLOCK_WORDS_MAX];
        int n2 = check_aligned_to(&b, 2, 1, several);
        for (int i = 0; i < n2; i++)
            m += !listed(list, n1, several[i].words);
        CHECK_EQ_INT(n, m);
        for (int i = 0; i < n1; i++)
            CHECK_WORDS(all[i], list[i].words.word, list[i].words.edge);
    }
}

static void test_disjoint(void)
{
    tj_block_t b;

    /* Overlapping dimensions: the stride is shorter than the run below it. */
    b = make(0, 64, 2, (const int64_t[]){4, 2}, (const int64_t[]){1, 2});
    CHECK(!b.disjoint);
    CHECK(!tj_block_disjoint(&b, 1));
    b = make(0, 64, 3, (const int64_t[]){4, 3, 2}, (const int64_t[]){1, 4, 8});
    CHECK(!b.disjoint);
    b = make(0, 64, 2, (const int64_t[]){4, 2}, (const int64_t[]){1, 0});
    CHECK(!b.disjoint);
    b = make(0, 64, 2, (const int64_t[]){4, 2}, (const int64_t[]){1, -3});
    CHECK(!b.disjoint);

    /* Nested and exactly tight, or with gaps: disjoint. */
    b = make(0, 24, 3, (const int64_t[]){4, 3, 2}, (const int64_t[]){1, 4, 12});
    CHECK(b.disjoint);
    b = make(0, 24, 3, (const int64_t[]){4, 3, 2}, (const int64_t[]){1, 5, 100});
    CHECK(b.disjoint);
    /* Transposed (larger stride inside) and negative strides are judged by magnitude. */
    b = make(0, 140, 3, (const int64_t[]){4, 2, 3}, (const int64_t[]){1, 64, 8});
    CHECK(b.disjoint);
    b = make(0, 140, 3, (const int64_t[]){4, 2, 3}, (const int64_t[]){1, -64, 8});
    CHECK(b.disjoint);
    /* A dimension of one element never overlaps, whatever its stride. */
    b = make(0, 8, 2, (const int64_t[]){4, 1}, (const int64_t[]){1, 0});
    CHECK(b.disjoint);

    /* Several objects: the extent is one more dimension of `count` elements. */
    b = make(0, 20, 2, (const int64_t[]){4, 3}, (const int64_t[]){1, 8});
    CHECK(tj_block_disjoint(&b, 1));
    CHECK(tj_block_disjoint(&b, 2));
    CHECK(tj_block_disjoint(&b, 1000));
    b = make(0, 16, 2, (const int64_t[]){4, 3}, (const int64_t[]){1, 8});
    CHECK(b.disjoint);
    CHECK(tj_block_disjoint(&b, 1));
    CHECK(!tj_block_disjoint(&b, 2));
    /* Objects interleaved into each other's gaps do not overlap. */
    b = make(0, 4, 2, (const int64_t[]){4, 3}, (const int64_t[]){1, 8});
    CHECK(tj_block_disjoint(&b, 2));
    CHECK(!tj_block_disjoint(&b, 3));
    /* A zero extent repeats the same bytes; a negative one steps down. */
    b = make(0, 0, 1, (const int64_t[]){4}, (const int64_t[]){1});
    CHECK(tj_block_disjoint(&b, 1));
    CHECK(!tj_block_disjoint(&b, 2));
    b = make(0, -4, 1, (const int64_t[]){4}, (const int64_t[]){1});
    CHECK(tj_block_disjoint(&b, 5));
    b = make(0, -3, 1, (const int64_t[]){4}, (const int64_t[]){1});
    CHECK(!tj_block_disjoint(&b, 2));
    /* Spans that overflow are reported as overlapping (the safe answer). */
    b = make(0, INT64_C(1) << 62, 2, (const int64_t[]){1, 2},
             (const int64_t[]){1, INT64_C(1) << 61});
    CHECK(b.disjoint);
    CHECK(!tj_block_disjoint(&b, 4));
}

static void test_block_equal(void)
{
    tj_block_t a = make(8, 256, 2, (const int64_t[]){16, 4}, (const int64_t[]){1, 64}), b;

    b = make(8, 256, 2, (const int64_t[]){16, 4}, (const int64_t[]){1, 64});
    CHECK(tj_block_equal(&a, &b));
    b = make(0, 256, 2, (const int64_t[]){16, 4}, (const int64_t[]){1, 64});
    CHECK(!tj_block_equal(&a, &b));
    b = make(8, 248, 2, (const int64_t[]){16, 4}, (const int64_t[]){1, 64});
    CHECK(!tj_block_equal(&a, &b));
    b = make(8, 256, 2, (const int64_t[]){16, 5}, (const int64_t[]){1, 64});
    CHECK(!tj_block_equal(&a, &b));
    b = make(8, 256, 2, (const int64_t[]){16, 4}, (const int64_t[]){1, -64});
    CHECK(!tj_block_equal(&a, &b));
    b = make(8, 256, 3, (const int64_t[]){16, 4, 1}, (const int64_t[]){1, 64, 64});
    CHECK(!tj_block_equal(&a, &b));
}

static void check_round_trip(const tj_block_t *b, const char *want, int line)
{
    char text[1024];
    tj_block_t p;
    int n = tj_block_format(b, text, sizeof(text));

    if (want != NULL && strcmp(text, want) != 0) {
        fprintf(stderr, "%s:%d: CHECK failed: format \"%s\" != \"%s\"\n", __FILE__, line, text,
                want);
        check_failures++;
    }
    if (n != (int)strlen(text)) {
        fprintf(stderr, "%s:%d: CHECK failed: format length %d\n", __FILE__, line, n);
        check_failures++;
    }
    if (tj_block_parse(text, &p) != TJ_OK || !tj_block_equal(&p, b) || p.size != b->size ||
        p.word != b->word || p.lo != b->lo || p.hi != b->hi || p.disjoint != b->disjoint) {
        fprintf(stderr, "%s:%d: CHECK failed: round trip of \"%s\"\n", __FILE__, line, text);
        check_failures++;
    }
}

static void test_format_parse(void)
{
    tj_block_t b, keep;
    char text[1024], small[16];
    int n;

    b = make(48, 240, 2, (const int64_t[]){16, 3}, (const int64_t[]){1, 40});
    check_round_trip(&b, "start=48 extent=240 counts=16,3 strides=1,40", __LINE__);
    b = make(-16, 20, 2, (const int64_t[]){4, 3}, (const int64_t[]){1, -8});
    check_round_trip(&b, "start=-16 extent=20 counts=4,3 strides=1,-8", __LINE__);
    b = make(0, 7, 1, (const int64_t[]){7}, (const int64_t[]){1});
    check_round_trip(&b, "start=0 extent=7 counts=7 strides=1", __LINE__);
    b = make(0, (INT64_C(1) << 33) + 8, 2, (const int64_t[]){8, 2},
             (const int64_t[]){1, INT64_C(1) << 33});
    check_round_trip(&b, "start=0 extent=8589934600 counts=8,2 strides=1,8589934592", __LINE__);
    {
        int64_t c[TJ_BLOCK_MAX_DIMS], s[TJ_BLOCK_MAX_DIMS];
        for (int d = 0; d < TJ_BLOCK_MAX_DIMS; d++) {
            c[d] = 2;
            s[d] = d == 0 ? 1 : -(INT64_C(3) << d);
        }
        b = make(INT64_C(1) << 50, -12345, TJ_BLOCK_MAX_DIMS, c, s);
        check_round_trip(&b, NULL, __LINE__);
    }

    /* A short buffer gets a terminated prefix and the full length back. */
    b = make(48, 240, 2, (const int64_t[]){16, 3}, (const int64_t[]){1, 40});
    n = tj_block_format(&b, small, sizeof(small));
    CHECK_EQ_INT(n, (int)strlen("start=48 extent=240 counts=16,3 strides=1,40"));
    CHECK(strcmp(small, "start=48 extent") == 0);
    CHECK_EQ_INT(tj_block_format(&b, NULL, 0), n);

    /* Trailing newline (a manifest line) and further space-separated fields are accepted. */
    CHECK_EQ_INT(tj_block_parse("start=48 extent=240 counts=16,3 strides=1,40\n", &b), TJ_OK);
    CHECK_EQ_INT(tj_block_parse("start=48 extent=240 counts=16,3 strides=1,40 w=8", &b), TJ_OK);

    /* Errors, and the output is untouched by each. */
    static const char *const bad[] = {
        "",
        "start=",
        "start=x extent=8 counts=8 strides=1",
        "begin=0 extent=8 counts=8 strides=1",
        "start=0 extent=8",
        "start=0 extent=8 counts=8",
        "start=0,extent=8 counts=8 strides=1",
        "start=0 extent=8 strides=1 counts=8",
        "start=0 extent=8 counts= strides=1",
        "start=0 extent=8 counts=8, strides=1",
        "start=0 extent=8 counts=8,2 strides=1",    /* count and stride lists differ */
        "start=0 extent=8 counts=8 strides=1,16",   /* count and stride lists differ */
        "start=0 extent=8 counts=8 strides=2",      /* strides[0] must be 1 */
        "start=0 extent=8 counts=0 strides=1",      /* empty dimension */
        "start=0 extent=8 counts=8,-1 strides=1,8", /* negative count */
        "start=0 extent=8 counts=8 strides=1x",
        "start=0 extent=8 counts=8 strides=1;",
        "start=99999999999999999999 extent=8 counts=8 strides=1",    /* beyond 64 bits */
        "start=0 extent=8 counts=4294967296,4294967296 strides=1,8", /* size overflows */
        "start=9223372036854775807 extent=8 counts=8 strides=1",     /* footprint overflows */
        "start=0 extent=8 counts=2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2 "
        "strides=1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536",
    };
    keep = make(48, 240, 2, (const int64_t[]){16, 3}, (const int64_t[]){1, 40});
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tj_status_t st;
        b = keep;
        st = tj_block_parse(bad[i], &b);
        if (st != TJ_ERR_PARSE || !tj_block_equal(&b, &keep)) {
            fprintf(stderr, "%s:%d: CHECK failed: parse of \"%s\" gave %d\n", __FILE__, __LINE__,
                    bad[i], (int)st);
            check_failures++;
        }
    }
    /* Sixteen dimensions are the limit and still parse. */
    snprintf(text, sizeof(text),
             "start=0 extent=8 counts=2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2 "
             "strides=1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768");
    CHECK_EQ_INT(tj_block_parse(text, &b), TJ_OK);
    CHECK_EQ_INT(b.ndims, 16);
    CHECK_EQ_INT(b.size, 65536);
}

static void test_overflow(void)
{
    tj_block_t b, keep;
    const int64_t big = INT64_C(1) << 32;

    keep = make(0, 8, 1, (const int64_t[]){8}, (const int64_t[]){1});
    b = keep;
    /* Counts whose product does not fit. */
    CHECK_EQ_INT(tj_block_make(0, 8, 2, (const int64_t[]){big, big}, (const int64_t[]){1, big}, &b),
                 TJ_ERR_OVERFLOW);
    CHECK_EQ_INT(tj_block_make(0, 8, 3, (const int64_t[]){big, 2, INT64_C(1) << 31},
                               (const int64_t[]){1, 0, 0}, &b),
                 TJ_ERR_OVERFLOW);
    /* (count - 1) * stride does not fit. */
    CHECK_EQ_INT(tj_block_make(0, 8, 2, (const int64_t[]){1, big}, (const int64_t[]){1, big}, &b),
                 TJ_ERR_OVERFLOW);
    CHECK_EQ_INT(tj_block_make(0, 8, 2, (const int64_t[]){1, big}, (const int64_t[]){1, -big}, &b),
                 TJ_ERR_OVERFLOW);
    /* The footprint runs past either end of the 64-bit range. */
    CHECK_EQ_INT(
        tj_block_make(INT64_MAX - 10, 8, 1, (const int64_t[]){100}, (const int64_t[]){1}, &b),
        TJ_ERR_OVERFLOW);
    CHECK_EQ_INT(tj_block_make(INT64_MAX, 8, 1, (const int64_t[]){1}, (const int64_t[]){1}, &b),
                 TJ_ERR_OVERFLOW);
    CHECK_EQ_INT(
        tj_block_make(INT64_MIN + 10, 8, 2, (const int64_t[]){1, 3}, (const int64_t[]){1, -10}, &b),
        TJ_ERR_OVERFLOW);
    /* Two dimensions that each fit but together reach past the range. */
    CHECK_EQ_INT(tj_block_make(0, 8, 3, (const int64_t[]){1, 3, 3},
                               (const int64_t[]){1, INT64_C(1) << 61, INT64_C(1) << 61}, &b),
                 TJ_ERR_OVERFLOW);
    CHECK(memcmp(&b, &keep, sizeof(b)) == 0);

    /* Right at the edge is still fine. */
    CHECK_EQ_INT(tj_block_make(0, 8, 2, (const int64_t[]){big, (INT64_C(1) << 31) - 1},
                               (const int64_t[]){1, big}, &b),
                 TJ_OK);
    CHECK_EQ_INT(b.size, INT64_MAX - big + 1);
    CHECK_EQ_INT(b.hi, INT64_MAX - big + 1);
}

int main(void)
{
    test_ir_basics();
    test_dense_fold();
    test_stream_elide();
    test_stream_flatten();
    test_simplify();
    test_push();
    test_hoist();
    test_canon_equal();
    test_block_from_ir();
    test_block_make();
    test_word();
    test_launch_words();
    test_words_aligned_to();
    test_footprint();
    test_disjoint();
    test_block_equal();
    test_format_parse();
    test_overflow();
    CHECK_DONE();
}
