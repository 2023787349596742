/* SPDX-License-Identifier: BSD-3-Clause */
/* The support layer's state (state.h). */
#include "util/state.h"

tj_util_state_t tj_util_state = {
    .log = {.level = TJ_LOG_WARN, .rank = -1, .claim_lock = PTHREAD_MUTEX_INITIALIZER},
    .config = {.once = PTHREAD_ONCE_INIT, .deferred_lock = PTHREAD_MUTEX_INITIALIZER},
    .stats = {.blocks_lock = PTHREAD_MUTEX_INITIALIZER, .key_once = PTHREAD_ONCE_INIT},
};
_Thread_local tj_util_thread_t tj_util_thread;
