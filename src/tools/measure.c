/* SPDX-License-Identifier: BSD-3-Clause */
/* `typejit measure`: times pack and unpack kernels (into device and mapped host memory) by size
 * and run length, device-host copies, launch latency and, with two or more ranks, the MPI's
 * host (and, when it is CUDA-aware, device) ping-pong between ranks 0 and 1, then writes the
 * system table the method model reads (src/move/systable.h has the format). Times are what a
 * send path pays: wall clock from the launch (or copy, or send) to its completion, medians. */
#include "measure.h"

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/cuda.h"
#include "jit/gen.h"
#include "jit/nvrtc.h"
#include "kernels/launch.h"
#include "kernels/lookup.h"
#include "kernels/target.h"
#include "move/model.h"
#include "move/systable.h"
#include "util/clock.h"
#include "util/config.h"

#include "options.h"

static const char *usage_measure =
    "usage: typejit measure [--quick] [--output FILE]\n"
    "\n"
    "Time pack and unpack kernels (device and mapped host memory) by packed size and run length,\n"
    "device-host copies, launch latency and the MPI's ping-pong, and write the system table the\n"
    "send paths choose their method from. Run it once per kind of machine, under the launcher\n"
    "with two ranks: `mpirun -np 2 typejit measure` (both on one node: the table's peer=node\n"
    "rows; on two nodes: its peer=net rows; a second run on the other placement adds its rows\n"
    "to the same table). With one rank the MPI is not measured. Needs a CUDA device.\n"
    "\n"
    "  --quick        fewer sizes (up to 256 KiB) and repetitions: a rough table in seconds\n"
    "  --output FILE  where to write the table (default: TYPEJIT_SYSTEM_TABLE, else\n"
    "                 CACHE/system/sm_XX-DEVICE-DRIVER.txt under the kernel cache root)\n";

#define RUNS 3
static const int64_t runs[RUNS] = {8, 64, 512};

static bool quick;
static int64_t max_bytes;
static char target[32];

/* Packed sizes: 64 B to 16 MiB in powers of 4 (--quick: powers of 16 up to 256 KiB). */
static int64_t next_size(int64_t bytes)
{
    return bytes * (quick ? 16 : 4);
}

static int reps_for(int64_t bytes)
{
    int64_t r = ((int64_t)64 << 20) / bytes;
    if (quick)
        return 3;
    return (int)(r < 10 ? 10 : r > 100 ? 100 : r);
}

/* Median microseconds of launch + synchronise of the kernel the runtime launches for one object
 * of @p b (its words from the addresses, as the pack paths ask the launch path), or -1 when the
 * kernel is not available. */
static double time_kernel(const tj_block_t *b, tj_dir_t dir, tj_devptr_t typed, tj_devptr_t packed,
                          int reps)
{
    tj_launch_desc_t d = {.block = b,
                          .count = 1,
                          .dir = dir,
                          .typed = typed,
                          .packed = packed,
                          .device = 0,
                          .policy = TJ_LAUNCH_COMPILE};
    tj_launch_ready_t l;
    double *t, median = -1;

    if (tj_launch_prepare(&d, &l) != TJ_OK)
        return -1;
    if ((t = calloc((size_t)reps, sizeof(*t))) == NULL)
        return -1;
    /* One launch first: the module load and the first touch of the buffers are not timed. */
    if (tj_launch_go(&l) != TJ_OK || tj_gpu_sync() != TJ_OK)
        goto out_free;
    for (int i = 0; i < reps; i++) {
        double t0 = tj_clock_seconds();
        if (tj_launch_go(&l) != TJ_OK || tj_gpu_sync() != TJ_OK)
            goto out_free;
        t[i] = (tj_clock_seconds() - t0) * 1e6;
    }
    median = tj_median(t, reps);
out_free:
    free(t);
    return median;
}

/* The 2-D object of @p bytes packed bytes in runs of @p run, pitch 2 * run. */
static bool object_2d(int64_t bytes, int64_t run, tj_block_t *b)
{
    int64_t rows = bytes / run;
    int64_t counts[2] = {run, rows}, strides[2] = {1, 2 * run};
    return tj_block_make(0, 2 * run * rows, rows > 1 ? 2 : 1, counts, strides, b) == TJ_OK;
}

