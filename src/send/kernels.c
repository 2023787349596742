/* Kernel provisioning. The memory table answers repeated requests without touching the disk;
 * the disk store answers requests from earlier runs and other ranks; NVRTC compiles the rest, and
 * every compiled image is stored for them. A process uses the bytes it compiled itself and never
 * re-reads them. */
#include "send/kernels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/hash.h"
#include "cache/memo.h"
#include "cache/store.h"
#include "jit/nvrtc.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* Contexts one kernel can be loaded in (the driver layer tracks as many), devices whose
 * compile target is remembered. */
#define TJ_KERNEL_MAX_LOADS   64
#define TJ_KERNEL_MAX_DEVICES 64
#define TJ_KEY_MAX            2048

/* The kernel's module in one context, or the remembered failure to load it there. */
typedef struct {
    tj_gpu_ctx_t ctx;
    unsigned gen; /* the context's instance (tj_gpu_generation) */
    tj_gpu_module_t *module;
    tj_gpu_function_t fn;
} loaded_t;

struct tj_kernel {
    bool generic;  /* the run-time-parameter kernel; block and word unused */
    bool fused;    /* a fused kernel of several blocks; block unused */
    char name[64]; /* a kernel given by its source (tj_kernels_get_source): its function */
    tj_block_t block;
    int word;
    tj_dir_t dir;
    char target[32];
    tj_status_t failed; /* a compile that failed, remembered so it is neither retried nor
                           logged again; TJ_OK for a usable image */
    void *image;
    size_t len;
    pthread_mutex_t load_lock;
    loaded_t loaded[TJ_KERNEL_MAX_LOADS];
    int nloaded;
};

/* Compile targets of the devices, computed once each. */
static pthread_mutex_t target_lock = PTHREAD_MUTEX_INITIALIZER;
static char device_targets[TJ_KERNEL_MAX_DEVICES][32];

static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
static tj_memo_t *memo;
static atomic_bool memo_ready; /* memo exists (tj_kernels_ready reads it without setup_lock) */
static tj_store_t *store;
static tj_store_set_t *caches; /* the store, then the read-only caches of TYPEJIT_CACHE_PATH */
static bool store_tried;
static bool store_rw; /* entries and manifest lines may be written */
static char store_dir_override[4096];
static int store_ro_override = -1;

static const char *dir_name(tj_dir_t dir)
{
    return dir == TJ_DIR_PACK ? "pack" : "unpack";
}

static const char *kernel_name(tj_dir_t dir)
{
    return dir == TJ_DIR_PACK ? "tj_pack" : "tj_unpack";
}

static const char *function_name(const tj_kernel_t *k)
{
    if (k->name[0] != '\0')
        return k->name;
    if (k->generic)
        return k->dir == TJ_DIR_PACK ? "tj_generic_pack" : "tj_generic_unpack";
    if (k->fused)
        return k->dir == TJ_DIR_PACK ? "tj_fused_pack" : "tj_fused_unpack";
    return kernel_name(k->dir);
}

int tj_kernels_key(const tj_block_t *block, int word, tj_dir_t dir, const char *target, char *buf,
                   size_t len)
{
    char text[1024];
    int major, minor;

    if (tj_nvrtc_version(&major, &minor) != TJ_OK)
        return -1;
    tj_block_format(block, text, sizeof(text));
    return snprintf(buf, len,
                    "typejit kernel\nlibrary=%s\ntemplates=%016llx\nnvrtc=%d.%d build=%s\n"
                    "target=%s\noptions=%s\ndirection=%s\nword=%d\nblock=%s\n",
                    tj_version(), (unsigned long long)tj_gen_template_hash(), major, minor,
                    tj_nvrtc_build_id(), target, tj_nvrtc_options(), dir_name(dir), word, text);
}

int tj_kernels_manifest_line(const tj_block_t *block, int word, tj_dir_t dir, const char *target,
                             char *buf, size_t len)
{
    char text[1024];
    tj_block_format(block, text, sizeof(text));
    return snprintf(buf, len, "%s %s W=%d %s", target, dir_name(dir), word, text);
}

