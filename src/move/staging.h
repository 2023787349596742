/* SPDX-License-Identifier: BSD-3-Clause */
/* Staging buffers: device memory and page-locked mapped host memory, taken by one call at a time
 * and kept in one small process-wide pool, so that a busy process does not allocate on every
 * call. A buffer belongs to the context it was allocated in and is reused only there. Where
 * page-locked memory cannot be had, host staging is pageable memory instead: slower (copies to
 * and from it are synchronous, kernels cannot reach it), never failing for that; where device
 * memory cannot be had, kernels pack into page-locked host memory instead. */
#ifndef TJ_MOVE_STAGING_H
#define TJ_MOVE_STAGING_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu/cuda.h"

typedef enum { TJ_STAGE_DEVICE, TJ_STAGE_PINNED, TJ_STAGE_PAGEABLE } tj_stage_kind_t;

typedef struct tj_stage {
    tj_stage_kind_t kind;
    tj_gpu_ctx_t ctx; /* NULL for pageable memory */
    unsigned gen;     /* the context's instance (tj_gpu_generation) it was allocated in */
    size_t len;
    tj_devptr_t dev; /* device address: the buffer itself, or the mapping of the pinned one; 0
                      * for pageable memory, which kernels cannot reach */
    void *host;      /* host address of a pinned or pageable buffer; NULL for device memory */
    struct tj_stage *next;
} tj_stage_t;

/* A buffer of at least @p len bytes in the current scope's context, for the caller alone until
 * tj_staging_put. TJ_STAGE_PINNED may give TJ_STAGE_PAGEABLE memory when page-locked mapped
 * memory cannot be had (counted in staging_pageable, said once at info level): callers look at
 * `kind` (or `dev`) before handing it to a kernel. */
tj_status_t tj_staging_get(tj_stage_kind_t kind, size_t len, tj_stage_t **buf);

/* A buffer of at least @p len bytes that kernels reach, in the current scope's context, for the
 * caller alone until tj_staging_put: device memory, or where device memory cannot be had (an
 * application that holds the device's memory) page-locked mapped host memory (TJ_STAGE_PINNED,
 * counted in staging_mapped, said once at info level). Fails only when neither can be had. */
tj_status_t tj_staging_get_reachable(size_t len, tj_stage_t **buf);

/* Pageable host memory of @p len bytes, zeroed, in no context: for a call that must hand the
 * system MPI some bytes when it cannot move the application's. */
tj_status_t tj_staging_host(size_t len, tj_stage_t **buf);

/* What a pointer query would say of @p buf's first byte (device memory, mapped pinned memory, or
 * host memory the kernels cannot reach), for a call on device @p device. */
tj_gpu_ptr_t tj_staging_where(const tj_stage_t *buf, int device);

/* Give a buffer back: kept for reuse while the pool is small, freed otherwise. */
void tj_staging_put(tj_stage_t *buf);

/* Free every idle buffer, each in its own context (MPI_Finalize). */
void tj_staging_finalize(void);

#endif /* TJ_MOVE_STAGING_H */
