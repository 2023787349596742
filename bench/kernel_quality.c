/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel quality without a GPU, the part that runs kernels: for a fixed set of shapes, each pack
 * and unpack kernel is compiled for sm_90 (the CUBIN is written for bench/kernel-quality, which
 * reads its SASS) and launched once on the CPU-only test driver (tests/fakecuda) with
 * FAKECUDA_TRACE set, whose address trace of every thread gives the sectors the launch's warps
 * touch. Per kernel one CSV row on stdout (columns in `header` below), with the layout's own
 * numbers beside the trace's:
 *   ideal_*: the sectors and requests of the ideal mapping: the launch's words in packed order,
 *            32 consecutive ones per request (one word of W bytes per thread; a kernel with
 *            edges: its W-byte words and the pieces of each run's head and tail, as it cuts
 *            them; a parts kernel: the words of its segments), as if every request were a full
 *            warp; ideal_words: the words of that mapping, and for a parts kernel those of words
 *            plus edges (each run in the widest word its own bytes allow, a long one with edges);
 *   units:   a parts kernel's words of every size (its threads' work; 0 for the other kinds);
 *            words_exact 1 where they are each run's own (one object of a baked layout of runs
 *            without a frame: held to the ideal's words), narrowest its narrowest word;
 *   *_distinct: every sector the launch's bytes occupy, once (no kernel can touch fewer).
 * Timings are not measured: the driver is a CPU emulation.
 *
 *   FAKECUDA_TRACE=FILE bench_kernel_quality OUTDIR   (LD_LIBRARY_PATH: the test driver first)
 *
 * The shapes: TEMPI's figure-8 objects (2-D and 3-D, runs of 1 to 512 bytes at a pitch of 512,
 * 1 KiB to 4 MiB); the 26 halo regions of a 64^3 grid of 8 doubles per point with radius 3,
 * per shape and fused (send side); vectors of elements of 1 to 16 bytes with a stride of three
 * elements; the generic kernel on some of them; layouts (parts()) and mixed structs (mixed());
 * shapes of the word size per dimension (words()), each kernel at the words the runtime gives
 * its launch on aligned buffers. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpu/cuda.h"
#include "jit/gen.h"
#include "jit/parts.h"
#include "kernels/lookup.h"
#include "type/block.h"
#include "type/layout.h"
#include "type/layout_builder.h"
#include "type/layout_runs.h"
#include "type/layout_words.h"
#include "util/common.h"

#define TARGET "sm_90"
#define SECTOR 32

static const char *outdir, *trace_path;
static char ident[64];

/* One kernel to report: a single block, a fused set, or the generic kernel on one block. */
typedef struct {
    const char *family; /* fig8-2d, fig8-3d, halo, halo-fused, element, generic, parts, mixed */
    char name[128];
    tj_kernel_kind_t kind;
    tj_block_t blocks[TJ_FUSED_MAX]; /* at start 0 */
    int nblocks;
    tj_fused_member_t members[TJ_FUSED_MAX];
    int nmembers;
    int word;                /* W; a fused kernel's widest */
    int edge;                /* a single kernel's edge word, or 0 */
    int words[TJ_FUSED_MAX]; /* a fused kernel's word of each block */
    int64_t count;
    tj_layout_t *layout; /* a parts kernel's (finished, start 0) */
    bool one;            /* a parts kernel's: of one object (type/layout_words.h) */
} item_t;

/* The ideal mapping's requests: the launch's words in packed order, 32 to a request, each
 * word's typed and packed offsets (relative to buffers aligned to 256 bytes) and size. */
typedef struct {
    int64_t ta[32], pa[32];
    int size[32];
    int n;
    int64_t requests, typed_sectors, packed_sectors, words;
} ideal_t;

/* Distinct sectors of up to 32 accesses. */
static int64_t sectors_of(const int64_t *addr, const int *size, int n)
{
    int64_t s[64];
    int ns = 0;
    for (int i = 0; i < n; i++)
        for (int64_t x = addr[i] / SECTOR; x <= (addr[i] + size[i] - 1) / SECTOR; x++) {
            int j = 0;
            while (j < ns && s[j] != x)
                j++;
            if (j == ns && ns < 64)
                s[ns++] = x;
        }
    return ns;
}

static void ideal_flush(ideal_t *r)
{
    if (r->n == 0)
        return;
    r->requests++;
    r->typed_sectors += sectors_of(r->ta, r->size, r->n);
    r->packed_sectors += sectors_of(r->pa, r->size, r->n);
    r->n = 0;
}

static void ideal_word(ideal_t *r, int64_t typed, int64_t packed, int size)
{
    r->ta[r->n] = typed;
    r->pa[r->n] = packed;
    r->size[r->n] = size;
    r->words++;
    if (++r->n == 32)
        ideal_flush(r);
}

/* A run of @p len bytes at typed offset @p typed and packed offset @p packed, in the words of a
 * kernel of (@p word, @p edge): W-byte words, or with edges the pieces of its head (growing to W
 * alignment), W-byte words, and the pieces of its tail, as templates/edges.cu cuts them. */
