/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU packer's row loops, written once and compiled once per instruction set: cpu.c includes
 * this file for each level with TJ_LOOPS_SUFFIX (the name suffix), TJ_LOOPS_ATTR (the function
 * attribute that enables the level), TJ_LOOPS_VEC (the widest move: 16, 32 or 64 bytes) and
 * TJ_LOOPS_MASKED (1 where byte-masked loads, stores, compress and expand exist: AVX-512 BW and
 * VBMI2) defined, and gets the tables rows_SUFFIX and groups_SUFFIX of every loop of that level.
 *
 * A row is `n` runs of `run` bytes, `stride` bytes apart on the typed side and back to back on
 * the packed side. Each loop kind moves runs of one length with constant-size moves (the compiler
 * folds the length into the moves), or any length with overlapping moves of the widest size that
 * fits. Each loop exists plain, with software prefetch `ahead` bytes down the row (for rows
 * whose typed bytes lie beyond the caches), and, to unpack, storing twice to each run's line
 * (TJ_CPU_AGAIN in cpu.c); a group loop moves several rows at once, run by run across them. */

#define TJ_LOOPS_CAT2(_a, _b) _a##_##_b
#define TJ_LOOPS_CAT(_a, _b)  TJ_LOOPS_CAT2(_a, _b)
#define F(_name)              TJ_LOOPS_CAT(_name, TJ_LOOPS_SUFFIX)
#define TJ_LOOPS_INLINE       TJ_LOOPS_ATTR static inline __attribute__((always_inline))
/* Each loop starts on a cache line, so that its speed does not depend on where the linker puts
 * it: 64 runs of 64 bytes took 0.13 us a call at one placement and 0.10 at another (Zen 3). */
#define TJ_LOOPS_FN TJ_LOOPS_ATTR static __attribute__((aligned(64))) void

#if TJ_LOOPS_VEC == 64
typedef __m512i F(vec_t);
#define VLOAD(_p)      _mm512_loadu_si512((const void *)(_p))
#define VSTORE(_p, _v) _mm512_storeu_si512((void *)(_p), (_v))
#elif TJ_LOOPS_VEC == 32
typedef __m256i F(vec_t);
#define VLOAD(_p)      _mm256_loadu_si256((const __m256i *)(_p))
#define VSTORE(_p, _v) _mm256_storeu_si256((__m256i *)(_p), (_v))
#else
/* The portable level: 16-byte moves written as memcpy of a constant size, which compilers turn
 * into one vector load and store. */
typedef struct {
    char b[16];
} F(vec_t);
#define VLOAD(_p)      F(load16)(_p)
#define VSTORE(_p, _v) F(store16)((_p), (_v))
TJ_LOOPS_INLINE F(vec_t) F(load16)(const char *p)
{
    F(vec_t) v;
    memcpy(&v, p, 16);
    return v;
}
TJ_LOOPS_INLINE void F(store16)(char *p, F(vec_t) v)
{
    memcpy(p, &v, 16);
}
#endif

/* Copy n bytes, size <= n <= 2 * size, as two moves of @p size bytes (a constant: one load and
 * one store each), the second ending at byte n, both loaded before either is stored. */
TJ_LOOPS_INLINE void F(copy_ends)(char *d, const char *s, int64_t n, size_t size)
{
    char a[32], b[32];

    memcpy(a, s, size);
    memcpy(b, s + n - size, size);
    memcpy(d, a, size);
    memcpy(d + n - size, b, size);
}

/* Copy n bytes, n > 0: up to four vectors (the last ones overlapping the ones before), all
 * loaded before any is stored, as the C library's memcpy does (stores first let a load wait
 * behind a store to an address that looks alike: 256-byte runs ran 10% slower); longer runs in
 * groups of four; below a vector, two overlapping moves of the widest size that fits. Every byte
 * is read before the move that writes it and written with its own value, so a run that overlaps
 * another still gets the bytes of the later run last. A constant n folds to its moves. */
