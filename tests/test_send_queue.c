/* SPDX-License-Identifier: BSD-3-Clause */
/* Non-blocking device calls that do not block (docs/send-paths.md#when-typejit-waits), through the
 * preloaded library on 2 ranks, against what MPI's standard promises:
 *   halo:     26 MPI_Isend of faces of one device grid make no driver call that waits for the
 *             device (the test driver's `syncs`) and no wait of typejit's (gpu_waits), each
 *             returning with its pack queued (sends_queued); the bytes arrive exact;
 *   tests:    a receive into device memory completed by MPI_Test, Testany, Testsome, Testall and
 *             Request_get_status loops: no call of the loop waits for the device, and the bytes
 *             are exact once it reports completion;
 *   order:    random mixes of sends from host and device memory, blocking, non-blocking,
 *             synchronous, buffered and persistent, one tag (received with that tag and with
 *             MPI_ANY_TAG, alternately): every message arrives in the order it was sent
 *             (non-overtaking), every byte exact;
 *   blocking: a rank that posts a device Isend and then blocks (MPI_Recv, MPI_Comm_dup,
 *             MPI_Barrier, MPI_Probe on the peer's side) until the peer has that message: it
 *             completes, as without typejit (a hang fails the test by its timeout);
 *   requests: MPI_Request_free, MPI_Cancel and MPI_Request_get_status of queued sends;
 *   collectives: a device MPI_Ialltoallw waits for nothing and queues its system call, host
 *             collectives after it on the same communicator (Iallreduce, Ibarrier, Allreduce)
 *             reach the system MPI after it, completion by Waitall, Waitany, Waitsome and Test;
 *   finalize: a device Isend left incomplete at MPI_Finalize still reaches its receiver.
 *
 *   mpirun -np 2 test_send_queue [--rounds N] [--seed S] [--threads K] [--expect-no-waits]
 *
 * --threads K: K threads run the order part at once, each on a communicator of its own
 * (MPI_THREAD_MULTIPLE). --expect-no-waits: assert the counts of the halo and tests parts (the
 * default settings, on the CPU-only test driver; a real driver or TYPEJIT_PROGRESS=off counts
 * otherwise). Exits 77 without a CUDA device. */
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

#define FACE_ROWS 16
#define FACE_RUN  4
#define PITCH     64 /* doubles between rows of a face */
#define FACE_N    (FACE_ROWS * FACE_RUN)
#define FACE_SPAN (FACE_ROWS * PITCH) /* doubles one face's rows cover */
#define NFACES    26
#define SLOTS     24 /* device buffers of the order part in flight at once */
#define TAG       7

static int rank, nthreads = 1, rounds = 300;
static unsigned seed = 1;
static bool expect_no_waits;
static MPI_Datatype face; /* vector(16, 4, 64, MPI_DOUBLE): 64 doubles in 16 runs */
static CUcontext main_ctx;
static atomic_int failures;
static long long (*driver_stats)(const char *);

/* Statuses for a call over @p _n requests that the test does not read: MPICH's header declares
 * the array's size to GCC, which then warns about MPI_STATUSES_IGNORE (a pointer to nothing). */
#define STATUSES(_n) ((MPI_Status[_n]){0})

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "rank %d: ", rank);                                                        \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        atomic_fetch_add(&failures, 1);                                                            \
    } while (0)

/* Driver calls after which the host waited for the device (the test driver counts them). */
static long long syncs(void)
{
    return driver_stats != NULL ? driver_stats("syncs") : -1;
}

/* The value of double k of a face sent as message @p seq. */
static double value(long seq, int k)
{
    return (double)seq * 1000.0 + k;
}

/* A device grid of @p n faces one after another, face f filled for message @p seq0 + f. */
static CUdeviceptr grid_new(int n)
{
    CUdeviceptr d;
    CUDRV(cuMemAlloc(&d, (size_t)n * FACE_SPAN * sizeof(double)));
    return d;
}

