/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI calls layer's state (state.h): its definition only. */
#include "calls/state.h"

tj_calls_state_t tj_calls_state = {
    .send_queue =
        {
            .queue_lock = PTHREAD_MUTEX_INITIALIZER,
            .tail = &tj_calls_state.send_queue.head,
            .progress_wake = PTHREAD_COND_INITIALIZER,
        },
    .request =
        {
            .table_lock = ATOMIC_FLAG_INIT,
            .buckets = tj_calls_state.request.first_buckets,
            .nbuckets = TJ_REQUEST_TABLE_FIRST,
            .spare_once = PTHREAD_ONCE_INIT,
        },
    .rma = {.lock = PTHREAD_MUTEX_INITIALIZER},
    .window = {.table_lock = PTHREAD_MUTEX_INITIALIZER},
    .p2p = {.self_lock = PTHREAD_MUTEX_INITIALIZER},
    .file_split = {.lock = PTHREAD_MUTEX_INITIALIZER},
};

_Thread_local tj_calls_thread_t tj_calls_thread;
