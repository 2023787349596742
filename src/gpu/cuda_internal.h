/* SPDX-License-Identifier: BSD-3-Clause */
/* What the modules of the CUDA driver layer share: the driver's table of function pointers, the
 * records of contexts, the layer's state (one structure for the process, one for each thread),
 * and the check every driver call goes through. */
#ifndef TJ_GPU_CUDA_INTERNAL_H
#define TJ_GPU_CUDA_INTERNAL_H

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "gpu/cuda.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/stats.h"

/* Field, whether the library needs it, and the exported names to try in order: the versioned
 * name cuda.h maps to first, then older ones a driver of the supported range may have instead.
 * An optional entry (cuCtxGetId, CUDA 12.0) is used when the driver has it. */
#define TJ_CU_SYMBOLS(_X)                                                                          \
    _X(cuInit, 1, "cuInit", NULL)                                                                  \
    _X(cuGetErrorString, 1, "cuGetErrorString", NULL)                                              \
    _X(cuDriverGetVersion, 1, "cuDriverGetVersion", NULL)                                          \
    _X(cuDeviceGetCount, 1, "cuDeviceGetCount", NULL)                                              \
    _X(cuDeviceGet, 1, "cuDeviceGet", NULL)                                                        \
    _X(cuDeviceGetAttribute, 1, "cuDeviceGetAttribute", NULL)                                      \
    _X(cuDeviceGetName, 1, "cuDeviceGetName", NULL)                                                \
    _X(cuDevicePrimaryCtxRetain, 1, "cuDevicePrimaryCtxRetain", NULL)                              \
    _X(cuDevicePrimaryCtxRelease, 1, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease")  \
    _X(cuDevicePrimaryCtxGetState, 1, "cuDevicePrimaryCtxGetState", NULL)                          \
    _X(cuCtxGetCurrent, 1, "cuCtxGetCurrent", NULL)                                                \
    _X(cuCtxSetCurrent, 1, "cuCtxSetCurrent", NULL)                                                \
    _X(cuCtxPushCurrent, 1, "cuCtxPushCurrent_v2", "cuCtxPushCurrent")                             \
    _X(cuCtxPopCurrent, 1, "cuCtxPopCurrent_v2", "cuCtxPopCurrent")                                \
    _X(cuCtxGetDevice, 1, "cuCtxGetDevice", NULL)                                                  \
    _X(cuCtxGetId, 0, "cuCtxGetId", NULL)                                                          \
    _X(cuPointerGetAttributes, 1, "cuPointerGetAttributes", NULL)                                  \
    _X(cuPointerGetAttribute, 1, "cuPointerGetAttribute", NULL)                                    \
    _X(cuMemRetainAllocationHandle, 0, "cuMemRetainAllocationHandle", NULL)                        \
    _X(cuMemGetAllocationPropertiesFromHandle, 0, "cuMemGetAllocationPropertiesFromHandle", NULL)  \
    _X(cuMemRelease, 0, "cuMemRelease", NULL)                                                      \
    _X(cuMemGetAccess, 0, "cuMemGetAccess", NULL)                                                  \
    _X(cuModuleLoadData, 1, "cuModuleLoadData", NULL)                                              \
    _X(cuModuleGetFunction, 1, "cuModuleGetFunction", NULL)                                        \
    _X(cuModuleUnload, 1, "cuModuleUnload", NULL)                                                  \
    _X(cuLaunchKernel, 1, "cuLaunchKernel", NULL)                                                  \
    _X(cuStreamCreate, 1, "cuStreamCreate", NULL)                                                  \
    _X(cuStreamSynchronize, 1, "cuStreamSynchronize", NULL)                                        \
    _X(cuStreamDestroy, 1, "cuStreamDestroy_v2", "cuStreamDestroy")                                \
    _X(cuMemAlloc, 1, "cuMemAlloc_v2", NULL)                                                       \
    _X(cuMemFree, 1, "cuMemFree_v2", NULL)                                                         \
    _X(cuMemHostAlloc, 1, "cuMemHostAlloc", NULL)                                                  \
    _X(cuMemFreeHost, 1, "cuMemFreeHost", NULL)                                                    \
    _X(cuMemHostGetDevicePointer, 1, "cuMemHostGetDevicePointer_v2", NULL)                         \
    _X(cuMemcpyHtoDAsync, 1, "cuMemcpyHtoDAsync_v2", NULL)                                         \
    _X(cuMemcpyDtoHAsync, 1, "cuMemcpyDtoHAsync_v2", NULL)                                         \
    _X(cuMemsetD8Async, 1, "cuMemsetD8Async", NULL)                                                \
    _X(cuEventCreate, 1, "cuEventCreate", NULL)                                                    \
    _X(cuEventRecord, 1, "cuEventRecord", NULL)                                                    \
    _X(cuEventQuery, 1, "cuEventQuery", NULL)                                                      \
    _X(cuEventSynchronize, 1, "cuEventSynchronize", NULL)                                          \
    _X(cuEventDestroy, 1, "cuEventDestroy_v2", "cuEventDestroy")

/* The driver's entry points (tj_gpu.cu). */
typedef struct {
#define TJ_CU_FIELD(_name, _required, _sym, _alt) __typeof__(&_name) _name;
    TJ_CU_SYMBOLS(TJ_CU_FIELD)
#undef TJ_CU_FIELD
} tj_cu_t;

/* Contexts typejit has worked in; records are never removed before tj_gpu_finalize. */
#define TJ_GPU_MAX_CONTEXTS 64
/* Devices whose primary contexts typejit may retain for memory without a context of its own. */
#define TJ_GPU_MAX_DEVICES 64
/* Allocations per context whose ids tj_gpu_enter_at remembers (a power of two). */
#define TJ_GPU_SEEN 16
/* Distinct (call site, error) pairs logged at warning level; repeats go to the debug level. */
#define TJ_GPU_MAX_REPORTED 64

/* The record of a context typejit has worked in (context.c). Threads read a record without
 * entry_lock; what a renewal changes (stream, id, gen, dead) is atomic, the rest is written
 * before the record is published (nentries). */
typedef struct {
    CUcontext ctx;
    CUdevice dev;
    int ordinal;
    _Atomic(CUstream) stream;
    bool retained;    /* typejit holds a reference to this primary context */
    atomic_bool dead; /* a sticky error: nothing more is done in this context */
    /* Which instance of the context behind the handle: cuCtxGetId (0 where the driver lacks
     * it), and typejit's count of the instances seen (tj_gpu_generation). A reset primary
     * context (cudaDeviceReset) keeps its handle but takes everything made in it along. */
    atomic_ullong id;
    atomic_uint gen;
    /* Ids of allocations found in the present instance (tj_gpu_enter_at), by their low bits:
     * while a query still finds one, the instance is the same (a reset frees every
     * allocation). 0: none. */
    atomic_ullong seen[TJ_GPU_SEEN];
    /* Ticks of the event records on the stream (tj_gpu_event_implied). */
    atomic_ullong event_ticks;
} ctx_entry_t;

struct tj_gpu_event;

/* The layer's state for the process: set up by tj_gpu_init, released by tj_gpu_finalize. */
typedef struct {
    /* The driver (cuda.c): its entry points, filled once by tj_gpu_init and only read after it,
     * the library dlopen returned, what tj_gpu_init found, and the devices it has, at most
     * TJ_GPU_MAX_DEVICES of them. */
    tj_cu_t cu;
    pthread_once_t init_once;
    void *libcuda;
    tj_status_t init_status;
    int driver_version;
    int ndevices;
    /* What tj_gpu_driver_installed found. */
    pthread_once_t probe_once;
    bool installed;
    /* cuCtxGetCurrent of a driver someone else loaded (tj_gpu_context_current); the reference
     * taken to find it is kept, so that the driver stays for the process. */
    _Atomic(__typeof__(&cuCtxGetCurrent)) loaded_ctx_get;
    /* The loader's count of objects loaded when the process's objects were last searched for
     * the driver without finding it: until it changes, no search is needed (a commit of a
     * process that never loads the driver pays one callback, not a walk of every object). */
    atomic_ullong searched_adds;
    /* Whether tj_gpu_query has met memory the driver knows (pointer.c). */
    atomic_bool memory_met;
    /* The driver errors already reported (error.c). */
    pthread_mutex_t report_lock;
    struct {
        int line;
        CUresult rc;
    } reported[TJ_GPU_MAX_REPORTED];
    int nreported;
    /* The records of contexts (context.c), and under the same lock the primary contexts typejit
     * retained for memory without a context (tj_gpu_primary_of) and for the typejit command
     * (tj_gpu_use, device.c), released at finalize. */
    pthread_mutex_t entry_lock;
    ctx_entry_t entries[TJ_GPU_MAX_CONTEXTS];
    atomic_int nentries;
    _Atomic(CUcontext) primaries[TJ_GPU_MAX_DEVICES];
    CUdevice used[TJ_GPU_MAX_CONTEXTS];
    int nused;
    /* Events kept for reuse (event.c), under a spinning lock taken on every event's record and
     * release: on a line of its own, apart from the records every call reads. */
    _Alignas(64) atomic_flag events_lock;
    struct tj_gpu_event *events_free;
} tj_gpu_t;

extern TJ_LOCAL tj_gpu_t tj_gpu;

/* The layer's state for each thread (scope.c): its scopes. Initial-exec: read on every device
 * call as one load (the library is loaded at start). */
typedef struct {
    ctx_entry_t *here;         /* the record of the innermost scope */
    tj_gpu_scope_t *innermost; /* the innermost scope, for calls that must check an assumed one */
    /* The context this thread had current outside typejit's scopes when typejit last asked
     * (tj_gpu_enter_at assumes it still is). */
    CUcontext last_current;
    int releasing; /* inside tj_gpu_enter_to_release scopes */
} tj_gpu_thread_t;

extern _Thread_local TJ_LOCAL tj_gpu_thread_t tj_gpu_thread
    __attribute__((tls_model("initial-exec")));

/* tj_gpu_init without a call once it has succeeded. */
static inline tj_status_t tj_gpu_ready(void)
{
    return atomic_load_explicit(&tj_gpu_state, memory_order_acquire) == TJ_GPU_PRESENT
               ? TJ_OK
               : tj_gpu_init();
}

/* ---- driver errors (error.c) ---- */

/* The driver's text for @p rc, "unknown error" when it has none. */
const char *tj_gpu_error_string(CUresult rc);

/* True the first time this (call site, error) pair is seen. */
bool tj_gpu_first_report(int line, CUresult rc);

/* A failed driver call: logged (a failure repeated on every call once), TJ_ERR_CUDA, or
 * TJ_ERR_CONTEXT for a sticky error in a scope's context, which is then no longer used. */
tj_status_t tj_gpu_failed(CUresult rc, const char *call, bool quiet, const char *file, int line);

static inline tj_status_t tj_gpu_check(CUresult rc, const char *call, bool quiet, const char *file,
                                       int line)
{
    return TJ_LIKELY(rc == CUDA_SUCCESS) ? TJ_OK : tj_gpu_failed(rc, call, quiet, file, line);
}

/* Every driver call: log the call, the error string, file and line; map to TJ_ERR_CUDA, or to
 * TJ_ERR_CONTEXT for a sticky error in a scope's context. */
#define CU_CHECK(_call) tj_gpu_check(tj_gpu.cu._call, #_call, false, __FILE__, __LINE__)
/* The same for a call whose failure has a fallback the caller takes and reports itself: logged
 * at debug level (a sticky error is still an error). */
#define CU_CHECK_QUIET(_call) tj_gpu_check(tj_gpu.cu._call, #_call, true, __FILE__, __LINE__)

/* ---- records of contexts (context.c) ---- */

/* The record of @p ctx among the first @p n, or NULL. */
static inline ctx_entry_t *tj_gpu_entry_among(CUcontext ctx, int n)
{
    for (int i = 0; i < n; i++)
        if (tj_gpu.entries[i].ctx == ctx)
            return &tj_gpu.entries[i];
    return NULL;
}

/* The record of @p ctx if typejit has one, asking nothing. */
static inline ctx_entry_t *tj_gpu_entry_known(CUcontext ctx)
{
    return tj_gpu_entry_among(ctx, atomic_load_explicit(&tj_gpu.nentries, memory_order_acquire));
}

/* The record of @p ctx, which must be current; created on first use with its stream (NULL when
 * that fails, or when there are too many contexts). */
ctx_entry_t *tj_gpu_entry_for(CUcontext ctx);

/* When the context behind @p e's handle is another instance than the one typejit set up, start
 * again there (the caller has made it current). */
void tj_gpu_renew_if_replaced(ctx_entry_t *e);

/* The record of the caller's current context, outside any scope (NULL if none). */
ctx_entry_t *tj_gpu_entry_current(void);

/* The record of the innermost scope, else of the caller's current context. */
static inline ctx_entry_t *tj_gpu_entry_here(void)
{
    ctx_entry_t *e = tj_gpu_thread.here;
    return e != NULL ? e : tj_gpu_entry_current();
}

/* The primary context of device @p ordinal, retained by typejit at its first need. */
tj_status_t tj_gpu_primary_of(int ordinal, CUcontext *ctx);

/* Destroy the streams of the records and release the primary contexts typejit retained. */
void tj_gpu_contexts_release(void);

/* ---- scopes (scope.c) ---- */

/* In an assumed scope (tj_gpu_enter_at): ask which context is current, and push the scope's
 * when it is not; true when it was pushed. Called after a driver call failed (the caller makes
 * the call again when it returns true), and before a call that makes something in the current
 * context (a module, memory, an event), so that nothing is made in another context. */
bool tj_gpu_check_assumed(void);

/* Enter the instance @p gen of @p ctx to release what was made there (tj_gpu_enter_to_release);
 * fails, leaving nothing entered, when that instance is gone with all it held. */
tj_status_t tj_gpu_enter_instance_to_release(tj_gpu_ctx_t ctx, unsigned gen, tj_gpu_scope_t *scope);

/* A driver call in the current scope, made again once when the scope was assumed and its
 * context turned out not to be current (tj_gpu_check_assumed). */
#define IN_SCOPE(_st, _call)                                                                       \
    do {                                                                                           \
        CUresult rc_ = tj_gpu.cu._call;                                                            \
        if (rc_ != CUDA_SUCCESS && tj_gpu_check_assumed())                                         \
            rc_ = tj_gpu.cu._call;                                                                 \
        (_st) = tj_gpu_check(rc_, #_call, false, __FILE__, __LINE__);                              \
    } while (0)

/* ---- typejit's stream and its waits (stream.c) ---- */

/* typejit's stream in the context of tj_gpu_entry_here, NULL without one. */
CUstream tj_gpu_stream(void);

/* Start a wait for the device: counted (gpu_waits); the clock it started at. */
static inline double tj_gpu_wait_begin(void)
{
    double t0 = tj_clock_seconds();
    tj_stats_inc(TJ_STAT_gpu_waits);
    return t0;
}

/* The end of the wait begun at @p t0: how long the host was blocked by the device, counted in
 * gpu_wait_us. */
static inline void tj_gpu_wait_end(double t0)
{
    tj_stats_add(TJ_STAT_gpu_wait_us, (uint64_t)((tj_clock_seconds() - t0) * 1e6 + 0.5));
}

/* ---- events (event.c) ---- */

/* Destroy the events kept for reuse, each in its context where that still holds it. */
void tj_gpu_events_release(void);

#endif /* TJ_GPU_CUDA_INTERNAL_H */
