/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point transfers of device-resident datatypes. The packing itself is the device pack
 * path's (src/calls/device_pack.c: kernels, or staging for what has none), between the user's
 * buffer and staging memory of the buffer's own context; the method decides which staging: device:
 * device staging, sent as it is by a CUDA-aware MPI; oneshot: pinned mapped host staging, written
 * (or read) by the kernel itself; staged:  device staging, then one copy to or from pinned host
 * staging. A message shorter than the receive buffer is unpacked object by object as far as it
 * goes; its last, partial object is received by the system MPI itself, into a host copy of that
 * object over a private self communicator of that call's own, so that the bytes are exactly the
 * system MPI's. */
#include "calls/p2p.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "calls/state.h"
#include "gpu/batch.h"
#include "move/count.h"
#include "move/fused.h"
#include "move/move.h"
#include "move/wait_once.h"
#include "move/span.h"
#include "type/lazy.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* Private duplicates of MPI_COMM_SELF for the partial-object unpack, so that it can never match
 * a message of the application's; each serves one call at a time, so that threads finishing
 * partial objects at once cannot take each other's bytes. The pool grows to the most calls ever
 * in flight together and is freed at MPI_Finalize. */
typedef struct tj_self_comm {
    MPI_Comm comm;
    struct tj_self_comm *next;
} self_comm_t;

static void stat_method(tj_method_t m)
{
    tj_stats_inc(m == TJ_METHOD_DEVICE    ? TJ_STAT_method_device
                 : m == TJ_METHOD_ONESHOT ? TJ_STAT_method_oneshot
                                          : TJ_STAT_method_staged);
}

/* A contiguous layout: `count` objects are one run of bytes, which a CUDA-aware MPI moves as
 * fast as typejit could. */
static bool contiguous(const tj_type_info_t *info)
{
    return info->strided && info->block.ndims == 1 && info->block.extent == info->block.size;
}

/* The common part of both directions: is the call typejit's, and with what. @p info is the
 * record the caller borrowed (NULL for a type typejit has no record of). TJ_CALL_FAILED (and
 * nothing to end) when the driver cannot tell where the buffer lies. */
static tj_call_result_t begin(const tj_type_info_t *info, MPI_Datatype type, const void *buf,
                              int64_t count, int peer, MPI_Comm comm, bool recv, tj_xfer_t *x)
{
    const tj_type_info_t *rec;
    tj_type_info_t *own = NULL;
    tj_gpu_ptr_t where;
    int64_t bytes;

    if (peer == MPI_PROC_NULL || count <= 0 || type == MPI_DATATYPE_NULL || !tj_gpu_available())
        return TJ_CALL_PASS;
    if (info == NULL) {
        if ((own = calloc(1, sizeof(*own))) == NULL)
            return TJ_CALL_PASS; /* out of memory: the system MPI's call, as without typejit */
        tj_table_read_extents(type, own);
        info = own;
    }
    if (!info->extents || info->size == 0 || !tj_mul64(count, info->size, &bytes))
        goto out_pass;
    if (tj_gpu_query((const char *)buf + info->true_lb, &where) != TJ_OK) {
        free(own);
        return TJ_CALL_FAILED; /* the query said why */
    }
    if (!tj_gpu_device_like(where.kind))
        goto out_pass;
    rec = own != NULL ? own : tj_lazy_resolve(type, info);
    if (contiguous(rec) && !tj_model_stage_contiguous()) {
        if (own == NULL)
            tj_lazy_return(info, rec);
        goto out_pass;
    }
    /* Held until tj_p2p_end, past the borrow of the call. */
    x->own_info = own != NULL;
    x->info = own != NULL ? own : tj_type_hold(rec);
    if (own == NULL)
        tj_lazy_return(info, rec);
    x->recv = recv;
    x->persistent = false;
    x->type = type;
    x->user_type = type;
    x->own_type = false;
    x->buf = (void *)buf;
    x->count = count;
    x->comm = comm;
    x->peer = peer;
    x->event = NULL;
    x->bytes = bytes;
    x->ctx = where.ctx;
    x->at = where;
    x->dev = x->host = NULL;
    x->message = NULL;
    /* Whether the peer shares this node is not known: learning it takes a collective, which a
     * job whose ranks do not all run typejit could never complete. The model is asked for a peer
     * across the network. */
    x->method = tj_model_choose_for(x->own_info ? NULL : (tj_type_plan_t *)&x->info->plan,
                                    rec->strided ? &rec->block : NULL, count, bytes, recv);
    if (tj_log_level() >= TJ_LOG_DEBUG) {
        char label[MPI_MAX_OBJECT_NAME + 32];
        tj_table_label(type, label, sizeof(label));
        tj_log_debug("device %s of %lld objects of %s (%lld packed bytes) %s rank %d: method %s%s",
                     recv ? "receive" : "send", (long long)count, label, (long long)bytes,
                     recv ? "from" : "to", peer, tj_method_name(x->method),
                     tj_config()->method != TJ_FORCE_AUTO ? " (TYPEJIT_METHOD)" : "");
    }
    return TJ_CALL_TAKEN;
out_pass:
    free(own);
    return TJ_CALL_PASS;
}

