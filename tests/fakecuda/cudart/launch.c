/* SPDX-License-Identifier: BSD-3-Clause */
/* A program's own device code: what nvcc's host code registers at start-up (fatbinaries, their
 * kernels and variables) is accepted, so the program starts; a launch of one of its kernels is
 * refused with cudaErrorNotSupported and one line on stderr, since the test driver runs only
 * kernels it compiles from CUDA source (typejit's). The launch configuration of <<<...>>> is kept
 * as the runtime keeps it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart.h"

#define FATBIN_MAGIC 0x66617462u
#define KERNEL_MAGIC 0x6b65726eu

/* A registered fatbinary: the handle nvcc's code keeps points to it. */
typedef struct fatbin {
    void *image; /* first: the handle points to the image's address */
    unsigned magic;
    struct fatbin *next;
} fatbin_t;

/* A registered kernel: its host stub (the address the program launches) and device name. The
 * kernel handle __cudaGetKernel gives out points to it. */
typedef struct kernel {
    unsigned magic;
    const void *stub;
    fatbin_t *owner;
    char name[256];
    struct kernel *next;
} kernel_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fatbin_t *fatbins;
static kernel_t *kernels;
static int said;

void rt_refuse_kernel(const char *name)
{
    if (__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL) == 0)
        fprintf(stderr,
                "cudart stand-in: cannot run the program's own kernels (launch of %s refused with "
                "cudaErrorNotSupported): only runtime calls and typejit's kernels run on the "
                "CPU-only test driver\n",
                name);
}

RT_EXPORT void **CUDARTAPI __cudaRegisterFatBinary(void *fatCubin)
{
    fatbin_t *f = calloc(1, sizeof *f);
    if (f == NULL)
        abort(); /* as the real runtime, which cannot report an error here either */
    f->image = fatCubin;
    f->magic = FATBIN_MAGIC;
    pthread_mutex_lock(&lock);
    f->next = fatbins;
    fatbins = f;
    pthread_mutex_unlock(&lock);
    return &f->image;
}

RT_EXPORT void CUDARTAPI __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    (void)fatCubinHandle;
}

/* At exit (nvcc's code registers it with atexit): the fatbinary and its kernels go. */
RT_EXPORT void CUDARTAPI __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    fatbin_t *f = (fatbin_t *)fatCubinHandle;
    pthread_mutex_lock(&lock);
    for (kernel_t **k = &kernels; *k != NULL;) {
        kernel_t *victim = *k;
        if (victim->owner == f) {
            *k = victim->next;
            victim->magic = 0;
            free(victim);
        } else {
            k = &victim->next;
        }
    }
    for (fatbin_t **p = &fatbins; *p != NULL; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            f->magic = 0;
            free(f);
            break;
        }
    pthread_mutex_unlock(&lock);
}

RT_EXPORT void CUDARTAPI __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
                                                char *deviceFun, const char *deviceName,
                                                int thread_limit, uint3 *tid, uint3 *bid,
                                                dim3 *bDim, dim3 *gDim, int *wSize)
{
    kernel_t *k = calloc(1, sizeof *k);
    (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    if (k == NULL)
        abort();
    k->magic = KERNEL_MAGIC;
    k->stub = hostFun;
    k->owner = (fatbin_t *)fatCubinHandle;
    snprintf(k->name, sizeof k->name, "%s", deviceName != NULL ? deviceName : "(unnamed)");
    pthread_mutex_lock(&lock);
    k->next = kernels;
    kernels = k;
    pthread_mutex_unlock(&lock);
}

/* Device variables are accepted and never given device memory (no kernel of the program runs). */
RT_EXPORT void CUDARTAPI __cudaRegisterVar(void **fatCubinHandle, char *hostVar,
                                           char *deviceAddress, const char *deviceName, int ext,
                                           size_t size, int constant, int global)
{
    (void)fatCubinHandle, (void)hostVar, (void)deviceAddress, (void)deviceName, (void)ext;
    (void)size, (void)constant, (void)global;
}

RT_EXPORT void CUDARTAPI __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                                  char *deviceAddress, const char *deviceName,
                                                  int ext, size_t size, int constant, int global)
{
    (void)fatCubinHandle, (void)hostVarPtrAddress, (void)deviceAddress, (void)deviceName;
    (void)ext, (void)size, (void)constant, (void)global;
}