static void ideal_run_words(ideal_t *r, int64_t typed, int64_t packed, int64_t len, int word,
                            int edge)
{
    int64_t x = packed, end = packed + len;

    if (edge == 0) {
        for (int64_t b = 0; b < len; b += word)
            ideal_word(r, typed + b, packed + b, word);
        return;
    }
    for (int w = edge; w < word; w *= 2)
        if ((x & w) != 0 && x + w <= end) {
            ideal_word(r, typed + (x - packed), x, w);
            x += w;
        }
    for (; x + word <= end; x += word)
        ideal_word(r, typed + (x - packed), x, word);
    for (int w = word / 2; w >= edge; w /= 2)
        if (x + w <= end) {
            ideal_word(r, typed + (x - packed), x, w);
            x += w;
        }
}

/* The narrowest word a parts kernel moves (its narrowest segment's); W for the other kinds. */
static int narrowest_word(const item_t *it)
{
    int w = it->word;

    if (it->kind == TJ_KERNEL_PARTS && it->layout->baked) {
        int64_t n = tj_layout_segments(it->layout, it->word, it->one, NULL, 0);
        tj_layout_segment_t *seg = malloc((size_t)(n > 0 ? n : 1) * sizeof(*seg));
        if (seg != NULL) {
            tj_layout_segments(it->layout, it->word, it->one, seg, n);
            for (int64_t i = 0; i < n; i++)
                w = TJ_MIN(w, seg[i].word);
        }
        free(seg);
    }
    return w;
}

/* Whether the item is a parts kernel whose words are each run's own, as the ideal's: one object
 * of a baked layout of runs without a frame, on aligned buffers. */
static int words_exact(const item_t *it)
{
    const tj_layout_t *l = it->layout;

    if (it->kind != TJ_KERNEL_PARTS || !l->baked || l->nframe > 0 || it->count != 1)
        return 0;
    for (int s = 0; s < l->nshapes; s++)
        if (!tj_layout_is_run(&l->shapes[s]))
            return 0;
    return 1;
}

static int64_t member_count(const item_t *it, int m)
{
    return it->kind == TJ_KERNEL_FUSED ? it->members[m].count : it->count;
}

/* The word of block @p s of the item's kernel. */
static int item_word(const item_t *it, int s)
{
    return it->kind == TJ_KERNEL_FUSED ? it->words[s] : it->word;
}

/* A layout's runs in packed order (the ideal of a parts kernel). */
typedef struct {
    const item_t *it;
    ideal_t *r;
    int64_t packed, obj;
} runs_ideal_t;

/* A run's words plus edges at its own addresses: the widest of 16, 8, 4, 2, 1 dividing its typed
 * and packed bytes and its length; a run of TJ_BLOCK_EDGE_RUN_WORDS words of the widest word its
 * typed and packed bytes agree modulo, in that word with edges down to the first. */
static void ideal_run(int64_t disp, int64_t len, void *arg)
{
    runs_ideal_t *x = arg;
    const tj_layout_t *l = x->it->layout;
    int64_t typed = l->start + x->obj * l->extent + disp;
    uint64_t plain = (uint64_t)typed | (uint64_t)x->packed | (uint64_t)len | 16,
             agree = (uint64_t)(typed - x->packed) | 16;
    int w = (int)(plain & (~plain + 1)), a = (int)(agree & (~agree + 1));

    if (a > w && len >= (int64_t)TJ_BLOCK_EDGE_RUN_WORDS * a)
        ideal_run_words(x->r, typed, x->packed, len, a, w);
    else
        ideal_run_words(x->r, typed, x->packed, len, w, 0);
    x->packed += len;
}

/* One block's runs in packed order (the ideal of a single or fused kernel). */
typedef struct {
    ideal_t *r;
    int64_t base, packed, len;
    int word, edge;
} block_ideal_t;

static bool ideal_block_run(int64_t disp, void *arg)
{
    block_ideal_t *x = arg;
    ideal_run_words(x->r, x->base + disp, x->packed, x->len, x->word, x->edge);
    x->packed += x->len;
    return true;
}

/* A parts kernel's words in packed order: each segment of each frame element of each object in
 * its word (type/layout_words.h; a table in device memory: every part in W), a shaped part's
 * runs one after the other. */
static void ideal_parts(const item_t *it, ideal_t *r)
{
    const tj_layout_t *l = it->layout;
    int64_t elems = tj_layout_elements(l), packed = 0;
    int64_t n = l->baked ? tj_layout_segments(l, it->word, it->one, NULL, 0) : l->nparts;
    tj_layout_segment_t *seg = malloc((size_t)(n > 0 ? n : 1) * sizeof(*seg));

    if (seg == NULL)
        return;
    if (l->baked)
        tj_layout_segments(l, it->word, it->one, seg, n);
    else
        for (int64_t p = 0; p < n; p++)
            seg[p] = (tj_layout_segment_t){p, 0, l->pre[p + 1] - l->pre[p], it->word};
    for (int64_t k = 0; k < it->count; k++)
        for (int64_t e = 0; e < elems; e++) {
            int64_t fo = l->start + k * l->extent + tj_layout_frame_offset(l, e);
            for (int64_t s = 0; s < n; s++) {
                const tj_block_t *sh = &l->shapes[l->shape != NULL ? l->shape[seg[s].part] : 0];
                int64_t base = fo + l->disp[seg[s].part];
                if (tj_layout_is_run(sh)) {
                    ideal_run_words(r, base + seg[s].at, packed, seg[s].len, seg[s].word, 0);
                    packed += seg[s].len;
                    continue;
                }
                for (int64_t rep = 0; rep < seg[s].len / sh->size; rep++) {
                    block_ideal_t x = {
                        r, base + rep * sh->extent, packed, sh->counts[0], seg[s].word, 0};
                    tj_block_each_run(sh, ideal_block_run, &x);
                    packed = x.packed;
                }
            }
        }
    free(seg);
}

