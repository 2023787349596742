/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal interface of the CPU-only test double of libcuda.so.1: state shared by its files. */
#ifndef TJ_TESTS_FAKECUDA_FAKECUDA_H
#define TJ_TESTS_FAKECUDA_FAKECUDA_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifndef FAKECUDA_VERSION
#error "build the double with -DFAKECUDA_VERSION=<driver version, e.g. 13000>"
#endif

/* Every exported driver entry point carries this; everything else stays hidden. */
#define FC_EXPORT __attribute__((visibility("default")))

/* cuda.h maps cuEventElapsedTime to the 12.8 _v2 and does not declare the older entry points a
 * real driver still exports for binaries built against older headers, so declare them here with
 * the prototypes of cuda.h's __CUDA_API_VERSION_INTERNAL section. */
#undef cuEventElapsedTime
CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
/* The 8.0 forms of cuMemAdvise and cuMemPrefetchAsync (a device ordinal), which 13.0 maps to
 * the 12.2 forms (a CUmemLocation). */
#undef cuMemAdvise
#undef cuMemPrefetchAsync
CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                             CUdevice device);
CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                    CUstream hStream);
#undef cuDeviceGetUuid
CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
#undef cuIpcOpenMemHandle
CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags);
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
#if FAKECUDA_VERSION >= 12080
CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd);
#endif

/* The counters tests read with dlsym(RTLD_DEFAULT, "fakecuda_stats"): launches, copies, ...
 * (init.c), and "calls:NAME", how often the entry point NAME was called ("calls:*": any). */
FC_EXPORT long long fakecuda_stats(const char *name);

#define FC_MAX_DEVICES 8
#define FC_PAGE        ((uintptr_t)4096)
#define FC_MAX_PARAMS  64
#define FC_MAX_PEERS   8 /* peer contexts of one context (cuCtxEnablePeerAccess: TOO_MANY_PEERS) */

/* Pitches and alignments as current GPUs answer them (CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT,
 * _TEXTURE_PITCH_ALIGNMENT, _MAX_PITCH): cuMemAllocPitch pads a row to a multiple of
 * FC_TEXTURE_ALIGNMENT (memory.c says why), a multiple of FC_TEXTURE_PITCH_ALIGNMENT too; no
 * copy takes a pitch above FC_MAX_PITCH. */
#define FC_TEXTURE_ALIGNMENT       512
#define FC_TEXTURE_PITCH_ALIGNMENT 32
#define FC_MAX_PITCH               2147483647

/* ---- settings and statistics (init.c) ------------------------------------------------------ */

typedef struct {
    int ndevices;
    int sm[FC_MAX_DEVICES]; /* e.g. 90 */
    bool log;
    int threads;        /* FAKECUDA_THREADS: host threads that run a launch's blocks (grid.c) */
    bool pageable;      /* FAKECUDA_PAGEABLE=1: devices may access pageable host memory */
    size_t arena;       /* FAKECUDA_ARENA_GIB: the address range device memory is carved from */
    bool stream_thread; /* FAKECUDA_STREAM_THREAD=1: queued work runs on a thread of its own */
} fc_config_t;

extern fc_config_t fc_config;
extern bool fc_initialized;

typedef struct {
    long long launches, kernel_compiles, kernel_cache_hits, modules_loaded, kernel_faults,
        host_faults, copies, syncs, launches_tracked, write_violations, blocks_on_pool;
} fc_stats_t;
extern fc_stats_t fc_stats;

/* ---- call entry: initialisation check, failure injection, logging (inject.c) --------------- */

/* One per exported function: its name and how often it was called in this process. */
typedef struct fc_site {
    const char *name;
    unsigned long calls;
    struct fc_site *next; /* every site called so far, for fakecuda_stats("calls:NAME") */
} fc_site_t;

/* How often the entry point @p name was called (any entry point for "*"); 0 if never. */
long long fc_site_calls(const char *name);

/* Counts the call, then returns CUDA_ERROR_NOT_INITIALIZED before cuInit (when @p needs_init),
 * an injected failure, or CUDA_SUCCESS. An injected sticky code poisons the current context. */
CUresult fc_enter(fc_site_t *site, bool needs_init);
/* Logs the call's result when FAKECUDA_LOG=1 and returns @p rc. */
CUresult fc_leave(const fc_site_t *site, CUresult rc);
void fc_inject_parse(const char *spec);

