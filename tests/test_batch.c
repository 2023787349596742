/* SPDX-License-Identifier: BSD-3-Clause */
/* One wait per call (docs/send-paths.md#when-typejit-waits), through the preloaded library on
 * device buffers: non-blocking sends of several regions and their Waitall, persistent sends with
 * Startall and Start, a single receive's Wait, MPI_Pack and MPI_Unpack through pageable host
 * memory, MPI_Alltoallw, MPI_Ialltoallw with its Wait and
 * MPI_Neighbor_alltoallw of eight slots. Every received byte is compared with what the system MPI
 * delivers for the same types on host copies (PMPI calls), and the waits for the device each
 * call makes are read from the gpu_waits counter.
 *
 *   mpirun -np N test_batch [--regions R] [--iters I] [--expect-waits] [--synchronous]
 *                           [--no-coll] [--no-p2p] [--faults] [--sticky] [--threads K]
 *
 * Point-to-point messages go to the rank itself (over a private duplicate of MPI_COMM_SELF per
 * thread), so that a send that fails leaves no peer waiting: its receive is cancelled. The
 * regions are types of each kind a kernel moves: strided blocks and layouts of parts (the
 * collectives use layouts only, which no fused kernel takes: one launch per slot).
 * --expect-waits: from the second iteration on (the first builds layouts and kernels), each call
 * must wait exactly as often as one wait per call says, with the send queue (the default) or,
 * --synchronous, without it (TYPEJIT_PROGRESS=off). --no-coll: point-to-point only (a
 * CUDA-aware MPI takes layouts' collectives as they are); --no-p2p: collectives only. --faults: the
 * driver fails some calls (FAKECUDA_FAIL): a call may return an MPI error, and whatever it reports
 * as done must be exact. --sticky: the context dies during the run (FAKECUDA_FAIL with a sticky
 * code): bytes are checked until then, every call that returns MPI_SUCCESS must leave the context
 * alive (a sticky error may not hide behind a success), and some call must report the death.
 * --threads K: K threads run the point-to-point part at once (MPI_THREAD_MULTIPLE). Exits 77
 * without a CUDA device. */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "counters.h"
#include "cudrv.h"
#include "options.h"

#define SLOT      4096 /* bytes of buffer per region */
#define MAX_REG   32
#define NEIGHBORS 8
#define POISON    0x5A

static int rank, nranks, nregions = 12, iters = 3, nthreads = 1;
static bool expect_waits, no_coll, no_p2p, faults, sticky;
static MPI_Datatype reg_types[MAX_REG]; /* strided and layouts, for point-to-point */
static int reg_counts[MAX_REG];
static MPI_Datatype lay_types[MAX_REG]; /* layouts only, for the collectives */
static atomic_long errors, checked;
static atomic_bool dead;   /* --sticky: this rank's context died */
static CUcontext main_ctx; /* device 0's primary context, current on every thread */

/* The waits of each call, as measured in the last iteration (one thread). */
enum {
    W_ISEND,
    W_IRECV,
    W_WAITALL,
    W_SEND_INIT,
    W_STARTALL_SENDS,
    W_STARTALL_RECVS,
    W_WAITALL_PERSISTENT,
    W_START,
    W_WAIT,
    W_PACK,
    W_UNPACK,
    W_ALLTOALLW,
    W_IALLTOALLW,
    W_IALLTOALLW_WAIT,
    W_NEIGHBOR,
    W_COUNT
};
static const char *const wait_names[W_COUNT] = {"isend",
                                                "irecv",
                                                "waitall",
                                                "send_init",
                                                "startall_sends",
                                                "startall_recvs",
                                                "waitall_persistent",
                                                "start",
                                                "wait",
                                                "pack_pageable",
                                                "unpack_pageable",
                                                "alltoallw",
                                                "ialltoallw",
                                                "ialltoallw_wait",
                                                "neighbor_alltoallw"};
