/* SPDX-License-Identifier: BSD-3-Clause */
/* The host cost model (see cpu_model.h). Both packers move the same bytes; what differs is the
 * work per run, which decides where memory does not. bench/bench_pack_cpu measures both on the
 * sweep of bench/RESULTS.md (section "CPU engine against Open MPI and MPICH"), and these rules
 * keep the engine where it was ahead there and leave the shapes where it tied to the system MPI:
 *
 * - Open MPI's convertor calls memcpy once per run. The engine's constant-size moves beat the
 *   call and its bookkeeping on short runs; from 256 B (packs) and 512 B (unpacks) both run at
 *   the speed of a memcpy of each run, within a few percent of each other either way
 *   (0.96-1.05 packing 256-byte runs from objects in the L3 cache), so the system MPI keeps
 *   them.
 * - MPICH 4's Yaksa moves MPI_BYTE runs a byte at a time: the engine is 1.5-50x ahead from runs
 *   of 4 B, and ties it on 1-3-byte runs each alone in its cache line (both wait for a line per
 *   run), and on unpacks of such runs up to 4 B, which MPICH keeps; short runs close together
 *   go to the engine's dense loop where the processor has it (1.8x and more).
 * - Unpacking runs of 1-2 B each alone in its line is bound by fetching the lines for any
 *   packer: Open MPI ties the engine there (1.0-1.3), and keeps them too.
 * - Yaksa has loops of its own for MPI_DOUBLE and the other named types: the same layouts built
 *   of doubles it moves 8 bytes at a time, and ties the engine where both wait for the lines
 *   (faces of 3-D arrays beyond the L2: 0.84-1.3, bench/RESULTS.md "Application layouts"), while
 *   of MPI_BYTE it is 3-4x behind. The block does not say which, so the engine keeps both. */
#include "type/cpu_model.h"

/* Runs up to this long go to the engine in front of Open MPI (and an MPI of unknown family):
 * packs and unpacks. */
#define TJ_MODEL_OPEN_MPI_PACK_RUN   128
#define TJ_MODEL_OPEN_MPI_UNPACK_RUN 256
/* Runs this short, each alone in its cache line, tie: the system MPI keeps them. */
#define TJ_MODEL_LINE_RUN 2
/* Runs this short go to the engine in front of MPICH only in its dense loop. */
#define TJ_MODEL_YAKSA_RUN 3
/* Unpacks of runs this short, each alone in its cache line, tie MPICH in the L3 cache (two
 * stores to each line, whatever their widths: 0.95-0.97); MPICH keeps them. */
#define TJ_MODEL_YAKSA_UNPACK_RUN 4

/* The typed stride between one run and the next: the first dimension after the runs, or the
 * extent for a type of one run (moved as `count` objects). */
static int64_t run_stride(const tj_block_t *b, const tj_cpu_plan_t *plan)
{
    for (int d = plan->first; d < b->ndims; d++)
        if (b->counts[d] > 1)
            return b->strides[d];
    return b->extent;
}

void tj_cpu_model_decide(const tj_block_t *block, tj_cpu_peer_t peer, tj_cpu_plan_t *plan)
{
    const int64_t run = plan->run, stride = run_stride(block, plan);
    const int64_t apart = stride < 0 ? -stride : stride;
    /* Each run in a cache line of its own: the rate of fetching lines decides. */
    const bool alone = apart >= 64;
    const bool dense = plan->dense && stride > run && stride <= 64 - run;

    if (peer == TJ_CPU_PEER_MPICH) {
        /* Runs of 1-3 B: alone in their lines both wait for memory; close together without the
         * dense loop, Yaksa's byte loop and the engine's per-run moves do the same work. */
        plan->pack = plan->unpack = run > TJ_MODEL_YAKSA_RUN || dense;
        if (alone && run <= TJ_MODEL_YAKSA_UNPACK_RUN)
            plan->unpack = false;
        return;
    }
    plan->pack = run <= TJ_MODEL_OPEN_MPI_PACK_RUN;
    plan->unpack = run <= TJ_MODEL_OPEN_MPI_UNPACK_RUN && !(alone && run <= TJ_MODEL_LINE_RUN);
}