/* The prologue and epilogue of every exported function: all state is behind one lock, which also
 * serialises every emulated kernel and copy. */
#define FC_BEGIN(_name, _needs_init)                                                               \
    static fc_site_t fc_site = {#_name, 0, NULL};                                                  \
    CUresult rc = fc_enter(&fc_site, _needs_init);                                                 \
    if (rc != CUDA_SUCCESS)                                                                        \
        return fc_leave(&fc_site, rc);                                                             \
    fc_lock()
#define FC_END()                                                                                   \
    fc_unlock();                                                                                   \
    return fc_leave(&fc_site, rc)

void fc_lock(void);
void fc_unlock(void);

/* The result of a call that writes @p _value to its output argument @p _out: INVALID_VALUE, and
 * nothing written, when @p _out is NULL. */
#define FC_OUT(_out, _value)                                                                       \
    ((_out) == NULL ? CUDA_ERROR_INVALID_VALUE : (*(_out) = (_value), CUDA_SUCCESS))

/* ---- contexts (context.c) ------------------------------------------------------------------ */

struct CUctx_st {
    uint32_t magic;
    int device;
    bool primary;
    bool active;  /* primary: retained at least once since the last deactivation */
    int refcount; /* primary contexts only */
    unsigned flags;
    CUresult sticky; /* a fault or injected sticky error: every later call in the context fails */
    struct CUstream_st *null_stream;
    unsigned long long id; /* cuCtxGetId: new at every activation (context.c) */
    /* cuCtxEnablePeerAccess: contexts whose cuMemAlloc memory this one may touch (the instance
     * of each, by its id) */
    struct CUctx_st *peers[FC_MAX_PEERS];
    unsigned long long peer_ids[FC_MAX_PEERS];
    int npeers;
    struct CUctx_st *next;
};

/* The usable context current to the calling thread: INVALID_CONTEXT when none,
 * CONTEXT_IS_DESTROYED when it was destroyed or is an inactive primary, its sticky error. */
CUresult fc_ctx_current(struct CUctx_st **ctx);
/* The current context even when poisoned (NULL when none). */
struct CUctx_st *fc_ctx_top(void);
/* Whether cuCtxEnablePeerAccess made @p peer's cuMemAlloc memory @p ctx's to touch. */
bool fc_ctx_peer(const struct CUctx_st *ctx, const struct CUctx_st *peer);
/* Whether contexts on @p dev may access memory of @p peer (cuDeviceCanAccessPeer; device.c). */
bool fc_device_can_access(int dev, int peer);
/* Marks @p ctx poisoned and drops its queued work. */
void fc_ctx_poison(struct CUctx_st *ctx, CUresult code);

/* ---- memory (memory.c) --------------------------------------------------------------------- */

typedef enum {
    FC_MEM_DEVICE,     /* cuMemAlloc: device memory of its context */
    FC_MEM_MANAGED,    /* cuMemAllocManaged */
    FC_MEM_PINNED,     /* cuMemHostAlloc, cuMemAllocHost */
    FC_MEM_REGISTERED, /* cuMemHostRegister */
    FC_MEM_POOL,       /* stream-ordered allocator (pool.c): no context owns it */
    FC_MEM_VMM,        /* one cuMemMap mapping (vmm.c): no context owns it */
    FC_MEM_IPC         /* cuIpcOpenMemHandle (ipc.c): memory of another process */
} fc_mem_kind_t;

struct fc_managed;
struct fc_vmm_phys;

typedef struct fc_alloc {
    uintptr_t base;
    size_t size;
    uintptr_t map_base; /* the pages mapped or made accessible for it */
    size_t map_size;
    fc_mem_kind_t kind;
    unsigned flags;        /* CU_MEMHOSTALLOC_* or CU_MEMHOSTREGISTER_* */
    struct CUctx_st *ctx;  /* the owning context: NULL for pool and VMM memory */
    int device;            /* the device whose memory it is; -1 for host-located memory */
    unsigned long long id; /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
    int host_prot;         /* what host code may do with its pages outside device work */
    bool opened;           /* its pages are open for the device work running now, */
    int open_prot;         /* with this protection */
    bool slack;            /* the bytes of its pages around it hold FRESH_BYTE */
    bool sync_memops;      /* CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, set by cuPointerSetAttribute */
    int fd;                /* memfd its pages are shared from (it owns it), or -1 */
    /* FC_MEM_POOL: the pool, and the window of stream order in which it may be used */
    struct CUmemPoolHandle_st *pool;
    bool ready;           /* its allocation has been reached in stream order */
    uint64_t free_seq;    /* the sequence number of its queued cuMemFreeAsync (0: none) */
    bool imported;        /* cuMemPoolImportPointer */
    uint64_t pool_offset; /* IPC-capable pool: where its pages are in the pool's memfd */
    /* FC_MEM_VMM: the physical allocation mapped, and who may access the mapping */
    struct fc_vmm_phys *phys;
    unsigned char access[FC_MAX_DEVICES]; /* CU_MEM_ACCESS_FLAGS_PROT_* per device */
    unsigned char host_access;            /* host-located memory: the host's */
    uintptr_t reserve_base;               /* its cuMemAddressReserve range */
    size_t reserve_size;
    /* FC_MEM_IPC: the exporter's allocation */
    unsigned long long ipc_key; /* its BUFFER_ID there */
    int ipc_pid;                /* the exporting process */
    int ipc_refs;
    /* FC_MEM_MANAGED: advice and prefetches (managed.c), NULL until the first */
    struct fc_managed *managed;
    struct fc_alloc *next;
} fc_alloc_t;

/* The live allocation containing @p p, or NULL. */
fc_alloc_t *fc_mem_find(uintptr_t p);
/* The live allocation that starts at @p p (the pointer an allocation call returned), or NULL. */
fc_alloc_t *fc_mem_at(uintptr_t p);
/* The live allocation containing all of [p, p + n), or NULL (n == 0 counts as one byte). */
fc_alloc_t *fc_mem_find_range(uintptr_t p, size_t n);
/* The live allocation with BUFFER_ID @p id, or NULL. */
fc_alloc_t *fc_mem_by_id(unsigned long long id);
/* Each live allocation in turn (NULL starts; NULL at the end). */
fc_alloc_t *fc_mem_next(fc_alloc_t *a);
/* Whether @p p lies in the reserved device arena (device, pool, VMM and IPC memory). */
bool fc_mem_in_arena(uintptr_t p);
/* Adds an allocation to the table: its context's device (-1 without one), pages PROT_NONE outside
 * device work for device-like kinds, PROT_READ | PROT_WRITE for the others. NULL when out of
 * memory. */
fc_alloc_t *fc_mem_record(uintptr_t base, size_t size, fc_mem_kind_t kind, unsigned flags,
                          struct CUctx_st *ctx);
/* Takes @p a out of the table and frees its record (its pages are the caller's). */
void fc_mem_forget(fc_alloc_t *a);
/* Fresh arena address space: @p bytes (a multiple of FC_PAGE) at a multiple of @p align, PROT_NONE,
 * followed by a guard page; addresses are never reused. 0 when the arena is full. */
uintptr_t fc_mem_carve(size_t bytes, size_t align);
/* Returns [base, base + size) of the arena to PROT_NONE address space with no memory behind it. */
void fc_mem_drop_pages(uintptr_t base, size_t size);
/* Places an allocation of @p bytesize as cuMemAlloc does (fresh pages filled with FRESH_BYTE, the
 * allocation 256-byte aligned and ending as close to its guard page as that allows), its pages
 * PROT_NONE; with @p fd >= 0 they are that file's from @p offset, shared. Fills @p a's base, size,
 * map_base, map_size and slack. */
CUresult fc_mem_place(size_t bytesize, int fd, off_t offset, fc_alloc_t *a);
/* Device memory accounting (cuMemGetInfo): false when @p dev has not @p bytes left. */
bool fc_mem_charge(int dev, size_t bytes);
void fc_mem_uncharge(int dev, size_t bytes);
size_t fc_mem_used(int dev);
/* The CU_MEM_ACCESS_FLAGS_PROT_* a kernel, copy or memset of @p ctx with sequence number @p seq
 * has to @p a (UINT64_MAX: leave stream order out; managed and page-locked memory: READWRITE). */
unsigned fc_mem_access(const fc_alloc_t *a, const struct CUctx_st *ctx, uint64_t seq);
/* Makes what device work of @p ctx with sequence number @p seq may access accessible (open), and
 * gives every page its host protection back (close). */
void fc_mem_open(struct CUctx_st *ctx, uint64_t seq);
void fc_mem_close(void);
/* Whether emulated device work left the bytes around each allocation open for it as they were (the
 * part of its pages before the allocation and the gap of less than 256 bytes to its guard page,
 * which no guard page protects): false after a write outside an allocation, which the caller
 * reports as a fault. The bytes are made whole again. Call it open. */
bool fc_mem_slack_intact(void);
/* Frees every allocation of @p ctx (its teardown). */
void fc_mem_release_ctx(struct CUctx_st *ctx);
/* Frees @p a whatever its kind (its pages dropped, its memfd closed). */
void fc_mem_release(fc_alloc_t *a);

/* ---- stream-ordered pools (pool.c) ---------------------------------------------------------- */

struct CUmemPoolHandle_st {
    uint32_t magic;
    CUmemLocation location; /* DEVICE, HOST or HOST_NUMA */
    CUmemAllocationHandleType handle_types;
    size_t max_size;
    bool is_default, imported, destroyed;
    unsigned char access[FC_MAX_DEVICES]; /* CU_MEM_ACCESS_FLAGS_PROT_* per device */
    int fd;                               /* IPC-capable: the memfd of every allocation's pages */
    size_t fd_end;                        /* its used length */
    unsigned long long key;               /* names it in export data, across processes */
    cuuint64_t release_threshold, used, used_high, reserved, reserved_high;
    int reuse_follow, reuse_opportunistic, reuse_internal;
    unsigned long long live; /* allocations not yet freed */
    struct CUmemPoolHandle_st *next;
};

/* The device of pool memory (-1: host-located). */
int fc_pool_device(const struct CUmemPoolHandle_st *pool);
struct fc_op;
/* Runs a queued allocation or free (FC_OP_POOL); also when the queue is dropped unrun (a
 * context's teardown or sticky error): the operation completes all the same. */
void fc_pool_op(const struct fc_op *op);

/* ---- virtual memory management (vmm.c) ------------------------------------------------------ */

/* The cuMemAddressReserve range holding @p p, mapped or not: false when none does. */
bool fc_vmm_reserved(uintptr_t p, uintptr_t *base, size_t *size);
/* The handle types the physical allocation a VMM mapping maps may be exported as, and its id. */
unsigned long long fc_vmm_handle_types(const fc_alloc_t *a);
unsigned long long fc_vmm_block_id(const fc_alloc_t *a);

/* ---- streams, events and the queue of device work (stream.c) -------------------------------- */

typedef enum {
    FC_OP_KERNEL,
    FC_OP_COPY,
    FC_OP_MEMSET,
    FC_OP_RECORD,
    FC_OP_WAIT,
    FC_OP_POOL, /* a stream-ordered allocation or free (pool.c) */
    FC_OP_HOST  /* a host function (cuLaunchHostFunc) */
} fc_op_kind_t;

typedef struct fc_op {
    fc_op_kind_t kind;
    uint64_t seq;
    struct fc_op *next;
    union {
        struct {
            struct CUfunc_st *func;
            unsigned grid[3], block[3];
            void *args;
            void *params[FC_MAX_PARAMS];
        } kernel;
        struct {
            uintptr_t dst, src;
            size_t dst_pitch, src_pitch, width, height;
            /* cuMemcpy3D: depth slices, each side's this many bytes apart */
            size_t dst_slice, src_slice, depth;
            void *staging;            /* the pageable source captured at call time, freed after */
            struct CUctx_st *peer[2]; /* cuMemcpyPeer: the two contexts whose memory it moves */
        } copy;
        struct {
            uintptr_t dst;
            size_t pitch, width, height; /* width in elements */
            unsigned value, element;     /* element: 1, 2 or 4 bytes */
        } memset;
        struct {
            unsigned long long alloc; /* BUFFER_ID of the allocation */
            bool free;
        } pool;
        struct {
            CUhostFn fn;
            void *data;
        } host;
        struct {
            struct CUevent_st *event;
            uint64_t record_id;
        } record;
        struct {
            struct CUstream_st *stream;
            uint64_t seq;
        } wait;
    } u;
} fc_op_t;

struct CUstream_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    unsigned flags;
    bool dead, is_null;
    int priority; /* cuStreamCreateWithPriority: remembered */
    fc_op_t *head, *tail;
    bool query_seen; /* cuStreamQuery already answered NOT_READY for the pending work */
    struct CUstream_st *next;
};