/* With TYPEJIT_PROGRESS=off: one wait per non-blocking send, Start, Startall of sends, completion
 * call that unpacks, MPI_Pack and MPI_Unpack (through typejit's device staging too) and
 * collective side; none where nothing moves on the device. */
static const long waits_synchronous[W_COUNT] = {1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 2, 1, 1, 2};
/* With the send queue (the default): no wait in a non-blocking send, Start or Startall of sends
 * or a non-blocking collective (their packs run on); the Waitall after them waits once for the
 * queued packs (the sends are started) and once for the unpacks of the receives it completes,
 * and so does the Wait of the non-blocking collective. */
static const long waits_queued[W_COUNT] = {0, 0, 2, 1, 0, 0, 2, 0, 1, 1, 1, 2, 0, 2, 2};
static const long *one_wait_per_call = waits_queued;
static long measured[W_COUNT];

static void fill(unsigned char *p, size_t len, unsigned salt)
{
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)(i * 29 + salt);
}

static CUdeviceptr dev_alloc(size_t len)
{
    CUdeviceptr p;
    CUDRV(cuMemAlloc(&p, len));
    return p;
}

/* A receive buffer: managed memory, which the host reads and writes directly. A completion call
 * that returned before its unpack kernel ran would show here (the test driver runs queued work
 * only when something waits for it; a driver copy would wait). */
static CUdeviceptr managed_alloc(size_t len)
{
    CUdeviceptr p;
    CUDRV(cuMemAllocManaged(&p, len, CU_MEM_ATTACH_GLOBAL));
    return p;
}

static void *host_view(CUdeviceptr p)
{
    return (void *)(uintptr_t)p;
}

static void dev_free(CUdeviceptr p)
{
    /* A dead context refuses everything; the process ends anyway. */
    if (!atomic_load(&dead))
        CUDRV(cuMemFree(p));
}

/* The waits for the device since @p *mark, which moves on. */
static long waits_since(long *mark)
{
    long now = tj_counter("gpu_waits"), d = now - *mark;
    *mark = now;
    return d;
}

/* With --sticky, after a call that returned @p rc: a success must leave the context alive (the
 * application's own driver call would fail after a death typejit hid); an error marks this rank
 * dead, after which nothing touches the device. Elsewhere an error is counted, and must not
 * happen without --faults. */
static void after_call(const char *what, int rc)
{
    if (rc != MPI_SUCCESS) {
        atomic_fetch_add(&errors, 1);
        if (sticky && !atomic_exchange(&dead, true))
            printf("rank %d: the first MPI error, from %s\n", rank, what);
        else if (!faults) {
            fprintf(stderr, "rank %d: %s returned MPI error %d\n", rank, what, rc);
            check_failures++;
        }
        return;
    }
    if (sticky && !atomic_load(&dead) && drv.cuCtxSynchronize() != CUDA_SUCCESS) {
        fprintf(stderr, "rank %d: %s returned MPI_SUCCESS in a context that died\n", rank, what);
        check_failures++;
        atomic_store(&dead, true);
    }
}

static void record(int which, long waits, bool measure)
{
    if (!measure)
        return;
    measured[which] = waits;
    if (expect_waits && waits != one_wait_per_call[which]) {
        fprintf(stderr, "rank %d: %s waited %ld times for the device, %ld expected\n", rank,
                wait_names[which], waits, one_wait_per_call[which]);
        check_failures++;
    }
}

/* Region k of a receive buffer against the system MPI: the send pattern @p src packed with the
 * region's type, unpacked into a poisoned slot. */
