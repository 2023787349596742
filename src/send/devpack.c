/* Device pack paths. A call is the GPU's when the first byte the type touches, or the first
 * packed byte, is in device or managed memory. The kernel path takes only calls it can complete
 * exactly (a strided type, valid arguments, enough room, every byte inside its allocation);
 * calls the system MPI would reject go to it unchanged, and it rejects them before touching any
 * buffer. Everything else is staged: the device bytes are copied to host memory, the system MPI
 * works there, and the result is copied back. Staging is slow but exact, so a type typejit
 * cannot compile still works on device buffers with an MPI that is not CUDA-aware.
 *
 * Every driver call runs in the context that owns the buffer (a tj_gpu_enter scope), so the
 * caller's current context is untouched, and several threads may pack at once: nothing here
 * holds a process-wide lock. */
#include "send/devpack.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda.h"
#include "jit/parts.h"
#include "kernels/compiler.h"
#include "kernels/supply.h"
#include "kernels/target.h"
#include "send/batch.h"
#include "send/count.h"
#include "type/lazy.h"
#include "send/parttable.h"
#include "send/span.h"
#include "send/staging.h"
#include "type/cpu.h"
#include "type/translate.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"
#include "util/mpierr.h"
#include "util/stats.h"

/* The staged path works on at most this many bytes of typed footprint at a time (more only when
 * a single object is larger), so a sparse type never needs a host copy of gigabytes. */
#define TJ_STAGE_CHUNK ((int64_t)64 << 20)

/* One MPI_Pack or MPI_Unpack call, in the terms both directions share. */
typedef struct {
    bool pack;
    const tj_type_info_t *info; /* with extents; strided or not */
    MPI_Datatype type;
    const char *typed; /* the user's typed buffer argument (may be MPI_BOTTOM) */
    int64_t count;
    char *packed; /* the packed buffer argument */
    int64_t bufsize;
    int64_t *position;
    MPI_Comm comm;
    int64_t bytes;                           /* packed bytes of the call */
    tj_gpu_ptr_t tp;                         /* the typed side, queried at its first touched byte */
    tj_gpu_ptr_t pp;                         /* the packed side, queried at *position */
    const tj_gpu_ptr_t *tp_known, *pp_known; /* the caller's answers, instead of querying */
    tj_type_info_t own;                      /* the extents of a type typejit has no record of */
    tj_type_info_t built;                    /* a pending record, its layout built (type/lazy.h) */
    tj_layout_t *lay;  /* the layout the kernel path moves (the type's, or its block's), or NULL */
    bool serial;       /* the unpack runs as one thread, in typemap order (overlapping bytes) */
    tj_batch_t *batch; /* where the kernel's wait goes; NULL: the call waits itself */
    bool face;         /* MPI_Pack or MPI_Unpack itself: its errors go to comm's error handler */
} call_t;

static bool is_gpu(tj_mem_t m)
{
    return m == TJ_MEM_DEVICE || m == TJ_MEM_MANAGED;
}

/* The kernel of @p block for (words, dir) from the supply, as far as @p mode goes. */
static tj_status_t kernel_get(const tj_block_t *block, tj_words_t words, tj_dir_t dir,
                              const char *target, tj_supply_mode_t mode, tj_kernel_t **k)
{
    tj_kernel_spec_t spec = tj_kernel_words(block, words, dir, target);
    return tj_supply_get(&spec, mode, k, NULL);
}

/* Whether the supply's memory table holds the pack and unpack kernels of @p block for every
 * launch on aligned buffers (tj_block_words_aligned). */
static bool kernels_ready(const tj_block_t *block, const char *target)
{
    tj_words_t words[2];
    int n = tj_block_words_aligned(block, words);
    tj_kernel_t *k;

    for (int i = 0; i < n; i++)
        if (kernel_get(block, words[i], TJ_DIR_PACK, target, TJ_SUPPLY_MEMORY, &k) != TJ_OK ||
            kernel_get(block, words[i], TJ_DIR_UNPACK, target, TJ_SUPPLY_MEMORY, &k) != TJ_OK)
            return false;
    return true;
}

/* The parts kernel of @p l for (word, dir) from the supply, as far as @p mode goes. */
static tj_status_t parts_get(const tj_layout_t *l, int word, tj_dir_t dir, bool serial,
                             const char *target, tj_supply_mode_t mode, tj_kernel_t **k)
{
    tj_kernel_spec_t spec = tj_kernel_parts(l, word, dir, serial, target);
    return tj_supply_get(&spec, mode, k, NULL);
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
        if (kernel_get(block, words[i], TJ_DIR_PACK, target, TJ_SUPPLY_COMPILE, &k) != TJ_OK ||
            kernel_get(block, words[i], TJ_DIR_UNPACK, target, TJ_SUPPLY_COMPILE, &k) != TJ_OK)
            return;
}

