/* SPDX-License-Identifier: BSD-3-Clause */
/* Parts kernels whose parts take words of their own (type/layout_words.h), on the test driver:
 * layouts of mixed structs packed and unpacked, one object and several, at every alignment of
 * the two buffers, each launch with the kernel tj_layout_launch_word gives it, against the
 * layout's runs copied byte by byte into a poisoned buffer. With `misaligned`, a kernel of
 * 16-byte words launched on a typed buffer aligned to 4 bytes only must fault, as it would on a
 * GPU (the driver's kernels are built with the alignment sanitizer: tests/fakecuda/kernel.c):
 * the driver checks the alignment of every access of a parts kernel too.
 *
 *   test_parts [misaligned]   (LD_LIBRARY_PATH: the test driver first)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu/cuda.h"
#include "jit/parts.h"
#include "kernels/supply.h"
#include "tempdir.h"
#include "type/layout_builder.h"
#include "type/layout_runs.h"
#include "type/layout_words.h"
#include "util/common.h"

#define POISON 0xA5
#define TARGET "sm_90"

/* Byte i of the pattern a test writes. */
static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 7 + 3);
}

/* The layouts, each finished. */
enum { NLAYOUTS = 5 };

static tj_layout_t *layout_of(int which)
{
    tj_layout_builder_t b;
    tj_layout_t *l = NULL;
    tj_ir_t ir;
    int64_t extent;

    tj_layout_builder_init(&b);
    switch (which) {
    case 0: /* struct {double[3]; int; char at 32}: a 28-byte run beside a char */
        tj_layout_builder_add_run(&b, 0, 28);
        tj_layout_builder_add_run(&b, 32, 1);
        extent = 40;
        break;
    case 1: /* struct {double[1000]; int[500] at 8192; char[10] at 10240} */
        tj_layout_builder_add_run(&b, 0, 8000);
        tj_layout_builder_add_run(&b, 8192, 2000);
        tj_layout_builder_add_run(&b, 10240, 10);
        extent = 10256;
        break;
    case 2: /* struct {char; char[4000] at 17}: a head of 1, 2, 4 and 8, then 16-byte words */
        tj_layout_builder_add_run(&b, 0, 1);
        tj_layout_builder_add_run(&b, 17, 4000);
        extent = 4017;
        break;
    case 3: /* struct {int; vector(3, 1, 2, double); MPI_SHORT_INT}: a shaped part */
        tj_layout_builder_add_run(&b, 0, 4);
        tj_ir_init_dense(&ir, 0, 8);
        tj_ir_push_stream(&ir, 0, 3, 16);
        tj_layout_builder_add_chain(&b, 8, 1, &ir, 40);
        tj_layout_builder_add_run(&b, 80, 2);
        tj_layout_builder_add_run(&b, 84, 4);
        extent = 88;
        break;
    default: /* contiguous(4, struct {double; int at 8; int at 16; double at 24}) */
        tj_layout_builder_add_run(&b, 0, 12);
        tj_layout_builder_add_run(&b, 16, 12);
        extent = 128;
        break;
    }
    REQUIRE(tj_layout_builder_end(&b, &l) == TJ_OK);
    if (which == NLAYOUTS - 1)
        REQUIRE(tj_layout_stream(&l, 0, 4, 32) == TJ_OK);
    REQUIRE(tj_layout_finish(&l, extent, l->pre[l->nparts] * tj_layout_elements(l)) == TJ_OK);
    REQUIRE(l->baked);
    return l;
}

/* The expected bytes: each run of each object copied between @p typed (object 0's frame
 * element 0 at byte @p at) and @p packed (from byte 0), in the direction given. */
typedef struct {
    unsigned char *typed, *packed;
    int64_t at, pos;
    bool pack;
} copy_t;

static void copy_run(int64_t disp, int64_t len, void *arg)
{
    copy_t *c = arg;
    if (c->pack)
        memcpy(c->packed + c->pos, c->typed + c->at + disp, (size_t)len);
    else
        memcpy(c->typed + c->at + disp, c->packed + c->pos, (size_t)len);
    c->pos += len;
}

static int64_t tested;
static int reported; /* failures whose launch was described */

