/* SPDX-License-Identifier: BSD-3-Clause */
/* The oracle: random nested datatypes packed and unpacked by the engine's CPU packer and by the
 * system MPI's PMPI_Pack / PMPI_Unpack, compared byte for byte in poisoned buffers.
 *
 *   test_oracle [--seed N] [--types N] [--depth N] [--verbose]
 *
 * Objects whose footprint is small are poisoned and compared whole. Objects with strides beyond
 * 2^31 live in sparse mappings (MAP_NORESERVE): untouched pages read as zero in both buffers, so
 * only the pages either side touched (mincore) are compared. Hand-made types of evenly spaced
 * members come first: their layouts must have the parts folding gives them. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "randtype.h"
#include "region.h"
#include "type/cpu.h"
#include "type/flatten.h"
#include "type/translate.h"
#include "util/common.h"
#include "options.h"

static void fill_pattern(unsigned char *p, size_t n, uint64_t salt)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 131 + salt * 7 + (i >> 8)) & 0xff);
}

static int mismatches;

static void report(const char *what, const char *desc, int count, int pos, int64_t where)
{
    if (mismatches++ < 10)
        fprintf(stderr, "MISMATCH %s: type %s count=%d position=%d first difference at %lld\n",
                what, desc, count, pos, (long long)where);
}

/* Instruction sets the strided blocks are packed with: every level this processor runs. */
static int isa_levels = 1;
static const char *pack_names[] = {"pack", "pack (avx2)", "pack (avx512)"};
static const char *unpack_names[] = {"unpack", "unpack (avx2)", "unpack (avx512)"};

/* One type, by its strided block (with the loops of instruction set @p isa) or else by its
 * layout: pack and unpack `count` objects at packed position `pos`. */
static void check_type_isa(MPI_Datatype type, const tj_block_t *block, const tj_layout_t *layout,
                           tj_cpu_isa_t isa, const char *desc, int count, int pos, uint64_t salt)
{
    tj_cpu_plan_t plan;
    MPI_Aint tlb, text, lb, ext;
    MPI_Count size;
    int64_t lo, hi, n, where = 0;
    region_t src, a, b;
    unsigned char *pattern, *p1, *p2;
    int outsize, pos1 = pos;

    MPI_Type_get_true_extent(type, &tlb, &text);
    MPI_Type_get_extent(type, &lb, &ext);
    MPI_Type_size_x(type, &size);
    n = (int64_t)count * size;
    lo = tlb + ((count - 1) * ext < 0 ? (count - 1) * ext : 0);
    hi = tlb + text + ((count - 1) * ext > 0 ? (count - 1) * ext : 0);
    outsize = pos + (int)n + 16;

    pattern = malloc((size_t)outsize);
    p1 = malloc((size_t)outsize);
    p2 = malloc((size_t)outsize);
    REQUIRE(pattern && p1 && p2);
    fill_pattern(pattern, (size_t)outsize, salt);

    /* Source: a dense footprint gets a pattern everywhere; a sparse one gets the pattern
     * through PMPI_Unpack, which touches exactly the typemap. */
    region_open(&src, lo, hi);
    if (src.dense) {
        fill_pattern((unsigned char *)src.map, src.map_len, salt + 1);
    } else {
        int p = 0;
        REQUIRE(PMPI_Unpack(pattern, outsize, &p, src.origin, count, type, MPI_COMM_SELF) ==
                MPI_SUCCESS);
    }

    /* Pack. */
    memset(p1, POISON, (size_t)outsize);
    memset(p2, POISON, (size_t)outsize);
    REQUIRE(PMPI_Pack(src.origin, count, type, p1, outsize, &pos1, MPI_COMM_SELF) == MPI_SUCCESS);
    CHECK_EQ_INT(pos1, pos + n);
    if (layout != NULL) {
        tj_cpu_pack_layout(layout, src.origin, count, p2 + pos);
    } else {
        tj_cpu_plan_isa(block, isa, &plan);
        tj_cpu_pack_plan(block, &plan, src.origin, count, p2 + pos);
    }
    if (memcmp(p1, p2, (size_t)outsize) != 0) {
        for (int i = 0; i < outsize; i++)
            if (p1[i] != p2[i]) {
                where = i;
                break;
            }
        report(pack_names[isa], desc, count, pos, where);
    }
    region_close(&src);

    /* Unpack. */
    region_open(&a, lo, hi);
    region_open(&b, lo, hi);
    pos1 = pos;
    REQUIRE(PMPI_Unpack(pattern, outsize, &pos1, a.origin, count, type, MPI_COMM_SELF) ==
            MPI_SUCCESS);
    CHECK_EQ_INT(pos1, pos + n);
    if (layout != NULL)
        tj_cpu_unpack_layout(layout, pattern + pos, count, b.origin);
    else
        tj_cpu_unpack_plan(block, &plan, pattern + pos, count, b.origin);
    if (!region_equal(&a, &b, &where))
        report(unpack_names[isa], desc, count, pos, where);
    region_close(&a);
    region_close(&b);
    free(pattern);
    free(p1);
    free(p2);
}