/* Write face @p f of grid @p d (its rows; the gaps between them get -1) for message @p seq. */
static void face_fill(CUdeviceptr d, int f, long seq)
{
    double host[FACE_SPAN];
    for (int i = 0; i < FACE_SPAN; i++)
        host[i] = -1.0;
    for (int r = 0; r < FACE_ROWS; r++)
        for (int c = 0; c < FACE_RUN; c++)
            host[r * PITCH + c] = value(seq, r * FACE_RUN + c);
    CUDRV(cuMemcpyHtoD(d + (CUdeviceptr)f * FACE_SPAN * sizeof(double), host, sizeof(host)));
}

/* Whether the 64 doubles of a received message are those of message @p seq. */
static bool packed_is(const double *got, long seq)
{
    for (int k = 0; k < FACE_N; k++)
        if (got[k] != value(seq, k))
            return false;
    return true;
}

/* Whether face @p f of device grid @p d holds message @p seq (the gaps untouched: -2). */
static bool face_is(CUdeviceptr d, int f, long seq)
{
    double host[FACE_SPAN];
    CUDRV(cuMemcpyDtoH(host, d + (CUdeviceptr)f * FACE_SPAN * sizeof(double), sizeof(host)));
    for (int r = 0; r < FACE_ROWS; r++)
        for (int c = 0; c < PITCH; c++) {
            double want = c < FACE_RUN ? value(seq, r * FACE_RUN + c) : -2.0;
            if (host[r * PITCH + c] != want)
                return false;
        }
    return true;
}

static void poison(CUdeviceptr d, int n)
{
    size_t len = (size_t)n * FACE_SPAN;
    double *host = malloc(len * sizeof(double));
    REQUIRE(host != NULL);
    for (size_t i = 0; i < len; i++)
        host[i] = -2.0;
    CUDRV(cuMemcpyHtoD(d, host, len * sizeof(double)));
    free(host);
}

static void *face_at(CUdeviceptr d, int f)
{
    return (void *)(uintptr_t)(d + (CUdeviceptr)f * FACE_SPAN * sizeof(double));
}

/* ---- halo: 26 Isends that do not wait -------------------------------------------------------- */