tj_status_t tj_kernels_manifest_parse(const char *line, tj_block_t *block, int *word, tj_dir_t *dir,
                                      char *target, size_t target_len)
{
    char tgt[32], d[16];
    int w, used = 0;
    tj_block_t b;

    if (sscanf(line, "%31s %15s W=%d %n", tgt, d, &w, &used) != 3 || used == 0)
        return TJ_ERR_PARSE;
    if (strcmp(d, "pack") != 0 && strcmp(d, "unpack") != 0)
        return TJ_ERR_PARSE;
    if (tj_block_parse(line + used, &b) != TJ_OK)
        return TJ_ERR_PARSE;
    if ((w != 1 && w != 2 && w != 4 && w != 8 && w != 16) || b.word % w != 0)
        return TJ_ERR_PARSE;
    if (strlen(tgt) >= target_len)
        return TJ_ERR_PARSE;
    strcpy(target, tgt);
    *block = b;
    *word = w;
    *dir = strcmp(d, "pack") == 0 ? TJ_DIR_PACK : TJ_DIR_UNPACK;
    return TJ_OK;
}

tj_status_t tj_kernels_target(int device, char *target, size_t len)
{
    const char *arch = tj_nvrtc_arch_setting(); /* TYPEJIT_ARCH, checked against NVRTC */
    char found[32];
    int sm;
    tj_status_t st = TJ_OK;

    if (arch[0] != '\0') {
        snprintf(target, len, "%s", arch);
        return TJ_OK;
    }
    if (device < 0 || device >= TJ_KERNEL_MAX_DEVICES || !tj_gpu_available()) {
        snprintf(target, len, "sm_90");
        return TJ_OK;
    }
    /* Every device has its own arch: a node may mix them. */
    pthread_mutex_lock(&target_lock);
    if (device_targets[device][0] == '\0' && (st = tj_gpu_sm(device, &sm)) == TJ_OK &&
        (st = tj_nvrtc_target(sm, found, sizeof(found))) == TJ_OK)
        snprintf(device_targets[device], sizeof(device_targets[device]), "%s", found);
    if (st == TJ_OK)
        snprintf(target, len, "%s", device_targets[device]);
    pthread_mutex_unlock(&target_lock);
    return st;
}

static pthread_once_t loadable_once = PTHREAD_ONCE_INIT;
static tj_status_t loadable_status;

/* A driver loads images of an NVRTC of its own CUDA major version or older, never newer
 * (CUBIN and PTX alike): decided once, said once. */
static void check_loadable(void)
{
    int driver = tj_gpu_driver_version(), major, minor;

    loadable_status = tj_nvrtc_version(&major, &minor);
    if (loadable_status != TJ_OK || driver <= 0 || major <= driver / 1000)
        return;
    tj_log_warn_job("nvrtc %d.%d is newer than the cuda driver (%d.%d), which cannot load its "
                    "kernels; device buffers are staged through host memory (install nvrtc %d.x "
                    "or a newer driver)",
                    major, minor, driver / 1000, driver % 1000 / 10, driver / 1000);
    loadable_status = TJ_ERR_UNSUPPORTED;
}

tj_status_t tj_kernels_loadable(void)
{
    pthread_once(&loadable_once, check_loadable);
    return loadable_status;
}

void tj_kernels_set_store(const char *dir, int read_only)
{
    pthread_mutex_lock(&setup_lock);
    snprintf(store_dir_override, sizeof(store_dir_override), "%s", dir ? dir : "");
    store_ro_override = read_only;
    tj_store_set_close(caches);
    caches = NULL;
    if (store != NULL)
        tj_store_close(store);
    store = NULL;
    store_tried = false;
    pthread_mutex_unlock(&setup_lock);
    pthread_mutex_lock(&target_lock);
    memset(device_targets, 0, sizeof(device_targets));
    pthread_mutex_unlock(&target_lock);
}

/* The memory table and the disk store, set up on first use. A store that cannot be opened
 * (untrusted, unwritable) leaves the process with the memory table alone. */