static void check_region(const unsigned char *got, const unsigned char *src, int k,
                         const char *what)
{
    unsigned char packed[SLOT], want[SLOT];
    int pos = 0;

    memset(want, POISON, SLOT);
    REQUIRE(PMPI_Pack(src, reg_counts[k], reg_types[k], packed, SLOT, &pos, MPI_COMM_SELF) ==
            MPI_SUCCESS);
    pos = 0;
    REQUIRE(PMPI_Unpack(packed, SLOT, &pos, want, reg_counts[k], reg_types[k], MPI_COMM_SELF) ==
            MPI_SUCCESS);
    atomic_fetch_add(&checked, 1);
    if (memcmp(got + (size_t)k * SLOT, want, SLOT) != 0) {
        fprintf(stderr, "rank %d: %s: region %d differs from the system MPI's\n", rank, what, k);
        check_failures++;
    }
}

/* Completion statuses: each one's error field, where the call reported per-request errors. */
static bool status_ok(int rc, const MPI_Status *st)
{
    return rc == MPI_SUCCESS || (rc == MPI_ERR_IN_STATUS && st->MPI_ERROR == MPI_SUCCESS);
}

/* --faults: a send whose pack failed after the call returned (the send queue's) reports its error
 * at its completion, and its message never leaves: the sends are completed first, and the
 * receives of those that failed cancelled. */
static void sends_first(int n, MPI_Request recvs[], MPI_Request sends[], MPI_Status sts[],
                        bool sent[])
{
    int rc = MPI_Waitall(n, sends, sts);
    after_call("MPI_Waitall (sends)", rc);
    for (int k = 0; k < n; k++)
        if (sent[k] && !status_ok(rc, &sts[k])) {
            sent[k] = false;
            REQUIRE(MPI_Cancel(&recvs[k]) == MPI_SUCCESS);
        }
}

typedef struct {
    MPI_Comm comm;
    unsigned salt;
    bool measure; /* record the waits (one thread, after the first iteration) */
} p2p_t;

/* Isend and Irecv of every region, then one Waitall. */
static void isends(p2p_t *p, CUdeviceptr sbuf, CUdeviceptr rbuf, const unsigned char *src,
                   unsigned char *got)
{
    MPI_Request reqs[2 * MAX_REG];
    MPI_Status sts[2 * MAX_REG];
    bool sent[MAX_REG];
    long mark = tj_counter("gpu_waits"), w, most = 0;
    int rc;

    for (int k = 0; k < nregions; k++) {
        rc = MPI_Irecv((char *)(uintptr_t)rbuf + (size_t)k * SLOT, reg_counts[k], reg_types[k], 0,
                       k, p->comm, &reqs[k]);
        REQUIRE(rc == MPI_SUCCESS); /* nothing moves yet */
        record(W_IRECV, waits_since(&mark), p->measure && k == 0);
    }
    for (int k = 0; k < nregions; k++) {
        rc = MPI_Isend((char *)(uintptr_t)sbuf, reg_counts[k], reg_types[k], 0, k, p->comm,
                       &reqs[nregions + k]);
        w = waits_since(&mark);
        most = w > most ? w : most;
        after_call("MPI_Isend", rc);
        sent[k] = rc == MPI_SUCCESS;
        if (!sent[k]) {
            reqs[nregions + k] = MPI_REQUEST_NULL;
            REQUIRE(MPI_Cancel(&reqs[k]) == MPI_SUCCESS);
        }
    }
    record(W_ISEND, most, p->measure);
    for (int i = 0; i < 2 * nregions; i++)
        sts[i].MPI_ERROR = MPI_SUCCESS;
    if (faults)
        sends_first(nregions, reqs, reqs + nregions, sts + nregions, sent);
    rc = MPI_Waitall(2 * nregions, reqs, sts);
    record(W_WAITALL, waits_since(&mark), p->measure);
    after_call("MPI_Waitall", rc);
    if (atomic_load(&dead))
        return;
    memcpy(got, host_view(rbuf), (size_t)nregions * SLOT);
    for (int k = 0; k < nregions; k++)
        if (sent[k] && status_ok(rc, &sts[k]))
            check_region(got, src, k, "isend/irecv/waitall");
}

