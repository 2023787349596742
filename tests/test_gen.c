/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit checks of the kernel generator: the constants and name in the source, argument checks,
 * launch geometry limits and coverage, generic parameters, the template hash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jit/gen.h"
#include "jit/parts.h"
#include "type/layout.h"
#include "type/layout_builder.h"

static tj_block_t make(int64_t start, int64_t extent, int ndims, const int64_t *counts,
                       const int64_t *strides)
{
    tj_block_t b;
    REQUIRE(tj_block_make(start, extent, ndims, counts, strides, &b) == TJ_OK);
    return b;
}

static char *source(const tj_block_t *b, int word, tj_dir_t dir, const char *name)
{
    char *src = NULL;
    REQUIRE(tj_gen_source(b, word, dir, name, &src) == TJ_OK);
    REQUIRE(src != NULL);
    return src;
}

static void check_contains(const char *text, const char *what)
{
    if (strstr(text, what) == NULL) {
        fprintf(stderr, "generated source lacks \"%s\"\n", what);
        check_failures++;
    }
}

static void check_source(void)
{
    const int64_t counts[] = {64, 16, 3}, strides[] = {1, 512, -10240};
    tj_block_t b = make(-4096, 40960, 3, counts, strides);
    char *pack16 = source(&b, 16, TJ_DIR_PACK, "tj_pack_a");
    char *unpack16 = source(&b, 16, TJ_DIR_UNPACK, "tj_unpack_a");
    char *pack8 = source(&b, 8, TJ_DIR_PACK, "tj_pack_a");
    char *pack4 = source(&b, 4, TJ_DIR_PACK, "tj_pack_a");
    char text[256];

    CHECK_EQ_INT(b.word, 16);
    check_contains(pack16, "extern \"C\" __global__ void tj_pack_a(");
    check_contains(unpack16, "extern \"C\" __global__ void tj_unpack_a(");
    check_contains(pack16, "long long count");
    check_contains(pack16, "-4096LL");
    check_contains(pack16, "40960LL");
    check_contains(pack16, "512LL");
    check_contains(pack16, "-10240LL");
    check_contains(pack16, "uint4");
    check_contains(pack8, "unsigned long long word_t");
    check_contains(pack4, "unsigned int word_t");
    check_contains(pack16, "WORDS = 192u"); /* 64 * 16 * 3 bytes in 16-byte words */
    check_contains(pack8, "WORDS = 384u");
    check_contains(pack16, "pack kernel");
    check_contains(unpack16, "unpack kernel");
    tj_block_format(&b, text, sizeof(text));
    check_contains(pack16, text); /* the header comment states the block */
    check_contains(pack16, "W = 16 bytes");
    CHECK(strstr(pack16, "@") == NULL); /* every placeholder was filled */
    CHECK(strcmp(pack16, unpack16) != 0);
    CHECK(strcmp(pack16, pack8) != 0);
    CHECK(strcmp(pack8, pack4) != 0);
    free(pack16);
    free(unpack16);
    free(pack8);
    free(pack4);
}

/* Nested contiguous dimensions merge into one: no divisions remain. */
static void check_merge(void)
{
    const int64_t counts[] = {8, 4, 3}, strides[] = {1, 8, 32};
    const int64_t counts2[] = {8, 1, 5}, strides2[] = {1, 12344, 8};
    tj_block_t b = make(0, 96, 3, counts, strides), b2 = make(0, 40, 3, counts2, strides2);
    char *src = source(&b, 8, TJ_DIR_PACK, "k"), *src2 = source(&b2, 8, TJ_DIR_PACK, "k");

    CHECK(strstr(src, "q /=") == NULL);
    CHECK(strstr(src, "q %") == NULL);
    CHECK(strstr(src2, "q /=") == NULL);
    CHECK(strstr(src2, "STRIDE_1 ") == NULL); /* the length-1 dimension is gone */
    free(src);
    free(src2);
}

/* The extremes of the type engine: 16 dimensions, negative and huge strides, INT64_MIN-free
 * 64-bit literals. */
