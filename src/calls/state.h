/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI calls layer's mutable state: one structure for the process, one for each thread, a
 * sub-structure per module (defined in state.c). */
#ifndef TJ_CALLS_STATE_H
#define TJ_CALLS_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/common.h"

/* Buckets of the request table at first: a fixed array, grown (at a reserve, when records
 * outnumber buckets) where memory allows; a table that cannot grow only has longer chains. */
#define TJ_REQUEST_TABLE_FIRST 256

/* Where the exported entry points read send_queue.length (src/interpose/exports.c, whose
 * trampolines are written in assembly): the start of the structure. */
#define TJ_CALLS_QUEUE_LENGTH_AT 0

struct tj_request;
struct tj_queued_send;
struct tj_rma_op;
struct tj_window;
struct tj_self_comm;
struct tj_file_split_entry;

typedef struct {
    /* The send queue (send_queue.c). What every exported MPI call reads at its entry, on a line
     * of its own apart from the queue's lock and list. */
    struct {
        _Alignas(64) atomic_int length; /* sends in the queue */
        /* Whether sends may be deferred in this process (tj_send_queue_enabled): written by
         * tj_send_queue_init and _finalize only. */
        bool active;
        _Alignas(64) pthread_mutex_t queue_lock;
        struct tj_queued_send *head;
        struct tj_queued_send **tail;
        /* The progress thread and what wakes it. */
        pthread_t progress_thread;
        bool progress_running, progress_stop;
        pthread_cond_t progress_wake;
    } send_queue;
    /* The request table (request.c): buckets whose chains run through the records, and the
     * detached requests the application freed while they were active (request_detached.c). */
    struct {
        /* A spinning lock: every section under it is a few loads and stores (allocations and
         * frees run outside it), and a steady request takes it twice. */
        _Alignas(64) atomic_flag table_lock;
        atomic_int count; /* requests in the table or detached (tj_request_live) */
        _Atomic size_t nbuckets;
        size_t nrecords;
        struct tj_request **buckets;
        struct tj_request *detached;
        atomic_bool any_detached; /* detached is not empty: tj_request_progress has work */
        struct tj_request *first_buckets[TJ_REQUEST_TABLE_FIRST];
        pthread_key_t spare_key; /* frees a thread's spare records when it ends */
        pthread_once_t spare_once;
    } request;
    /* Staged one-sided operations pending until they complete (rma.c). */
    struct {
        _Alignas(64) pthread_mutex_t lock;
        struct tj_rma_op *list;
        atomic_int count; /* operations in the list (tj_rma_pending) */
    } rma;
    /* Windows in device memory (window.c). */
    struct {
        pthread_mutex_t table_lock;
        struct tj_window *table;
        atomic_int count; /* windows in the table (tj_window_any) */
    } window;
    /* The pool of private duplicates of MPI_COMM_SELF (p2p.c). */
    struct {
        pthread_mutex_t self_lock;
        struct tj_self_comm *self_free;
    } p2p;
    /* The staged buffers of split collective file accesses in progress (file_split.c). */
    struct {
        pthread_mutex_t lock;
        struct tj_file_split_entry *entries;
    } file_split;
} tj_calls_state_t;

_Static_assert(offsetof(tj_calls_state_t, send_queue.length) == TJ_CALLS_QUEUE_LENGTH_AT,
               "the trampolines of exports.c read the send queue's length there");

extern TJ_LOCAL tj_calls_state_t tj_calls_state;

/* Records given back, kept per thread for its next requests (request.c). */
typedef struct {
    struct tj_request *list;
    int n;
    bool known; /* the thread's key holds it: freed when the thread ends */
} tj_request_spare_t;

/* The layer's state for each thread. Initial-exec: read on every request as one load (the
 * library is loaded at start). */
typedef struct {
    struct {
        tj_request_spare_t spare;
    } request;
} tj_calls_thread_t;

extern _Thread_local TJ_LOCAL tj_calls_thread_t tj_calls_thread
    __attribute__((tls_model("initial-exec")));

#endif /* TJ_CALLS_STATE_H */
