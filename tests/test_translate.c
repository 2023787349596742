/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the translation of MPI datatypes into canonical strided blocks: every
 * constructor with its expected block written out, the types that must not be reported strided,
 * and equivalent constructions (the TEMPI paper's figure 2 and the row/plane/cuboid variants of
 * its section 2) that must give the same block. Each strided result is also packed by the CPU
 * packer and by PMPI_Pack and compared, so that a wrong expectation cannot hide a wrong block. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sysmpi.h"
#include "type/block.h"
#include "type/canon.h"
#include "type/cpu.h"
#include "type/translate.h"

/* A list of int64_t values as a macro argument: DIMS(8, 3). */
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

/* Footprints up to this many bytes are packed by both packers and compared. */
#define ORACLE_LIMIT ((int64_t)32 << 20)

/* Every type built here is committed and freed at the end, children after parents. */
static MPI_Datatype kept[512];
static int nkept;

static MPI_Datatype keep(MPI_Datatype t)
{
    REQUIRE(nkept < (int)(sizeof(kept) / sizeof(kept[0])));
    REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
    kept[nkept++] = t;
    return t;
}

static MPI_Datatype contig(int n, MPI_Datatype old)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_contiguous(n, old, &t) == MPI_SUCCESS);
    return keep(t);
}

static MPI_Datatype vec(int count, int bl, int stride, MPI_Datatype old)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_vector(count, bl, stride, old, &t) == MPI_SUCCESS);
    return keep(t);
}

static MPI_Datatype hvec(int count, int bl, MPI_Aint stride, MPI_Datatype old)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_create_hvector(count, bl, stride, old, &t) == MPI_SUCCESS);
    return keep(t);
}

static MPI_Datatype sub(int ndims, const int *sizes, const int *subsizes, const int *starts,
                        int order, MPI_Datatype old)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old, &t) ==
            MPI_SUCCESS);
    return keep(t);
}

static MPI_Datatype resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_create_resized(old, lb, extent, &t) == MPI_SUCCESS);
    return keep(t);
}

static MPI_Datatype dup(MPI_Datatype old)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_dup(old, &t) == MPI_SUCCESS);
    return keep(t);
}

static MPI_Datatype indexed_block(int n, int bl, const int *displs, MPI_Datatype old)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_create_indexed_block(n, bl, displs, old, &t) == MPI_SUCCESS);
    return keep(t);
}

static MPI_Datatype hindexed_block(int n, int bl, const MPI_Aint *displs, MPI_Datatype old)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_create_hindexed_block(n, bl, displs, old, &t) == MPI_SUCCESS);
    return keep(t);
}

static MPI_Datatype indexed(int n, const int *bls, const int *displs, MPI_Datatype old)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_indexed(n, bls, displs, old, &t) == MPI_SUCCESS);
    return keep(t);
}

static MPI_Datatype hindexed(int n, const int *bls, const MPI_Aint *displs, MPI_Datatype old)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_create_hindexed(n, bls, displs, old, &t) == MPI_SUCCESS);
    return keep(t);
}

static MPI_Datatype strct(int n, const int *bls, const MPI_Aint *displs, const MPI_Datatype *types)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_create_struct(n, bls, displs, types, &t) == MPI_SUCCESS);
    return keep(t);
}

static void fill_pattern(unsigned char *p, size_t n, unsigned salt)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 131 + salt * 7 + (i >> 8)) & 0xff);
}

/* Pack `count` objects with PMPI_Pack and with the CPU packer from `b`; both must give the same
 * bytes. Skipped for footprints too large to allocate here (the oracle test covers those). */
static void check_pack(MPI_Datatype t, const tj_block_t *b, int count, int line)
{
    MPI_Aint tlb, text, lb, ext;
    MPI_Count size;
    int64_t lo, hi, n;
    unsigned char *src, *p1, *p2;
    int pos = 0;

    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_size_x(t, &size);
    lo = tlb + ((count - 1) * (int64_t)ext < 0 ? (count - 1) * (int64_t)ext : 0);
    hi = tlb + text + ((count - 1) * (int64_t)ext > 0 ? (count - 1) * (int64_t)ext : 0);
    n = count * (int64_t)size;
    if (hi - lo > ORACLE_LIMIT || n > ORACLE_LIMIT)
        return;
    src = malloc((size_t)(hi - lo));
    p1 = malloc((size_t)n + 16);
    p2 = malloc((size_t)n + 16);
    REQUIRE(src != NULL && p1 != NULL && p2 != NULL);
    fill_pattern(src, (size_t)(hi - lo), (unsigned)line);
    memset(p1, 0xA5, (size_t)n + 16);
    memset(p2, 0xA5, (size_t)n + 16);
    REQUIRE(PMPI_Pack(src - lo, count, t, p1, (int)n + 16, &pos, MPI_COMM_SELF) == MPI_SUCCESS);
    tj_cpu_pack(b, src - lo, count, p2);
    if (pos != n || memcmp(p1, p2, (size_t)n + 16) != 0) {
        fprintf(stderr, "%s:%d: CHECK failed: CPU pack of %d object(s) differs from PMPI_Pack\n",
                __FILE__, line, count);
        check_failures++;
    }
    free(src);
    free(p1);
    free(p2);
}

/* Translate `t` and compare its block with the expected one; then check what must hold for any
 * strided type: extent and size from the system MPI, the footprint equal to the true extent, the
 * canonical IR rebuilding the same block, and the packed bytes. */
