/* typejit @DIRECTION@ kernel @NAME@, generated from templates/strided.cu.
 *   block: @BLOCK@
 *   W = @WORD@ bytes per load and store, @WORDS@ words per object.
 * Word i of object k lives at byte START + k * EXTENT + offset(i) of the typed buffer and is word
 * k * WORDS + i of the packed buffer; offset(i) splits i into the block's digits, dimension 0
 * (the contiguous run) fastest. Consecutive threads take consecutive words, so the packed side
 * and every run on the typed side are accessed coalesced. A thread block holds OBJECTS whole
 * objects when objects are small, else SPAN words of one object; both loops stride over the
 * whole grid, so any count and any grid are correct. Every divisor is a constant: the compiler
 * turns the divisions into multiplications and shifts. */
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
@DIMENSIONS@
@POINTERS@
    const unsigned lane = threadIdx.x % SPAN;
    const unsigned slot = threadIdx.x / SPAN;

    if (slot >= OBJECTS)
        return;
    for (long long k = (long long)blockIdx.y * OBJECTS + slot; k < count;
         k += (long long)gridDim.y * OBJECTS) {
        const long long base = START + k * EXTENT;
        for (index_t i = (index_t)blockIdx.x * SPAN + lane; i < WORDS;
             i += (index_t)gridDim.x * SPAN) {
@OFFSET@
@COPY@
        }
    }
}