/* A layout, or a strided block with the loops of every instruction set this processor runs. */
static void check_type(MPI_Datatype type, const tj_block_t *block, const tj_layout_t *layout,
                       const char *desc, int count, int pos, uint64_t salt)
{
    for (int isa = isa_levels - 1; isa >= 0; isa--) {
        check_type_isa(type, block, layout, (tj_cpu_isa_t)isa, desc, count, pos, salt);
        if (layout != NULL)
            break;
    }
}

/* ---- every loop of the CPU packer -------------------------------------------------------------
 */

/* Vectors of bytes of every run length a loop of its own moves and of lengths between them, at
 * strides that make each loop run (the dense loop: runs close together; prefetching: rows of
 * long strides beyond the L2 cache), forwards and backwards, one object and several (the
 * objects a dimension of their own, or continuing the last one). Returns the loops used. */
static unsigned loop_cases(void)
{
    static const int runs[] = {1,   2,   3,   4,   5,   7,    8,    9,    12,   15,  16,
                               17,  24,  31,  32,  33,  48,   63,   64,   65,   100, 127,
                               128, 129, 200, 256, 257, 1000, 2047, 2048, 2049, 5000};
    unsigned used = 0;
    int cases = 0;

    for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
        const int run = runs[r];
        const int strides[] = {run + 1, 2 * run, 3 * run + 5, 64, 512, -2 * run, -512};
        for (size_t s = 0; s < sizeof(strides) / sizeof(strides[0]); s++) {
            const int stride = strides[s];
            if (tj_abs64(stride) <= run)
                continue;
            /* Some rows past the prefetch threshold (2 MiB of typed bytes and more), and short
             * runs close together past the span where unpacks leave the dense loop (8 MiB). */
            int64_t span = cases % 3 != 0 ? 4096 : run <= 4 && stride <= 8 ? (10 << 20) : (4 << 20);
            int64_t blocks = span / tj_abs64(stride) + 3;
            if (blocks * run > (8 << 20))
                blocks = (8 << 20) / run;
            MPI_Datatype v, t;
            MPI_Type_create_hvector((int)blocks, run, stride, MPI_BYTE, &v);
            /* Objects one after the other, or overlapping (the last write wins). */
            MPI_Type_create_resized(
                v, 0, cases % 2 ? (MPI_Aint)(blocks * tj_abs64(stride)) : run * 3 + 1, &t);
            REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
            tj_block_t block;
            tj_cpu_plan_t plan;
            char desc[128];
            if (tj_translate_block(t, &block, NULL) != TJ_OK) {
                fprintf(stderr, "loops: run %d stride %d not strided\n", run, stride);
                check_failures++;
            } else {
                tj_cpu_plan(&block, &plan);
                used |= 1u << plan.loop;
                if (plan.dense && stride > run && stride <= 64 - run)
                    used |= 1u << TJ_CPU_LOOP_DENSE;
                snprintf(desc, sizeof(desc), "hvector(%lld, %d, %d, MPI_BYTE)", (long long)blocks,
                         run, stride);
                for (int count = 1; count <= 3; count += 2)
                    check_type(t, &block, NULL, desc, count, count == 1 ? 0 : 5,
                               (uint64_t)(cases * 7 + count));
            }
            MPI_Type_free(&t);
            MPI_Type_free(&v);
            cases++;
        }
    }
    return used;
}