/* The module of a program's __managed__ variables cannot be loaded: 0, not initialised. */
RT_EXPORT char CUDARTAPI __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    rt_refuse_kernel("the module of its __managed__ variables");
    return 0;
}

/* The configuration of each <<<grid, block, shared, stream>>> until its launch pops it. */
typedef struct {
    dim3 grid, block;
    size_t shared;
    void *stream;
} config_t;

#define CONFIG_MAX 16
static _Thread_local config_t configs[CONFIG_MAX];
static _Thread_local int nconfigs;

RT_EXPORT unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
                                                         size_t sharedMem,
                                                         struct CUstream_st *stream)
{
    if (nconfigs == CONFIG_MAX)
        return 1;
    configs[nconfigs].grid = gridDim;
    configs[nconfigs].block = blockDim;
    configs[nconfigs].shared = sharedMem;
    configs[nconfigs].stream = stream;
    nconfigs++;
    return 0;
}

RT_EXPORT cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
                                                           size_t *sharedMem, void *stream)
{
    if (nconfigs == 0)
        return rt_return(cudaErrorMissingConfiguration);
    nconfigs--;
    *gridDim = configs[nconfigs].grid;
    *blockDim = configs[nconfigs].block;
    *sharedMem = configs[nconfigs].shared;
    *(void **)stream = configs[nconfigs].stream;
    return cudaSuccess;
}

/* The registered kernel whose host stub is @p stub, or whose handle is @p handle. */
static kernel_t *find(const void *stub, const void *handle)
{
    kernel_t *found = NULL;
    pthread_mutex_lock(&lock);
    for (kernel_t *k = kernels; k != NULL && found == NULL; k = k->next)
        if ((stub != NULL && k->stub == stub) || (handle != NULL && (const void *)k == handle))
            found = k;
    pthread_mutex_unlock(&lock);
    return found;
}

/* Every launch of a kernel: the stream is checked as a launch checks it, then the launch of a
 * registered kernel is refused; an address no fatbinary registered is no kernel at all
 * (cudaErrorInvalidDeviceFunction). */
static cudaError_t launch(kernel_t *k, cudaStream_t stream, bool per_thread_default)
{
    CUstream s = NULL;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess)
        e = rt_stream(stream, per_thread_default, &s);
    if (e == cudaSuccess && k == NULL)
        e = cudaErrorInvalidDeviceFunction;
    if (e == cudaSuccess) {
        rt_refuse_kernel(k->name);
        e = cudaErrorNotSupported;
    }
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
                                                 void **args, size_t sharedMem, cudaStream_t stream)
{
    (void)gridDim, (void)blockDim, (void)args, (void)sharedMem;
    return launch(find(func, NULL), stream, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                                      void **args, size_t sharedMem,
                                                      cudaStream_t stream)
{
    (void)gridDim, (void)blockDim, (void)args, (void)sharedMem;
    return launch(find(func, NULL), stream, true);
}

/* nvcc 13's launch code asks for the kernel's handle once, then launches by handle. */
RT_EXPORT cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    kernel_t *k = find(hostFun, NULL);
    if (kernel == NULL)
        return rt_return(cudaErrorInvalidValue);
    if (k == NULL)
        return rt_return(cudaErrorInvalidDeviceFunction);
    *kernel = (cudaKernel_t)(void *)k;
    return cudaSuccess;
}

RT_EXPORT cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                                   void **args, size_t sharedMem,
                                                   cudaStream_t stream)
{
    (void)gridDim, (void)blockDim, (void)args, (void)sharedMem;
    return launch(find(NULL, (const void *)kernel), stream, false);
}

RT_EXPORT cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
                                                        dim3 blockDim, void **args,
                                                        size_t sharedMem, cudaStream_t stream)
{
    (void)gridDim, (void)blockDim, (void)args, (void)sharedMem;
    return launch(find(NULL, (const void *)kernel), stream, true);
}
