/* SPDX-License-Identifier: BSD-3-Clause */
/* The send queue (see send_queue.h): one list in posting order under one lock. A pass over it
 * starts every send whose event has completed unless an earlier send to the same destination (a
 * collective: an earlier collective of the same communicator) is still queued; a send whose pack
 * failed is packed again, waiting, before it starts. Events of one context complete in the order
 * they were recorded (one stream a context), so a pass asks the driver at most once for each
 * context whose work is still running. */
#include "calls/send_queue.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "util/clock.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* This module's part of the layer's state. */
static __typeof__(tj_calls_state.send_queue) *const send_queue_state = &tj_calls_state.send_queue;

/* Destinations a pass holds back (an earlier send there is still queued), and contexts whose
 * work it found still running; a pass that fills either stops there. */
#define PASS_KEYS     64
#define PASS_CONTEXTS 8

typedef struct {
    struct {
        MPI_Comm comm;
        int dest;
    } held[PASS_KEYS];
    int nheld;
    tj_gpu_ctx_t busy[PASS_CONTEXTS];
    int nbusy;
    /* The events a waiting pass waited for, one per context, held until it ends: the packs
     * recorded before them on their streams are complete too (tj_gpu_event_implied). */
    tj_gpu_event_t *waited[PASS_CONTEXTS];
    int nwaited;
} pass_t;

static bool held(const pass_t *p, const tj_queued_send_t *q)
{
    for (int i = 0; i < p->nheld; i++)
        if (p->held[i].comm == q->comm && p->held[i].dest == q->dest)
            return true;
    return false;
}

static bool busy(const pass_t *p, tj_gpu_ctx_t ctx)
{
    for (int i = 0; i < p->nbusy; i++)
        if (p->busy[i] == ctx)
            return true;
    return false;
}

/* Hold back @p q's destination (and note its context running): false when the pass is full. */
static bool hold(pass_t *p, const tj_queued_send_t *q, bool running)
{
    if (running && p->nbusy < PASS_CONTEXTS && !busy(p, tj_gpu_event_context(q->event)))
        p->busy[p->nbusy++] = tj_gpu_event_context(q->event);
    if (p->nheld == PASS_KEYS)
        return false;
    p->held[p->nheld].comm = q->comm;
    p->held[p->nheld].dest = q->dest;
    p->nheld++;
    return true;
}

/* Whether @p q's pack has completed: 1, 0 (still running; @p wait: never), -1 (it failed). A
 * pack before an event @p p waited for asks nothing; a wait asks the driver once (the event's
 * wait), a query once. */
static int pack_done(const pass_t *p, tj_queued_send_t *q, bool wait)
{
    bool done = false;

    for (int i = 0; i < p->nwaited; i++)
        if (tj_gpu_event_implied(q->event, p->waited[i]))
            return 1;
    if (!wait) {
        if (tj_gpu_event_query(q->event, &done) != TJ_OK)
            return -1;
        return done ? 1 : 0;
    }
    if (tj_gpu_event_done(q->event))
        return 1;
    double t0 = tj_clock_seconds();
    int done_now = tj_gpu_event_wait(q->event) == TJ_OK ? 1 : -1;
    tj_stats_inc(TJ_STAT_queue_waits);
    tj_stats_add(TJ_STAT_queue_wait_us, (uint64_t)((tj_clock_seconds() - t0) * 1e6 + 0.5));
    return done_now;
}

/* Hand @p q to the system MPI (it is out of the list; under queue_lock). Once its state says
 * started, its request may complete and its record go at any moment: nothing here touches it
 * after that. */
static void start(tj_queued_send_t *q, bool pack_failed)
{
    int rc = MPI_SUCCESS;

    if (pack_failed)
        tj_log_debug("a deferred send's pack failed; it is packed again, waiting");
    if (q->start != NULL) {
        rc = q->start(q, pack_failed);
    } else {
        if (pack_failed)
            rc = tj_p2p_send_repack(q->xfer);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Start(&q->handle);
    }
    tj_gpu_event_release(q->event);
    q->event = NULL;
    q->rc = rc;
    atomic_store_explicit(&q->state, rc == MPI_SUCCESS ? TJ_SEND_STARTED : TJ_SEND_FAILED,
                          memory_order_release);
    atomic_fetch_sub_explicit(&send_queue_state->length, 1, memory_order_relaxed);
}

