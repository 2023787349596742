/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU pack and unpack. A plan made once per type picks the loop that moves one row of runs (the
 * run length folded into constant-size moves, or the dense loop for short runs close together)
 * and the widest instruction set the processor has; each call walks the dimensions beyond the
 * row, and the objects, with an odometer, and prefetches ahead in rows beyond the caches. */
#include "type/cpu.h"

#include <string.h>
#include <unistd.h>

#include "util/common.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TJ_CPU_X86 1
#include <immintrin.h>
#else
#define TJ_CPU_X86 0
#endif

/* One row: n runs of `run` bytes, `stride` bytes apart in typed memory, back to back in packed
 * memory; `ahead`: how far down the row a prefetching loop fetches. */
typedef void (*tj_cpu_rows_fn)(char *packed, char *typed, int64_t n, int64_t stride, int64_t run,
                               int64_t ahead);

/* A group of `rows` such rows, `pitch` bytes apart in typed memory and back to back in packed
 * memory, moved run by run across the group; `ahead` as for a row. */
typedef void (*tj_cpu_group_fn)(char *packed, char *typed, int64_t n, int64_t stride, int64_t run,
                                int64_t rows, int64_t pitch, int64_t ahead);

/* The variants of each loop. TJ_CPU_AGAIN unpacks rows whose stride is a multiple of 512 bytes
 * and whose runs are short, where each run is alone in its cache line: the typed lines then fall
 * into an eighth of the L1 cache's sets, and on AMD Zen 5 one store per line runs at a third of
 * the speed of two, for objects in the L2 and L3 caches (bench/RESULTS.md); a second store to
 * the line, of the run's last byte again, takes that away. Rows that span more than the L3 cache
 * (again_span) are prefetched instead: on Zen 3 the second store cost there (faces of 8-byte
 * runs, 128 MiB: 0.94 of MPICH's speed storing twice, 1.09 prefetched), while within the L3 it
 * kept MPICH's speed (16 MiB: 1.0, prefetched 0.75-0.95). */
enum { TJ_CPU_PLAIN, TJ_CPU_PREFETCH, TJ_CPU_AGAIN, TJ_CPU_VARIANTS };
#define TJ_CPU_AGAIN_RUN 32

/* Rows whose runs lie at least a cache line apart, with the next row closer than one, are moved
 * in groups (the group loops of cpu_loops.h): the transposes of FFTs, whose rows start 8 or 16
 * bytes apart and whose runs are the matrix's row length apart. Row after row, the runs of each
 * row land in lines of their own, and the lines of a power-of-two stride fall into a few cache
 * sets: each line was brought in again for every row that touches it (unpacking 256 x 256
 * complex doubles ran at 1/7 of a memcpy's speed). A group takes as many rows as span
 * TJ_CPU_GROUP_BYTES of the typed side, at most TJ_CPU_GROUP_ROWS: each of its typed lines is
 * brought in once, and its packed side is written as that many sequential streams, which the
 * cache's ways hold even when the streams fall into one set. */
#define TJ_CPU_GROUP_BYTES 128
#define TJ_CPU_GROUP_ROWS  8

/* Runs longer than this are moved by the C library's memcpy, which is as fast as any loop there
 * and switches to its own strategies (string moves, non-temporal stores) for very long ones. */
#define TJ_LOOPS_CALL 2048

#define TJ_LOOPS_SUFFIX base
#define TJ_LOOPS_ATTR
#define TJ_LOOPS_VEC    16
#define TJ_LOOPS_MASKED 0
#include "type/cpu_loops.h"
#undef TJ_LOOPS_SUFFIX
#undef TJ_LOOPS_ATTR
#undef TJ_LOOPS_VEC
#undef TJ_LOOPS_MASKED

#if TJ_CPU_X86
#define TJ_LOOPS_SUFFIX avx2
#define TJ_LOOPS_ATTR   __attribute__((target("avx2")))
#define TJ_LOOPS_VEC    32
#define TJ_LOOPS_MASKED 0
#include "type/cpu_loops.h"
#undef TJ_LOOPS_SUFFIX
#undef TJ_LOOPS_ATTR
#undef TJ_LOOPS_VEC
#undef TJ_LOOPS_MASKED

