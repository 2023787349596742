/* SPDX-License-Identifier: BSD-3-Clause */
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

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/batch.h"
#include "gpu/cuda.h"
#include "kernels/launch.h"
#include "send/count.h"
#include "send/span.h"
#include "send/staging.h"
#include "type/cpu.h"
#include "type/layout_builder.h"
#include "type/lazy.h"
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

/* Launch the call's kernel between two device addresses, in the current scope, through the
 * launch room (kernels/launch.h): the kernel of the type's block or layout as the settings say
 * (the generic kernel while it compiles in the background, or with TYPEJIT_JIT=off). Waited for
 * through the call's batch when @p wait, else left to the caller's next step on the stream. */
static tj_status_t launch(const call_t *c, int device, tj_devptr_t typed, tj_devptr_t packed,
                          bool wait)
{
    tj_launch_desc_t d = {.block = c->lay == NULL ? &c->info->block : NULL,
                          .layout = c->lay,
                          .count = c->count,
                          .dir = c->pack ? TJ_DIR_PACK : TJ_DIR_UNPACK,
                          .serial = c->serial,
                          .typed = typed,
                          .packed = packed,
                          .device = device,
                          .policy = TJ_LAUNCH_AS_SET,
                          .wait = wait,
                          .batch = c->batch};
    return tj_launch_run(&d);
}

/* Typed side on the device (or managed); packed side on the same context's device, in pinned
 * mapped host memory, or pageable (through a staging buffer the kernel reaches: device memory,
 * else page-locked mapped memory). In the typed context. The kernel's wait is the call's batch's
 * when it has one, except through staging, which goes back to the pool before the call returns:
 * then the call waits, once. */
static tj_status_t from_device(const call_t *c)
{
    tj_devptr_t typed = (tj_devptr_t)(uintptr_t)c->typed;
    char *at = c->packed + *c->position;
    tj_devptr_t pdev = (tj_devptr_t)(uintptr_t)at; /* the packed side as the kernel sees it */
    tj_stage_t *stage;
    tj_status_t st;

    if (is_gpu(c->pp.kind) ||
        (c->pp.kind == TJ_MEM_PINNED && tj_gpu_host_devptr(at, &pdev) == TJ_OK))
        return launch(c, c->tp.device, typed, pdev, true);
    if ((st = tj_staging_get_reachable((size_t)c->bytes, &stage)) != TJ_OK)
        return st;
    if (stage->kind == TJ_STAGE_PINNED) {
        if (!c->pack)
            memcpy(stage->host, at, (size_t)c->bytes);
        if ((st = launch(c, c->tp.device, typed, stage->dev, false)) == TJ_OK &&
            (st = tj_gpu_sync()) == TJ_OK && c->pack)
            memcpy(at, stage->host, (size_t)c->bytes);
    } else if (c->pack) {
        if ((st = launch(c, c->tp.device, typed, stage->dev, false)) == TJ_OK)
            st = tj_gpu_copy_dtoh(at, stage->dev, (size_t)c->bytes);
    } else if ((st = tj_gpu_copy_htod_async(stage->dev, at, (size_t)c->bytes)) == TJ_OK &&
               (st = launch(c, c->tp.device, typed, stage->dev, false)) == TJ_OK) {
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
        if ((st = tj_launch_possible()) != TJ_OK) {
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
            if ((st = tj_layout_builder_from_block(&c->info->block, c->info->size, &own)) != TJ_OK)
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
