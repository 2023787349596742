/* SPDX-License-Identifier: BSD-3-Clause */
/* typejit generic kernels for W = @WORD@, from templates/generic.cu: the layout travels as run-time
 * arguments (the TEMPI approach), so one compiled image per word size serves every strided block.
 * They are the baseline the JIT kernels are measured against and the path taken when the JIT is
 * turned off or while a JIT kernel compiles. Each word size has its own image, so that a kernel
 * holds the registers and instructions of its own word only.
 *
 * They work as the JIT kernels do (templates/strided.cu): word i of object k is word
 * k * words + i of the packed buffer and lives at byte start + k * extent + offset(i) of the typed
 * buffer (start: the object's lowest byte). Threads map x to the words of one object, y to the
 * objects (several objects per thread block when objects are small), both loops striding over the
 * whole grid, so any grid up to tj_gen_generic_launch's is correct. With 1- and 2-byte words a
 * thread moves 8 or 4 words per trip, blockDim.x apart, so that the trip's setup is shared and
 * each load and store still has consecutive threads on consecutive words.
 *
 * offset(i) comes from the layout's dimensions as the host merged them (jit/gen.h), without a
 * chain of digits: with P_d the product of the counts of the dimensions below d,
 *   offset(i) = bias + i * stride + sum over d >= 1 of (i / P_d) * weight_d,
 * weight_d = stride_d - count_{d-1} * stride_{d-1}: the lower terms take each of the i / P_d
 * wraps of dimension d - 1 for its count_{d-1}-th step, where the word moves one step of d.
 * Each quotient is a multiply-high and a shift of the word index alone (fewer than 2^31 words
 * per object), so the words of a trip walk the dimensions once together, four at a time (more
 * would hold more registers). An object whose words start within 4 GiB of its lowest byte has
 * 32-bit offsets: the sum is exact modulo 2^32 and the result fits. Larger objects
 * (params.wide) take the same sum in 64 bits, one word at a time. */

/* Must match tj_generic_params_t of jit/gen.h byte for byte: it is passed by value. */
typedef struct {
    long long start, extent, size; /* start: object 0's lowest byte; size: packed bytes of one */
    unsigned words;                /* words per object */
    int ndims, word, wide;         /* merged dimensions (1 to 16), W, 64-bit offsets */
    long long bias, stride;        /* offset of word 0; step of merged dimension 0 */
    struct {
        unsigned magic, shift; /* i / P_d = umulhi(i, magic) >> shift */
        long long weight;
    } dims[15]; /* d = 1 .. ndims - 1, at [d - 1] */
} tj_generic_params_t;

/* The W-byte word moved by one load and one store. */
typedef @WORD_TYPE@ word_t;

/* Words of one object a thread moves per trip (tj_gen_generic_words_per_thread). */
#define TJ_TRIP_WORDS @TRIP_WORDS@

/* Moves words i0, i0 + span, ... (N of them, those below params.words) of one object; i0 is
 * below params.words. offset_t: the width of the offsets from the object's lowest byte. */
template <bool PACK, typename offset_t, unsigned N>
static __device__ __forceinline__ void tj_generic_words(const char *object, word_t *packed,
                                                        unsigned i0, unsigned span,
                                                        const tj_generic_params_t &p)
{
    offset_t off[N];

#pragma unroll
    for (unsigned u = 0; u < N; u++)
        off[u] = (offset_t)p.bias + (offset_t)(i0 + u * span) * (offset_t)p.stride;
    /* Not unrolled: most layouts have one or two dimensions after merging. */
#pragma unroll 1
    for (int d = 0; d < p.ndims - 1; d++) {
        const unsigned magic = p.dims[d].magic, shift = p.dims[d].shift;
        const offset_t weight = (offset_t)p.dims[d].weight;
#pragma unroll
        for (unsigned u = 0; u < N; u++)
            off[u] += (offset_t)(__umulhi(i0 + u * span, magic) >> shift) * weight;
    }
#pragma unroll
    for (unsigned u = 0; u < N; u++) {
        const unsigned i = i0 + u * span;
        if (u > 0 && i >= p.words)
            break;
        if (PACK)
            packed[i] = *(const word_t *)(object + off[u]);
        else
            *(word_t *)((char *)object + off[u]) = packed[i];
    }
}

template <bool PACK, typename offset_t>
static __device__ __forceinline__ void
tj_generic_move(void *__restrict__ dst, const void *__restrict__ src, long long count,
                const tj_generic_params_t &p)
{
    /* Words whose offsets one walk over the dimensions computes. */
    const unsigned GROUP = sizeof(offset_t) > 4 ? 1u : TJ_TRIP_WORDS < 4u ? TJ_TRIP_WORDS : 4u;
    const char *typed = (const char *)(PACK ? src : dst) + p.start;
    word_t *packed = (word_t *)(PACK ? dst : src);
    const unsigned words = p.words;
    const unsigned span = blockDim.x, step = gridDim.x * blockDim.x * TJ_TRIP_WORDS;

    /* Grid-stride loops are not unrolled: each mostly makes one trip. */
#pragma unroll 1
    for (long long k = (long long)blockIdx.y * blockDim.y + threadIdx.y; k < count;
         k += (long long)gridDim.y * blockDim.y) {
        const char *object = typed + k * p.extent;
        word_t *out = packed + k * (long long)words;
#pragma unroll 1
        for (unsigned i0 = blockIdx.x * blockDim.x * TJ_TRIP_WORDS + threadIdx.x; i0 < words;
             i0 += step) {
            if (sizeof(offset_t) > 4) {
                /* Objects of 4 GiB and more: one word at a time, in a loop. */
#pragma unroll 1
                for (unsigned g = 0, i = i0; g < TJ_TRIP_WORDS && (g == 0 || i < words);
                     g++, i += span)
                    tj_generic_words<PACK, offset_t, 1>(object, out, i, span, p);
            } else {
#pragma unroll
                for (unsigned g = 0; g < TJ_TRIP_WORDS; g += GROUP) {
                    if (g > 0 && i0 + g * span >= words)
                        break;
                    tj_generic_words<PACK, offset_t, GROUP>(object, out, i0 + g * span, span, p);
                }
            }
        }
    }
}

extern "C" __global__ void tj_generic_pack(void *__restrict__ dst, const void *__restrict__ src,
                                           long long count, tj_generic_params_t params)
{
    if (params.wide)
        tj_generic_move<true, unsigned long long>(dst, src, count, params);
    else
        tj_generic_move<true, unsigned>(dst, src, count, params);
}

extern "C" __global__ void tj_generic_unpack(void *__restrict__ dst, const void *__restrict__ src,
                                             long long count, tj_generic_params_t params)
{
    if (params.wide)
        tj_generic_move<false, unsigned long long>(dst, src, count, params);
    else
        tj_generic_move<false, unsigned>(dst, src, count, params);
}
