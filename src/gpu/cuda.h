/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA driver, opened with dlopen: device discovery, pointer queries, context scopes, one
 * stream per context, module loading, launches and the copies the pack paths need. */
#ifndef TJ_GPU_CUDA_H
#define TJ_GPU_CUDA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "typejit.h"

/* Where a pointer lives, as the driver sees it. */
typedef enum {
    TJ_MEM_HOST,    /* pageable or unknown to CUDA: only the CPU should touch it */
    TJ_MEM_PINNED,  /* page-locked host memory mapped into the device: both may touch it */
    TJ_MEM_DEVICE,  /* device memory: only kernels and copies may touch it */
    TJ_MEM_MANAGED, /* managed memory: kernels may touch it */
} tj_mem_t;

/* Memory only kernels and the driver's copies may touch as a whole: device memory, and managed
 * memory (which kernels reach where it lies). Page-locked host memory is not: both may. */
static inline bool tj_gpu_device_like(tj_mem_t m)
{
    return m == TJ_MEM_DEVICE || m == TJ_MEM_MANAGED;
}

typedef struct tj_gpu_module tj_gpu_module_t;
typedef void *tj_gpu_function_t; /* a CUfunction */
typedef void *tj_gpu_ctx_t;      /* a CUcontext */
typedef uint64_t tj_devptr_t;    /* a CUdeviceptr */

/* What the driver says about one address, from a single pointer-attribute query. */
typedef struct {
    tj_mem_t kind;
    int device;       /* ordinal; -1 for host memory */
    tj_gpu_ctx_t ctx; /* the context that allocated, registered or opened it, or the primary
                       * context of its device for memory of no context; NULL for host memory */
    uintptr_t base;   /* the allocation holding the address, [base, base + size); 0 if unknown */
    size_t size;
    /* The driver's unique id of the allocation (CU_POINTER_ATTRIBUTE_BUFFER_ID) where a scope
     * may rely on it to know the context's instance (tj_gpu_enter_at), else 0. */
    unsigned long long id;
    /* Page-locked host memory: the device address of base, where typejit knows it (its own
     * staging), else 0 (tj_gpu_host_devptr asks). */
    tj_devptr_t dev_base;
} tj_gpu_ptr_t;

/* While a scope is entered, typejit's driver calls run in its context on the calling thread;
 * leaving restores exactly the context the caller had. */
typedef struct {
    void *entry;    /* the context's record (context.c) */
    void *prev;     /* the record of the enclosing scope, if any */
    bool pushed;    /* the context was pushed and must be popped */
    bool releasing; /* entered by tj_gpu_enter_to_release: failures are not warnings */
    /* Entered without asking the driver which context is current (tj_gpu_enter_at): the first
     * driver call that fails in the scope asks, pushes the context if it was not, and is made
     * again. */
    bool assumed;
    void *prev_scope; /* the enclosing tj_gpu_scope_t, if any */
} tj_gpu_scope_t;

/* Open the driver and initialise it, once. TJ_ERR_NO_CUDA when there is no libcuda.so.1 or no
 * device: a normal state, logged at debug level only. */
tj_status_t tj_gpu_init(void);

/* What tj_gpu_init found: nothing yet, no usable device, or a device. */
enum { TJ_GPU_UNKNOWN, TJ_GPU_ABSENT, TJ_GPU_PRESENT };
extern atomic_int tj_gpu_state;

/* True once tj_gpu_init has succeeded (after it has, one load). */
static inline bool tj_gpu_available(void)
{
    return atomic_load_explicit(&tj_gpu_state, memory_order_acquire) == TJ_GPU_PRESENT ||
           tj_gpu_init() == TJ_OK;
}

/* True when tj_gpu_init has already run and found no usable device; false before it has run.
 * One relaxed load, starting nothing: the test every interposed call makes first, so that on a
 * machine without a device typejit costs next to nothing. */
static inline bool tj_gpu_absent(void)
{
    return atomic_load_explicit(&tj_gpu_state, memory_order_relaxed) == TJ_GPU_ABSENT;
}

/* Whether the dynamic loader finds a CUDA driver (libcuda.so.1) at all, asked once by a search
 * that loads nothing (dlopen with RTLD_NOLOAD: tens of microseconds); false as well once
 * tj_gpu_init has found no usable device. Without a driver tj_gpu_absent is true from then on,
 * so that no later call tries to load one. */