/* Transposes: `n2` columns of runs (`n1` runs of `run` bytes, `s1` apart), the columns `pitch`
 * bytes apart, as one object (an hvector of the column) or as n2 objects (the column resized to
 * the pitch), forwards and backwards, in rows within the caches and beyond the L2 (prefetching),
 * with group counts that leave a shorter last group. Rows closer than a line with runs a line
 * apart or more are moved in groups (tj_cpu_group_rows); an unpack groups only rows whose runs
 * of one step lie within the step, so that where rows overlap each other (pitch below the run)
 * or the next step the last write still wins. Sets whether packs and unpacks were grouped. */
static void group_cases(bool *packs, bool *unpacks)
{
    static const struct {
        int run, pitch, n1, s1, n2;
    } cases[] = {
        {16, 16, 37, 4096, 37},  {16, 16, 80, 16384, 19}, {8, 8, 64, 512, 21},
        {8, 8, 70, 8192, 9},     {1, 1, 33, 64, 70},      {3, 5, 40, 64, 12},
        {24, 24, 9, 1000, 5},    {32, 48, 12, 4096, 3},   {5, 63, 20, -4096, 2},
        {16, -16, 40, 2048, 17}, {8, 8, 30, -16384, 10},  {16, 8, 50, 4096, 11},
        {16, 16, 20, 64, 9},     {4, 4, 40, 100, 30},     {60, 8, 20, 64, 5},
        {8, 64, 20, 4096, 4},    {100, 16, 30, 4096, 9},
    };

    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const int run = cases[c].run, pitch = cases[c].pitch, n2 = cases[c].n2;
        for (int objects = 0; objects < 2; objects++) {
            MPI_Datatype col, t;
            tj_block_t block;
            tj_cpu_plan_t plan;
            char desc[160];
            int count = objects ? n2 : 1;
            if (objects && pitch < 0)
                continue;
            MPI_Type_create_hvector(cases[c].n1, run, cases[c].s1, MPI_BYTE, &col);
            if (objects)
                MPI_Type_create_resized(col, 0, pitch, &t);
            else
                MPI_Type_create_hvector(n2, 1, pitch, col, &t);
            REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
            snprintf(desc, sizeof(desc), "%d columns %d B apart of hvector(%d, %d, %d, MPI_BYTE)%s",
                     n2, pitch, cases[c].n1, run, cases[c].s1, objects ? " as objects" : "");
            if (tj_translate_block(t, &block, NULL) != TJ_OK) {
                fprintf(stderr, "groups: %s not strided\n", desc);
                check_failures++;
            } else {
                tj_cpu_plan(&block, &plan);
                const int64_t gp = tj_cpu_group_rows(&block, &plan, count, false);
                const int64_t gu = tj_cpu_group_rows(&block, &plan, count, true);
                /* A pitch of a line or more is no transpose: row by row. */
                CHECK(tj_abs64(pitch) < 64 || (gp == 1 && gu == 1));
                CHECK(gu == 1 || (gu - 1) * tj_abs64(pitch) + run <= tj_abs64(cases[c].s1));
                *packs |= gp > 1;
                *unpacks |= gu > 1;
                check_type(t, &block, NULL, desc, count, 3, (uint64_t)(c * 2 + (size_t)objects));
            }
            MPI_Type_free(&t);
            MPI_Type_free(&col);
        }
    }
}

/* ---- evenly spaced members, folded into strided parts -----------------------------------------
 */

#define FOLD_M     100000
#define FOLD_CASES 13

/* Hand-made case @p c: members that are evenly spaced runs or blocks, with a member elsewhere
 * or a second stretch. Its type (not committed), name, the parts its layout must have, and its
 * members: the parts it had before folding (none of them continue one another). */