static void expect_block(MPI_Datatype t, int64_t start, int64_t extent, int ndims,
                         const int64_t *counts, const int64_t *strides, int word, int line,
                         tj_block_t *out)
{
    tj_block_t b, again;
    tj_ir_t canon, raw;
    tj_reason_t why;
    MPI_Aint lb, ext, tlb, text;
    MPI_Count size;
    int64_t off, want_size = 1;
    bool same;
    char text_got[1024];
    tj_status_t st = tj_translate_block(t, &b, &canon);

    if (st != TJ_OK) {
        fprintf(stderr, "%s:%d: CHECK failed: translation gave %s\n", __FILE__, line,
                tj_status_string(st));
        check_failures++;
        return;
    }
    same = b.start == start && b.extent == extent && b.ndims == ndims && b.word == word;
    for (int d = 0; same && d < ndims; d++) {
        same = b.counts[d] == counts[d] && b.strides[d] == strides[d];
        want_size *= counts[d];
    }
    if (!same || b.size != want_size) {
        tj_block_format(&b, text_got, sizeof(text_got));
        fprintf(stderr, "%s:%d: CHECK failed: block is \"%s\" W=%d\n", __FILE__, line, text_got,
                b.word);
        check_failures++;
    }
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_size_x(t, &size);
    /* The MPICH family counts a member of no bytes in the true bounds of a struct: there the
     * bytes typejit touches need only lie within them. */
    bool bounds = sysmpi_is_mpich_family() ? b.lo >= tlb && b.hi <= tlb + text
                                           : b.lo == tlb && b.hi == tlb + text;
    if (b.extent != ext || b.size != size || !bounds) {
        fprintf(stderr,
                "%s:%d: CHECK failed: extent %lld size %lld lo %lld hi %lld, MPI says %lld %lld "
                "%lld %lld\n",
                __FILE__, line, (long long)b.extent, (long long)b.size, (long long)b.lo,
                (long long)b.hi, (long long)ext, (long long)size, (long long)tlb,
                (long long)(tlb + text));
        check_failures++;
    }
    /* The canonical IR is simplified, offsets hoisted, and rebuilds the block. */
    for (int i = 1; i < canon.n; i++)
        if (canon.node[i].offset != 0) {
            fprintf(stderr, "%s:%d: CHECK failed: canonical offset not hoisted\n", __FILE__, line);
            check_failures++;
            break;
        }
    if (tj_block_from_ir(&canon, b.extent, &again) != TJ_OK || !tj_block_equal(&again, &b)) {
        fprintf(stderr, "%s:%d: CHECK failed: canonical IR does not rebuild the block\n", __FILE__,
                line);
        check_failures++;
    }
    /* tj_translate_ir gives the same chain, already simplified (tj_translate_finish relies on
     * it), once hoisted. */
    if (tj_translate_ir(t, &raw, &why) != TJ_OK) {
        fprintf(stderr, "%s:%d: CHECK failed: tj_translate_ir failed\n", __FILE__, line);
        check_failures++;
    } else {
        if (tj_canon_simplify(&raw)) {
            fprintf(stderr, "%s:%d: CHECK failed: tj_translate_ir not simplified\n", __FILE__,
                    line);
            check_failures++;
        }
        if (!tj_canon_hoist_offsets(&raw, &off) || !tj_canon_equal(&raw, &canon)) {
            fprintf(stderr, "%s:%d: CHECK failed: tj_translate_ir disagrees\n", __FILE__, line);
            check_failures++;
        }
    }
    check_pack(t, &b, 1, line);
    check_pack(t, &b, 3, line);
    if (out != NULL)
        *out = b;
}

#define EXPECT(_t, _start, _extent, _ndims, _counts, _strides, _word)                              \
    expect_block((_t), (_start), (_extent), (_ndims), (_counts), (_strides), (_word), __LINE__,    \
                 NULL)
#define EXPECT_OUT(_t, _start, _extent, _ndims, _counts, _strides, _word, _out)                    \
    expect_block((_t), (_start), (_extent), (_ndims), (_counts), (_strides), (_word), __LINE__,    \
                 (_out))

/* `t` is not strided: TJ_ERR_NOT_STRIDED, and neither output is written. */
static void expect_not_strided(MPI_Datatype t, int line)
{
    tj_block_t b, keep_b;
    tj_ir_t ir, keep_ir;
    tj_status_t st;

    memset(&keep_b, 0x5a, sizeof(keep_b));
    memset(&keep_ir, 0x5a, sizeof(keep_ir));
    b = keep_b;
    ir = keep_ir;
    st = tj_translate_block(t, &b, &ir);
    if (st != TJ_ERR_NOT_STRIDED) {
        char text[1024] = "";
        if (st == TJ_OK)
            tj_block_format(&b, text, sizeof(text));
        fprintf(stderr, "%s:%d: CHECK failed: expected not strided, got %s %s\n", __FILE__, line,
                tj_status_string(st), text);
        check_failures++;
    } else if (memcmp(&b, &keep_b, sizeof(b)) != 0 || memcmp(&ir, &keep_ir, sizeof(ir)) != 0) {
        fprintf(stderr, "%s:%d: CHECK failed: output written on failure\n", __FILE__, line);
        check_failures++;
    }
}

#define EXPECT_NOT_STRIDED(_t) expect_not_strided((_t), __LINE__)

/* Translate a type that must be strided, for comparisons. */
static tj_block_t block_of(MPI_Datatype t)
{
    tj_block_t b;
    REQUIRE(tj_translate_block(t, &b, NULL) == TJ_OK);
    return b;
}

/* Same bytes in the same order for one object: everything but the extent agrees. */
static bool same_layout(const tj_block_t *a, const tj_block_t *b)
{
    tj_block_t x = *a;
    x.extent = b->extent;
    return tj_block_equal(&x, b);
}

static void test_named(void)
{
    EXPECT(MPI_DOUBLE, 0, 8, 1, DIMS(8), DIMS(1), 8);
    EXPECT(MPI_CHAR, 0, 1, 1, DIMS(1), DIMS(1), 1);
    EXPECT(MPI_BYTE, 0, 1, 1, DIMS(1), DIMS(1), 1);
    EXPECT(MPI_SHORT, 0, 2, 1, DIMS(2), DIMS(1), 2);
    EXPECT(MPI_INT, 0, 4, 1, DIMS(4), DIMS(1), 4);
    EXPECT(MPI_C_DOUBLE_COMPLEX, 0, 16, 1, DIMS(16), DIMS(1), 16);
    EXPECT(MPI_LONG_DOUBLE, 0, 16, 1, DIMS(16), DIMS(1), 16);
    EXPECT(MPI_2INT, 0, 8, 1, DIMS(8), DIMS(1), 8);
    EXPECT(MPI_FLOAT_INT, 0, 8, 1, DIMS(8), DIMS(1), 8);

    /* A hole inside the data (short at 0, int at 4: 6 bytes in a true extent of 8): not one
     * run, not strided. */
    EXPECT_NOT_STRIDED(MPI_SHORT_INT);
    EXPECT_NOT_STRIDED(vec(3, 1, 2, MPI_SHORT_INT));
    EXPECT_NOT_STRIDED(contig(2, MPI_SHORT_INT));

    /* Padding only at the end (double at 0, int at 8; size 12 == true extent 12, extent 16):
     * one 12-byte run per object, stepping by the full extent of 16. The brief for these tests
     * expected "not strided"; Open MPI 4.1 reports true extent == size for these pair types, and
     * the block below packs exactly as PMPI_Pack does (checked for 3 objects), so strided is
     * the correct answer. */
    EXPECT(MPI_DOUBLE_INT, 0, 16, 1, DIMS(12), DIMS(1), 4);
    EXPECT(MPI_LONG_INT, 0, 16, 1, DIMS(12), DIMS(1), 4);
    EXPECT(MPI_LONG_DOUBLE_INT, 0, 32, 1, DIMS(20), DIMS(1), 4);
    EXPECT(contig(3, MPI_DOUBLE_INT), 0, 48, 2, DIMS(12, 3), DIMS(1, 16), 4);
}

