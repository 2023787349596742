/* SPDX-License-Identifier: BSD-3-Clause */
/* Contexts and devices as applications use them, through the preloaded library: packs from a
 * thread that never touched CUDA, buffers on device 1 (another arch), an application-owned
 * cuCtxCreate context, buffers on two devices in one call, four threads packing at once (and
 * making the first device calls of types whose layouts are built then), a type reaching past its
 * allocation, a reset of the primary context (cudaDeviceReset), and
 * MPI_Finalize. After every call the caller's current context
 * is exactly what it was; every byte is checked against PMPI_Pack / PMPI_Unpack on host copies.
 * Needs two devices (FAKECUDA_DEVICES=2 on the test driver); exits 77 without a device.
 *
 *   test_gpu_context                     the scenarios above
 *   test_gpu_context faults [--expect-errors] [--sticky]
 *
 * `faults` runs with the test driver's failure injection (FAKECUDA_FAIL): every buffer is made
 * first, then every call runs; a call may fail with an MPI error only with --expect-errors, and
 * a call that succeeds must have produced exact bytes. --sticky: the context dies during the
 * run, so bytes are checked only up to the first failed call and nothing is freed. */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "counters.h"
#include "cudrv.h"

#define SPAN (1 << 17) /* each half holds every job's typed footprint */

static MPI_Datatype types[3]; /* strided, strided 3-D, irregular (staged) */

static CUcontext current(void)
{
    CUcontext c = NULL;
    CUDRV(cuCtxGetCurrent(&c));
    return c;
}

/* Device memory allocated in @p ctx (pushed around the call, as an application would). */
static CUdeviceptr alloc_in(CUcontext ctx, size_t len)
{
    CUdeviceptr p;
    CUcontext popped;
    CUDRV(cuCtxPushCurrent(ctx));
    CUDRV(cuMemAlloc(&p, len));
    CUDRV(cuCtxPopCurrent(&popped));
    return p;
}

static void free_in(CUcontext ctx, CUdeviceptr p)
{
    CUcontext popped;
    CUDRV(cuCtxPushCurrent(ctx));
    CUDRV(cuMemFree(p));
    CUDRV(cuCtxPopCurrent(&popped));
}

static void copy_in(CUcontext ctx, CUdeviceptr dst, const void *src, size_t len)
{
    CUcontext popped;
    CUDRV(cuCtxPushCurrent(ctx));
    CUDRV(cuMemcpyHtoD(dst, src, len));
    CUDRV(cuCtxPopCurrent(&popped));
}

static void copy_out(CUcontext ctx, void *dst, CUdeviceptr src, size_t len)
{
    CUcontext popped;
    CUDRV(cuCtxPushCurrent(ctx));
    CUDRV(cuMemcpyDtoH(dst, src, len));
    CUDRV(cuCtxPopCurrent(&popped));
}

/* Buffers and references for one pack and one unpack of `count` objects of `type`. The packed
 * buffer is device memory of pctx, or pageable host memory when pctx is NULL. */
typedef struct {
    MPI_Datatype type;
    int count, size;
    CUcontext tctx, pctx;
    CUdeviceptr typed, packed;
    unsigned char *host_packed;
    unsigned char src[SPAN], ref[SPAN], got[SPAN];
    int rc_pack, rc_unpack, pos_pack, pos_unpack;
} job_t;

static void job_setup(job_t *j, MPI_Datatype type, int count, CUcontext tctx, CUcontext pctx,
                      unsigned salt)
{
    j->type = type;
    j->count = count;
    j->tctx = tctx;
    j->pctx = pctx;
    MPI_Aint tlb, text, lb, ext;
    MPI_Type_size(type, &j->size);
    MPI_Type_get_true_extent(type, &tlb, &text);
    MPI_Type_get_extent(type, &lb, &ext);
    REQUIRE(j->size * count <= SPAN && tlb >= 0 && tlb + text + (count - 1) * ext <= SPAN / 2);
    j->typed = alloc_in(tctx, SPAN);
    if (pctx != NULL) {
        j->packed = alloc_in(pctx, SPAN);
    } else {
        j->host_packed = malloc(SPAN);
        REQUIRE(j->host_packed != NULL);
        j->packed = (CUdeviceptr)(uintptr_t)j->host_packed;
    }
    for (int i = 0; i < SPAN; i++)
        j->src[i] = (unsigned char)(i * 31 + salt);
    copy_in(tctx, j->typed, j->src, SPAN);
}

/* The calls under test, from whatever thread runs this; the thread's current context must be
 * the same after each. */
