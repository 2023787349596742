/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernels a commit asks for ahead of its type's first launch, and where they stand (see
 * prepare.h). */
#include "kernels/prepare.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "gpu/cuda.h"
#include "kernels/compiler.h"
#include "kernels/lookup.h"
#include "kernels/state.h"
#include "kernels/target.h"
#include "type/layout_words.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"

/* The kernel of @p block for (words, dir) from the kernel lookup, as far as @p mode goes. */
static tj_status_t kernel_get(const tj_block_t *block, tj_words_t words, tj_dir_t dir,
                              const char *target, tj_lookup_mode_t mode, tj_kernel_t **k)
{
    tj_kernel_spec_t spec = tj_spec_words(block, words, dir, target);
    return tj_lookup_kernel(&spec, mode, k, NULL);
}

/* Whether the memory table holds the pack and unpack kernels of @p block for every
 * launch on aligned buffers (tj_block_words_aligned). */
static bool kernels_ready(const tj_block_t *block, const char *target)
{
    tj_words_t words[2];
    int n = tj_block_words_aligned(block, words);
    tj_kernel_t *k;

    for (int i = 0; i < n; i++)
        if (kernel_get(block, words[i], TJ_DIR_PACK, target, TJ_LOOKUP_MEMORY, &k) != TJ_OK ||
            kernel_get(block, words[i], TJ_DIR_UNPACK, target, TJ_LOOKUP_MEMORY, &k) != TJ_OK)
            return false;
    return true;
}

/* Whether the memory table holds the pack and unpack parts kernels of @p l for a
 * launch on aligned buffers, of several objects or of one (tj_layout_launch_words_aligned: a
 * layout's kernels are asked for by the calls that launch them). */
static bool parts_ready(const tj_layout_t *l, const char *target)
{
    int words[2];
    bool one[2];
    int n = tj_layout_launch_words_aligned(l, words, one);
    tj_kernel_t *k;

    for (int i = 0; i < n; i++) {
        tj_kernel_spec_t pack = tj_spec_parts(l, words[i], one[i], TJ_DIR_PACK, false, target);
        tj_kernel_spec_t unpack = tj_spec_parts(l, words[i], one[i], TJ_DIR_UNPACK, false, target);
        if (tj_lookup_kernel(&pack, TJ_LOOKUP_MEMORY, &k, NULL) == TJ_OK &&
            tj_lookup_kernel(&unpack, TJ_LOOKUP_MEMORY, &k, NULL) == TJ_OK)
            return true;
    }
    return false;
}

/* The pack and unpack kernels of @p block for every launch on aligned buffers, as the settings
 * say: queued for the background compiler, or (TYPEJIT_JIT_SYNC=1) made now. */
static void make_kernels(const tj_block_t *block)
{
    const tj_config_t *cfg = tj_config();
    tj_words_t words[2];
    int nwords = tj_block_words_aligned(block, words);
    char target[32];
    tj_kernel_t *k;
    int device = -1;

    if (!cfg->jit_sync && tj_gpu_absent() && cfg->jit != TJ_JIT_ALWAYS)
        return; /* known: no device to run kernels on */
    if (!cfg->jit_sync) {
        /* Nothing here may stall the commit, not even starting the driver, loading NVRTC or
         * reading the disk cache: kernels this process already has (a layout committed
         * before) need nothing; for the others a worker provides them (from the cache or by
         * compiling), and device calls of this type use the generic kernel until they are
         * ready. Device 0's, as the workers'. */
        if (tj_target_known(0, target, sizeof(target)) && kernels_ready(block, target))
            return;
        for (int i = 0; i < nwords; i++) {
            tj_compiler_request(block, words[i], TJ_DIR_PACK, NULL);
            tj_compiler_request(block, words[i], TJ_DIR_UNPACK, NULL);
        }
        return;
    }
    if (tj_gpu_available()) {
        if (tj_target_loadable() != TJ_OK)
            return;
        /* The application's current device is the one its buffers most likely live on. */
        device = tj_gpu_current_device();
        if (device < 0)
            device = 0;
    } else if (cfg->jit != TJ_JIT_ALWAYS) {
        return;
    }
    if (tj_target_of_device(device, target, sizeof(target)) != TJ_OK)
        return;
    /* Into the memory table, where the device calls find them; a failure is logged where it
     * happens, and device packs of this type are then staged. */
    for (int i = 0; i < nwords; i++)
        if (kernel_get(block, words[i], TJ_DIR_PACK, target, TJ_LOOKUP_COMPILE, &k) != TJ_OK ||
            kernel_get(block, words[i], TJ_DIR_UNPACK, target, TJ_LOOKUP_COMPILE, &k) != TJ_OK)
            return;
}

