/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point transfers of device-resident datatypes: the send side packs into staging memory
 * chosen by the method model and the system MPI sends those bytes as MPI_PACKED; the receive
 * side receives MPI_PACKED bytes into staging memory and unpacks them when the receive completes.
 * The bytes in the message are exactly what the system MPI would send for the user's type, so
 * either side may be a host buffer, another datatype, or a process without typejit. */
#ifndef TJ_CALLS_P2P_H
#define TJ_CALLS_P2P_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "calls/call_result.h"
#include "gpu/cuda.h"
#include "gpu/batch.h"
#include "move/model.h"
#include "move/staging.h"
#include "type/table.h"

/* One send or receive of a device buffer, from its begin to its end. */
typedef struct {
    bool recv;
    bool persistent; /* a persistent request's: its buffer is queried again at each use */
    tj_method_t method;
    /* The user's type: its record, held from the begin to the end, or, for a type typejit has
     * no record of, a record of its extents alone that the transfer owns (`own_info`). */
    const tj_type_info_t *info;
    bool own_info;
    MPI_Datatype type;      /* the type packed and unpacked with: the user's, or own_type's dup */
    MPI_Datatype user_type; /* the application's handle, which it may free meanwhile */
    bool own_type;          /* `type` is typejit's duplicate, freed by tj_p2p_end */
    void *buf;              /* the user's buffer argument */
    int64_t count;
    MPI_Comm comm;
    int peer;         /* the destination or source rank */
    int64_t bytes;    /* packed bytes of `count` objects */
    tj_gpu_ctx_t ctx; /* the context that owns the buffer */
    tj_gpu_ptr_t at;  /* the buffer's first touched byte, as queried at begin */
    tj_stage_t *dev;  /* device staging, or NULL */
    tj_stage_t *host; /* pinned host staging, or NULL */
    void *message;    /* what the system MPI sends from or receives into */
    /* A send whose pack was left running (tj_p2p_send_begin with @p queue): recorded after it;
     * the system MPI may read `message` only once it has completed. Held by the transfer until
     * the send queue takes it; tj_p2p_end waits for it. */
    tj_gpu_event_t *event;
} tj_xfer_t;

static inline const tj_type_info_t *tj_xfer_info(const tj_xfer_t *x)
{
    return x->info;
}

/* Begin a send of `count` objects of @p type at @p buf: TJ_CALL_PASS (nothing done) when the call
 * is not typejit's (no device buffer, nothing to move, MPI_PROC_NULL, a contiguous buffer a
 * CUDA-aware MPI takes as it is). TJ_CALL_TAKEN: packed, the caller sends x->bytes bytes of
 * MPI_PACKED from x->message and then calls tj_p2p_end. TJ_CALL_FAILED: *rc the MPI error
 * (MPI_ERR_INTERN when the driver cannot tell where the buffer lies), nothing to end. @p info may
 * be NULL for a type typejit has no record of. With @p queue the pack may be left running on the
 * device, x->event recorded after it (NULL: the pack has completed). */
tj_call_result_t tj_p2p_send_begin(const tj_type_info_t *info, MPI_Datatype type, const void *buf,
                                   int64_t count, int peer, MPI_Comm comm, bool queue, tj_xfer_t *x,
                                   int *rc);

/* Keep what the transfer needs beyond the call that began it (receives, non-blocking and
 * persistent sends: the application may free its type meanwhile): the type's handle, which
 * the type's record keeps should the application free it (tj_type_keep_handle), or, for a type
 * typejit has no record of, a duplicate. Returns the MPI result. */
int tj_p2p_keep_type(tj_xfer_t *x);

/* Repack the send of a persistent request (MPI_Start) into its staging: packed (and copied) on
 * the device, then one wait. */
int tj_p2p_send_repack(tj_xfer_t *x);

/* tj_p2p_send_repack with the pack left running: x->event recorded after it (NULL: it has
 * completed, waited for). */
int tj_p2p_send_repack_queued(tj_xfer_t *x);

/* Repack the sends of one MPI_Startall: those of strided types from one device buffer (2 to
 * TJ_FUSED_MAX of them) by one fused kernel launch, into each one's staging; every other one,
 * and any set the fused path cannot serve, as tj_p2p_send_repack; all of them waited for once.
 * Returns the MPI result. */
int tj_p2p_send_repack_set(tj_xfer_t *const *xs, int n);

/* tj_p2p_send_repack_set with the packs left running: *event recorded after all of them, held
 * once (NULL: they have completed, waited for). */
int tj_p2p_send_repack_set_queued(tj_xfer_t *const *xs, int n, tj_gpu_event_t **event);

/* Begin a receive, as tj_p2p_send_begin: on TJ_CALL_TAKEN the caller receives up to x->bytes bytes
 * of MPI_PACKED into x->message, then calls tj_p2p_recv_finish with the receive's status. */
tj_call_result_t tj_p2p_recv_begin(const tj_type_info_t *info, MPI_Datatype type, void *buf,
                                   int64_t count, int peer, MPI_Comm comm, tj_xfer_t *x, int *rc);

/* Unpack what a completed receive brought (its byte count from @p status; a message shorter
 * than the buffer fills the leading part of the typemap, a partial object included, as the
 * system MPI does). A cancelled receive unpacks nothing. With @p batch, the unpack (and the
 * staged method's copy) is launched and its wait left to the batch (as tj_move
 * says: when tj_batch_wait fails, call this again without one); without, it is waited for
 * before this returns. Returns the MPI result. */
int tj_p2p_recv_finish(tj_xfer_t *x, const MPI_Status *status, tj_batch_t *batch);

/* Release the staging buffers and the type duplicate of @p x (after waiting for a pack left
 * running). */
void tj_p2p_end(tj_xfer_t *x);

/* Release what the module keeps (MPI_Finalize). */
void tj_p2p_finalize(void);

#endif /* TJ_CALLS_P2P_H */