static void test_contiguous(void)
{
    EXPECT(contig(5, MPI_INT), 0, 20, 1, DIMS(20), DIMS(1), 4);
    EXPECT(contig(4, MPI_DOUBLE), 0, 32, 1, DIMS(32), DIMS(1), 16);
    EXPECT(contig(3, contig(2, MPI_DOUBLE)), 0, 48, 1, DIMS(48), DIMS(1), 16);
    EXPECT(contig(1, MPI_CHAR), 0, 1, 1, DIMS(1), DIMS(1), 1);
    EXPECT(contig(7, MPI_BYTE), 0, 7, 1, DIMS(7), DIMS(1), 1);
}

static void test_vector(void)
{
    tj_block_t b;

    EXPECT(vec(3, 2, 5, MPI_INT), 0, 48, 2, DIMS(8, 3), DIMS(1, 20), 4);
    EXPECT(vec(4, 1, 2, MPI_DOUBLE), 0, 56, 2, DIMS(8, 4), DIMS(1, 16), 8);
    /* Block length equal to the stride, or one block: contiguous. */
    EXPECT(vec(3, 4, 4, MPI_INT), 0, 48, 1, DIMS(48), DIMS(1), 16);
    EXPECT(vec(1, 5, 100, MPI_INT), 0, 20, 1, DIMS(20), DIMS(1), 4);
    /* A vector of vectors, 3 planes of 4 rows of 2 doubles. */
    EXPECT(hvec(3, 1, 320, vec(4, 2, 5, MPI_DOUBLE)), 0, 2 * 320 + 136, 3, DIMS(16, 4, 3),
           DIMS(1, 40, 320), 8);
    /* Negative stride: the start stays at the first block, the footprint reaches below. */
    EXPECT_OUT(vec(3, 1, -2, MPI_INT), 0, 20, 2, DIMS(4, 3), DIMS(1, -8), 4, &b);
    CHECK_EQ_INT(b.lo, -16);
    CHECK_EQ_INT(b.hi, 4);
    CHECK(b.disjoint);
    /* Overlapping blocks (block length 3 > stride 2) and a zero stride are legal for packing. */
    EXPECT_OUT(vec(2, 3, 2, MPI_INT), 0, 20, 2, DIMS(12, 2), DIMS(1, 8), 4, &b);
    CHECK(!b.disjoint);
    EXPECT_OUT(vec(3, 1, 0, MPI_INT), 0, 4, 2, DIMS(4, 3), DIMS(1, 0), 4, &b);
    CHECK(!b.disjoint);
}

static void test_hvector(void)
{
    tj_block_t b;

    EXPECT(hvec(3, 2, 24, MPI_INT), 0, 56, 2, DIMS(8, 3), DIMS(1, 24), 8);
    EXPECT(hvec(4, 3, 12, MPI_INT), 0, 48, 1, DIMS(48), DIMS(1), 16);
    EXPECT(hvec(3, 1, 20, contig(5, MPI_INT)), 0, 60, 1, DIMS(60), DIMS(1), 4);
    /* Negative byte strides, over bytes and over ints: never turned around into a contiguous
     * run, since the packed order runs downwards. */
    EXPECT_OUT(hvec(3, 1, -2, MPI_BYTE), 0, 5, 2, DIMS(1, 3), DIMS(1, -2), 1, &b);
    CHECK_EQ_INT(b.lo, -4);
    EXPECT(hvec(3, 1, -4, MPI_INT), 0, 12, 2, DIMS(4, 3), DIMS(1, -4), 4);
    EXPECT(hvec(2, 2, -16, MPI_DOUBLE), 0, 32, 2, DIMS(16, 2), DIMS(1, -16), 16);

    /* Open MPI 4.1 reads a byte stride of -1 as "the child's extent" and packs such a vector as
     * if it were contiguous (hvector(3, 1, -1, MPI_BYTE) packs bytes 0, 1, 2, not 0, -1, -2),
     * so typejit leaves these to the system MPI. A vector stride of -1 elements of a 1-byte
     * type is the same byte stride. */
    EXPECT_NOT_STRIDED(hvec(3, 1, -1, MPI_BYTE));
    EXPECT_NOT_STRIDED(hvec(3, 2, -1, MPI_BYTE));
    EXPECT_NOT_STRIDED(vec(3, 1, -1, MPI_BYTE));
    EXPECT_NOT_STRIDED(vec(2, 1, -1, MPI_CHAR));
    /* One block has no stride to misread. */
    EXPECT(hvec(1, 1, -1, MPI_BYTE), 0, 1, 1, DIMS(1), DIMS(1), 1);
    /* -1 elements of a wider type is a different byte stride and fine. */
    EXPECT(vec(3, 1, -1, MPI_INT), 0, 12, 2, DIMS(4, 3), DIMS(1, -4), 4);
}

static void test_large_strides(void)
{
    const int64_t g32 = INT64_C(1) << 32, g33 = INT64_C(1) << 33, g35 = INT64_C(1) << 35;
    tj_block_t b;

    /* Strides beyond 2^31 are kept exactly in 64 bits (footprints too large for the pack
     * comparison here; the oracle test covers such types in sparse mappings). */
    EXPECT(hvec(2, 1, (MPI_Aint)g33 + 8, MPI_DOUBLE), 0, g33 + 16, 2, DIMS(8, 2), DIMS(1, g33 + 8),
           8);
    EXPECT(vec(2, 1, 1 << 29, MPI_DOUBLE), 0, g32 + 8, 2, DIMS(8, 2), DIMS(1, g32), 8);
    EXPECT_OUT(hvec(3, 1, -(MPI_Aint)g33, MPI_INT), 0, 2 * g33 + 4, 2, DIMS(4, 3), DIMS(1, -g33), 4,
               &b);
    CHECK_EQ_INT(b.lo, -2 * g33);
    EXPECT(hindexed(2, (const int[]){1, 1}, (const MPI_Aint[]){0, (MPI_Aint)g35}, MPI_DOUBLE), 0,
           g35 + 8, 2, DIMS(8, 2), DIMS(1, g35), 8);
    EXPECT(hindexed_block(2, 1, (const MPI_Aint[]){0, (MPI_Aint)g35}, MPI_DOUBLE), 0, g35 + 8, 2,
           DIMS(8, 2), DIMS(1, g35), 8);
    EXPECT(sub(2, (const int[]){2, 1 << 30}, (const int[]){2, 1}, (const int[]){0, 5}, MPI_ORDER_C,
               MPI_INT),
           20, g33, 2, DIMS(4, 2), DIMS(1, g32), 4);
    /* Three levels whose strides each exceed 32 bits. */
    EXPECT(hvec(2, 1, (MPI_Aint)g35 * 3, hvec(2, 1, (MPI_Aint)g33 * 3, MPI_INT)), 0,
           g35 * 3 + g33 * 3 + 4, 3, DIMS(4, 2, 2), DIMS(1, g33 * 3, g35 * 3), 4);
}