/* The ideal mapping's requests, sectors (typed and packed sides) and words; a parts kernel's
 * words, those of words plus edges. */
static void ideal(const item_t *it, int64_t *requests, int64_t *typed_sectors,
                  int64_t *packed_sectors, int64_t *words)
{
    ideal_t r = {.n = 0};

    if (it->kind == TJ_KERNEL_PARTS) {
        /* The kernel's words mapped ideally; apart, the words plus edges of the runs. */
        ideal_t best = {.n = 0};
        runs_ideal_t x = {.it = it, .r = &best};
        ideal_parts(it, &r);
        for (x.obj = 0; x.obj < it->count; x.obj++)
            tj_layout_runs_each(it->layout, TJ_LAYOUT_MAX_PARTS, ideal_run, &x);
        ideal_flush(&r);
        *requests = r.requests;
        *typed_sectors = r.typed_sectors;
        *packed_sectors = r.packed_sectors;
        *words = best.words;
        return;
    } else {
        int64_t packed = 0;
        for (int m = 0; m < (it->kind == TJ_KERNEL_FUSED ? it->nmembers : 1); m++) {
            int s = it->kind == TJ_KERNEL_FUSED ? it->members[m].shape : 0;
            const tj_block_t *b = &it->blocks[s];
            int64_t base = (it->kind == TJ_KERNEL_FUSED ? it->members[m].typed : 0) + b->start;
            if (it->kind == TJ_KERNEL_FUSED)
                packed = it->members[m].packed;
            for (int64_t k = 0; k < member_count(it, m); k++) {
                block_ideal_t x = {
                    &r,           base + k * b->extent, packed,
                    b->counts[0], item_word(it, s),     it->kind == TJ_KERNEL_FUSED ? 0 : it->edge};
                tj_block_each_run(b, ideal_block_run, &x);
                packed = x.packed;
            }
        }
    }
    ideal_flush(&r);
    *requests = r.requests;
    *typed_sectors = r.typed_sectors;
    *packed_sectors = r.packed_sectors;
    *words = r.words;
}

/* [lo, hi) of the typed bytes the launch touches, relative to the typed base. */
static void span_run(int64_t disp, int64_t len, void *arg)
{
    int64_t *lh = arg;
    lh[0] = TJ_MIN(lh[0], disp);
    lh[1] = TJ_MAX(lh[1], disp + len);
}

static void typed_span(const item_t *it, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    if (it->kind == TJ_KERNEL_PARTS) {
        const tj_layout_t *l = it->layout;
        int64_t lh[2] = {INT64_MAX, INT64_MIN}, reach = (it->count - 1) * l->extent;
        tj_layout_runs_each(l, TJ_LAYOUT_MAX_PARTS, span_run, lh);
        *lo = l->start + lh[0] + TJ_MIN(reach, 0);
        *hi = l->start + lh[1] + TJ_MAX(reach, 0);
        return;
    }
    for (int m = 0; m < (it->kind == TJ_KERNEL_FUSED ? it->nmembers : 1); m++) {
        const tj_block_t *b = &it->blocks[it->kind == TJ_KERNEL_FUSED ? it->members[m].shape : 0];
        int64_t off = it->kind == TJ_KERNEL_FUSED ? it->members[m].typed : 0;
        int64_t cnt = member_count(it, m), reach = (cnt - 1) * b->extent;
        *lo = TJ_MIN(*lo, off + b->lo + TJ_MIN(reach, 0));
        *hi = TJ_MAX(*hi, off + b->hi + TJ_MAX(reach, 0));
    }
}

static int64_t packed_bytes(const item_t *it)
{
    int64_t n = 0;
    if (it->kind == TJ_KERNEL_PARTS)
        return it->count * it->layout->size;
    for (int m = 0; m < (it->kind == TJ_KERNEL_FUSED ? it->nmembers : 1); m++)
        n += member_count(it, m) *
             it->blocks[it->kind == TJ_KERNEL_FUSED ? it->members[m].shape : 0].size;
    return n;
}

/* The last line of the trace file: the launch just synchronised. */
static bool last_trace(char *line, size_t len)
{
    FILE *f = fopen(trace_path, "r");
    char buf[1024];
    bool any = false;

    if (f == NULL)
        return false;
    while (fgets(buf, sizeof(buf), f) != NULL) {
        snprintf(line, len, "%s", buf);
        any = true;
    }
    fclose(f);
    return any;
}