/* Under TYPEJIT_JIT=auto a commit makes kernels only once the process uses CUDA: a program that
 * never touches device memory loads neither NVRTC nor (at its commits) the driver. Set once, by
 * the first commit that finds a CUDA context current or the first device buffer met. */
static atomic_bool uses_cuda;

/* Blocks of the strided types committed so far (tj_table_each). */
typedef struct {
    tj_block_t *blocks;
    size_t n, cap;
} blocks_t;

static void collect(const tj_type_info_t *info, void *arg)
{
    blocks_t *v = arg;

    if (!info->strided)
        return;
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 64;
        tj_block_t *b = realloc(v->blocks, cap * sizeof(*b));
        if (b == NULL)
            return; /* the rest get their kernels at their device calls */
        v->blocks = b;
        v->cap = cap;
    }
    v->blocks[v->n++] = info->block;
}

/* The process uses CUDA from now on: the kernels of the types committed before are asked for
 * now, as their commits would have; later commits ask for their own. */
static void start_using_cuda(void)
{
    blocks_t v = {NULL, 0, 0};

    if (tj_config()->jit != TJ_JIT_AUTO || atomic_exchange(&uses_cuda, true))
        return;
    tj_table_each(collect, &v);
    tj_log_debug("the process uses cuda: kernels of the %zu strided types committed so far are "
                 "asked for",
                 v.n);
    for (size_t i = 0; i < v.n; i++)
        make_kernels(&v.blocks[i]);
    free(v.blocks);
}

/* Whether the process uses CUDA (TYPEJIT_JIT=auto): a device buffer met, or a context current
 * on the committing thread. Neither loads nor starts the driver: without one installed nothing
 * ever will, and a process that has not loaded it has no context. */
static bool using_cuda(void)
{
    if (atomic_load(&uses_cuda))
        return true;
    if (!tj_gpu_driver_installed())
        return false;
    if (tj_gpu_watch_memory(start_using_cuda) || tj_gpu_context_current()) {
        start_using_cuda();
        return true;
    }
    return false;
}

void tj_devpack_prepare(const tj_type_info_t *info)
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