static void test_subarray(void)
{
    tj_block_t c, f;

    /* 2-D, rows 1..3 and columns 2..5 of a 6 x 10 int array: one 16-byte run per row. */
    EXPECT_OUT(sub(2, (const int[]){6, 10}, (const int[]){3, 4}, (const int[]){1, 2}, MPI_ORDER_C,
                   MPI_INT),
               48, 240, 2, DIMS(16, 3), DIMS(1, 40), 8, &c);
    /* The same array in Fortran order lists the dimensions fastest first. */
    EXPECT_OUT(sub(2, (const int[]){10, 6}, (const int[]){4, 3}, (const int[]){2, 1},
                   MPI_ORDER_FORTRAN, MPI_INT),
               48, 240, 2, DIMS(16, 3), DIMS(1, 40), 8, &f);
    CHECK(tj_block_equal(&c, &f));
    /* 3-D with starts in every dimension. */
    EXPECT_OUT(sub(3, (const int[]){4, 5, 6}, (const int[]){2, 3, 4}, (const int[]){1, 1, 2},
                   MPI_ORDER_C, MPI_DOUBLE),
               304, 960, 3, DIMS(32, 3, 2), DIMS(1, 48, 240), 16, &c);
    EXPECT_OUT(sub(3, (const int[]){6, 5, 4}, (const int[]){4, 3, 2}, (const int[]){2, 1, 1},
                   MPI_ORDER_FORTRAN, MPI_DOUBLE),
               304, 960, 3, DIMS(32, 3, 2), DIMS(1, 48, 240), 16, &f);
    CHECK(tj_block_equal(&c, &f));
    /* Without starts, and with a 3-byte element so that W drops to 1. */
    EXPECT(sub(3, (const int[]){3, 4, 5}, (const int[]){2, 2, 2}, (const int[]){0, 0, 0},
               MPI_ORDER_C, contig(3, MPI_BYTE)),
           0, 180, 3, DIMS(6, 2, 2), DIMS(1, 15, 60), 1);
    /* The whole array, one full row, one column. */
    EXPECT(
        sub(2, (const int[]){3, 4}, (const int[]){3, 4}, (const int[]){0, 0}, MPI_ORDER_C, MPI_INT),
        0, 48, 1, DIMS(48), DIMS(1), 16);
    EXPECT(
        sub(2, (const int[]){5, 8}, (const int[]){1, 8}, (const int[]){2, 0}, MPI_ORDER_C, MPI_INT),
        64, 160, 1, DIMS(32), DIMS(1), 16);
    EXPECT(
        sub(2, (const int[]){5, 8}, (const int[]){5, 1}, (const int[]){0, 3}, MPI_ORDER_C, MPI_INT),
        12, 160, 2, DIMS(4, 5), DIMS(1, 32), 4);
    EXPECT(sub(2, (const int[]){5, 8}, (const int[]){5, 1}, (const int[]){0, 3}, MPI_ORDER_FORTRAN,
               MPI_INT),
           60, 160, 1, DIMS(20), DIMS(1), 4);
    /* Subarray of a vector: the vector's extent is the element of the array. */
    EXPECT(sub(1, (const int[]){4}, (const int[]){2}, (const int[]){1}, MPI_ORDER_C,
               vec(2, 1, 3, MPI_INT)),
           16, 64, 3, DIMS(4, 2, 2), DIMS(1, 12, 16), 4);
}

static void test_resized(void)
{
    tj_block_t b;
    MPI_Datatype v = vec(3, 1, 2, MPI_INT);

    EXPECT(resized(MPI_INT, 0, 16), 0, 16, 1, DIMS(4), DIMS(1), 4);
    EXPECT(resized(MPI_INT, -4, 12), 0, 12, 1, DIMS(4), DIMS(1), 4);
    EXPECT(resized(MPI_DOUBLE, 0, 16), 0, 16, 1, DIMS(8), DIMS(1), 8);
    /* Count > 1 steps by the resized extent, which becomes the block's extent. */
    EXPECT(contig(3, resized(MPI_INT, 0, 16)), 0, 48, 2, DIMS(4, 3), DIMS(1, 16), 4);
    EXPECT(contig(2, resized(MPI_INT, -4, 12)), 0, 24, 2, DIMS(4, 2), DIMS(1, 12), 4);
    EXPECT(resized(v, 0, 64), 0, 64, 2, DIMS(4, 3), DIMS(1, 8), 4);
    EXPECT(resized(v, -8, 40), 0, 40, 2, DIMS(4, 3), DIMS(1, 8), 4);
    /* A resized extent that makes the run exactly contiguous folds one level. */
    EXPECT(contig(4, resized(contig(2, MPI_INT), 0, 8)), 0, 32, 1, DIMS(32), DIMS(1), 16);
    /* An extent smaller than the data: consecutive objects overlap. (The word of one object:
     * the extent narrows only a launch of several.) */
    EXPECT_OUT(resized(MPI_DOUBLE, 0, 4), 0, 4, 1, DIMS(8), DIMS(1), 8, &b);
    CHECK(b.disjoint);
    CHECK(!tj_block_disjoint(&b, 2));
    /* Resizing the innermost type changes the stride of every level built on it. */
    EXPECT(vec(2, 2, 3, resized(MPI_INT, 0, 8)), 0, 40, 3, DIMS(4, 2, 2), DIMS(1, 8, 24), 4);
    /* A lower bound shifts nothing: the data stays where the typemap puts it (the start narrows
     * a launch's word, not the object's). */
    EXPECT(
        resized(sub(1, (const int[]){8}, (const int[]){2}, (const int[]){3}, MPI_ORDER_C, MPI_INT),
                -16, 64),
        12, 64, 1, DIMS(8), DIMS(1), 8);
}

static void test_dup(void)
{
    tj_block_t a, b;
    MPI_Datatype v = vec(3, 2, 5, MPI_INT);

    EXPECT(dup(MPI_DOUBLE), 0, 8, 1, DIMS(8), DIMS(1), 8);
    EXPECT_OUT(v, 0, 48, 2, DIMS(8, 3), DIMS(1, 20), 4, &a);
    EXPECT_OUT(dup(dup(v)), 0, 48, 2, DIMS(8, 3), DIMS(1, 20), 4, &b);
    CHECK(tj_block_equal(&a, &b));
    EXPECT_NOT_STRIDED(dup(MPI_SHORT_INT));
}

