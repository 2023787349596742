/* Device pack paths. The kernel path takes only calls it can complete exactly (a strided type,
 * valid arguments, enough room); calls the system MPI would reject go to it unchanged, and it
 * rejects them before touching any buffer. Everything else is staged: the device bytes are
 * copied to host memory, the system MPI (or the CPU engine) works there, and the result is copied
 * back. Staging is slow but exact, so a type typejit cannot compile still works on device
 * buffers with an MPI that is not CUDA-aware. */
#include "send/devpack.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda.h"
#include "send/kernels.h"
#include "type/cpu.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* Staging memory, grown on demand and kept: one device buffer and one pinned host buffer per
 * process, used under `stage_lock`. */
static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;
static tj_devptr_t stage_dev;
static size_t stage_dev_len;
static int stage_dev_device = -1;
static void *stage_host;
static size_t stage_host_len;

static bool is_gpu(tj_mem_t m)
{
    return m == TJ_MEM_DEVICE || m == TJ_MEM_MANAGED;
}

bool tj_devpack_involved(const void *a, const void *b)
{
    if (!tj_gpu_available())
        return false;
    return is_gpu(tj_gpu_classify(a, NULL)) || is_gpu(tj_gpu_classify(b, NULL));
}

void tj_devpack_prepare(tj_type_info_t *info)
{
    const tj_config_t *cfg = tj_config();
    char target[32];
    tj_kernel_t *pack, *unpack;
    int device = -1;

    if (!info->strided || cfg->jit == TJ_JIT_OFF)
        return;
    if (tj_gpu_available())
        device = 0;
    else if (cfg->jit != TJ_JIT_ALWAYS)
        return;
    if (tj_kernels_target(device, target, sizeof(target)) != TJ_OK)
        return;
    if (tj_kernels_get(&info->block, info->block.word, TJ_DIR_PACK, target, &pack, NULL) != TJ_OK ||
        tj_kernels_get(&info->block, info->block.word, TJ_DIR_UNPACK, target, &unpack, NULL) !=
            TJ_OK)
        return; /* logged where it failed; device packs of this type are staged */
    info->pack = pack;
    info->unpack = unpack;
}

static tj_status_t grow_dev(size_t len, int device)
{
    if (stage_dev_len >= len && stage_dev_device == device)
        return TJ_OK;
    tj_gpu_free(stage_dev);
    stage_dev = 0;
    stage_dev_len = 0;
    if (tj_gpu_alloc(len, &stage_dev) != TJ_OK)
        return TJ_ERR_CUDA;
    stage_dev_len = len;
    stage_dev_device = device;
    return TJ_OK;
}

static tj_status_t grow_host(size_t len)
{
    if (stage_host_len >= len)
        return TJ_OK;
    tj_gpu_free_host(stage_host);
    stage_host = NULL;
    stage_host_len = 0;
    if (tj_gpu_alloc_host(len, &stage_host) != TJ_OK)
        return TJ_ERR_CUDA;
    stage_host_len = len;
    return TJ_OK;
}

/* Largest word the kernel may use with these two addresses. */
static int word_for(int word, uintptr_t a, uintptr_t b)
{
    while (word > 1 && ((a | b) & (uintptr_t)(word - 1)) != 0)
        word /= 2;
    return word;
}

static tj_status_t launch(const tj_type_info_t *info, tj_dir_t dir, int device, tj_devptr_t typed,
                          tj_devptr_t packed, int64_t count)
{
    const tj_kernel_t *base = dir == TJ_DIR_PACK ? info->pack : info->unpack;
    tj_kernel_t *k = (tj_kernel_t *)base;
    tj_gpu_function_t fn;
    tj_launch_t geo;
    char target[32];
    int word = word_for(info->block.word, (uintptr_t)typed, (uintptr_t)packed);
    tj_devptr_t dst = dir == TJ_DIR_PACK ? packed : typed;
    tj_devptr_t src = dir == TJ_DIR_PACK ? typed : packed;
    long long n = count;
    void *args[3] = {&dst, &src, &n};
    tj_status_t st;

    if (tj_config()->jit == TJ_JIT_OFF) {
        /* The generic kernel: the layout travels as run-time arguments. */
        tj_generic_params_t params;
        void *gargs[4] = {&dst, &src, &n, &params};
        if ((st = tj_kernels_target(device, target, sizeof(target))) != TJ_OK ||
            (st = tj_kernels_generic(dir, target, &k)) != TJ_OK ||
            (st = tj_kernels_function(k, device, &fn)) != TJ_OK)
            return st;
        tj_gen_generic_params(&info->block, word, &params);
        tj_gen_generic_launch(&info->block, word, count, &geo);
        if ((st = tj_gpu_launch(fn, geo.grid, geo.block, gargs)) != TJ_OK)
            return st;
        return tj_gpu_sync();
    }
    /* A misaligned buffer needs a narrower kernel of the same block, built on demand. */
    if (k == NULL || tj_kernels_word(k) != word) {
        if ((st = tj_kernels_target(device, target, sizeof(target))) != TJ_OK ||
            (st = tj_kernels_get(&info->block, word, dir, target, &k, NULL)) != TJ_OK)
            return st;
    }
    if ((st = tj_kernels_function(k, device, &fn)) != TJ_OK)
        return st;
    tj_gen_launch(&info->block, word, count, &geo);
    if ((st = tj_gpu_launch(fn, geo.grid, geo.block, args)) != TJ_OK)
        return st;
    return tj_gpu_sync();
}