static bool add_row(tj_curve_t *c, int64_t bytes, double us)
{
    if (c == NULL || us < 0 || c->n >= TJ_SYSTABLE_MAX_ROWS)
        return false;
    c->bytes[c->n] = bytes;
    c->us[c->n++] = us;
    return true;
}

typedef struct {
    tj_devptr_t typed, packed, mapped_dev;
    void *mapped;
} buffers_t;

/* Rank 0's device work: launch latency, the four kernel quantities by run, the two copies. */
static tj_status_t measure_device(tj_systable_t *t, const buffers_t *buf)
{
    static const struct {
        tj_quantity_t q;
        tj_dir_t dir;
        bool mapped;
    } kinds[4] = {
        {TJ_Q_PACK_DEVICE, TJ_DIR_PACK, false},
        {TJ_Q_PACK_MAPPED, TJ_DIR_PACK, true},
        {TJ_Q_UNPACK_DEVICE, TJ_DIR_UNPACK, false},
        {TJ_Q_UNPACK_MAPPED, TJ_DIR_UNPACK, true},
    };
    tj_block_t b;
    int failed = 0;

    /* Launch latency: the smallest kernel, launched and awaited. */
    if (!object_2d(64, 8, &b) || (t->launch_us = time_kernel(&b, TJ_DIR_PACK, buf->typed,
                                                             buf->packed, quick ? 5 : 200)) < 0) {
        fprintf(stderr, "typejit measure: the pack kernel of a 64-byte object cannot run\n");
        return TJ_ERR_CUDA;
    }
    printf("launch + synchronise: %.2f us\n", t->launch_us);
    for (int r = 0; r < RUNS; r++) {
        tj_curve_t *c[4];
        for (int k = 0; k < 4; k++)
            c[k] = tj_systable_add(t, kinds[k].q, runs[r]);
        printf("kernels, runs of %lld B:", (long long)runs[r]);
        fflush(stdout);
        for (int64_t bytes = 64; bytes <= max_bytes; bytes = next_size(bytes)) {
            if (bytes < runs[r] || !object_2d(bytes, runs[r], &b))
                continue;
            for (int k = 0; k < 4; k++) {
                double us =
                    time_kernel(&b, kinds[k].dir, buf->typed,
                                kinds[k].mapped ? buf->mapped_dev : buf->packed, reps_for(bytes));
                failed += !add_row(c[k], bytes, us);
            }
            printf(" %lld", (long long)bytes);
            fflush(stdout);
        }
        printf("\n");
    }
    for (int d = 0; d < 2; d++) {
        tj_curve_t *c = tj_systable_add(t, d == 0 ? TJ_Q_COPY_D2H : TJ_Q_COPY_H2D, 0);
        for (int64_t bytes = 64; bytes <= max_bytes; bytes = next_size(bytes)) {
            int reps = reps_for(bytes);
            double *s = calloc((size_t)reps, sizeof(*s));
            bool ok = s != NULL;
            for (int i = 0; ok && i < reps; i++) {
                double t0 = tj_clock_seconds();
                ok = (d == 0 ? tj_gpu_copy_dtoh(buf->mapped, buf->packed, (size_t)bytes)
                             : tj_gpu_copy_htod(buf->packed, buf->mapped, (size_t)bytes)) == TJ_OK;
                s[i] = (tj_clock_seconds() - t0) * 1e6;
            }
            if (ok) {
                add_row(c, bytes, tj_median(s, reps));
            } else
                failed++;
            free(s);
        }
    }
    printf("copies device <-> pinned host: done\n");
    if (failed > 0)
        fprintf(stderr, "typejit measure: %d measurements failed (see the messages above)\n",
                failed);
    return failed > 0 ? TJ_ERR_CUDA : TJ_OK;
}