static void check_extremes(void)
{
    int64_t counts[16], strides[16];
    char *src;

    for (int d = 0; d < 16; d++) {
        counts[d] = 2;
        strides[d] = d == 0 ? 1 : (d % 2 ? -((int64_t)1 << (d + 2)) : ((int64_t)1 << (d + 2)));
    }
    strides[15] = (int64_t)5 << 32;
    tj_block_t b = make(-((int64_t)3 << 33), (int64_t)1 << 40, 16, counts, strides);
    src = source(&b, 2, TJ_DIR_UNPACK, "tj_sixteen");
    check_contains(src, "STRIDE_15 = 21474836480LL");
    check_contains(src, "START = -25769803776LL");
    check_contains(src, "EXTENT = 1099511627776LL");
    check_contains(src, "COUNT_14 = 2u");
    free(src);
}

static void check_invalid(void)
{
    const int64_t counts[] = {12, 5}, strides[] = {1, 40};
    tj_block_t b = make(0, 200, 2, counts, strides);
    char *src = (char *)0x1;

    CHECK_EQ_INT(b.word, 4);
    CHECK_EQ_INT(tj_gen_source(&b, 8, TJ_DIR_PACK, "k", &src), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_gen_source(&b, 3, TJ_DIR_PACK, "k", &src), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_gen_source(&b, 4, TJ_DIR_PACK, "1k", &src), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_gen_source(&b, 4, TJ_DIR_PACK, "k-x", &src), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_gen_source(&b, 4, TJ_DIR_PACK, "k\"); evil(", &src), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_gen_source(&b, 4, (tj_dir_t)7, "k", &src), TJ_ERR_INVALID);
    CHECK(src == (char *)0x1); /* outputs are written only on success */
    b.ndims = 0;
    CHECK_EQ_INT(tj_gen_source(&b, 1, TJ_DIR_PACK, "k", &src), TJ_ERR_INVALID);
    /* The geometry functions cannot fail; a refused block gets a harmless one-thread launch. */
    tj_launch_t l;
    tj_gen_launch(&b, 1, 10, &l);
    CHECK(l.grid[0] == 1 && l.grid[1] == 1 && l.block[0] == 1);
    tj_gen_generic_launch(&b, 1, 10, &l);
    CHECK(l.grid[0] == 1 && l.grid[2] == 1 && l.block[0] == 1);
}

static void check_launch_limits(const tj_launch_t *l)
{
    CHECK(l->grid[0] > 0 && l->grid[0] < 2147483648u);
    CHECK(l->grid[1] > 0 && l->grid[1] <= 65535);
    CHECK(l->grid[2] > 0 && l->grid[2] <= 65535);
    CHECK(l->block[0] > 0 && l->block[1] > 0 && l->block[2] > 0);
    CHECK((uint64_t)l->block[0] * l->block[1] * l->block[2] <= 1024);
}

/* Threads of the whole grid. */
static double grid_threads(const tj_launch_t *l)
{
    return (double)l->grid[0] * l->grid[1] * l->grid[2] * l->block[0] * l->block[1] * l->block[2];
}

static void check_geometry(void)
{
    const int64_t c1[] = {1}, s1[] = {1};
    const int64_t c2[] = {64, 100}, s2[] = {1, 512};
    const int64_t c3[] = {((int64_t)1 << 40)}, s3[] = {1};
    const int64_t c4[] = {24, 7, 5}, s4[] = {1, 100, 1000};
    const int64_t counts_list[] = {0,
                                   1,
                                   3,
                                   255,
                                   256,
                                   257,
                                   65535,
                                   65536,
                                   1 << 20,
                                   INT32_MAX,
                                   (int64_t)1 << 31,
                                   (int64_t)1 << 40};
    tj_block_t blocks[] = {make(0, 1, 1, c1, s1), make(0, 51200, 2, c2, s2),
                           make(0, (int64_t)1 << 40, 1, c3, s3), make(4, 5004, 3, c4, s4)};
    tj_launch_t l;

    for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
        for (int word = 1; word <= blocks[b].word; word *= 2) {
            for (size_t c = 0; c < sizeof(counts_list) / sizeof(counts_list[0]); c++) {
                int64_t count = counts_list[c];
                double words = (double)(blocks[b].size / word) * (double)(count ? count : 1);
                int per = tj_gen_words_per_thread(&blocks[b], word, 0);
                tj_gen_launch(&blocks[b], word, count, &l);
                check_launch_limits(&l);
                /* Without the caps, the grid holds a thread for every `per` words (narrow
                 * words: several per thread). */
                CHECK(per == (word == 1 ? 8 : word == 2 ? 4 : 1));
                if (l.grid[0] < 2147483647u && l.grid[1] < 65535)
                    CHECK(grid_threads(&l) * per >= words);
                /* ... and is not grossly larger than needed. */
                CHECK(grid_threads(&l) < 4 * words + 2048);

                tj_gen_generic_launch(&blocks[b], word, count, &l);
                check_launch_limits(&l);
                if (l.grid[0] < 2147483647u && l.grid[1] < 65535 && l.grid[2] < 65535)
                    CHECK(grid_threads(&l) * per >= words);
                CHECK(grid_threads(&l) < 4 * words + 2048);
            }
        }
    }
    /* The largest object count an MPI call can pass still fits the y limit. */
    tj_gen_launch(&blocks[1], 16, INT32_MAX, &l);
    CHECK_EQ_INT(l.grid[1], 65535);
}

