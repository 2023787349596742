/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU packer: packs and unpacks host buffers straight from a strided block. */
#ifndef TJ_TYPE_CPU_H
#define TJ_TYPE_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "type/block.h"
#include "type/layout.h"

/* Instruction sets the row loops are compiled for, lowest first: portable C (16-byte moves),
 * AVX2 (32-byte moves), AVX-512 with BW and VBMI2 (64-byte moves; masked compress and expand for
 * short runs close together). */
typedef enum { TJ_CPU_ISA_BASE, TJ_CPU_ISA_AVX2, TJ_CPU_ISA_AVX512, TJ_CPU_ISAS } tj_cpu_isa_t;

/* The run lengths the row loops move with constant-size moves. */
#define TJ_CPU_RUNS(_X) _X(1) _X(2) _X(4) _X(8) _X(16) _X(32) _X(64) _X(128) _X(256)

/* The loop that moves one row of runs: TJ_CPU_LOOP_1 to TJ_CPU_LOOP_256, one per run length of
 * TJ_CPU_RUNS, one for any length, and the dense loop (runs shorter than their stride, several
 * to 64 bytes: TJ_CPU_ISA_AVX512 only). */
#define TJ_CPU_LOOP_OF(_run) TJ_CPU_LOOP_##_run,
/* clang-format off */
typedef enum {
    TJ_CPU_RUNS(TJ_CPU_LOOP_OF)
    TJ_CPU_LOOP_ANY,
    TJ_CPU_LOOP_DENSE,
    TJ_CPU_LOOPS
} tj_cpu_loop_t;
/* clang-format on */
#undef TJ_CPU_LOOP_OF

/* How the CPU packer moves one strided block, chosen once (at commit) from its shape and the
 * processor: the contiguous run, the loop that moves a row of runs, its instruction set, and
 * whether the engine is ahead of the system MPI for the type (TYPEJIT_HOST=auto; set by
 * tj_cpu_model_decide, false until then). */
typedef struct {
    int64_t run;   /* bytes of each contiguous run: counts[0] and the dimensions continuing it */
    uint8_t first; /* the first dimension after those */
    uint8_t loop;  /* tj_cpu_loop_t for runs of `run` bytes */
    uint8_t dense; /* 1: rows whose stride allows it use TJ_CPU_LOOP_DENSE */
    uint8_t isa;   /* tj_cpu_isa_t */
    bool pack;     /* TYPEJIT_HOST=auto: the engine packs host calls of the type */
    bool unpack;   /* ... and unpacks them */
} tj_cpu_plan_t;

/* The highest instruction set this processor runs the loops with. */
tj_cpu_isa_t tj_cpu_isa_best(void);

/* The plan of @p block on this processor (tj_cpu_isa_best). */
void tj_cpu_plan(const tj_block_t *block, tj_cpu_plan_t *plan);

/* The plan of @p block with loops of instruction set @p isa at most (lowered to what the
 * processor runs). tj_cpu_plan is this at tj_cpu_isa_best(); a lower level is for the oracle
 * test and bench_pack_cpu, which check and compare every level the processor runs. */
void tj_cpu_plan_isa(const tj_block_t *block, tj_cpu_isa_t isa, tj_cpu_plan_t *plan);

/* Pack @p count objects of @p block starting at @p typed into @p packed (count * size bytes),
 * in typemap order, with the loops of @p plan (tj_cpu_plan of the same block). */
void tj_cpu_pack_plan(const tj_block_t *block, const tj_cpu_plan_t *plan, const void *typed,
                      int64_t count, void *packed);

/* Unpack @p count objects from @p packed into the layout at @p typed. Elements are written in
 * typemap order, so where the layout overlaps itself the last write wins, as in MPI_Unpack. */
void tj_cpu_unpack_plan(const tj_block_t *block, const tj_cpu_plan_t *plan, const void *packed,
                        int64_t count, void *typed);

/* The rows a pack (or unpack) of @p count objects moves at once with a group loop: rows of runs
 * a cache line apart or more, started less than a line apart (transposes), moved run by run
 * across a group of them; 1 where they are moved row by row. */
int64_t tj_cpu_group_rows(const tj_block_t *block, const tj_cpu_plan_t *plan, int64_t count,
                          bool unpack);

/* The same, planning the block at the call. */
void tj_cpu_pack(const tj_block_t *block, const void *typed, int64_t count, void *packed);
void tj_cpu_unpack(const tj_block_t *block, const void *packed, int64_t count, void *typed);

/* The same for a finished layout: its parts in typemap order. */
void tj_cpu_pack_layout(const tj_layout_t *l, const void *typed, int64_t count, void *packed);
void tj_cpu_unpack_layout(const tj_layout_t *l, const void *packed, int64_t count, void *typed);

#endif /* TJ_TYPE_CPU_H */