/* Persistent sends and receives of every region: Startall of each, one Waitall; then one send
 * again with Start and its receive with Wait. */
static void persistent(p2p_t *p, CUdeviceptr sbuf, CUdeviceptr rbuf, const unsigned char *src,
                       unsigned char *got)
{
    MPI_Request sreq[MAX_REG], rreq[MAX_REG], all[2 * MAX_REG];
    MPI_Status sts[2 * MAX_REG];
    long mark, w, most = 0;
    int rc, rc_recvs, base = MAX_REG;
    bool ok = true;

    for (int k = 0; k < nregions; k++) {
        REQUIRE(MPI_Recv_init((char *)(uintptr_t)rbuf + (size_t)k * SLOT, reg_counts[k],
                              reg_types[k], 0, base + k, p->comm, &rreq[k]) == MPI_SUCCESS);
        mark = tj_counter("gpu_waits");
        rc = MPI_Send_init((char *)(uintptr_t)sbuf, reg_counts[k], reg_types[k], 0, base + k,
                           p->comm, &sreq[k]);
        w = waits_since(&mark);
        most = w > most ? w : most;
        after_call("MPI_Send_init", rc);
        if (rc != MPI_SUCCESS) {
            sreq[k] = MPI_REQUEST_NULL;
            ok = false;
        }
    }
    record(W_SEND_INIT, most, p->measure);
    mark = tj_counter("gpu_waits");
    rc_recvs = MPI_Startall(nregions, rreq);
    record(W_STARTALL_RECVS, waits_since(&mark), p->measure);
    REQUIRE(rc_recvs == MPI_SUCCESS);
    if (ok) {
        rc = MPI_Startall(nregions, sreq);
        record(W_STARTALL_SENDS, waits_since(&mark), p->measure);
        after_call("MPI_Startall", rc);
        ok = rc == MPI_SUCCESS; /* a refused Startall starts none */
    }
    if (!ok)
        for (int k = 0; k < nregions; k++)
            REQUIRE(MPI_Cancel(&rreq[k]) == MPI_SUCCESS);
    for (int k = 0; k < nregions; k++) {
        all[k] = rreq[k];
        all[nregions + k] = ok ? sreq[k] : MPI_REQUEST_NULL;
        sts[k].MPI_ERROR = MPI_SUCCESS;
    }
    mark = tj_counter("gpu_waits");
    if (faults && ok) {
        bool sent[MAX_REG];
        for (int k = 0; k < nregions; k++)
            sent[k] = true;
        sends_first(nregions, all, all + nregions, sts + nregions, sent);
        for (int k = 0; k < nregions; k++)
            ok = ok && sent[k];
    }
    rc = MPI_Waitall(2 * nregions, all, sts);
    record(W_WAITALL_PERSISTENT, waits_since(&mark), p->measure);
    after_call("MPI_Waitall (persistent)", rc);
    if (!atomic_load(&dead)) {
        memcpy(got, host_view(rbuf), (size_t)nregions * SLOT);
        for (int k = 0; k < nregions; k++)
            if (ok && status_ok(rc, &sts[k]))
                check_region(got, src, k, "startall/waitall");
    }
    /* One of them again, alone. */
    if (ok && !atomic_load(&dead)) {
        int k = nregions - 1;
        bool started;
        memset((char *)host_view(rbuf) + (size_t)k * SLOT, POISON, SLOT);
        REQUIRE(MPI_Start(&rreq[k]) == MPI_SUCCESS);
        mark = tj_counter("gpu_waits");
        rc = MPI_Start(&sreq[k]);
        record(W_START, waits_since(&mark), p->measure);
        after_call("MPI_Start", rc);
        started = rc == MPI_SUCCESS;
        if (started) {
            /* A queued send's failure is reported here. */
            rc = MPI_Wait(&sreq[k], MPI_STATUS_IGNORE);
            after_call("MPI_Wait (send)", rc);
            started = rc == MPI_SUCCESS;
            REQUIRE(started || faults || sticky);
        }
        if (!started)
            REQUIRE(MPI_Cancel(&rreq[k]) == MPI_SUCCESS);
        mark = tj_counter("gpu_waits");
        rc = MPI_Wait(&rreq[k], &sts[0]);
        if (started)
            record(W_WAIT, waits_since(&mark), p->measure);
        after_call("MPI_Wait", rc);
        if (started && rc == MPI_SUCCESS && !atomic_load(&dead)) {
            memcpy(got, host_view(rbuf), (size_t)nregions * SLOT);
            check_region(got, src, k, "start/wait");
        }
    }
    for (int k = 0; k < nregions; k++) {
        MPI_Request_free(&rreq[k]);
        if (sreq[k] != MPI_REQUEST_NULL)
            MPI_Request_free(&sreq[k]);
    }
}

