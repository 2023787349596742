/* SPDX-License-Identifier: BSD-3-Clause */
/* Host emulation of the CUDA features the generated kernels use, so that their source compiles
 * with g++ and runs on the host: the whole grid in order (tj_emu_launch, for tests/test_emu.c),
 * or one thread block at a time with its threads in a given order (tj_emu_block_invoke, for the
 * fake driver of tests/fakecuda, which runs a launch's blocks on several host threads). */
#ifndef TJ_TESTS_EMU_TJ_EMU_H
#define TJ_TESTS_EMU_TJ_EMU_H

/* No standard headers: parsing them took half of each kernel's host compile. */
typedef decltype(sizeof(0)) tj_emu_size_t;

/* A parameter's type without its qualifiers (what std::decay does to a kernel parameter). */
template <typename T> struct tj_emu_plain {
    typedef T type;
};
template <typename T> struct tj_emu_plain<const T> {
    typedef T type;
};
template <typename T> struct tj_emu_plain<volatile T> {
    typedef T type;
};
template <typename T> struct tj_emu_plain<const volatile T> {
    typedef T type;
};

/* 0, 1, ..., N - 1 as a pack (std::index_sequence). */
template <tj_emu_size_t... I> struct tj_emu_indices {};
template <tj_emu_size_t N, tj_emu_size_t... I>
struct tj_emu_make_indices : tj_emu_make_indices<N - 1, N - 1, I...> {};
template <tj_emu_size_t... I> struct tj_emu_make_indices<0, I...> {
    typedef tj_emu_indices<I...> type;
};

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

/* The high 32 bits of a 32 x 32-bit product, as the device intrinsic. */
static inline unsigned __umulhi(unsigned a, unsigned b)
{
    return (unsigned)(((unsigned long long)a * b) >> 32);
}

/* Per host thread: several host threads run blocks of one launch at once. */
static thread_local uint3 threadIdx, blockIdx, blockDim, gridDim;

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

#ifdef TJ_EMU_TRACK_STORES
/* The fake driver's address trace (FAKECUDA_TRACE, tests/fakecuda/trace.c): which thread runs
 * next, and every load, so that its accesses can be grouped into the warps' requests. */
extern "C" {
typedef void (*tj_emu_load_fn)(const void *address, tj_emu_size_t bytes);
typedef void (*tj_emu_thread_fn)(unsigned long long block, unsigned thread);
static tj_emu_load_fn tj_emu_load_hook;
static tj_emu_thread_fn tj_emu_thread_hook;

__attribute__((visibility("default"))) void fakecuda_set_trace_hooks(tj_emu_load_fn load,
                                                                     tj_emu_thread_fn thread)
{
    tj_emu_load_hook = load;
    tj_emu_thread_hook = thread;
}
}
#define TJ_EMU_THREAD_BEGIN(_block, _thread)                                                       \
    if (tj_emu_thread_hook != nullptr)                                                             \
    tj_emu_thread_hook(_block, _thread)
#else
#define TJ_EMU_THREAD_BEGIN(_block, _thread) (void)0
#endif

/* Runs threads of thread block @p at of a launch on the calling host thread: order[0..n) are
 * linear thread indices (x fastest), in the order they run. */
template <typename K, typename... A>
static void tj_emu_block(K kernel, const unsigned grid[3], const unsigned block[3],
                         const unsigned at[3], const unsigned *order, unsigned n, A... args)
{
    gridDim = {grid[0], grid[1], grid[2]};
    blockDim = {block[0], block[1], block[2]};
    blockIdx = {at[0], at[1], at[2]};
    for (unsigned i = 0; i < n; i++) {
        unsigned t = order[i];
        threadIdx = {t % block[0], t / block[0] % block[1], t / (block[0] * block[1])};
        TJ_EMU_THREAD_BEGIN(at[0] + (unsigned long long)grid[0] * (at[1] + (unsigned long long)grid[1] * at[2]), t);
        kernel(args...);
    }
}

/* The fake CUDA driver (tests/fakecuda) launches a kernel from the driver's kernelParams: argument
 * i is *(T_i *)params[i], T_i from the kernel's own signature, exactly as the driver reads them. */
