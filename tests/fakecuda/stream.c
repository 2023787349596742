/* SPDX-License-Identifier: BSD-3-Clause */
/* Streams and events: device work is queued and runs only when the host must observe it
 * (a synchronising call), in stream order and with the legacy default stream's implicit
 * synchronisation, so a caller that forgets to synchronise sees stale memory, as on a GPU.
 * With FAKECUDA_STREAM_THREAD=1 a thread of the driver's own also runs queued work beside the
 * host, operation by operation, the oldest first (each stream in its order, the legacy default
 * stream's dependencies kept), as a GPU runs it while the host goes on; queries then never run
 * work themselves: they report what that thread has finished. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "fakecuda.h"

static struct CUstream_st *streams; /* every stream ever made, destroyed ones included */
static struct CUevent_st *events;
static uint64_t next_seq = 1;

/* A stream of @p ctx, in the list of every stream; NULL when out of memory. */
static struct CUstream_st *new_stream(struct CUctx_st *ctx, unsigned flags, int priority,
                                      bool is_null)
{
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->magic = FC_MAGIC_STREAM;
    s->ctx = ctx;
    s->flags = flags;
    s->priority = priority;
    s->is_null = is_null;
    s->next = streams;
    streams = s;
    return s;
}

struct CUstream_st *fc_stream_new_null(struct CUctx_st *ctx)
{
    struct CUstream_st *s = new_stream(ctx, 0, 0, true);
    if (s == NULL)
        abort(); /* a test double out of memory cannot emulate anything */
    return s;
}