/* Staging for the method, in the buffer's context; the method counted. Where device memory
 * could not be had the kernel packs into page-locked mapped host memory: device and staged
 * become oneshot. Host staging that is pageable memory (page-locked memory could not be had) is
 * out of the kernels' reach: oneshot becomes staged, its kernel moving the bytes through device
 * staging and a copy. Fails only where neither device nor page-locked memory can be had. */
static tj_status_t get_staging(tj_xfer_t *x)
{
    tj_gpu_scope_t scope;
    tj_status_t st;

    if ((st = tj_gpu_enter_at(&x->at, &scope)) != TJ_OK)
        return st;
    if (x->method != TJ_METHOD_ONESHOT &&
        (st = tj_staging_get_reachable((size_t)x->bytes, &x->dev)) == TJ_OK &&
        x->dev->kind == TJ_STAGE_PINNED) {
        tj_log_debug("device %s: no device memory for staging, method oneshot instead of %s",
                     x->recv ? "receive" : "send", tj_method_name(x->method));
        x->method = TJ_METHOD_ONESHOT;
        x->host = x->dev;
        x->dev = NULL;
    }
    if (st == TJ_OK && x->method != TJ_METHOD_DEVICE && x->host == NULL)
        st = tj_staging_get(TJ_STAGE_PINNED, (size_t)x->bytes, &x->host);
    if (st == TJ_OK && x->method == TJ_METHOD_ONESHOT && x->host->kind == TJ_STAGE_PAGEABLE) {
        tj_log_debug("device %s: no page-locked staging, method staged instead of oneshot",
                     x->recv ? "receive" : "send");
        x->method = TJ_METHOD_STAGED;
        st = tj_staging_get(TJ_STAGE_DEVICE, (size_t)x->bytes, &x->dev);
    }
    tj_gpu_leave(&scope);
    if (st != TJ_OK)
        return st;
    stat_method(x->method);
    x->message = x->method == TJ_METHOD_DEVICE ? (void *)(uintptr_t)x->dev->dev : x->host->host;
    return TJ_OK;
}

/* Copy between the device and the host staging (the staged method), in the buffer's context,
 * after the work queued there before; waited for now, or by @p b. */
static tj_status_t move(tj_xfer_t *x, bool to_host, size_t len, tj_batch_t *b)
{
    tj_gpu_scope_t scope;
    tj_status_t st;

    if ((st = tj_gpu_enter_at(&x->at, &scope)) != TJ_OK)
        return st;
    st = to_host ? tj_gpu_copy_dtoh_async(x->host->host, x->dev->dev, len)
                 : tj_gpu_copy_htod_async(x->dev->dev, x->host->host, len);
    if (st == TJ_OK)
        st = tj_batch_defer_wait(b);
    tj_gpu_leave(&scope);
    return st;
}

