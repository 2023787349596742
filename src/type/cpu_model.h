/* SPDX-License-Identifier: BSD-3-Clause */
/* The host cost model: whether typejit's CPU packer or the system MPI packs and unpacks the host
 * buffers of a strided type under TYPEJIT_HOST=auto, decided once per type at its commit. */
#ifndef TJ_TYPE_CPU_MODEL_H
#define TJ_TYPE_CPU_MODEL_H

#include "type/block.h"
#include "type/cpu.h"

/* The packer the engine stands in for: the system MPI's, whose costs differ by family. */
typedef enum {
    TJ_CPU_PEER_OTHER,    /* an MPI of no family below: the engine where Open MPI's is behind */
    TJ_CPU_PEER_OPEN_MPI, /* Open MPI's convertor: one memcpy call per contiguous run */
    TJ_CPU_PEER_MPICH,    /* MPICH's Yaksa: loops over elements, a byte at a time for MPI_BYTE */
} tj_cpu_peer_t;

/* Set plan->pack and plan->unpack of @p block (planned by tj_cpu_plan) for @p peer: true where
 * the engine is ahead of the peer's packer on this shape, as bench/bench_pack_cpu measures. */
void tj_cpu_model_decide(const tj_block_t *block, tj_cpu_peer_t peer, tj_cpu_plan_t *plan);

#endif /* TJ_TYPE_CPU_MODEL_H */
