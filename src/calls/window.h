/* SPDX-License-Identifier: BSD-3-Clause */
/* Windows in device memory on an MPI that is not CUDA-aware, in MPI's separate memory model
 * (MPI_WIN_SEPARATE): the system MPI's window is made on host memory, the window's public copy,
 * which every one-sided operation of every process reads and writes; the device memory the
 * application gave is the private copy, its loads and stores. The window synchronisations of
 * the process that owns the window make the two consistent, as the standard's rules for that
 * model say: local stores become visible in the public copy at a fence, post, unlock of its own
 * window, unlock_all and Win_sync (publish); updates by other processes become visible in the
 * private copy at a fence, wait (or a test that returns true), lock of its own window, lock_all
 * and Win_sync, and at Win_free (absorb). A third host copy holds the bytes both copies had at
 * the last synchronisation, so that each direction moves only what changed on its side. */
#ifndef TJ_CALLS_WINDOW_H
#define TJ_CALLS_WINDOW_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "calls/state.h"

/* Windows with a host public copy: zero means the synchronisation wrappers have nothing to do
 * for the window's own memory (one relaxed load). */
static inline bool tj_window_any(void)
{
    return atomic_load_explicit(&tj_calls_state.window.count, memory_order_relaxed) > 0;
}

typedef struct tj_window tj_window_t;

/* The synchronisations that move bytes between the copies. */
typedef enum {
    TJ_WINDOW_FENCE,
    TJ_WINDOW_POST,
    TJ_WINDOW_WAIT, /* MPI_Win_wait, and MPI_Win_test when it returns true */
    TJ_WINDOW_LOCK, /* MPI_Win_lock and MPI_Win_unlock: only of the process's own window */
    TJ_WINDOW_UNLOCK,
    TJ_WINDOW_LOCK_ALL,
    TJ_WINDOW_UNLOCK_ALL,
    TJ_WINDOW_SYNC,
} tj_window_sync_t;

/* Whether @p size bytes at @p base, the memory of a window @p fn makes, lie in device or managed
 * memory (*out set to a new public copy holding their bytes, for MPI_Win_create) or not (*out
 * NULL: the call goes to the system MPI as it is). MPI_ERR_BUFFER (one error line naming @p fn)
 * when the bytes reach outside one device allocation, MPI_ERR_NO_MEM, MPI_ERR_INTERN when the
 * driver fails (it said why). @p rank: this process in the window's group. */
int tj_window_make(const char *fn, void *base, MPI_Aint size, int rank, tj_window_t **out);

/* The public copy's first byte: the base to give the system MPI's MPI_Win_create. */
void *tj_window_public(const tj_window_t *w);

/* The system MPI made @p win on the public copy: remembered until tj_window_freed. */
void tj_window_created(tj_window_t *w, MPI_Win win);

/* The system MPI did not make the window: release the public copy. */
void tj_window_discard(tj_window_t *w);

/* Before the synchronisation @p sync of @p win (@p asserts its assertions; @p rank the target of
 * a lock or unlock, else ignored) reaches the system MPI: what that call makes visible in the
 * public copy. MPI result; MPI_SUCCESS for a window without a public copy of typejit's. */
int tj_window_before(MPI_Win win, tj_window_sync_t sync, int asserts, int rank);

/* After the system MPI's synchronisation returned successfully: what it makes visible in the
 * private copy. MPI result. */
int tj_window_after(MPI_Win win, tj_window_sync_t sync, int asserts, int rank);

/* The system MPI freed @p win: the updates its public copy holds are written to the private copy,
 * and the public copy is released. MPI result. */
int tj_window_freed(MPI_Win win);

/* The device memory of @p win (the MPI_WIN_BASE an application must see), or NULL when typejit
 * made no public copy for it. */
void *tj_window_base(MPI_Win win);

/* MPI_Finalize: forget the windows the application did not free. */
void tj_window_finalize(void);

#endif /* TJ_CALLS_WINDOW_H */
