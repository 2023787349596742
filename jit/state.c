/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel generation layer's state (state.h). */
#include "jit/state.h"

tj_jit_state_t tj_jit_state = {
    .nvrtc =
        {
            .load_once = PTHREAD_ONCE_INIT,
            .load_status = TJ_ERR_NO_NVRTC,
            .build_id = "unknown",
            .failure_lock = PTHREAD_MUTEX_INITIALIZER,
            .arch_once = PTHREAD_ONCE_INIT,
        },
    .template = {.hash_once = PTHREAD_ONCE_INIT},
};
