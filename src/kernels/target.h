/* SPDX-License-Identifier: BSD-3-Clause */
/* Compile targets: the arch a device's kernels are compiled for, and whether the CUDA driver can
 * load what the loaded NVRTC produces. */
#ifndef TJ_KERNELS_TARGET_H
#define TJ_KERNELS_TARGET_H

#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>

#include "kernels/state.h"
#include "typejit.h"

/* The compile target for @p device: TYPEJIT_ARCH (when NVRTC compiles for it:
 * tj_nvrtc_arch_setting), else the device's sm through tj_nvrtc_target (computed once per
 * device), else (no device, or -1) "sm_90". */
tj_status_t tj_target_of_device(int device, char *target, size_t len);

/* The target of @p device as far as it is known without NVRTC or a driver call: TYPEJIT_ARCH,
 * "sm_90" for -1 (no device), or what tj_target_of_device found earlier. False when none says. */
bool tj_target_known(int device, char *target, size_t len);

/* TJ_OK when the driver can load what the loaded NVRTC produces (NVRTC's major version is not
 * newer than the driver's); else TJ_ERR_UNSUPPORTED, warned once, and device buffers are
 * staged. */
tj_status_t tj_target_check_loadable(void);
static inline tj_status_t tj_target_loadable(void)
{
    int known = atomic_load_explicit(&tj_kernels_state.target.loadable_known, memory_order_acquire);
    return known != 0 ? (tj_status_t)(known - 1) : tj_target_check_loadable();
}

/* Forget the targets found (a tool's change of cache, MPI_Finalize). */
void tj_target_forget(void);

/* A small number naming device @p device's compile target, from 1 (devices of one target share
 * it), or 0 when tj_target_of_device fails: found once per device, then one load. Until
 * tj_target_forget a number names the same target. */
int tj_target_index_find(int device);
static inline int tj_target_index(int device)
{
    int n;

    if (device >= 0 && device < TJ_TARGET_MAX_DEVICES &&
        (n = atomic_load_explicit(&tj_kernels_state.target.indexes[device],
                                  memory_order_acquire)) != 0)
        return n;
    return tj_target_index_find(device);
}

#endif /* TJ_KERNELS_TARGET_H */