TJ_LOOPS_INLINE void F(copy)(char *d, const char *s, int64_t n)
{
    enum { V = TJ_LOOPS_VEC };

    if (n >= V) {
        if (n <= 2 * V) {
            F(vec_t) a = VLOAD(s), b = VLOAD(s + n - V);
            VSTORE(d, a);
            VSTORE(d + n - V, b);
            return;
        }
        if (n <= 4 * V) {
            F(vec_t) a = VLOAD(s), b = VLOAD(s + V), c = VLOAD(s + n - 2 * V);
            F(vec_t) e = VLOAD(s + n - V);
            VSTORE(d, a);
            VSTORE(d + V, b);
            VSTORE(d + n - 2 * V, c);
            VSTORE(d + n - V, e);
            return;
        }
        if (n > TJ_LOOPS_CALL) {
            memcpy(d, s, (size_t)n);
            return;
        }
        int64_t i = 0;
        if (n >= 8 * V) {
            /* A long run: one unaligned head, then stores aligned to the vector, so that no
             * store but the head and the tail splits across two cache lines. */
            VSTORE(d, VLOAD(s));
            i = V - (int64_t)((uintptr_t)d & (V - 1));
        }
        for (; i + 4 * V < n; i += 4 * V) {
            F(vec_t) a = VLOAD(s + i), b = VLOAD(s + i + V), c = VLOAD(s + i + 2 * V);
            F(vec_t) e = VLOAD(s + i + 3 * V);
            VSTORE(d + i, a);
            VSTORE(d + i + V, b);
            VSTORE(d + i + 2 * V, c);
            VSTORE(d + i + 3 * V, e);
        }
        F(vec_t) a = VLOAD(s + n - 4 * V), b = VLOAD(s + n - 3 * V), c = VLOAD(s + n - 2 * V);
        F(vec_t) e = VLOAD(s + n - V);
        VSTORE(d + n - 4 * V, a);
        VSTORE(d + n - 3 * V, b);
        VSTORE(d + n - 2 * V, c);
        VSTORE(d + n - V, e);
    } else if (TJ_LOOPS_VEC > 32 && n >= 32) {
        F(copy_ends)(d, s, n, 32);
    } else if (TJ_LOOPS_VEC > 16 && n >= 16) {
        F(copy_ends)(d, s, n, 16);
    } else if (n >= 8) {
        F(copy_ends)(d, s, n, 8);
    } else if (n >= 4) {
        F(copy_ends)(d, s, n, 4);
    } else if (n >= 2) {
        F(copy_ends)(d, s, n, 2);
    } else {
        *d = *s;
    }
}

/* The lines of one run `ahead` bytes further down the row: the line of its first byte, and one
 * more per 64 bytes of a longer run. */
TJ_LOOPS_INLINE void F(prefetch)(const char *at, int64_t run, int write)
{
    for (int64_t j = 0; j < run; j += 64) {
        if (write)
            __builtin_prefetch(at + j, 1, 3);
        else
            __builtin_prefetch(at + j, 0, 3);
    }
}

/* Runs of 1, 2, 4, 8 or 16 bytes (constants), four at a time: all four loaded before any is
 * stored, as copy does within a run. One at a time, each load waits behind the store before it
 * (Zen 3, 8-byte runs 16 bytes apart in rows of 32, every second point of 64^3 doubles: unpack
 * 1.7 against 0.9 ns a run, pack 0.84 against 0.64; 528 bytes apart: unpack 1.46 against 0.93). */
#define TJ_LOOPS_FOUR(_run)                                                                        \
    (__builtin_constant_p(_run) && (_run) <= 16 && ((_run) & ((_run)-1)) == 0)

TJ_LOOPS_INLINE void F(copy4)(char *d, int64_t dstep, const char *s, int64_t sstep, int64_t run)
{
    char a[16], b[16], c[16], e[16];

    memcpy(a, s, (size_t)run);
    memcpy(b, s + sstep, (size_t)run);
    memcpy(c, s + 2 * sstep, (size_t)run);
    memcpy(e, s + 3 * sstep, (size_t)run);
    memcpy(d, a, (size_t)run);
    memcpy(d + dstep, b, (size_t)run);
    memcpy(d + 2 * dstep, c, (size_t)run);
    memcpy(d + 3 * dstep, e, (size_t)run);
}

/* One row: its runs from the typed side to the packed side, or back when @p unpack (a constant
 * in every loop, which keeps the moves of its direction only). */
