/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel layer's mutable state: one structure for the process (state.c), a sub-structure per
 * module, and one for each thread. */
#ifndef TJ_KERNELS_STATE_H
#define TJ_KERNELS_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "cache/hash.h"
#include "cache/hashset.h"
#include "cache/memo.h"
#include "typejit.h"
#include "util/common.h"

/* Background compile threads at most. */
#define TJ_COMPILER_WORKERS_MAX 64
/* Devices whose compile target is remembered. */
#define TJ_TARGET_MAX_DEVICES 64

struct queued_job;
struct tj_lookup_disk;
struct tj_layout_device;
struct tj_fused_cache;

/* Each module's state starts a cache line of its own: the locks of the compile queue, the lookup
 * and the part tables are taken often, and what every launch reads (launch, target) lies apart
 * from them. */
typedef struct {
    _Alignas(64) struct {
        pthread_mutex_t lock;
        pthread_cond_t work;
        struct queued_job *head, **tail; /* the queue, in the order of the requests */
        long queued;
        int running;
        /* Keys of the jobs queued or running, so that a kernel is never queued twice; and of
         * those running. */
        tj_hashset_t pending;
        tj_hash_t active[TJ_COMPILER_WORKERS_MAX];
        int nactive;
        pthread_t workers[TJ_COMPILER_WORKERS_MAX];
        int nworkers;
        bool stopping;
        atomic_uint finished; /* jobs that ended, for tj_compiler_finished */
        pthread_once_t exit_once;
        pthread_once_t fork_once;
    } compiler; /* the compile queue (compiler.c) */
    _Alignas(64) struct {
        atomic_bool launched;    /* this process has prepared a launch before */
        pthread_key_t fused_key; /* frees a thread's fused_cache when it ends */
        pthread_once_t fused_once;
    } launch; /* the launch path (launch.c) */
    _Alignas(64) struct {
        /* setup_lock guards the memory table's creation and teardown and the swap of `disk`; no
         * other lock is taken under it, and nothing slow runs under it but opening the disk
         * caches once. */
        pthread_mutex_t setup_lock;
        atomic_llong give_up_at; /* tj_clock_ms after which waits give up */
        tj_memo_t *memo;
        atomic_bool memo_ready; /* memo exists (TJ_LOOKUP_MEMORY reads it without setup_lock) */
        /* The disk caches: NULL until the first request that needs it (and after a swap). */
        struct tj_lookup_disk *disk;
        /* The cache tj_lookup_set_store names instead of the settings (store_ro_override -1:
         * none). */
        char store_dir_override[4096];
        int store_ro_override;
    } lookup; /* the kernel lookup (lookup.c) */
    _Alignas(64) struct {
        pthread_mutex_t list_lock;
        struct tj_layout_device *records; /* the list of every layout's record */
        pthread_once_t hook_once;
    } parttable; /* device part tables (parttable.c) */
    _Alignas(64) struct {
        /* Under TYPEJIT_JIT=auto a commit makes kernels only once the process uses CUDA: a
         * program that never touches device memory loads neither NVRTC nor (at its commits) the
         * driver. Set once, by the first launch, or the first commit that finds a device buffer
         * met or a CUDA context current (the driver layer only keeps the fact; it calls nothing
         * up here). */
        atomic_bool uses_cuda;
    } prepare; /* the kernels a commit asks for (prepare.c) */
    _Alignas(64) struct {
        pthread_mutex_t lock;
        char device_targets[TJ_TARGET_MAX_DEVICES][32];
        /* tj_target_index: each device's number, and the targets numbered so far (number i + 1
         * is index_names[i]); `epoch` tells numbers from before a tj_target_forget apart. */
        atomic_int indexes[TJ_TARGET_MAX_DEVICES];
        char index_names[TJ_TARGET_MAX_DEVICES][32];
        int nindex;
        atomic_int epoch;
        pthread_once_t loadable_once;
        tj_status_t loadable_status;
        /* tj_target_loadable's answer once it has one, + 1; 0 before. */
        atomic_int loadable_known;
    } target; /* compile targets (target.c) */
} tj_kernels_state_t;

extern TJ_LOCAL tj_kernels_state_t tj_kernels_state;

/* The layer's state for each thread. Initial-exec: read on every fused launch as one load (the
 * library is loaded at start). */
typedef struct {
    struct {
        /* The fused launches this thread kept. */
        struct tj_fused_cache *fused_cache;
    } launch; /* the launch path (launch.c) */
} tj_kernels_thread_t;

extern _Thread_local TJ_LOCAL tj_kernels_thread_t tj_kernels_thread
    __attribute__((tls_model("initial-exec")));

#endif /* TJ_KERNELS_STATE_H */