/* MPI_Pack of region 0 into pageable host memory and MPI_Unpack from there: through typejit's
 * device staging, whose copy's wait is the call's one wait. */
static void pack_pageable(p2p_t *p, CUdeviceptr sbuf, CUdeviceptr rbuf, const unsigned char *src,
                          unsigned char *got)
{
    unsigned char packed[SLOT];
    long mark = tj_counter("gpu_waits");
    int pos = 0, rc;

    rc =
        MPI_Pack((void *)(uintptr_t)sbuf, reg_counts[0], reg_types[0], packed, SLOT, &pos, p->comm);
    record(W_PACK, waits_since(&mark), p->measure);
    after_call("MPI_Pack", rc);
    if (rc != MPI_SUCCESS || atomic_load(&dead))
        return;
    memset(host_view(rbuf), POISON, SLOT);
    pos = 0;
    rc = MPI_Unpack(packed, SLOT, &pos, (void *)(uintptr_t)rbuf, reg_counts[0], reg_types[0],
                    p->comm);
    record(W_UNPACK, waits_since(&mark), p->measure);
    after_call("MPI_Unpack", rc);
    if (rc == MPI_SUCCESS && !atomic_load(&dead)) {
        memcpy(got, host_view(rbuf), SLOT);
        check_region(got, src, 0, "pack/unpack");
    }
}

/* The point-to-point part, on one thread's own communicator. */
static void *p2p_run(void *arg)
{
    p2p_t *p = arg;
    size_t rlen = (size_t)nregions * SLOT;
    unsigned char *src = malloc(SLOT), *got = malloc(rlen), *poison = malloc(rlen);
    CUdeviceptr sbuf, rbuf;

    REQUIRE(src != NULL && got != NULL && poison != NULL);
    CUDRV(cuCtxSetCurrent(main_ctx));
    memset(poison, POISON, rlen);
    sbuf = dev_alloc(SLOT);
    rbuf = managed_alloc(rlen);
    for (int it = 0; it < iters && !atomic_load(&dead); it++) {
        p2p_t one = *p;
        one.measure = p->measure && it > 0;
        fill(src, SLOT, p->salt + (unsigned)it);
        CUDRV(cuMemcpyHtoD(sbuf, src, SLOT));
        memcpy(host_view(rbuf), poison, rlen);
        isends(&one, sbuf, rbuf, src, got);
        if (atomic_load(&dead))
            break;
        memcpy(host_view(rbuf), poison, rlen);
        persistent(&one, sbuf, rbuf, src, got);
        if (!atomic_load(&dead))
            pack_pageable(&one, sbuf, rbuf, src, got);
    }
    dev_free(sbuf);
    dev_free(rbuf);
    free(src);
    free(got);
    free(poison);
    return NULL;
}

/* ---- collectives --------------------------------------------------------------------------- */

/* Whether every rank's call succeeded (a rank whose pack failed still takes part, and the others
 * then receive its bytes as they were: only a call that succeeded everywhere is checked). */
