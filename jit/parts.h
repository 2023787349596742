/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel generation for layouts (type/layout.h): one pack or unpack kernel that moves every part
 * of a layout (templates/parts.cu), its launch geometry and arguments, and the part table it
 * reads from device memory when the table is not baked into its source. */
#ifndef TJ_JIT_PARTS_H
#define TJ_JIT_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jit/gen.h"
#include "type/layout.h"

/* The parts kernels' fourth argument, by value (templates/parts.cu declares the same layout).
 * A baked kernel reads only what its source lacks; the launch passes every field. */
typedef struct {
    uint64_t table;   /* device address of the part table; 0 when baked */
    long long parts;  /* parts of one frame element */
    long long fbytes; /* packed bytes of one frame element */
    long long obytes; /* packed bytes of one object */
    long long extent; /* bytes from one object to the next */
} tj_parts_args_t;

/* CUDA source of the kernel @p name moving the finished layout @p l (at start 0: launched at
 * the typed pointer plus l->start) in direction @p dir, the kernel (@p word, @p one) of the
 * layout (tj_layout_kernel_word: a baked layout's moves each segment in its own word, W the
 * widest, for launches of one object with @p one; a device table's every part in words of W):
 *   extern "C" __global__ void NAME(void *dst, const void *src, long long count,
 *                                   const tj_parts_args_t args)
 * PACK: src is the typed pointer, dst the packed one; UNPACK the other way round. A baked layout
 * (l->baked) has its segment table in the source; any other reads args.table (tj_gen_parts_table)
 * and takes its extent and sizes from args. Launch it with tj_gen_parts_launch; with @p serial
 * the launch is one thread, which writes in typemap order (the unpack of a layout whose bytes
 * overlap: the last write wins, as in MPI_Unpack). TJ_ERR_INVALID for a bad layout, word or
 * name; TJ_ERR_NOMEM. */
tj_status_t tj_gen_parts_source(const tj_layout_t *l, int word, bool one, tj_dir_t dir,
                                const char *name, char **source);

/* Launch geometry of the kernel (@p word, @p one) of @p l for `count` objects; one thread when
 * @p serial. */
void tj_gen_parts_launch(const tj_layout_t *l, int word, bool one, int64_t count, bool serial,
                         tj_launch_t *launch);

/* The kernel's argument for a table at device address @p table (0 for a baked layout). */
void tj_gen_parts_args(const tj_layout_t *l, uint64_t table, tj_parts_args_t *args);

/* Bytes of the part table of @p l in device memory. */
size_t tj_gen_parts_table_bytes(const tj_layout_t *l);

/* Write the part table of @p l (tj_gen_parts_table_bytes bytes) to @p buf, for a copy to the
 * device: the packed offsets, then the displacements (8-byte aligned), then the shapes when
 * there are several, in the element sizes the kernel's source names (l->pre_bytes,
 * l->disp_bytes). */
void tj_gen_parts_table(const tj_layout_t *l, void *buf);

#endif /* TJ_JIT_PARTS_H */
