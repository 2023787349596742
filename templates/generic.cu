/* typejit generic kernels for W = @WORD@, from templates/generic.cu: the layout travels as run-time
 * arguments (the TEMPI approach), so one compiled image per word size serves every strided block.
 * They are the baseline the JIT kernels are measured against and the path taken when the JIT is
 * turned off or while a JIT kernel compiles. Each word size has its own image, so that a kernel
 * holds the registers and instructions of its own word only.
 *
 * They work as the JIT kernels do (templates/strided.cu): word i of object k is word
 * k * words + i of the packed buffer and lives at byte start + k * extent + offset(i) of the typed
 * buffer, where offset(i) splits i into the digits of the layout's dimensions (as the host merged
 * them: dimension 0 the run's words, stride W, unless a run is a single word; dimensions of one
 * element left out), fastest first. Threads map x to the words of one object, y to the objects
 * (several objects per thread block when objects are small), both loops striding over the
 * whole grid, so any grid up to tj_gen_generic_launch's is correct. Everything fits 32 bits but
 * byte offsets and object numbers (tj_gen_generic_usable: fewer than 2^31 words per object), and
 * each digit divides by its dimension's count as a multiply-high and a shift by the numbers the
 * host computed. With 1- and 2-byte words a thread moves 8 or 4 words per trip, blockDim.x
 * apart, so that the trip's setup is shared and each load and store still has consecutive
 * threads on consecutive words. */

/* Must match tj_generic_params_t of jit/gen.h byte for byte: it is passed by value. */
typedef struct {
    long long start, extent, size; /* size: packed bytes of one object */
    unsigned words;                /* words per object */
    int ndims, word, pad;          /* merged dimensions (1 to 16), W */
    long long strides[16];         /* bytes */
    unsigned counts[16], magic[16], shift[16];
} tj_generic_params_t;

/* The W-byte word moved by one load and one store. */
typedef @WORD_TYPE@ word_t;

template <bool PACK>
static __device__ __forceinline__ void
tj_generic_move(void *__restrict__ dst, const void *__restrict__ src, long long count,
                const tj_generic_params_t &p)
{
    const unsigned ISTEP = sizeof(word_t) == 1 ? 8u : sizeof(word_t) == 2 ? 4u : 1u;
    const char *typed = (const char *)(PACK ? src : dst) + p.start;
    word_t *packed = (word_t *)(PACK ? dst : src);
    const unsigned words = p.words, last = (unsigned)p.ndims - 1u;
    const unsigned span = blockDim.x, step = gridDim.x * blockDim.x * ISTEP;

    /* Grid-stride loops and the digit loop are not unrolled: each mostly makes one trip. */
#pragma unroll 1
    for (long long k = (long long)blockIdx.y * blockDim.y + threadIdx.y; k < count;
         k += (long long)gridDim.y * blockDim.y) {
        const char *object = typed + k * p.extent;
        word_t *out = packed + k * (long long)words;
#pragma unroll 1
        for (unsigned i0 = blockIdx.x * blockDim.x * ISTEP + threadIdx.x; i0 < words; i0 += step) {
#pragma unroll
            for (unsigned u = 0; u < ISTEP; u++) {
                const unsigned i = i0 + u * span;
                if (i >= words)
                    break;
                /* The digits of i, the outermost one left over without a division. */
                unsigned q = i;
                long long off = 0;
#pragma unroll 1
                for (unsigned d = 0; d < last; d++) {
                    const unsigned next = __umulhi(q, p.magic[d]) >> p.shift[d];
                    off += (long long)(q - next * p.counts[d]) * p.strides[d];
                    q = next;
                }
                off += (long long)q * p.strides[last];
                if (PACK)
                    out[i] = *(const word_t *)(object + off);
                else
                    *(word_t *)((char *)object + off) = out[i];
            }
        }
    }
}

extern "C" __global__ void tj_generic_pack(void *__restrict__ dst, const void *__restrict__ src,
                                           long long count, tj_generic_params_t params)
{
    tj_generic_move<true>(dst, src, count, params);
}

extern "C" __global__ void tj_generic_unpack(void *__restrict__ dst, const void *__restrict__ src,
                                             long long count, tj_generic_params_t params)
{
    tj_generic_move<false>(dst, src, count, params);
}
