/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU pack/unpack sweep: for the paper's 2-D objects and the 26 halo regions
 * of a 512^3 float grid, the JIT kernel against the generic run-time-parameter kernel,
 * cuMemcpy2DAsync (2-D only) and the device-to-device copy of the same bytes (the ceiling), all
 * in one run, plus MPI_Pack call-to-return times for small objects and for types that are not
 * one strided block, against staging them. Prints CSV on stdout.
 *
 *   LD_PRELOAD=libtypejit.so bench_gpu_pack [--quick] [--small-only] [--smoke]
 *
 * --smoke runs every path on tiny objects (a 64^3 grid, objects up to 64 KiB): a plumbing check
 * for the CPU-only test driver, whose timings mean nothing.
 *
 * Each row reports the time, GB/s of packed bytes, and the fraction of the sector floor: the time
 * to move every 32-byte sector the object touches plus the packed bytes at the measured ceiling
 * (fraction = floor time / measured time; 1.0 is the memory's limit). Exits 77 without a device. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "gpu/cuda.h"
#include "jit/gen.h"
#include "kernels/lookup.h"
#include "kernels/target.h"
#include "type/translate.h"
#include "util/clock.h"

/* The driver calls only this benchmark makes (event timing, the 2-D copy baseline), from the
 * libcuda.so.1 the library opened. They run on the legacy default stream, which the library's
 * streams (blocking ones, CU_STREAM_DEFAULT) synchronise with: an event recorded there after a
 * launch on the library's stream completes after the launch. */
static struct {
    __typeof__(&cuMemcpy2DAsync) memcpy2d;
    __typeof__(&cuEventCreate) event_create;
    __typeof__(&cuEventRecord) event_record;
    __typeof__(&cuEventSynchronize) event_sync;
    __typeof__(&cuEventElapsedTime) event_elapsed;
    __typeof__(&cuEventDestroy) event_destroy;
} drv;

static void *symbol(void *lib, const char *name, const char *older)
{
    void *f = dlsym(lib, name);
    return f != NULL || older == NULL ? f : dlsym(lib, older);
}

/* After tj_gpu_init: look the functions up; those missing stay NULL (the rows that need them are
 * left out). */
static void driver_open(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL)
        return;
    *(void **)&drv.memcpy2d = symbol(lib, "cuMemcpy2DAsync_v2", NULL);
    *(void **)&drv.event_create = symbol(lib, "cuEventCreate", NULL);
    *(void **)&drv.event_record = symbol(lib, "cuEventRecord", NULL);
    *(void **)&drv.event_sync = symbol(lib, "cuEventSynchronize", NULL);
    *(void **)&drv.event_elapsed = symbol(lib, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    *(void **)&drv.event_destroy = symbol(lib, "cuEventDestroy_v2", "cuEventDestroy");
}

/* A 2-D strided copy on the legacy stream, as the baseline of 2-D objects. */
static void copy_2d(tj_devptr_t dst, size_t dpitch, tj_devptr_t src, size_t spitch, size_t width,
                    size_t height)
{
    CUDA_MEMCPY2D c = {0};
    if (drv.memcpy2d == NULL)
        return;
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.srcDevice = (CUdeviceptr)src;
    c.srcPitch = spitch;
    c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.dstDevice = (CUdeviceptr)dst;
    c.dstPitch = dpitch;
    c.WidthInBytes = width;
    c.Height = height;
    drv.memcpy2d(&c, NULL);
}

/* Seconds per call of @p work over @p reps calls, from events around them; false when the
 * driver lacks what it takes. */
static bool event_time(void (*work)(void *), void *arg, int reps, double *seconds)
{
    CUevent start, stop;
    float ms = 0;
    bool ok;

    if (drv.event_create == NULL || drv.event_record == NULL || drv.event_sync == NULL ||
        drv.event_elapsed == NULL || drv.event_destroy == NULL)
        return false;
    if (drv.event_create(&start, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
        return false;
    if (drv.event_create(&stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
        drv.event_destroy(start);
        return false;
    }
    ok = drv.event_record(start, NULL) == CUDA_SUCCESS;
    for (int i = 0; ok && i < reps; i++)
        work(arg);
    ok = ok && drv.event_record(stop, NULL) == CUDA_SUCCESS &&
         drv.event_sync(stop) == CUDA_SUCCESS &&
         drv.event_elapsed(&ms, start, stop) == CUDA_SUCCESS;
    if (ok)
        *seconds = ms * 1e-3 / (reps > 0 ? reps : 1);
    drv.event_destroy(stop);
    drv.event_destroy(start);
    return ok;
}

/* Bytes of distinct 32-byte sectors one object touches, walking its runs in address order of
 * the packed sequence (runs of real halos and 2-D objects ascend, so a last-sector check
 * suffices to count each sector once). */
static int64_t sector_bytes(const tj_block_t *b, int64_t count)
{
    int64_t idx[TJ_BLOCK_MAX_DIMS] = {0}, total = 0, last = INT64_MIN;
    for (int64_t k = 0; k < count; k++) {
        memset(idx, 0, sizeof(idx));
        for (;;) {
            int64_t a = b->start + k * b->extent;
            for (int d = 1; d < b->ndims; d++)
                a += idx[d] * b->strides[d];
            int64_t first = a >> 5, end = (a + b->counts[0] - 1) >> 5;
            total += end - first + 1 - (first == last);
            last = end;
            int d = 1;
            for (; d < b->ndims; d++) {
                if (++idx[d] < b->counts[d])
                    break;
                idx[d] = 0;
            }
            if (d >= b->ndims)
                break;
        }
    }
    return total * 32;
}

typedef struct {
    tj_gpu_function_t fn;
    tj_launch_t geo;
    void *args[4];
    tj_devptr_t dst, src;
    long long count;
    tj_generic_params_t params;
} launch_t;

static void do_launch(void *p)
{
    launch_t *l = p;
    tj_gpu_launch(l->fn, l->geo.grid, l->geo.block, l->args);
}

typedef struct {
    tj_devptr_t dst, src;
    size_t dpitch, spitch, width, height, bytes;
} copy_t;

static void do_copy2d(void *p)
{
    copy_t *c = p;
    copy_2d(c->dst, c->dpitch, c->src, c->spitch, c->width, c->height);
}

static void do_copy(void *p)
{
    copy_t *c = p;
    copy_2d(c->dst, c->bytes, c->src, c->bytes, c->bytes, 1);
}

static int max_reps = 200; /* timed repetitions of one measurement, at most */

static int reps_for(int64_t bytes)
{
    int64_t r = ((int64_t)256 << 20) / (bytes > 0 ? bytes : 1);
    r = r < 5 ? 5 : r > 200 ? 200 : r;
    return (int)(r < max_reps ? r : max_reps);
}

static double ceiling_bw;     /* bytes moved (read + write) per second by a device copy */
static int small_reps = 2000; /* MPI_Pack calls timed per small object */
static char target[32];

static double time_fn(void (*fn)(void *), void *arg, int reps)
{
    double s = 0;
    fn(arg); /* warm-up */
    tj_gpu_sync();
    if (!event_time(fn, arg, reps, &s))
        return -1;
    return s;
}

static void row(const char *kind, const char *name, int run, int64_t count, int64_t bytes,
                const char *dir, const char *method, double t, double floor_t)
{
    if (t <= 0)
        return;
    printf("%s,%s,%d,%lld,%lld,%s,%s,%.3f,%.2f,%.3f\n", kind, name, run, (long long)count,
           (long long)bytes, dir, method, t * 1e6, (double)bytes / t / 1e9,
           floor_t > 0 ? floor_t / t : 0);
}

/* Measure one object in one direction. `typed` is on the device; `packed` is device memory
 * or the device address of mapped host memory. */
static void measure(const char *kind, const char *name, int run, const tj_block_t *b, int64_t count,
                    tj_dir_t dir, const char *dirname, tj_devptr_t typed, tj_devptr_t packed,
                    bool try_2d)
{
    int64_t bytes = b->size * count;
    double floor_t = (double)(sector_bytes(b, count) + bytes) / ceiling_bw;
    int reps = reps_for(bytes);
    tj_devptr_t at = typed + (tj_devptr_t)b->start; /* where the JIT kernel's object 0 starts */
    /* The runtime's words for this launch; the generic kernel has no edges. */
    tj_words_t w = tj_block_words(b, count, (uintptr_t)at, (uintptr_t)packed);
    int plain = w.edge != 0 ? w.edge : w.word;
    tj_kernel_spec_t jit = tj_spec_words(b, w, dir, target);
    tj_kernel_spec_t generic = tj_spec_generic(plain, dir, target);
    tj_kernel_t *k;
    launch_t l = {0};

    l.count = count;
    l.dst = dir == TJ_DIR_PACK ? packed : typed;
    l.src = dir == TJ_DIR_PACK ? typed : packed;
    l.args[0] = &l.dst;
    l.args[1] = &l.src;
    l.args[2] = &l.count;
    l.args[3] = &l.params;

    /* JIT kernel: built for the block at start 0, launched at its start */
    if (tj_lookup_kernel(&jit, TJ_LOOKUP_COMPILE, &k, NULL) == TJ_OK &&
        tj_kernel_function(k, &l.fn) == TJ_OK) {
        l.dst = dir == TJ_DIR_PACK ? packed : at;
        l.src = dir == TJ_DIR_PACK ? at : packed;
        tj_gen_edges_launch(b, w.word, w.edge, count, &l.geo);
        row(kind, name, run, count, bytes, dirname, "jit", time_fn(do_launch, &l, reps), floor_t);
    }
    /* generic kernel: the start is one of its run-time arguments */
    l.dst = dir == TJ_DIR_PACK ? packed : typed;
    l.src = dir == TJ_DIR_PACK ? typed : packed;
    if (tj_lookup_kernel(&generic, TJ_LOOKUP_COMPILE, &k, NULL) == TJ_OK &&
        tj_kernel_function(k, &l.fn) == TJ_OK) {
        tj_gen_generic_params(b, plain, &l.params);
        tj_gen_generic_launch(b, plain, count, &l.geo);
        row(kind, name, run, count, bytes, dirname, "generic", time_fn(do_launch, &l, reps),
            floor_t);
    }
    /* cuMemcpy2DAsync for 2-D objects of one count */
    if (try_2d && b->ndims <= 2 && count == 1) {
        copy_t c = {0};
        c.width = (size_t)b->counts[0];
        c.height = (size_t)(b->ndims == 2 ? b->counts[1] : 1);
        size_t pitch = (size_t)(b->ndims == 2 ? b->strides[1] : b->counts[0]);
        if (dir == TJ_DIR_PACK) {
            c.src = typed + (tj_devptr_t)b->start;
            c.spitch = pitch;
            c.dst = packed;
            c.dpitch = c.width;
        } else {
            c.dst = typed + (tj_devptr_t)b->start;
            c.dpitch = pitch;
            c.src = packed;
            c.spitch = c.width;
        }
        row(kind, name, run, count, bytes, dirname, "memcpy2d", time_fn(do_copy2d, &c, reps),
            floor_t);
    }
    /* the same bytes, contiguous, in the same direction: the ceiling */
    {
        copy_t c = {0};
        c.bytes = (size_t)bytes;
        c.src = dir == TJ_DIR_PACK ? typed : packed;
        c.dst = dir == TJ_DIR_PACK ? packed : typed;
        row(kind, name, run, count, bytes, dirname, "copy", time_fn(do_copy, &c, reps), floor_t);
    }
}

static MPI_Datatype object_2d(int64_t total, int run)
{
    MPI_Datatype t;
    if (run >= 512)
        MPI_Type_contiguous((int)total, MPI_BYTE, &t);
    else
        MPI_Type_vector((int)(total / run), run, 512, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Halo region of direction d (0..26, 13 is the centre) of an n^3 float grid, radius r. */
static MPI_Datatype halo_region(int d, int n, int r)
{
    int sizes[3] = {n, n, n}, subs[3], starts[3], comp[3] = {d / 9 - 1, d / 3 % 3 - 1, d % 3 - 1};
    MPI_Datatype t;
    for (int a = 0; a < 3; a++) {
        subs[a] = comp[a] == 0 ? n - 2 * r : r;
        starts[a] = comp[a] < 0 ? r : comp[a] > 0 ? n - 2 * r : r;
    }
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_FLOAT, &t);
    MPI_Type_commit(&t);
    return t;
}

/* MPI_Pack call to return for small device objects: total, and the share of launch + kernel
 * measured without typejit's host work. */
static void small_objects(tj_devptr_t typed, tj_devptr_t packed)
{
    printf("\n# MPI_Pack call-to-return, device -> device, 2-D objects, pitch 512 B, median of "
           "%d\n",
           small_reps);
    printf("small_bytes,run,mpi_pack_us,launch_sync_us,kernel_us,typejit_host_us\n");
    for (int64_t total = 64; total <= 65536; total *= 4) {
        int run = total >= 1024 ? 64 : 8;
        MPI_Datatype t = object_2d(total, run);
        tj_block_t b;
        double *s = calloc((size_t)small_reps, sizeof(double));
        double *l2 = calloc((size_t)small_reps, sizeof(double));
        double kern = 0;
        tj_kernel_t *k;
        launch_t l = {0};
        int pos;

        if (s == NULL || l2 == NULL || tj_translate_block(t, &b, NULL) != TJ_OK) {
            fprintf(stderr, "bench_gpu_pack: out of memory or untranslatable small object\n");
            exit(1);
        }
        for (int i = 0; i < small_reps; i++) {
            pos = 0;
            double t0 = tj_clock_seconds();
            MPI_Pack((void *)(uintptr_t)typed, 1, t, (void *)(uintptr_t)packed, (int)total, &pos,
                     MPI_COMM_SELF);
            s[i] = tj_clock_seconds() - t0;
        }
        tj_words_t w =
            tj_block_words(&b, 1, (uintptr_t)(typed + (tj_devptr_t)b.start), (uintptr_t)packed);
        tj_kernel_spec_t spec = tj_spec_words(&b, w, TJ_DIR_PACK, target);
        if (tj_lookup_kernel(&spec, TJ_LOOKUP_COMPILE, &k, NULL) == TJ_OK &&
            tj_kernel_function(k, &l.fn) == TJ_OK) {
            l.dst = packed;
            l.src = typed + (tj_devptr_t)b.start;
            l.count = 1;
            l.args[0] = &l.dst;
            l.args[1] = &l.src;
            l.args[2] = &l.count;
            tj_gen_edges_launch(&b, w.word, w.edge, 1, &l.geo);
            for (int i = 0; i < small_reps; i++) {
                double t0 = tj_clock_seconds();
                do_launch(&l);
                tj_gpu_sync();
                l2[i] = tj_clock_seconds() - t0;
            }
            kern = time_fn(do_launch, &l, max_reps);
        }
        double ms = tj_median(s, small_reps), ml2 = tj_median(l2, small_reps);
        printf("%lld,%d,%.2f,%.2f,%.2f,%.2f\n", (long long)total, run, ms * 1e6, ml2 * 1e6,
               kern * 1e6, (ms - ml2) * 1e6);
        MPI_Type_free(&t);
        free(s);
        free(l2);
    }
}

/* The types that are not one strided block (docs/layouts.md): an irregular indexed
 * gather whose part table is baked into its kernel, one whose table is in device memory (an
 * unstructured mesh's face gather), a struct of mixed members, a block-cyclic darray and a
 * subarray of 17 dimensions, built through the MPI constructors so that typejit commits them as
 * an application's. For each: MPI_Pack and MPI_Unpack call-to-return on device buffers (the
 * parts kernel), and the same call staged through host memory as typejit did before (copy the
 * footprint to the host, PMPI_Pack or PMPI_Unpack there, copy back), median of the reps. */
typedef struct {
    const char *name;
    MPI_Datatype type;
    int count;
} layout_shape_t;

/* The mesh-like gather: @p blocks blocks of 1 to 8 elements of @p elem at irregular gaps. */
static MPI_Datatype irregular_indexed(int blocks, MPI_Datatype elem)
{
    int *bl = malloc(sizeof(int) * (size_t)blocks), *dp = malloc(sizeof(int) * (size_t)blocks);
    uint64_t x = 88172645463325252ull;
    int at = 0;
    MPI_Datatype t;

    if (bl == NULL || dp == NULL) {
        fprintf(stderr, "bench_gpu_pack: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < blocks; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        bl[i] = 1 + (int)(x % 8);
        dp[i] = at + (int)((x >> 8) % 5);
        at = dp[i] + bl[i] + (int)((x >> 16) % 9);
    }
    MPI_Type_indexed(blocks, bl, dp, elem, &t);
    free(bl);
    free(dp);
    return t;
}

static int layout_shapes(bool smoke, layout_shape_t *out)
{
    int n = 0;
    /* A record of an int, 3 strided doubles and 6 chars. */
    {
        MPI_Datatype vec, members[3] = {MPI_INT, MPI_DATATYPE_NULL, MPI_CHAR};
        int bl[3] = {1, 1, 6};
        MPI_Aint dp[3] = {0, 8, 80};
        MPI_Type_vector(3, 1, 3, MPI_DOUBLE, &vec);
        members[1] = vec;
        MPI_Type_create_struct(3, bl, dp, members, &out[n].type);
        MPI_Type_free(&vec);
        out[n].name = "struct-int-vec3double-6char";
        out[n++].count = smoke ? 64 : 100000;
    }
    out[n].type = irregular_indexed(200, MPI_DOUBLE);
    out[n].name = "indexed-200-irregular-double-baked";
    out[n++].count = smoke ? 4 : 1000;
    out[n].type = irregular_indexed(smoke ? 2000 : 1000000, MPI_FLOAT);
    out[n].name = smoke ? "indexed-2000-irregular-float-table" : "indexed-1M-irregular-float-table";
    out[n++].count = 1;
    {
        /* Rank 1 of a 2 x 2 grid, rows in blocks, columns cyclic by 4; the columns end in a
         * partial block of this rank's, so that it is not one strided block. */
        int g = smoke ? 64 : 4096, gs[2] = {g, g + 6},
            ds[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
        int da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 4}, ps[2] = {2, 2};
        MPI_Type_create_darray(4, 1, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_DOUBLE, &out[n].type);
        out[n].name = "darray-block-cyclic4-double";
        out[n++].count = 1;
    }
    if (!smoke) {
        /* 17 dimensions of 3 floats, 2 of each taken: 2^17 floats in 3^17. */
        int sz[17], sub[17], st[17];
        for (int d = 0; d < 17; d++)
            sz[d] = 3, sub[d] = 2, st[d] = d % 2;
        MPI_Type_create_subarray(17, sz, sub, st, MPI_ORDER_C, MPI_FLOAT, &out[n].type);
        out[n].name = "subarray-17d-float";
        out[n++].count = 1;
    }
    for (int i = 0; i < n; i++)
        MPI_Type_commit(&out[i].type);
    return n;
}

/* Wait until typejit has @p t's kernels (they compile in the background), at most 60 s. */
static void await_kernels(MPI_Datatype t, char *text, size_t len)
{
    tj_status_t (*describe)(const void *, char *, size_t);
    *(void **)&describe = dlsym(RTLD_DEFAULT, "tj_type_describe");
    text[0] = '\0';
    if (describe == NULL)
        return;
    for (int i = 0; i < 600; i++) {
        if (describe(&t, text, len) != TJ_OK ||
            (strstr(text, "kernels=queued") == NULL && strstr(text, "kernels=compiling") == NULL))
            return;
        tj_clock_sleep_ms(100);
    }
}

static void layout_objects(bool smoke, tj_devptr_t typed, size_t typed_bytes, tj_devptr_t packed,
                           size_t packed_bytes)
{
    layout_shape_t shapes[8];
    int n = layout_shapes(smoke, shapes), reps = smoke ? 2 : 20;

    printf("\n# layouts (not one strided block), device -> device, call to return, median of %d; "
           "staged: the footprint copied to the host, PMPI_Pack/PMPI_Unpack there, copied back\n",
           reps);
    printf("layout,count,bytes,direction,typejit_us,staged_us,speedup,typejit_GBps\n");
    for (int i = 0; i < n; i++) {
        MPI_Datatype t = shapes[i].type;
        MPI_Aint lb, ext, tlb, text_;
        int size, count = shapes[i].count;
        char desc[512];
        MPI_Type_get_extent(t, &lb, &ext);
        MPI_Type_get_true_extent(t, &tlb, &text_);
        MPI_Type_size(t, &size);
        int64_t foot = (int64_t)ext * (count - 1) + tlb + text_; /* from the buffer argument */
        int64_t bytes = (int64_t)size * count;
        if (tlb < 0 || lb < 0 || foot > (int64_t)typed_bytes || bytes > (int64_t)packed_bytes ||
            bytes > INT32_MAX) {
            printf("# %s: does not fit the buffers, skipped\n", shapes[i].name);
            MPI_Type_free(&t);
            continue;
        }
        await_kernels(t, desc, sizeof(desc));
        printf("# %s: %s\n", shapes[i].name, desc);
        char *host = malloc((size_t)foot), *hpacked = malloc((size_t)bytes);
        double *tj = calloc((size_t)reps, sizeof(double)),
               *st = calloc((size_t)reps, sizeof(double));
        if (host == NULL || hpacked == NULL || tj == NULL || st == NULL) {
            fprintf(stderr, "bench_gpu_pack: out of memory\n");
            exit(1);
        }
        for (int dir = 0; dir < 2; dir++) {
            void *tp = (void *)(uintptr_t)typed, *pp = (void *)(uintptr_t)packed;
            for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
                int pos = 0;
                double t0 = tj_clock_seconds();
                if (dir == 0)
                    MPI_Pack(tp, count, t, pp, (int)bytes, &pos, MPI_COMM_SELF);
                else
                    MPI_Unpack(pp, (int)bytes, &pos, tp, count, t, MPI_COMM_SELF);
                double t1 = tj_clock_seconds();
                pos = 0;
                tj_gpu_copy_dtoh(host, typed, (size_t)foot);
                if (dir == 0) {
                    PMPI_Pack(host, count, t, hpacked, (int)bytes, &pos, MPI_COMM_SELF);
                    tj_gpu_copy_htod(packed, hpacked, (size_t)bytes);
                } else {
                    tj_gpu_copy_dtoh(hpacked, packed, (size_t)bytes);
                    PMPI_Unpack(hpacked, (int)bytes, &pos, host, count, t, MPI_COMM_SELF);
                    tj_gpu_copy_htod(typed, host, (size_t)foot);
                }
                double t2 = tj_clock_seconds();
                if (r >= 0)
                    tj[r] = t1 - t0, st[r] = t2 - t1;
            }
            double mt = tj_median(tj, reps), ms = tj_median(st, reps);
            printf("%s,%d,%lld,%s,%.2f,%.2f,%.2f,%.2f\n", shapes[i].name, count, (long long)bytes,
                   dir == 0 ? "pack" : "unpack", mt * 1e6, ms * 1e6, mt > 0 ? ms / mt : 0,
                   mt > 0 ? (double)bytes / mt / 1e9 : 0);
        }
        free(host);
        free(hpacked);
        free(tj);
        free(st);
        MPI_Type_free(&t);
    }
}

int main(int argc, char **argv)
{
    bool quick = false, small_only = false, smoke = false;
    tj_devptr_t typed, packed, ceil_a, ceil_b, mapped_dev;
    void *mapped;
    int n = 512;
    int64_t max_total = (int64_t)64 << 20;
    size_t grid_bytes, typed_bytes, packed_bytes = (size_t)512 << 20;

    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (strcmp(argv[i], "--small-only") == 0) {
            small_only = true;
        } else if (strcmp(argv[i], "--smoke") == 0) {
            smoke = quick = true;
            n = 64;
            max_total = (int64_t)64 << 10;
            packed_bytes = (size_t)8 << 20;
            small_reps = 20;
            max_reps = 2;
        } else {
            fprintf(stderr, "usage: bench_gpu_pack [--quick] [--small-only] [--smoke]\n");
            MPI_Finalize();
            return 2;
        }
    }
    grid_bytes = (size_t)n * n * n * 4;
    typed_bytes = grid_bytes * 8 + (smoke ? ((size_t)1 << 20) : ((size_t)64 << 20));
    if (tj_gpu_init() == TJ_OK)
        driver_open();
    if (tj_gpu_init() != TJ_OK || tj_gpu_use(0) != TJ_OK) {
        printf("# no CUDA device found: the GPU sweep needs one; nothing was measured\n");
        MPI_Finalize();
        return 77;
    }
    if (dlsym(RTLD_DEFAULT, "tj_version") == NULL)
        printf("# warning: libtypejit.so is not preloaded; MPI_Pack timings are skipped\n");
    tj_target_of_device(0, target, sizeof(target));
    if (tj_gpu_alloc(typed_bytes, &typed) != TJ_OK ||
        tj_gpu_alloc(packed_bytes, &packed) != TJ_OK ||
        tj_gpu_alloc_host(packed_bytes, &mapped) != TJ_OK ||
        tj_gpu_host_devptr(mapped, &mapped_dev) != TJ_OK) {
        fprintf(stderr, "bench_gpu_pack: cannot allocate the buffers\n");
        return 1;
    }
    tj_gpu_memset(typed, 1, typed_bytes);

    /* The ceiling: a device-to-device copy of half the packed buffer (256 MiB) moves twice
     * its size. */
    ceil_a = typed;
    ceil_b = packed;
    copy_t c = {.dst = ceil_b, .src = ceil_a, .bytes = packed_bytes / 2};
    double tc = time_fn(do_copy, &c, max_reps < 20 ? max_reps : 20);
    ceiling_bw = 2.0 * (double)c.bytes / tc;
    printf("# device %s, ceiling (device-to-device copy) %.1f GB/s read+write\n", target,
           ceiling_bw / 1e9);

    if (dlsym(RTLD_DEFAULT, "tj_version") != NULL) {
        small_objects(typed, packed);
        if (!small_only)
            layout_objects(smoke, typed, typed_bytes, packed, packed_bytes);
    }
    if (small_only)
        goto out;

    printf("\nkind,object,run,count,bytes,direction,method,time_us,GBps,floor_fraction\n");
    for (int64_t total = 1024; total <= max_total; total *= quick ? 16 : 4) {
        for (int run = 1; run <= 512; run *= 2) {
            if (total / run * 512 > (int64_t)typed_bytes || total < run)
                continue;
            MPI_Datatype t = object_2d(total, run);
            tj_block_t b;
            char name[32];
            snprintf(name, sizeof(name), "2d-%lldB", (long long)total);
            if (tj_translate_block(t, &b, NULL) == TJ_OK) {
                measure("2d", name, run, &b, 1, TJ_DIR_PACK, "pack-d2d", typed, packed, true);
                measure("2d", name, run, &b, 1, TJ_DIR_UNPACK, "unpack-d2d", typed, packed, true);
                measure("2d", name, run, &b, 1, TJ_DIR_PACK, "pack-d2mapped", typed, mapped_dev,
                        false);
                measure("2d", name, run, &b, 1, TJ_DIR_UNPACK, "unpack-mapped2d", typed, mapped_dev,
                        false);
            }
            MPI_Type_free(&t);
        }
    }
    for (int d = 0; d < 27; d++) {
        if (d == 13)
            continue;
        MPI_Datatype t = halo_region(d, n, 2);
        tj_block_t b;
        char name[32];
        snprintf(name, sizeof(name), "halo(%+d%+d%+d)", d / 9 - 1, d / 3 % 3 - 1, d % 3 - 1);
        if (tj_translate_block(t, &b, NULL) == TJ_OK) {
            for (int count = 1; count <= 8; count += 7) {
                if (b.size * count > (int64_t)packed_bytes)
                    continue;
                measure("3d", name, 0, &b, count, TJ_DIR_PACK, "pack-d2d", typed, packed, false);
                measure("3d", name, 0, &b, count, TJ_DIR_UNPACK, "unpack-d2d", typed, packed,
                        false);
                measure("3d", name, 0, &b, count, TJ_DIR_PACK, "pack-d2mapped", typed, mapped_dev,
                        false);
            }
        }
        MPI_Type_free(&t);
        if (quick && d > 2)
            break;
    }
out:
    tj_gpu_free(typed);
    tj_gpu_free(packed);
    tj_gpu_free_host(mapped);
    MPI_Finalize();
    return 0;
}
