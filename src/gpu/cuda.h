/* The CUDA driver, opened with dlopen: device discovery, pointer classification, primary
 * contexts, one stream per device, module loading, launches and the copies the pack paths need. */
#ifndef TJ_GPU_CUDA_H
#define TJ_GPU_CUDA_H

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

typedef struct tj_gpu_module tj_gpu_module_t;
typedef void *tj_gpu_function_t; /* a CUfunction */
typedef uint64_t tj_devptr_t;    /* a CUdeviceptr */

/* Open the driver and initialise it, once. TJ_ERR_NO_CUDA when there is no libcuda.so.1 or no
 * device: a normal state, logged at debug level only. */
tj_status_t tj_gpu_init(void);

/* True once tj_gpu_init has succeeded. */
bool tj_gpu_available(void);

/* Classify @p ptr; @p device gets the device ordinal for device, managed and pinned memory.
 * Host without a driver. */
tj_mem_t tj_gpu_classify(const void *ptr, int *device);

/* Compute capability of @p device as one number, 90 for 9.0. */
tj_status_t tj_gpu_sm(int device, int *sm);

/* Make the primary context of @p device current on the calling thread. */
tj_status_t tj_gpu_use(int device);

/* Load a CUBIN or PTX image into the current context and look up the kernel @p name. */
tj_status_t tj_gpu_module_load(const void *image, size_t len, const char *name,
                               tj_gpu_module_t **module, tj_gpu_function_t *fn);
void tj_gpu_module_unload(tj_gpu_module_t *module);

/* Launch on the current device's stream; @p args as for cuLaunchKernel. Does not wait. */
tj_status_t tj_gpu_launch(tj_gpu_function_t fn, const unsigned grid[3], const unsigned block[3],
                          void **args);

/* Wait for everything launched on the current device's stream. */
tj_status_t tj_gpu_sync(void);

/* Copies on the current device's stream, waiting for completion. */
tj_status_t tj_gpu_copy_dtoh(void *dst, tj_devptr_t src, size_t len);
tj_status_t tj_gpu_copy_htod(tj_devptr_t dst, const void *src, size_t len);
tj_status_t tj_gpu_copy_dtod(tj_devptr_t dst, tj_devptr_t src, size_t len);

/* Device memory and page-locked mapped host memory, for staging buffers, tests and benchmarks. */
tj_status_t tj_gpu_alloc(size_t len, tj_devptr_t *ptr);
void tj_gpu_free(tj_devptr_t ptr);
tj_status_t tj_gpu_alloc_host(size_t len, void **ptr);
void tj_gpu_free_host(void *ptr);
/* Device address of pinned mapped host memory. */
tj_status_t tj_gpu_host_devptr(void *host, tj_devptr_t *dev);
tj_status_t tj_gpu_memset(tj_devptr_t dst, unsigned char value, size_t len);

/* A 2-D strided copy (cuMemcpy2DAsync) and events, for the benchmarks' baselines. */
tj_status_t tj_gpu_copy_2d(tj_devptr_t dst, size_t dpitch, tj_devptr_t src, size_t spitch,
                           size_t width, size_t height);
tj_status_t tj_gpu_event_time(void (*work)(void *), void *arg, int reps, double *seconds);

/* Release streams, contexts and modules (MPI_Finalize). */
void tj_gpu_finalize(void);

#endif /* TJ_GPU_CUDA_H */
