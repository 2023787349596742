/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernels a commit asks for ahead of its type's first launch: for a freshly committed strided
 * type, when the process uses CUDA (TYPEJIT_JIT=auto: a device buffer met or a context current;
 * always with TYPEJIT_JIT=always), its pack and unpack kernels for launches on aligned buffers,
 * queued for the background compiler or (TYPEJIT_JIT_SYNC=1) compiled now into the kernel lookup's
 * memory table, where the launches find them. A process that starts to use CUDA asks then for
 * the kernels of the types committed before: at its next commit or its first launch, whichever
 * comes first. */
#ifndef TJ_KERNELS_PREPARE_H
#define TJ_KERNELS_PREPARE_H

#include "type/table.h"

/* Ask for the kernels of the committed type @p info, as the settings say. A layout's kernels are
 * asked for by its launches instead (it is built at the first of them: type/lazy.h). */
void tj_prepare_commit(const tj_type_info_t *info);

/* The process's first kernel launch is about to run: it uses CUDA. */
void tj_prepare_launching(void);

/* Where the kernels of a type stand, for its description: "jit" (both directions in this
 * process, for device 0), "compiling" or "queued" (in the background compiler), "later" (asked
 * for when the process meets the GPU), "none" (not asked for: no device, TYPEJIT_JIT=off, not
 * strided, or asked for later by a device call). */
const char *tj_prepare_state(const tj_type_info_t *info);

#endif /* TJ_KERNELS_PREPARE_H */