struct CUevent_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    unsigned flags;
    bool dead, recorded, done, query_seen;
    struct CUstream_st *stream;
    uint64_t seq, record_id;
    struct timespec time;
    struct CUevent_st *next;
};

/* Resolves a stream handle used while @p ctx is current (NULL and CU_STREAM_LEGACY: the legacy
 * default stream). */
CUresult fc_stream_get(struct CUctx_st *ctx, CUstream handle, struct CUstream_st **stream);
/* Resolves a stream handle whatever context is current (the legacy default stream: the current
 * context's), for the calls cuda.h lets a stream stand for its context ("INVALID_CONTEXT
 * (default stream specified with no current context)"). */
CUresult fc_stream_any(CUstream handle, struct CUstream_st **stream);
/* Queues @p op (allocated with calloc) on @p stream, giving it the next sequence number. */
void fc_stream_enqueue(struct CUstream_st *stream, fc_op_t *op);
/* Runs the work of @p stream up to and including sequence number @p seq, and what it depends on;
 * returns the context's sticky error if the work faulted. */
CUresult fc_stream_run(struct CUstream_st *stream, uint64_t seq);
/* Runs all queued work of @p ctx. */
CUresult fc_ctx_run_all(struct CUctx_st *ctx);
/* Runs all queued work of every context (calls that synchronise the device). */
void fc_run_everything(void);
/* Drops the queued work of @p ctx without running it. */
void fc_ctx_drop_work(struct CUctx_st *ctx);
/* Destroys the streams and events of @p ctx (its teardown). */
void fc_stream_release_ctx(struct CUctx_st *ctx);
struct CUstream_st *fc_stream_new_null(struct CUctx_st *ctx);
/* FAKECUDA_STREAM_THREAD=1: start the thread that runs queued work beside the host. */
void fc_stream_thread_start(void);