/* The staging a kernel packs into or unpacks from: device staging, or the mapped host one. */
static void *kernel_side(const tj_xfer_t *x)
{
    return x->dev != NULL ? (void *)(uintptr_t)x->dev->dev : x->host->host;
}

/* What a pointer query would say of kernel_side: typejit made it, in the buffer's context. */
static tj_gpu_ptr_t kernel_side_at(const tj_xfer_t *x)
{
    return tj_staging_where(x->dev != NULL ? x->dev : x->host, x->at.device);
}

/* The handle the transfer's type is moved with after the call that began it. */
static MPI_Datatype xfer_handle(const tj_xfer_t *x)
{
    return x->own_type ? x->type : tj_type_handle(x->own_info ? NULL : x->info, x->user_type);
}

/* The move between the transfer's buffer (where @p at says it lies) and @p n objects' packed
 * bytes in its staging, into @p b. */
static int xfer_move(const tj_xfer_t *x, const tj_gpu_ptr_t *at, int64_t n, tj_batch_t *b)
{
    tj_move_t m = {.pack = !x->recv,
                   .info = tj_xfer_info(x),
                   .type = xfer_handle(x),
                   .typed = x->buf,
                   .tp = *at,
                   .count = n,
                   .packed = kernel_side(x),
                   .pp = kernel_side_at(x),
                   .bytes = n * tj_xfer_info(x)->size,
                   .comm = x->comm,
                   .batch = b};
    return tj_move(&m);
}

/* Pack the send into its staging, into @p b (tj_wait_once_work_t). @p fresh: x->at still describes
 * the buffer (the pack right after begin); a persistent send's later Start queries again, since
 * the application may have replaced the allocation meanwhile. */
static int send_pack(tj_xfer_t *x, bool fresh, tj_batch_t *b)
{
    tj_gpu_ptr_t in = x->at;
    int rc;

    /* A buffer that stopped being device memory was freed meanwhile (an erroneous program):
     * nothing may read it, not even the host side of a staged pack. */
    if (!fresh) {
        if (tj_gpu_query((const char *)x->buf + tj_xfer_info(x)->true_lb, &in) != TJ_OK)
            return MPI_ERR_INTERN; /* the query said why */
        if (!tj_gpu_device_like(in.kind) || in.ctx != x->ctx ||
            !tj_move_inside(tj_xfer_info(x), x->buf, 0, x->count, &in))
            return MPI_ERR_BUFFER;
    }
    rc = xfer_move(x, &in, x->count, b);
    if (rc == MPI_SUCCESS && x->method == TJ_METHOD_STAGED &&
        move(x, true, (size_t)x->bytes, b) != TJ_OK)
        rc = MPI_ERR_INTERN;
    return rc;
}

static int first_pack(void *arg, tj_batch_t *b)
{
    return send_pack(arg, true, b);
}

static int repack(void *arg, tj_batch_t *b)
{
    return send_pack(arg, false, b);
}

int tj_p2p_send_repack(tj_xfer_t *x)
{
    return tj_wait_once_run(repack, x);
}

int tj_p2p_send_repack_queued(tj_xfer_t *x)
{
    return tj_wait_once_leave_running(repack, x, &x->event);
}

/* The device address of the staging a kernel writes a send into. */
static tj_devptr_t kernel_dev(const tj_xfer_t *x)
{
    return x->dev != NULL ? x->dev->dev : x->host->dev;
}

/* One fused launch packing the sends @p g (same buffer and context, strided types) into their
 * staging buffers (move/fused.c), into @p b: members' packed offsets are relative to the first
 * one's staging. False when anything does not fit; nothing was sent yet, so the caller packs
 * them one by one instead. */