static void test_indexed_uniform(void)
{
    tj_block_t v, b;
    MPI_Datatype v2 = vec(2, 1, 2, MPI_INT);

    EXPECT_OUT(vec(3, 2, 5, MPI_INT), 0, 48, 2, DIMS(8, 3), DIMS(1, 20), 4, &v);

    /* Evenly spaced equal blocks, in each constructor, give the vector's block. */
    EXPECT_OUT(indexed_block(3, 2, (const int[]){0, 5, 10}, MPI_INT), 0, 48, 2, DIMS(8, 3),
               DIMS(1, 20), 4, &b);
    CHECK(tj_block_equal(&b, &v));
    EXPECT_OUT(hindexed_block(3, 2, (const MPI_Aint[]){0, 20, 40}, MPI_INT), 0, 48, 2, DIMS(8, 3),
               DIMS(1, 20), 4, &b);
    CHECK(tj_block_equal(&b, &v));
    EXPECT_OUT(indexed(3, (const int[]){2, 2, 2}, (const int[]){0, 5, 10}, MPI_INT), 0, 48, 2,
               DIMS(8, 3), DIMS(1, 20), 4, &b);
    CHECK(tj_block_equal(&b, &v));
    EXPECT_OUT(hindexed(3, (const int[]){2, 2, 2}, (const MPI_Aint[]){0, 20, 40}, MPI_INT), 0, 48,
               2, DIMS(8, 3), DIMS(1, 20), 4, &b);
    CHECK(tj_block_equal(&b, &v));
    EXPECT_OUT(strct(3, (const int[]){2, 2, 2}, (const MPI_Aint[]){0, 20, 40},
                     (const MPI_Datatype[]){MPI_INT, MPI_INT, MPI_INT}),
               0, 48, 2, DIMS(8, 3), DIMS(1, 20), 4, &b);
    CHECK(tj_block_equal(&b, &v));

    EXPECT(hindexed_block(3, 1, (const MPI_Aint[]){0, 24, 48}, MPI_DOUBLE), 0, 56, 2, DIMS(8, 3),
           DIMS(1, 24), 8);
    /* One member: a dense run at its displacement. */
    EXPECT(indexed(1, (const int[]){3}, (const int[]){2}, MPI_INT), 8, 12, 1, DIMS(12), DIMS(1), 4);
    EXPECT(indexed_block(1, 4, (const int[]){1}, MPI_DOUBLE), 8, 32, 1, DIMS(32), DIMS(1), 16);
    EXPECT(strct(1, (const int[]){3}, (const MPI_Aint[]){8}, (const MPI_Datatype[]){MPI_INT}), 8,
           12, 1, DIMS(12), DIMS(1), 4);
    EXPECT(strct(1, (const int[]){3}, (const MPI_Aint[]){0},
                 (const MPI_Datatype[]){resized(MPI_INT, 0, 8)}),
           0, 24, 2, DIMS(4, 3), DIMS(1, 8), 4);
    EXPECT(hindexed(1, (const int[]){2}, (const MPI_Aint[]){-24}, v2), -24, 24, 3, DIMS(4, 2, 2),
           DIMS(1, 8, 12), 4);
    /* Decreasing displacements: a negative stride, not a contiguous run. */
    EXPECT_OUT(hindexed(3, (const int[]){1, 1, 1}, (const MPI_Aint[]){8, 4, 0}, MPI_INT), 8, 12, 2,
               DIMS(4, 3), DIMS(1, -4), 4, &b);
    CHECK_EQ_INT(b.lo, 0);
    CHECK_EQ_INT(b.hi, 12);
    EXPECT(indexed_block(3, 2, (const int[]){4, 2, 0}, MPI_INT), 16, 24, 2, DIMS(8, 3), DIMS(1, -8),
           8);
    EXPECT(hindexed_block(3, 1, (const MPI_Aint[]){8, 4, 0}, MPI_INT), 8, 12, 2, DIMS(4, 3),
           DIMS(1, -4), 4);
    /* Adjacent members merge into one run. */
    EXPECT_OUT(indexed(2, (const int[]){2, 3}, (const int[]){0, 2}, MPI_INT), 0, 20, 1, DIMS(20),
               DIMS(1), 4, &b);
    {
        tj_block_t c = block_of(contig(5, MPI_INT));
        CHECK(tj_block_equal(&b, &c));
    }
    EXPECT(hindexed(4, (const int[]){1, 1, 1, 1}, (const MPI_Aint[]){0, 4, 16, 20}, MPI_INT), 0, 24,
           2, DIMS(8, 2), DIMS(1, 16), 8);
    EXPECT(indexed(3, (const int[]){1, 2, 1}, (const int[]){0, 1, 3}, MPI_INT), 0, 16, 1, DIMS(16),
           DIMS(1), 16);
    /* Struct members of different named types but the same width: one shape. */
    EXPECT(strct(2, (const int[]){1, 1}, (const MPI_Aint[]){0, 4},
                 (const MPI_Datatype[]){MPI_INT, MPI_FLOAT}),
           0, 8, 1, DIMS(8), DIMS(1), 8);
    EXPECT(strct(2, (const int[]){1, 1}, (const MPI_Aint[]){0, 8},
                 (const MPI_Datatype[]){MPI_FLOAT, MPI_INT}),
           0, 12, 2, DIMS(4, 2), DIMS(1, 8), 4);
    EXPECT(strct(3, (const int[]){1, 1, 1}, (const MPI_Aint[]){0, 16, 32},
                 (const MPI_Datatype[]){MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE}),
           0, 40, 2, DIMS(8, 3), DIMS(1, 16), 8);
    /* Evenly spaced members that are themselves strided. */
    EXPECT(
        strct(2, (const int[]){1, 1}, (const MPI_Aint[]){0, 100}, (const MPI_Datatype[]){v2, v2}),
        0, 112, 3, DIMS(4, 2, 2), DIMS(1, 8, 100), 4);
    EXPECT(indexed_block(3, 1, (const int[]){0, 2, 4}, v2), 0, 60, 3, DIMS(4, 2, 3), DIMS(1, 8, 24),
           4);
}