/* ---- copies (copy.c) ----------------------------------------------------------------------- */

/* Runs a copy or memset of @p ctx's work; a fault in it (memory the device may not touch) is a
 * sticky ILLEGAL_ADDRESS of the context, as a copy engine's fault is. */
void fc_copy_execute(struct CUctx_st *ctx, fc_op_t *op);

/* ---- modules and kernels (module.c, kernel.c, grid.c, track.c, fault.c) ---------------------- */

/* Runs threads order[0..n) of thread block @p at of a launch (tests/emu/tj_emu.h). */
typedef void (*fc_block_fn)(const unsigned grid[3], const unsigned block[3], const unsigned at[3],
                            const unsigned *order, unsigned n, void **params);
typedef unsigned (*fc_argsize_fn)(size_t *sizes, size_t *aligns, unsigned max);
typedef void (*fc_store_hook_fn)(const void *address, size_t bytes);
typedef void (*fc_set_hook_fn)(fc_store_hook_fn hook);

/* What the double knows of one of typejit's kernels, from its name and source (track.c). */
typedef enum {
    FC_KIND_OTHER,
    FC_KIND_STRIDED,
    FC_KIND_FUSED,
    FC_KIND_GENERIC,
    FC_KIND_PARTS
} fc_kind_t;

#define FC_MAX_SHAPES 32