static bool fused_repack(tj_xfer_t *const *g, int n, tj_batch_t *b)
{
    tj_fused_item_t items[TJ_FUSED_MAX];
    tj_devptr_t base = kernel_dev(g[0]);

    if (n > TJ_FUSED_MAX)
        return false;
    for (int m = 0; m < n; m++)
        items[m] = (tj_fused_item_t){tj_xfer_info(g[m]), 0, (int64_t)(kernel_dev(g[m]) - base),
                                     g[m]->count};
    return tj_fused_move(g[0]->buf, g[0]->ctx, NULL, base, items, n, TJ_DIR_PACK, b);
}

typedef struct {
    tj_xfer_t *const *xs;
    int n;
} send_set_t;

/* The packs of one Startall, into @p b (tj_wait_once_work_t). */
static int repack_set(void *arg, tj_batch_t *b)
{
    tj_xfer_t *const *xs = ((send_set_t *)arg)->xs;
    int n = ((send_set_t *)arg)->n;
    tj_xfer_t *group[TJ_FUSED_MAX];
    bool done_small[64];
    bool *done = n <= 64 ? done_small : calloc((size_t)(n > 0 ? n : 1), sizeof(bool));
    int rc = MPI_SUCCESS;

    if (n <= 64)
        memset(done_small, 0, sizeof(done_small));

    for (int i = 0; done != NULL && i < n; i++) {
        int ng = 0;
        if (done[i] || !tj_xfer_info(xs[i])->strided)
            continue;
        for (int j = i; j < n && ng < TJ_FUSED_MAX; j++)
            if (!done[j] && tj_xfer_info(xs[j])->strided && xs[j]->buf == xs[i]->buf &&
                xs[j]->ctx == xs[i]->ctx)
                group[ng++] = xs[j];
        if (ng < 2 || !fused_repack(group, ng, b))
            continue;
        for (int j = i; j < n; j++)
            for (int m = 0; m < ng; m++)
                done[j] = done[j] || xs[j] == group[m];
        /* The staged method copies each packed send to its host staging. */
        for (int m = 0; m < ng && rc == MPI_SUCCESS; m++)
            if (group[m]->method == TJ_METHOD_STAGED &&
                move(group[m], true, (size_t)group[m]->bytes, b) != TJ_OK)
                rc = MPI_ERR_INTERN;
    }
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        if (done == NULL || !done[i])
            rc = send_pack(xs[i], false, b);
    if (done != done_small)
        free(done);
    return rc;
}

int tj_p2p_send_repack_set(tj_xfer_t *const *xs, int n)
{
    send_set_t set = {xs, n};
    return tj_wait_once_run(repack_set, &set);
}

int tj_p2p_send_repack_set_queued(tj_xfer_t *const *xs, int n, tj_gpu_event_t **event)
{
    send_set_t set = {xs, n};
    return tj_wait_once_leave_running(repack_set, &set, event);
}

/* The bytes the transfer's objects touch lie in the buffer's allocation: a kernel or copy past
 * its end would fault on a GPU and leave the application's context unusable. */
static bool inside(const tj_xfer_t *x)
{
    if (tj_move_inside(tj_xfer_info(x), x->buf, 0, x->count, &x->at))
        return true;
    tj_log_error("a device %s reaches outside its allocation (the datatype's bytes must lie in "
                 "one allocation, count x extent within the address space); MPI_ERR_BUFFER",
                 x->recv ? "receive" : "send");
    return false;
}

/* Messages travel as counts of bytes: int ones, or MPI_Count ones where the MPI has the
 * large-count calls. */
static bool fits_int(const tj_xfer_t *x)
{
    if (tj_count_sayable(x->bytes))
        return true;
    tj_log_error("a device message of %lld packed bytes is larger than an MPI count of bytes can "
                 "say (%d); MPI_ERR_COUNT",
                 (long long)x->bytes, INT_MAX);
    return false;
}

/* A wide type whose bytes lie in more than one allocation or memory kind: neither the system MPI
 * nor typejit can move it (MPI_ERR_BUFFER; MPI_ERR_INTERN when the driver cannot tell). */