#define TJ_LOOPS_SUFFIX avx512
#define TJ_LOOPS_ATTR   __attribute__((target("avx2,avx512f,avx512bw,avx512vbmi2")))
#define TJ_LOOPS_VEC    64
#define TJ_LOOPS_MASKED 1
#include "type/cpu_loops.h"
#undef TJ_LOOPS_SUFFIX
#undef TJ_LOOPS_ATTR
#undef TJ_LOOPS_VEC
#undef TJ_LOOPS_MASKED
#endif

/* Each level's table; a level the build has not (another processor family) runs the portable
 * loops. */
static const tj_cpu_rows_fn (*const levels[TJ_CPU_ISAS])[2][TJ_CPU_VARIANTS] = {
    rows_base,
#if TJ_CPU_X86
    rows_avx2,
    rows_avx512,
#else
    rows_base,
    rows_base,
#endif
};
static const tj_cpu_group_fn (*const group_levels[TJ_CPU_ISAS])[2][2] = {
    groups_base,
#if TJ_CPU_X86
    groups_avx2,
    groups_avx512,
#else
    groups_base,
    groups_base,
#endif
};

/* The dense loop takes runs of at most this many bytes. It moves a 64-byte window in about the
 * same time whatever the runs in it (the compress or expand dominates): 12 GB/s of packed bytes
 * in the caches for runs of 1-8 B at a pitch of twice the run, where the constant-size moves of
 * 8-byte runs reach 14, and of 2-4-byte runs 4-8. */
#define TJ_CPU_DENSE_RUN 4

/* Unpacks whose typed bytes span more than this (beyond the L3 cache) write runs of 2-4 bytes
 * with their own stores, not the dense loop's masked ones: memory bound, those ran at 6.6-7.1
 * GB/s against 8.3-8.8 for 2-4-byte runs at pitch 4-8 (64 MiB). Single bytes keep it (4.9
 * against 2.9). */
#define TJ_CPU_DENSE_UNPACK_SPAN ((int64_t)8 << 20)

/* Runs up to this long are prefetched in rows beyond the caches; the hardware prefetches longer
 * ones well, and the prefetch instructions of their lines slowed them down (4 KiB runs: 0.7 of
 * the speed without). */
#define TJ_CPU_PREFETCH_RUN 1024

/* Beyond the L2 cache, a group loop prefetches the typed lines of its rows this many steps of
 * the row ahead (Zen 3: 512 x 512 complex doubles, steps of 8 KiB, pack 1061 -> 537 us, unpack
 * 1114 -> 611; 1024 x 1024 doubles 1.2-1.4x, complex doubles 1.05-1.1x). */
#define TJ_CPU_GROUP_AHEAD 8

/* The size of a cache level (sysconf's _SC_LEVEL2_CACHE_SIZE or _SC_LEVEL3_CACHE_SIZE), read
 * once into *at; `fallback` where the system does not say. */
static int64_t cache_size(int64_t *at, int name, int64_t fallback)
{
    int64_t s = __atomic_load_n(at, __ATOMIC_RELAXED);

    if (s == 0) {
        long size = sysconf(name);
        s = size > 0 ? size : fallback;
        __atomic_store_n(at, s, __ATOMIC_RELAXED);
    }
    return s;
}

/* Rows whose typed bytes span more than this are prefetched: the L2 cache's size, 1 MiB where
 * the system does not say. */
static int64_t prefetch_span(void)
{
    static int64_t span;
    return cache_size(&span, _SC_LEVEL2_CACHE_SIZE, 1 << 20);
}

/* Rows that span more than this store once (TJ_CPU_AGAIN): the L3 cache's size, 32 MiB where
 * the system does not say. */
static int64_t again_span(void)
{
    static int64_t span;
    return cache_size(&span, _SC_LEVEL3_CACHE_SIZE, 32 << 20);
}