typedef struct {
    fc_kind_t kind;
    bool pack;
    bool understood; /* strided and fused: word and words per object read from the source */
    int word;        /* bytes per load and store */
    int nshapes;
    long long words[FC_MAX_SHAPES]; /* words per object of each block (one for strided) */
    int wordsz[FC_MAX_SHAPES];      /* bytes of each block's word */
    long long obytes; /* packed bytes of one object baked into the source: a parts kernel's (0:
                         from the launch's arguments, a table kernel), a strided kernel's with
                         edges (0: WORDS words of word_t) */
    bool serial;      /* parts: the one-thread unpack of a layout that overlaps itself */
} fc_kinfo_t;

struct CUmod_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    bool dead;
    bool tracked; /* its stores call the write counter (track.c) */
    void *dl;
    struct CUfunc_st *funcs;
    struct CUmod_st *next;
};

struct CUfunc_st {
    uint32_t magic;
    struct CUmod_st *mod;
    char name[256];
    fc_block_fn block;
    fc_argsize_fn argsize;
    fc_kinfo_t info;
    struct CUfunc_st *next;
};

/* Compiles @p source (NUL-terminated CUDA C++) for the host, or finds it in the kernel cache,
 * and dlopens it. Writes the kernel names found, separated by NUL, into @p names, and whether
 * its stores are counted (built with the store hooks and FAKECUDA_CXXFLAGS allows them). */
