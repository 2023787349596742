/* Staging buffers: device memory and page-locked mapped host memory, taken by one call at a time
 * and kept in one small process-wide pool, so that a busy process does not allocate on every
 * call. A buffer belongs to the context it was allocated in and is reused only there. */
#ifndef TJ_SEND_STAGING_H
#define TJ_SEND_STAGING_H

#include <stddef.h>

#include "gpu/cuda.h"

typedef enum { TJ_STAGE_DEVICE, TJ_STAGE_PINNED } tj_stage_kind_t;

typedef struct tj_stage {
    tj_stage_kind_t kind;
    tj_gpu_ctx_t ctx;
    unsigned gen; /* the context's instance (tj_gpu_generation) it was allocated in */
    size_t len;
    tj_devptr_t dev; /* device address: the buffer itself, or the mapping of the pinned one */
    void *host;      /* host address of a pinned buffer; NULL for device memory */
    struct tj_stage *next;
} tj_stage_t;

/* A buffer of at least @p len bytes in the current scope's context, for the caller alone until
 * tj_staging_put. */
tj_status_t tj_staging_get(tj_stage_kind_t kind, size_t len, tj_stage_t **buf);

/* Give a buffer back: kept for reuse while the pool is small, freed otherwise. */
void tj_staging_put(tj_stage_t *buf);

/* Free every idle buffer, each in its own context (MPI_Finalize). */
void tj_staging_finalize(void);

#endif /* TJ_SEND_STAGING_H */