static void job_run(job_t *j)
{
    CUcontext before = NULL;
    CUDRV(cuCtxGetCurrent(&before));
    j->pos_pack = 0;
    j->rc_pack = MPI_Pack((void *)(uintptr_t)j->typed, j->count, j->type,
                          (void *)(uintptr_t)j->packed, SPAN, &j->pos_pack, MPI_COMM_SELF);
    CHECK(current() == before);
    /* Unpack the packed bytes into the typed buffer's second half. */
    j->pos_unpack = 0;
    j->rc_unpack =
        MPI_Unpack((void *)(uintptr_t)j->packed, SPAN, &j->pos_unpack,
                   (void *)(uintptr_t)(j->typed + SPAN / 2), j->count, j->type, MPI_COMM_SELF);
    CHECK(current() == before);
}

/* Compare with the system MPI on host copies, then free. */
static void job_check(job_t *j, const char *what)
{
    int pos = 0;
    unsigned char *typed = malloc(SPAN);
    REQUIRE(typed != NULL);
    if (j->rc_pack != MPI_SUCCESS || j->rc_unpack != MPI_SUCCESS)
        fprintf(stderr, "%s: MPI error %d / %d\n", what, j->rc_pack, j->rc_unpack);
    CHECK(j->rc_pack == MPI_SUCCESS && j->rc_unpack == MPI_SUCCESS);
    REQUIRE(PMPI_Pack(j->src, j->count, j->type, j->ref, SPAN, &pos, MPI_COMM_SELF) == MPI_SUCCESS);
    CHECK_EQ_INT(j->pos_pack, pos);
    if (j->pctx != NULL)
        copy_out(j->pctx, j->got, j->packed, SPAN);
    else
        memcpy(j->got, j->host_packed, SPAN);
    if (memcmp(j->got, j->ref, (size_t)pos) != 0) {
        fprintf(stderr, "%s: packed bytes differ\n", what);
        check_failures++;
    }
    memcpy(typed, j->src, SPAN);
    pos = 0;
    REQUIRE(PMPI_Unpack(j->ref, SPAN, &pos, typed + SPAN / 2, j->count, j->type, MPI_COMM_SELF) ==
            MPI_SUCCESS);
    CHECK_EQ_INT(j->pos_unpack, pos);
    copy_out(j->tctx, j->got, j->typed, SPAN);
    if (memcmp(j->got, typed, SPAN) != 0) {
        fprintf(stderr, "%s: unpacked bytes differ\n", what);
        check_failures++;
    }
    free(typed);
    free_in(j->tctx, j->typed);
    if (j->pctx != NULL)
        free_in(j->pctx, j->packed);
    free(j->host_packed);
}

static void roundtrip(const char *what, MPI_Datatype type, int count, CUcontext tctx,
                      CUcontext pctx)
{
    job_t *j = calloc(1, sizeof(*j));
    REQUIRE(j != NULL);
    job_setup(j, type, count, tctx, pctx, (unsigned)count * 7u);
    job_run(j);
    job_check(j, what);
    free(j);
}

static void *run_job(void *arg)
{
    job_run(arg);
    return NULL;
}

/* A thread that never called CUDA: no current context before or after. */
static void fresh_thread(CUcontext ctx)
{
    for (int t = 0; t < 3; t++) {
        job_t *j = calloc(1, sizeof(*j));
        pthread_t th;
        REQUIRE(j != NULL);
        job_setup(j, types[t], 2, ctx, ctx, 3u + (unsigned)t);
        REQUIRE(pthread_create(&th, NULL, run_job, j) == 0);
        pthread_join(th, NULL);
        job_check(j, "fresh thread");
        free(j);
    }
}

static void *threaded(void *arg)
{
    CUcontext ctx = arg;
    for (int i = 0; i < 12; i++)
        roundtrip("threads", types[i % 3], 1 + i % 3, ctx, ctx);
    return NULL;
}

static void build_types(void)
{
    int sizes[3] = {16, 16, 16}, subs[3] = {4, 5, 3}, starts[3] = {2, 1, 7};
    int lens[3] = {1, 2, 3}, displs[3] = {0, 5, 11};
    MPI_Type_vector(64, 3, 7, MPI_INT, &types[0]);
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_FLOAT, &types[1]);
    MPI_Type_indexed(3, lens, displs, MPI_DOUBLE, &types[2]);
    for (int i = 0; i < 3; i++)
        MPI_Type_commit(&types[i]);
}

/* Types that are not one strided block, committed and never moved yet: their layouts are
 * built at their first device call (docs/layouts.md#built-at-the-first-device-call). */
#define FIRST_TYPES   6
#define FIRST_THREADS 4
static MPI_Datatype first_types[FIRST_TYPES];
static pthread_barrier_t first_barrier;

/* Each thread's buffers are made before the threads meet, so that their first calls of each
 * type come as close together as the threads can make them. */
