/* SPDX-License-Identifier: BSD-3-Clause */
/* Parts kernels whose parts take words of their own (type/layout_words.h), on the test driver:
 * first the words themselves (a 28-byte run beside a char, a long run's head, middle and tail,
 * and for every alignment a kernel named by the widest word it moves); then layouts of mixed
 * structs packed and unpacked, one object and several, at every alignment of the two buffers,
 * each launch with the kernel tj_layout_launch_word gives it, against the layout's runs copied
 * byte by byte into a poisoned buffer. With `misaligned`, a kernel of
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
#include "kernels/lookup.h"
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

/* The segments of @p l at (@p cap, @p one), in a buffer the caller frees; their number in *n. */
static tj_layout_segment_t *segments(const tj_layout_t *l, int cap, bool one, int64_t *n)
{
    tj_layout_segment_t *seg;

    *n = tj_layout_segments(l, cap, one, NULL, 0);
    REQUIRE((seg = calloc((size_t)(*n > 0 ? *n : 1), sizeof(*seg))) != NULL);
    CHECK_EQ_INT(tj_layout_segments(l, cap, one, seg, *n), *n);
    return seg;
}

/* The words of the layouts (type/layout_words.h), without a device: what the launches take,
 * and that every alignment's kernel is named by the widest word it moves. */
static void check_words(void)
{
    tj_layout_t *l = layout_of(0);
    tj_layout_segment_t *seg;
    int64_t n;
    bool one;

    /* A 28-byte run in words of 4 beside a char, for one object; bytes for several (the
     * objects' 29 packed bytes). */
    CHECK_EQ_INT(tj_layout_launch_word(l, 1, 0, 0, &one), 4);
    CHECK(one);
    CHECK_EQ_INT(tj_layout_launch_word(l, 2, 0, 0, &one), 1);
    CHECK(!one);
    CHECK(!tj_layout_kernel_word(l, 16, true) && !tj_layout_kernel_word(l, 4, false));
    seg = segments(l, 4, true, &n);
    REQUIRE(n == 2);
    CHECK(seg[0].part == 0 && seg[0].len == 28 && seg[0].word == 4);
    CHECK(seg[1].part == 1 && seg[1].len == 1 && seg[1].word == 1);
    CHECK_EQ_INT(tj_layout_kernel_units(l, 4, true), 8);
    free(seg);
    tj_layout_release(l);
    /* A run of 4000 bytes one byte past a 16-byte boundary: a head of 1, 2, 4 and 8, 249 words
     * of 16, a tail of 1; with buffers aligned to 4, words of 4 in the middle. */
    l = layout_of(2);
    seg = segments(l, 16, true, &n);
    REQUIRE(n == 7);
    for (int i = 0; i < 4; i++)
        CHECK(seg[1 + i].word == 1 << i && seg[1 + i].len == 1 << i && seg[1 + i].part == 1);
    CHECK(seg[5].word == 16 && seg[5].len == 249 * 16 && seg[5].at == 15);
    CHECK(seg[6].word == 1 && seg[6].len == 1 && seg[6].at == 3999);
    free(seg);
    seg = segments(l, 4, true, &n);
    REQUIRE(n == 5);
    CHECK(seg[3].word == 4 && seg[3].len == 999 * 4 && seg[3].at == 3);
    free(seg);
    tj_layout_release(l);
    /* Every alignment, one object and several: the kernel taken is named by its widest word,
     * whose own segments are the same. */
    for (int which = 0; which < NLAYOUTS; which++) {
        l = layout_of(which);
        for (int cap = 16; cap >= 1; cap /= 2)
            for (int64_t count = 1; count <= 2; count++) {
                int64_t na, nb;
                int w = tj_layout_launch_word(l, count, (uintptr_t)cap, 0, &one);
                tj_layout_segment_t *a = segments(l, cap, count == 1, &na),
                                    *b = segments(l, w, count == 1, &nb);
                int widest = 1;
                CHECK(tj_layout_kernel_word(l, w, one));
                CHECK(w <= cap);
                CHECK_EQ_INT(na, nb);
                for (int64_t i = 0; i < na && i < nb; i++) {
                    CHECK(a[i].part == b[i].part && a[i].at == b[i].at && a[i].len == b[i].len &&
                          a[i].word == b[i].word);
                    widest = TJ_MAX(widest, a[i].word);
                }
                CHECK_EQ_INT(widest, w);
                free(a);
                free(b);
            }
        tj_layout_release(l);
    }
}

/* Every segment's word divides each of its bytes' typed and packed offsets, in the first frame
 * elements of the first objects (one object with @p one), and each part's segments cover it. */
typedef struct {
    int64_t base;
    int word;
    bool ok;
} rows_t;

static bool row_aligned(int64_t off, void *arg)
{
    rows_t *r = arg;
    r->ok = r->ok && (r->base + off) % r->word == 0;
    return true;
}