static bool all_ok(int rc)
{
    int bad = rc != MPI_SUCCESS, any = 0;
    REQUIRE(PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS);
    return !any;
}

/* Whether any rank's context died (--sticky): then every rank stops before the next collective. */
static bool any_dead(void)
{
    int mine = atomic_load(&dead), any = 0;
    REQUIRE(PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS);
    return any;
}

static void check_coll(const unsigned char *got, const unsigned char *want, size_t len,
                       const char *what)
{
    atomic_fetch_add(&checked, 1);
    if (memcmp(got, want, len) != 0) {
        fprintf(stderr, "rank %d: %s differs from the system MPI's\n", rank, what);
        check_failures++;
    }
}

/* MPI_Alltoallw, then MPI_Ialltoallw and its Wait: slot j of each side a layout of its own (the
 * pair's type, so that signatures match), one slot per rank. */
static void alltoallw(int it, bool measure)
{
    size_t len = (size_t)nranks * SLOT;
    unsigned char *src = malloc(len), *got = malloc(len), *want = malloc(len);
    int *counts = malloc((size_t)nranks * sizeof(int)),
        *displs = malloc((size_t)nranks * sizeof(int));
    MPI_Datatype *stypes = malloc((size_t)nranks * sizeof(MPI_Datatype));
    MPI_Datatype *rtypes = malloc((size_t)nranks * sizeof(MPI_Datatype));
    CUdeviceptr sbuf = dev_alloc(len), rbuf = managed_alloc(len);
    MPI_Request req;
    long mark;
    int rc;

    REQUIRE(src && got && want && counts && displs && stypes && rtypes);
    for (int j = 0; j < nranks; j++) {
        counts[j] = 1;
        displs[j] = j * SLOT;
        stypes[j] = lay_types[(rank + j) % nregions];
        rtypes[j] = lay_types[(j + rank) % nregions];
    }
    fill(src, len, (unsigned)(rank * 7 + it));
    memset(want, POISON, len);
    REQUIRE(PMPI_Alltoallw(src, counts, displs, stypes, want, counts, displs, rtypes,
                           MPI_COMM_WORLD) == MPI_SUCCESS);
    for (int round = 0; round < 2; round++) {
        CUDRV(cuMemcpyHtoD(sbuf, src, len));
        memset(got, POISON, len);
        memcpy(host_view(rbuf), got, len);
        mark = tj_counter("gpu_waits");
        if (round == 0) {
            rc = MPI_Alltoallw((void *)(uintptr_t)sbuf, counts, displs, stypes,
                               (void *)(uintptr_t)rbuf, counts, displs, rtypes, MPI_COMM_WORLD);
            record(W_ALLTOALLW, waits_since(&mark), measure);
            after_call("MPI_Alltoallw", rc);
        } else {
            rc = MPI_Ialltoallw((void *)(uintptr_t)sbuf, counts, displs, stypes,
                                (void *)(uintptr_t)rbuf, counts, displs, rtypes, MPI_COMM_WORLD,
                                &req);
            record(W_IALLTOALLW, waits_since(&mark), measure);
            after_call("MPI_Ialltoallw", rc);
            if (rc == MPI_SUCCESS) {
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
                record(W_IALLTOALLW_WAIT, waits_since(&mark), measure);
                after_call("MPI_Wait (Ialltoallw)", rc);
            }
        }
        /* A failed Ialltoallw started nothing on this rank: the others' would never end. */
        REQUIRE(rc == MPI_SUCCESS || round == 0 || sticky || faults);
        if (any_dead())
            break;
        if (all_ok(rc)) {
            memcpy(got, host_view(rbuf), len);
            check_coll(got, want, len, round == 0 ? "MPI_Alltoallw" : "MPI_Ialltoallw");
        }
    }
    dev_free(sbuf);
    dev_free(rbuf);
    free(src);
    free(got);
    free(want);
    free(counts);
    free(displs);
    free(stypes);
    free(rtypes);
}