static int split(const tj_type_info_t *info, MPI_Datatype type, const void *buf, int64_t count,
                 int peer, const char *fn)
{
    tj_type_info_t own;

    if (peer == MPI_PROC_NULL || count <= 0 || type == MPI_DATATYPE_NULL)
        return MPI_SUCCESS;
    if (info == NULL) {
        memset(&own, 0, sizeof(own));
        tj_table_read_extents(type, &own);
        info = &own;
    }
    return info->extents && info->wide ? tj_span_check(info, type, buf, count, fn) : MPI_SUCCESS;
}

/* What a send and a receive begin alike: the wide type's one-allocation check, the transfer
 * begun, then the checks of its size and bytes. TJ_CALL_TAKEN with *rc MPI_SUCCESS, or with the
 * error of a check (the caller ends the transfer); else nothing begun. */
static inline tj_call_result_t begin_checked(const tj_type_info_t *info, MPI_Datatype type,
                                             const void *buf, int64_t count, int peer,
                                             MPI_Comm comm, bool recv, tj_xfer_t *x, int *rc)
{
    tj_call_result_t r;

    if ((info == NULL || info->wide) &&
        (*rc = split(info, type, buf, count, peer, recv ? "a receive" : "a send")) != MPI_SUCCESS)
        return TJ_CALL_FAILED;
    if ((r = begin(info, type, buf, count, peer, comm, recv, x)) != TJ_CALL_TAKEN) {
        if (r == TJ_CALL_FAILED)
            *rc = MPI_ERR_INTERN;
        return r;
    }
    tj_stats_inc(recv ? TJ_STAT_recvs_gpu : TJ_STAT_sends_gpu);
    *rc = !fits_int(x) ? MPI_ERR_COUNT : !inside(x) ? MPI_ERR_BUFFER : MPI_SUCCESS;
    return TJ_CALL_TAKEN;
}

tj_call_result_t tj_p2p_send_begin(const tj_type_info_t *info, MPI_Datatype type, const void *buf,
                                   int64_t count, int peer, MPI_Comm comm, bool queue, tj_xfer_t *x,
                                   int *rc)
{
    tj_call_result_t r = begin_checked(info, type, buf, count, peer, comm, false, x, rc);

    if (r != TJ_CALL_TAKEN)
        return r;
    if (*rc == MPI_SUCCESS) {
        /* The staging and the pack in one scope of the buffer's context. */
        tj_gpu_scope_t scope;
        bool in = tj_gpu_enter_at(&x->at, &scope) == TJ_OK;
        if (get_staging(x) != TJ_OK)
            *rc = MPI_ERR_NO_MEM;
        else if (queue)
            *rc = tj_wait_once_leave_running(first_pack, x, &x->event);
        else if (x->method != TJ_METHOD_STAGED)
            /* One step, which waits for itself: a failed wait is done again by the move itself,
             * staged through host memory. */
            *rc = send_pack(x, true, NULL);
        else
            *rc = tj_wait_once_run(first_pack, x);
        if (in)
            tj_gpu_leave(&scope);
    }
    if (*rc == MPI_SUCCESS)
        return TJ_CALL_TAKEN;
    tj_p2p_end(x);
    return TJ_CALL_FAILED;
}

tj_call_result_t tj_p2p_recv_begin(const tj_type_info_t *info, MPI_Datatype type, void *buf,
                                   int64_t count, int peer, MPI_Comm comm, tj_xfer_t *x, int *rc)
{
    tj_call_result_t r = begin_checked(info, type, buf, count, peer, comm, true, x, rc);

    if (r != TJ_CALL_TAKEN)
        return r;
    /* The application may free its type before the receive completes. */
    if (*rc == MPI_SUCCESS && (*rc = tj_p2p_keep_type(x)) == MPI_SUCCESS && get_staging(x) != TJ_OK)
        *rc = MPI_ERR_NO_MEM;
    if (*rc == MPI_SUCCESS)
        return TJ_CALL_TAKEN;
    tj_p2p_end(x);
    return TJ_CALL_FAILED;
}