static MPI_Datatype fold_case(int c, const char **name, int64_t *parts, int64_t *members)
{
    static int bl[FOLD_M], d[FOLD_M];
    static MPI_Aint bd[FOLD_M];
    MPI_Datatype t = MPI_DATATYPE_NULL, v, ty[24];
    int n = 0;

    *parts = 2;
    switch (c) {
    case 0:
    case 1:
    case 2:
        n = FOLD_M;
        for (int i = 0; i < n; i++) {
            bl[i] = 1;
            d[i] = 3 * i + (c == 2 ? i % 2 : 0);
        }
        if (c == 0)
            d[n - 1] += 1;
        if (c == 1)
            d[0] = -5;
        if (c == 2)
            *parts = n;
        *name = c == 0   ? "indexed: 99,999 ints 3 ints apart, the last one int further"
                : c == 1 ? "indexed: one int before 99,999 ints 3 ints apart"
                         : "indexed: 100,000 ints 3 ints apart, every odd one an int further";
        MPI_Type_indexed(n, bl, d, MPI_INT, &t);
        break;
    case 3:
    case 4:
        n = c == 3 ? 8 : 9;
        for (int i = 0; i < n; i++) {
            bl[i] = 2;
            d[i] = 5 * i;
        }
        d[n - 1] = 100;
        *parts = c == 3 ? 8 : 2;
        *name = c == 3 ? "indexed: 7 pairs of ints evenly spaced, then one elsewhere (not folded)"
                       : "indexed: 8 pairs of ints evenly spaced, then one elsewhere";
        MPI_Type_indexed(n, bl, d, MPI_INT, &t);
        break;
    case 5:
        n = 100;
        for (int i = 0; i < n; i++) {
            bl[i] = 3;
            d[i] = i < 50 ? 5 * i : 300 + 7 * (i - 50);
        }
        *name = "indexed: 50 blocks of 3 ints 5 apart, then 50 7 apart";
        MPI_Type_indexed(n, bl, d, MPI_INT, &t);
        break;
    case 6:
    case 7:
        n = 41;
        MPI_Type_vector(3, 2, 5, MPI_FLOAT, &v);
        for (int i = 0; i < n; i++) {
            bl[i] = c == 6 ? 1 : 2;
            bd[i] = (c == 6 ? 256 : 512) * (MPI_Aint)i;
        }
        bd[n - 1] = bd[n - 2] + 8;
        *name = c == 6 ? "hindexed: 40 vectors of floats 256 bytes apart, then one elsewhere"
                       : "hindexed: 40 pairs of vectors 512 bytes apart, then one elsewhere";
        MPI_Type_create_hindexed(n, bl, bd, v, &t);
        MPI_Type_free(&v);
        break;
    case 8:
        n = 21;
        for (int i = 0; i < n; i++) {
            bl[i] = 4;
            d[i] = 2 * i;
        }
        d[n - 1] = 100;
        *name = "indexed: 20 blocks of 4 ints 2 ints apart (overlapping), then one elsewhere";
        MPI_Type_indexed(n, bl, d, MPI_INT, &t);
        break;
    case 9:
        n = 11;
        for (int i = 0; i < n; i++) {
            bl[i] = 2;
            d[i] = i < 10 ? 4 : 0;
        }
        *name = "indexed: 10 times the same 2 ints, then 2 others";
        MPI_Type_indexed(n, bl, d, MPI_INT, &t);
        break;
    case 10:
        n = 31;
        for (int i = 0; i < n; i++) {
            bl[i] = 1;
            d[i] = i < 30 ? 100 - 3 * i : 200;
        }
        *name = "indexed: 30 doubles at decreasing places 3 doubles apart, then one further";
        MPI_Type_indexed(n, bl, d, MPI_DOUBLE, &t);
        break;
    case 11:
        n = 24;
        for (int i = 0; i < n; i++) {
            bl[i] = 1;
            bd[i] = i < 12 ? 16 * i : 200 + 24 * (i - 12);
            ty[i] = i < 12 ? MPI_INT : MPI_DOUBLE;
        }
        *name = "struct: 12 ints 16 bytes apart, then 12 doubles 24 bytes apart";
        MPI_Type_create_struct(n, bl, bd, ty, &t);
        break;
    case 12:
        n = 9;
        for (int i = 0; i < n; i++) {
            bl[i] = 1;
            d[i] = 3 * i;
        }
        d[n - 1] = 40;
        MPI_Type_indexed(n, bl, d, MPI_FLOAT, &v);
        *name = "contiguous: 3 of 8 floats 3 apart and one elsewhere (a frame)";
        MPI_Type_contiguous(3, v, &t);
        MPI_Type_free(&v);
        break;
    }
    *members = n;
    return t;
}

