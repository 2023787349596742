/* SPDX-License-Identifier: BSD-3-Clause */
/* The one move of a device call (see move.h). Every driver call runs in the context that owns
 * the device side (a tj_gpu_enter_at scope), so the caller's current context is untouched, and
 * several threads may move at once: nothing here holds a process-wide lock. */
#include "move/move.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/launch.h"
#include "move/count.h"
#include "move/staging.h"
#include "type/cpu.h"
#include "type/layout_builder.h"
#include "type/translate.h"
#include "util/common.h"
#include "util/log.h"
#include "util/stats.h"

/* The staged path works on at most this many bytes of typed footprint at a time (more only when
 * a single object is larger), so a sparse type never needs a host copy of gigabytes. */
#define TJ_STAGE_CHUNK ((int64_t)64 << 20)

/* What a kernel moves: the type's layout (or a layout of its block made for one call), or its
 * block; and whether an unpack runs as one thread, in typemap order (overlapping bytes). */
typedef struct {
    const tj_move_t *m;
    tj_layout_t *lay;
    bool serial;
    tj_batch_t *batch;
} kernel_call_t;

/* Launch the call's kernel between two device addresses, in the current scope, through the
 * kernel layer (kernels/launch.h): the kernel of the type's block or layout as the settings say
 * (the generic kernel while it compiles in the background, or with TYPEJIT_JIT=off). Waited for
 * through the call's batch when @p wait, else left to the caller's next step on the stream. */
static tj_status_t launch(const kernel_call_t *k, tj_devptr_t typed, tj_devptr_t packed, bool wait)
{
    const tj_move_t *m = k->m;
    tj_launch_desc_t d = {.block = k->lay == NULL ? &m->info->block : NULL,
                          .layout = k->lay,
                          .plan =
                              k->lay == m->info->layout ? (tj_type_plan_t *)&m->info->plan : NULL,
                          .count = m->count,
                          .dir = m->pack ? TJ_DIR_PACK : TJ_DIR_UNPACK,
                          .serial = k->serial,
                          .typed = typed,
                          .packed = packed,
                          .device = m->tp.device,
                          .policy = TJ_LAUNCH_AS_SET,
                          .wait = wait,
                          .batch = k->batch};
    return tj_launch_run(&d);
}

/* Typed side on the device (or managed); packed side on the same context's device, in mapped
 * page-locked host memory, or pageable (through a staging buffer the kernel reaches: device
 * memory, else page-locked mapped memory). In the typed context. The kernel's wait is the
 * call's batch's when it has one, except through staging, which goes back to the pool before
 * the call returns: then the call waits, once. */
static tj_status_t from_device(const kernel_call_t *k)
{
    const tj_move_t *m = k->m;
    tj_devptr_t typed = (tj_devptr_t)(uintptr_t)m->typed;
    tj_devptr_t pdev = (tj_devptr_t)(uintptr_t)m->packed; /* the packed side as kernels see it */
    tj_stage_t *stage;
    tj_status_t st;

    if (tj_gpu_device_like(m->pp.kind))
        return launch(k, typed, pdev, true);
    if (m->pp.kind == TJ_MEM_PINNED) {
        if (m->pp.dev_base != 0)
            return launch(k, typed, m->pp.dev_base + ((uintptr_t)m->packed - m->pp.base), true);
        if (tj_gpu_host_devptr(m->packed, &pdev) == TJ_OK)
            return launch(k, typed, pdev, true);
    }
    if ((st = tj_staging_get_reachable((size_t)m->bytes, &stage)) != TJ_OK)
        return st;
    if (stage->kind == TJ_STAGE_PINNED) {
        if (!m->pack)
            memcpy(stage->host, m->packed, (size_t)m->bytes);
        if ((st = launch(k, typed, stage->dev, false)) == TJ_OK && (st = tj_gpu_sync()) == TJ_OK &&
            m->pack)
            memcpy(m->packed, stage->host, (size_t)m->bytes);
    } else if (m->pack) {
        if ((st = launch(k, typed, stage->dev, false)) == TJ_OK)
            st = tj_gpu_copy_dtoh(m->packed, stage->dev, (size_t)m->bytes);
    } else if ((st = tj_gpu_copy_htod_async(stage->dev, m->packed, (size_t)m->bytes)) == TJ_OK &&
               (st = launch(k, typed, stage->dev, false)) == TJ_OK) {
        st = tj_gpu_sync();
    }
    tj_staging_put(stage);
    return st;
}

/* Typed side in host memory, packed side on the device: the CPU engine does the layout in a
 * pinned staging buffer and one copy moves the bytes. In the packed side's context. */
