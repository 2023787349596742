/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI wrappers' state (state.h). */
#include "interpose/state.h"

tj_interpose_state_t tj_interpose_state = {
    .pairing = {.once = PTHREAD_ONCE_INIT},
    .device = {.reported_lock = PTHREAD_MUTEX_INITIALIZER},
#if !defined(MPI_ABI_VERSION) && defined(OPEN_MPI)
    .fortran = {.sentinels_once = PTHREAD_ONCE_INIT},
#endif
};
_Thread_local tj_interpose_thread_t tj_interpose_thread;
