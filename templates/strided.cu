/* SPDX-License-Identifier: BSD-3-Clause */
/* typejit @DIRECTION@ kernel @NAME@, generated from templates/strided.cu.
 *   block: @BLOCK@
 *   W = @WORD@ bytes per load and store, @WORDS@ words per object.@EDGES@
 * Word i of object k lives at byte START + k * EXTENT + offset(i) of the typed buffer and is word
 * k * WORDS + i of the packed buffer; offset(i) splits i into the block's digits, dimension 0
 * (the contiguous run) fastest. Consecutive threads take consecutive words, so the packed side
 * and every run on the typed side are accessed coalesced. A thread block holds OBJECTS whole
 * objects when objects are small, else SPAN words of one object; both loops stride over the
 * whole grid, so any count and any grid are correct. Every divisor is a constant: the compiler
 * turns the divisions into multiplications and shifts. With narrow words a thread moves several
 * per trip (KSTEP objects OBJECTS apart, or ISTEP words SPAN apart), so that the loop's setup is
 * paid once for them; each load and store still has consecutive threads on consecutive words. */
extern "C" __global__ void @NAME@(void *__restrict__ dst, const void *__restrict__ src, long long count)
{
    /* The W-byte word moved by one load and one store, and an index type wide enough for every
     * word of one object. */
    typedef @WORD_TYPE@ word_t;
    typedef @INDEX_TYPE@ index_t;

    /* Bytes from the typed pointer to object 0, and from one object to the next. */
    const long long START = @START@;
    const long long EXTENT = @EXTENT@;
    /* Words per object; objects per thread block; words of one object per thread block. */
    const index_t WORDS = @WORDS_LITERAL@;
    const unsigned OBJECTS = @OBJECTS@;
    const unsigned SPAN = @SPAN@;
    /* Objects, and words of one object, each thread moves per trip. */
    const unsigned KSTEP = @KSTEP@;
    const unsigned ISTEP = @ISTEP@;
@DIMENSIONS@
@POINTERS@
    const unsigned lane = threadIdx.x % SPAN;
    const unsigned slot = threadIdx.x / SPAN;

    if (slot >= OBJECTS)
        return;
    if (OBJECTS > 1u) {
        /* Several objects per thread block: SPAN is the whole object, and each thread moves word
         * `lane` of KSTEP objects per trip; only x block 0 has words. */
        if (blockIdx.x != 0)
            return;
        const index_t i = lane;
@OFFSET@
        /* Grid-stride loops are not unrolled: a thread mostly makes one trip. */
#pragma unroll 1
        for (long long k0 = (long long)blockIdx.y * (OBJECTS * KSTEP) + slot; k0 < count;
             k0 += (long long)gridDim.y * (OBJECTS * KSTEP)) {
#pragma unroll
            for (unsigned ku = 0; ku < KSTEP; ku++) {
                const long long k = k0 + (long long)ku * OBJECTS;
                if (k >= count)
                    break;
                const long long base = START + k * EXTENT;
@COPY@
            }
        }
        return;
    }
    /* One object per thread block row: ISTEP words of it per thread per trip. */
#pragma unroll 1
    for (long long k = (long long)blockIdx.y + slot; k < count; k += (long long)gridDim.y) {
        const long long base = START + k * EXTENT;
#pragma unroll 1
        for (index_t i0 = (index_t)blockIdx.x * (SPAN * ISTEP) + lane; i0 < WORDS;
             i0 += (index_t)gridDim.x * (SPAN * ISTEP)) {
#pragma unroll
            for (unsigned iu = 0; iu < ISTEP; iu++) {
                const index_t i = i0 + (index_t)iu * SPAN;
                if (i >= WORDS)
                    break;
@OFFSET@
@COPY@
            }
        }
    }
}