/* Round trips between ranks 0 and 1 of @p bytes from @p buf; rank 0 gets the mean in us. */
static double round_trip(void *buf, int64_t bytes, int rank)
{
    int reps = quick ? 5 : reps_for(bytes) * 2;
    double t0 = 0;

    for (int i = -2; i < reps; i++) { /* two untimed round trips first */
        if (i == 0)
            t0 = PMPI_Wtime();
        if (rank == 0) {
            PMPI_Send(buf, (int)bytes, MPI_BYTE, 1, 77, MPI_COMM_WORLD);
            PMPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            PMPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            PMPI_Send(buf, (int)bytes, MPI_BYTE, 0, 77, MPI_COMM_WORLD);
        }
    }
    return (PMPI_Wtime() - t0) * 1e6 / reps;
}

static void measure_pingpong(tj_systable_t *t, tj_quantity_t q, tj_peer_t peer, void *buf, int rank)
{
    tj_curve_t *c = rank == 0 ? tj_systable_add(t, q, peer) : NULL;

    for (int64_t bytes = 64; bytes <= max_bytes; bytes = next_size(bytes)) {
        double us = round_trip(buf, bytes, rank);
        if (c != NULL)
            add_row(c, bytes, us);
    }
}

/* True when world ranks 0 and 1 share a node. */
static bool ranks_share_node(void)
{
    MPI_Comm local;
    int me, leader, leaders[2] = {0, 0}, size;

    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    PMPI_Allreduce(&me, &leader, 1, MPI_INT, MPI_MIN, local);
    PMPI_Comm_free(&local);
    /* Rank 1 tells rank 0 its node's lowest rank. */
    if (me == 1)
        PMPI_Send(&leader, 1, MPI_INT, 0, 78, MPI_COMM_WORLD);
    if (me == 0) {
        leaders[0] = leader;
        if (size > 1)
            PMPI_Recv(&leaders[1], 1, MPI_INT, 1, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return leaders[0] == leaders[1];
}

/* Keep the ping-pong rows of an earlier table of the same device at @p path for the placements
 * this run did not measure. */
static void merge_previous(tj_systable_t *t, const char *path)
{
    tj_systable_t *old = malloc(sizeof(*old));

    if (old == NULL)
        return;
    if (tj_systable_load(path, old, NULL, 0) == TJ_OK && strcmp(old->device, t->device) == 0 &&
        old->sm == t->sm && old->driver == t->driver) {
        for (int i = 0; i < old->ncurves; i++) {
            const tj_curve_t *c = &old->curves[i];
            tj_curve_t *added;
            if (c->quantity != TJ_Q_PINGPONG_HOST && c->quantity != TJ_Q_PINGPONG_DEVICE)
                continue;
            if ((added = tj_systable_add(t, c->quantity, c->param)) == NULL)
                continue; /* measured now */
            *added = *c;
            printf("kept the %s peer=%s rows of the previous table\n",
                   tj_systable_quantity_name(c->quantity),
                   c->param == TJ_PEER_NODE ? "node" : "net");
        }
    }
    free(old);
}

/* What the model now chooses for a few sends, from the table just written. */
static void print_choices(const char *path, bool same_node)
{
    tj_config_t cfg = *tj_config();
    static const int64_t sizes[] = {1 << 10, 64 << 10, 1 << 20, 16 << 20};

    snprintf(cfg.system_table, sizeof(cfg.system_table), "%s", path);
    cfg.method = TJ_FORCE_AUTO;
    tj_config_set(&cfg);
    tj_model_finalize();
    printf("model's choice for a send to a peer %s (MPI %s):\n",
           same_node ? "on this node" : "on another node",
           tj_model_cuda_aware() ? "CUDA-aware" : "not CUDA-aware");
    printf("  %-10s", "run \\ size");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        printf(" %9lld", (long long)sizes[i]);
    printf("\n");
    for (int r = 0; r < RUNS; r++) {
        printf("  %-10lld", (long long)runs[r]);
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            tj_block_t b;
            const char *m = "-";
            if (object_2d(sizes[i], runs[r], &b))
                m = tj_method_name(tj_model_choose(&b, 1, sizes[i], same_node));
            printf(" %9s", m);
        }
        printf("\n");
    }
    tj_model_finalize();
}

static void fill_header(tj_systable_t *t, bool aware)
{
    int major = 0, minor = 0;
    time_t now_s = time(NULL);
    struct tm tm;

    snprintf(t->typejit, sizeof(t->typejit), "%s", tj_version());
    if (tj_gpu_device_name(0, t->device, sizeof(t->device)) != TJ_OK || t->device[0] == '\0')
        snprintf(t->device, sizeof(t->device), "unknown");
    tj_gpu_sm(0, &t->sm);
    t->driver = tj_gpu_driver_version();
    if (tj_nvrtc_version(&major, &minor) == TJ_OK)
        snprintf(t->nvrtc, sizeof(t->nvrtc), "%d.%d", major, minor);
    else
        snprintf(t->nvrtc, sizeof(t->nvrtc), "none");
    gmtime_r(&now_s, &tm);
    strftime(t->date, sizeof(t->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
    t->cuda_aware = aware;
}

int tj_measure_run(int argc, char **argv)
{
    const char *output = NULL;
    char path[4096], why[256];
    tj_systable_t *t = NULL;
    buffers_t buf = {0};
    tj_devptr_t dev_pp = 0;
    int rank, size, state, all, rc = 1;
    bool same_node, aware;

    quick = false;
    for (int i = 1; i < argc; i++) {
        bool bad = false;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_measure, stdout);
            return 0;
        } else if (tj_opt_flag("measure", argv, i, "--quick", &bad)) {
            if (bad)
                return 2;
            quick = true;
        } else if (tj_opt_value("measure", argc, argv, &i, "--output", &output)) {
            if (output == NULL)
                return 2;
            if (output[0] == '\0') {
                fprintf(stderr, "typejit measure: --output needs a file name, not \"\"\n");
                return 2;
            }
        } else {
            fprintf(stderr, "typejit measure: unexpected %s\n%s", argv[i], usage_measure);
            return 2;
        }
    }
    max_bytes = quick ? (int64_t)256 << 10 : (int64_t)16 << 20;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Every rank needs a device (rank 0 for the kernels, rank 1 for device ping-pong); all agree
     * before any rank waits for another. 0: ready, 1: no device, 2: kernels cannot load. */
    state = tj_gpu_init() != TJ_OK || tj_gpu_use(0) != TJ_OK ? 1
            : tj_target_loadable() != TJ_OK                  ? 2
                                                             : 0;
    PMPI_Allreduce(&state, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all != 0) {
        if (rank == 0)
            fprintf(stderr, "typejit measure: %s: nothing measured\n",
                    all == 1 ? "no CUDA device"
                             : "this driver cannot load the kernels the loaded NVRTC makes");
        return 1;
    }
    if (rank == 0 && tj_model_table_path(0, path, sizeof(path)) != TJ_OK && output == NULL) {
        fprintf(stderr, "typejit measure: no kernel cache root (set TYPEJIT_CACHE_DIR) and no "
                        "--output: nowhere to write the table\n");
        state = 1;
    }
    if (rank == 0 && output != NULL)
        snprintf(path, sizeof(path), "%s", output);
    aware = tj_model_cuda_aware();
    {
        int a = aware, both;
        PMPI_Allreduce(&a, &both, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        aware = both != 0;
    }
    same_node = ranks_share_node();

    /* The kernels' compile target; their cache is read, never written: these kernels are the
     * measurement's, not the application's, and must not enter the manifest. */
    tj_lookup_set_store(tj_config()->cache_dir, 1);
    tj_target_of_device(0, target, sizeof(target));

    if (rank == 0) {
        if ((t = calloc(1, sizeof(*t))) == NULL ||
            tj_gpu_alloc((size_t)(2 * max_bytes), &buf.typed) != TJ_OK ||
            tj_gpu_alloc((size_t)max_bytes, &buf.packed) != TJ_OK ||
            tj_gpu_alloc_host((size_t)max_bytes, &buf.mapped) != TJ_OK ||
            tj_gpu_host_devptr(buf.mapped, &buf.mapped_dev) != TJ_OK) {
            fprintf(stderr, "typejit measure: cannot allocate %lld bytes of buffers\n",
                    (long long)(4 * max_bytes));
            state = 1;
        }
        if (state == 0) {
            tj_gpu_memset(buf.typed, 1, (size_t)(2 * max_bytes));
            printf("typejit measure: %s, %d rank%s%s\n", target, size, size > 1 ? "s" : "",
                   quick ? ", quick" : "");
            if (measure_device(t, &buf) != TJ_OK)
                state = 1;
        }
    }
    PMPI_Allreduce(&state, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all != 0)
        goto out_free;

    if (size == 1) {
        printf("one rank: the MPI's ping-pong is not measured (run `mpirun -np 2 typejit "
               "measure` for it); the model compares the device side alone\n");
    } else if (rank <= 1) {
        void *host = NULL;
        if (rank == 0 && size > 2)
            printf("ping-pong between ranks 0 and 1; ranks 2 to %d wait\n", size - 1);
        /* Pinned host memory, as the methods send from. Rank 0 reuses its mapped buffer. */
        if (rank == 0)
            host = buf.mapped;
        else if (tj_gpu_alloc_host((size_t)max_bytes, &host) != TJ_OK)
            host = NULL;
        state = host == NULL;
        if (aware && tj_gpu_alloc((size_t)max_bytes, &dev_pp) != TJ_OK)
            state = 1;
        /* Ranks 0 and 1 agree before the first message. */
        if (rank == 0) {
            int other;
            PMPI_Recv(&other, 1, MPI_INT, 1, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            state |= other;
            PMPI_Send(&state, 1, MPI_INT, 1, 79, MPI_COMM_WORLD);
        } else {
            PMPI_Send(&state, 1, MPI_INT, 0, 79, MPI_COMM_WORLD);
            PMPI_Recv(&state, 1, MPI_INT, 0, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (state == 0) {
            tj_peer_t peer = same_node ? TJ_PEER_NODE : TJ_PEER_NET;
            measure_pingpong(t, TJ_Q_PINGPONG_HOST, peer, host, rank);
            if (rank == 0)
                printf("ping-pong, pinned host memory, peer %s: done\n",
                       same_node ? "on this node" : "on another node");
            if (aware) {
                measure_pingpong(t, TJ_Q_PINGPONG_DEVICE, peer, (void *)(uintptr_t)dev_pp, rank);
                if (rank == 0)
                    printf("ping-pong, device memory: done\n");
            } else if (rank == 0)
                printf("the MPI is not CUDA-aware: device ping-pong not measured\n");
        } else if (rank == 0)
            fprintf(stderr, "typejit measure: cannot allocate ping-pong buffers: no ping-pong "
                            "rows\n");
        if (rank == 1 && host != NULL)
            tj_gpu_free_host(host);
        if (dev_pp != 0)
            tj_gpu_free(dev_pp);
        state = 0;
    }

    if (rank == 0) {
        fill_header(t, aware);
        merge_previous(t, path);
        if (tj_systable_check(t, why, sizeof(why)) != TJ_OK) {
            fprintf(stderr, "typejit measure: the measured table is incomplete: %s\n", why);
            state = 1;
        } else if (tj_systable_write(t, path) != TJ_OK) {
            state = 1; /* logged by the writer */
        } else if (tj_systable_load(path, t, why, sizeof(why)) != TJ_OK) {
            fprintf(stderr, "typejit measure: %s does not read back: %s\n", path, why);
            state = 1;
        } else {
            printf("typejit measure: wrote %s\n", path);
            print_choices(path, same_node);
        }
    }
    PMPI_Allreduce(&state, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rc = all != 0;
out_free:
    if (buf.typed != 0)
        tj_gpu_free(buf.typed);
    if (buf.packed != 0)
        tj_gpu_free(buf.packed);
    if (buf.mapped != NULL)
        tj_gpu_free_host(buf.mapped);
    free(t);
    return rc;
}