static void test_indexed_irregular(void)
{
    MPI_Datatype v2 = vec(2, 1, 2, MPI_INT), v3 = vec(3, 1, 2, MPI_INT);

    /* Uneven displacements. */
    EXPECT_NOT_STRIDED(indexed_block(3, 1, (const int[]){0, 2, 5}, MPI_INT));
    EXPECT_NOT_STRIDED(hindexed_block(3, 2, (const MPI_Aint[]){0, 12, 32}, MPI_INT));
    EXPECT_NOT_STRIDED(hindexed(3, (const int[]){1, 1, 1}, (const MPI_Aint[]){0, 12, 32}, MPI_INT));
    /* Different block lengths that do not merge. */
    EXPECT_NOT_STRIDED(indexed(2, (const int[]){1, 2}, (const int[]){0, 4}, MPI_INT));
    EXPECT_NOT_STRIDED(indexed(3, (const int[]){1, 1, 2}, (const int[]){0, 4, 8}, MPI_INT));
    /* Adjacent members merge, and the merged run no longer matches the others. */
    EXPECT_NOT_STRIDED(hindexed(3, (const int[]){1, 1, 1}, (const MPI_Aint[]){0, 16, 20}, MPI_INT));
    /* Multi-member structs of different shapes. */
    EXPECT_NOT_STRIDED(strct(2, (const int[]){1, 1}, (const MPI_Aint[]){0, 8},
                             (const MPI_Datatype[]){MPI_INT, MPI_DOUBLE}));
    EXPECT_NOT_STRIDED(
        strct(2, (const int[]){1, 1}, (const MPI_Aint[]){0, 64}, (const MPI_Datatype[]){v2, v3}));
    EXPECT_NOT_STRIDED(strct(3, (const int[]){1, 1, 1}, (const MPI_Aint[]){0, 16, 32},
                             (const MPI_Datatype[]){MPI_DOUBLE, MPI_DOUBLE, MPI_INT}));
    /* Members of the same size but different shapes (a gap inside one, none in the other). */
    EXPECT_NOT_STRIDED(strct(2, (const int[]){1, 1}, (const MPI_Aint[]){0, 64},
                             (const MPI_Datatype[]){v2, contig(2, MPI_INT)}));
    EXPECT_NOT_STRIDED(strct(3, (const int[]){1, 1, 1}, (const MPI_Aint[]){0, 32, 64},
                             (const MPI_Datatype[]){MPI_DOUBLE, v2, MPI_DOUBLE}));
    /* A member that is not strided itself. */
    EXPECT_NOT_STRIDED(
        strct(1, (const int[]){1}, (const MPI_Aint[]){0}, (const MPI_Datatype[]){MPI_SHORT_INT}));
    EXPECT_NOT_STRIDED(strct(2, (const int[]){1, 1}, (const MPI_Aint[]){0, 8},
                             (const MPI_Datatype[]){MPI_SHORT_INT, MPI_SHORT_INT}));
}

static void test_empty(void)
{
    MPI_Datatype zero = contig(0, MPI_INT);

    /* Members of block length zero are skipped. */
    EXPECT(indexed(3, (const int[]){2, 0, 2}, (const int[]){0, 3, 5}, MPI_INT), 0, 28, 2,
           DIMS(8, 2), DIMS(1, 20), 4);
    EXPECT(indexed(3, (const int[]){2, 0, 2}, (const int[]){0, 10, 5}, MPI_INT), 0, 28, 2,
           DIMS(8, 2), DIMS(1, 20), 4);
    /* Intel MPI 2021 pads this struct's extent to 24, for the alignment of its empty double
     * member (an MPI's latitude); the others say 20. */
    if (!sysmpi_version_has("Intel(R) MPI"))
        EXPECT(strct(3, (const int[]){1, 0, 1}, (const MPI_Aint[]){0, 4, 16},
                     (const MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_INT}),
               0, 20, 2, DIMS(4, 2), DIMS(1, 16), 4);
    /* So are members of a type that packs no bytes. */
    EXPECT(strct(2, (const int[]){1, 2}, (const MPI_Aint[]){0, 8},
                 (const MPI_Datatype[]){zero, MPI_INT}),
           8, 16, 1, DIMS(8), DIMS(1), 8);

    /* Types that pack nothing are not strided blocks. */
    EXPECT_NOT_STRIDED(zero);
    EXPECT_NOT_STRIDED(vec(0, 1, 2, MPI_INT));
    EXPECT_NOT_STRIDED(hvec(3, 0, 8, MPI_INT));
    EXPECT_NOT_STRIDED(contig(4, zero));
    EXPECT_NOT_STRIDED(indexed(2, (const int[]){0, 0}, (const int[]){0, 4}, MPI_INT));
    EXPECT_NOT_STRIDED(
        strct(1, (const int[]){0}, (const MPI_Aint[]){0}, (const MPI_Datatype[]){MPI_DOUBLE}));
    EXPECT_NOT_STRIDED(resized(zero, 0, 16));
}

static void test_darray(void)
{
    MPI_Datatype t;

    /* A block distribution of 16 ints over 4 processes is strided in fact, but darray is left
     * to the system MPI. */
    REQUIRE(MPI_Type_create_darray(4, 1, 1, (const int[]){16}, (const int[]){MPI_DISTRIBUTE_BLOCK},
                                   (const int[]){MPI_DISTRIBUTE_DFLT_DARG}, (const int[]){4},
                                   MPI_ORDER_C, MPI_INT, &t) == MPI_SUCCESS);
    EXPECT_NOT_STRIDED(keep(t));
    EXPECT_NOT_STRIDED(contig(2, t));
}

/* The paper's figure 2: A0 = 256, A1 = 512, A2 = 1024 bytes, E0 = 100, E1 = 13, E2 = 47, in
 * MPI_BYTE. The figure lists the C-order subarray sizes fastest first; MPI's C order puts the
 * fastest dimension last, so here they are written slowest first, which is the object of the
 * paper's figure 1. */
static void test_figure2(void)
{
    const int64_t plane_stride = 256 * 512, whole = 256 * 512 * 1024;
    MPI_Datatype plane1 = sub(2, (const int[]){512, 256}, (const int[]){13, 100},
                              (const int[]){0, 0}, MPI_ORDER_C, MPI_BYTE);
    MPI_Datatype cuboid1 = vec(47, 1, 1, plane1);
    MPI_Datatype row2 = vec(100, 1, 1, MPI_BYTE);
    MPI_Datatype plane2 = hvec(13, 1, 256, row2);
    MPI_Datatype cuboid2 = hvec(47, 1, plane_stride, plane2);
    MPI_Datatype cuboid3 = sub(3, (const int[]){1024, 512, 256}, (const int[]){47, 13, 100},
                               (const int[]){0, 0, 0}, MPI_ORDER_C, MPI_BYTE);
    tj_block_t b1, b2, b3;
    tj_ir_t i1, i2, i3;

    /* The same bytes in the same order; the extents differ, as the paper notes, because each
     * construction ends its object at a different place. */
    EXPECT_OUT(cuboid1, 0, 47 * plane_stride, 3, DIMS(100, 13, 47), DIMS(1, 256, plane_stride), 4,
               &b1);
    EXPECT_OUT(cuboid2, 0, 46 * plane_stride + 12 * 256 + 100, 3, DIMS(100, 13, 47),
               DIMS(1, 256, plane_stride), 4, &b2);
    EXPECT_OUT(cuboid3, 0, whole, 3, DIMS(100, 13, 47), DIMS(1, 256, plane_stride), 4, &b3);
    CHECK(same_layout(&b1, &b2) && same_layout(&b2, &b3));
    CHECK(!tj_block_equal(&b1, &b2) && !tj_block_equal(&b2, &b3));

    /* Given the same extent, the three are one block and one canonical IR. */
    REQUIRE(tj_translate_block(resized(cuboid1, 0, whole), &b1, &i1) == TJ_OK);
    REQUIRE(tj_translate_block(resized(cuboid2, 0, whole), &b2, &i2) == TJ_OK);
    REQUIRE(tj_translate_block(cuboid3, &b3, &i3) == TJ_OK);
    CHECK(tj_block_equal(&b1, &b2));
    CHECK(tj_block_equal(&b2, &b3));
    CHECK(tj_canon_equal(&i1, &i2));
    CHECK(tj_canon_equal(&i2, &i3));
}