template <typename... A, tj_emu_size_t... I>
static void tj_emu_block_at(void (*kernel)(A...), const unsigned grid[3], const unsigned block[3],
                            const unsigned at[3], const unsigned *order, unsigned n, void **params,
                            tj_emu_indices<I...>)
{
    (void)params;
    tj_emu_block(kernel, grid, block, at, order, n,
                 *static_cast<typename tj_emu_plain<A>::type *>(params[I])...);
}

template <typename... A>
static void tj_emu_block_invoke(void (*kernel)(A...), const unsigned grid[3],
                                const unsigned block[3], const unsigned at[3],
                                const unsigned *order, unsigned n, void **params)
{
    tj_emu_block_at(kernel, grid, block, at, order, n, params,
                    typename tj_emu_make_indices<sizeof...(A)>::type{});
}

/* The size and alignment of each of the kernel's parameters, so the driver can copy
 * kernelParams when the launch is queued; returns their number. */
template <typename... A>
static unsigned tj_emu_arg_layout(void (*)(A...), tj_emu_size_t *sizes, tj_emu_size_t *aligns,
                                  unsigned max)
{
    const tj_emu_size_t s[] = {sizeof(typename tj_emu_plain<A>::type)..., 0};
    const tj_emu_size_t a[] = {alignof(typename tj_emu_plain<A>::type)..., 1};
    for (unsigned i = 0; i < sizeof...(A) && i < max; i++) {
        sizes[i] = s[i];
        aligns[i] = a[i];
    }
    return sizeof...(A);
}

#ifdef TJ_EMU_TRACK_STORES
/* Every store of the kernels: the fake driver builds them with -fsanitize=kernel-address and
 * --param asan-instrumentation-with-call-threshold=0, so the compiler calls
 * __asan_storeN_noabort(address) before each store (and __asan_loadN_noabort before each load,
 * which needs nothing here). The driver installs the hook with fakecuda_set_store_hook and counts
 * how often each byte of a pack or unpack kernel's output is written. */
extern "C" {
typedef void (*tj_emu_store_fn)(const void *address, tj_emu_size_t bytes);
static tj_emu_store_fn tj_emu_store_hook;

__attribute__((visibility("default"))) void fakecuda_set_store_hook(tj_emu_store_fn hook)
{
    tj_emu_store_hook = hook;
}

#define TJ_EMU_ACCESS(_kind, _n)                                                                   \
    __attribute__((no_sanitize_address, visibility("default"))) void __asan_##_kind##_n##_noabort( \
        const void *p)                                                                             \
    {                                                                                              \
        TJ_EMU_##_kind(p, _n);                                                                     \
    }
#define TJ_EMU_store(_p, _n)                                                                       \
    if (tj_emu_store_hook != nullptr)                                                              \
    tj_emu_store_hook(_p, _n)
#define TJ_EMU_load(_p, _n)                                                                        \
    if (tj_emu_load_hook != nullptr)                                                               \
    tj_emu_load_hook(_p, _n)
TJ_EMU_ACCESS(store, 1)
TJ_EMU_ACCESS(store, 2)
TJ_EMU_ACCESS(store, 4)
TJ_EMU_ACCESS(store, 8)
TJ_EMU_ACCESS(store, 16)
TJ_EMU_ACCESS(load, 1)
TJ_EMU_ACCESS(load, 2)
TJ_EMU_ACCESS(load, 4)
TJ_EMU_ACCESS(load, 8)
TJ_EMU_ACCESS(load, 16)

__attribute__((no_sanitize_address, visibility("default"))) void
__asan_storeN_noabort(const void *p, tj_emu_size_t n)
{
    if (tj_emu_store_hook != nullptr)
        tj_emu_store_hook(p, n);
}

__attribute__((no_sanitize_address, visibility("default"))) void
__asan_loadN_noabort(const void *p, tj_emu_size_t n)
{
    if (tj_emu_load_hook != nullptr)
        tj_emu_load_hook(p, n);
}

__attribute__((no_sanitize_address, visibility("default"))) void __asan_handle_no_return(void) {}
}
#endif

#endif /* TJ_TESTS_EMU_TJ_EMU_H */
