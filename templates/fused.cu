/* typejit fused @DIRECTION@ kernel @NAME@, generated from templates/fused.cu.
 *   @SHAPES@ blocks, W = @WORD@ bytes per load and store.
@BLOCKS@
 * One launch moves several members, each `count` objects of one of the blocks above (a halo
 * exchange's faces, one collective's slices). The grid is one-dimensional: member m owns thread
 * blocks [first, first + gx * gy), which it treats as a gx by gy grid exactly as the kernel of
 * its block alone (templates/strided.cu) treats blockIdx.x and blockIdx.y; both loops stride
 * over that grid, so any grid is correct. Every block's constants are baked in as there. */
#ifndef TJ_FUSED_ARGS_DEFINED
#define TJ_FUSED_ARGS_DEFINED
struct tj_fused_entry_t {
    long long typed, packed, count;
    unsigned first, gx, gy;
    int shape;
};
struct tj_fused_args_t {
    tj_fused_entry_t m[@MAX@];
    int n, pad;
};
#endif

extern "C" __global__ void @NAME@(void *__restrict__ dst, const void *__restrict__ src,
                                  const tj_fused_args_t args)
{
    /* The W-byte word moved by one load and one store. */
    typedef @WORD_TYPE@ word_t;

    /* The member whose range holds this thread block: few members, so a linear scan. */
    int m = 0;
    while (m + 1 < args.n && blockIdx.x >= args.m[m + 1].first)
        m++;
    const unsigned local = blockIdx.x - args.m[m].first;
    const unsigned bx = local % args.m[m].gx;
    const unsigned by = local / args.m[m].gx;
    const unsigned gx = args.m[m].gx;
    const unsigned gy = args.m[m].gy;
    const long long count = args.m[m].count;
    if (by >= gy)
        return;
@POINTERS@

    switch (args.m[m].shape) {
@CASES@
    default:
        return;
    }
}