/* MPI_Neighbor_alltoallw over a graph of NEIGHBORS slots each way (ranks repeat): send slot k
 * to rank + k, receive slot k from rank - k, both with layout k. */
static void neighbor(int it, bool measure)
{
    size_t len = (size_t)NEIGHBORS * SLOT;
    unsigned char *src = malloc(len), *got = malloc(len), *want = malloc(len);
    int dst[NEIGHBORS], from[NEIGHBORS], counts[NEIGHBORS], weights[NEIGHBORS];
    MPI_Aint displs[NEIGHBORS];
    MPI_Datatype types[NEIGHBORS];
    MPI_Comm graph;
    CUdeviceptr sbuf = dev_alloc(len), rbuf = managed_alloc(len);
    long mark;
    int rc;

    REQUIRE(src && got && want);
    for (int k = 0; k < NEIGHBORS; k++) {
        dst[k] = (rank + k) % nranks;
        from[k] = ((rank - k) % nranks + nranks) % nranks;
        counts[k] = 1;
        displs[k] = (MPI_Aint)k * SLOT;
        types[k] = lay_types[k % nregions];
        weights[k] = 1;
    }
    REQUIRE(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, NEIGHBORS, from, weights, NEIGHBORS, dst,
                                           weights, MPI_INFO_NULL, 0, &graph) == MPI_SUCCESS);
    MPI_Comm_set_errhandler(graph, MPI_ERRORS_RETURN);
    fill(src, len, (unsigned)(rank * 11 + it));
    memset(want, POISON, len);
    REQUIRE(PMPI_Neighbor_alltoallw(src, counts, displs, types, want, counts, displs, types,
                                    graph) == MPI_SUCCESS);
    CUDRV(cuMemcpyHtoD(sbuf, src, len));
    memset(got, POISON, len);
    memcpy(host_view(rbuf), got, len);
    mark = tj_counter("gpu_waits");
    rc = MPI_Neighbor_alltoallw((void *)(uintptr_t)sbuf, counts, displs, types,
                                (void *)(uintptr_t)rbuf, counts, displs, types, graph);
    record(W_NEIGHBOR, waits_since(&mark), measure);
    after_call("MPI_Neighbor_alltoallw", rc);
    if (!any_dead() && all_ok(rc)) {
        memcpy(got, host_view(rbuf), len);
        check_coll(got, want, len, "MPI_Neighbor_alltoallw");
    }
    MPI_Comm_free(&graph);
    dev_free(sbuf);
    dev_free(rbuf);
    free(src);
    free(got);
    free(want);
}

/* ---- types and main ------------------------------------------------------------------------ */

/* Region k's type: a strided block (vector), or a layout (irregular indexed, or a struct of two
 * members). Layout k for the collectives: the latter two only. */
static MPI_Datatype make_type(int k, bool layout_only)
{
    MPI_Datatype t;
    int kind = layout_only ? 1 + k % 2 : k % 3;
    if (kind == 0) {
        MPI_Type_vector(6 + k, 1 + k % 3, 4 + k % 5, MPI_INT, &t);
    } else if (kind == 1) {
        int lens[3] = {1, 2 + k % 2, 3}, displs[3] = {k % 4, 5 + k, 11 + 2 * k};
        MPI_Type_indexed(3, lens, displs, MPI_DOUBLE, &t);
    } else {
        int lens[2] = {1, 1 + k % 3};
        MPI_Aint displs[2] = {4 * (k % 5), 40 + 8 * k};
        MPI_Datatype members[2] = {MPI_INT, MPI_DOUBLE};
        MPI_Type_create_struct(2, lens, displs, members, &t);
    }
    REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
    return t;
}

/* @p count objects of @p t fit a slot from its start. */
static void fits_slot(MPI_Datatype t, int count)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    REQUIRE(tlb >= 0 && tlb + text + (count - 1) * ext <= SLOT);
}