tj_cpu_isa_t tj_cpu_isa_best(void)
{
    static int best = -1;
    int b = __atomic_load_n(&best, __ATOMIC_RELAXED);

    if (b < 0) {
        b = TJ_CPU_ISA_BASE;
#if TJ_CPU_X86
        __builtin_cpu_init();
        /* AVX-512 only with VBMI2 (Ice Lake, Zen 4 and later): the processors before those lower
         * their clock for 512-bit moves. */
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vbmi2"))
            b = TJ_CPU_ISA_AVX512;
        else if (__builtin_cpu_supports("avx2"))
            b = TJ_CPU_ISA_AVX2;
#endif
        __atomic_store_n(&best, b, __ATOMIC_RELAXED);
    }
    return (tj_cpu_isa_t)b;
}

static tj_cpu_loop_t loop_for(int64_t run)
{
/* clang-format off */
#define TJ_CPU_CASE(_run) case _run: return TJ_CPU_LOOP_##_run;
    switch (run) {
    TJ_CPU_RUNS(TJ_CPU_CASE)
    /* clang-format on */
    default:
        return TJ_CPU_LOOP_ANY;
    }
#undef TJ_CPU_CASE
}

void tj_cpu_plan_isa(const tj_block_t *block, tj_cpu_isa_t isa, tj_cpu_plan_t *plan)
{
    int64_t run = block->counts[0];
    int d = 1;

    /* Dimensions of one element add nothing; one whose stride is the run so far continues it. */
    for (; d < block->ndims; d++) {
        if (block->counts[d] == 1)
            continue;
        if (block->strides[d] != run)
            break;
        run *= block->counts[d];
    }
    if (isa > tj_cpu_isa_best())
        isa = tj_cpu_isa_best();
    *plan = (tj_cpu_plan_t){
        .run = run,
        .first = (uint8_t)d,
        .loop = (uint8_t)loop_for(run),
        .dense = isa == TJ_CPU_ISA_AVX512 && run <= TJ_CPU_DENSE_RUN,
        .isa = (uint8_t)isa,
    };
}

void tj_cpu_plan(const tj_block_t *block, tj_cpu_plan_t *plan)
{
    tj_cpu_plan_isa(block, tj_cpu_isa_best(), plan);
}

/* The typed bytes `count` objects span, from the first byte they touch to the last (INT64_MAX
 * where that does not fit). */
static int64_t typed_span(const tj_block_t *b, int64_t count)
{
    int64_t span = b->hi - b->lo, more;

    if (count > 1 &&
        (!tj_mul64(count - 1, tj_abs64(b->extent), &more) || !tj_add64(span, more, &span)))
        return INT64_MAX;
    return span;
}

/* The rows of dimension 1 (oc[1] rows os[1] bytes apart, rows of runs s1 apart) that a group
 * loop moves at once; 1: row by row. An unpack writes the runs of a group in another order than
 * the typemap's: run i of a later row before run i + 1 of an earlier one. Where those overlap
 * the last write must still win, so an unpack groups only as many rows as lie, with their runs,
 * within one step of s1 (runs i of the rows of a group may overlap each other: they are still
 * written in the rows' order). */
static int64_t group_rows(int64_t run, int64_t s1, int no, const int64_t *oc, const int64_t *os,
                          int unpack)
{
    const int64_t step = tj_abs64(s1);
    int64_t pitch, rows;

    if (no < 2 || step < 64)
        return 1;
    pitch = tj_abs64(os[1]);
    if (pitch == 0 || pitch >= 64)
        return 1;
    rows = TJ_MIN(oc[1], TJ_MIN(TJ_CPU_GROUP_ROWS, TJ_MAX(2, TJ_CPU_GROUP_BYTES / pitch)));
    if (unpack && (rows - 1) * pitch + run > step)
        rows = run <= step ? (step - run) / pitch + 1 : 1;
    return rows >= 2 ? rows : 1;
}

/* The dimensions `count` objects are walked in: the rows of the block's dimensions after the run
 * and of the objects (one more dimension, of stride extent), innermost first, oc[] rows os[]
 * bytes apart; neighbours that continue each other are one dimension. Returns how many, with
 * the run (objects that continue each other's one run make one run of them all). */