/* Host footprint [lo, hi) of `count` objects of `type`, from the system MPI's true extent. */
static bool footprint(MPI_Datatype type, int count, int64_t *lo, int64_t *hi)
{
    MPI_Aint tlb, text, lb, ext;
    int64_t reach;
    if (PMPI_Type_get_true_extent(type, &tlb, &text) != MPI_SUCCESS ||
        PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS || !tj_mul64(count - 1, ext, &reach))
        return false;
    *lo = tlb + (reach < 0 ? reach : 0);
    *hi = tlb + text + (reach > 0 ? reach : 0);
    return *hi >= *lo;
}

/* Copy between user memory of any kind and host memory. */
static tj_status_t fetch(void *host, const void *user, size_t len)
{
    if (is_gpu(tj_gpu_classify(user, NULL)))
        return tj_gpu_copy_dtoh(host, (tj_devptr_t)(uintptr_t)user, len);
    memcpy(host, user, len);
    return TJ_OK;
}

static tj_status_t store_back(void *user, const void *host, size_t len)
{
    if (is_gpu(tj_gpu_classify(user, NULL)))
        return tj_gpu_copy_htod((tj_devptr_t)(uintptr_t)user, host, len);
    memcpy(user, host, len);
    return TJ_OK;
}

static int device_of(const void *a, const void *b)
{
    int d = -1;
    if (is_gpu(tj_gpu_classify(a, &d)) && d >= 0)
        return d;
    if (is_gpu(tj_gpu_classify(b, &d)) && d >= 0)
        return d;
    return 0;
}

/* The staged path: mirror the typed footprint and the packed range on the host, let the system
 * MPI work on the mirrors, copy what it wrote back. */
static int staged(bool pack, MPI_Datatype type, const void *typed, int count, void *packed,
                  int bufsize, int *position, MPI_Comm comm)
{
    int64_t lo, hi, span;
    char *t = NULL, *p = NULL;
    int rc = MPI_ERR_NO_MEM, before = *position;

    if (!footprint(type, count, &lo, &hi))
        return MPI_ERR_TYPE;
    span = hi - lo;
    t = malloc((size_t)(span > 0 ? span : 1));
    p = malloc((size_t)(bufsize > 0 ? bufsize : 1));
    if (t == NULL || p == NULL) {
        tj_log_error("out of memory staging %lld bytes of a device buffer", (long long)span);
        goto out_free;
    }
    /* Packing writes only [position, new position): the packed input is needed for unpacking
     * alone. The typed footprint is fetched both ways, so that an unpack leaves the bytes
     * between typemap entries as they were. */
    if (fetch(t, (const char *)typed + lo, (size_t)span) != TJ_OK ||
        (!pack && fetch(p, packed, (size_t)bufsize) != TJ_OK)) {
        rc = MPI_ERR_INTERN;
        goto out_free;
    }
    if (pack) {
        rc = PMPI_Pack(t - lo, count, type, p, bufsize, position, comm);
        if (rc == MPI_SUCCESS &&
            store_back((char *)packed + before, p + before, (size_t)(*position - before)) != TJ_OK)
            rc = MPI_ERR_INTERN;
    } else {
        rc = PMPI_Unpack(p, bufsize, position, t - lo, count, type, comm);
        if (rc == MPI_SUCCESS && store_back((char *)typed + lo, t, (size_t)span) != TJ_OK)
            rc = MPI_ERR_INTERN;
    }
out_free:
    free(t);
    free(p);
    return rc;
}

/* Calls the system MPI handles without touching buffers: invalid arguments, not enough room,
 * nothing to do. */