bool tj_gpu_driver_installed(void);

/* Whether the calling thread has a current CUDA context, asked without loading or initialising
 * the driver: false when libcuda.so.1 is not loaded in the process, or nothing in it has called
 * cuInit. Microseconds (a walk of the loaded objects until the driver is found, then one call). */
bool tj_gpu_context_current(void);

/* Whether tj_gpu_query has met memory the driver knows (device, managed or page-locked host
 * memory): the process uses CUDA. One relaxed load. */
bool tj_gpu_memory_met(void);

/* cuDriverGetVersion (12040 for 12.4), or 0 when there is no driver. Needs no device. */
int tj_gpu_driver_version(void);

/* Where @p ptr lies: one driver call for memory of a context, none without a device. Memory CUDA
 * does not know is TJ_MEM_HOST. Memory of no context (stream-ordered pools, VMM mappings) gets
 * its device's primary context, which typejit retains until tj_gpu_finalize; VMM host memory the
 * CPU may not touch is TJ_MEM_DEVICE, in a device that may. TJ_ERR_CUDA, after one error line
 * naming the buffer and the reason, when the driver cannot tell: the caller fails its call with
 * an MPI error and never takes the buffer for host memory. */
tj_status_t tj_gpu_query(const void *ptr, tj_gpu_ptr_t *out) __attribute__((warn_unused_result));

/* True when kernels and copies may use the bytes [lo, hi) of the allocation @p p describes
 * (always true for host memory, and for an allocation whose range the driver did not report:
 * there is nothing to check). */
bool tj_gpu_inside(const tj_gpu_ptr_t *p, uintptr_t lo, uintptr_t hi);

/* Enter @p ctx on the calling thread (pushing it when it is not current). TJ_ERR_CONTEXT,
 * without a new log line, when the context had a sticky error: typejit no longer uses it. */
tj_status_t tj_gpu_enter(tj_gpu_ctx_t ctx, tj_gpu_scope_t *scope);
void tj_gpu_leave(tj_gpu_scope_t *scope);

/* tj_gpu_enter of the context of the memory @p p describes (a tj_gpu_query answer of device,
 * managed or page-locked memory), asking the driver nothing when this thread found that
 * context current at its last check and the allocation (its id) was seen before in the
 * context's present instance: the steady case of a call on a buffer used before. Otherwise as
 * tj_gpu_enter, which is then remembered. */
tj_status_t tj_gpu_enter_at(const tj_gpu_ptr_t *p, tj_gpu_scope_t *scope);

/* tj_gpu_enter of a context this thread entered earlier in the same MPI call (a batch's wait),
 * asking the driver nothing that the first enter asked. */
tj_status_t tj_gpu_enter_again(tj_gpu_ctx_t ctx, tj_gpu_scope_t *scope);

/* tj_gpu_enter for releasing what typejit made in @p ctx: an application may have destroyed
 * that context already (its resources went with it), so failing to enter it is silent. */
tj_status_t tj_gpu_enter_to_release(tj_gpu_ctx_t ctx, tj_gpu_scope_t *scope);

/* The context of the innermost scope, else the caller's current context (NULL if none). */
tj_gpu_ctx_t tj_gpu_current(void);
/* Which instance of the context of tj_gpu_current() this is, from 1 (0 without one): it grows
 * when the application resets or replaces the context behind the same handle, and what typejit
 * made in an earlier instance (staging, modules) is gone with it. */
unsigned tj_gpu_generation(void);
/* tj_gpu_current() and tj_gpu_generation() at once (one load inside a scope). */
tj_gpu_ctx_t tj_gpu_current_instance(unsigned *generation);
/* The device ordinal of tj_gpu_current(), -1 if none. */
int tj_gpu_current_device(void);

/* The typejit command's interface (`typejit measure`), which acts as the application (tests and
 * benchmarks use it too): retain @p device's primary context and make it current on the calling
 * thread. The MPI wrappers never call this. */
tj_status_t tj_gpu_use(int device);

/* The name of @p device as the driver reports it ("NVIDIA H100 80GB HBM3"). */
tj_status_t tj_gpu_device_name(int device, char *name, size_t len);