/* A private self communicator for this call alone (NULL when none can be made). */
static self_comm_t *self_take(void)
{
    self_comm_t *s;

    pthread_mutex_lock(&tj_calls_state.p2p.self_lock);
    s = tj_calls_state.p2p.self_free;
    if (s != NULL)
        tj_calls_state.p2p.self_free = s->next;
    pthread_mutex_unlock(&tj_calls_state.p2p.self_lock);
    if (s != NULL)
        return s;
    if ((s = malloc(sizeof(*s))) == NULL)
        return NULL;
    if (PMPI_Comm_dup(MPI_COMM_SELF, &s->comm) != MPI_SUCCESS) {
        free(s);
        return NULL;
    }
    return s;
}

static void self_give(self_comm_t *s)
{
    pthread_mutex_lock(&tj_calls_state.p2p.self_lock);
    s->next = tj_calls_state.p2p.self_free;
    tj_calls_state.p2p.self_free = s;
    pthread_mutex_unlock(&tj_calls_state.p2p.self_lock);
}

/* The last, partial object of a short message: the system MPI unpacks @p len bytes at @p bytes
 * (host memory) into a host copy of object @p k's footprint, which is then written back. */
static int partial_object(tj_xfer_t *x, int64_t k, const char *bytes, int64_t len)
{
    const tj_type_info_t *info = tj_xfer_info(x);
    char *obj = (char *)x->buf + k * info->extent + info->true_lb;
    size_t span = (size_t)(info->true_extent > 0 ? info->true_extent : 1);
    char *mirror = malloc(span);
    self_comm_t *self = self_take();
    tj_gpu_scope_t scope;
    int rc = MPI_ERR_INTERN;

    if (mirror == NULL || self == NULL || tj_gpu_enter_at(&x->at, &scope) != TJ_OK) {
        rc = mirror == NULL || self == NULL ? MPI_ERR_NO_MEM : MPI_ERR_INTERN;
        goto out_free;
    }
    if (tj_gpu_copy_dtoh(mirror, (tj_devptr_t)(uintptr_t)obj, span) == TJ_OK) {
        rc = tj_count_sendrecv(bytes, len, MPI_PACKED, 0, 0, mirror - info->true_lb, 1,
                               xfer_handle(x), 0, 0, self->comm, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS &&
            tj_gpu_copy_htod((tj_devptr_t)(uintptr_t)obj, mirror, span) != TJ_OK)
            rc = MPI_ERR_INTERN;
    }
    tj_gpu_leave(&scope);
out_free:
    if (self != NULL)
        self_give(self);
    free(mirror);
    return rc;
}

int tj_p2p_keep_type(tj_xfer_t *x)
{
    MPI_Datatype own;
    int rc;

    /* The record keeps a duplicate when the application frees the type (tj_table_drop). */
    if (!x->own_info || x->own_type)
        return MPI_SUCCESS;
    if ((rc = PMPI_Type_dup(x->user_type, &own)) == MPI_SUCCESS) {
        x->type = own;
        x->own_type = true;
    }
    return rc;
}