/* Before a pass that waits: one wait for each context, for the last of the sends it will start
 * there (events of one stream complete in order: the earlier ones are then complete too). A pack
 * that failed is found by the pass itself. */
static void wait_last(pass_t *p, bool one_dest, MPI_Comm comm, int dest,
                      const tj_queued_send_t *until)
{
    tj_queued_send_t *last[PASS_CONTEXTS];
    int n = 0;

    for (tj_queued_send_t *q = send_queue_state->head; q != NULL; q = q->next) {
        int i = 0;
        if (one_dest && (q->comm != comm || q->dest != dest))
            continue;
        while (i < n && tj_gpu_event_context(last[i]->event) != tj_gpu_event_context(q->event))
            i++;
        if (i < n)
            last[i] = q;
        else if (n < PASS_CONTEXTS)
            last[n++] = q;
        if (q == until)
            break;
    }
    for (int i = 0; i < n; i++)
        if (pack_done(p, last[i], true) == 1)
            p->waited[p->nwaited++] = tj_gpu_event_hold(last[i]->event);
}

/* One pass (under queue_lock): every send it may start, waiting for packs when @p wait; only
 * those to @p comm/@p dest when @p one_dest; up to @p until when it is not NULL. */
static void pass(bool wait, bool one_dest, MPI_Comm comm, int dest, const tj_queued_send_t *until)
{
    tj_queued_send_t **at = &send_queue_state->head;
    pass_t p; /* its arrays are read only up to their counts */

    p.nheld = p.nbusy = p.nwaited = 0;

    if (wait)
        wait_last(&p, one_dest, comm, dest, until);

    while (*at != NULL) {
        tj_queued_send_t *q = *at;
        int done;

        if ((one_dest && (q->comm != comm || q->dest != dest)) || held(&p, q)) {
            at = &q->next;
            continue;
        }
        done = !wait && busy(&p, tj_gpu_event_context(q->event)) ? 0 : pack_done(&p, q, wait);
        if (done == 0) {
            if (!hold(&p, q, true))
                break;
            at = &q->next;
            continue;
        }
        *at = q->next;
        if (*at == NULL)
            send_queue_state->tail = at;
        start(q, done < 0);
        if (q == until)
            break;
    }
    for (int i = 0; i < p.nwaited; i++)
        tj_gpu_event_release(p.waited[i]);
}

void tj_send_queue_push_chain(tj_queued_send_t *first, tj_queued_send_t *last, int n)
{
    if (n <= 0)
        return;
    tj_stats_add(TJ_STAT_sends_queued, (uint64_t)n);
    last->next = NULL;
    for (tj_queued_send_t *q = first; q != NULL; q = q->next)
        atomic_store_explicit(&q->state, TJ_SEND_QUEUED, memory_order_relaxed);
    pthread_mutex_lock(&send_queue_state->queue_lock);
    *send_queue_state->tail = first;
    send_queue_state->tail = &last->next;
    atomic_fetch_add_explicit(&send_queue_state->length, n, memory_order_relaxed);
    if (send_queue_state->progress_running)
        pthread_cond_signal(&send_queue_state->progress_wake);
    pthread_mutex_unlock(&send_queue_state->queue_lock);
}

void tj_send_queue_push(tj_queued_send_t *q)
{
    tj_send_queue_push_chain(q, q, 1);
}

void tj_send_queue_progress(void)
{
    /* A thread already passing over the queue makes this one's progress. */
    if (tj_send_queue_empty() || pthread_mutex_trylock(&send_queue_state->queue_lock) != 0)
        return;
    pass(false, false, MPI_COMM_NULL, 0, NULL);
    pthread_mutex_unlock(&send_queue_state->queue_lock);
}

