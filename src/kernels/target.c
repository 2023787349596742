/* SPDX-License-Identifier: BSD-3-Clause */
/* Compile targets, per device, found once each. */
#include "kernels/target.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "gpu/cuda.h"
#include "jit/nvrtc.h"
#include "util/config.h"
#include "util/log.h"

/* This module's part of the layer's state. */
static __typeof__(tj_kernels_state.target) *const target_state = &tj_kernels_state.target;

tj_status_t tj_target_of_device(int device, char *target, size_t len)
{
    const char *arch = tj_nvrtc_arch_setting(); /* TYPEJIT_ARCH, checked against NVRTC */
    char found[32];
    int sm;
    tj_status_t st = TJ_OK;

    if (arch[0] != '\0') {
        snprintf(target, len, "%s", arch);
        return TJ_OK;
    }
    if (device < 0 || device >= TJ_TARGET_MAX_DEVICES || !tj_gpu_available()) {
        snprintf(target, len, "sm_90");
        return TJ_OK;
    }
    /* Every device has its own arch: a node may mix them. Asked of the driver and NVRTC without
     * the lock (two threads may both ask, and find the same answer). */
    pthread_mutex_lock(&target_state->lock);
    snprintf(found, sizeof(found), "%s", target_state->device_targets[device]);
    pthread_mutex_unlock(&target_state->lock);
    if (found[0] == '\0') {
        if ((st = tj_gpu_sm(device, &sm)) != TJ_OK ||
            (st = tj_nvrtc_target(sm, found, sizeof(found))) != TJ_OK)
            return st;
        pthread_mutex_lock(&target_state->lock);
        snprintf(target_state->device_targets[device], sizeof(target_state->device_targets[device]),
                 "%s", found);
        pthread_mutex_unlock(&target_state->lock);
    }
    snprintf(target, len, "%s", found);
    return st;
}

bool tj_target_known(int device, char *target, size_t len)
{
    const tj_config_t *cfg = tj_config();

    /* TYPEJIT_ARCH unchecked: checking it may load NVRTC. */
    if (cfg->arch[0] != '\0') {
        snprintf(target, len, "%s", cfg->arch);
        return true;
    }
    if (device < 0) {
        snprintf(target, len, "sm_90"); /* as tj_target_of_device without a device */
        return true;
    }
    if (device >= TJ_TARGET_MAX_DEVICES)
        return false;
    pthread_mutex_lock(&target_state->lock);
    snprintf(target, len, "%s", target_state->device_targets[device]);
    pthread_mutex_unlock(&target_state->lock);
    return target[0] != '\0';
}

/* A driver loads images of an NVRTC of its own CUDA major version or older, never newer
 * (CUBIN and PTX alike): decided once, said once. */
static void check_loadable(void)
{
    int driver = tj_gpu_driver_version(), major, minor;

    target_state->loadable_status = tj_nvrtc_version(&major, &minor);
    if (target_state->loadable_status != TJ_OK || driver <= 0 || major <= driver / 1000)
        return;
    tj_log_warn_job("nvrtc %d.%d is newer than the cuda driver (%d.%d), which cannot load its "
                    "kernels; device buffers are staged through host memory (install nvrtc %d.x "
                    "or a newer driver)",
                    major, minor, driver / 1000, driver % 1000 / 10, driver / 1000);
    target_state->loadable_status = TJ_ERR_UNSUPPORTED;
}

tj_status_t tj_target_check_loadable(void)
{
    pthread_once(&target_state->loadable_once, check_loadable);
    /* One load from now on: every launch asks. */
    atomic_store_explicit(&target_state->loadable_known, (int)target_state->loadable_status + 1,
                          memory_order_release);
    return target_state->loadable_status;
}

int tj_target_index_find(int device)
{
    char name[32];
    int i, n;

    if (tj_target_of_device(device, name, sizeof(name)) != TJ_OK)
        return 0;
    pthread_mutex_lock(&target_state->lock);
    for (i = 0; i < target_state->nindex && strcmp(target_state->index_names[i], name) != 0; i++)
        ;
    if (i == target_state->nindex && target_state->nindex < TJ_TARGET_MAX_DEVICES)
        snprintf(target_state->index_names[target_state->nindex++],
                 sizeof(target_state->index_names[0]), "%s", name);
    /* Numbers of one epoch are apart from every earlier epoch's. */
    n = i < TJ_TARGET_MAX_DEVICES
            ? i + 1 + atomic_load(&target_state->epoch) * TJ_TARGET_MAX_DEVICES
            : 0;
    if (n != 0 && device >= 0 && device < TJ_TARGET_MAX_DEVICES)
        atomic_store_explicit(&target_state->indexes[device], n, memory_order_release);
    pthread_mutex_unlock(&target_state->lock);
    return n;
}

void tj_target_forget(void)
{
    pthread_mutex_lock(&target_state->lock);
    memset(target_state->device_targets, 0, sizeof(target_state->device_targets));
    for (int i = 0; i < TJ_TARGET_MAX_DEVICES; i++)
        atomic_store(&target_state->indexes[i], 0);
    target_state->nindex = 0;
    atomic_fetch_add(&target_state->epoch, 1);
    pthread_mutex_unlock(&target_state->lock);
}