static inline __attribute__((always_inline)) int walk_dims(const tj_block_t *b,
                                                           const tj_cpu_plan_t *p, int64_t count,
                                                           int64_t *run, int64_t *oc, int64_t *os)
{
    int no = 0;

    *run = p->run;
    for (int d = p->first; d < b->ndims; d++) {
        if (b->counts[d] == 1)
            continue;
        if (no > 0 && b->strides[d] == oc[no - 1] * os[no - 1]) {
            oc[no - 1] *= b->counts[d];
            continue;
        }
        oc[no] = b->counts[d];
        os[no++] = b->strides[d];
    }
    if (count > 1) {
        if (no == 0 && b->extent == *run) {
            *run *= count;
        } else if (no > 0 && b->extent == oc[no - 1] * os[no - 1]) {
            oc[no - 1] *= count;
        } else {
            oc[no] = count;
            os[no++] = b->extent;
        }
    }
    return no;
}

int64_t tj_cpu_group_rows(const tj_block_t *block, const tj_cpu_plan_t *plan, int64_t count,
                          bool unpack)
{
    int64_t oc[TJ_BLOCK_MAX_DIMS + 1], os[TJ_BLOCK_MAX_DIMS + 1], run;
    int no;

    if (count <= 0 || block->size == 0)
        return 1;
    no = walk_dims(block, plan, count, &run, oc, os);
    return no == 0 ? 1 : group_rows(run, os[0], no, oc, os, unpack);
}

/* The odometer of walk for a group loop: dimension 1 advances by the rows of a group (the last
 * group of it may be shorter). */
static void walk_groups(tj_cpu_group_fn gfn, char *typed, char *packed, int no, const int64_t *oc,
                        const int64_t *os, int64_t run, int64_t group, int64_t ahead)
{
    int64_t idx[TJ_BLOCK_MAX_DIMS + 1] = {0};
    const int64_t row_bytes = run * oc[0];

    for (;;) {
        const int64_t rows = TJ_MIN(group, oc[1] - idx[1]);
        gfn(packed, typed, oc[0], os[0], run, rows, os[1], ahead);
        packed += row_bytes * rows;
        int d = 1;
        for (; d < no; d++) {
            const int64_t step = d == 1 ? rows : 1;
            if ((idx[d] += step) < oc[d]) {
                typed += step * os[d];
                break;
            }
            typed -= (idx[d] - step) * os[d];
            idx[d] = 0;
        }
        if (d >= no)
            break;
    }
}

/* Moves `count` objects in the dimensions of walk_dims: the innermost is the row a loop moves
 * (or a group of rows of the next one, group_rows); the others advance an odometer. */