CUresult fc_kernel_build(const char *source, size_t len, void **dl, char **names, bool *tracked);
void fc_kernel_execute(fc_op_t *op);
/* A function handle usable while @p ctx is current: its module is loaded there. */
CUresult fc_func_get(struct CUctx_st *ctx, CUfunction handle, struct CUfunc_st **func);
void fc_module_release_ctx(struct CUctx_st *ctx);

/* Runs every thread of the launch @p op on the pool of FAKECUDA_THREADS host threads: blocks in
 * a shuffled order, each block's threads shuffled too, from FAKECUDA_SEED and the launch's number
 * (grid.c). Returns 0, or the signal of the first fault. */
int fc_grid_run(fc_op_t *op, unsigned long long *launch);
/* The seed of this process's thread orders (FAKECUDA_SEED, or drawn at the first launch). */
unsigned long long fc_grid_seed(void);

/* @p source with its comments blanked (malloc'd, NUL-terminated; NULL when out of memory), so
 * that a name in a comment is not taken for code (kernel.c). */
char *fc_strip_comments(const char *source, size_t len);
/* The kind, word and words per object of kernel @p name of @p source (track.c). */
void fc_track_describe(const char *name, const char *source, size_t len, fc_kinfo_t *info);
/* Starts counting the bytes the launch @p op writes, when it is one of typejit's pack or unpack
 * kernels and its module is tracked; writes a reason to @p why and returns false when the double
 * cannot tell what the kernel must write (its source is not understood). */
bool fc_track_begin(const fc_op_t *op, char *why, size_t len);
/* The store hook of every tracked module. */
void fc_track_store(const void *address, size_t bytes);
/* Adds the calling host thread's count to the launch's (each worker, when it is done). */
void fc_track_flush(void);
/* Ends counting; returns false with the broken rule in @p why (the launch did not fault:
 * @p complete) when a byte was written twice, outside its output, or (@p complete) some byte of
 * the output was not written. */
bool fc_track_end(bool complete, char *why, size_t len);

/* ---- address trace, FAKECUDA_TRACE (trace.c) ------------------------------------------------ */

typedef void (*fc_trace_load_fn)(const void *address, size_t bytes);
typedef void (*fc_trace_thread_fn)(unsigned long long block, unsigned thread);
typedef void (*fc_set_trace_hooks_fn)(fc_trace_load_fn load, fc_trace_thread_fn thread);

/* Whether FAKECUDA_TRACE asks for a trace of every launch. */
bool fc_trace_enabled(void);
/* Around one launch's run: fc_trace_end appends its line (launch number @p launch). */
void fc_trace_begin(void);
void fc_trace_end(const fc_op_t *op, unsigned long long launch);
/* The hooks of tests/emu/tj_emu.h: the thread that runs next on this host thread, and each
 * load; stores come through fc_track_store. */
void fc_trace_thread(unsigned long long block, unsigned thread);
void fc_trace_load(const void *address, size_t bytes);
void fc_trace_access(const void *address, size_t bytes, bool store);

/* Installs the fault handler (once, at cuInit). */
void fc_fault_install(void);
/* Runs @p fn(arg) and returns 0, or the signal number if it faulted. */
int fc_fault_guard(void (*fn)(void *), void *arg);

/* Magic numbers of the handle kinds, checked before a handle is used. */
#define FC_MAGIC_CTX    0x63747821u
#define FC_MAGIC_STREAM 0x73747221u
#define FC_MAGIC_EVENT  0x65766e21u
#define FC_MAGIC_MODULE 0x6d6f6421u
#define FC_MAGIC_FUNC   0x66756e21u
#define FC_MAGIC_POOL   0x706f6c21u

void fc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A broken rule of the device seen in emulated work (a byte written twice, ...): said on stderr
 * with the seed, counted, and the process exits with status FC_VIOLATION_EXIT at its end even
 * if the application recovered, so that no test passes over it (init.c). */
#define FC_VIOLATION_EXIT 70
void fc_violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* TJ_TESTS_FAKECUDA_FAKECUDA_H */