static tj_status_t setup(void)
{
    const tj_config_t *cfg = tj_config();
    tj_status_t st = TJ_OK;

    pthread_mutex_lock(&setup_lock);
    if (memo == NULL && (st = tj_memo_create(&memo)) != TJ_OK)
        goto out_unlock;
    atomic_store_explicit(&memo_ready, true, memory_order_release);
    if (!store_tried) {
        const char *dir = store_dir_override[0] ? store_dir_override : cfg->cache_dir;
        bool ro = store_ro_override >= 0 ? store_ro_override : cfg->cache == TJ_CACHE_RO;
        store_tried = true;
        if ((store_dir_override[0] || cfg->cache != TJ_CACHE_OFF) && dir[0] != '\0' &&
            tj_store_open(dir, ro ? TJ_STORE_RO : TJ_STORE_RW, &store) != TJ_OK)
            store = NULL;
        store_rw = store != NULL && !ro;
        /* The shared caches serve the application, not the tools' own cache directory. */
        if (tj_store_set_open(store, store_dir_override[0] ? NULL : cfg->cache_path, &caches) !=
            TJ_OK)
            caches = NULL;
    }
out_unlock:
    pthread_mutex_unlock(&setup_lock);
    return st;
}

static void kernel_free(void *value)
{
    tj_kernel_t *k = value;
    for (int i = 0; i < k->nloaded; i++)
        tj_gpu_module_unload(k->loaded[i].module);
    pthread_mutex_destroy(&k->load_lock);
    free(k->image);
    free(k);
}

/* The toolchain level of the disk layout: readable, and different for every NVRTC build. */
static void toolchain_name(char *buf, size_t len)
{
    int major = 0, minor = 0;
    tj_nvrtc_version(&major, &minor);
    snprintf(buf, len, "nvrtc-%d.%d-%.12s", major, minor, tj_nvrtc_build_id());
}