static void *first_calls(void *arg)
{
    job_t *jobs = arg;
    pthread_barrier_wait(&first_barrier);
    for (int i = 0; i < FIRST_TYPES; i++)
        job_run(&jobs[i]);
    return NULL;
}

/* Threads making the first device call of the same types at once: each type's layout is built
 * once (the `layouts` counter), and every call is exact. */
static void first_device_calls(CUcontext ctx)
{
    int bl[600], d[600], sbl[3] = {1, 1, 1}, gsizes[2] = {8, 12}, distribs[2], dargs[2],
                         psizes[2] = {1, 1};
    MPI_Aint bd[600], sd[3] = {0, 8, 24};
    MPI_Datatype members[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT_INT}, v;
    pthread_t th[FIRST_THREADS];
    job_t *jobs;
    long layouts, deferred = tj_counter("deferred");

    for (int i = 0; i < 600; i++) {
        bl[i] = 1 + i % 3;
        d[i] = 5 * i + i % 4;
        bd[i] = 48 * i + 8 * (i % 3);
    }
    distribs[0] = distribs[1] = MPI_DISTRIBUTE_BLOCK;
    dargs[0] = dargs[1] = MPI_DISTRIBUTE_DFLT_DARG;
    MPI_Type_indexed(3, bl, d, MPI_DOUBLE, &first_types[0]);
    MPI_Type_indexed(600, bl, d, MPI_DOUBLE, &first_types[1]); /* a table in device memory */
    MPI_Type_create_struct(3, sbl, sd, members, &first_types[2]);
    MPI_Type_contiguous(7, MPI_SHORT_INT, &first_types[3]);
    MPI_Type_create_darray(1, 0, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_FLOAT,
                           &first_types[4]); /* one strided block, through its layout */
    MPI_Type_vector(3, 2, 5, MPI_FLOAT, &v);
    MPI_Type_create_hindexed(300, bl, bd, v, &first_types[5]);
    MPI_Type_free(&v);
    for (int i = 0; i < FIRST_TYPES; i++)
        MPI_Type_commit(&first_types[i]);
    CHECK_EQ_INT(tj_counter("deferred") - deferred, FIRST_TYPES);
    layouts = tj_counter("layouts");
    REQUIRE((jobs = calloc(FIRST_THREADS * FIRST_TYPES, sizeof(job_t))) != NULL);
    for (int k = 0; k < FIRST_THREADS * FIRST_TYPES; k++)
        job_setup(&jobs[k], first_types[k % FIRST_TYPES], 1 + k % 2, ctx, ctx, (unsigned)k);
    REQUIRE(pthread_barrier_init(&first_barrier, NULL, FIRST_THREADS) == 0);
    for (int i = 0; i < FIRST_THREADS; i++)
        REQUIRE(pthread_create(&th[i], NULL, first_calls, &jobs[i * FIRST_TYPES]) == 0);
    for (int i = 0; i < FIRST_THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&first_barrier);
    CHECK_EQ_INT(tj_counter("layouts") - layouts, FIRST_TYPES);
    for (int k = 0; k < FIRST_THREADS * FIRST_TYPES; k++)
        job_check(&jobs[k], "first device calls");
    free(jobs);
    for (int i = 0; i < FIRST_TYPES; i++)
        MPI_Type_free(&first_types[i]);
}

/* Calls under injected driver failures (see the top of the file). Half the jobs pack into
 * pageable host memory, which needs typejit's device staging buffer and copies. */
static int faults(bool expect_errors, bool sticky)
{
    enum { JOBS = 12 };
    job_t *jobs = calloc(JOBS, sizeof(job_t));
    CUcontext ctx = current();
    int errors = 0;
    bool dead = false;

    REQUIRE(jobs != NULL);
    for (int i = 0; i < JOBS; i++)
        job_setup(&jobs[i], types[i % 3], 1 + i % 2, ctx, i % 4 < 2 ? ctx : NULL, (unsigned)i);
    for (int i = 0; i < JOBS; i++)
        job_run(&jobs[i]);
    for (int i = 0; i < JOBS; i++) {
        job_t *j = &jobs[i];
        bool failed = j->rc_pack != MPI_SUCCESS || j->rc_unpack != MPI_SUCCESS;
        errors += failed;
        dead = dead || (sticky && failed);
        if (failed || dead)
            continue; /* an MPI error: the output is undefined, as with the system MPI */
        job_check(j, "faults");
    }
    printf("faults: %d of %d jobs returned MPI errors; kernel_launches=%ld gpu_fallbacks=%ld\n",
           errors, JOBS, tj_counter("kernel_launches"), tj_counter("gpu_fallbacks"));
    CHECK(expect_errors ? errors > 0 : errors == 0);
    free(jobs);
    return 0;
}