static void check_aligned(const tj_layout_t *l, int cap, bool one)
{
    int64_t n, elems = tj_layout_elements(l), covered = 0, part = -1;
    tj_layout_segment_t *seg = segments(l, cap, one, &n);

    for (int64_t i = 0; i < n; i++) {
        const tj_layout_segment_t *sg = &seg[i];
        const tj_block_t *sh = &l->shapes[l->shape != NULL ? l->shape[sg->part] : 0];
        CHECK(sg->word >= 1 && sg->word <= cap && sg->len % sg->word == 0 && sg->len > 0);
        if (sg->part != part) {
            CHECK(part < 0 || covered == l->pre[part + 1] - l->pre[part]);
            CHECK(sg->part == part + 1 && sg->at == 0);
            part = sg->part;
            covered = 0;
        }
        CHECK_EQ_INT(sg->at, covered);
        covered += sg->len;
        for (int64_t k = 0; k < (one ? 1 : 3); k++)
            for (int64_t e = 0; e < elems && e < 5; e++) {
                int64_t typed = k * l->extent + tj_layout_frame_offset(l, e) + l->disp[sg->part],
                        packed = (k * elems + e) * l->pre[l->nparts] + l->pre[sg->part] + sg->at;
                CHECK(packed % sg->word == 0);
                if (tj_layout_is_run(sh)) {
                    CHECK((typed + sg->at) % sg->word == 0);
                    continue;
                }
                CHECK(sh->counts[0] % sg->word == 0);
                for (int64_t rep = 0; rep < sg->len / sh->size; rep++) {
                    rows_t r = {typed + rep * sh->extent, sg->word, true};
                    tj_block_each_run(sh, row_aligned, &r);
                    CHECK(r.ok);
                }
            }
    }
    CHECK(part == l->nparts - 1 && covered == l->pre[part + 1] - l->pre[part]);
    free(seg);
}

/* Random layouts of runs, some with a strided part and a frame: every alignment's segments
 * aligned (check_aligned), the kernel named by the widest of them. */
static void check_random(void)
{
    uint64_t x = 2024;

    for (int t = 0; t < 300; t++) {
        tj_layout_builder_t b;
        tj_layout_t *l = NULL;
        int64_t at = 0, parts = 1 + (int64_t)((x = x * 6364136223846793005ull + 1) >> 61);
        tj_layout_builder_init(&b);
        for (int64_t p = 0; p < parts; p++) {
            uint64_t r = (x = x * 6364136223846793005ull + 1) >> 20;
            int64_t len = (r & 7) == 0 ? 600 + (int64_t)(r >> 3) % 900
                                       : 1 << ((r >> 3) % 5) | (int64_t)((r >> 8) % 3);
            at += (int64_t)((r >> 12) % 24);
            if ((r & 15) == 1) {
                tj_ir_t ir;
                tj_ir_init_dense(&ir, 0, 8);
                tj_ir_push_stream(&ir, 0, 3, 16 + (int64_t)((r >> 20) % 4) * 4);
                tj_layout_builder_add_chain(&b, at, 1, &ir, 80);
                at += 80;
            } else {
                tj_layout_builder_add_run(&b, at, len);
                at += len;
            }
        }
        REQUIRE(tj_layout_builder_end(&b, &l) == TJ_OK);
        if ((x >> 40) % 3 == 0)
            REQUIRE(tj_layout_stream(&l, 0, 3, at + (int64_t)((x >> 50) % 8)) == TJ_OK);
        if (tj_layout_finish(&l, at * 3 + 16 + (int64_t)((x >> 45) % 5),
                             l->pre[l->nparts] * tj_layout_elements(l)) != TJ_OK ||
            !l->baked) {
            tj_layout_release(l);
            continue;
        }
        for (int cap = 16; cap >= 1; cap /= 2)
            for (int one = 0; one < 2; one++) {
                bool taken;
                int w = tj_layout_launch_word(l, one ? 1 : 2, (uintptr_t)cap, 0, &taken);
                check_aligned(l, cap, one);
                CHECK(tj_layout_kernel_word(l, w, taken));
                CHECK(w <= cap && (!taken || one));
            }
        tj_layout_release(l);
    }
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
    REQUIRE(tj_lookup_kernel(&spec, TJ_LOOKUP_COMPILE, &k, NULL) == TJ_OK);
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
    REQUIRE(tj_lookup_kernel(&spec, TJ_LOOKUP_COMPILE, &k, NULL) == TJ_OK);
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

    check_words();
    check_random();
    tempdir_make("parts", dir, sizeof(dir));
    tj_lookup_set_store(dir, 0);
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
    tj_lookup_finalize();
    tj_gpu_finalize();
    tempdir_remove(dir);
    CHECK_DONE();
}
