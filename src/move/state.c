/* SPDX-License-Identifier: BSD-3-Clause */
/* The byte movement layer's state (state.h): its definition only. */
#include "move/state.h"

tj_move_state_t tj_move_state = {
    .fused = {.checked_lock = PTHREAD_MUTEX_INITIALIZER},
    .model =
        {
            .aware_once = PTHREAD_ONCE_INIT,
            .table_lock = PTHREAD_MUTEX_INITIALIZER,
            .memo_lock = PTHREAD_MUTEX_INITIALIZER,
        },
    .staging =
        {
            .pool_lock = PTHREAD_MUTEX_INITIALIZER,
            .cache_once = PTHREAD_ONCE_INIT,
        },
};

_Thread_local tj_move_thread_t tj_move_thread;