static void part_halo(bool measure)
{
    MPI_Request reqs[NFACES];
    double got[NFACES][FACE_N];

    if (rank == 0) {
        CUdeviceptr d = grid_new(NFACES);
        for (int f = 0; f < NFACES; f++)
            face_fill(d, f, 100 + f);
        long s0 = syncs(), w0 = tj_counter("gpu_waits"), q0 = tj_counter("sends_queued");
        for (int f = 0; f < NFACES; f++)
            MPI_Isend(face_at(d, f), 1, face, 1, f, MPI_COMM_WORLD, &reqs[f]);
        long s1 = syncs(), w1 = tj_counter("gpu_waits"), q1 = tj_counter("sends_queued");
        if (measure && expect_no_waits && (s1 != s0 || w1 != w0 || q1 - q0 != NFACES))
            FAIL("26 device Isends: %ld driver calls waited, %ld waits of typejit's, %ld sends "
                 "queued (0, 0 and 26 expected)",
                 s1 - s0, w1 - w0, q1 - q0);
        MPI_Waitall(NFACES, reqs, STATUSES(NFACES));
        for (int f = 0; f < NFACES; f++)
            if (reqs[f] != MPI_REQUEST_NULL)
                FAIL("Waitall left request %d of a device Isend not MPI_REQUEST_NULL", f);
        CUDRV(cuMemFree(d));
    } else {
        for (int f = 0; f < NFACES; f++)
            MPI_Irecv(got[f], FACE_N, MPI_DOUBLE, 0, f, MPI_COMM_WORLD, &reqs[f]);
        MPI_Waitall(NFACES, reqs, STATUSES(NFACES));
        for (int f = 0; f < NFACES; f++)
            if (!packed_is(got[f], 100 + f))
                FAIL("halo: face %d arrived wrong", f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- collectives: a non-blocking collective whose packs run on ------------------------------ */

/* MPI_Ialltoallw of one face to each rank, rank 0 from a device grid (its packs left running:
 * the call waits for nothing and queues the collective), rank 1 from host memory (the system
 * MPI's call at once); then, on the same communicator, host collectives that must reach the
 * system MPI after the queued one on rank 0 (an Iallreduce, an Ibarrier, an Allreduce), which
 * would mismatch the ranks' collectives were the queued one overtaken; completed by Waitall,
 * Waitany, Waitsome and Test loops in turn. */
static void part_collectives(void)
{
    int counts[2] = {1, 1};
    MPI_Datatype stypes[2] = {face, face}, rtypes[2] = {MPI_DOUBLE, MPI_DOUBLE};
    int rcounts[2] = {FACE_N, FACE_N}, rdispls[2] = {0, FACE_N * (int)sizeof(double)};
    int sdispls[2] = {0, FACE_SPAN * (int)sizeof(double)};
    CUdeviceptr d = rank == 0 ? grid_new(2) : 0;
    double *host = NULL, got[2 * FACE_N];

    if (rank == 1) {
        host = malloc(2 * FACE_SPAN * sizeof(double));
        REQUIRE(host != NULL);
    }
    for (int round = 0; round < 8; round++) {
        long seq = 5000 + 10L * round;
        MPI_Request reqs[3];
        int sum = rank + 1, total = 0, again = 0, index, outcount, indices[3], flag = 0;
        const void *sbuf;

        for (int k = 0; k < 2 * FACE_N; k++)
            got[k] = -3.0;
        /* Face k of rank r's grid goes to rank k: message seq + 2r + k. */
        if (rank == 0) {
            face_fill(d, 0, seq);
            face_fill(d, 1, seq + 1);
            sbuf = (const void *)(uintptr_t)d;
        } else {
            for (int f = 0; f < 2; f++)
                for (int r = 0; r < FACE_ROWS; r++)
                    for (int c = 0; c < PITCH; c++)
                        host[f * FACE_SPAN + r * PITCH + c] =
                            c < FACE_RUN ? value(seq + 2 + f, r * FACE_RUN + c) : -1.0;
            sbuf = host;
        }
        long w0 = tj_counter("gpu_waits"), q0 = tj_counter("sends_queued");
        MPI_Ialltoallw(sbuf, counts, sdispls, stypes, got, rcounts, rdispls, rtypes, MPI_COMM_WORLD,
                       &reqs[0]);
        long w1 = tj_counter("gpu_waits"), q1 = tj_counter("sends_queued");
        if (rank == 0 && expect_no_waits && (w1 != w0 || q1 - q0 != 1))
            FAIL("a device Ialltoallw: %ld waits of typejit's, %ld sends queued (0 and 1 "
                 "expected)",
                 w1 - w0, q1 - q0);
        MPI_Iallreduce(&sum, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[1]);
        MPI_Ibarrier(MPI_COMM_WORLD, &reqs[2]);
        MPI_Allreduce(&sum, &again, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        switch (round % 4) {
        case 0:
            MPI_Waitall(3, reqs, STATUSES(3));
            break;
        case 1:
            for (int n = 0; n < 3; n++)
                MPI_Waitany(3, reqs, &index, MPI_STATUS_IGNORE);
            break;
        case 2:
            for (int n = 0; n < 3; n += outcount)
                MPI_Waitsome(3, reqs, &outcount, indices, STATUSES(3));
            break;
        default:
            for (int n = 0; n < 3; n++)
                for (flag = 0; !flag;)
                    MPI_Test(&reqs[n], &flag, MPI_STATUS_IGNORE);
            break;
        }
        for (int n = 0; n < 3; n++)
            if (reqs[n] != MPI_REQUEST_NULL)
                FAIL("collectives: request %d not MPI_REQUEST_NULL after its completion", n);
        if (total != 3 || again != 3)
            FAIL("collectives: the reductions after the Ialltoallw gave %d and %d (3 expected)",
                 total, again);
        /* From rank 0: face `rank` of its grid; from rank 1: face `rank` of its host copy. */
        if (!packed_is(got, seq + rank) || !packed_is(got + FACE_N, seq + 2 + rank))
            FAIL("collectives: round %d's Ialltoallw arrived wrong", round);
    }
    free(host);
    if (d != 0)
        CUDRV(cuMemFree(d));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- tests: completion calls that do not wait --------------------------------------------- */

enum { BY_TEST, BY_TESTANY, BY_TESTSOME, BY_TESTALL, BY_GET_STATUS, BY_COUNT };
static const char *const by_names[BY_COUNT] = {"MPI_Test", "MPI_Testany", "MPI_Testsome",
                                               "MPI_Testall", "MPI_Request_get_status"};

/* One poll of @p req by completion call @p by; true when it reported completion (and freed the
 * request, except Request_get_status, after which MPI_Wait does). */
static bool poll_once(int by, MPI_Request *req, MPI_Status *st)
{
    MPI_Request two[2] = {MPI_REQUEST_NULL, *req};
    int flag = 0, index = -1, outcount = 0, indices[2];

    switch (by) {
    case BY_TEST:
        MPI_Test(req, &flag, st);
        return flag;
    case BY_TESTANY:
        MPI_Testany(2, two, &index, &flag, st);
        *req = two[1];
        if (flag && index != 1)
            FAIL("Testany reported index %d, 1 expected", index);
        return flag;
    case BY_TESTSOME:
        MPI_Testsome(2, two, &outcount, indices, STATUSES(2));
        *req = two[1];
        if (outcount == MPI_UNDEFINED)
            FAIL("Testsome found no active request while a receive was active");
        return outcount == 1;
    case BY_TESTALL:
        MPI_Testall(2, two, &flag, STATUSES(2));
        *req = two[1];
        return flag;
    default:
        MPI_Request_get_status(*req, &flag, st);
        if (flag)
            MPI_Wait(req, MPI_STATUS_IGNORE);
        return flag;
    }
}

static void part_tests(void)
{
    CUdeviceptr d = 0;

    if (rank == 1) {
        d = grid_new(1);
    }
    for (int by = 0; by < BY_COUNT; by++) {
        long seq = 500 + by;
        if (rank == 0) {
            double msg[FACE_N];
            for (int k = 0; k < FACE_N; k++)
                msg[k] = value(seq, k);
            MPI_Barrier(MPI_COMM_WORLD); /* the receive is posted */
            MPI_Send(msg, FACE_N, MPI_DOUBLE, 1, TAG, MPI_COMM_WORLD);
        } else {
            MPI_Request req;
            MPI_Status st;
            long polls = 0, waited = 0;
            poison(d, 1);
            MPI_Irecv(face_at(d, 0), 1, face, 0, TAG, MPI_COMM_WORLD, &req);
            MPI_Barrier(MPI_COMM_WORLD);
            for (;;) {
                long s0 = syncs(), w0 = tj_counter("gpu_waits");
                bool done = poll_once(by, &req, &st);
                polls++;
                /* Request_get_status's MPI_Wait after completion may wait: not counted. */
                if (!done || by != BY_GET_STATUS)
                    waited += (syncs() - s0) + (tj_counter("gpu_waits") - w0);
                if (done)
                    break;
            }
            if (req != MPI_REQUEST_NULL)
                FAIL("%s: the completed receive's request is not MPI_REQUEST_NULL", by_names[by]);
            if (expect_no_waits && waited != 0)
                FAIL("%s: %ld waits for the device in %ld polls (none expected)", by_names[by],
                     waited, polls);
            if (!face_is(d, 0, seq))
                FAIL("%s: the receive's bytes are wrong when it reports completion", by_names[by]);
        }
    }
    if (rank == 1) {
        if (expect_no_waits && tj_counter("unpacks_async") < 1)
            FAIL("no unpack was left running by a test (unpacks_async=%ld)",
                 tj_counter("unpacks_async"));
        CUDRV(cuMemFree(d));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- order: random mixes of sends, one tag ------------------------------------------------- */

typedef enum {
    K_HOST_SEND,
    K_HOST_ISEND,
    K_HOST_SSEND,
    K_DEV_SEND,
    K_DEV_ISEND,
    K_DEV_ISSEND,
    K_DEV_IBSEND,
    K_DEV_PERSISTENT,
    K_COUNT
} kind_t;

typedef struct {
    MPI_Comm comm;
    unsigned rng;
    long errors;
} order_arg_t;

static unsigned next_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

/* The sender's side: @p rounds messages to rank 1 of @p comm, each of a random kind, with at most
 * SLOTS in flight (completed at random by Waitall, Waitany, Testsome or Wait). */
static void order_send(order_arg_t *a)
{
    CUdeviceptr d = grid_new(SLOTS);
    MPI_Request reqs[SLOTS], persistent[SLOTS];
    bool busy[SLOTS] = {false};
    double host[SLOTS][FACE_N];
    int nbusy = 0;

    for (int s = 0; s < SLOTS; s++) {
        reqs[s] = MPI_REQUEST_NULL;
        MPI_Send_init(face_at(d, s), 1, face, 1, TAG, a->comm, &persistent[s]);
    }
    for (long seq = 0; seq < rounds; seq++) {
        kind_t k = (kind_t)(next_rand(&a->rng) % K_COUNT);
        int s = -1;
        /* A free slot, completing some requests first when none is. */
        while (s < 0) {
            for (int i = 0; i < SLOTS && s < 0; i++)
                if (!busy[i])
                    s = i;
            if (s >= 0)
                break;
            int how = (int)(next_rand(&a->rng) % 3), idx, outcount, indices[SLOTS];
            if (how == 0) {
                MPI_Waitall(SLOTS, reqs, STATUSES(SLOTS));
            } else if (how == 1) {
                MPI_Waitany(SLOTS, reqs, &idx, MPI_STATUS_IGNORE);
            } else {
                MPI_Testsome(SLOTS, reqs, &outcount, indices, STATUSES(SLOTS));
            }
            for (int i = 0; i < SLOTS; i++)
                if (busy[i] && reqs[i] == MPI_REQUEST_NULL) {
                    busy[i] = false;
                    nbusy--;
                }
        }
        for (int c = 0; c < FACE_N; c++)
            host[s][c] = value(seq, c);
        if (k >= K_DEV_SEND)
            face_fill(d, s, seq);
        switch (k) {
        case K_HOST_SEND:
            MPI_Send(host[s], FACE_N, MPI_DOUBLE, 1, TAG, a->comm);
            break;
        case K_HOST_ISEND:
            MPI_Isend(host[s], FACE_N, MPI_DOUBLE, 1, TAG, a->comm, &reqs[s]);
            break;
        case K_HOST_SSEND:
            MPI_Ssend(host[s], FACE_N, MPI_DOUBLE, 1, TAG, a->comm);
            break;
        case K_DEV_SEND:
            MPI_Send(face_at(d, s), 1, face, 1, TAG, a->comm);
            break;
        case K_DEV_ISEND:
            MPI_Isend(face_at(d, s), 1, face, 1, TAG, a->comm, &reqs[s]);
            break;
        case K_DEV_ISSEND:
            MPI_Issend(face_at(d, s), 1, face, 1, TAG, a->comm, &reqs[s]);
            break;
        case K_DEV_IBSEND:
            MPI_Ibsend(face_at(d, s), 1, face, 1, TAG, a->comm, &reqs[s]);
            break;
        default:
            MPI_Start(&persistent[s]);
            break;
        }
        if (k == K_DEV_PERSISTENT) {
            /* Completed at once or left for later, as the others: a persistent request stays
             * allocated, so it is completed here by its own Wait before its slot is reused. */
            if (next_rand(&a->rng) % 2)
                MPI_Wait(&persistent[s], MPI_STATUS_IGNORE);
            else {
                int flag = 0;
                MPI_Test(&persistent[s], &flag, MPI_STATUS_IGNORE);
                if (!flag)
                    MPI_Wait(&persistent[s], MPI_STATUS_IGNORE);
            }
        } else if (reqs[s] != MPI_REQUEST_NULL) {
            busy[s] = true;
            nbusy++;
        }
    }
    MPI_Waitall(SLOTS, reqs, STATUSES(SLOTS));
    for (int s = 0; s < SLOTS; s++)
        MPI_Request_free(&persistent[s]);
    CUDRV(cuMemFree(d));
    (void)nbusy;
}

static void order_recv(order_arg_t *a)
{
    double got[FACE_N];
    MPI_Status st;

    for (long seq = 0; seq < rounds; seq++) {
        MPI_Recv(got, FACE_N, MPI_DOUBLE, 0, seq % 2 ? MPI_ANY_TAG : TAG, a->comm, &st);
        if (!packed_is(got, seq)) {
            if (a->errors++ < 5)
                fprintf(stderr, "rank 1: message %ld arrived as %g (out of order or wrong)\n", seq,
                        got[0] / 1000.0);
        }
    }
}

static void *order_main(void *arg)
{
    order_arg_t *a = arg;
    CUDRV(cuCtxSetCurrent(main_ctx));
    if (rank == 0)
        order_send(a);
    else
        order_recv(a);
    return NULL;
}

static void part_order(void)
{
    pthread_t threads[16];
    order_arg_t args[16];
    long errors = 0;
    char *buffer;
    int size;

    /* For the buffered sends: room for every message that may be in flight. */
    MPI_Pack_size(FACE_N, MPI_DOUBLE, MPI_COMM_WORLD, &size);
    size = (size + MPI_BSEND_OVERHEAD) * (SLOTS + 2) * nthreads;
    buffer = malloc((size_t)size);
    REQUIRE(buffer != NULL);
    MPI_Buffer_attach(buffer, size);
    for (int t = 0; t < nthreads; t++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &args[t].comm);
        args[t].rng = seed * 7919u + (unsigned)t;
        args[t].errors = 0;
    }
    if (nthreads == 1)
        order_main(&args[0]);
    else {
        for (int t = 0; t < nthreads; t++)
            REQUIRE(pthread_create(&threads[t], NULL, order_main, &args[t]) == 0);
        for (int t = 0; t < nthreads; t++)
            pthread_join(threads[t], NULL);
    }
    for (int t = 0; t < nthreads; t++) {
        errors += args[t].errors;
        MPI_Comm_free(&args[t].comm);
    }
    MPI_Buffer_detach(&buffer, &size);
    free(buffer);
    if (errors > 0)
        FAIL("order: %ld of %d messages out of order or wrong", errors, rounds * nthreads);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- blocking calls after a device Isend ------------------------------------------------ */

/* Rank 0 posts a device Isend, then makes a call that blocks until rank 1 has received it. */
static void part_blocking(void)
{
    CUdeviceptr d = grid_new(1);
    double got[FACE_N], one = 1.0;
    MPI_Request req;
    MPI_Comm dup;

    for (int step = 0; step < 4; step++) {
        long seq = 700 + step;
        if (rank == 0) {
            face_fill(d, 0, seq);
            MPI_Isend(face_at(d, 0), 1, face, 1, TAG, MPI_COMM_WORLD, &req);
            if (step == 0) {
                MPI_Recv(&one, 1, MPI_DOUBLE, 1, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (step == 1) {
                MPI_Comm_dup(MPI_COMM_WORLD, &dup);
                MPI_Comm_free(&dup);
            } else if (step == 2) {
                MPI_Barrier(MPI_COMM_WORLD);
            } else {
                MPI_Sendrecv(&one, 1, MPI_DOUBLE, 1, TAG + 1, &one, 1, MPI_DOUBLE, 1, TAG + 1,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Status st;
            if (step == 2) {
                MPI_Probe(0, TAG, MPI_COMM_WORLD, &st);
                MPI_Recv(got, FACE_N, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Barrier(MPI_COMM_WORLD);
            } else {
                MPI_Recv(got, FACE_N, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (step == 0)
                    MPI_Send(&one, 1, MPI_DOUBLE, 0, TAG + 1, MPI_COMM_WORLD);
                else if (step == 1) {
                    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
                    MPI_Comm_free(&dup);
                } else {
                    MPI_Sendrecv(&one, 1, MPI_DOUBLE, 0, TAG + 1, &one, 1, MPI_DOUBLE, 0, TAG + 1,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
            }
            if (!packed_is(got, seq))
                FAIL("blocking step %d: the message arrived wrong", step);
        }
    }
    CUDRV(cuMemFree(d));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- Request_free, Cancel, Request_get_status of queued sends ---------------------------- */

static void part_requests(void)
{
    CUdeviceptr d = grid_new(3);
    double got[FACE_N];

    if (rank == 0) {
        MPI_Request req;
        MPI_Status st;
        int flag = 0, cancelled = 0;
        double word;

        face_fill(d, 0, 800);
        face_fill(d, 1, 801);
        face_fill(d, 2, 802);
        /* Freed while queued: it still goes. */
        MPI_Isend(face_at(d, 0), 1, face, 1, TAG, MPI_COMM_WORLD, &req);
        MPI_Request_free(&req);
        if (req != MPI_REQUEST_NULL)
            FAIL("Request_free left the handle of a queued send");
        /* Polled with Request_get_status until complete, then Wait. */
        MPI_Isend(face_at(d, 1), 1, face, 1, TAG, MPI_COMM_WORLD, &req);
        while (!flag)
            MPI_Request_get_status(req, &flag, &st);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        /* Cancelled while queued: either cancelled or sent, and the receiver told which. */
        MPI_Isend(face_at(d, 2), 1, face, 1, TAG, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &cancelled);
        word = cancelled;
        MPI_Send(&word, 1, MPI_DOUBLE, 1, TAG + 2, MPI_COMM_WORLD);
        /* The freed send's buffer may be reused once the receiver has it. */
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        double word = 0;
        MPI_Recv(got, FACE_N, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (!packed_is(got, 800))
            FAIL("the send freed while queued arrived wrong");
        MPI_Recv(got, FACE_N, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (!packed_is(got, 801))
            FAIL("the send polled by Request_get_status arrived wrong");
        MPI_Recv(&word, 1, MPI_DOUBLE, 0, TAG + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (word == 0.0) {
            MPI_Recv(got, FACE_N, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (!packed_is(got, 802))
                FAIL("the send that was not cancelled arrived wrong");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CUDRV(cuMemFree(d));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- MPI_Finalize with a queued send ------------------------------------------------------ */

static CUdeviceptr last_grid;

static void part_finalize(void)
{
    if (rank == 0) {
        MPI_Request req;
        last_grid = grid_new(1);
        face_fill(last_grid, 0, 900);
        MPI_Isend(face_at(last_grid, 0), 1, face, 1, TAG, MPI_COMM_WORLD, &req);
        /* Never completed: MPI_Finalize hands it to the system MPI. */
    } else {
        double got[FACE_N];
        MPI_Recv(got, FACE_N, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (!packed_is(got, 900))
            FAIL("the send left queued at MPI_Finalize arrived wrong");
    }
}

int main(int argc, char **argv)
{
    int provided, size, all;

    options_read(argc, argv,
                 (const opt_t[]){{"--rounds", OPT_INT, &rounds},
                                 {"--seed", OPT_INT, &seed},
                                 {"--threads", OPT_INT, &nthreads},
                                 {"--expect-no-waits", OPT_FLAG, &expect_no_waits},
                                 {NULL}});
    REQUIRE(nthreads >= 1 && nthreads <= 16 && rounds >= 1);
    if (!cudrv_open())
        return 77;
    CUDRV(cuCtxGetCurrent(&main_ctx));
    driver_stats = (long long (*)(const char *))(uintptr_t)dlsym(RTLD_DEFAULT, "fakecuda_stats");
    MPI_Init_thread(&argc, &argv, nthreads > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                    &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size == 2);
    REQUIRE(nthreads == 1 || provided == MPI_THREAD_MULTIPLE);
    MPI_Type_vector(FACE_ROWS, FACE_RUN, PITCH, MPI_DOUBLE, &face);
    MPI_Type_commit(&face);

    /* Once untimed: the kernels are compiled, the staging allocated. */
    part_halo(false);
    part_halo(true);
    part_tests();
    part_collectives();
    part_order();
    part_blocking();
    part_requests();

    all = atomic_load(&failures);
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    part_finalize();
    MPI_Type_free(&face);
    MPI_Finalize();
    if (rank == 0 && last_grid != 0)
        CUDRV(cuMemFree(last_grid));
    all += atomic_load(&failures);
    if (all != 0) {
        fprintf(stderr, "rank %d: %d failure(s)\n", rank, all);
        return 1;
    }
    if (rank == 0)
        printf("send queue: %d rounds x %d threads in order, every byte exact\n", rounds, nthreads);
    return 0;
}
