/* Host emulation of the CUDA features the generated kernels use, so that their source compiles
 * with g++ and runs every (blockIdx, threadIdx) of a grid sequentially, checked by the tests. */
#ifndef TJ_TESTS_EMU_TJ_EMU_H
#define TJ_TESTS_EMU_TJ_EMU_H

#include <cstddef>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct uint3 {
    unsigned x, y, z;
};
typedef uint3 dim3;

/* CUDA's uint4 is 16-byte aligned, which lets the device move it with one instruction. */
struct __attribute__((aligned(16))) uint4 {
    unsigned x, y, z, w;
};

/* Static: each shared object of kernels has its own, set by tj_emu_launch before each thread. */
static uint3 threadIdx, blockIdx, blockDim, gridDim;

/* Runs @p kernel for every thread of the grid, one after the other. The generated kernels never
 * synchronise or share memory between threads, so any order is a valid schedule. */
template <typename K, typename... A>
static void tj_emu_launch(K kernel, const unsigned grid[3], const unsigned block[3], A... args)
{
    gridDim = {grid[0], grid[1], grid[2]};
    blockDim = {block[0], block[1], block[2]};
    for (unsigned bz = 0; bz < grid[2]; bz++)
        for (unsigned by = 0; by < grid[1]; by++)
            for (unsigned bx = 0; bx < grid[0]; bx++)
                for (unsigned tz = 0; tz < block[2]; tz++)
                    for (unsigned ty = 0; ty < block[1]; ty++)
                        for (unsigned tx = 0; tx < block[0]; tx++) {
                            blockIdx = {bx, by, bz};
                            threadIdx = {tx, ty, tz};
                            kernel(args...);
                        }
}

/* The fake CUDA driver (tests/fakecuda) launches a kernel from the driver's kernelParams: argument
 * i is *(T_i *)params[i], T_i from the kernel's own signature, exactly as the driver reads them. */
template <typename... A, std::size_t... I>
static void tj_emu_invoke_at(void (*kernel)(A...), const unsigned grid[3], const unsigned block[3],
                             void **params, std::index_sequence<I...>)
{
    (void)params;
    tj_emu_launch(kernel, grid, block, *static_cast<typename std::decay<A>::type *>(params[I])...);
}

template <typename... A>
static void tj_emu_invoke(void (*kernel)(A...), const unsigned grid[3], const unsigned block[3],
                          void **params)
{
    tj_emu_invoke_at(kernel, grid, block, params, std::index_sequence_for<A...>{});
}

/* The size and alignment of each of the kernel's parameters, so the driver can copy
 * kernelParams when the launch is queued; returns their number. */
template <typename... A>
static unsigned tj_emu_arg_layout(void (*)(A...), std::size_t *sizes, std::size_t *aligns,
                                  unsigned max)
{
    const std::size_t s[] = {sizeof(typename std::decay<A>::type)..., 0};
    const std::size_t a[] = {alignof(typename std::decay<A>::type)..., 1};
    for (unsigned i = 0; i < sizeof...(A) && i < max; i++) {
        sizes[i] = s[i];
        aligns[i] = a[i];
    }
    return sizeof...(A);
}

#endif /* TJ_TESTS_EMU_TJ_EMU_H */
