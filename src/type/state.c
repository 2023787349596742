/* SPDX-License-Identifier: BSD-3-Clause */
/* The type engine's state (state.h): its definition and static initial values, and nothing
 * else. */
#include "type/state.h"

tj_type_state_t tj_type_state = {
    .table =
        {
            .threaded = true,
            .lock = PTHREAD_RWLOCK_INITIALIZER,
            .record_lock = PTHREAD_MUTEX_INITIALIZER,
        },
    .lazy =
        {
            .done_lock = PTHREAD_MUTEX_INITIALIZER,
            .done = PTHREAD_COND_INITIALIZER,
        },
#if MPI_VERSION < 4
    .contents = {.large_once = PTHREAD_ONCE_INIT},
#endif
    .flatten = {.darray_once = PTHREAD_ONCE_INIT},
};
_Thread_local tj_type_thread_t tj_type_thread;