static tj_status_t from_host(const tj_move_t *m)
{
    tj_devptr_t at = (tj_devptr_t)(uintptr_t)m->packed;
    tj_stage_t *stage;
    tj_status_t st;

    if ((st = tj_staging_get(TJ_STAGE_PINNED, (size_t)m->bytes, &stage)) != TJ_OK)
        return st;
    if (m->pack) {
        if (m->info->layout != NULL)
            tj_cpu_pack_layout(m->info->layout, m->typed, m->count, stage->host);
        else
            tj_cpu_pack(&m->info->block, m->typed, m->count, stage->host);
        st = tj_gpu_copy_htod(at, stage->host, (size_t)m->bytes);
    } else if ((st = tj_gpu_copy_dtoh(stage->host, at, (size_t)m->bytes)) == TJ_OK) {
        /* In typemap order: where the layout overlaps itself the last write wins. */
        if (m->info->layout != NULL)
            tj_cpu_unpack_layout(m->info->layout, stage->host, m->count, (void *)m->typed);
        else
            tj_cpu_unpack(&m->info->block, stage->host, m->count, (void *)m->typed);
    }
    tj_staging_put(stage);
    return st;
}

bool tj_move_span(const tj_type_info_t *info, int64_t off, int64_t count, int64_t *lo, int64_t *hi)
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

bool tj_move_inside(const tj_type_info_t *info, const void *buf, int64_t off, int64_t count,
                    const tj_gpu_ptr_t *where)
{
    int64_t lo, hi;
    uintptr_t a, b;

    return tj_move_span(info, off, count, &lo, &hi) && moved((uintptr_t)buf, lo, &a) &&
           moved((uintptr_t)buf, hi, &b) && tj_gpu_inside(where, a, b);
}

/* [lo, hi) of the typed bytes `n` objects from object `first` on touch, relative to the typed
 * buffer argument; the call's whole footprint was checked (tj_move_inside), so nothing
 * overflows. */
static void typed_span(const tj_type_info_t *info, int64_t first, int64_t n, int64_t *lo,
                       int64_t *hi)
{
    if (!tj_move_span(info, first * info->extent, n, lo, hi))
        *lo = *hi = 0;
}

/* The kernel path: TJ_ERR_UNSUPPORTED when the call must be staged instead, with why in words
 * in @p why (for the debug log). */
static tj_status_t kernel_path(const tj_move_t *m, const char **why)
{
    kernel_call_t k = {.m = m, .batch = m->batch};
    tj_gpu_scope_t scope;
    tj_layout_t *own = NULL;
    tj_status_t st;

    if (!tj_type_info_kernel(m->info))
        return TJ_ERR_UNSUPPORTED; /* log_staged says why */
    if (tj_gpu_device_like(m->tp.kind) && tj_gpu_device_like(m->pp.kind) &&
        m->tp.ctx != m->pp.ctx) {
        *why = "its two buffers are in different contexts";
        return TJ_ERR_UNSUPPORTED; /* two devices (or contexts): one kernel cannot see both */
    }
    if (!tj_gpu_device_like(m->tp.kind)) {
        if ((st = tj_gpu_enter_at(&m->pp, &scope)) != TJ_OK)
            return st;
        st = from_host(m);
        tj_gpu_leave(&scope);
        return st;
    }
    if ((st = tj_launch_possible()) != TJ_OK) {
        *why = "the CUDA driver cannot load what this NVRTC compiles";
        return TJ_ERR_UNSUPPORTED;
    }
    k.lay = m->info->layout;
    /* A parallel unpack into bytes addressed twice would race: a layout whose objects overlap
     * is unpacked by one thread, in typemap order, the last write winning as in MPI_Unpack; a
     * strided type's block becomes such a layout of one part. */
    if (!m->pack && k.lay != NULL)
        k.serial = !tj_layout_disjoint(k.lay, m->count);
    else if (!m->pack && !(m->count == 1 ? m->info->block.disjoint
                                         : tj_block_disjoint(&m->info->block, m->count))) {
        if ((st = tj_layout_builder_from_block(&m->info->block, m->info->size, &own)) != TJ_OK)
            return st;
        k.lay = own;
        k.serial = true;
        /* A layout made for this call alone is released when it returns: its kernel is waited
         * for here. */
        k.batch = NULL;
    }
    if ((st = tj_gpu_enter_at(&m->tp, &scope)) != TJ_OK) {
        tj_layout_release(own);
        return st;
    }
    st = from_device(&k);
    tj_gpu_leave(&scope);
    if (own != NULL)
        tj_layout_release(own);
    return st;
}

/* Copy between device (or managed) user memory and host memory, in the user memory's
 * context. */