/* The layout of the committed type @p t, which is not one strided block (NULL: none). */
static tj_layout_t *layout_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Count size;
    tj_block_t block;
    tj_layout_t *l = NULL;
    tj_reason_t why;

    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_size_x(t, &size);
    CHECK(tj_translate_block_why(t, &block, NULL, &why) == TJ_ERR_NOT_STRIDED);
    CHECK(tj_flatten_commit(t, ext, size, why, &l, &why) == TJ_OK);
    return l;
}

/* The hand-made cases through the engine's layout packer: the part counts the folds must give,
 * and the bytes against the system MPI, for several counts and positions. */
static void fold_cases(void)
{
    for (int c = 0; c < FOLD_CASES; c++) {
        const char *name;
        int64_t parts, members;
        MPI_Datatype t = fold_case(c, &name, &parts, &members);
        tj_layout_t *l;
        char text[256] = "";

        REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
        if ((l = layout_of(t)) == NULL) {
            MPI_Type_free(&t);
            continue;
        }
        tj_layout_format(l, text, sizeof(text));
        printf("fold: %s: %lld members, %s\n", name, (long long)members, text);
        if (l->nparts != parts) {
            fprintf(stderr, "fold: %s: %lld parts, expected %lld\n", name, (long long)l->nparts,
                    (long long)parts);
            check_failures++;
        }
        for (int count = 1; count <= 3; count++)
            check_type(t, NULL, l, name, count, (count - 1) * 13, (uint64_t)(c * 3 + count));
        tj_layout_release(l);
        MPI_Type_free(&t);
    }
}

/* A type wrapped in a struct, hindexed or indexed of one member (a type at an absolute address
 * over MPI_BOTTOM, a shifted copy): the layout of the type it wraps, moved, its frame kept (one
 * copy), and one more frame dimension (several copies), not its frame taken apart into parts:
 * the kernel is the same. A darray of a struct {int; double} (a frame of 3 x 2 x 2 over two
 * runs). */