static bool normal_call(int count, const int *position, int bufsize, const void *packed,
                        MPI_Comm comm, MPI_Datatype type, int64_t *bytes)
{
    int size;
    int64_t n, end;
    if (count <= 0 || position == NULL || packed == NULL || comm == MPI_COMM_NULL ||
        *position < 0 || bufsize < 0 || type == MPI_DATATYPE_NULL ||
        PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return false;
    if (!tj_mul64(count, size, &n) || !tj_add64(*position, n, &end) || end > bufsize)
        return false;
    *bytes = n;
    return true;
}

/* The kernel path for one call. Typed side on the device (or managed); packed side on the
 * device, in pinned mapped host memory, or pageable (through the staging buffer). */
static tj_status_t kernel_path(const tj_type_info_t *info, bool pack, const void *typed, int count,
                               void *packed_at, int64_t bytes)
{
    int device = device_of(typed, packed_at);
    tj_mem_t tk = tj_gpu_classify(typed, NULL), pk = tj_gpu_classify(packed_at, NULL);
    tj_dir_t dir = pack ? TJ_DIR_PACK : TJ_DIR_UNPACK;
    tj_devptr_t pdev;
    tj_status_t st;

    if ((st = tj_gpu_use(device)) != TJ_OK)
        return st;
    if (!is_gpu(tk)) {
        /* Host typed side: the CPU engine does the layout, one copy moves the bytes. */
        if ((st = grow_host((size_t)bytes)) != TJ_OK)
            return st;
        if (pack) {
            tj_cpu_pack(&info->block, typed, count, stage_host);
            return tj_gpu_copy_htod((tj_devptr_t)(uintptr_t)packed_at, stage_host, (size_t)bytes);
        }
        if ((st = tj_gpu_copy_dtoh(stage_host, (tj_devptr_t)(uintptr_t)packed_at, (size_t)bytes)) !=
            TJ_OK)
            return st;
        tj_cpu_unpack(&info->block, stage_host, count, (void *)typed);
        return TJ_OK;
    }
    if (is_gpu(pk))
        return launch(info, dir, device, (tj_devptr_t)(uintptr_t)typed,
                      (tj_devptr_t)(uintptr_t)packed_at, count);
    if (pk == TJ_MEM_PINNED && tj_gpu_host_devptr(packed_at, &pdev) == TJ_OK)
        return launch(info, dir, device, (tj_devptr_t)(uintptr_t)typed, pdev, count);
    /* Pageable host memory: the kernel works in device staging memory. */
    if ((st = grow_dev((size_t)bytes, device)) != TJ_OK)
        return st;
    if (pack) {
        if ((st = launch(info, dir, device, (tj_devptr_t)(uintptr_t)typed, stage_dev, count)) !=
            TJ_OK)
            return st;
        return tj_gpu_copy_dtoh(packed_at, stage_dev, (size_t)bytes);
    }
    if ((st = tj_gpu_copy_htod(stage_dev, packed_at, (size_t)bytes)) != TJ_OK)
        return st;
    return launch(info, dir, device, (tj_devptr_t)(uintptr_t)typed, stage_dev, count);
}

static int run(const tj_type_info_t *info, bool pack, MPI_Datatype type, const void *typed,
               int count, void *packed, int bufsize, int *position, MPI_Comm comm)
{
    int64_t bytes;
    int rc;

    if (!normal_call(count, position, bufsize, packed, comm, type, &bytes))
        return pack ? PMPI_Pack(typed, count, type, packed, bufsize, position, comm)
                    : PMPI_Unpack(packed, bufsize, position, (void *)typed, count, type, comm);
    pthread_mutex_lock(&stage_lock);
    /* Parallel unpacking into a layout that overlaps itself would race: staged instead. */
    if (info != NULL && info->strided && (pack || tj_block_disjoint(&info->block, count)) &&
        kernel_path(info, pack, typed, count, (char *)packed + *position, bytes) == TJ_OK) {
        *position += (int)bytes;
        tj_stats_inc(pack ? TJ_STAT_packs_gpu : TJ_STAT_unpacks_gpu);
        rc = MPI_SUCCESS;
    } else {
        if (info != NULL && info->strided)
            tj_log_warn_once("a device %s could not use a kernel; staging through host memory",
                             pack ? "pack" : "unpack");
        tj_stats_inc(TJ_STAT_gpu_fallbacks);
        rc = staged(pack, type, typed, count, packed, bufsize, position, comm);
    }
    pthread_mutex_unlock(&stage_lock);
    return rc;
}

int tj_devpack_pack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf, int incount,
                    void *outbuf, int outsize, int *position, MPI_Comm comm)
{
    return run(info, true, type, inbuf, incount, outbuf, outsize, position, comm);
}

int tj_devpack_unpack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf, int insize,
                      int *position, void *outbuf, int outcount, MPI_Comm comm)
{
    return run(info, false, type, outbuf, outcount, (void *)inbuf, insize, position, comm);
}

void tj_devpack_finalize(void)
{
    pthread_mutex_lock(&stage_lock);
    tj_gpu_free(stage_dev);
    stage_dev = 0;
    stage_dev_len = 0;
    tj_gpu_free_host(stage_host);
    stage_host = NULL;
    stage_host_len = 0;
    pthread_mutex_unlock(&stage_lock);
    tj_kernels_finalize();
    tj_gpu_finalize();
}
