/* SPDX-License-Identifier: BSD-3-Clause */
/* The type engine's mutable state: one structure for the process, one for each thread, a
 * sub-structure per module. */
#ifndef TJ_TYPE_STATE_H
#define TJ_TYPE_STATE_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "typejit.h"
#include "util/common.h"
#include "util/slab.h"

struct tj_layout;
struct tj_type_info;
struct tj_table_slot;

#if MPI_VERSION < 4
/* MPI_Type_get_envelope_c and MPI_Type_get_contents_c, looked up in an MPI older than its
 * header (contents.c). */
typedef int (*tj_envelope_c_fn)(MPI_Datatype, MPI_Count *, MPI_Count *, MPI_Count *, MPI_Count *,
                                int *);
typedef int (*tj_contents_c_fn)(MPI_Datatype, MPI_Count, MPI_Count, MPI_Count, MPI_Count, int[],
                                MPI_Aint[], MPI_Count[], MPI_Datatype[]);
#endif

/* The layer's state for the process. */
typedef struct {
    /* The type table (table.c). What every lookup reads, on a line apart from what every change
     * writes. */
    struct {
        /* Until MPI says otherwise, any thread may call in (tj_table_set_threaded). */
        _Alignas(64) atomic_bool threaded;
        struct tj_table_slot *slots;
        size_t nslots;                    /* zero or a power of two */
        _Alignas(64) atomic_uint changes; /* grows at every change (tj_table_last_t) */
        size_t nused;                     /* <= nslots / 2 */
        pthread_rwlock_t lock;
        /* Entries and commit records come from pools of their own (util/slab.h): no malloc
         * per type, and none of typejit's records between the system MPI's allocations. Their
         * object sizes are set at their first use (table.c: the types are its modules').
         * Entries are guarded by the table's write lock; records by a lock of their own, since
         * the last holder of one may release it outside any call of the table. */
        tj_slab_t entry_pool;
        tj_slab_t info_pool;
        pthread_mutex_t record_lock;
        size_t live_records;
        atomic_ullong serials;
    } table;
    /* Builds that ended, counted, so that a waiter notices any end after it asked the table: a
     * leaf lock, never held with the table's (lazy.c). */
    struct {
        pthread_mutex_t done_lock;
        pthread_cond_t done;
        unsigned long builds_done;
    } lazy;
#if MPI_VERSION < 4
    /* The large-count calls, looked up once (contents.c). */
    struct {
        tj_envelope_c_fn envelope_c;
        tj_contents_c_fn contents_c;
        pthread_once_t large_once;
    } contents;
#endif
    /* Whether the system MPI builds distributed arrays as MPI defines them, decided once
     * (flatten.c). */
    struct {
        pthread_once_t darray_once;
        bool darray_standard;
    } flatten;
    /* The hooks of the layer that keeps device state with layouts (layout.c,
     * tj_layout_set_hooks). */
    struct {
        _Atomic(void (*)(struct tj_layout *l)) release_hook;
    } layout;
} tj_type_state_t;

extern TJ_LOCAL tj_type_state_t tj_type_state;

/* The last record this thread looked up, while the table has not changed since (`changes`
 * grows at every change): a program that moves one type call after call finds it in a few
 * loads. Only below MPI_THREAD_MULTIPLE, where a borrowed record is not counted (no other thread
 * can drop it during the call). */
typedef struct {
    MPI_Datatype type;
    const struct tj_type_info *info;
    unsigned changes;
} tj_table_last_t;

/* Named types translated on this thread (named.c). */
#define TJ_NAMED_CACHE 4
typedef struct {
    MPI_Datatype type;
    tj_status_t st;
    int64_t lb, size; /* the dense run, when st is TJ_OK */
} tj_named_entry_t;

/* The layer's state for each thread. Initial-exec: read on every lookup as one load (the
 * library is loaded at start). */
typedef struct {
    struct {
        tj_table_last_t last;
    } table;
    /* The last few named types translated, used and next to replace. */
    struct {
        tj_named_entry_t cache[TJ_NAMED_CACHE];
        int used, next;
    } named;
} tj_type_thread_t;

extern _Thread_local TJ_LOCAL tj_type_thread_t tj_type_thread
    __attribute__((tls_model("initial-exec")));

#endif