/* One launch of the kernel a launch of @p count objects at these alignments takes. */
static void check_launch(const tj_layout_t *l, int which, int64_t count, int talign, int palign,
                         tj_dir_t dir)
{
    int64_t span = (count - 1) * l->extent + l->extent + 64, bytes = count * l->size;
    size_t tlen = (size_t)span + 32, plen = (size_t)bytes + 32;
    unsigned char *typed = malloc(tlen), *packed = malloc(plen), *got = malloc(TJ_MAX(tlen, plen));
    tj_devptr_t tbuf, pbuf, typed_at, packed_at, dst, src;
    tj_kernel_spec_t spec;
    tj_gpu_function_t fn;
    tj_parts_args_t args;
    tj_launch_t geo;
    tj_kernel_t *k;
    long long n = count;
    void *argv[4] = {&dst, &src, &n, &args};
    bool one, pack = dir == TJ_DIR_PACK;
    int word;
    copy_t c;

    REQUIRE(typed != NULL && packed != NULL && got != NULL);
    REQUIRE(tj_gpu_alloc(tlen, &tbuf) == TJ_OK && tj_gpu_alloc(plen, &pbuf) == TJ_OK);
    /* Allocations are aligned to 256 bytes: an offset of the alignment itself, below 16. */
    typed_at = tbuf + (tj_devptr_t)(talign % 16);
    packed_at = pbuf + (tj_devptr_t)(palign % 16);
    word = tj_layout_launch_word(l, count, (uintptr_t)typed_at, (uintptr_t)packed_at, &one);
    spec = tj_spec_parts(l, word, one, dir, false, TARGET);
    REQUIRE(tj_supply_get(&spec, TJ_SUPPLY_COMPILE, &k, NULL) == TJ_OK);
    REQUIRE(tj_kernel_function(k, &fn) == TJ_OK);
    for (size_t i = 0; i < tlen; i++)
        typed[i] = pack ? pattern(i) : POISON;
    for (size_t i = 0; i < plen; i++)
        packed[i] = pack ? POISON : pattern(i);
    REQUIRE(tj_gpu_copy_htod(tbuf, typed, tlen) == TJ_OK);
    REQUIRE(tj_gpu_copy_htod(pbuf, packed, plen) == TJ_OK);
    dst = pack ? packed_at : typed_at;
    src = pack ? typed_at : packed_at;
    tj_gen_parts_args(l, 0, &args);
    tj_gen_parts_launch(l, word, one, count, false, &geo);
    CHECK(tj_gpu_launch(fn, geo.grid, geo.block, argv) == TJ_OK);
    CHECK(tj_gpu_sync() == TJ_OK);
    c = (copy_t){typed + talign % 16, packed + palign % 16, 0, 0, pack};
    for (int64_t o = 0; o < count; o++) {
        c.at = o * l->extent;
        tj_layout_runs_each(l, TJ_LAYOUT_MAX_PARTS, copy_run, &c);
    }
    if (pack) {
        REQUIRE(tj_gpu_copy_dtoh(got, pbuf, plen) == TJ_OK);
        if (memcmp(got, packed, plen) != 0)
            CHECK(!"the packed bytes are the runs'");
    } else {
        REQUIRE(tj_gpu_copy_dtoh(got, tbuf, tlen) == TJ_OK);
        if (memcmp(got, typed, tlen) != 0)
            CHECK(!"the unpacked bytes are the runs'");
    }
    if (check_failures > reported && reported++ < 4)
        fprintf(stderr, "layout %d, %lld objects, buffers aligned to %d and %d, %s: W=%d%s\n",
                which, (long long)count, talign, palign, pack ? "pack" : "unpack", word,
                one ? " of one object" : "");
    tested++;
    tj_gpu_free(tbuf);
    tj_gpu_free(pbuf);
    free(typed);
    free(packed);
    free(got);
}

/* The kernel of one object of layout 1 (16-byte words) on a typed buffer aligned to 4. */
static void misaligned(void)
{
    tj_layout_t *l = layout_of(1);
    tj_devptr_t tbuf, pbuf, dst, src;
    tj_kernel_spec_t spec;
    tj_gpu_function_t fn;
    tj_parts_args_t args;
    tj_launch_t geo;
    tj_kernel_t *k;
    long long n = 1;
    void *argv[4] = {&dst, &src, &n, &args};
    bool one;
    int word = tj_layout_launch_word(l, 1, 0, 0, &one);

    CHECK_EQ_INT(word, 16);
    CHECK(one);
    spec = tj_spec_parts(l, word, one, TJ_DIR_PACK, false, TARGET);
    REQUIRE(tj_supply_get(&spec, TJ_SUPPLY_COMPILE, &k, NULL) == TJ_OK);
    REQUIRE(tj_kernel_function(k, &fn) == TJ_OK);
    REQUIRE(tj_gpu_alloc((size_t)l->extent + 16, &tbuf) == TJ_OK);
    REQUIRE(tj_gpu_alloc((size_t)l->size, &pbuf) == TJ_OK);
    dst = pbuf;
    src = tbuf + 4;
    tj_gen_parts_args(l, 0, &args);
    tj_gen_parts_launch(l, word, one, 1, false, &geo);
    CHECK(tj_gpu_launch(fn, geo.grid, geo.block, argv) == TJ_OK);
    CHECK(tj_gpu_sync() == TJ_ERR_CUDA);
    printf("the kernel of 16-byte words on a typed buffer aligned to 4 faulted\n");
    tj_layout_release(l);
}

int main(int argc, char **argv)
{
    static const int aligns[] = {16, 8, 4, 2, 1};
    char dir[256];

    tempdir_make("parts", dir, sizeof(dir));
    tj_supply_set_store(dir, 0);
    if (tj_gpu_init() != TJ_OK || tj_gpu_use(0) != TJ_OK) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    if (argc > 1 && strcmp(argv[1], "misaligned") == 0) {
        misaligned();
        tempdir_remove(dir);
        CHECK_DONE();
    }
    for (int which = 0; which < NLAYOUTS; which++) {
        tj_layout_t *l = layout_of(which);
        for (size_t t = 0; t < sizeof(aligns) / sizeof(aligns[0]); t++)
            for (int64_t count = 1; count <= 3; count += 2)
                for (int d = TJ_DIR_PACK; d <= TJ_DIR_UNPACK; d++) {
                    /* The typed buffer at each alignment, the packed one at 16 and at it. */
                    check_launch(l, which, count, aligns[t], 16, (tj_dir_t)d);
                    check_launch(l, which, count, 16, aligns[t], (tj_dir_t)d);
                }
        tj_layout_release(l);
    }
    printf("%lld launches\n", (long long)tested);
    tj_supply_finalize();
    tj_gpu_finalize();
    tempdir_remove(dir);
    CHECK_DONE();
}