CUresult fc_stream_get(struct CUctx_st *ctx, CUstream handle, struct CUstream_st **stream)
{
    if (handle == NULL || handle == CU_STREAM_LEGACY) {
        *stream = ctx->null_stream;
        return CUDA_SUCCESS;
    }
    /* The per-thread default stream is not emulated; refusing it beats giving it legacy
     * semantics a real per-thread stream does not have. */
    if (handle == CU_STREAM_PER_THREAD)
        return CUDA_ERROR_NOT_SUPPORTED;
    for (struct CUstream_st *s = streams; s != NULL; s = s->next)
        if (s == handle) {
            /* Assumption: a stream used while another context is current is an invalid
             * handle, as cuda.h says for events recorded on a stream of another context. */
            if (s->dead || s->is_null || s->ctx != ctx)
                return CUDA_ERROR_INVALID_HANDLE;
            *stream = s;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

CUresult fc_stream_any(CUstream handle, struct CUstream_st **stream)
{
    struct CUctx_st *ctx = NULL;
    CUresult rc;

    if (handle == NULL || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
        if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
            return rc;
        return fc_stream_get(ctx, handle, stream);
    }
    for (struct CUstream_st *s = streams; s != NULL; s = s->next)
        if (s == handle) {
            if (s->dead || s->is_null)
                return CUDA_ERROR_INVALID_HANDLE;
            if (!s->ctx->active)
                return CUDA_ERROR_CONTEXT_IS_DESTROYED;
            if (s->ctx->sticky != CUDA_SUCCESS)
                return s->ctx->sticky;
            *stream = s;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

static CUresult event_get(struct CUctx_st *ctx, CUevent handle, bool any_ctx,
                          struct CUevent_st **event)
{
    for (struct CUevent_st *e = events; e != NULL; e = e->next)
        if (e == handle) {
            if (e->dead || (!any_ctx && e->ctx != ctx))
                return CUDA_ERROR_INVALID_HANDLE;
            *event = e;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

/* The stream @p handle resolves to while its context is current (fc_stream_get). */
static CUresult current_stream(CUstream handle, struct CUstream_st **stream)
{
    struct CUctx_st *ctx = NULL;
    CUresult rc = fc_ctx_current(&ctx);
    return rc != CUDA_SUCCESS ? rc : fc_stream_get(ctx, handle, stream);
}

/* The event @p handle of the current context. */
static CUresult current_event(CUevent handle, struct CUevent_st **event)
{
    struct CUctx_st *ctx = NULL;
    CUresult rc = fc_ctx_current(&ctx);
    return rc != CUDA_SUCCESS ? rc : event_get(ctx, handle, false, event);
}

/* The stream thread: woken when work is queued; it takes the big lock for one operation at a
 * time, so that the host's calls go on between them. */
static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_queued = PTHREAD_COND_INITIALIZER;
static bool work_pending, work_stop;
static pthread_t work_thread;
static bool work_running;

static void wake_stream_thread(void)
{
    pthread_mutex_lock(&work_lock);
    work_pending = true;
    pthread_cond_signal(&work_queued);
    pthread_mutex_unlock(&work_lock);
}

/* Run the oldest queued operation of any live stream (under the big lock); false when there is
 * none. */
static bool run_oldest(void)
{
    struct CUstream_st *oldest = NULL;

    for (struct CUstream_st *s = streams; s != NULL; s = s->next)
        if (!s->dead && s->head != NULL && s->ctx->active && s->ctx->sticky == CUDA_SUCCESS &&
            (oldest == NULL || s->head->seq < oldest->head->seq))
            oldest = s;
    if (oldest == NULL)
        return false;
    fc_stream_run(oldest, oldest->head->seq);
    return true;
}

static void *stream_thread_main(void *arg)
{
    (void)arg;
    for (;;) {
        bool ran;
        pthread_mutex_lock(&work_lock);
        while (!work_pending && !work_stop)
            pthread_cond_wait(&work_queued, &work_lock);
        if (work_stop) {
            pthread_mutex_unlock(&work_lock);
            return NULL;
        }
        work_pending = false;
        pthread_mutex_unlock(&work_lock);
        do {
            fc_lock();
            ran = run_oldest();
            fc_unlock();
            if (ran)
                sched_yield();
        } while (ran);
    }
}

static void stream_thread_stop(void)
{
    pthread_mutex_lock(&work_lock);
    work_stop = true;
    pthread_cond_signal(&work_queued);
    pthread_mutex_unlock(&work_lock);
    pthread_join(work_thread, NULL);
}

void fc_stream_thread_start(void)
{
    if (pthread_create(&work_thread, NULL, stream_thread_main, NULL) != 0) {
        fc_log("cannot start the stream thread; queued work runs when the host observes it");
        fc_config.stream_thread = false;
        return;
    }
    work_running = true;
    atexit(stream_thread_stop);
}

void fc_stream_enqueue(struct CUstream_st *stream, fc_op_t *op)
{
    op->seq = next_seq++;
    op->next = NULL;
    if (stream->tail != NULL)
        stream->tail->next = op;
    else
        stream->head = op;
    stream->tail = op;
    stream->query_seen = false;
    if (work_running)
        wake_stream_thread();
}

/* Dropped work is freed unrun; a stream-ordered allocation or free completes all the same (the
 * memory is no context's, and outlives the stream). */
static void free_op(fc_op_t *op, bool ran)
{
    if (op->kind == FC_OP_POOL && !ran)
        fc_pool_op(op);
    if (op->kind == FC_OP_KERNEL)
        free(op->u.kernel.args);
    if (op->kind == FC_OP_COPY)
        free(op->u.copy.staging);
    free(op);
}

static void execute(struct CUstream_st *s, fc_op_t *op)
{
    switch (op->kind) {
    case FC_OP_KERNEL:
        fc_kernel_execute(op);
        break;
    case FC_OP_COPY:
    case FC_OP_MEMSET:
        fc_copy_execute(s->ctx, op);
        break;
    case FC_OP_POOL:
        fc_pool_op(op);
        break;
    case FC_OP_HOST:
        /* On the thread that made the host observe the stream, in stream order (cuda.h,
         * cuLaunchHostFunc: "The host function must not make any CUDA API calls"). */
        op->u.host.fn(op->u.host.data);
        break;
    case FC_OP_RECORD:
        if (op->u.record.record_id == op->u.record.event->record_id) {
            op->u.record.event->done = true;
            clock_gettime(CLOCK_MONOTONIC, &op->u.record.event->time);
        }
        break;
    case FC_OP_WAIT:
        if (!op->u.wait.stream->dead)
            fc_stream_run(op->u.wait.stream, op->u.wait.seq);
        break;
    }
}

/* Legacy default stream semantics: work on the NULL stream waits for all earlier work of the
 * context's blocking streams, and work on a blocking stream waits for earlier NULL-stream work. */
static void run_dependencies(struct CUstream_st *s, uint64_t seq)
{
    if (s->is_null) {
        for (struct CUstream_st *t = streams; t != NULL; t = t->next)
            if (t->ctx == s->ctx && !t->dead && !t->is_null && !(t->flags & CU_STREAM_NON_BLOCKING))
                fc_stream_run(t, seq - 1);
    } else if (!(s->flags & CU_STREAM_NON_BLOCKING) && s->ctx->null_stream != NULL) {
        fc_stream_run(s->ctx->null_stream, seq - 1);
    }
}

CUresult fc_stream_run(struct CUstream_st *stream, uint64_t seq)
{
    struct CUctx_st *ctx = stream->ctx;
    while (stream->head != NULL && stream->head->seq <= seq && ctx->sticky == CUDA_SUCCESS) {
        fc_op_t *op = stream->head;
        /* The op stays at the head while its dependencies run, so a dependency that comes back
         * to this stream stops before it. */
        run_dependencies(stream, op->seq);
        if (ctx->sticky != CUDA_SUCCESS || stream->head != op)
            break;
        stream->head = op->next;
        if (stream->head == NULL)
            stream->tail = NULL;
        execute(stream, op);
        free_op(op, true);
    }
    return ctx->sticky;
}

CUresult fc_ctx_run_all(struct CUctx_st *ctx)
{
    fc_stats.syncs++;
    for (struct CUstream_st *s = streams; s != NULL && ctx->sticky == CUDA_SUCCESS; s = s->next)
        if (s->ctx == ctx && !s->dead)
            fc_stream_run(s, UINT64_MAX);
    return ctx->sticky;
}

void fc_run_everything(void)
{
    fc_stats.syncs++;
    for (struct CUstream_st *s = streams; s != NULL; s = s->next)
        if (!s->dead && s->ctx->active && s->ctx->sticky == CUDA_SUCCESS)
            fc_stream_run(s, UINT64_MAX);
}

void fc_ctx_drop_work(struct CUctx_st *ctx)
{
    for (struct CUstream_st *s = streams; s != NULL; s = s->next)
        if (s->ctx == ctx) {
            while (s->head != NULL) {
                fc_op_t *op = s->head;
                s->head = op->next;
                free_op(op, false);
            }
            s->tail = NULL;
        }
}

void fc_stream_release_ctx(struct CUctx_st *ctx)
{
    for (struct CUstream_st *s = streams; s != NULL; s = s->next)
        if (s->ctx == ctx)
            s->dead = true;
    for (struct CUevent_st *e = events; e != NULL; e = e->next)
        if (e->ctx == ctx)
            e->dead = true;
    ctx->null_stream = NULL;
}

static CUresult create(CUstream *phStream, unsigned int Flags, int priority)
{
    struct CUctx_st *ctx = NULL;
    struct CUstream_st *s;
    CUresult rc;

    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        return rc;
    if (phStream == NULL || (Flags != CU_STREAM_DEFAULT && Flags != CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    if ((s = new_stream(ctx, Flags, priority, false)) == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *phStream = s;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    FC_BEGIN(cuStreamCreate, true);
    rc = create(phStream, Flags, 0);
    FC_END();
}

/* Priorities are remembered, not acted on. The range is 0 (least) to -5 (greatest), what current
 * GPUs answer; cuda.h, cuStreamCreateWithPriority: a priority outside it "will automatically be
 * clamped". */
#define LEAST_PRIORITY    0
#define GREATEST_PRIORITY (-5)

FC_EXPORT CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
                                                      int priority)
{
    FC_BEGIN(cuStreamCreateWithPriority, true);
    if (priority > LEAST_PRIORITY)
        priority = LEAST_PRIORITY;
    if (priority < GREATEST_PRIORITY)
        priority = GREATEST_PRIORITY;
    rc = create(phStream, flags, priority);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    struct CUctx_st *ctx = NULL;
    FC_BEGIN(cuCtxGetStreamPriorityRange, true);
    if ((rc = fc_ctx_current(&ctx)) == CUDA_SUCCESS) {
        if (leastPriority != NULL)
            *leastPriority = LEAST_PRIORITY;
        if (greatestPriority != NULL)
            *greatestPriority = GREATEST_PRIORITY;
    }
    FC_END();
}

/* The stream queries: INVALID_VALUE for a NULL output first, then the stream, whatever context is
 * current (fc_stream_any). */
#define STREAM_QUERY(_name, _type, _value)                                                         \
    FC_EXPORT CUresult CUDAAPI _name(CUstream hStream, _type *out)                                 \
    {                                                                                              \
        struct CUstream_st *s = NULL;                                                              \
        FC_BEGIN(_name, true);                                                                     \
        if (out == NULL)                                                                           \
            rc = CUDA_ERROR_INVALID_VALUE;                                                         \
        else if ((rc = fc_stream_any(hStream, &s)) == CUDA_SUCCESS)                                \
            *out = (_value);                                                                       \
        FC_END();                                                                                  \
    }

STREAM_QUERY(cuStreamGetPriority, int, s->priority)
/* The legacy default stream's flags are 0 (assumption: it is no non-blocking stream). */
STREAM_QUERY(cuStreamGetFlags, unsigned int, s->flags)
/* cuda.h: "the context that the stream is associated with"; the legacy default stream is the
 * current context's. */
STREAM_QUERY(cuStreamGetCtx, CUcontext, s->ctx)
#if FAKECUDA_VERSION >= 12080
STREAM_QUERY(cuStreamGetDevice, CUdevice, s->ctx->device)
#endif

/* cuda.h: "Enqueues a host function call in a stream. The function will be called after currently
 * enqueued work and will block work added after it"; here it runs when the host observes the
 * stream (a synchronising call). */
FC_EXPORT CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    struct CUstream_st *s = NULL;
    fc_op_t *op;
    FC_BEGIN(cuLaunchHostFunc, true);
    if ((rc = current_stream(hStream, &s)) != CUDA_SUCCESS)
        ;
    else if (fn == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((op = calloc(1, sizeof *op)) == NULL)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        op->kind = FC_OP_HOST;
        op->u.host.fn = fn;
        op->u.host.data = userData;
        fc_stream_enqueue(s, op);
    }
    FC_END();
}

/* Runs the stream's work before it goes (assumption, as the brief of this double asks: a real
 * driver lets it finish in the background). */
FC_EXPORT CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
    struct CUctx_st *ctx = NULL;
    struct CUstream_st *s = NULL;
    FC_BEGIN(cuStreamDestroy_v2, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (hStream == NULL || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if ((rc = fc_stream_get(ctx, hStream, &s)) == CUDA_SUCCESS &&
             (rc = fc_stream_run(s, UINT64_MAX)) == CUDA_SUCCESS)
        s->dead = true;
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
    struct CUstream_st *s = NULL;
    FC_BEGIN(cuStreamSynchronize, true);
    if ((rc = current_stream(hStream, &s)) == CUDA_SUCCESS) {
        fc_stats.syncs++;
        rc = fc_stream_run(s, UINT64_MAX);
    }
    FC_END();
}

/* Pending work up to @p seq of @p s is reported NOT_READY once before it runs (@p seen: it was),
 * so a caller must poll as it would on a GPU, and a polling loop still ends. */
static CUresult query(struct CUstream_st *s, uint64_t seq, bool *seen)
{
    if (work_running) /* the stream thread has not finished it (a dead context never will) */
        return s->ctx->sticky != CUDA_SUCCESS ? s->ctx->sticky : CUDA_ERROR_NOT_READY;
    if (!*seen) {
        *seen = true;
        return CUDA_ERROR_NOT_READY;
    }
    return fc_stream_run(s, seq);
}

FC_EXPORT CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
    struct CUstream_st *s = NULL;
    FC_BEGIN(cuStreamQuery, true);
    if ((rc = current_stream(hStream, &s)) == CUDA_SUCCESS && s->head != NULL)
        rc = query(s, UINT64_MAX, &s->query_seen);
    FC_END();
}

/* cuda.h: the event may belong to another context or device than the stream. */
FC_EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    struct CUctx_st *ctx = NULL;
    struct CUstream_st *s = NULL;
    struct CUevent_st *e = NULL;
    FC_BEGIN(cuStreamWaitEvent, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (Flags != CU_EVENT_WAIT_DEFAULT)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = fc_stream_get(ctx, hStream, &s)) == CUDA_SUCCESS &&
             (rc = event_get(ctx, hEvent, true, &e)) == CUDA_SUCCESS && e->recorded && !e->done) {
        fc_op_t *op = calloc(1, sizeof *op);
        if (op == NULL) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            op->kind = FC_OP_WAIT;
            op->u.wait.stream = e->stream;
            op->u.wait.seq = e->seq;
            fc_stream_enqueue(s, op);
        }
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    struct CUctx_st *ctx = NULL;
    const unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    FC_BEGIN(cuEventCreate, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS) {
        ;
    } else if (phEvent == NULL || (Flags & ~known) != 0 ||
               ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        struct CUevent_st *e = calloc(1, sizeof *e);
        if (e == NULL) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            e->magic = FC_MAGIC_EVENT;
            e->ctx = ctx;
            e->flags = Flags;
            e->next = events;
            events = e;
            *phEvent = e;
        }
    }
    FC_END();
}

static CUresult record(CUevent hEvent, CUstream hStream)
{
    struct CUctx_st *ctx = NULL;
    struct CUstream_st *s = NULL;
    struct CUevent_st *e = NULL;
    fc_op_t *op;
    CUresult rc;

    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS || (rc = event_get(ctx, hEvent, false, &e)) ||
        (rc = fc_stream_get(ctx, hStream, &s)))
        return rc;
    if ((op = calloc(1, sizeof *op)) == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->kind = FC_OP_RECORD;
    op->u.record.event = e;
    op->u.record.record_id = ++e->record_id;
    fc_stream_enqueue(s, op);
    e->recorded = true;
    e->done = false;
    e->query_seen = false;
    e->stream = s;
    e->seq = op->seq;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
    FC_BEGIN(cuEventRecord, true);
    rc = record(hEvent, hStream);
    FC_END();
}

/* cuda.h: CU_EVENT_RECORD_EXTERNAL is for stream capture, which is not emulated (assumption:
 * outside a capture it is an invalid value, as any other flag is). */
FC_EXPORT CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream,
                                                  unsigned int flags)
{
    FC_BEGIN(cuEventRecordWithFlags, true);
    rc = flags != CU_EVENT_RECORD_DEFAULT ? CUDA_ERROR_INVALID_VALUE : record(hEvent, hStream);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
    struct CUevent_st *e = NULL;
    FC_BEGIN(cuEventQuery, true);
    if ((rc = current_event(hEvent, &e)) == CUDA_SUCCESS && e->recorded && !e->done)
        rc = query(e->stream, e->seq, &e->query_seen);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    struct CUevent_st *e = NULL;
    FC_BEGIN(cuEventSynchronize, true);
    if ((rc = current_event(hEvent, &e)) == CUDA_SUCCESS && e->recorded && !e->done) {
        fc_stats.syncs++;
        rc = fc_stream_run(e->stream, e->seq);
    }
    FC_END();
}

/* cuda.h: never recorded or DISABLE_TIMING: INVALID_HANDLE; recorded but not complete:
 * NOT_READY. The time is the wall clock between the two records' executions. */
static CUresult elapsed(float *ms, CUevent hStart, CUevent hEnd)
{
    struct CUctx_st *ctx = NULL;
    struct CUevent_st *a = NULL, *b = NULL;
    CUresult rc;

    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS || (rc = event_get(ctx, hStart, false, &a)) ||
        (rc = event_get(ctx, hEnd, false, &b)))
        return rc;
    if (ms == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!a->recorded || !b->recorded || (a->flags & CU_EVENT_DISABLE_TIMING) ||
        (b->flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!a->done || !b->done)
        return CUDA_ERROR_NOT_READY;
    *ms = (float)((double)(b->time.tv_sec - a->time.tv_sec) * 1e3 +
                  (double)(b->time.tv_nsec - a->time.tv_nsec) / 1e6);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    FC_BEGIN(cuEventElapsedTime, true);
    rc = elapsed(pMilliseconds, hStart, hEnd);
    FC_END();
}

/* The 12.8 entry point; the 12.4 build must not have it. */
#if FAKECUDA_VERSION >= 12080
FC_EXPORT CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    FC_BEGIN(cuEventElapsedTime_v2, true);
    rc = elapsed(pMilliseconds, hStart, hEnd);
    FC_END();
}
#endif

/* cuda.h: an event destroyed before completion is released when it completes. */
FC_EXPORT CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
    struct CUevent_st *e = NULL;
    FC_BEGIN(cuEventDestroy_v2, true);
    if ((rc = current_event(hEvent, &e)) == CUDA_SUCCESS)
        e->dead = true;
    FC_END();
}