/* tj_p2p_recv_finish's work, into @p b (tj_wait_once_work_t). */
static int recv_unpack(tj_xfer_t *x, const MPI_Status *status, tj_batch_t *b)
{
    int cancelled = 0, rc = MPI_SUCCESS;
    int64_t whole, rest, received = 0;

    if (PMPI_Test_cancelled(status, &cancelled) != MPI_SUCCESS || cancelled)
        return MPI_SUCCESS;
    if (!tj_count_received(status, &received) || received <= 0)
        return MPI_SUCCESS;
    if (received > x->bytes)
        received = x->bytes; /* truncated: the system MPI reported it and stored this much */
    whole = received / tj_xfer_info(x)->size;
    rest = received - whole * tj_xfer_info(x)->size;
    /* The partial object's host copy is read after the whole objects are unpacked: they are
     * waited for first. */
    if (rest > 0)
        b = NULL;
    if (x->method == TJ_METHOD_STAGED && move(x, false, (size_t)received, b) != TJ_OK)
        return MPI_ERR_INTERN;
    /* A persistent receive's buffer is queried again: it may have been replaced since the
     * init. */
    if (whole > 0) {
        tj_gpu_ptr_t out = x->at;
        if (x->persistent &&
            (tj_gpu_query((const char *)x->buf + tj_xfer_info(x)->true_lb, &out) != TJ_OK ||
             !tj_gpu_device_like(out.kind) || out.ctx != x->ctx ||
             !tj_move_inside(tj_xfer_info(x), x->buf, 0, whole, &out)))
            return MPI_ERR_BUFFER; /* freed meanwhile (an erroneous program), or the query failed */
        rc = xfer_move(x, &out, whole, b);
    }
    if (rc == MPI_SUCCESS && rest > 0) {
        /* The partial object's bytes, on the host. */
        const char *bytes = x->host != NULL ? x->host->host : NULL;
        char *copy = NULL;
        if (bytes == NULL) {
            tj_gpu_scope_t scope;
            copy = malloc((size_t)rest);
            if (copy == NULL || tj_gpu_enter_at(&x->at, &scope) != TJ_OK) {
                free(copy);
                return MPI_ERR_INTERN;
            }
            if (tj_gpu_copy_dtoh(copy, x->dev->dev + (tj_devptr_t)(whole * tj_xfer_info(x)->size),
                                 (size_t)rest) != TJ_OK)
                rc = MPI_ERR_INTERN;
            tj_gpu_leave(&scope);
            bytes = copy;
        } else {
            bytes += whole * tj_xfer_info(x)->size;
        }
        if (rc == MPI_SUCCESS)
            rc = partial_object(x, whole, bytes, rest);
        free(copy);
    }
    return rc;
}

typedef struct {
    tj_xfer_t *x;
    const MPI_Status *status;
} recv_t;

static int recv_work(void *arg, tj_batch_t *b)
{
    recv_t *r = arg;
    return recv_unpack(r->x, r->status, b);
}

int tj_p2p_recv_finish(tj_xfer_t *x, const MPI_Status *status, tj_batch_t *batch)
{
    recv_t r = {x, status};

    if (batch != NULL)
        return recv_unpack(x, status, batch);
    /* One step, which waits for itself (a failed wait is done again by the move, staged), unless
     * the staged method's copy goes first. */
    if (x->method != TJ_METHOD_STAGED)
        return recv_unpack(x, status, NULL);
    return tj_wait_once_run(recv_work, &r);
}

void tj_p2p_end(tj_xfer_t *x)
{
    /* Nothing goes back to the pool while a pack still writes it. */
    if (x->event != NULL) {
        (void)tj_gpu_event_wait(x->event);
        tj_gpu_event_release(x->event);
        x->event = NULL;
    }
    tj_staging_put(x->dev);
    tj_staging_put(x->host);
    x->dev = x->host = NULL;
    x->message = NULL;
    if (x->own_type && x->type != MPI_DATATYPE_NULL)
        PMPI_Type_free(&x->type);
    x->own_type = false;
    x->type = MPI_DATATYPE_NULL;
    if (x->own_info)
        free((void *)x->info);
    else
        tj_type_release(x->info);
    x->info = NULL;
    x->own_info = false;
}

void tj_p2p_finalize(void)
{
    self_comm_t *list;

    /* Taken off the list under the lock, freed without it: no MPI call runs under a lock. */
    pthread_mutex_lock(&tj_calls_state.p2p.self_lock);
    list = tj_calls_state.p2p.self_free;
    tj_calls_state.p2p.self_free = NULL;
    pthread_mutex_unlock(&tj_calls_state.p2p.self_lock);
    while (list != NULL) {
        self_comm_t *s = list;
        list = s->next;
        PMPI_Comm_free(&s->comm);
        free(s);
    }
}