/* Compute capability of @p device as one number, 90 for 9.0. */
tj_status_t tj_gpu_sm(int device, int *sm);

/* Load a CUBIN or PTX image into the current context and look up the kernel @p name. A
 * module remembers its context and is unloaded there. */
tj_status_t tj_gpu_module_load(const void *image, size_t len, const char *name,
                               tj_gpu_module_t **module, tj_gpu_function_t *fn);
void tj_gpu_module_unload(tj_gpu_module_t *module);

/* Launch on the current context's stream; @p args as for cuLaunchKernel. Does not wait. */
tj_status_t tj_gpu_launch(tj_gpu_function_t fn, const unsigned grid[3], const unsigned block[3],
                          void **args);

/* Wait for everything launched on the current context's stream: the one place typejit waits for
 * the device, counted (gpu_waits in the stats line). */
tj_status_t tj_gpu_sync(void);

/* Copies on the current context's stream, waiting for completion. */
tj_status_t tj_gpu_copy_dtoh(void *dst, tj_devptr_t src, size_t len);
tj_status_t tj_gpu_copy_htod(tj_devptr_t dst, const void *src, size_t len);

/* The same copies queued on the stream, after the work launched there before, without waiting:
 * a later tj_gpu_sync completes them. The host side of a copy to the host must be page-locked
 * (a copy into pageable memory returns only when done); a copy from pageable memory reads it
 * before it returns. */
tj_status_t tj_gpu_copy_dtoh_async(void *dst, tj_devptr_t src, size_t len);
tj_status_t tj_gpu_copy_htod_async(tj_devptr_t dst, const void *src, size_t len);

/* Device memory and page-locked mapped host memory of the current context. A failure to get
 * page-locked memory, or its device address, is logged at debug level only: callers have a
 * slower way and say so themselves. */
tj_status_t tj_gpu_alloc(size_t len, tj_devptr_t *ptr);
void tj_gpu_free(tj_devptr_t ptr);
tj_status_t tj_gpu_alloc_host(size_t len, void **ptr);
void tj_gpu_free_host(void *ptr);
/* Device address of pinned mapped host memory in the current context. */
tj_status_t tj_gpu_host_devptr(void *host, tj_devptr_t *dev);
tj_status_t tj_gpu_memset(tj_devptr_t dst, unsigned char value, size_t len);

/* Events: the point of a context's stream up to which its work has run. */
typedef struct tj_gpu_event tj_gpu_event_t;

/* Record an event after the work queued so far on the current scope's context's stream (a scope
 * must be open); *ev is held once. */
tj_status_t tj_gpu_event_record(tj_gpu_event_t **ev);
/* One more holder of @p ev. */
tj_gpu_event_t *tj_gpu_event_hold(tj_gpu_event_t *ev);
/* Whether the work before @p ev has completed (*done), without waiting; a driver error, or
 * TJ_ERR_CONTEXT when the context's instance it was recorded in is gone. */
tj_status_t tj_gpu_event_query(tj_gpu_event_t *ev, bool *done);
/* The context @p ev was recorded in. */
tj_gpu_ctx_t tj_gpu_event_context(const tj_gpu_event_t *ev);
/* Whether a query or wait has already seen @p ev complete (no driver call). */
bool tj_gpu_event_done(const tj_gpu_event_t *ev);
/* Whether @p ev is complete because @p later, seen complete, was recorded after it on the same
 * stream (its record ended before @p later's began, in the same context instance); marks it
 * so. No driver call. */
bool tj_gpu_event_implied(tj_gpu_event_t *ev, const tj_gpu_event_t *later);
/* Wait for the work before @p ev (counted as a wait, like tj_gpu_sync). */
tj_status_t tj_gpu_event_wait(tj_gpu_event_t *ev);
/* Drop one holder; the last one keeps the event for reuse (NULL: nothing). */
void tj_gpu_event_release(tj_gpu_event_t *ev);

/* Destroy the streams and release the primary contexts typejit retained, each in its own
 * context, leaving the caller's current context as it was (MPI_Finalize). Modules and buffers
 * must be released first. */
void tj_gpu_finalize(void);

#endif /* TJ_GPU_CUDA_H */
