/* typejit generic kernels, from templates/generic.cu: the layout travels as run-time arguments
 * (the TEMPI approach), so one compiled image serves every strided block. They are the baseline
 * the JIT kernels are measured against and the path taken when the JIT is turned off.
 *
 * Element (i0, ..., i_{n-1}) of object k is at byte start + k * extent + sum_d i_d * strides[d]
 * of the typed buffer; dimension 0 is a run of counts[0] bytes moved as words of `word` bytes.
 * Threads map x to the words of a run, y to the rows (every other dimension, flattened) and z to
 * the objects; each axis strides over the whole grid, so any geometry is correct. The row's
 * offset takes one division per dimension, paid once per row rather than per word, as a
 * multiply-high by the magic number the host computed (a row index fits 32 bits:
 * tj_gen_generic_usable). */

/* Must match tj_generic_params_t of jit/gen.h byte for byte: it is passed by value. */
typedef struct {
    long long start, extent;
    int ndims, word;
    long long counts[16], strides[16];
    unsigned magic[16], shift[16];
} tj_generic_params_t;

template <typename word_t, bool PACK>
static __device__ __forceinline__ void
tj_generic_move(void *__restrict__ dst, const void *__restrict__ src, long long count,
                const tj_generic_params_t &p)
{
    const char *in = (const char *)src;
    char *out = (char *)dst;
    const long long run = p.counts[0] / (long long)sizeof(word_t); /* words per run */
    long long rows = 1;
    /* No loop here is unrolled: each mostly makes one trip, or a few. */
#pragma unroll 1
    for (int d = 1; d < p.ndims; d++)
        rows *= p.counts[d];
    const long long words = run * rows; /* words per object */

#pragma unroll 1
    for (long long k = blockIdx.z; k < count; k += gridDim.z) {
#pragma unroll 1
        for (long long r = (long long)blockIdx.y * blockDim.y + threadIdx.y; r < rows;
             r += (long long)gridDim.y * blockDim.y) {
            /* Byte offset of the row: digits of r over dimensions 1 and up, 1 fastest. */
            long long off = p.start + k * p.extent;
            unsigned q = (unsigned)r;
#pragma unroll 1
            for (int d = 1; d < p.ndims; d++) {
                const unsigned t = __umulhi(q, p.magic[d]);
                const unsigned next = (t + ((q - t) >> (p.shift[d] & 0xff))) >> (p.shift[d] >> 8);
                off += (long long)(q - next * (unsigned)p.counts[d]) * p.strides[d];
                q = next;
            }
#pragma unroll 1
            for (long long w = (long long)blockIdx.x * blockDim.x + threadIdx.x; w < run;
                 w += (long long)gridDim.x * blockDim.x) {
                const long long j = k * words + r * run + w;             /* packed word index */
                const long long t = off + w * (long long)sizeof(word_t); /* typed byte offset */
                if (PACK)
                    ((word_t *)out)[j] = *(const word_t *)(in + t);
                else
                    *(word_t *)(out + t) = ((const word_t *)in)[j];
            }
        }
    }
}

/* One switch on the word size per kernel: the five instantiations share the loops above. */
template <bool PACK>
static __device__ __forceinline__ void
tj_generic_dispatch(void *__restrict__ dst, const void *__restrict__ src, long long count,
                    const tj_generic_params_t &p)
{
    switch (p.word) {
    case 16:
        tj_generic_move<uint4, PACK>(dst, src, count, p);
        break;
    case 8:
        tj_generic_move<unsigned long long, PACK>(dst, src, count, p);
        break;
    case 4:
        tj_generic_move<unsigned int, PACK>(dst, src, count, p);
        break;
    case 2:
        tj_generic_move<unsigned short, PACK>(dst, src, count, p);
        break;
    default:
        tj_generic_move<unsigned char, PACK>(dst, src, count, p);
        break;
    }
}

extern "C" __global__ void tj_generic_pack(void *__restrict__ dst, const void *__restrict__ src,
                                           long long count, tj_generic_params_t params)
{
    tj_generic_dispatch<true>(dst, src, count, params);
}

extern "C" __global__ void tj_generic_unpack(void *__restrict__ dst, const void *__restrict__ src,
                                             long long count, tj_generic_params_t params)
{
    tj_generic_dispatch<false>(dst, src, count, params);
}