int main(int argc, char **argv)
{
    CUcontext dev0, dev1, own, popped;
    CUdevice d1;
    int provided, ndev = 0;
    long before;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (!cudrv_open()) {
        MPI_Finalize();
        return 77;
    }
    REQUIRE(dlsym(RTLD_DEFAULT, "tj_version") != NULL); /* run with libtypejit.so preloaded */
    REQUIRE(provided == MPI_THREAD_MULTIPLE);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    build_types();
    dev0 = current();
    if (argc > 1 && strcmp(argv[1], "faults") == 0) {
        bool expect_errors = false, sticky = false;
        for (int i = 2; i < argc; i++) {
            expect_errors |= strcmp(argv[i], "--expect-errors") == 0;
            sticky |= strcmp(argv[i], "--sticky") == 0;
        }
        faults(expect_errors, sticky);
        /* After a sticky error the types and contexts are left as they are: the test ends. */
        MPI_Finalize();
        CHECK_DONE();
    }
    CUDRV(cuDeviceGetCount(&ndev));
    if (ndev < 2) {
        printf("SKIP: needs two CUDA devices\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    build_types();
    dev0 = current();

    CUDRV(cuDeviceGet(&d1, 1));
    CUDRV(cuDevicePrimaryCtxRetain(&dev1, d1));

    /* Device 0 from the main thread, then from a thread that never touched CUDA. */
    for (int t = 0; t < 3; t++)
        roundtrip("device 0", types[t], 3, dev0, dev0);
    fresh_thread(dev0);

    /* Device 1 current: its own arch's kernels must run there. */
    CUDRV(cuCtxSetCurrent(dev1));
    before = tj_counter("kernel_launches");
    roundtrip("device 1", types[0], 2, dev1, dev1);
    CHECK(tj_counter("kernel_launches") > before);
    CHECK(current() == dev1);
    CUDRV(cuCtxSetCurrent(dev0));

    /* The typed buffer on device 0, the packed one on device 1: exact, whatever the path. */
    roundtrip("two devices", types[1], 1, dev0, dev1);

    /* An application-owned context on device 0, current while typejit works in it. */
    CUdevice d0;
    CUDRV(cuDeviceGet(&d0, 0));
    CUDRV(ctx_create(&own, 0, d0));
    before = tj_counter("kernel_launches");
    roundtrip("own context", types[0], 1, own, own);
    CHECK(tj_counter("kernel_launches") > before);
    CHECK(current() == own);
    CUDRV(cuCtxPopCurrent(&popped));
    CHECK(popped == own);
    CHECK(current() == dev0);

    /* Four threads at once, none with a context of its own. */
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        REQUIRE(pthread_create(&th[i], NULL, threaded, dev0) == 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);

    /* Four threads making the first device calls of types whose layouts are not built yet. */
    first_device_calls(dev0);

    /* A type reaching past the end of its allocation: an MPI error, nothing touched, and the
     * context stays usable. */
    {
        CUdeviceptr small = alloc_in(dev0, 1024), out = alloc_in(dev0, 4096);
        int pos = 0;
        int rc = MPI_Pack((void *)(uintptr_t)small, 4, types[0], (void *)(uintptr_t)out, 4096 * 4,
                          &pos, MPI_COMM_SELF);
        CHECK(rc == MPI_ERR_BUFFER);
        CHECK_EQ_INT(pos, 0);
        free_in(dev0, small);
        free_in(dev0, out);
        roundtrip("after a refused call", types[0], 1, dev0, dev0);
    }

    /* The application resets device 0's primary context (cudaDeviceReset): the handle stays,
     * and typejit's stream, modules and staging there went with the old instance. Packs must
     * work again, with kernels, not only staged or with MPI errors. */
    CUDRV(cuDevicePrimaryCtxReset(d0));
    CHECK(current() == dev0);
    before = tj_counter("kernel_launches");
    for (int t = 0; t < 3; t++)
        roundtrip("after a reset", types[t], 2, dev0, dev0);
    CHECK(tj_counter("kernel_launches") > before);

    for (int i = 0; i < 3; i++)
        MPI_Type_free(&types[i]);
    CUDRV(cuCtxDestroy(own));
    CHECK(current() == dev0);
    MPI_Finalize();
    /* typejit released only what it retained: the application's contexts are still usable. */
    CHECK(current() == dev0);
    CUdeviceptr p;
    CUDRV(cuMemAlloc(&p, 64));
    CUDRV(cuMemFree(p));
    CUDRV(cuDevicePrimaryCtxRelease(d1));
    CHECK_DONE();
}
