/* SPDX-License-Identifier: BSD-3-Clause */
/* The method model: how a send or receive moves a device-resident datatype (pack into device
 * memory for a CUDA-aware MPI, pack straight into mapped host memory, or pack on the device and
 * copy to host memory), chosen per call from a table measured on this kind of machine
 * (`typejit measure`) or from documented defaults. */
#ifndef TJ_MOVE_MODEL_H
#define TJ_MOVE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "type/block.h"
#include "type/table.h"

typedef enum {
    TJ_METHOD_AUTO = 0, /* let the model choose (TYPEJIT_METHOD=auto) */
    TJ_METHOD_DEVICE,   /* pack into device memory; the CUDA-aware system MPI sends it */
    TJ_METHOD_ONESHOT,  /* the kernel writes packed bytes into mapped pinned host memory */
    TJ_METHOD_STAGED,   /* pack into device memory, copy to pinned host memory, send that */
} tj_method_t;

/* "auto", "device", "oneshot", "staged". */
const char *tj_method_name(tj_method_t method);

/* True when the system MPI accepts device buffers: TYPEJIT_CUDA_AWARE=yes|no, else (auto) the
 * MPI's own answer, looked up with dlsym once: Open MPI's MPIX_Query_cuda_support(), MPICH's
 * MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &flag). Call after MPI_Init. */
bool tj_model_cuda_aware(void);

/* Settings that contradict what the system MPI says of itself, said once per job after MPI_Init:
 * TYPEJIT_CUDA_AWARE=yes with an MPI whose query function answers no. */
void tj_model_check_settings(void);

/* The method for moving `count` objects of @p block (NULL for a type that is not strided: only
 * its packed size @p bytes is known) to or from a peer on this node (@p same_node) or not.
 * TYPEJIT_METHOD forces one (device only with a CUDA-aware MPI; otherwise the model's choice
 * among the others, said once). Without a system table the documented defaults decide, and
 * that is said once at TYPEJIT_LOG=info. A choice is remembered per (block, count, same_node).
 * Never returns TJ_METHOD_AUTO, never TJ_METHOD_DEVICE when the MPI is not CUDA-aware. */
tj_method_t tj_model_choose(const tj_block_t *block, int64_t count, int64_t bytes, bool same_node);

/* tj_model_choose (or, @p recv, tj_model_choose_recv) for a peer across the network, through
 * the methods @p plan (a type's record's: type/table.h; NULL: none) remembers for its last
 * packed sizes, so that a steady call takes no lock. */
tj_method_t tj_model_choose_remembered(tj_type_plan_t *plan, const tj_block_t *block, int64_t count,
                                       int64_t bytes, bool recv);

/* A remembered method: the packed size, whether a receive, and the method, in one word. */
#define TJ_MODEL_METHOD_WORD(_bytes, _recv, _m)                                                    \
    (((unsigned long long)(_bytes) << 4) | ((_recv) ? 8u : 0u) | (unsigned)(_m))

static inline tj_method_t tj_model_choose_for(tj_type_plan_t *plan, const tj_block_t *block,
                                              int64_t count, int64_t bytes, bool recv)
{
    /* Sizes beyond 2^59 bytes are not remembered (no such message fits an MPI count). */
    if (plan != NULL && bytes >= 0 && bytes < ((int64_t)1 << 59))
        for (int i = 0; i < TJ_PLAN_METHODS; i++) {
            unsigned long long w = atomic_load_explicit(&plan->methods[i], memory_order_relaxed);
            if (w != 0 && (w & ~7ull) == TJ_MODEL_METHOD_WORD(bytes, recv, 0))
                return (tj_method_t)(w & 7);
        }
    return tj_model_choose_remembered(plan, block, count, bytes, recv);
}

/* As tj_model_choose, for a receive: the model predicts the receive and the unpack (device:
 * unpack from device memory; oneshot: the kernel reads mapped host memory; staged: copy to the
 * device, then unpack). */
tj_method_t tj_model_choose_recv(const tj_block_t *block, int64_t count, int64_t bytes,
                                 bool same_node);

/* Whether a contiguous device buffer is staged through host memory rather than handed to the
 * system MPI as it is: TYPEJIT_STAGE_CONTIGUOUS=yes|no, else (auto) when the MPI is not
 * CUDA-aware. */
bool tj_model_stage_contiguous(void);

/* The predicted microseconds of each method (indexed by tj_method_t; [TJ_METHOD_AUTO] is 0)
 * for a send (or, with @p recv, a receive), from the system table. False, @p us untouched, when
 * there is no table. For tests and `typejit measure`'s summary. */
bool tj_model_predict(const tj_block_t *block, int64_t count, int64_t bytes, bool same_node,
                      bool recv, double us[4]);

/* Where the system table of @p device is read from: TYPEJIT_SYSTEM_TABLE, else
 * `<cache root>/system/sm_<SM>-<device name>-<driver version>.txt`. Needs a device unless
 * TYPEJIT_SYSTEM_TABLE is set. */
tj_status_t tj_model_table_path(int device, char *path, size_t len);

/* Forget the table and the remembered choices (MPI_Finalize). */
void tj_model_finalize(void);

#endif /* TJ_MOVE_MODEL_H */
