/* SPDX-License-Identifier: BSD-3-Clause */
/* Requests freed while active (MPI_Request_free before completion), as MPICH's test
 * pt2pt/rqfree makes them: rank 0 frees an Isend, an Ibsend, an Issend and an Irsend at once,
 * through an attached buffer it detaches later, then sends a large message (a rendezvous) and
 * waits for it; rank 1 has posted every receive and waits for them, frees the receive of one
 * small message while it is active, and both go into MPI_Finalize. The program must complete,
 * and every receive it waited for must hold its bytes, under typejit exactly as without it:
 *
 *   mpiexec -n 2 test_rqfree [--device] [--free-large-recv]
 *
 * --device: every buffer the messages use is device memory (the test driver or a GPU; exit 77
 * without a CUDA device), moved as a strided datatype (an int every 8 bytes): typejit packs it,
 * and completes the freed requests' unpacks in MPI_Finalize. Without it, host memory and
 * MPI_INT, as rqfree itself.
 * --free-large-recv: rank 1 also frees the large message's receive while active, as rqfree
 * does. MPICH 4.0's MPI_Finalize does not complete such a receive, and rank 0, waiting for the
 * rendezvous, hangs with it, with or without typejit (docs/mpis.md): a reproduction, not a
 * test. */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cudrv.h"
#include "devbuf.h"
#include "options.h"

#define SMALL 5     /* the four freed sends, and one waited for */
#define LARGE 10000 /* ints of the large message: above every MPI's eager limit */

/* One message's buffer: n objects of the message type, each `stride` ints of which the first is
 * moved. */
typedef struct {
    buf_t buf;
    int n; /* objects */
} msg_t;

static bool device;
static int stride = 1; /* ints per object: 2 for the strided type of --device */

static msg_t msg_alloc(int n)
{
    msg_t m = {buf_alloc(device ? K_DEVICE : K_HOST, (size_t)n * (size_t)stride * sizeof(int)), n};
    int *v = malloc(m.buf.len);
    REQUIRE(v != NULL);
    memset(v, 0x5A, m.buf.len); /* poison */
    buf_put(&m.buf, v);
    free(v);
    return m;
}

/* Fills the moved ints of @p m with base, base + 1, ... */
static void msg_fill(msg_t *m, int base)
{
    int *v = calloc((size_t)m->n * (size_t)stride, sizeof(int));
    REQUIRE(v != NULL);
    for (int i = 0; i < m->n; i++)
        v[stride * i] = base + i;
    buf_put(&m->buf, v);
    free(v);
}

/* Whether the moved ints of @p m are base, base + 1, ... */
static bool msg_holds(const msg_t *m, int base)
{
    int *v = malloc(m->buf.len);
    bool ok = true;
    REQUIRE(v != NULL);
    buf_get(&m->buf, v);
    for (int i = 0; i < m->n && ok; i++)
        ok = v[stride * i] == base + i;
    free(v);
    return ok;
}

int main(int argc, char **argv)
{
    const int src = 0, dest = 1, tag = 1;
    bool free_large = false;
    MPI_Datatype type; /* of every message */
    int rank, size;

    MPI_Init(&argc, &argv);
    options_read(argc, argv,
                 (const opt_t[]){{"--device", OPT_FLAG, &device},
                                 {"--free-large-recv", OPT_FLAG, &free_large},
                                 {NULL}});
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size == 2);
    if (device && !cudrv_open()) {
        MPI_Finalize();
        return 77;
    }
    if (device) {
        stride = 2;
        MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &type);
        MPI_Type_commit(&type);
    } else {
        type = MPI_INT;
    }

    if (rank == src) {
        msg_t s[SMALL], big = msg_alloc(LARGE);
        MPI_Request r;
        char *attached, *back;
        int pack, bytes, back_bytes;

        for (int i = 0; i < SMALL; i++) {
            s[i] = msg_alloc(1);
            msg_fill(&s[i], 10 + i);
        }
        msg_fill(&big, 1000);
        MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted: the ready send may go */
        MPI_Pack_size(SMALL, MPI_INT, MPI_COMM_WORLD, &pack);
        bytes = MPI_BSEND_OVERHEAD + pack + 2000;
        attached = malloc((size_t)bytes);
        REQUIRE(attached != NULL);
        MPI_Buffer_attach(attached, bytes);

        CHECK(MPI_Isend(s[0].buf.ptr, 1, type, dest, tag, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
        CHECK(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
        CHECK(MPI_Ibsend(s[1].buf.ptr, 1, type, dest, tag + 1, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
        CHECK(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
        CHECK(MPI_Issend(s[2].buf.ptr, 1, type, dest, tag + 2, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
        CHECK(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
        CHECK(MPI_Irsend(s[3].buf.ptr, 1, type, dest, tag + 3, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
        CHECK(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
        CHECK(MPI_Isend(s[4].buf.ptr, 1, type, dest, tag + 4, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
        CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        /* The buffered message is delivered by the time the detach returns. */
        CHECK(MPI_Buffer_detach(&back, &back_bytes) == MPI_SUCCESS);
        CHECK(back == attached && back_bytes == bytes);
        free(attached);
        CHECK(MPI_Isend(big.buf.ptr, LARGE, type, dest, tag + 5, MPI_COMM_WORLD, &r) ==
              MPI_SUCCESS);
        CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        /* The send buffers of the freed requests stay allocated: nothing tells this process
         * when those sends are done (the receiver's waits do not either). */
    } else {
        msg_t m[SMALL + 1];
        MPI_Request r[SMALL + 1];

        for (int i = 0; i < SMALL; i++) {
            m[i] = msg_alloc(1);
            CHECK(MPI_Irecv(m[i].buf.ptr, 1, type, src, tag + i, MPI_COMM_WORLD, &r[i]) ==
                  MPI_SUCCESS);
        }
        m[SMALL] = msg_alloc(LARGE);
        CHECK(MPI_Irecv(m[SMALL].buf.ptr, LARGE, type, src, tag + SMALL, MPI_COMM_WORLD,
                        &r[SMALL]) == MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < SMALL - 1; i++) {
            CHECK(MPI_Wait(&r[i], MPI_STATUS_IGNORE) == MPI_SUCCESS);
            if (!msg_holds(&m[i], 10 + i)) {
                fprintf(stderr, "message %d is wrong\n", i);
                CHECK(!"every message waited for holds its bytes");
            }
        }
        /* Freed while active (its message may or may not have arrived): MPI_Finalize completes
         * it. Its buffer stays allocated. */
        CHECK(MPI_Request_free(&r[SMALL - 1]) == MPI_SUCCESS && r[SMALL - 1] == MPI_REQUEST_NULL);
        if (free_large) {
            CHECK(MPI_Request_free(&r[SMALL]) == MPI_SUCCESS);
        } else {
            CHECK(MPI_Wait(&r[SMALL], MPI_STATUS_IGNORE) == MPI_SUCCESS);
            CHECK(msg_holds(&m[SMALL], 1000));
        }
    }
    if (device)
        MPI_Type_free(&type);
    /* As MPICH's test harness ends: the errors summed on rank 0, which rank 1 leaves (its part
     * sent) while rank 0 may still wait for the large message; then MPI_Finalize. */
    {
        int total = 0;
        CHECK(MPI_Reduce(&check_failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD) ==
              MPI_SUCCESS);
        if (rank == 0 && total > check_failures)
            fprintf(stderr, "rank 1 had %d failed checks\n", total - check_failures);
        if (rank == 0)
            check_failures = total;
    }
    MPI_Finalize();
    CHECK_DONE();
}
