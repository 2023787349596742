/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel cache's state (state.h): its definition and static initial values, and nothing
 * else. */
#include "cache/state.h"

tj_cache_state_t tj_cache_state = {
    .trim = {.checked = ATOMIC_FLAG_INIT},
};
_Thread_local tj_cache_thread_t tj_cache_thread;