static tj_status_t copy_user(const tj_gpu_ptr_t *p, bool to_user, char *user, char *host,
                             size_t len)
{
    tj_gpu_scope_t scope;
    tj_status_t st;

    if ((st = tj_gpu_enter_at(p, &scope)) != TJ_OK)
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
static tj_status_t staged(const tj_move_t *m, int *mpi_rc)
{
    const tj_type_info_t *info = m->info;
    bool typed_dev = tj_gpu_device_like(m->tp.kind), packed_dev = tj_gpu_device_like(m->pp.kind);
    int64_t step = tj_abs64(info->extent), per = m->count, lo, hi, done = 0;
    char *t = NULL, *p = NULL;
    tj_status_t st = TJ_OK;

    *mpi_rc = MPI_SUCCESS;
    if (typed_dev && step > 0 && info->true_extent + (per - 1) * step > TJ_STAGE_CHUNK)
        per = info->true_extent >= TJ_STAGE_CHUNK ? 1
                                                  : 1 + (TJ_STAGE_CHUNK - info->true_extent) / step;
    /* (per - 1) * step cannot overflow: the whole footprint was checked (tj_move_inside). */
    typed_span(info, 0, per, &lo, &hi);
    if ((typed_dev && (t = malloc((size_t)(hi - lo))) == NULL) ||
        (packed_dev && (p = malloc((size_t)(per * info->size))) == NULL)) {
        tj_log_error("out of memory staging %lld bytes of a device buffer",
                     (long long)(hi - lo + per * info->size));
        st = TJ_ERR_NOMEM;
        goto out_free;
    }
    while (done < m->count && st == TJ_OK && *mpi_rc == MPI_SUCCESS) {
        int64_t n = TJ_MIN(per, m->count - done), pos = 0;
        char *at = m->packed + done * info->size;
        char *packed = packed_dev ? p : at;
        size_t len = (size_t)(n * info->size);
        char *typed = (char *)m->typed + done * info->extent; /* object `done` */

        typed_span(info, done, n, &lo, &hi);
        if (typed_dev) {
            if ((st = copy_user(&m->tp, false, (char *)m->typed + lo, t, (size_t)(hi - lo))) !=
                TJ_OK)
                break;
            /* In integers: with MPI_BOTTOM, lo is an absolute address, and t - lo would leave
             * the address space as a pointer expression. */
            typed = (char *)((uintptr_t)t - (uintptr_t)lo + (uintptr_t)(done * info->extent));
        }
        if (m->pack) {
            *mpi_rc = tj_count_pack(typed, n, m->type, packed, (int64_t)len, &pos, m->comm);
            if (*mpi_rc == MPI_SUCCESS && packed_dev)
                st = copy_user(&m->pp, true, at, p, len);
        } else {
            if (packed_dev && (st = copy_user(&m->pp, false, at, p, len)) != TJ_OK)
                break;
            *mpi_rc = tj_count_unpack(packed, (int64_t)len, &pos, typed, n, m->type, m->comm);
            if (*mpi_rc == MPI_SUCCESS && typed_dev)
                st = copy_user(&m->tp, true, (char *)m->typed + lo, t, (size_t)(hi - lo));
        }
        done += n;
    }
out_free:
    free(t);
    free(p);
    return st;
}

/* At debug level, per call: which call was staged, and why. */
static void log_staged(const tj_move_t *m, tj_status_t st, const char *why)
{
    char label[MPI_MAX_OBJECT_NAME + 32], reason[160];
    const tj_type_info_t *info = m->info;

    tj_table_label(m->type, label, sizeof(label));
    if (st != TJ_ERR_UNSUPPORTED)
        snprintf(reason, sizeof(reason), "no kernel could run (%s)", tj_status_string(st));
    else if (atomic_load_explicit(&info->refs, memory_order_relaxed) == 0)
        snprintf(reason, sizeof(reason), "typejit has no record of the type");
    else if (!tj_type_info_kernel(info))
        snprintf(reason, sizeof(reason), "neither strided nor a layout (%s)",
                 info->why == TJ_ERR_NOT_STRIDED ? tj_reason_string((tj_reason_t)info->reason)
                                                 : tj_status_string(info->why));
    else
        snprintf(reason, sizeof(reason), "%s", why != NULL ? why : "no kernel");
    tj_log_debug("device %s of %lld objects of %s: staged through host memory: %s",
                 m->pack ? "pack" : "unpack", (long long)m->count, label, reason);
}

int tj_move(const tj_move_t *m)
{
    const char *why = NULL;
    tj_status_t st = kernel_path(m, &why);
    int rc = MPI_SUCCESS;

    if (st == TJ_OK) {
        tj_stats_inc(m->pack ? TJ_STAT_packs_gpu : TJ_STAT_unpacks_gpu);
        return MPI_SUCCESS;
    }
    if (st != TJ_ERR_CONTEXT) {
        if (st != TJ_ERR_UNSUPPORTED)
            tj_log_warn_once("a device %s could not use a kernel (%s); staging through host "
                             "memory",
                             m->pack ? "pack" : "unpack", tj_status_string(st));
        if (tj_log_level() >= TJ_LOG_DEBUG)
            log_staged(m, st, why);
        tj_stats_inc(TJ_STAT_gpu_fallbacks);
        st = staged(m, &rc);
    }
    return st != TJ_OK ? MPI_ERR_INTERN : rc; /* the driver call that failed said why */
}