static unsigned long long field(const char *line, const char *name)
{
    char key[64];
    const char *p;
    snprintf(key, sizeof(key), " %s=", name);
    p = strstr(line, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* Compile, write the CUBIN, launch once, print the row. */
static int run_item(item_t *it, tj_dir_t dir)
{
    tj_kernel_spec_t spec;
    tj_kernel_t *k;
    tj_gpu_function_t fn;
    tj_launch_t geo;
    tj_fused_args_t fargs;
    tj_generic_params_t params;
    tj_parts_args_t pargs;
    tj_devptr_t table = 0;
    void *pinned = NULL;
    unsigned long long table_sectors = 0;
    int64_t lo, hi, bytes = packed_bytes(it), ireq, its, ips, iwords, units = 0;
    tj_devptr_t tbuf, pbuf, typed, dst, src;
    long long count = it->count;
    void *args[4];
    char path[4200], line[1024], kname[192];
    const char *dname = dir == TJ_DIR_PACK ? "pack" : "unpack";
    size_t len;
    FILE *f;

    switch (it->kind) {
    case TJ_KERNEL_FUSED:
        spec = tj_spec_fused(it->blocks, it->words, it->nblocks, dir, TARGET);
        break;
    case TJ_KERNEL_GENERIC:
        spec = tj_spec_generic(it->word, dir, TARGET);
        break;
    case TJ_KERNEL_PARTS:
        spec = tj_spec_parts(it->layout, it->word, it->one, dir, false, TARGET);
        break;
    default:
        spec = tj_spec_words(it->blocks, (tj_words_t){it->word, it->edge}, dir, TARGET);
        break;
    }
    if (tj_lookup_kernel(&spec, TJ_LOOKUP_COMPILE, &k, NULL) != TJ_OK ||
        tj_kernel_function(k, &fn) != TJ_OK) {
        fprintf(stderr, "kernel_quality: %s %s: no kernel\n", it->name, dname);
        return 1;
    }
    /* The CUBIN without the test driver's trailer (its source, after the image). */
    len = k->len;
    for (size_t i = 0; i + 16 <= k->len; i++)
        if (memcmp((const char *)k->image + i, "FAKECUDA-SOURCE1", 16) == 0) {
            len = i;
            break;
        }
    snprintf(kname, sizeof(kname), "%s-%s", it->name, dname);
    snprintf(path, sizeof(path), "%s/%s.cubin", outdir, kname);
    if ((f = fopen(path, "wb")) == NULL || fwrite(k->image, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "kernel_quality: cannot write %s\n", path);
        return 1;
    }

    typed_span(it, &lo, &hi);
    if (tj_gpu_alloc((size_t)(hi - lo), &tbuf) != TJ_OK ||
        tj_gpu_alloc((size_t)TJ_MAX(bytes, 1), &pbuf) != TJ_OK) {
        fprintf(stderr, "kernel_quality: out of device memory\n");
        return 1;
    }
    tj_gpu_memset(tbuf, 1, (size_t)(hi - lo));
    tj_gpu_memset(pbuf, 2, (size_t)TJ_MAX(bytes, 1));
    typed = tbuf - (tj_devptr_t)lo;
    dst = dir == TJ_DIR_PACK ? pbuf : typed;
    src = dir == TJ_DIR_PACK ? typed : pbuf;
    args[0] = &dst;
    args[1] = &src;
    if (it->kind == TJ_KERNEL_PARTS) {
        /* The part table: in device memory, as the runtime keeps it, for a first launch that
         * counts its loads; then in mapped host memory, which the trace leaves out, for the
         * launch reported: the data's sectors alone, the table's the difference. */
        size_t tb = tj_gen_parts_table_bytes(it->layout);
        void *image = malloc(tb > 0 ? tb : 1);
        args[2] = &count;
        args[3] = &pargs;
        tj_gen_parts_launch(it->layout, it->word, it->one, it->count, false, &geo);
        if (!it->layout->baked) {
            tj_devptr_t mapped;
            if (image == NULL || tj_gpu_alloc(tb, &table) != TJ_OK ||
                tj_gpu_alloc_host(tb, &pinned) != TJ_OK ||
                tj_gpu_host_devptr(pinned, &mapped) != TJ_OK)
                return 1;
            tj_gen_parts_table(it->layout, image);
            tj_gpu_copy_htod(table, image, tb);
            memcpy(pinned, image, tb);
            tj_gen_parts_args(it->layout, table, &pargs);
            if (tj_gpu_launch(fn, geo.grid, geo.block, args) != TJ_OK || tj_gpu_sync() != TJ_OK ||
                !last_trace(line, sizeof(line)))
                return 1;
            table_sectors = field(line, "load_sectors");
            table = mapped;
        }
        free(image);
        tj_gen_parts_args(it->layout, table, &pargs);
    } else if (it->kind == TJ_KERNEL_FUSED) {
        if (tj_gen_fused_launch(it->blocks, it->words, it->nblocks, it->members, it->nmembers,
                                &fargs, &geo) != TJ_OK)
            return 1;
        args[2] = &fargs;
    } else {
        args[2] = &count;
        if (it->kind == TJ_KERNEL_GENERIC) {
            tj_gen_generic_params(&it->blocks[0], it->word, &params);
            tj_gen_generic_launch(&it->blocks[0], it->word, it->count, &geo);
            args[3] = &params;
        } else {
            tj_gen_edges_launch(&it->blocks[0], it->word, it->edge, it->count, &geo);
        }
    }
    if (tj_gpu_launch(fn, geo.grid, geo.block, args) != TJ_OK || tj_gpu_sync() != TJ_OK ||
        !last_trace(line, sizeof(line)) || strstr(line, "kernel=tj_") == NULL) {
        fprintf(stderr, "kernel_quality: %s %s: the launch failed or left no trace\n", it->name,
                dname);
        return 1;
    }
    tj_gpu_free(tbuf);
    tj_gpu_free(pbuf);
    if (table_sectors > 0)
        table_sectors -= field(line, "load_sectors");
    if (pinned != NULL)
        tj_gpu_free_host(pinned);
    ideal(it, &ireq, &its, &ips, &iwords);
    if (it->kind == TJ_KERNEL_PARTS)
        units = it->count * tj_layout_kernel_units(it->layout, it->word, it->one);
    printf("%s,%s,%s,%s,%d,%d,%d,%d,%" PRId64 ",%" PRId64 ",%u,%u,%u,%u,%llu,%llu,%llu,%llu,%llu,"
           "%llu,%llu,%llu,%" PRId64 ",%" PRId64 ",%" PRId64 ",%s,%llu,%" PRId64 ",%" PRId64
           ",%d,%d\n",
           kname, it->family, dname,
           it->kind == TJ_KERNEL_FUSED     ? "fused"
           : it->kind == TJ_KERNEL_GENERIC ? "generic"
           : it->kind == TJ_KERNEL_PARTS   ? "parts"
                                           : "single",
           it->word, it->kind == TJ_KERNEL_SINGLE ? it->edge : 0,
           it->kind == TJ_KERNEL_SINGLE
               ? tj_gen_words_per_thread(&it->blocks[0], it->word, it->edge)
           : it->kind == TJ_KERNEL_GENERIC ? tj_gen_generic_words_per_thread(it->word)
                                           : 1,
           it->kind == TJ_KERNEL_FUSED ? it->nblocks : 1, bytes,
           it->kind == TJ_KERNEL_FUSED ? (int64_t)it->nmembers : it->count,
           geo.grid[0] * geo.grid[1] * geo.grid[2], geo.block[0] * geo.block[1] * geo.block[2],
           geo.grid[0], geo.grid[1], field(line, "load_requests"), field(line, "load_sectors"),
           field(line, "load_distinct"), field(line, "load_bytes"), field(line, "store_requests"),
           field(line, "store_sectors"), field(line, "store_distinct"), field(line, "store_bytes"),
           ireq, dir == TJ_DIR_PACK ? its : ips, dir == TJ_DIR_PACK ? ips : its, ident,
           table_sectors, units, iwords, narrowest_word(it), words_exact(it));
    fflush(stdout);
    return 0;
}

static int run_both(item_t *it)
{
    return run_item(it, TJ_DIR_PACK) | run_item(it, TJ_DIR_UNPACK);
}

static int make(item_t *it, const char *family, const char *name, int ndims, const int64_t *counts,
                const int64_t *strides, int64_t extent, int64_t count)
{
    tj_block_t b;
    memset(it, 0, sizeof(*it));
    it->family = family;
    snprintf(it->name, sizeof(it->name), "%s", name);
    it->kind = TJ_KERNEL_SINGLE;
    it->nblocks = 1;
    it->count = count;
    if (tj_block_make(0, extent, ndims, counts, strides, &b) != TJ_OK) {
        fprintf(stderr, "kernel_quality: bad block %s\n", name);
        return 1;
    }
    it->blocks[0] = b;
    /* The words of the runtime's launch: buffers aligned, object 0 at start 0. */
    it->word = tj_block_words(&b, count, 0, 0).word;
    it->edge = tj_block_words(&b, count, 0, 0).edge;
    return 0;
}

/* The words of a fused item's blocks, as the runtime gives them (move/fused.c): each member's
 * own launch word at its addresses (buffers aligned), without edges; the item's word the widest.
 * False when two members of one block would want different words (the runtime would give them
 * shapes of their own). */
static bool fused_words(item_t *f)
{
    bool set[TJ_FUSED_MAX] = {false};

    f->word = 1;
    for (int m = 0; m < f->nmembers; m++) {
        const tj_fused_member_t *mb = &f->members[m];
        tj_words_t w = tj_block_words(&f->blocks[mb->shape], mb->count,
                                      (uintptr_t)(mb->typed + f->blocks[mb->shape].start),
                                      (uintptr_t)mb->packed);
        int word = w.edge != 0 ? w.edge : w.word;
        if (set[mb->shape] && f->words[mb->shape] != word) {
            fprintf(stderr, "kernel_quality: %s: one block, two words\n", f->name);
            return false;
        }
        set[mb->shape] = true;
        f->words[mb->shape] = word;
        f->word = TJ_MAX(f->word, word);
    }
    return true;
}

/* TEMPI figure 8: runs of `run` bytes at a pitch of 512, `size` bytes of footprint; 3-D objects
 * in planes of 16 rows, every other plane's rows used. */
static int fig8(void)
{
    static const int64_t runs[] = {1, 8, 64, 512};
    static const struct {
        int nd;
        int64_t size;
    } objs[] = {{2, 1024}, {2, 4 << 20}, {3, 64 << 10}, {3, 4 << 20}};
    int rc = 0;

    for (size_t o = 0; o < TJ_ARRAY_SIZE(objs); o++)
        for (size_t r = 0; r < TJ_ARRAY_SIZE(runs); r++) {
            int64_t rows = objs[o].size / 512, counts[3], strides[3];
            char name[96];
            item_t it;
            counts[0] = runs[r];
            strides[0] = 1;
            if (objs[o].nd == 2) {
                counts[1] = rows;
                strides[1] = 512;
            } else {
                counts[1] = 16;
                strides[1] = 512;
                counts[2] = rows / 32;
                strides[2] = 512 * 32;
            }
            snprintf(name, sizeof(name), "fig8-%dd-%" PRId64 "k-run%" PRId64, objs[o].nd,
                     objs[o].size >> 10, runs[r]);
            rc |= make(&it, objs[o].nd == 2 ? "fig8-2d" : "fig8-3d", name, objs[o].nd, counts,
                       strides, objs[o].size, 1);
            rc = rc ? rc : run_both(&it);
            if (rc == 0 && objs[o].size == (4 << 20) &&
                (objs[o].nd == 2 ? runs[r] == 8 : runs[r] == 1 || runs[r] == 64)) {
                /* The generic kernel on the same layout: one dimension after merging (2-D, 8-byte
                 * runs), two (3-D, 1-byte runs) and three (3-D, 64-byte runs). */
                snprintf(it.name, sizeof(it.name), "generic-%s", name);
                it.family = "generic";
                it.kind = TJ_KERNEL_GENERIC;
                rc = run_both(&it);
            }
        }
    return rc;
}

/* The halo of a 64^3 grid, radius 3, 8 doubles (64 bytes) per point, in a padded array of
 * 70^3 points: the 26 ghost regions (disjoint, so that the fused unpack is one), per shape and
 * fused. */
static int halo(item_t *out)
{
    const int64_t n = 64, r = 3, p = n + 2 * r, point = 64;
    item_t fused, it;
    int64_t packed = 0;
    int rc = 0;

    memset(&fused, 0, sizeof(fused));
    fused.family = "halo-fused";
    snprintf(fused.name, sizeof(fused.name), "halo-fused-26");
    fused.kind = TJ_KERNEL_FUSED;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int d[3] = {dx, dy, dz};
                int64_t size[3], start[3], counts[3], strides[3], off;
                tj_block_t b;
                int s = 0;
                if (dx == 0 && dy == 0 && dz == 0)
                    continue;
                for (int a = 0; a < 3; a++) {
                    size[a] = d[a] == 0 ? n : r;
                    start[a] = d[a] < 0 ? 0 : d[a] == 0 ? r : n + r; /* ghost cells */
                }
                counts[0] = size[0] * point;
                counts[1] = size[1];
                counts[2] = size[2];
                strides[0] = 1;
                strides[1] = p * point;
                strides[2] = p * p * point;
                if (tj_block_make(0, counts[0], 3, counts, strides, &b) != TJ_OK)
                    return 1;
                off = ((start[2] * p + start[1]) * p + start[0]) * point;
                while (s < fused.nblocks && !tj_block_equal(&fused.blocks[s], &b))
                    s++;
                if (s == fused.nblocks) {
                    char name[96];
                    fused.blocks[fused.nblocks++] = b;
                    snprintf(name, sizeof(name), "halo-%" PRId64 "x%" PRId64 "x%" PRId64, size[0],
                             size[1], size[2]);
                    rc |= make(&it, "halo", name, 3, counts, strides, counts[0], 1);
                    rc = rc ? rc : run_both(&it);
                }
                fused.members[fused.nmembers++] = (tj_fused_member_t){s, off, packed, 1};
                packed += b.size;
            }
    *out = fused;
    return rc ? rc : fused_words(&fused) ? run_both(&fused) : 1;
}

/* Vectors of 4096 elements of `e` bytes, a stride of three elements. */
static int elements(void)
{
    static const int64_t sizes[] = {1, 2, 4, 8, 12, 16};
    int rc = 0;

    for (size_t i = 0; i < TJ_ARRAY_SIZE(sizes); i++) {
        int64_t e = sizes[i], counts[2] = {e, 4096}, strides[2] = {1, 3 * e};
        char name[96];
        item_t it;
        snprintf(name, sizeof(name), "element-%" PRId64 "B-stride%" PRId64, e, 3 * e);
        rc |= make(&it, "element", name, 2, counts, strides, 3 * e * 4096, 1);
        rc = rc ? rc : run_both(&it);
        if (rc == 0 && (e == 1 || e == 2 || e == 8)) {
            snprintf(it.name, sizeof(it.name), "generic-%s", name);
            it.family = "generic";
            it.kind = TJ_KERNEL_GENERIC;
            rc = run_both(&it);
        }
    }
    return rc;
}

/* Word size per dimension: 64 runs of 64 bytes whose object's extent (32769)
 * is odd, moved once; one run of 4099 bytes; rows of 1001 floats padded by 16 bytes, as one
 * object of 64 rows and as 16 objects of 4 rows; and the 26 halo regions fused with a member of
 * 12 bytes (3 ints) packed after them. */
static int words(const item_t *halo_fused)
{
    static const struct {
        const char *name;
        int ndims;
        int64_t counts[2], strides[2], extent, count;
    } shapes[] = {
        {"words-64x64B-extent32769", 2, {64, 64}, {1, 512}, 32769, 1},
        {"words-run4099B", 1, {4099, 1}, {1, 0}, 4099, 1},
        {"words-1001float-rows-pad16", 2, {4004, 64}, {1, 4020}, 64 * 4020, 1},
        {"words-1001float-4rows-pad16-x16", 2, {4004, 4}, {1, 4020}, 4 * 4020, 16},
    };
    int64_t twelve[1] = {12}, one[1] = {1};
    item_t it, fused = *halo_fused;
    int64_t packed = 0;
    tj_block_t b;
    int rc = 0, s;

    for (size_t i = 0; i < TJ_ARRAY_SIZE(shapes) && rc == 0; i++) {
        rc = make(&it, "words", shapes[i].name, shapes[i].ndims, shapes[i].counts,
                  shapes[i].strides, shapes[i].extent, shapes[i].count);
        rc = rc ? rc : run_both(&it);
    }
    if (rc != 0 || tj_block_make(0, 12, 1, twelve, one, &b) != TJ_OK)
        return 1;
    fused.family = "halo-fused";
    snprintf(fused.name, sizeof(fused.name), "halo-fused-26-and-12B");
    for (int m = 0; m < fused.nmembers; m++)
        packed += fused.blocks[fused.members[m].shape].size * fused.members[m].count;
    s = fused.nblocks++;
    fused.blocks[s] = b;
    /* In the typed buffer past every halo region. */
    fused.members[fused.nmembers++] = (tj_fused_member_t){s, 70 * 70 * 70 * 64, packed, 1};
    return fused_words(&fused) ? run_both(&fused) : 1;
}

/* A parts item of family @p family of the layout @p l, finished here (its reference is the
 * item's). */
static int run_parts(const char *name, tj_layout_t *l, int64_t extent, int64_t count,
                     const char *family)
{
    item_t it;
    int rc;

    memset(&it, 0, sizeof(it));
    it.family = family;
    snprintf(it.name, sizeof(it.name), "%s", name);
    it.kind = TJ_KERNEL_PARTS;
    it.count = count;
    if (tj_layout_finish(&l, extent, l->pre[l->nparts] * tj_layout_elements(l)) != TJ_OK) {
        fprintf(stderr, "kernel_quality: bad layout %s\n", name);
        tj_layout_release(l);
        return 1;
    }
    l->start = 0; /* launched at the typed buffer's start */
    it.layout = l;
    /* The words of the runtime's launch: buffers aligned, frame element 0 at the start. */
    it.word = tj_layout_launch_word(l, count, 0, 0, &it.one);
    rc = run_both(&it);
    tj_layout_release(l);
    return rc;
}

/* Layouts: an irregular indexed type of doubles (20000 blocks of 1 to 3, gaps of 0
 * to 2: a table in device memory; its first 200 blocks: baked), a struct {int; 3 doubles 16
 * bytes apart; MPI_SHORT_INT} of 4096 objects, 4096 MPI_SHORT_INT (a hole in each), and 17
 * strided dimensions (past a block's 16). */
static int parts(void)
{
    tj_layout_builder_t b;
    tj_layout_t *l;
    tj_ir_t *ir = calloc(1, sizeof(*ir));
    uint64_t x = 12345;
    int rc = 0;

    if (ir == NULL)
        return 1;
    for (int n = 0; n < 2; n++) {
        int64_t at = 0, blocks = n == 0 ? 20000 : 200;
        tj_layout_builder_init(&b);
        for (int64_t i = 0; i < blocks; i++) {
            int64_t bl = 1 + (int64_t)((x = x * 6364136223846793005ull + 1) >> 62) % 3;
            tj_layout_builder_add_run(&b, at * 8, bl * 8);
            at += bl + (int64_t)((x = x * 6364136223846793005ull + 1) >> 62) % 3;
        }
        if (tj_layout_builder_end(&b, &l) != TJ_OK)
            return 1;
        rc |= run_parts(n == 0 ? "parts-indexed-20000x8B-table" : "parts-indexed-200x8B-baked", l,
                        at * 8, 1, "parts");
    }
    /* struct {int; vector(3, 1, 2, double); MPI_SHORT_INT} at 0, 8, 80; extent 88. */
    tj_layout_builder_init(&b);
    tj_layout_builder_add_run(&b, 0, 4);
    tj_ir_init_dense(ir, 0, 8);
    tj_ir_push_stream(ir, 0, 3, 16);
    tj_layout_builder_add_chain(&b, 8, 1, ir, 40);
    tj_layout_builder_add_run(&b, 80, 2);
    tj_layout_builder_add_run(&b, 84, 4);
    if (tj_layout_builder_end(&b, &l) != TJ_OK)
        return 1;
    rc |= run_parts("parts-struct-mixed-x4096", l, 88, 4096, "parts");
    /* contiguous(4096, MPI_SHORT_INT): two runs a pair, a frame of 4096. */
    tj_layout_builder_init(&b);
    tj_layout_builder_add_run(&b, 0, 2);
    tj_layout_builder_add_run(&b, 4, 4);
    if (tj_layout_builder_end(&b, &l) != TJ_OK || tj_layout_stream(&l, 0, 4096, 8) != TJ_OK)
        return 1;
    rc |= run_parts("parts-short-int-x4096", l, 4096 * 8, 1, "parts");
    /* 17 dimensions of 2 elements, each stride one byte more than twice the last: no two of
     * them merge, and a block holds 16. */
    {
        int64_t stride = 3;
        tj_ir_init_dense(ir, 0, 2);
        for (int d = 1; d < 17; d++, stride = 2 * stride + 1)
            tj_ir_push_stream(ir, 0, 2, stride);
        if (tj_layout_builder_from_chain(ir, &l) != TJ_OK)
            return 1;
        rc |= run_parts("parts-17-dimensions", l, stride, 1, "parts");
    }
    free(ir);
    return rc;
}

/* A layout of the runs (disp, len) of @p runs, one after the other. */
static tj_layout_t *runs_layout(const int64_t (*runs)[2], int n)
{
    tj_layout_builder_t b;
    tj_layout_t *l = NULL;

    tj_layout_builder_init(&b);
    for (int i = 0; i < n; i++)
        tj_layout_builder_add_run(&b, runs[i][0], runs[i][1]);
    return tj_layout_builder_end(&b, &l) == TJ_OK ? l : NULL;
}

/* Mixed structs, whose parts take words of their own (type/layout_words.h): struct {double[3];
 * int; char at 32} (a 28-byte run beside a char), one object and 4096; struct {int; double}
 * (a hole after the int), 4096; a gather of 256 MPI_DOUBLE_INT pairs at irregular places and of
 * 200 particles {double x[3], v[3]; int id; float m} (56 bytes; neighbours merge); struct
 * {double[1000]; int[500] at 8192; char[10] at 10240} (arrays beside a few chars) and struct
 * {double[1001]; char at 8016} (a run of 8008 bytes: 16-byte words and an 8-byte tail), one
 * object each. */
static int mixed(void)
{
    static const int64_t d3ic[][2] = {{0, 28}, {32, 1}}, intdouble[][2] = {{0, 4}, {8, 8}},
                         arrays[][2] = {{0, 8000}, {8192, 2000}, {10240, 10}},
                         long_run[][2] = {{0, 8008}, {8016, 1}};
    static const struct {
        const char *name;
        const int64_t (*runs)[2];
        int n;
        int64_t extent, count;
    } structs[] = {
        {"mixed-struct-d3-i-c", d3ic, 2, 40, 1},
        {"mixed-struct-d3-i-c-x4096", d3ic, 2, 40, 4096},
        {"mixed-struct-int-double-x4096", intdouble, 2, 16, 4096},
        {"mixed-struct-arrays", arrays, 3, 10256, 1},
        {"mixed-struct-d1001-c", long_run, 2, 8024, 1},
    };
    int64_t(*gather)[2] = calloc(256, sizeof(*gather));
    uint64_t x = 777;
    int rc = 0;

    if (gather == NULL)
        return 1;
    for (size_t i = 0; i < TJ_ARRAY_SIZE(structs) && rc == 0; i++) {
        tj_layout_t *l = runs_layout(structs[i].runs, structs[i].n);
        rc = l == NULL
                 ? 1
                 : run_parts(structs[i].name, l, structs[i].extent, structs[i].count, "mixed");
    }
    /* MPI_DOUBLE_INT pairs (12 bytes, extent 16) and particles (56 bytes) at irregular indices:
     * 1 to 4 elements apart. */
    for (int g = 0; g < 2 && rc == 0; g++) {
        int64_t at = 0, elem = g == 0 ? 16 : 56, len = g == 0 ? 12 : 56, n = g == 0 ? 256 : 200;
        tj_layout_t *l;
        for (int64_t i = 0; i < n; i++) {
            gather[i][0] = at * elem;
            gather[i][1] = len;
            at += 1 + (int64_t)((x = x * 6364136223846793005ull + 1) >> 62);
        }
        l = runs_layout((const int64_t(*)[2])gather, (int)n);
        rc = l == NULL
                 ? 1
                 : run_parts(g == 0 ? "mixed-double-int-gather-256" : "mixed-particle-gather-200",
                             l, at * elem, 1, "mixed");
    }
    free(gather);
    return rc;
}

int main(int argc, char **argv)
{
    static item_t halo_fused;
    char cache[4200];
    int rc;

    if (argc != 3 || (trace_path = getenv("FAKECUDA_TRACE")) == NULL) {
        fprintf(stderr, "usage: FAKECUDA_TRACE=FILE bench_kernel_quality OUTDIR IDENT\n");
        return 2;
    }
    outdir = argv[1];
    snprintf(ident, sizeof(ident), "%s", argv[2]);
    snprintf(cache, sizeof(cache), "%s/cache", outdir);
    mkdir(cache, 0700);
    tj_lookup_set_store(cache, 0);
    if (tj_gpu_init() != TJ_OK || tj_gpu_use(0) != TJ_OK) {
        fprintf(stderr, "kernel_quality: no (test) CUDA driver\n");
        return 1;
    }
    printf("kernel,family,dir,kind,word,edge,words_per_thread,shapes,packed_bytes,objects,blocks,"
           "threads,grid_x,grid_y,"
           "load_requests,load_sectors,load_distinct,load_bytes,store_requests,store_sectors,"
           "store_distinct,store_bytes,ideal_requests,ideal_load_sectors,ideal_store_sectors,"
           "ident,table_load_sectors,units,ideal_words,narrowest,words_exact\n");
    rc = fig8();
    rc |= halo(&halo_fused);
    rc |= elements();
    rc |= parts();
    rc |= mixed();
    rc |= words(&halo_fused);
    tj_lookup_finalize();
    tj_gpu_finalize();
    return rc;
}