const char *tj_devpack_kernels(const tj_type_info_t *info)
{
    const tj_block_t *block = &info->block;
    const tj_layout_t *l = info->layout;
    tj_compile_state_t pack = TJ_COMPILE_IDLE, unpack = TJ_COMPILE_IDLE;
    tj_words_t words[2];
    int nwords = tj_block_words_aligned(block, words);
    char target[32];
    tj_kernel_t *k;

    if (!tj_type_info_kernel(info) || tj_config()->jit == TJ_JIT_OFF)
        return "none";
    /* Not asked for yet: when the process meets the GPU, if a driver is there to meet. */
    if (l == NULL && tj_config()->jit == TJ_JIT_AUTO && !atomic_load(&uses_cuda))
        return tj_gpu_driver_installed() ? "later" : "none";
    if (l != NULL) {
        if (tj_target_known(tj_gpu_absent() ? -1 : 0, target, sizeof(target)) &&
            parts_get(l, l->word, TJ_DIR_PACK, false, target, TJ_SUPPLY_MEMORY, &k) == TJ_OK &&
            parts_get(l, l->word, TJ_DIR_UNPACK, false, target, TJ_SUPPLY_MEMORY, &k) == TJ_OK)
            return "jit";
        pack = tj_compiler_state_parts(l, l->word, TJ_DIR_PACK, false);
        unpack = tj_compiler_state_parts(l, l->word, TJ_DIR_UNPACK, false);
        if (pack == TJ_COMPILE_RUNNING || unpack == TJ_COMPILE_RUNNING)
            return "compiling";
        if (pack == TJ_COMPILE_QUEUED || unpack == TJ_COMPILE_QUEUED)
            return "queued";
        return "none";
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
    if (pack == TJ_COMPILE_RUNNING || unpack == TJ_COMPILE_RUNNING)
        return "compiling";
    if (pack == TJ_COMPILE_QUEUED || unpack == TJ_COMPILE_QUEUED)
        return "queued";
    return "none";
}

/* The kernel of the call's block and direction for @p word on @p device from the kernel supply
 * (a narrower word for a misaligned buffer, another arch for another device). In background
 * mode a kernel not yet compiled is asked for and TJ_ERR_NOT_FOUND returned: the caller uses
 * the generic kernel meanwhile. */
static tj_status_t kernel_for(const call_t *c, const tj_block_t *block, tj_words_t words,
                              int device, tj_kernel_t **k)
{
    tj_dir_t dir = c->pack ? TJ_DIR_PACK : TJ_DIR_UNPACK;
    char target[32];
    tj_status_t st;

    if ((st = tj_target_of_device(device, target, sizeof(target))) != TJ_OK)
        return st;
    if (tj_config()->jit_sync)
        return kernel_get(block, words, dir, target, TJ_SUPPLY_COMPILE, k);
    if ((st = kernel_get(block, words, dir, target, TJ_SUPPLY_CACHED, k)) == TJ_ERR_NOT_FOUND)
        tj_compiler_request(block, words, dir, target);
    return st;
}

/* The parts kernel of the call's layout for @p word: from the supply as kernel_for gets a
 * block's (TJ_ERR_NOT_FOUND while it is compiled in the background, or with TYPEJIT_JIT=off). */
static tj_status_t parts_for(const call_t *c, const tj_layout_t *l, int word, const char *target,
                             tj_kernel_t **k)
{
    tj_dir_t dir = c->pack ? TJ_DIR_PACK : TJ_DIR_UNPACK;
    tj_status_t st;

    if (tj_config()->jit == TJ_JIT_OFF)
        return TJ_ERR_NOT_FOUND;
    if (tj_config()->jit_sync)
        return parts_get(l, word, dir, c->serial, target, TJ_SUPPLY_COMPILE, k);
    if ((st = parts_get(l, word, dir, c->serial, target, TJ_SUPPLY_CACHED, k)) == TJ_ERR_NOT_FOUND)
        tj_compiler_request_parts(l, word, dir, c->serial, target);
    return st;
}

/* The call's layout moved by its parts kernel, or, while that is not there, by the generic one:
 * the parts kernel of the layout's runs (one compiled image per word for every layout). A
 * layout of too many runs for that compiles its own kernel now. Launched, not waited for. */
static tj_status_t launch_parts(const call_t *c, int device, tj_devptr_t typed, tj_devptr_t packed)
{
    tj_layout_t *l = c->lay, *runs;
    tj_devptr_t at = typed + (tj_devptr_t)l->start; /* frame element 0 of object 0 */
    int word = tj_block_word_at(tj_block_word_at(l->word, (uintptr_t)at), (uintptr_t)packed);
    tj_devptr_t dst = c->pack ? packed : at;
    tj_devptr_t src = c->pack ? at : packed;
    long long n = c->count;
    tj_parts_args_t args;
    void *argv[4] = {&dst, &src, &n, &args};
    char target[32];
    tj_kernel_t *k;
    tj_gpu_function_t fn;
    tj_launch_t geo;
    tj_devptr_t table = 0;
    tj_status_t st;

    if ((st = tj_target_of_device(device, target, sizeof(target))) != TJ_OK)
        return st;
    if ((st = parts_for(c, l, word, target, &k)) != TJ_OK && st != TJ_ERR_NOT_FOUND)
        return st;
    if (st == TJ_ERR_NOT_FOUND) {
        tj_dir_t dir = c->pack ? TJ_DIR_PACK : TJ_DIR_UNPACK;
        if (tj_config()->jit != TJ_JIT_OFF)
            tj_stats_inc(TJ_STAT_packs_generic_while_compiling);
        if (tj_parttable_runs(l, &runs) == TJ_OK) {
            l = runs;
            word = tj_block_word_at(tj_block_word_at(l->word, (uintptr_t)at), (uintptr_t)packed);
        }
        if ((st = parts_get(l, word, dir, c->serial, target, TJ_SUPPLY_COMPILE, &k)) != TJ_OK)
            return st;
    }
    if ((st = tj_kernel_function(k, &fn)) != TJ_OK ||
        (!l->baked && (st = tj_parttable_get(l, &table)) != TJ_OK))
        return st;
    tj_gen_parts_args(l, table, &args);
    tj_gen_parts_launch(l, word, c->count, c->serial, &geo);
    st = tj_gpu_launch(fn, geo.grid, geo.block, argv);
    if (st == TJ_OK) {
        tj_stats_inc(TJ_STAT_kernel_launches);
        if (c->serial)
            tj_stats_inc(TJ_STAT_unpacks_serial);
    }
    return st;
}

/* Launch the call's kernel between two device addresses, in the current scope, without waiting
 * for it (from_device waits, or leaves the wait to the call's batch): the JIT kernel of the block,
 * or the generic kernel (the layout as run-time arguments) with TYPEJIT_JIT=off or while the JIT
 * kernel is being compiled in the background; the parts kernel of a layout (launch_parts). */
static tj_status_t launch(const call_t *c, int device, tj_devptr_t typed, tj_devptr_t packed)
{
    tj_block_t b = tj_block_at_zero(&c->info->block);
    tj_devptr_t at = typed + (tj_devptr_t)c->info->block.start; /* object 0's first byte */
    tj_words_t words = tj_block_words(&b, c->count, (uintptr_t)at, (uintptr_t)packed);
    int word = words.edge != 0 ? words.edge : words.word; /* the generic kernel's: no edges */
    tj_dir_t dir = c->pack ? TJ_DIR_PACK : TJ_DIR_UNPACK;
    tj_devptr_t dst = c->pack ? packed : at;
    tj_devptr_t src = c->pack ? at : packed;
    long long n = c->count;
    tj_generic_params_t params;
    void *args[4] = {&dst, &src, &n, &params};
    char target[32];
    tj_kernel_t *k;
    tj_gpu_function_t fn;
    tj_launch_t geo;
    tj_status_t st = TJ_ERR_NOT_FOUND;
    bool fn_is_jit;

    if (c->lay != NULL)
        return launch_parts(c, device, typed, packed);
    if (tj_config()->jit != TJ_JIT_OFF && (st = kernel_for(c, &b, words, device, &k)) != TJ_OK &&
        st != TJ_ERR_NOT_FOUND)
        return st;
    if ((fn_is_jit = st == TJ_OK)) {
        if ((st = tj_kernel_function(k, &fn)) != TJ_OK)
            return st;
        tj_gen_edges_launch(&b, words.word, words.edge, c->count, &geo);
    } else {
        tj_kernel_spec_t generic = tj_kernel_generic(word, dir, target);
        if (!tj_gen_generic_usable(&b, word))
            return TJ_ERR_UNSUPPORTED; /* 2^31 words per object or more: staged meanwhile */
        if (tj_config()->jit != TJ_JIT_OFF)
            tj_stats_inc(TJ_STAT_packs_generic_while_compiling);
        if ((st = tj_target_of_device(device, target, sizeof(target))) != TJ_OK ||
            (st = tj_supply_get(&generic, TJ_SUPPLY_COMPILE, &k, NULL)) != TJ_OK ||
            (st = tj_kernel_function(k, &fn)) != TJ_OK)
            return st;
        tj_gen_generic_params(&b, word, &params);
        tj_gen_generic_launch(&b, word, c->count, &geo);
    }
    st = tj_gpu_launch(fn, geo.grid, geo.block, args);
    if (st == TJ_OK) {
        tj_stats_inc(TJ_STAT_kernel_launches);
        if (words.edge != 0 && fn_is_jit)
            tj_stats_inc(TJ_STAT_edge_launches);
    }
    return st;
}

/* Typed side on the device (or managed); packed side on the same context's device, in pinned
 * mapped host memory, or pageable (through a device staging buffer). In the typed context. The
 * kernel's wait is the call's batch's when it has one, except through device staging, which
 * goes back to the pool before the call returns: then the call waits, once (the copy's). */
static tj_status_t from_device(const call_t *c)
{
    tj_devptr_t typed = (tj_devptr_t)(uintptr_t)c->typed;
    char *at = c->packed + *c->position;
    tj_devptr_t pdev = (tj_devptr_t)(uintptr_t)at; /* the packed side as the kernel sees it */
    tj_stage_t *stage;
    tj_status_t st;

    if (is_gpu(c->pp.kind) ||
        (c->pp.kind == TJ_MEM_PINNED && tj_gpu_host_devptr(at, &pdev) == TJ_OK)) {
        st = launch(c, c->tp.device, typed, pdev);
        return st == TJ_OK ? tj_batch_settle(c->batch) : st;
    }
    if ((st = tj_staging_get(TJ_STAGE_DEVICE, (size_t)c->bytes, &stage)) != TJ_OK)
        return st;
    if (c->pack) {
        if ((st = launch(c, c->tp.device, typed, stage->dev)) == TJ_OK)
            st = tj_gpu_copy_dtoh(at, stage->dev, (size_t)c->bytes);
    } else if ((st = tj_gpu_copy_htod_async(stage->dev, at, (size_t)c->bytes)) == TJ_OK &&
               (st = launch(c, c->tp.device, typed, stage->dev)) == TJ_OK) {
        st = tj_gpu_sync();
    }
    tj_staging_put(stage);
    return st;
}

/* Typed side in host memory, packed side on the device: the CPU engine does the layout in a
 * pinned staging buffer and one copy moves the bytes. In the packed side's context. */
static tj_status_t from_host(const call_t *c)
{
    tj_devptr_t at = (tj_devptr_t)(uintptr_t)(c->packed + *c->position);
    tj_stage_t *stage;
    tj_status_t st;

    if ((st = tj_staging_get(TJ_STAGE_PINNED, (size_t)c->bytes, &stage)) != TJ_OK)
        return st;
    if (c->pack) {
        if (c->info->layout != NULL)
            tj_cpu_pack_layout(c->info->layout, c->typed, c->count, stage->host);
        else
            tj_cpu_pack(&c->info->block, c->typed, c->count, stage->host);
        st = tj_gpu_copy_htod(at, stage->host, (size_t)c->bytes);
    } else if ((st = tj_gpu_copy_dtoh(stage->host, at, (size_t)c->bytes)) == TJ_OK) {
        /* In typemap order: where the layout overlaps itself the last write wins. */
        if (c->info->layout != NULL)
            tj_cpu_unpack_layout(c->info->layout, stage->host, c->count, (void *)c->typed);
        else
            tj_cpu_unpack(&c->info->block, stage->host, c->count, (void *)c->typed);
    }
    tj_staging_put(stage);
    return st;
}

bool tj_devpack_span(const tj_type_info_t *info, int64_t off, int64_t count, int64_t *lo,
                     int64_t *hi)
{
    int64_t reach, first, last;

    /* count x extent is where the footprint of a big count or a resized type overflows. */
    if (!tj_mul64(count - 1, info->extent, &reach) || !tj_add64(off, info->true_lb, &first) ||
        !tj_add64(first, info->true_extent, &last) || !tj_add64(first, reach < 0 ? reach : 0, lo) ||
        !tj_add64(last, reach > 0 ? reach : 0, hi))
        return false;
    return true;
}

/* @p p moved by @p d bytes, unless that leaves the address space. */
static bool moved(uintptr_t p, int64_t d, uintptr_t *out)
{
    uint64_t m = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
    if (d < 0 ? m > p : m > UINTPTR_MAX - p)
        return false;
    *out = d < 0 ? p - m : p + m;
    return true;
}

bool tj_devpack_inside(const tj_type_info_t *info, const void *buf, int64_t off, int64_t count,
                       const tj_gpu_ptr_t *where)
{
    int64_t lo, hi;
    uintptr_t a, b;

    return tj_devpack_span(info, off, count, &lo, &hi) && moved((uintptr_t)buf, lo, &a) &&
           moved((uintptr_t)buf, hi, &b) && tj_gpu_inside(where, a, b);
}

/* [lo, hi) of the typed bytes `n` objects from object `first` on touch, relative to the typed
 * buffer argument; the call's whole footprint was checked (within), so nothing overflows. */
static void typed_span(const tj_type_info_t *info, int64_t first, int64_t n, int64_t *lo,
                       int64_t *hi)
{
    if (!tj_devpack_span(info, first * info->extent, n, lo, hi))
        *lo = *hi = 0;
}

/* The kernel path: TJ_ERR_UNSUPPORTED when the call must be staged instead, with why in words
 * in @p why (for the debug log). */
static tj_status_t kernel_path(call_t *c, const char **why)
{
    tj_gpu_scope_t scope;
    tj_layout_t *own = NULL;
    tj_status_t st;

    if (!tj_type_info_kernel(c->info))
        return TJ_ERR_UNSUPPORTED; /* log_staged says why */
    if (is_gpu(c->tp.kind) && is_gpu(c->pp.kind) && c->tp.ctx != c->pp.ctx) {
        *why = "its two buffers are in different contexts";
        return TJ_ERR_UNSUPPORTED; /* two devices (or contexts): one kernel cannot see both */
    }
    if (is_gpu(c->tp.kind)) {
        if ((st = tj_target_loadable()) != TJ_OK) {
            *why = "the CUDA driver cannot load what this NVRTC compiles";
            return TJ_ERR_UNSUPPORTED;
        }
        c->lay = c->info->layout;
        /* A parallel unpack into bytes addressed twice would race: a layout whose objects
         * overlap is unpacked by one thread, in typemap order, the last write winning as in
         * MPI_Unpack; a strided type's block becomes such a layout of one part. */
        if (!c->pack && c->lay != NULL)
            c->serial = !tj_layout_disjoint(c->lay, c->count);
        else if (!c->pack && !tj_block_disjoint(&c->info->block, c->count)) {
            if ((st = tj_layout_from_block(&c->info->block, c->info->size, &own)) != TJ_OK)
                return st;
            c->lay = own;
            c->serial = true;
        }
        if ((st = tj_gpu_enter(c->tp.ctx, &scope)) != TJ_OK) {
            tj_layout_release(own);
            return st;
        }
        /* A layout made for this call alone is released when it returns: its kernel is waited
         * for here. */
        if (own != NULL)
            c->batch = NULL;
        st = from_device(c);
        tj_layout_release(own);
        c->lay = NULL;
    } else {
        if ((st = tj_gpu_enter(c->pp.ctx, &scope)) != TJ_OK)
            return st;
        st = from_host(c);
    }
    tj_gpu_leave(&scope);
    return st;
}

/* Copy between device (or managed) user memory and host memory, in the user memory's
 * context. */
static tj_status_t copy_user(const tj_gpu_ptr_t *p, bool to_user, char *user, char *host,
                             size_t len)
{
    tj_gpu_scope_t scope;
    tj_status_t st;

    if ((st = tj_gpu_enter(p->ctx, &scope)) != TJ_OK)
        return st;
    st = to_user ? tj_gpu_copy_htod((tj_devptr_t)(uintptr_t)user, host, len)
                 : tj_gpu_copy_dtoh(host, (tj_devptr_t)(uintptr_t)user, len);
    tj_gpu_leave(&scope);
    return st;
}

/* The staged path: the system MPI packs or unpacks on the host, with a host mirror of each side
 * that is on the device: a chunk of objects' typed footprint, their packed bytes. Host sides
 * are used in place (their footprint may span unmapped pages the system MPI never touches).
 * Packing objects chunk by chunk gives the same bytes as packing them at once. An unpack
 * fetches the typed footprint first, so that the bytes between typemap entries are written
 * back as they were. */
static tj_status_t staged(const call_t *c, int *mpi_rc)
{
    const tj_type_info_t *info = c->info;
    bool typed_dev = is_gpu(c->tp.kind), packed_dev = is_gpu(c->pp.kind);
    int64_t step = tj_abs64(info->extent), per = c->count, lo, hi, done = 0;
    char *t = NULL, *p = NULL;
    tj_status_t st = TJ_OK;

    *mpi_rc = MPI_SUCCESS;
    if (typed_dev && step > 0 && info->true_extent + (per - 1) * step > TJ_STAGE_CHUNK)
        per = info->true_extent >= TJ_STAGE_CHUNK ? 1
                                                  : 1 + (TJ_STAGE_CHUNK - info->true_extent) / step;
    /* (per - 1) * step cannot overflow: the whole footprint was checked (within). */
    typed_span(info, 0, per, &lo, &hi);
    if ((typed_dev && (t = malloc((size_t)(hi - lo))) == NULL) ||
        (packed_dev && (p = malloc((size_t)(per * info->size))) == NULL)) {
        tj_log_error("out of memory staging %lld bytes of a device buffer",
                     (long long)(hi - lo + per * info->size));
        st = TJ_ERR_NOMEM;
        goto out_free;
    }
    while (done < c->count && st == TJ_OK && *mpi_rc == MPI_SUCCESS) {
        int64_t n = TJ_MIN(per, c->count - done), pos = 0;
        char *at = c->packed + *c->position + done * info->size;
        char *packed = packed_dev ? p : at;
        size_t len = (size_t)(n * info->size);
        char *typed = (char *)c->typed + done * info->extent; /* object `done` */

        typed_span(info, done, n, &lo, &hi);
        if (typed_dev) {
            if ((st = copy_user(&c->tp, false, (char *)c->typed + lo, t, (size_t)(hi - lo))) !=
                TJ_OK)
                break;
            /* In integers: with MPI_BOTTOM, lo is an absolute address, and t - lo would leave
             * the address space as a pointer expression. */
            typed = (char *)((uintptr_t)t - (uintptr_t)lo + (uintptr_t)(done * info->extent));
        }
        if (c->pack) {
            *mpi_rc = tj_count_pack(typed, n, c->type, packed, (int64_t)len, &pos, c->comm);
            if (*mpi_rc == MPI_SUCCESS && packed_dev)
                st = copy_user(&c->pp, true, at, p, len);
        } else {
            if (packed_dev && (st = copy_user(&c->pp, false, at, p, len)) != TJ_OK)
                break;
            *mpi_rc = tj_count_unpack(packed, (int64_t)len, &pos, typed, n, c->type, c->comm);
            if (*mpi_rc == MPI_SUCCESS && typed_dev)
                st = copy_user(&c->tp, true, (char *)c->typed + lo, t, (size_t)(hi - lo));
        }
        done += n;
    }
out_free:
    free(t);
    free(p);
    return st;
}

/* Invalid arguments, which every MPI reports before it touches a buffer. */
static bool invalid_call(const call_t *c)
{
    return c->count <= 0 || c->position == NULL || c->packed == NULL || c->comm == MPI_COMM_NULL ||
           *c->position < 0 || c->bufsize < 0 || c->type == MPI_DATATYPE_NULL;
}

/* Whether the packed bytes fit the packed buffer; writes their count. Not enough room is
 * typejit's to report: Open MPI reports it without touching the buffers, but the MPICH family
 * packs what fits first (MPICH 4.0.2), which on a device buffer is a fault. */
static bool fits(const call_t *c, int64_t *bytes)
{
    int64_t n, end;
    if (!tj_mul64(c->count, c->info->size, &n) || !tj_add64(*c->position, n, &end) ||
        end > c->bufsize)
        return false;
    *bytes = n;
    return true;
}

static int system_call(const call_t *c)
{
    return c->pack ? tj_count_pack(c->typed, c->count, c->type, c->packed, c->bufsize, c->position,
                                   c->comm)
                   : tj_count_unpack(c->packed, c->bufsize, c->position, (void *)c->typed, c->count,
                                     c->type, c->comm);
}

/* Both sides' bytes lie inside their allocations: a kernel or copy past the end of one would
 * fault on a GPU and leave the application's context unusable. So does a footprint whose
 * count x extent overflows (the kernel's addresses would wrap). */
static bool within(const call_t *c)
{
    uintptr_t at = (uintptr_t)(c->packed + *c->position);

    return tj_devpack_inside(c->info, c->typed, 0, c->count, &c->tp) &&
           tj_gpu_inside(&c->pp, at, at + (uintptr_t)c->bytes);
}

/* At debug level, per call: which call was staged, and why. */
static void log_staged(const call_t *c, tj_status_t st, const char *why)
{
    char label[MPI_MAX_OBJECT_NAME + 32], reason[160];

    tj_table_label(c->type, label, sizeof(label));
    if (st != TJ_ERR_UNSUPPORTED)
        snprintf(reason, sizeof(reason), "no kernel could run (%s)", tj_status_string(st));
    else if (c->info == &c->own)
        snprintf(reason, sizeof(reason), "typejit has no record of the type");
    else if (!tj_type_info_kernel(c->info))
        snprintf(reason, sizeof(reason), "neither strided nor a layout (%s)",
                 c->info->why == TJ_ERR_NOT_STRIDED ? tj_reason_string((tj_reason_t)c->info->reason)
                                                    : tj_status_string(c->info->why));
    else
        snprintf(reason, sizeof(reason), "%s", why != NULL ? why : "no kernel");
    tj_log_debug("device %s of %lld objects of %s: staged through host memory: %s",
                 c->pack ? "pack" : "unpack", (long long)c->count, label, reason);
}

/* An error typejit detected: through the communicator's error handler when the call is
 * MPI_Pack or MPI_Unpack itself, as the system MPI raises its own; a send path or collective
 * passes it up to the wrapper that raises it. */
static int fail(const call_t *c, int code)
{
    return c->face ? tj_mpi_raise(c->comm, code) : code;
}

static bool run(call_t *c, int *rc)
{
    const char *why = NULL;
    tj_status_t st;

    if (!tj_gpu_available())
        return false;
    if (c->info == NULL) {
        /* A type with no record (never committed through typejit): staged if on the device. */
        tj_table_read_extents(c->type, &c->own);
        c->info = &c->own;
    }
    /* Zero bytes touch no memory: the system MPI answers, whatever the pointers are. */
    if (!c->info->extents || c->count <= 0 || c->info->size == 0 || c->position == NULL ||
        *c->position < 0)
        return false;
    /* A type at absolute addresses may have bytes in host and device memory at once. */
    if ((*rc = tj_span_check(c->info, c->type, c->typed, c->count,
                             c->pack ? "MPI_Pack" : "MPI_Unpack")) != MPI_SUCCESS) {
        *rc = fail(c, *rc);
        return true;
    }
    /* A buffer the driver cannot place is no host buffer: the call fails (the query said why). */
    if (c->tp_known != NULL)
        c->tp = *c->tp_known;
    else if (tj_gpu_query(c->typed + c->info->true_lb, &c->tp) != TJ_OK) {
        *rc = fail(c, MPI_ERR_INTERN);
        return true;
    }
    if (c->pp_known != NULL)
        c->pp = *c->pp_known;
    else if (tj_gpu_query(c->packed != NULL && *c->position < c->bufsize ? c->packed + *c->position
                                                                         : c->packed,
                          &c->pp) != TJ_OK) {
        *rc = fail(c, MPI_ERR_INTERN);
        return true;
    }
    if (!is_gpu(c->tp.kind) && !is_gpu(c->pp.kind))
        return false;
    c->info = tj_lazy_info(c->type, c->info, &c->built);
    if (invalid_call(c)) {
        *rc = system_call(c);
        return true;
    }
    if (!fits(c, &c->bytes)) {
        *rc = tj_mpi_raise(c->comm, MPI_ERR_TRUNCATE);
        return true;
    }
    if (!within(c)) {
        tj_log_error("a device %s reaches outside its allocation (the datatype's bytes must lie "
                     "in one allocation per side, count x extent within the address space); "
                     "MPI_ERR_BUFFER",
                     c->pack ? "pack" : "unpack");
        *rc = fail(c, MPI_ERR_BUFFER);
        return true;
    }
    st = kernel_path(c, &why);
    if (st == TJ_OK) {
        *c->position += c->bytes;
        tj_stats_inc(c->pack ? TJ_STAT_packs_gpu : TJ_STAT_unpacks_gpu);
        *rc = MPI_SUCCESS;
        return true;
    }
    if (st != TJ_ERR_CONTEXT) {
        if (st != TJ_ERR_UNSUPPORTED)
            tj_log_warn_once("a device %s could not use a kernel (%s); staging through host "
                             "memory",
                             c->pack ? "pack" : "unpack", tj_status_string(st));
        if (tj_log_level >= TJ_LOG_DEBUG)
            log_staged(c, st, why);
        tj_stats_inc(TJ_STAT_gpu_fallbacks);
        st = staged(c, rc);
    }
    if (st == TJ_OK && *rc == MPI_SUCCESS)
        *c->position += c->bytes;
    else if (st != TJ_OK)
        *rc = fail(c, MPI_ERR_INTERN); /* the driver call that failed said why */
    return true;
}

bool tj_devpack_pack_at(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                        int64_t incount, const tj_gpu_ptr_t *in_at, void *outbuf, int64_t outsize,
                        const tj_gpu_ptr_t *out_at, int64_t *position, MPI_Comm comm,
                        tj_batch_t *batch, int *rc)
{
    call_t c = {.pack = true,
                .info = info,
                .type = type,
                .typed = inbuf,
                .count = incount,
                .packed = outbuf,
                .bufsize = outsize,
                .position = position,
                .comm = comm,
                .tp_known = in_at,
                .pp_known = out_at,
                .batch = batch};
    return run(&c, rc);
}

bool tj_devpack_unpack_at(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                          int64_t insize, const tj_gpu_ptr_t *in_at, int64_t *position,
                          void *outbuf, int64_t outcount, const tj_gpu_ptr_t *out_at, MPI_Comm comm,
                          tj_batch_t *batch, int *rc)
{
    call_t c = {.pack = false,
                .info = info,
                .type = type,
                .typed = outbuf,
                .count = outcount,
                .packed = (void *)inbuf,
                .bufsize = insize,
                .position = position,
                .comm = comm,
                .tp_known = out_at,
                .pp_known = in_at,
                .batch = batch};
    return run(&c, rc);
}

bool tj_devpack_pack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                     int64_t incount, void *outbuf, int64_t outsize, int64_t *position,
                     MPI_Comm comm, int *rc)
{
    call_t c = {.pack = true,
                .info = info,
                .type = type,
                .typed = inbuf,
                .count = incount,
                .packed = outbuf,
                .bufsize = outsize,
                .position = position,
                .comm = comm,
                .face = true};
    return run(&c, rc);
}

bool tj_devpack_unpack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                       int64_t insize, int64_t *position, void *outbuf, int64_t outcount,
                       MPI_Comm comm, int *rc)
{
    call_t c = {.pack = false,
                .info = info,
                .type = type,
                .typed = outbuf,
                .count = outcount,
                .packed = (void *)inbuf,
                .bufsize = insize,
                .position = position,
                .comm = comm,
                .face = true};
    return run(&c, rc);
}