__attribute__((aligned(64))) static void walk(const tj_block_t *b, const tj_cpu_plan_t *p,
                                              char *typed, char *packed, int64_t count, int unpack)
{
    int64_t oc[TJ_BLOCK_MAX_DIMS + 1], os[TJ_BLOCK_MAX_DIMS + 1], idx[TJ_BLOCK_MAX_DIMS + 1];
    int64_t run, ahead = 0;
    int no, loop = p->loop, variant = TJ_CPU_PLAIN;
    tj_cpu_rows_fn fn;

    if (count <= 0 || b->size == 0)
        return;
    typed += b->start;
    no = walk_dims(b, p, count, &run, oc, os);
    if (run != p->run)
        loop = TJ_CPU_LOOP_ANY;
    if (no == 0) {
        /* One contiguous run. */
        if (unpack)
            memmove(typed, packed, (size_t)run);
        else
            memcpy(packed, typed, (size_t)run);
        return;
    }

    const int64_t n1 = oc[0], s1 = os[0], row_bytes = run * n1, span = typed_span(b, count);
    const int64_t group = no > 1 ? group_rows(run, s1, no, oc, os, unpack) : 1;
    tj_cpu_group_fn gfn = NULL;
    if (group > 1) {
        /* Group loops: prefetching TJ_CPU_GROUP_AHEAD steps down the rows beyond the caches. */
        const int pf = span > prefetch_span();
        ahead = pf ? TJ_CPU_GROUP_AHEAD * s1 : 0;
        gfn = group_levels[p->isa][loop][unpack][pf];
    } else if (p->dense && s1 > run && s1 <= 64 - run &&
               (!unpack || run == 1 || span <= TJ_CPU_DENSE_UNPACK_SPAN)) {
        loop = TJ_CPU_LOOP_DENSE;
    } else if (unpack && run <= TJ_CPU_AGAIN_RUN && s1 % 512 == 0 && span <= again_span()) {
        variant = TJ_CPU_AGAIN;
    } else if (tj_abs64(s1) >= 128 && run <= TJ_CPU_PREFETCH_RUN && span > prefetch_span()) {
        /* At least 16 runs and 4 KiB ahead: the latency of memory at the rate of the loop. */
        int64_t runs = TJ_MAX(16, (4096 + tj_abs64(s1) - 1) / tj_abs64(s1));
        ahead = runs * s1;
        variant = TJ_CPU_PREFETCH;
    }
    if (gfn != NULL) {
        walk_groups(gfn, typed, packed, no, oc, os, run, group, ahead);
        return;
    }
    fn = levels[p->isa][loop][unpack][variant];
    if (no == 1) {
        fn(packed, typed, n1, s1, run, ahead);
        return;
    }
    for (int d = 1; d < no; d++)
        idx[d] = 0;
    for (;;) {
        fn(packed, typed, n1, s1, run, ahead);
        packed += row_bytes;
        int d = 1;
        for (; d < no; d++) {
            if (++idx[d] < oc[d]) {
                typed += os[d];
                break;
            }
            typed -= (oc[d] - 1) * os[d];
            idx[d] = 0;
        }
        if (d >= no)
            break;
    }
}

void tj_cpu_pack_plan(const tj_block_t *block, const tj_cpu_plan_t *plan, const void *typed,
                      int64_t count, void *packed)
{
    walk(block, plan, (char *)typed, packed, count, 0);
}

void tj_cpu_unpack_plan(const tj_block_t *block, const tj_cpu_plan_t *plan, const void *packed,
                        int64_t count, void *typed)
{
    walk(block, plan, typed, (char *)packed, count, 1);
}

void tj_cpu_pack(const tj_block_t *block, const void *typed, int64_t count, void *packed)
{
    tj_cpu_plan_t plan;

    tj_cpu_plan(block, &plan);
    walk(block, &plan, (char *)typed, packed, count, 0);
}

void tj_cpu_unpack(const tj_block_t *block, const void *packed, int64_t count, void *typed)
{
    tj_cpu_plan_t plan;

    tj_cpu_plan(block, &plan);
    walk(block, &plan, typed, (char *)packed, count, 1);
}

/* Every part of `count` objects of a layout, in typemap order: runs copied whole, the other
 * parts by the block walk of their shape. */
static void walk_layout(const tj_layout_t *l, char *typed, char *packed, int64_t count, int unpack)
{
    int64_t elems = tj_layout_elements(l);

    for (int64_t k = 0; k < count; k++) {
        char *obj = typed + l->start + k * l->extent;
        for (int64_t e = 0; e < elems; e++) {
            char *el = obj + tj_layout_frame_offset(l, e);
            for (int64_t p = 0; p < l->nparts; p++) {
                const tj_block_t *sh = &l->shapes[l->shape != NULL ? l->shape[p] : 0];
                int64_t len = l->pre[p + 1] - l->pre[p];
                char *at = el + l->disp[p];
                if (tj_layout_is_run(sh)) {
                    if (unpack)
                        memmove(at, packed, (size_t)len);
                    else
                        memcpy(packed, at, (size_t)len);
                } else {
                    tj_cpu_plan_t plan;
                    tj_cpu_plan(sh, &plan);
                    walk(sh, &plan, at, packed, len / sh->size, unpack);
                }
                packed += len;
            }
        }
    }
}

void tj_cpu_pack_layout(const tj_layout_t *l, const void *typed, int64_t count, void *packed)
{
    walk_layout(l, (char *)typed, packed, count, 0);
}

void tj_cpu_unpack_layout(const tj_layout_t *l, const void *packed, int64_t count, void *typed)
{
    walk_layout(l, typed, (char *)packed, count, 1);
}