static tj_status_t compile(const tj_block_t *block, int word, tj_dir_t dir, const char *target,
                           const char *key, char *toolchain, tj_kernel_t *k)
{
    char *source = NULL;
    tj_status_t st;

    struct timespec t0, t1;

    if ((st = tj_gen_source(block, word, dir, kernel_name(dir), &source)) != TJ_OK)
        return st;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = tj_nvrtc_compile(source, kernel_name(dir), target, &k->image, &k->len);
    if (st != TJ_OK) {
        tj_stats_inc(TJ_STAT_jit_failures);
        goto out_free;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tj_stats_inc(TJ_STAT_jit_compiles);
    if (tj_log_level >= TJ_LOG_DEBUG) {
        char text[1024];
        tj_block_format(block, text, sizeof(text)); /* as the commit line shows the type's */
        tj_log_debug(
            "kernel %s %s W=%d %s: compiled in %.1f ms (%zu bytes)", dir_name(dir), target, word,
            text, (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6,
            k->len);
    }
    if (store_rw) {
        tj_store_save(store, toolchain, target, key, k->image, k->len,
                      tj_config()->save_source ? source : NULL);
        tj_store_trim_if_needed(store); /* TYPEJIT_CACHE_MAX_SIZE, once per process */
    }
out_free:
    free(source);
    return st;
}

/* The memory table's key: the same identity as the full key text (everything else in that text
 * is fixed for the process), hashed from a packed record so that a hit formats no text. */
static tj_hash_t memo_key(const tj_block_t *block, int word, tj_dir_t dir, const char *target)
{
    struct {
        char target[32];
        int32_t dir, word, ndims, pad;
        int64_t start, extent, counts[TJ_BLOCK_MAX_DIMS], strides[TJ_BLOCK_MAX_DIMS];
    } rec;

    memset(&rec, 0, sizeof(rec));
    snprintf(rec.target, sizeof(rec.target), "%s", target);
    rec.dir = (int32_t)dir;
    rec.word = word;
    rec.ndims = block->ndims;
    rec.start = block->start;
    rec.extent = block->extent;
    for (int d = 0; d < block->ndims; d++) {
        rec.counts[d] = block->counts[d];
        rec.strides[d] = block->strides[d];
    }
    return tj_hash_bytes(&rec, sizeof(rec));
}

/* Before compiling a kernel the disk cache lacks: take its lock in the cache, so that of all
 * the processes sharing the cache one compiles and the others wait for its entry (bounded:
 * after TJ_STORE_WAIT_DEFAULT_MS the waiter compiles too, and a holder that died is detected
 * and its lock broken). TJ_OK: the entry arrived and is loaded into @p k. Otherwise the caller
 * compiles, holding *lock when one was taken (NULL otherwise; locks decide who compiles, they
 * are never needed for a correct entry). */
static tj_status_t locked_load(const char *key, const char *toolchain, const char *target,
                               tj_kernel_t *k, tj_store_lock_t **lock)
{
    tj_status_t st = TJ_ERR_UNSUPPORTED;

    *lock = NULL;
    for (int attempt = 0; store_rw && attempt < 3; attempt++) {
        st = tj_store_lock(store, toolchain, target, key, lock);
        if (st == TJ_ERR_BUSY) {
            st = tj_store_wait(store, toolchain, target, key, TJ_STORE_WAIT_DEFAULT_MS, &k->image,
                               &k->len);
            if (st == TJ_OK)
                return TJ_OK;
            if (st == TJ_ERR_NOT_FOUND)
                continue; /* the holder gave up or died: try to take the lock */
            break;        /* timed out: compile without the lock */
        }
        /* Holding the lock: another process may have stored the entry just before. */
        if (st == TJ_OK &&
            tj_store_load(store, toolchain, target, key, &k->image, &k->len) == TJ_OK) {
            tj_store_unlock(*lock);
            *lock = NULL;
            return TJ_OK;
        }
        break;
    }
    return TJ_ERR_NOT_FOUND;
}

/* The kernel from the memory table, else the disk cache, else (when @p may_compile) NVRTC;
 * TJ_ERR_NOT_FOUND when it would need a compile that is not allowed. */
static tj_status_t provide(const tj_block_t *block, int word, tj_dir_t dir, const char *target,
                           bool may_compile, tj_kernel_t **kernel, tj_origin_t *origin)
{
    char key[TJ_KEY_MAX], toolchain[64], line[1200];
    tj_store_lock_t *lock = NULL;
    tj_kernel_t *k, *won;
    tj_hash_t hash;
    tj_origin_t from;
    int n;
    tj_status_t st, loaded = TJ_ERR_NOT_FOUND;

    if ((st = tj_nvrtc_load()) != TJ_OK || (st = setup()) != TJ_OK)
        return st;
    hash = memo_key(block, word, dir, target);
    if ((k = tj_memo_get(memo, hash)) != NULL) {
        if (k->failed == TJ_OK)
            tj_stats_inc(TJ_STAT_cache_hits_memory);
        from = TJ_FROM_MEMORY;
        goto out_found;
    }

    n = tj_kernels_key(block, word, dir, target, key, sizeof(key));
    if (n < 0 || (size_t)n >= sizeof(key))
        return TJ_ERR_INVALID;
    k = calloc(1, sizeof(*k));
    if (k == NULL)
        return TJ_ERR_NOMEM;
    k->block = *block;
    k->word = word;
    k->dir = dir;
    snprintf(k->target, sizeof(k->target), "%s", target);
    pthread_mutex_init(&k->load_lock, NULL);
    toolchain_name(toolchain, sizeof(toolchain));
    if (caches != NULL &&
        (loaded = tj_store_set_load(caches, toolchain, target, key, &k->image, &k->len)) == TJ_OK) {
        tj_stats_inc(TJ_STAT_cache_hits_disk);
        tj_block_format(block, line, sizeof(line)); /* a disk read costs far more */
        tj_log_debug("kernel %s %s W=%d %s: from the disk cache", dir_name(dir), target, word,
                     line);
        from = TJ_FROM_DISK;
    } else if (!may_compile) {
        kernel_free(k);
        return TJ_ERR_NOT_FOUND;
    } else {
        tj_stats_inc(TJ_STAT_cache_misses);
        tj_block_format(block, line, sizeof(line)); /* a compile follows */
        tj_log_debug("kernel %s %s W=%d %s: not cached%s", dir_name(dir), target, word, line,
                     loaded == TJ_ERR_CORRUPT ? " (an invalid entry is replaced)" : "");
        from = TJ_FROM_COMPILE;
        if (locked_load(key, toolchain, target, k, &lock) == TJ_OK) {
            from = TJ_FROM_DISK; /* another process compiled it meanwhile */
        } else if ((st = compile(block, word, dir, target, key, toolchain, k)) != TJ_OK) {
            tj_store_unlock(lock);
            if (st != TJ_ERR_JIT) {
                kernel_free(k);
                return st;
            }
            /* Kept in the table as a failure: the next request answers at once. */
            k->failed = st;
        } else {
            tj_store_unlock(lock);
        }
    }
    if (k->failed == TJ_OK && store_rw &&
        tj_kernels_manifest_line(block, word, dir, target, line, sizeof(line)) < (int)sizeof(line))
        tj_store_manifest_add(store, line);
    /* Two threads may build the same kernel at once; the first one in the table wins. */
    won = tj_memo_put(memo, hash, k);
    if (won == NULL) {
        kernel_free(k);
        return TJ_ERR_NOMEM;
    }
    if (won != k)
        kernel_free(k);
    k = won;
out_found:
    if (k->failed != TJ_OK)
        return k->failed;
    *kernel = k;
    if (origin != NULL)
        *origin = from;
    return TJ_OK;
}

tj_status_t tj_kernels_get(const tj_block_t *block, int word, tj_dir_t dir, const char *target,
                           tj_kernel_t **kernel, tj_origin_t *origin)
{
    return provide(block, word, dir, target, true, kernel, origin);
}

tj_status_t tj_kernels_cached(const tj_block_t *block, int word, tj_dir_t dir, const char *target,
                              tj_kernel_t **kernel)
{
    return provide(block, word, dir, target, false, kernel, NULL);
}

tj_status_t tj_kernels_ready(const tj_block_t *block, int word, tj_dir_t dir, int device,
                             tj_kernel_t **kernel)
{
    const tj_config_t *cfg = tj_config();
    char target[32] = "";
    tj_kernel_t *k;

    if (!atomic_load_explicit(&memo_ready, memory_order_acquire) || device >= TJ_KERNEL_MAX_DEVICES)
        return TJ_ERR_NOT_FOUND;
    /* The target only as far as it is already known: finding it may need NVRTC. A negative
     * device: the target without one (TYPEJIT_JIT=always), as tj_kernels_target gives it. */
    if (cfg->arch[0] != '\0') {
        snprintf(target, sizeof(target), "%s", cfg->arch);
    } else if (device < 0) {
        snprintf(target, sizeof(target), "sm_90");
    } else {
        pthread_mutex_lock(&target_lock);
        snprintf(target, sizeof(target), "%s", device_targets[device]);
        pthread_mutex_unlock(&target_lock);
    }
    if (target[0] == '\0')
        return TJ_ERR_NOT_FOUND;
    k = tj_memo_get(memo, memo_key(block, word, dir, target));
    if (k == NULL || k->failed != TJ_OK)
        return TJ_ERR_NOT_FOUND;
    if (kernel == NULL)
        return TJ_OK; /* only asked whether it is there: no use, no hit */
    tj_stats_inc(TJ_STAT_cache_hits_memory);
    *kernel = k;
    return TJ_OK;
}

tj_status_t tj_kernels_generic(tj_dir_t dir, const char *target, tj_kernel_t **kernel)
{
    char key[TJ_KEY_MAX], toolchain[64];
    int major, minor, n;
    tj_kernel_t *k, *won;
    tj_hash_t hash;
    tj_status_t st;

    if ((st = tj_nvrtc_load()) != TJ_OK || (st = setup()) != TJ_OK ||
        (st = tj_nvrtc_version(&major, &minor)) != TJ_OK)
        return st;
    n = snprintf(key, sizeof(key),
                 "typejit generic kernel\nlibrary=%s\ntemplates=%016llx\nnvrtc=%d.%d build=%s\n"
                 "target=%s\noptions=%s\ndirection=%s\n",
                 tj_version(), (unsigned long long)tj_gen_template_hash(), major, minor,
                 tj_nvrtc_build_id(), target, tj_nvrtc_options(), dir_name(dir));
    if (n < 0 || (size_t)n >= sizeof(key))
        return TJ_ERR_INVALID;
    hash = tj_hash_bytes(key, (size_t)n);
    if ((k = tj_memo_get(memo, hash)) != NULL)
        goto out_found;
    k = calloc(1, sizeof(*k));
    if (k == NULL)
        return TJ_ERR_NOMEM;
    k->generic = true;
    k->dir = dir;
    snprintf(k->target, sizeof(k->target), "%s", target);
    pthread_mutex_init(&k->load_lock, NULL);
    toolchain_name(toolchain, sizeof(toolchain));
    if (caches == NULL ||
        tj_store_set_load(caches, toolchain, target, key, &k->image, &k->len) != TJ_OK) {
        st =
            tj_nvrtc_compile(tj_gen_generic_source(), function_name(k), target, &k->image, &k->len);
        if (st != TJ_OK && st != TJ_ERR_JIT) {
            kernel_free(k);
            return st;
        }
        k->failed = st;
        if (st == TJ_OK && store_rw)
            tj_store_save(store, toolchain, target, key, k->image, k->len, NULL);
    }
    won = tj_memo_put(memo, hash, k);
    if (won != k)
        kernel_free(k);
    if (won == NULL)
        return TJ_ERR_NOMEM;
    k = won;
out_found:
    if (k->failed != TJ_OK)
        return k->failed;
    *kernel = k;
    return TJ_OK;
}

/* The memory table's key of a fused kernel: a marker, the target, direction and word, then each
 * block's packed record (as memo_key's), hashed without formatting any text. */
static tj_hash_t fused_memo_key(const tj_block_t *blocks, int n, int word, tj_dir_t dir,
                                const char *target)
{
    typedef struct {
        int32_t ndims, pad;
        int64_t start, extent, counts[TJ_BLOCK_MAX_DIMS], strides[TJ_BLOCK_MAX_DIMS];
    } rec_t;
    struct {
        char marker[8];
        char target[32];
        int32_t dir, word, n, pad;
        rec_t blocks[TJ_FUSED_MAX];
    } rec;

    memset(&rec, 0, sizeof(rec));
    memcpy(rec.marker, "fused", 6);
    snprintf(rec.target, sizeof(rec.target), "%s", target);
    rec.dir = (int32_t)dir;
    rec.word = word;
    rec.n = n;
    for (int i = 0; i < n; i++) {
        rec.blocks[i].ndims = blocks[i].ndims;
        rec.blocks[i].start = blocks[i].start;
        rec.blocks[i].extent = blocks[i].extent;
        for (int d = 0; d < blocks[i].ndims; d++) {
            rec.blocks[i].counts[d] = blocks[i].counts[d];
            rec.blocks[i].strides[d] = blocks[i].strides[d];
        }
    }
    return tj_hash_bytes(&rec, (size_t)((char *)&rec.blocks[n] - (char *)&rec));
}

/* The full key text of a fused kernel (malloc'd): the single kernels' header with a "fused"
 * marker, then every block's text in order. NULL when out of memory or without NVRTC. */
static char *fused_key(const tj_block_t *blocks, int n, int word, tj_dir_t dir, const char *target)
{
    char text[1024], *key;
    size_t cap = 512 + (size_t)n * (sizeof(text) + 16), len;
    int major, minor, w;

    if (tj_nvrtc_version(&major, &minor) != TJ_OK || (key = malloc(cap)) == NULL)
        return NULL;
    w = snprintf(key, cap,
                 "typejit fused kernel\nlibrary=%s\ntemplates=%016llx\nnvrtc=%d.%d build=%s\n"
                 "target=%s\noptions=%s\ndirection=%s\nword=%d\nblocks=%d\n",
                 tj_version(), (unsigned long long)tj_gen_template_hash(), major, minor,
                 tj_nvrtc_build_id(), target, tj_nvrtc_options(), dir_name(dir), word, n);
    if (w < 0 || (size_t)w >= cap) {
        free(key);
        return NULL;
    }
    len = (size_t)w;
    for (int i = 0; i < n; i++) {
        tj_block_format(&blocks[i], text, sizeof(text));
        w = snprintf(key + len, cap - len, "block%d=%s\n", i, text);
        if (w < 0 || (size_t)w >= cap - len) {
            free(key);
            return NULL;
        }
        len += (size_t)w;
    }
    return key;
}

static tj_status_t compile_fused(const tj_block_t *blocks, int n, int word, tj_dir_t dir,
                                 const char *target, const char *key, const char *toolchain,
                                 tj_kernel_t *k)
{
    char *source = NULL;
    tj_status_t st;

    if ((st = tj_gen_fused_source(blocks, n, word, dir, function_name(k), &source)) != TJ_OK)
        return st;
    st = tj_nvrtc_compile(source, function_name(k), target, &k->image, &k->len);
    if (st != TJ_OK) {
        tj_stats_inc(TJ_STAT_jit_failures);
        goto out_free;
    }
    tj_stats_inc(TJ_STAT_jit_compiles);
    tj_log_debug("fused kernel %s %s W=%d of %d blocks: compiled (%zu bytes)", function_name(k),
                 target, word, n, k->len);
    if (store_rw) {
        tj_store_save(store, toolchain, target, key, k->image, k->len,
                      tj_config()->save_source ? source : NULL);
        tj_store_trim_if_needed(store);
    }
out_free:
    free(source);
    return st;
}

tj_status_t tj_kernels_get_fused(const tj_block_t *blocks, int n, int word, tj_dir_t dir,
                                 const char *target, tj_kernel_t **kernel)
{
    char toolchain[64], *key = NULL;
    tj_store_lock_t *lock = NULL;
    tj_kernel_t *k, *won;
    tj_hash_t hash;
    tj_status_t st;

    if (blocks == NULL || n < 1 || n > TJ_FUSED_MAX)
        return TJ_ERR_INVALID;
    if ((st = tj_nvrtc_load()) != TJ_OK || (st = setup()) != TJ_OK)
        return st;
    hash = fused_memo_key(blocks, n, word, dir, target);
    if ((k = tj_memo_get(memo, hash)) != NULL) {
        if (k->failed == TJ_OK)
            tj_stats_inc(TJ_STAT_cache_hits_memory);
        goto out_found;
    }
    if ((key = fused_key(blocks, n, word, dir, target)) == NULL)
        return TJ_ERR_NOMEM;
    if ((k = calloc(1, sizeof(*k))) == NULL) {
        free(key);
        return TJ_ERR_NOMEM;
    }
    k->fused = true;
    k->word = word;
    k->dir = dir;
    snprintf(k->target, sizeof(k->target), "%s", target);
    pthread_mutex_init(&k->load_lock, NULL);
    toolchain_name(toolchain, sizeof(toolchain));
    if (caches != NULL &&
        tj_store_set_load(caches, toolchain, target, key, &k->image, &k->len) == TJ_OK) {
        tj_stats_inc(TJ_STAT_cache_hits_disk);
    } else {
        tj_stats_inc(TJ_STAT_cache_misses);
        if (locked_load(key, toolchain, target, k, &lock) != TJ_OK &&
            (st = compile_fused(blocks, n, word, dir, target, key, toolchain, k)) != TJ_OK) {
            tj_store_unlock(lock);
            if (st != TJ_ERR_JIT) {
                free(key);
                kernel_free(k);
                return st;
            }
            k->failed = st; /* remembered: the caller packs slice by slice from now on */
        } else {
            tj_store_unlock(lock);
        }
    }
    free(key);
    won = tj_memo_put(memo, hash, k);
    if (won == NULL) {
        kernel_free(k);
        return TJ_ERR_NOMEM;
    }
    if (won != k)
        kernel_free(k);
    k = won;
out_found:
    if (k->failed != TJ_OK)
        return k->failed;
    *kernel = k;
    return TJ_OK;
}

tj_status_t tj_kernels_get_source(const char *source, const char *name, const char *target,
                                  tj_kernel_t **kernel)
{
    char toolchain[64], *key;
    tj_store_lock_t *lock = NULL;
    tj_kernel_t *k, *won;
    tj_hash_t hash;
    tj_status_t st;
    int major, minor, n;
    size_t cap;

    if (source == NULL || name == NULL || strlen(name) >= sizeof(k->name))
        return TJ_ERR_INVALID;
    if ((st = tj_nvrtc_load()) != TJ_OK || (st = setup()) != TJ_OK ||
        (st = tj_nvrtc_version(&major, &minor)) != TJ_OK)
        return st;
    /* The key: everything that changes the binary, then the exact source. */
    cap = strlen(source) + 512;
    if ((key = malloc(cap)) == NULL)
        return TJ_ERR_NOMEM;
    n = snprintf(key, cap,
                 "typejit kernel from source\nnvrtc=%d.%d build=%s\ntarget=%s\n"
                 "options=%s\nfunction=%s\n\n%s",
                 major, minor, tj_nvrtc_build_id(), target, tj_nvrtc_options(), name, source);
    if (n < 0 || (size_t)n >= cap) {
        free(key);
        return TJ_ERR_INVALID;
    }
    hash = tj_hash_bytes(key, (size_t)n);
    if ((k = tj_memo_get(memo, hash)) != NULL) {
        free(key);
        if (k->failed == TJ_OK)
            tj_stats_inc(TJ_STAT_cache_hits_memory);
        goto out_found;
    }
    if ((k = calloc(1, sizeof(*k))) == NULL) {
        free(key);
        return TJ_ERR_NOMEM;
    }
    snprintf(k->name, sizeof(k->name), "%s", name);
    snprintf(k->target, sizeof(k->target), "%s", target);
    pthread_mutex_init(&k->load_lock, NULL);
    toolchain_name(toolchain, sizeof(toolchain));
    if (caches != NULL &&
        tj_store_set_load(caches, toolchain, target, key, &k->image, &k->len) == TJ_OK) {
        tj_stats_inc(TJ_STAT_cache_hits_disk);
    } else {
        tj_stats_inc(TJ_STAT_cache_misses);
        if (locked_load(key, toolchain, target, k, &lock) != TJ_OK) {
            st = tj_nvrtc_compile(source, name, target, &k->image, &k->len);
            tj_stats_inc(st == TJ_OK ? TJ_STAT_jit_compiles : TJ_STAT_jit_failures);
            if (st == TJ_OK && store_rw) {
                tj_store_save(store, toolchain, target, key, k->image, k->len,
                              tj_config()->save_source ? source : NULL);
                tj_store_trim_if_needed(store);
            }
            tj_store_unlock(lock);
            if (st != TJ_OK && st != TJ_ERR_JIT) {
                free(key);
                kernel_free(k);
                return st;
            }
            k->failed = st; /* remembered: the caller takes another way from now on */
        }
    }
    free(key);
    won = tj_memo_put(memo, hash, k);
    if (won == NULL) {
        kernel_free(k);
        return TJ_ERR_NOMEM;
    }
    if (won != k)
        kernel_free(k);
    k = won;
out_found:
    if (k->failed != TJ_OK)
        return k->failed;
    *kernel = k;
    return TJ_OK;
}

tj_status_t tj_kernels_function(tj_kernel_t *kernel, tj_gpu_function_t *fn)
{
    tj_gpu_ctx_t ctx = tj_gpu_current();
    unsigned gen = tj_gpu_generation();
    loaded_t *l = NULL;
    bool load = false;
    tj_status_t st = TJ_OK;

    if (ctx == NULL)
        return TJ_ERR_INVALID;
    /* An uncontended lock per launch keeps the lazy load simple and race-free. */
    pthread_mutex_lock(&kernel->load_lock);
    for (int i = 0; i < kernel->nloaded && l == NULL; i++)
        if (kernel->loaded[i].ctx == ctx)
            l = &kernel->loaded[i];
    if (l != NULL && l->gen != gen) {
        /* Loaded in an earlier instance of this context (reset since): the module went with
         * it, and so did a failure to load. */
        tj_gpu_module_unload(l->module); /* frees the record only: the instance differs */
        load = true;
    } else if (l == NULL && kernel->nloaded < TJ_KERNEL_MAX_LOADS) {
        l = &kernel->loaded[kernel->nloaded++];
        load = true;
    }
    if (load) {
        /* Loaded once per context; a failure is remembered there (logged once, where the
         * driver call failed) and the calls that need it are staged. */
        l->ctx = ctx;
        l->gen = gen;
        if (tj_gpu_module_load(kernel->image, kernel->len, function_name(kernel), &l->module,
                               &l->fn) != TJ_OK) {
            l->module = NULL;
            l->fn = NULL;
        }
    }
    if (l == NULL || l->fn == NULL)
        st = TJ_ERR_CUDA;
    else
        *fn = l->fn;
    pthread_mutex_unlock(&kernel->load_lock);
    return st;
}

const char *tj_kernels_target_of(const tj_kernel_t *kernel)
{
    return kernel->target;
}

const tj_block_t *tj_kernels_block(const tj_kernel_t *kernel)
{
    return &kernel->block;
}

int tj_kernels_word(const tj_kernel_t *kernel)
{
    return kernel->word;
}

void tj_kernels_finalize(void)
{
    pthread_mutex_lock(&setup_lock);
    atomic_store_explicit(&memo_ready, false, memory_order_release);
    if (memo != NULL)
        tj_memo_destroy(memo, kernel_free);
    memo = NULL;
    tj_store_set_close(caches);
    caches = NULL;
    if (store != NULL)
        tj_store_close(store);
    store = NULL;
    store_tried = false;
    pthread_mutex_unlock(&setup_lock);
    pthread_mutex_lock(&target_lock);
    memset(device_targets, 0, sizeof(device_targets));
    pthread_mutex_unlock(&target_lock);
}
