/* SPDX-License-Identifier: BSD-3-Clause */
/* typejit @DIRECTION@ kernel @NAME@, generated from templates/parts.cu.
 *   layout: @LAYOUT@
 *   @WORDS_NOTE@; @TABLE_NOTE@
 * The packed units of `count` objects are numbered g = 0, 1, ...: a unit is one load and one
 * store of a word. Unit g belongs to object g / OUNITS, to its frame element (g / FUNITS) % ELEMS,
 * and to the segment p of that element whose units [pre[p] / PRE_SCALE, pre[p + 1] / PRE_SCALE)
 * hold unit g % FUNITS. A segment is a part, or the head, middle or tail of a long run, moved in
 * words of one size (type/layout_words.h; every segment of a table in device memory is a part in
 * words of W bytes, and its pre counts bytes); a part is some repetitions of one shape at byte
 * disp[p] of its frame element, and the unit's place in the segment gives its repetition and its
 * place in the shape, as the block kernels place a word.
 * A thread block takes ITEMS * blockDim.x consecutive units. All its threads first find the
 * segments of the first and the last of them (the same two binary searches, so every thread
 * loads the same table entries), then each finds the segment of each of its units, blockDim.x
 * apart, by a binary search between those two, starting from the segment of its previous unit:
 * the packed side is accessed coalesced, and each run of a part too. The loops stride over the
 * grid and over the thread block, so any grid and any thread-block size is correct, and one
 * thread alone moves every unit in order (the serial unpack of a layout that overlaps itself). */
#ifndef TJ_PARTS_DEFINED
#define TJ_PARTS_DEFINED
struct tj_parts_args_t {
    const void *table;     /* the part table in device memory; NULL when it is in the source */
    long long parts;       /* parts of one frame element (segments, in a device table) */
    long long fbytes;      /* packed bytes of one frame element */
    long long obytes;      /* packed bytes of one object */
    long long extent;      /* bytes from one object to the next */
};

/* The last segment p in [a, b] with pre[p] <= x. */
template <typename T>
static __device__ __forceinline__ long long tj_parts_find(const T *pre, long long a, long long b,
                                                          long long x)
{
    while (a < b) {
        const long long m = (a + b + 1) >> 1;
        if ((long long)pre[m] <= x)
            a = m;
        else
            b = m - 1;
    }
    return a;
}
#endif
@TABLE@
extern "C" __global__ void @NAME@(void *__restrict__ dst, const void *__restrict__ src,
                                  long long count, const tj_parts_args_t args)
{
    /* W, the widest word moved by one load and one store; the table's element types. */
    typedef @WORD_TYPE@ word_t;
    typedef @PRE_TYPE@ pre_t;
    typedef @DISP_TYPE@ disp_t;
    const unsigned ITEMS = 4;
@CONSTANTS@
@POINTERS@
    const unsigned long long total = (unsigned long long)count * OUNITS;
    const unsigned long long chunk = (unsigned long long)blockDim.x * ITEMS;

    for (unsigned long long c0 = (unsigned long long)blockIdx.x * chunk; c0 < total;
         c0 += (unsigned long long)gridDim.x * chunk) {
        const unsigned long long c1 = (total - c0 < chunk ? total : c0 + chunk) - 1;
        /* The frame element of the chunk's first unit, and that unit's place in it. */
        const unsigned long long e0 = c0 / FUNITS, r0 = c0 - e0 * FUNITS;
        long long lo = 0, hi = SEGMENTS - 1;
        if (r0 + (c1 - c0) < FUNITS) {
            lo = tj_parts_find(pre, 0, SEGMENTS - 1, (long long)r0 * PRE_SCALE);
            hi = tj_parts_find(pre, lo, SEGMENTS - 1, (long long)(r0 + (c1 - c0)) * PRE_SCALE);
        }
        long long from = lo;
        unsigned long long last = ~0ull;
        for (unsigned long long g = c0 + threadIdx.x; g <= c1; g += blockDim.x) {
@ELEMENT@
            const long long jb = (long long)ju * PRE_SCALE;
            if (e != last) {
                from = lo;
                last = e;
            }
            const long long p = tj_parts_find(pre, from, hi, jb);
            from = p;
            const unsigned long long k = e / ELEMS;
@OFFSET@
            long long off = (long long)k * EXTENT + (long long)disp[p];
@FRAME@
@SHAPES@
@COPY@
        }
    }
}
