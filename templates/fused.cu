/* SPDX-License-Identifier: BSD-3-Clause */
/* typejit fused @DIRECTION@ kernel @NAME@, generated from templates/fused.cu.
 *   @SHAPES@ blocks, each moved W bytes per load and store, its own W:
@BLOCKS@
 * One launch moves several members, each `count` objects of one of the blocks above (a halo
 * exchange's faces, one collective's slices) with the words its addresses allow; members of equal
 * blocks and words share one case. The grid
 * is one-dimensional: member m owns thread blocks [first, first + GX * gy), which it treats as a
 * GX by gy grid exactly as the kernel of its block alone (templates/strided.cu) treats
 * blockIdx.x and blockIdx.y; both loops stride over that grid, so any gy is correct. GX depends
 * on the block alone and is baked in with its other constants, so that splitting the member's
 * thread block index divides by a constant. The member is found by a binary search of the
 * members' first thread blocks (entries past the last member hold 0xffffffff), in log2(@MAX@)
 * unrolled steps. */
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
    /* The member whose range holds this thread block: the last one starting at or before it. */
    const tj_fused_entry_t *e = args.m;
#pragma unroll
    for (unsigned step = @MAX@ / 2; step > 0; step /= 2)
        if (blockIdx.x >= e[step].first)
            e += step;
    const unsigned local = blockIdx.x - e->first;
    const unsigned gy = e->gy;
    const long long count = e->count;
@POINTERS@

    /* The member's block: a binary tree of tests on its index (tj_gen_fused_launch gives every
     * member a block of this kernel), each block's code once at a leaf, with the W-byte word
     * that block's loads and stores move. */
    const int shape = e->shape;
@CASES@
}