/* The process uses CUDA from now on: the kernels of the types committed before are asked for
 * now, as their commits would have; later commits ask for their own. */
static void start_using_cuda(void)
{
    tj_block_t *blocks = NULL;
    size_t n = 0;

    if (tj_config()->jit != TJ_JIT_AUTO ||
        atomic_exchange(&tj_kernels_state.prepare.uses_cuda, true))
        return;
    /* A copy: the type table's lock is not held while kernels are asked for. */
    tj_table_strided_blocks(&blocks, &n);
    tj_log_debug("the process uses cuda: kernels of the %zu strided types committed so far are "
                 "asked for",
                 n);
    for (size_t i = 0; i < n; i++)
        make_kernels(&blocks[i]);
    free(blocks);
}

/* The word of the description for the furthest compile state of a type's kernels. */
static const char *state_word(tj_compile_state_t furthest)
{
    return furthest == TJ_COMPILE_RUNNING  ? "compiling"
           : furthest == TJ_COMPILE_QUEUED ? "queued"
                                           : "none";
}

/* Whether the process uses CUDA (TYPEJIT_JIT=auto): a device buffer met, or a context current
 * on the committing thread. Neither loads nor starts the driver: without one installed nothing
 * ever will, and a process that has not loaded it has no context. */
static bool using_cuda(void)
{
    if (atomic_load(&tj_kernels_state.prepare.uses_cuda))
        return true;
    if (!tj_gpu_driver_installed())
        return false;
    if (tj_gpu_memory_met() || tj_gpu_context_current()) {
        start_using_cuda();
        return true;
    }
    return false;
}

void tj_prepare_launching(void)
{
    if (!atomic_load_explicit(&tj_kernels_state.prepare.uses_cuda, memory_order_relaxed))
        start_using_cuda();
}

void tj_prepare_commit(const tj_type_info_t *info)
{
    const tj_config_t *cfg = tj_config();

    /* A layout's kernels are asked for by its device calls: it is built at the first of them
     * (type/lazy.h). */
    if (!info->strided || cfg->jit == TJ_JIT_OFF)
        return;
    if (cfg->jit == TJ_JIT_AUTO && !using_cuda())
        return; /* asked for when the process meets the GPU (start_using_cuda), if ever */
    make_kernels(&info->block);
}

const char *tj_prepare_state(const tj_type_info_t *info)
{
    const tj_block_t *block = &info->block;
    const tj_layout_t *l = info->layout;
    tj_compile_state_t pack = TJ_COMPILE_IDLE, unpack = TJ_COMPILE_IDLE;
    tj_words_t words[2];
    int nwords = tj_block_words_aligned(block, words);
    char target[32];

    if (!tj_type_info_kernel(info) || tj_config()->jit == TJ_JIT_OFF)
        return "none";
    /* Not asked for yet: when the process meets the GPU, if a driver is there to meet. */
    if (l == NULL && tj_config()->jit == TJ_JIT_AUTO &&
        !atomic_load(&tj_kernels_state.prepare.uses_cuda))
        return tj_gpu_driver_installed() ? "later" : "none";
    if (l != NULL) {
        int lwords[2];
        bool one[2];
        int nl = tj_layout_launch_words_aligned(l, lwords, one);
        if (tj_target_known(tj_gpu_absent() ? -1 : 0, target, sizeof(target)) &&
            parts_ready(l, target))
            return "jit";
        for (int i = 0; i < nl; i++) {
            tj_compile_state_t p =
                tj_compiler_state_parts(l, lwords[i], one[i], TJ_DIR_PACK, false);
            tj_compile_state_t u =
                tj_compiler_state_parts(l, lwords[i], one[i], TJ_DIR_UNPACK, false);
            pack = TJ_MAX(pack, p);
            unpack = TJ_MAX(unpack, u);
        }
        return state_word(TJ_MAX(pack, unpack));
    }
    /* Device 0's, as prepare asks for them; without a device (TYPEJIT_JIT=always), the target
     * without one. */
    if (tj_target_known(tj_gpu_absent() ? -1 : 0, target, sizeof(target)) &&
        kernels_ready(block, target))
        return "jit";
    for (int i = 0; i < nwords; i++) {
        tj_compile_state_t p = tj_compiler_state(block, words[i], TJ_DIR_PACK);
        tj_compile_state_t u = tj_compiler_state(block, words[i], TJ_DIR_UNPACK);
        pack = TJ_MAX(pack, p);
        unpack = TJ_MAX(unpack, u);
    }
    return state_word(TJ_MAX(pack, unpack));
}