static void wrap_cases(void)
{
    int gs[2] = {10, 9}, ds[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, da[2] = {2, 3},
        ps[2] = {3, 3}, one = 1, two = 2, bl[2] = {0, 1}, dis[2] = {7, 3};
    MPI_Aint mdis[2] = {0, 8}, at = 4096, hdis[2] = {64, 8192};
    MPI_Datatype mt[2] = {MPI_INT, MPI_DOUBLE}, pair, inner, w[4];
    const char *names[4] = {"struct of one darray at 4096", "struct of two darrays at 4096",
                            "hindexed of one darray (an empty member first)",
                            "indexed of one darray at 3 extents"};
    tj_layout_t *base = NULL;

    MPI_Type_create_struct(2, (int[]){1, 1}, mdis, mt, &pair);
    MPI_Type_create_darray(9, 4, 2, gs, ds, da, ps, MPI_ORDER_C, pair, &inner);
    MPI_Type_create_struct(1, &one, &at, &inner, &w[0]);
    MPI_Type_create_struct(1, &two, &at, &inner, &w[1]);
    MPI_Type_create_hindexed(2, bl, hdis, inner, &w[2]);
    MPI_Type_indexed(2, bl, dis, inner, &w[3]);
    MPI_Type_commit(&inner);
    for (int i = -1; i < 4; i++) {
        MPI_Datatype t = i < 0 ? inner : w[i];
        tj_layout_t *l;

        if (i >= 0)
            REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
        REQUIRE((l = layout_of(t)) != NULL);
        if (i < 0) {
            base = l;
        } else {
            /* A probed darray (an MPI that builds them otherwise) has no frame to keep. */
            if (!base->probed &&
                (l->nparts != base->nparts || l->nframe != base->nframe + (i == 1) ||
                 l->nshapes != base->nshapes)) {
                char a[256], b[256];
                tj_layout_format(base, a, sizeof(a));
                tj_layout_format(l, b, sizeof(b));
                fprintf(stderr, "wrap: %s: %s, the darray's %s\n", names[i], b, a);
                check_failures++;
            }
            for (int count = 1; count <= 2; count++)
                check_type(t, NULL, l, names[i], count, count * 5, (uint64_t)(i * 2 + count));
            tj_layout_release(l);
            MPI_Type_free(&w[i]);
        }
    }
    tj_layout_release(base);
    MPI_Type_free(&inner);
    MPI_Type_free(&pair);
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    long types = 2000, strided = 0, layouts = 0, probed = 0, drawn = 0, huge = 0, empty = 0;
    long reasons[64] = {0};
    bool verbose = false;
    rt_options_t opt = {
        .max_depth = 4, .max_size = 1 << 20, .max_span = (int64_t)1 << 34, .huge_percent = 5};
    rt_rng_t rng;
    char desc[8192];

    MPI_Init(&argc, &argv);
    options_read(argc, argv,
                 (const opt_t[]){{"--seed", OPT_U64, &seed},
                                 {"--types", OPT_LONG, &types},
                                 {"--depth", OPT_INT, &opt.max_depth},
                                 {"--large", OPT_INT, &opt.large_percent},
                                 {"--verbose", OPT_FLAG, &verbose},
                                 {NULL}});
    if (rt_large_unavailable(&opt)) {
        MPI_Finalize();
        return 77;
    }
    isa_levels = (int)tj_cpu_isa_best() + 1;
    unsigned loops = loop_cases();
    printf("loops: instruction sets 0 to %d, loops used 0x%x\n", isa_levels - 1, loops);
    /* Every run-length loop, and the dense one where the processor has it. */
    CHECK((loops & ((1u << TJ_CPU_LOOP_DENSE) - 1)) == (1u << TJ_CPU_LOOP_DENSE) - 1);
    CHECK(tj_cpu_isa_best() < TJ_CPU_ISA_AVX512 || (loops & (1u << TJ_CPU_LOOP_DENSE)) != 0);
    bool grouped_packs = false, grouped_unpacks = false;
    group_cases(&grouped_packs, &grouped_unpacks);
    CHECK(grouped_packs && grouped_unpacks);
    fold_cases();
    wrap_cases();
    rt_seed(&rng, seed);
    for (long t = 0; t < types; t++) {
        MPI_Datatype type = rt_draw_type(&rng, &opt, desc, sizeof(desc));
        tj_block_t block;
        drawn++;
        int count = (int)rt_range(&rng, 1, 4),
            pos = (int)rt_range(&rng, 0, 3) * 8 + (int)rt_range(&rng, 0, 1) * 3;
        uint64_t salt = rt_next(&rng);
        tj_layout_t *layout = NULL;
        tj_reason_t why = TJ_REASON_NONE;
        tj_status_t st = tj_translate_block_why(type, &block, NULL, &why);
        if (st == TJ_OK) {
            strided++;
            if (block.hi - block.lo > DENSE_LIMIT || block.extent > DENSE_LIMIT)
                huge++;
            if (verbose)
                printf("%s\n", desc);
            check_type(type, &block, NULL, desc, count, pos, salt);
        } else if (st == TJ_ERR_NOT_STRIDED) {
            /* Not one block: its layout, as a commit makes it (through the contents here, or
             * probed from the system MPI). */
            MPI_Aint lb, ext;
            MPI_Count size;
            MPI_Type_get_extent(type, &lb, &ext);
            MPI_Type_size_x(type, &size);
            st = tj_flatten_commit(type, ext, size, why, &layout, &why);
            if (st == TJ_OK) {
                layouts++;
                probed += layout->probed;
                if (verbose)
                    printf("layout %s\n", desc);
                check_type(type, NULL, layout, desc, count, pos, salt);
                tj_layout_release(layout);
            } else if (size == 0) {
                empty++;
            } else {
                reasons[why]++;
                if (verbose || why == TJ_REASON_SIZE || why == TJ_REASON_BLOCK)
                    printf("no layout (%s, %s): %s\n", tj_reason_string(why), tj_status_string(st),
                           desc);
            }
        }
        MPI_Type_free(&type);
    }
    printf("seed %llu: %ld types, %ld strided (%ld with footprints beyond 16 MiB), %ld layouts "
           "(%ld probed), %ld empty, %d mismatches\n",
           (unsigned long long)seed, drawn, strided, huge, layouts, probed, empty, mismatches);
    for (int r = 0; r < 64; r++)
        if (reasons[r] > 0)
            printf("  neither strided nor a layout (%s): %ld\n", tj_reason_string((tj_reason_t)r),
                   reasons[r]);
    CHECK(mismatches == 0);
    /* The generator leans towards strided types; a collapse of this share means the engine
     * stopped recognising them. */
    CHECK(strided * 2 >= drawn);
    MPI_Finalize();
    CHECK_DONE();
}
