/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel layer's state (state.h): its definition and initial values, and no code. */
#include "kernels/state.h"

#include <limits.h>

tj_kernels_state_t tj_kernels_state = {
    .compiler =
        {
            .lock = PTHREAD_MUTEX_INITIALIZER,
            .work = PTHREAD_COND_INITIALIZER,
            .tail = &tj_kernels_state.compiler.head,
            .exit_once = PTHREAD_ONCE_INIT,
            .fork_once = PTHREAD_ONCE_INIT,
        },
    .launch = {.fused_once = PTHREAD_ONCE_INIT},
    .lookup =
        {
            .setup_lock = PTHREAD_MUTEX_INITIALIZER,
            .give_up_at = LLONG_MAX,
            .store_ro_override = -1,
        },
    .parttable =
        {
            .list_lock = PTHREAD_MUTEX_INITIALIZER,
            .hook_once = PTHREAD_ONCE_INIT,
        },
    .target =
        {
            .lock = PTHREAD_MUTEX_INITIALIZER,
            .epoch = 1,
            .loadable_once = PTHREAD_ONCE_INIT,
        },
};
_Thread_local tj_kernels_thread_t tj_kernels_thread;