/* Byte offset of word @p i of an object from the typed pointer by the generic kernels'
 * arguments, as the kernels compute it: 32-bit offsets from the object's lowest byte unless
 * p->wide, each quotient a multiply-high and a shift. */
static int64_t generic_offset(const tj_generic_params_t *p, uint32_t i)
{
    uint64_t off = (uint64_t)p->bias + (uint64_t)i * (uint64_t)p->stride;
    for (int d = 0; d < p->ndims - 1; d++) {
        uint32_t q = (uint32_t)(((uint64_t)i * p->dims[d].magic) >> 32) >> p->dims[d].shift;
        off += (uint64_t)q * (uint64_t)p->dims[d].weight;
    }
    if (!p->wide)
        off = (uint32_t)off;
    return (int64_t)((uint64_t)p->start + off);
}

/* The arguments reach every word of the block where it lies, in packed order. */
static void check_generic_walk(const tj_block_t *b, int word)
{
    int64_t idx[TJ_BLOCK_MAX_DIMS] = {0}, typed = b->start, bad = 0;
    tj_generic_params_t p;

    tj_gen_generic_params(b, word, &p);
    CHECK_EQ_INT(p.extent, b->extent);
    CHECK_EQ_INT(p.size, b->size);
    CHECK_EQ_INT(p.word, word);
    CHECK_EQ_INT(p.words, b->size / word);
    CHECK(p.ndims >= 1 && p.ndims <= b->ndims);
    /* Object 0's lowest byte, which the 32-bit offsets count from. */
    CHECK_EQ_INT(p.start, b->lo);
    for (uint32_t i = 0; i < p.words; i++) {
        bad += generic_offset(&p, i) != typed;
        /* The next word: the run first, then the block's dimensions, innermost first. */
        typed += word;
        if ((idx[0] += word) < b->counts[0])
            continue;
        typed -= b->counts[0];
        idx[0] = 0;
        for (int d = 1; d < b->ndims; d++) {
            typed += b->strides[d];
            if (++idx[d] < b->counts[d])
                break;
            typed -= b->strides[d] * b->counts[d];
            idx[d] = 0;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

static void check_generic(void)
{
    const int64_t counts[] = {24, 7, 5}, strides[] = {1, -100, (int64_t)3 << 32};
    const int64_t c2[] = {8, 3, 4, 2}, s2[] = {1, 8, 24, 1000};
    const int64_t c3[] = {3, 4096}, s3[] = {1, 9};
    const int64_t c4[] = {16}, s4[] = {1};
    const int64_t c5[] = {2, 3, 5}, s5[] = {1, -7, 1000};
    tj_block_t b = make(-77 * 8, 5008, 3, counts, strides);
    tj_generic_params_t p;
    char *src = NULL;

    CHECK_EQ_INT(sizeof(tj_generic_params_t), 296);
    for (int word = 1; word <= 8; word *= 2)
        check_generic_walk(&b, word);
    tj_gen_generic_params(&b, 4, &p);
    /* The run's 6 words, then the two outer dimensions: nothing merges. Word 0 is 600 bytes
     * above the lowest (the negative stride), and the object spans 12 GiB: 64-bit offsets. */
    CHECK_EQ_INT(p.ndims, 3);
    CHECK(p.stride == 4 && p.dims[0].weight == -100 - 6 * 4 &&
          p.dims[1].weight == ((int64_t)3 << 32) + 7 * 100);
    CHECK(p.bias == 600 && p.start == -77 * 8 - 600 && p.wide);
    /* Rows 8 bytes apart after a run of 8 bytes are one run; words of one element drop out. */
    tj_block_t merged = make(0, 2000, 4, c2, s2);
    for (int word = 1; word <= 8; word *= 2)
        check_generic_walk(&merged, word);
    tj_gen_generic_params(&merged, 8, &p);
    CHECK_EQ_INT(p.ndims, 2);
    CHECK(p.stride == 8 && p.dims[0].weight == 1000 - 12 * 8 && p.bias == 0 && !p.wide);
    tj_block_t odd = make(5, 3 * 4096 * 3, 2, c3, s3);
    check_generic_walk(&odd, 1);
    tj_block_t one = make(0, 16, 1, c4, s4);
    check_generic_walk(&one, 16);
    tj_gen_generic_params(&one, 16, &p);
    CHECK(p.ndims == 1 && p.words == 1 && p.bias == 0 && p.start == 0);
    /* A negative stride inside: the 32-bit offsets count from the lowest byte. */
    tj_block_t down = make(40, 5000, 3, c5, s5);
    for (int word = 1; word <= 2; word *= 2)
        check_generic_walk(&down, word);
    tj_gen_generic_params(&down, 1, &p);
    CHECK(p.ndims == 3 && p.bias == 14 && p.start == 26 && !p.wide);
    /* 32-bit offsets up to 4 GiB from the lowest byte, 64-bit ones beyond. */
    {
        const int64_t cw[] = {1, 2}, sw[] = {1, (int64_t)UINT32_MAX}, sx[] = {1, (int64_t)1 << 32};
        tj_block_t in = make(0, 1, 2, cw, sw), out = make(0, 1, 2, cw, sx);
        tj_gen_generic_params(&in, 1, &p);
        CHECK(!p.wide);
        check_generic_walk(&in, 1);
        tj_gen_generic_params(&out, 1, &p);
        CHECK(p.wide);
        check_generic_walk(&out, 1);
    }

    /* Fewer than 2^31 words per object: W counts. */
    {
        const int64_t big[] = {(int64_t)1 << 31}, almost[] = {((int64_t)1 << 31) - 1};
        tj_block_t bb = make(0, big[0], 1, big, s4), ba = make(0, almost[0], 1, almost, s4);
        CHECK(!tj_gen_generic_usable(&bb, 1));
        CHECK(tj_gen_generic_usable(&bb, 16));
        CHECK(tj_gen_generic_usable(&ba, 1));
        tj_gen_generic_params(&bb, 1, &p);
        CHECK(p.words == 0 && p.ndims == 1); /* refused: a launch would move nothing */
    }

    /* The magic numbers divide every word index below 2^31 exactly, for divisors of every size
     * the counts below a dimension can multiply to (below 2^30: that dimension has at least two
     * elements). */
    {
        const uint32_t divisors[] = {2,           3,
                                     5,           7,
                                     24,          100,
                                     641,         65535,
                                     65536,       65537,
                                     1u << 20,    (1u << 29) + 1,
                                     1000000007u, (1u << 30) - 1};
        long bad = 0;
        for (size_t i = 0; i < sizeof(divisors) / sizeof(divisors[0]); i++) {
            const uint32_t c = divisors[i];
            const uint32_t qs[] = {0,
                                   1,
                                   c - 1,
                                   c,
                                   c + 1,
                                   2 * c - 1,
                                   2 * c,
                                   65535,
                                   65536,
                                   123456789u,
                                   1u << 30,
                                   0x7ffffffeu,
                                   0x7fffffffu,
                                   0x7fffffffu / c * c,
                                   0x7fffffffu / c * c - 1};
            int64_t cd[2] = {c, 2}, sd[2] = {1, (int64_t)c + 1};
            tj_block_t d = make(0, 2 * (int64_t)c + 2, 2, cd, sd);
            tj_gen_generic_params(&d, 1, &p);
            CHECK(p.ndims == 2 && p.dims[0].weight == 1);
            for (size_t j = 0; j < sizeof(qs) / sizeof(qs[0]); j++) {
                uint32_t q = qs[j];
                uint32_t got = (uint32_t)(((uint64_t)q * p.dims[0].magic) >> 32) >> p.dims[0].shift;
                bad += got != q / c;
            }
            /* ... and every index near the top. */
            for (uint64_t q = 0x7fffffffu - 8192; q <= 0x7fffffffu; q++)
                bad += ((uint32_t)((q * p.dims[0].magic) >> 32) >> p.dims[0].shift) != q / c;
        }
        CHECK_EQ_INT(bad, 0);
    }
    for (int word = 1; word <= 16; word *= 2) {
        REQUIRE(tj_gen_generic_source(word, &src) == TJ_OK);
        check_contains(src, "extern \"C\" __global__ void tj_generic_pack(");
        check_contains(src, "extern \"C\" __global__ void tj_generic_unpack(");
        check_contains(src, word == 16 ? "typedef uint4 word_t;" : "word_t;");
        free(src);
    }
    CHECK_EQ_INT(tj_gen_generic_source(3, &src), TJ_ERR_INVALID);
}

static void check_hash(void)
{
    uint64_t h = tj_gen_template_hash();
    CHECK(h != 0);
    CHECK(h == tj_gen_template_hash());
}

/* Kernels with edges: the run, the object's bytes and the slots baked in; pieces of each word
 * from the edge word up to half of W; the same as tj_gen_source without edges; refused forms. */
static void check_edges(void)
{
    const int64_t counts[] = {4004, 64}, strides[] = {1, 4020};
    const int64_t short_counts[] = {12, 5}, short_strides[] = {1, 28};
    tj_block_t b = make(0, 64 * 4020, 2, counts, strides);
    tj_block_t sb = make(0, 140, 2, short_counts, short_strides);
    char *pack = NULL, *unpack = NULL, *plain = NULL, *same = NULL, *short_run = NULL;
    char *src = (char *)0x1;
    tj_launch_t l;

    CHECK_EQ_INT(b.word, 4);
    CHECK_EQ_INT(b.edges_word, 16);
    REQUIRE(tj_gen_edges_source(&b, 16, 4, TJ_DIR_PACK, "tj_pack", &pack) == TJ_OK);
    REQUIRE(tj_gen_edges_source(&b, 16, 4, TJ_DIR_UNPACK, "tj_unpack", &unpack) == TJ_OK);
    check_contains(pack, "typedef uint4 word_t");
    check_contains(pack, "RUN = 4004LL");
    check_contains(pack, "OBJECT_BYTES = 256256LL");
    check_contains(pack, "SLOTS = 251u"); /* (12 + 4004) / 16 windows at the most */
    check_contains(pack, "WORDS = 16064u");
    check_contains(pack, "*(unsigned int *)(to + x)");
    check_contains(pack, "*(unsigned long long *)(to + x)");
    check_contains(pack, "if (x != 0u)");
    check_contains(pack, "W = 16 bytes");
    check_contains(pack, "Edges:");
    CHECK(strstr(pack, "unsigned short *") == NULL); /* no piece below the edge word */
    CHECK(strstr(pack, "@") == NULL);
    CHECK(strcmp(pack, unpack) != 0);
    CHECK_EQ_INT(tj_gen_words_per_thread(&b, 16, 4), 1);
    tj_gen_edges_launch(&b, 16, 4, 3, &l);
    check_launch_limits(&l);
    CHECK(grid_threads(&l) >= 64.0 * 251 * 3);
    /* Without edges: exactly the kernel of tj_gen_source. */
    REQUIRE(tj_gen_edges_source(&b, 4, 0, TJ_DIR_PACK, "tj_pack", &same) == TJ_OK);
    plain = source(&b, 4, TJ_DIR_PACK, "tj_pack");
    CHECK(strcmp(same, plain) == 0);
    /* Runs shorter than a word: a window may hold a whole run, and none is whole. */
    REQUIRE(tj_gen_edges_source(&sb, 16, 4, TJ_DIR_PACK, "tj_pack", &short_run) == TJ_OK);
    check_contains(short_run, "if (false)");
    CHECK(strstr(short_run, "if (x != 0u)") == NULL);
    /* Refused: an edge word not below W, one not dividing the block's word, a W not dividing
     * its edges_word, a word that is none. */
    CHECK_EQ_INT(tj_gen_edges_source(&b, 16, 16, TJ_DIR_PACK, "k", &src), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_gen_edges_source(&b, 16, 8, TJ_DIR_PACK, "k", &src), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_gen_edges_source(&sb, 16, 8, TJ_DIR_PACK, "k", &src), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_gen_edges_source(&b, 16, 3, TJ_DIR_PACK, "k", &src), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_gen_edges_source(&b, 32, 4, TJ_DIR_PACK, "k", &src), TJ_ERR_INVALID);
    {
        const int64_t c8[] = {1000, 3}, s8[] = {1, 1016 + 8};
        tj_block_t b8 = make(0, 4000, 2, c8, s8); /* edges_word 8 */
        CHECK_EQ_INT(b8.edges_word, 8);
        CHECK_EQ_INT(tj_gen_edges_source(&b8, 16, 4, TJ_DIR_PACK, "k", &src), TJ_ERR_INVALID);
    }
    CHECK(src == (char *)0x1);
    free(pack);
    free(unpack);
    free(plain);
    free(same);
    free(short_run);
}

/* A fused kernel moves each block with its own word. */
static void check_fused_words(void)
{
    const int64_t c1[] = {64, 16}, s1[] = {1, 512}, c2[] = {12}, s2[] = {1};
    tj_block_t blocks[2] = {make(0, 8192, 2, c1, s1), make(0, 12, 1, c2, s2)};
    int words[2] = {16, 4}, bad[2] = {16, 8};
    tj_fused_member_t members[3] = {{0, 0, 0, 1}, {1, 8192, 1024, 2}, {0, 16384, 1040, 1}};
    tj_fused_args_t args;
    tj_launch_t l;
    char *src = NULL, *none = (char *)0x1;

    REQUIRE(tj_gen_fused_source(blocks, words, 2, TJ_DIR_PACK, "tj_fused_pack", &src) == TJ_OK);
    check_contains(src, "block 0: W=16 start=0");
    check_contains(src, "block 1: W=4 start=0");
    check_contains(src, "typedef uint4 word_t");
    check_contains(src, "typedef unsigned int word_t");
    check_contains(src, "WORDS = 64u");
    check_contains(src, "WORDS = 3u");
    CHECK(strstr(src, "@") == NULL);
    CHECK_EQ_INT(tj_gen_fused_source(blocks, bad, 2, TJ_DIR_PACK, "k", &none), TJ_ERR_INVALID);
    CHECK(none == (char *)0x1);
    REQUIRE(tj_gen_fused_launch(blocks, words, 2, members, 3, &args, &l) == TJ_OK);
    CHECK_EQ_INT(args.n, 3);
    CHECK_EQ_INT(args.m[0].gx, 1); /* 64 words of 16 bytes: one thread block */
    CHECK_EQ_INT(args.m[1].shape, 1);
    CHECK_EQ_INT(tj_gen_fused_launch(blocks, bad, 2, members, 3, &args, &l), TJ_ERR_INVALID);
    free(src);
}

/* A layout of @p n runs of 8 bytes at irregular displacements (none folded), past the baked
 * table's size: its parts come from a device table. */
static tj_layout_t *table_layout(int n)
{
    tj_layout_builder_t b;
    tj_layout_t *l = NULL;
    int64_t disp = 0;

    tj_layout_builder_init(&b);
    for (int i = 0; i < n; i++) {
        tj_layout_builder_add_run(&b, disp, 8);
        disp += 16 + 8 * (i % 3);
    }
    REQUIRE(tj_layout_builder_end(&b, &l) == TJ_OK);
    REQUIRE(tj_layout_finish(&l, disp, 8 * (int64_t)n) == TJ_OK);
    return l;
}

/* Layouts of one frame and shapes over device tables share one kernel (the memory table keys it
 * by the layout's kernel hash): its source must not depend on anything else, such as the
 * number of parts, or each layout gets its own disk cache entry and a second run compiles again
 * what the first took from the memory table. */
static void check_table_source(void)
{
    tj_layout_t *a = table_layout(300), *b = table_layout(411);
    char *sa = NULL, *sb = NULL;

    CHECK(!a->baked && !b->baked);
    CHECK(a->hash[0] == b->hash[0] && a->hash[1] == b->hash[1]);
    for (int dir = TJ_DIR_PACK; dir <= TJ_DIR_UNPACK; dir++) {
        REQUIRE(tj_gen_parts_source(a, 8, false, (tj_dir_t)dir, "k", &sa) == TJ_OK);
        REQUIRE(tj_gen_parts_source(b, 8, false, (tj_dir_t)dir, "k", &sb) == TJ_OK);
        CHECK(strcmp(sa, sb) == 0);
        free(sa);
        free(sb);
    }
    tj_layout_release(a);
    tj_layout_release(b);
}

int main(void)
{
    check_source();
    check_merge();
    check_extremes();
    check_invalid();
    check_geometry();
    check_generic();
    check_edges();
    check_fused_words();
    check_hash();
    check_table_source();
    CHECK_DONE();
}