TJ_LOOPS_INLINE void F(move_row)(char *restrict packed, char *restrict typed, int64_t n,
                                 int64_t stride, int64_t run, int64_t ahead, int unpack, int how)
{
    int64_t i = 0;

    if (TJ_LOOPS_FOUR(run) && how != TJ_CPU_AGAIN) {
        for (; i + 4 <= n; i += 4) {
            if (how == TJ_CPU_PREFETCH)
                for (int k = 0; k < 4; k++)
                    F(prefetch)(typed + k * stride + ahead, run, unpack);
            if (unpack)
                F(copy4)(typed, stride, packed, run, run);
            else
                F(copy4)(packed, run, typed, stride, run);
            packed += 4 * run;
            typed += 4 * stride;
        }
    }
    for (; i < n; i++) {
        if (how == TJ_CPU_PREFETCH)
            F(prefetch)(typed + ahead, run, unpack);
        if (unpack)
            F(copy)(typed, packed, run);
        else
            F(copy)(packed, typed, run);
        /* A second store to the run's line: see TJ_CPU_AGAIN. The compiler must keep both: the
         * barrier keeps the first (which the second may overwrite whole), and the volatile the
         * second (which stores what the line already holds). */
        if (how == TJ_CPU_AGAIN) {
            __asm__ volatile("" ::: "memory");
            *(volatile char *)(typed + run - 1) = packed[run - 1];
        }
        packed += run;
        typed += stride;
    }
}

/* A group of `rows` rows, `pitch` bytes apart on the typed side and n * run on the packed side,
 * moved across the group run by run: runs i of every row of the group, then runs i + 1. Where
 * the rows lie closer together than a cache line and their runs far apart (the transposes of
 * FFTs, typed pitch 8-16 bytes and stride 4-16 KiB), each typed line is then brought in once
 * for the group instead of once per row, and the packed side is written as `rows` sequential
 * streams. The prefetching loops fetch the typed lines of the group `ahead` bytes down the row
 * (the hardware does not follow strides across pages). */
TJ_LOOPS_INLINE void F(group_prefetch)(const char *at, int64_t rows, int64_t pitch, int64_t run,
                                       int write)
{
    const char *lo = at + (pitch < 0 ? (rows - 1) * pitch : 0);
    const char *hi = lo + (rows - 1) * (pitch < 0 ? -pitch : pitch) + run;

    for (const char *l = (const char *)((uintptr_t)lo & ~(uintptr_t)63); l < hi; l += 64) {
        if (write)
            __builtin_prefetch(l, 1, 3);
        else
            __builtin_prefetch(l, 0, 3);
    }
}

TJ_LOOPS_INLINE void F(move_group_rows)(char *restrict packed, char *restrict typed, int64_t n,
                                        int64_t stride, int64_t run, int64_t rows, int64_t pitch,
                                        int64_t ahead, int unpack, int how)
{
    const int64_t row_bytes = n * run;

    for (int64_t i = 0; i < n; i++) {
        char *t = typed, *p = packed;
        if (how == TJ_CPU_PREFETCH)
            F(group_prefetch)(typed + ahead, rows, pitch, run, unpack);
        for (int64_t r = 0; r < rows; r++) {
            if (unpack)
                F(copy)(t, p, run);
            else
                F(copy)(p, t, run);
            p += row_bytes;
            t += pitch;
        }
        packed += run;
        typed += stride;
    }
}

/* The same with whole groups (TJ_CPU_GROUP_ROWS rows, a constant the compiler unrolls), and the
 * last, shorter group of a dimension apart. */
TJ_LOOPS_INLINE void F(move_groups)(char *restrict packed, char *restrict typed, int64_t n,
                                    int64_t stride, int64_t run, int64_t rows, int64_t pitch,
                                    int64_t ahead, int unpack, int how)
{
    /* clang-format off */
    if (rows == TJ_CPU_GROUP_ROWS)
        F(move_group_rows)(packed, typed, n, stride, run, TJ_CPU_GROUP_ROWS, pitch, ahead, unpack,
                           how);
    else
        F(move_group_rows)(packed, typed, n, stride, run, rows, pitch, ahead, unpack, how);
    /* clang-format on */
}

/* One loop: a row loop of direction _unpack (0 pack, 1 unpack) with run length _len (a
 * constant, or `run`) and mode _how. */