void tj_send_queue_flush(void)
{
    if (tj_send_queue_empty())
        return;
    pthread_mutex_lock(&send_queue_state->queue_lock);
    pass(true, false, MPI_COMM_NULL, 0, NULL);
    pthread_mutex_unlock(&send_queue_state->queue_lock);
}

void tj_send_queue_flush_dest(MPI_Comm comm, int dest)
{
    pthread_mutex_lock(&send_queue_state->queue_lock);
    pass(true, true, comm, dest, NULL);
    pthread_mutex_unlock(&send_queue_state->queue_lock);
}

void tj_send_queue_flush_one(tj_queued_send_t *q)
{
    pthread_mutex_lock(&send_queue_state->queue_lock);
    if (tj_send_queue_waiting(q))
        pass(true, true, q->comm, q->dest, q);
    pthread_mutex_unlock(&send_queue_state->queue_lock);
}

void tj_send_queue_on_call(int blocking)
{
    if (blocking)
        tj_send_queue_flush();
    else
        tj_send_queue_progress();
}

/* ---- whether to defer, and the progress thread ------------------------------------------- */

/* Fortran bindings of the MPI in the process: an entry point typejit itself does not export. */
static bool fortran_loaded(void)
{
    static const char *const names[] = {"mpi_barrier_",   "mpi_barrier",      "mpi_barrier__",
                                        "MPI_BARRIER",    "mpi_barrier_f08_", "mpi_barrier_f08",
                                        "ompi_barrier_f", "MPI_Barrier_f08"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (dlsym(RTLD_DEFAULT, names[i]) != NULL)
            return true;
    return false;
}

/* Between passes while sends are queued; the thread sleeps on progress_wake while none are. */
#define PROGRESS_NAP_NS 20000

static void *progress_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&send_queue_state->queue_lock);
    while (!send_queue_state->progress_stop) {
        if (send_queue_state->head == NULL) {
            pthread_cond_wait(&send_queue_state->progress_wake, &send_queue_state->queue_lock);
            continue;
        }
        pass(false, false, MPI_COMM_NULL, 0, NULL);
        pthread_mutex_unlock(&send_queue_state->queue_lock);
        nanosleep(&(struct timespec){0, PROGRESS_NAP_NS}, NULL);
        pthread_mutex_lock(&send_queue_state->queue_lock);
    }
    pthread_mutex_unlock(&send_queue_state->queue_lock);
    return NULL;
}

void tj_send_queue_init(void)
{
    int level = MPI_THREAD_SINGLE;
    sigset_t all, old;

    send_queue_state->active = tj_config()->progress != TJ_PROGRESS_OFF && !fortran_loaded();
    if (!send_queue_state->active) {
        if (tj_config()->progress != TJ_PROGRESS_OFF)
            tj_log_debug("Fortran MPI bindings are loaded: device sends wait for their packs "
                         "inside the call");
        return;
    }
    if (tj_config()->progress != TJ_PROGRESS_THREAD)
        return;
    if (PMPI_Query_thread(&level) != MPI_SUCCESS || level != MPI_THREAD_MULTIPLE) {
        tj_log_debug("TYPEJIT_PROGRESS=thread needs MPI_THREAD_MULTIPLE; sends start at the MPI "
                     "calls instead");
        return;
    }
    send_queue_state->progress_stop = false;
    /* Every signal blocked: the application's handlers run on its own threads. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    send_queue_state->progress_running =
        pthread_create(&send_queue_state->progress_thread, NULL, progress_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!send_queue_state->progress_running)
        tj_log_warn("no progress thread could be started; sends start at the MPI calls instead");
    else
        pthread_setname_np(send_queue_state->progress_thread, "typejit-progress");
}

void tj_send_queue_finalize(void)
{
    if (send_queue_state->progress_running) {
        pthread_mutex_lock(&send_queue_state->queue_lock);
        send_queue_state->progress_stop = true;
        pthread_cond_signal(&send_queue_state->progress_wake);
        pthread_mutex_unlock(&send_queue_state->queue_lock);
        pthread_join(send_queue_state->progress_thread, NULL);
        send_queue_state->progress_running = false;
    }
    tj_send_queue_flush();
    send_queue_state->active = false;
}