/* One construction of a row, plane or cuboid and its MPI extent. */
typedef struct {
    MPI_Datatype type;
    int64_t extent;
} variant_t;

/* All variants have the block start=0 with the given counts and strides and their own extent;
 * pairs are tj_block_equal exactly when their extents agree, and all are once resized to
 * `common`. */
static void check_variants(const variant_t *v, int n, int ndims, const int64_t *counts,
                           const int64_t *strides, int64_t common, int line)
{
    tj_block_t b[32], r0, r;
    REQUIRE(n <= 32);
    for (int i = 0; i < n; i++) {
        int before = check_failures;
        expect_block(v[i].type, 0, v[i].extent, ndims, counts, strides, 4, line, &b[i]);
        if (check_failures != before)
            fprintf(stderr, "  (variant %d)\n", i);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (tj_block_equal(&b[i], &b[j]) != (v[i].extent == v[j].extent)) {
                fprintf(stderr, "%s:%d: CHECK failed: variants %d and %d\n", __FILE__, line, i, j);
                check_failures++;
            }
    r0 = block_of(resized(v[0].type, 0, common));
    for (int i = 1; i < n; i++) {
        r = block_of(resized(v[i].type, 0, common));
        if (!tj_block_equal(&r0, &r)) {
            fprintf(stderr, "%s:%d: CHECK failed: variant %d resized\n", __FILE__, line, i);
            check_failures++;
        }
    }
}

/* Section 2 of the paper: rows of E0 = 5 floats, planes of E1 = 3 rows A0 = 32 bytes apart,
 * cuboids of E2 = 2 planes A0 * A1 = 128 bytes apart, in an allocation of A1 = 4 rows and
 * A2 = 3 planes. The paper gives subarray sizes in bytes for MPI_FLOAT; here they are in
 * elements (A0 / 4 = 8 floats). */
static void test_row_plane_cuboid(void)
{
    enum { E0 = 5, E1 = 3, E2 = 2, A0 = 32, A1 = 4, A2 = 3, AF = A0 / 4 };
    MPI_Datatype row_c = contig(E0, MPI_FLOAT), row_cb = contig(E0 * 4, MPI_BYTE),
                 row_v = vec(1, E0, 1, MPI_FLOAT), row_vb = vec(E0, 4, 4, MPI_BYTE),
                 row_hb = hvec(E0 * 4, 1, 1, MPI_BYTE),
                 row_s = sub(1, (const int[]){AF}, (const int[]){E0}, (const int[]){0}, MPI_ORDER_C,
                             MPI_FLOAT),
                 row_sb = sub(1, (const int[]){A0}, (const int[]){E0 * 4}, (const int[]){0},
                              MPI_ORDER_C, MPI_BYTE);
    const variant_t rows[] = {{row_c, 20},  {row_cb, 20}, {row_v, 20}, {row_vb, 20},
                              {row_hb, 20}, {row_s, A0},  {row_sb, A0}};
    const int64_t plane_ext = (E1 - 1) * A0 + E0 * 4; /* ends at the last row's data */
    MPI_Datatype plane_v = vec(E1, E0, AF, MPI_FLOAT), plane_vb = vec(E1, E0 * 4, A0, MPI_BYTE),
                 plane_s = sub(2, (const int[]){A1, AF}, (const int[]){E1, E0}, (const int[]){0, 0},
                               MPI_ORDER_C, MPI_FLOAT),
                 plane_sb = sub(2, (const int[]){A1, A0}, (const int[]){E1, E0 * 4},
                                (const int[]){0, 0}, MPI_ORDER_C, MPI_BYTE),
                 plane_hc = hvec(E1, 1, A0, row_c), plane_hv = hvec(E1, 1, A0, row_v),
                 plane_hvb = hvec(E1, 1, A0, row_vb), plane_hhb = hvec(E1, 1, A0, row_hb),
                 plane_vs = vec(E1, 1, 1, row_s), plane_vsb = vec(E1, 1, 1, row_sb),
                 plane_ss = sub(1, (const int[]){A1}, (const int[]){E1}, (const int[]){0},
                                MPI_ORDER_C, row_s);
    const variant_t planes[] = {
        {plane_v, plane_ext},   {plane_vb, plane_ext},  {plane_s, A0 * A1},
        {plane_sb, A0 * A1},    {plane_hc, plane_ext},  {plane_hv, plane_ext},
        {plane_hvb, plane_ext}, {plane_hhb, plane_ext}, {plane_vs, E1 * A0},
        {plane_vsb, E1 * A0},   {plane_ss, A0 * A1}};
    const int64_t stride2 = A0 * A1;
    const variant_t cuboids[] = {
        {hvec(E2, 1, stride2, plane_v), stride2 + plane_ext},
        {hvec(E2, 1, stride2, plane_hc), stride2 + plane_ext},
        {hvec(E2, 1, stride2, hvec(E1, 1, A0, contig(E0, MPI_FLOAT))), stride2 + plane_ext},
        {hvec(E2, 1, stride2, plane_vs), stride2 + E1 * A0},
        {hvec(E2, 1, stride2, plane_s), stride2 + A0 * A1},
        {vec(E2, 1, 1, plane_s), E2 * A0 * A1},
        {sub(3, (const int[]){A2, A1, AF}, (const int[]){E2, E1, E0}, (const int[]){0, 0, 0},
             MPI_ORDER_C, MPI_FLOAT),
         A0 * A1 * A2},
        {sub(3, (const int[]){A2, A1, A0}, (const int[]){E2, E1, E0 * 4}, (const int[]){0, 0, 0},
             MPI_ORDER_C, MPI_BYTE),
         A0 * A1 * A2},
        {sub(3, (const int[]){AF, A1, A2}, (const int[]){E0, E1, E2}, (const int[]){0, 0, 0},
             MPI_ORDER_FORTRAN, MPI_FLOAT),
         A0 * A1 * A2},
        /* Subarrays of vectors: of rows as vectors padded to the row pitch, and of planes. */
        {sub(2, (const int[]){A2, A1}, (const int[]){E2, E1}, (const int[]){0, 0}, MPI_ORDER_C,
             resized(row_v, 0, A0)),
         A0 * A1 * A2},
        {sub(1, (const int[]){A2}, (const int[]){E2}, (const int[]){0}, MPI_ORDER_C,
             resized(plane_v, 0, stride2)),
         A0 * A1 * A2},
        {sub(1, (const int[]){A2}, (const int[]){E2}, (const int[]){0}, MPI_ORDER_C, plane_s),
         A0 * A1 * A2},
    };

    check_variants(rows, (int)(sizeof(rows) / sizeof(rows[0])), 1, DIMS(20), DIMS(1), A0, __LINE__);
    check_variants(planes, (int)(sizeof(planes) / sizeof(planes[0])), 2, DIMS(20, 3), DIMS(1, A0),
                   A0 * A1, __LINE__);
    check_variants(cuboids, (int)(sizeof(cuboids) / sizeof(cuboids[0])), 3, DIMS(20, 3, 2),
                   DIMS(1, A0, stride2), A0 * A1 * A2, __LINE__);

    /* A sub-cuboid away from the origin: the subarray's starts become the block's start, as
     * does the displacement of a one-member struct or hindexed_block around the hvector form. */
    {
        const int64_t start = 1 * stride2 + 1 * A0 + 2 * 4;
        MPI_Datatype hh = hvec(E2, 1, stride2, plane_hc);
        tj_block_t s, t, u;
        EXPECT_OUT(sub(3, (const int[]){A2, A1, AF}, (const int[]){E2, E1, E0},
                       (const int[]){1, 1, 2}, MPI_ORDER_C, MPI_FLOAT),
                   start, A0 * A1 * A2, 3, DIMS(20, 3, 2), DIMS(1, A0, stride2), 4, &s);
        EXPECT_OUT(
            strct(1, (const int[]){1}, (const MPI_Aint[]){start}, (const MPI_Datatype[]){hh}),
            start, stride2 + plane_ext, 3, DIMS(20, 3, 2), DIMS(1, A0, stride2), 4, &t);
        EXPECT_OUT(hindexed(1, (const int[]){1}, (const MPI_Aint[]){start}, hh), start,
                   stride2 + plane_ext, 3, DIMS(20, 3, 2), DIMS(1, A0, stride2), 4, &u);
        CHECK(same_layout(&s, &t) && tj_block_equal(&t, &u));
        EXPECT(hindexed_block(1, 1, (const MPI_Aint[]){start}, hh), start, stride2 + plane_ext, 3,
               DIMS(20, 3, 2), DIMS(1, A0, stride2), 4);
    }
}

static void test_not_equivalent(void)
{
    tj_block_t x, y, a, b;
    tj_ir_t ix, iy;
    MPI_Datatype v = vec(3, 1, 2, MPI_INT);

    /* A type and its transpose: the same bytes and extent, packed in another order. The
     * transposed block keeps its larger stride inside. */
    MPI_Datatype tx = hvec(3, 1, 64, hvec(2, 1, 8, MPI_INT));
    MPI_Datatype ty = hvec(2, 1, 8, hvec(3, 1, 64, MPI_INT));
    EXPECT_OUT(tx, 0, 140, 3, DIMS(4, 2, 3), DIMS(1, 8, 64), 4, &x);
    EXPECT_OUT(ty, 0, 140, 3, DIMS(4, 3, 2), DIMS(1, 64, 8), 4, &y);
    CHECK(!tj_block_equal(&x, &y));
    CHECK(x.size == y.size && x.lo == y.lo && x.hi == y.hi);
    REQUIRE(tj_translate_block(tx, &x, &ix) == TJ_OK);
    REQUIRE(tj_translate_block(ty, &y, &iy) == TJ_OK);
    CHECK(!tj_canon_equal(&ix, &iy));
    CHECK(x.disjoint && y.disjoint);

    /* The classic matrix transpose: columns of a 3 x 5 int matrix, each resized to one int, so
     * consecutive columns start 4 bytes apart. */
    EXPECT(contig(5, resized(vec(3, 1, 5, MPI_INT), 0, 4)), 0, 20, 3, DIMS(4, 3, 5), DIMS(1, 20, 4),
           4);
    EXPECT(vec(5, 1, 1, resized(vec(3, 1, 5, MPI_INT), 0, 4)), 0, 20, 3, DIMS(4, 3, 5),
           DIMS(1, 20, 4), 4);

    /* The same layout at different extents is a different block. */
    EXPECT_OUT(v, 0, 20, 2, DIMS(4, 3), DIMS(1, 8), 4, &a);
    EXPECT_OUT(resized(v, 0, 64), 0, 64, 2, DIMS(4, 3), DIMS(1, 8), 4, &b);
    CHECK(same_layout(&a, &b));
    CHECK(!tj_block_equal(&a, &b));
    /* ... and the same layout at a different displacement too. */
    EXPECT_OUT(strct(1, (const int[]){1}, (const MPI_Aint[]){4}, (const MPI_Datatype[]){v}), 4, 20,
               2, DIMS(4, 3), DIMS(1, 8), 4, &b);
    CHECK(!tj_block_equal(&a, &b));
}

/* Chains of nested hvectors whose strides grow by 3 never fold or flatten, so each level is a
 * dimension: 15 levels over a double are 16 dimensions, the most a block holds. */
static void test_depth(void)
{
    MPI_Datatype t = MPI_DOUBLE;
    int64_t counts[TJ_BLOCK_MAX_DIMS + 1], strides[TJ_BLOCK_MAX_DIMS + 1], stride = 8, extent = 8;
    tj_reason_t why;
    tj_ir_t ir;

    counts[0] = 8;
    strides[0] = 1;
    for (int d = 1; d < TJ_BLOCK_MAX_DIMS; d++) {
        stride *= 3;
        t = hvec(2, 1, stride, t);
        counts[d] = 2;
        strides[d] = stride;
        extent += stride;
    }
    expect_block(t, 0, extent, TJ_BLOCK_MAX_DIMS, counts, strides, 8, __LINE__, NULL);
    t = hvec(2, 1, stride * 3, t);
    EXPECT_NOT_STRIDED(t);
    CHECK_EQ_INT(tj_translate_ir(t, &ir, &why), TJ_OK);
    CHECK_EQ_INT(ir.n, TJ_BLOCK_MAX_DIMS + 1);

    /* Levels that fold away do not count: twenty dups of one int, each wrapped in a contiguous
     * of one element, forty levels in all. */
    t = MPI_INT;
    for (int i = 0; i < 20; i++)
        t = contig(1, dup(t));
    EXPECT(t, 0, 4, 1, DIMS(4), DIMS(1), 4);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_named();
    test_contiguous();
    test_vector();
    test_hvector();
    test_large_strides();
    test_subarray();
    test_resized();
    test_dup();
    test_indexed_uniform();
    test_indexed_irregular();
    test_empty();
    test_darray();
    test_figure2();
    test_row_plane_cuboid();
    test_not_equivalent();
    test_depth();
    while (nkept > 0)
        MPI_Type_free(&kept[--nkept]);
    MPI_Finalize();
    CHECK_DONE();
}