#define TJ_LOOP(_name, _unpack, _len, _how)                                                        \
    TJ_LOOPS_FN F(_name)(char *p, char *t, int64_t n, int64_t s, int64_t run, int64_t ahead)       \
    {                                                                                              \
        (void)run;                                                                                 \
        F(move_row)(p, t, n, s, _len, ahead, _unpack, _how);                                       \
    }

/* One group loop, the same for groups of rows. */
#define TJ_GROUP(_name, _unpack, _len, _how)                                                       \
    TJ_LOOPS_FN F(_name)(char *p, char *t, int64_t n, int64_t s, int64_t run, int64_t rows,        \
                         int64_t pitch, int64_t ahead)                                             \
    {                                                                                              \
        (void)run;                                                                                 \
        F(move_groups)(p, t, n, s, _len, rows, pitch, ahead, _unpack, _how);                       \
    }

/* The loops of one run length (_len: a constant, or `run`), named by _tag: pack and unpack,
 * plain, prefetching, and (unpack) storing twice to each run's line; and the group loops. */
#define TJ_LOOPS_KIND(_tag, _len)                                                                  \
    TJ_LOOP(pack_##_tag, 0, _len, TJ_CPU_PLAIN)                                                    \
    TJ_LOOP(pack_pf_##_tag, 0, _len, TJ_CPU_PREFETCH)                                              \
    TJ_LOOP(unpack_##_tag, 1, _len, TJ_CPU_PLAIN)                                                  \
    TJ_LOOP(unpack_pf_##_tag, 1, _len, TJ_CPU_PREFETCH)                                            \
    TJ_LOOP(unpack_again_##_tag, 1, _len, TJ_CPU_AGAIN)                                            \
    TJ_GROUP(pack_group_##_tag, 0, _len, TJ_CPU_PLAIN)                                             \
    TJ_GROUP(pack_group_pf_##_tag, 0, _len, TJ_CPU_PREFETCH)                                       \
    TJ_GROUP(unpack_group_##_tag, 1, _len, TJ_CPU_PLAIN)                                           \
    TJ_GROUP(unpack_group_pf_##_tag, 1, _len, TJ_CPU_PREFETCH)
/* Those of each constant run length (TJ_CPU_RUNS), and of any length. */
#define TJ_LOOPS_CONST(_run) TJ_LOOPS_KIND(_run, _run)

TJ_CPU_RUNS(TJ_LOOPS_CONST)
TJ_LOOPS_KIND(any, run)

#if TJ_LOOPS_MASKED
/* Runs shorter than their stride, several in 64 bytes (stride + run <= 64): each window of `k`
 * runs is one masked load of exactly their bytes, one compress (pack) or expand (unpack) and
 * one masked store, so that no byte outside the runs is read or written (masked-out bytes do
 * not fault), the gaps included. */
TJ_LOOPS_INLINE uint64_t F(window)(int64_t runs, int64_t stride, int64_t run)
{
    uint64_t one = run >= 64 ? ~0ULL : (1ULL << run) - 1, m = 0;

    for (int64_t j = 0; j < runs; j++)
        m |= one << (j * stride);
    return m;
}

TJ_LOOPS_INLINE uint64_t F(low)(int64_t bytes)
{
    return bytes >= 64 ? ~0ULL : (1ULL << bytes) - 1;
}

/* One window of runs by masked loads and stores only: @p in selects its runs' bytes on the typed
 * side, @p out its packed bytes. */
TJ_LOOPS_INLINE void F(dense_window)(char *p, char *t, __mmask64 in, __mmask64 out, int unpack)
{
    if (unpack)
        _mm512_mask_storeu_epi8(t, in,
                                _mm512_maskz_expand_epi8(in, _mm512_maskz_loadu_epi8(out, p)));
    else
        _mm512_mask_storeu_epi8(p, out,
                                _mm512_maskz_compress_epi8(in, _mm512_maskz_loadu_epi8(in, t)));
}

TJ_LOOPS_INLINE void F(move_dense)(char *p, char *t, int64_t n, int64_t s, int64_t run, int unpack)
{
    const int64_t k = (64 - run) / s + 1;
    const __mmask64 in = F(window)(k, s, run), out = F(low)(k * run);
    int64_t i = 0;

    /* Whole 64-byte moves of the packed bytes while 64 of the row remain (a pack's next window
     * overwrites what one stores past its runs); a pack's whole loads of the typed side only
     * while they end within the row (the gaps they read lie between its runs), and an unpack's
     * stores to it always masked (its gaps are not the call's to write). Masked ones at the end
     * of the row. */
    for (;
         i + k <= n && (unpack || (i + k - 1) * s + 64 <= (n - 1) * s + run) && (n - i) * run >= 64;
         i += k) {
        if (unpack)
            _mm512_mask_storeu_epi8(t, in, _mm512_maskz_expand_epi8(in, _mm512_loadu_si512(p)));
        else
            _mm512_storeu_si512(p, _mm512_maskz_compress_epi8(in, _mm512_loadu_si512(t)));
        p += k * run;
        t += k * s;
    }
    for (; i + k <= n; i += k) {
        F(dense_window)(p, t, in, out, unpack);
        p += k * run;
        t += k * s;
    }
    if (i < n)
        F(dense_window)(p, t, F(window)(n - i, s, run), F(low)((n - i) * run), unpack);
}

TJ_LOOPS_FN F(pack_dense)(char *p, char *t, int64_t n, int64_t s, int64_t run, int64_t ahead)
{
    (void)ahead;
    F(move_dense)(p, t, n, s, run, 0);
}

TJ_LOOPS_FN F(unpack_dense)(char *p, char *t, int64_t n, int64_t s, int64_t run, int64_t ahead)
{
    (void)ahead;
    F(move_dense)(p, t, n, s, run, 1);
}
#define TJ_LOOPS_DENSE(_dir) F(_dir##_dense)
#else
#define TJ_LOOPS_DENSE(_dir) NULL
#endif

/* Indexed by tj_cpu_loop_t, direction (0 pack, 1 unpack) and variant (TJ_CPU_PLAIN,
 * TJ_CPU_PREFETCH, TJ_CPU_AGAIN; a pack stores once). The dense loops have one variant: their
 * rows are dense, which the hardware prefetches, and their runs share lines. */
/* clang-format off */
#define TJ_LOOPS_ROW(_tag)                                                                         \
    {{F(pack_##_tag), F(pack_pf_##_tag), F(pack_##_tag)},                                          \
     {F(unpack_##_tag), F(unpack_pf_##_tag), F(unpack_again_##_tag)}},
static const tj_cpu_rows_fn F(rows)[TJ_CPU_LOOPS][2][TJ_CPU_VARIANTS] = {
    TJ_CPU_RUNS(TJ_LOOPS_ROW)
    TJ_LOOPS_ROW(any)
    {{TJ_LOOPS_DENSE(pack), TJ_LOOPS_DENSE(pack), TJ_LOOPS_DENSE(pack)},
     {TJ_LOOPS_DENSE(unpack), TJ_LOOPS_DENSE(unpack), TJ_LOOPS_DENSE(unpack)}},
};
/* clang-format on */

/* The group loops, indexed by tj_cpu_loop_t, direction and variant (TJ_CPU_PLAIN,
 * TJ_CPU_PREFETCH); none for the dense loop. */
/* clang-format off */
#define TJ_LOOPS_GROUP(_tag)                                                                       \
    {{F(pack_group_##_tag), F(pack_group_pf_##_tag)},                                              \
     {F(unpack_group_##_tag), F(unpack_group_pf_##_tag)}},
static const tj_cpu_group_fn F(groups)[TJ_CPU_LOOPS][2][2] = {
    TJ_CPU_RUNS(TJ_LOOPS_GROUP)
    TJ_LOOPS_GROUP(any)
    {{NULL, NULL}, {NULL, NULL}},
};
/* clang-format on */

#undef TJ_LOOPS_GROUP
#undef TJ_LOOPS_FOUR
#undef TJ_LOOPS_ROW
#undef TJ_LOOPS_DENSE
#undef TJ_LOOPS_CONST
#undef TJ_LOOPS_KIND
#undef TJ_GROUP
#undef TJ_LOOP
#undef VLOAD
#undef VSTORE
#undef TJ_LOOPS_INLINE
#undef TJ_LOOPS_FN
#undef F
#undef TJ_LOOPS_CAT
#undef TJ_LOOPS_CAT2