int main(int argc, char **argv)
{
    pthread_t th[16];
    p2p_t ps[16];
    int provided;
    bool synchronous = false;

    options_read(argc, argv,
                 (const opt_t[]){{"--regions", OPT_INT, &nregions},
                                 {"--iters", OPT_INT, &iters},
                                 {"--threads", OPT_INT, &nthreads},
                                 {"--expect-waits", OPT_FLAG, &expect_waits},
                                 {"--synchronous", OPT_FLAG, &synchronous},
                                 {"--no-coll", OPT_FLAG, &no_coll},
                                 {"--no-p2p", OPT_FLAG, &no_p2p},
                                 {"--faults", OPT_FLAG, &faults},
                                 {"--sticky", OPT_FLAG, &sticky},
                                 {NULL}});
    if (synchronous)
        one_wait_per_call = waits_synchronous;
    REQUIRE(nregions > 0 && iters > 0 && nthreads > 0);
    REQUIRE(nregions <= MAX_REG && nthreads <= 16 && !(expect_waits && nthreads > 1));
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (!cudrv_open()) {
        MPI_Finalize();
        return 77;
    }
    REQUIRE(dlsym(RTLD_DEFAULT, "tj_version") != NULL); /* run with libtypejit.so preloaded */
    CUDRV(cuCtxGetCurrent(&main_ctx));
    REQUIRE(nthreads == 1 || provided == MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int k = 0; k < nregions; k++) {
        reg_types[k] = make_type(k, false);
        lay_types[k] = make_type(k, true);
        reg_counts[k] = 1 + k % 2;
        fits_slot(reg_types[k], reg_counts[k]);
        fits_slot(lay_types[k], 1);
    }
    for (int t = 0; t < nthreads; t++) {
        REQUIRE(MPI_Comm_dup(MPI_COMM_SELF, &ps[t].comm) == MPI_SUCCESS);
        MPI_Comm_set_errhandler(ps[t].comm, MPI_ERRORS_RETURN);
        ps[t].salt = (unsigned)(rank * 31 + t * 7);
        ps[t].measure = nthreads == 1;
    }
    if (no_p2p) {
        ;
    } else if (nthreads == 1) {
        p2p_run(&ps[0]);
    } else {
        for (int t = 0; t < nthreads; t++)
            REQUIRE(pthread_create(&th[t], NULL, p2p_run, &ps[t]) == 0);
        for (int t = 0; t < nthreads; t++)
            pthread_join(th[t], NULL);
    }
    for (int it = 0; !no_coll && it < iters && !any_dead(); it++) {
        alltoallw(it, nthreads == 1 && it > 0);
        if (any_dead())
            break;
        neighbor(it, nthreads == 1 && it > 0);
    }
    if (rank == 0 && nthreads == 1 && iters > 1 && !faults && !sticky) {
        printf("waits for the device per call (%d regions, %d ranks):", nregions, nranks);
        for (int w = 0; w < W_COUNT; w++)
            if ((!no_coll || w < W_ALLTOALLW) && (!no_p2p || w >= W_ALLTOALLW))
                printf(" %s=%ld", wait_names[w], measured[w]);
        printf("\n");
    }
    printf("rank %d: %ld checks against the system MPI, %ld MPI errors met\n", rank,
           atomic_load(&checked), atomic_load(&errors));
    CHECK(atomic_load(&checked) > 0);
    if (sticky)
        CHECK(atomic_load(&errors) > 0); /* the death was reported */
    for (int t = 0; t < nthreads; t++)
        MPI_Comm_free(&ps[t].comm);
    if (!sticky)
        for (int k = 0; k < nregions; k++) {
            MPI_Type_free(&reg_types[k]);
            MPI_Type_free(&lay_types[k]);
        }
    MPI_Finalize();
    CHECK_DONE();
}
