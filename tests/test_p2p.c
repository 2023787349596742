/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point MPI on device buffers with derived datatypes, through the preloaded library,
 * against the system MPI itself: every received buffer, status, MPI_Get_count and
 * MPI_Get_elements is compared with what the system MPI delivers for the same types and bytes
 * on host buffers (a send-receive over a private MPI_COMM_SELF). Random nested types, each side's
 * memory of any kind, and every way to send and receive: blocking, synchronous, buffered and
 * ready sends, non-blocking ones of each mode with Wait, Waitall, Waitany, Waitsome, Testall,
 * Testany, Testsome and Request_get_status (the bytes there as soon as it reports completion),
 * persistent ones of each mode with Start and Startall (their types freed after the init; three
 * sends from one buffer packed by one fused launch), Sendrecv, Sendrecv_replace (also with an
 * MPI_PROC_NULL source, which must leave its buffer as it was), Mprobe/Mrecv,
 * Improbe/Imrecv, Iprobe, ANY_SOURCE/ANY_TAG, MPI_PROC_NULL, truncation, a message shorter than
 * the buffer (a partial object), cancel, and a send request freed while active.
 *
 *   mpirun -np N test_p2p [--seed S] [--types T] [--threads K] [--host-only] [--families F]
 *                         [--collective]
 *   mpirun -np N test_p2p --partial-stress ROUNDS --threads K
 *
 * Ranks form a ring. --threads K: K threads exchange at once (MPI_THREAD_MULTIPLE), each on its
 * own tags. --host-only: this process uses host buffers only (a peer without typejit).
 * --partial-stress: K threads each receive ROUNDS short messages into device buffers of a type of
 * their own, so that many partial objects are finished at once; each must get its own bytes.
 * --families F: the types are constructions of F random layouts (rt_family_type: many types, a
 * bounded number of kernels, for volume runs). --collective: each type also goes through
 * MPI_Alltoallv on device buffers, against the system MPI's on host copies.
 * Exits 77 without a CUDA device. */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "counters.h"
#include "cudrv.h"
#include "devbuf.h"
#include "mpicheck.h"
#include "randtype.h"
#include "sysmpi.h"
#include "options.h"

#define POISON 0x5A
/* Written into status.MPI_ERROR before a receive: calls that complete one request must leave it
 * as it was, as the system MPI does. */
#define STATUS_MARK 0x7E57
#define MAX_SPAN    ((int64_t)1 << 20)
#define VARIANTS    31

static int rank, nranks;
static bool host_only;
static atomic_long failures, checked;
static MPI_Comm self_comm;
static CUcontext main_ctx;              /* device 0's primary context */
static _Thread_local CUcontext app_ctx; /* the calling thread's current context */
static int nthreads = 1;
static int families;    /* --families */
static bool collective; /* --collective */

static const char *const variant_names[VARIANTS] = {
    "isend/irecv/waitall",
    "sendrecv",
    "send/recv",
    "ssend/recv",
    "persistent",
    "waitany",
    "testsome",
    "any_source",
    "packed peer",
    "bsend",
    "sendrecv_replace",
    "mprobe/mrecv",
    "isend+free",
    "iprobe",
    "truncate",
    "partial",
    "proc_null",
    "cancel",
    "rsend",
    "issend",
    "irsend",
    "ibsend",
    "ssend_init",
    "rsend_init",
    "bsend_init",
    "improbe/imrecv",
    "testall",
    "testany",
    "waitsome",
    "request_get_status",
    "sendrecv_replace, no source",
};

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        if (atomic_fetch_add(&failures, 1) < 20) {                                                 \
            fprintf(stderr, "rank %d: ", rank);                                                    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

/* One side of one exchange: a typed buffer of some kind with `count` objects of `type`. */
typedef struct {
    MPI_Datatype type;
    int count, size;
    int64_t lo, span; /* footprint of count objects, relative to the buffer argument */
    buf_t buf;
    char *arg; /* the buffer argument: object 0 */
    unsigned char *host;
} side_t;

static void footprint(MPI_Datatype type, int count, int64_t *lo, int64_t *span)
{
    MPI_Aint tlb, text, lb, ext;
    int size;
    MPI_Type_size(type, &size);
    if (size == 0) {
        /* No byte is touched; the true bounds of an empty type can be anything (Open MPI: a
         * lower bound of 2^63 - 1, and a pointer that far from the buffer is undefined). */
        *lo = 0;
        *span = 1;
        return;
    }
    MPI_Type_get_true_extent(type, &tlb, &text);
    MPI_Type_get_extent(type, &lb, &ext);
    int64_t reach = (int64_t)(count > 0 ? count - 1 : 0) * ext;
    *lo = tlb + (reach < 0 ? reach : 0);
    *span = text + (reach < 0 ? -reach : reach);
    if (*span <= 0)
        *span = 1;
}

static void side_init(side_t *s, MPI_Datatype type, int count, kind_t kind)
{
    s->type = type;
    s->count = count;
    MPI_Type_size(type, &s->size);
    footprint(type, count, &s->lo, &s->span);
    s->buf = buf_alloc(kind, (size_t)s->span);
    s->arg = s->buf.ptr - s->lo;
    s->host = malloc((size_t)s->span);
    REQUIRE(s->host != NULL);
}

static void fill(side_t *s, uint64_t salt)
{
    for (int64_t i = 0; i < s->span; i++)
        s->host[i] = (unsigned char)(i * 29 + salt);
    buf_put(&s->buf, s->host);
}

static void poison(side_t *s)
{
    memset(s->host, POISON, (size_t)s->span);
    buf_put(&s->buf, s->host);
}

static void side_free(side_t *s)
{
    buf_free(&s->buf);
    free(s->host);
}

/* What the system MPI delivers: the sender's host pattern, sent as `scount` objects of the
 * sender's type and received as `rcount` of the receiver's, over a private self communicator,
 * with a receive (Irecv, Send, Wait) as the test's own calls make it: Open MPI reports a
 * truncated message differently through MPI_Sendrecv. The threads share that communicator: each
 * exchange uses its own tag there, or one thread's receive could take another's message. */
typedef struct {
    unsigned char *data; /* the receive footprint after the reference receive */
    MPI_Status status;
    int rc;
} reference_t;

static void reference(const side_t *recv, MPI_Datatype stype, int scount, uint64_t salt,
                      const unsigned char *initial, int tag, reference_t *ref)
{
    int64_t slo, sspan;
    unsigned char *src;
    footprint(stype, scount, &slo, &sspan);
    src = malloc((size_t)sspan);
    ref->data = malloc((size_t)recv->span);
    REQUIRE(src && ref->data);
    ref->status.MPI_ERROR = STATUS_MARK;
    for (int64_t i = 0; i < sspan; i++)
        src[i] = (unsigned char)(i * 29 + salt);
    if (initial != NULL)
        memcpy(ref->data, initial, (size_t)recv->span);
    else
        memset(ref->data, POISON, (size_t)recv->span);
    MPI_Request req;
    REQUIRE(PMPI_Irecv(ref->data - recv->lo, recv->count, recv->type, 0, tag, self_comm, &req) ==
            MPI_SUCCESS);
    REQUIRE(PMPI_Send(src - slo, scount, stype, 0, tag, self_comm) == MPI_SUCCESS);
    ref->rc = PMPI_Wait(&req, &ref->status);
    free(src);
}

/* The system MPI's own truncation between the two ranks (its self path truncates silently, so
 * a self exchange is no reference here): the same exchange with host buffers, through PMPI. */
static void reference_peer(const side_t *recv, MPI_Datatype stype, int scount, uint64_t salt,
                           int next, int prev, int tag, reference_t *ref)
{
    int64_t slo, sspan;
    unsigned char *src;
    footprint(stype, scount, &slo, &sspan);
    src = malloc((size_t)sspan);
    REQUIRE(src != NULL);
    for (int64_t i = 0; i < sspan; i++)
        src[i] = (unsigned char)(i * 29 + salt + (uint64_t)rank);
    memset(ref->data, POISON, (size_t)recv->span);
    ref->status.MPI_ERROR = STATUS_MARK;
    if (rank % 2 == 0 && !(nranks % 2 == 1 && rank == nranks - 1)) {
        REQUIRE(PMPI_Send(src - slo, scount, stype, next, tag, MPI_COMM_WORLD) == MPI_SUCCESS);
        ref->rc = PMPI_Recv(ref->data - recv->lo, recv->count, recv->type, prev, tag,
                            MPI_COMM_WORLD, &ref->status);
    } else {
        ref->rc = PMPI_Recv(ref->data - recv->lo, recv->count, recv->type, prev, tag,
                            MPI_COMM_WORLD, &ref->status);
        REQUIRE(PMPI_Send(src - slo, scount, stype, next, tag, MPI_COMM_WORLD) == MPI_SUCCESS);
    }
    free(src);
}

/* Whether the variant's status comes from a call that completes one request (MPI_ERROR must be
 * left as it was) rather than Waitall, Testall, Waitsome or Testsome. */
static bool single_completion(int variant)
{
    switch (variant) {
    case 0:
    case 4:
    case 6:
    case 8:
    case 19:
    case 20:
    case 21:
    case 22:
    case 23:
    case 24:
    case 26:
    case 28:
        return false;
    default:
        return true;
    }
}

/* Whether the system MPI itself leaves status.MPI_ERROR of the variant's single completion as it
 * was, as the standard says: the MPICH family writes 0 there in MPI_Sendrecv_replace, MPICH 4.0
 * in the receive after MPI_Iprobe too, without typejit as well (docs/mpis.md). */
static bool mpi_leaves_error(int variant)
{
    if (variant == 10 && sysmpi_is_mpich_family())
        return false;
    return variant != 13 || !sysmpi_version_has("MPICH Version: 4.0");
}

/* Compare a completed receive with the reference: bytes, source, tag, counts, and for a single
 * completion the untouched MPI_ERROR. */
static void verify_status(const char *what, side_t *recv, const reference_t *ref,
                          const MPI_Status *st, int rc, int source, int tag, const char *desc,
                          bool single)
{
    int c1, c2, e1, e2;
    atomic_fetch_add(&checked, 1);
    buf_get(&recv->buf, recv->host);
    if ((rc == MPI_SUCCESS) != (ref->rc == MPI_SUCCESS))
        FAIL("%s: rc %d, system MPI %d: %s", what, rc, ref->rc, desc);
    /* What a truncated receive leaves in its buffer is the MPI's choice: Open MPI stores what
     * fits on every path, MPICH on some (MPICH 4.0 stores nothing between processes, 5.0 does),
     * so the reference over MPI_COMM_SELF tells only for Open MPI. */
    bool bytes_defined = strcmp(what, "truncate") != 0 || sysmpi_is_open_mpi();
    if (bytes_defined && memcmp(recv->host, ref->data, (size_t)recv->span) != 0)
        FAIL("%s: received bytes differ: %s", what, desc);
    if (st == NULL)
        return;
    if (source >= 0 && st->MPI_SOURCE != source)
        FAIL("%s: MPI_SOURCE %d, expected %d", what, st->MPI_SOURCE, source);
    if (tag >= 0 && st->MPI_TAG != tag)
        FAIL("%s: MPI_TAG %d, expected %d", what, st->MPI_TAG, tag);
    MPI_Get_count(st, recv->type, &c1);
    MPI_Get_count(&ref->status, recv->type, &c2);
    /* The MPICH family's MPI_Get_elements divides by zero (SIGFPE, without typejit too) on
     * several types: an empty one (MPICH 4.0), a message that ends inside an object, a resized
     * pair type such as resized(10,4,MPI_SHORT_INT) (MPICH 4.0 and 5.0). There only the counts
     * are compared. */
    e1 = e2 = 0;
    if (sysmpi_is_open_mpi()) {
        MPI_Get_elements(st, recv->type, &e1);
        MPI_Get_elements(&ref->status, recv->type, &e2);
    }
    if (c1 != c2 || e1 != e2)
        FAIL("%s: count %d elements %d, system MPI %d and %d: %s", what, c1, e1, c2, e2, desc);
    if (single && st->MPI_ERROR != ref->status.MPI_ERROR)
        FAIL("%s: status.MPI_ERROR is %d, the system MPI leaves %d: %s", what, st->MPI_ERROR,
             ref->status.MPI_ERROR, desc);
}

static void verify(const char *what, side_t *recv, const reference_t *ref, const MPI_Status *st,
                   int rc, int source, int tag, const char *desc)
{
    verify_status(what, recv, ref, st, rc, source, tag, desc, false);
}

static void check_context(void)
{
    CUcontext cur = NULL;
    CUDRV(cuCtxGetCurrent(&cur));
    if (cur != app_ctx)
        FAIL("typejit changed the current context");
}

typedef struct {
    int tag0; /* each thread's tags start here */
    uint64_t seed;
    long types;
} job_t;

/* Tell prev, and hear from next, that this rank's receive is posted (ready mode needs the
 * matching receive first) or done (a freed send request's buffer is then free again): a
 * zero-byte message on a tag of its own. */
static void ready_handshake(int tag)
{
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    CHECK(MPI_Sendrecv(NULL, 0, MPI_BYTE, prev, tag + 50000, NULL, 0, MPI_BYTE, next, tag + 50000,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
}

/* The status of the receive, request 0, if it is among the @p outcount requests a Testsome or
 * Waitsome completed. */
static void note_receive(int outcount, const int *indices, const MPI_Status *sts, MPI_Status *st)
{
    for (int j = 0; j < outcount; j++)
        if (indices[j] == 0)
            *st = sts[j];
}

/* One type, one variant: every rank sends to the next and receives from the previous. */
static void exchange(MPI_Datatype type, const char *desc, int variant, int count, kind_t sk,
                     kind_t rk, int tag, uint64_t salt)
{
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    int rcount = count, rc = MPI_SUCCESS, size;
    MPI_Datatype stype = type;
    int scount = count;
    side_t s, r;
    reference_t ref;
    MPI_Status st;
    MPI_Request req[2];
    const char *what = variant_names[variant];

    st.MPI_ERROR = STATUS_MARK;

    MPI_Type_size(type, &size);
    if (variant == 14 && count < 2)
        variant = 0; /* truncation needs two objects */
    /* Intel MPI 2021.19's standard-ABI library aborts on every error, MPI_ERRORS_RETURN or not
     * (without typejit too): no truncated receive there. */
    if (variant == 14 && sysmpi_version_has("Intel(R) MPI"))
        variant = 0;
    if (variant == 7 && nthreads > 1)
        variant = 0; /* a wildcard receive could take another thread's message */
    if (variant == 14)
        rcount = count - 1;
    /* Bytes received into a typed buffer are outside MPI's type matching rules; the MPICH family
     * asserts when the last object is cut inside a basic element, Open MPI delivers the bytes. */
    if (variant == 15 && !sysmpi_is_open_mpi())
        variant = 0;
    if (variant == 15) {
        /* A message of whole and partial objects, sent as bytes from host memory. */
        stype = MPI_BYTE;
        scount = size * (count - 1) + (size > 1 ? size / 2 : 0);
        sk = K_HOST;
    }
    if (variant == 8) {
        /* The sender sends packed bytes (a peer that packed by itself). */
        stype = MPI_BYTE;
        scount = size * count;
    }
    side_init(&s, stype, scount, sk);
    side_init(&r, type, rcount, rk);
    /* The sender's salt is its rank's; the receiver computes the reference from prev's. */
    fill(&s, salt + (uint64_t)rank);
    if (variant == 10) {
        /* Sendrecv_replace: the buffer holds this rank's own pattern until prev's replaces it. */
        fill(&r, salt + (uint64_t)rank);
        reference(&r, stype, scount, salt + (uint64_t)prev, r.host, tag, &ref);
    } else {
        poison(&r);
        reference(&r, stype, scount, salt + (uint64_t)prev, NULL, tag, &ref);
    }
    if (variant == 16) {
        /* MPI_PROC_NULL on device buffers: nothing moves, the status says so. */
        CHECK(MPI_Send(s.arg, scount, stype, MPI_PROC_NULL, tag, MPI_COMM_WORLD) == MPI_SUCCESS);
        CHECK(MPI_Recv(r.arg, rcount, type, MPI_PROC_NULL, tag, MPI_COMM_WORLD, &st) ==
              MPI_SUCCESS);
        int c;
        MPI_Get_count(&st, type, &c);
        if (st.MPI_SOURCE != MPI_PROC_NULL || c != 0)
            FAIL("proc_null: source %d count %d", st.MPI_SOURCE, c);
        memset(ref.data, POISON, (size_t)r.span);
        ref.rc = MPI_SUCCESS;
        verify(what, &r, &ref, NULL, MPI_SUCCESS, -1, -1, desc);
        goto out;
    }
    if (variant == 17) {
        /* A receive nobody matches, cancelled: nothing written. */
        int cancelled = 0;
        CHECK(MPI_Irecv(r.arg, rcount, type, prev, tag + 999999, MPI_COMM_WORLD, &req[0]) ==
              MPI_SUCCESS);
        CHECK(MPI_Cancel(&req[0]) == MPI_SUCCESS);
        CHECK(MPI_Wait(&req[0], &st) == MPI_SUCCESS);
        MPI_Test_cancelled(&st, &cancelled);
        if (!cancelled)
            FAIL("cancel: the receive was not cancelled");
        memset(ref.data, POISON, (size_t)r.span);
        ref.rc = MPI_SUCCESS;
        verify(what, &r, &ref, NULL, MPI_SUCCESS, -1, -1, desc);
        goto out;
    }
    switch (variant) {
    case 1:
        rc = MPI_Sendrecv(s.arg, scount, stype, next, tag, r.arg, rcount, type, prev, tag,
                          MPI_COMM_WORLD, &st);
        break;
    case 2:
    case 3:
    case 14:
    case 15:
        /* Even ranks send first; with an odd ring size the last even rank receives first. */
        if (rank % 2 == 0 && !(nranks % 2 == 1 && rank == nranks - 1)) {
            CHECK((variant == 3 ? MPI_Ssend : MPI_Send)(s.arg, scount, stype, next, tag,
                                                        MPI_COMM_WORLD) == MPI_SUCCESS);
            rc = MPI_Recv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &st);
        } else {
            rc = MPI_Recv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &st);
            CHECK((variant == 3 ? MPI_Ssend : MPI_Send)(s.arg, scount, stype, next, tag,
                                                        MPI_COMM_WORLD) == MPI_SUCCESS);
        }
        break;
    case 4: {
        /* The requests are made with duplicates of the types, freed at once: MPI lets an
         * application free a type its persistent requests still use. */
        MPI_Status sts[2];
        MPI_Datatype sdup, rdup;
        MPI_Type_dup(stype, &sdup);
        MPI_Type_dup(type, &rdup);
        CHECK(MPI_Recv_init(r.arg, rcount, rdup, prev, tag, MPI_COMM_WORLD, &req[0]) ==
              MPI_SUCCESS);
        CHECK(MPI_Send_init(s.arg, scount, sdup, next, tag, MPI_COMM_WORLD, &req[1]) ==
              MPI_SUCCESS);
        MPI_Type_free(&sdup);
        MPI_Type_free(&rdup);
        /* Two rounds: the second must repack the send and unpack again. */
        for (int round = 0; round < 2; round++) {
            if (round == 1) {
                poison(&r);
                MPI_Barrier(MPI_COMM_WORLD);
            }
            CHECK(MPI_Startall(2, req) == MPI_SUCCESS);
            rc = MPI_Waitall(2, req, sts);
        }
        st = sts[0];
        MPI_Request_free(&req[0]);
        MPI_Request_free(&req[1]);
        break;
    }
    case 5:
    case 6: {
        MPI_Status sts[2];
        int left = 2, index, outcount, indices[2];
        sts[0].MPI_ERROR = STATUS_MARK;
        CHECK(MPI_Irecv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &req[0]) == MPI_SUCCESS);
        CHECK(MPI_Isend(s.arg, scount, stype, next, tag, MPI_COMM_WORLD, &req[1]) == MPI_SUCCESS);
        while (left > 0) {
            if (variant == 5) {
                rc = MPI_Waitany(2, req, &index, &sts[0]);
                if (index == 0)
                    st = sts[0];
                left--;
            } else {
                rc = MPI_Testsome(2, req, &outcount, indices, sts);
                note_receive(outcount, indices, sts, &st);
                left -= outcount;
            }
        }
        break;
    }
    case 7:
        CHECK(MPI_Isend(s.arg, scount, stype, next, tag, MPI_COMM_WORLD, &req[1]) == MPI_SUCCESS);
        rc = MPI_Recv(r.arg, rcount, type, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK(MPI_Wait(&req[1], MPI_STATUS_IGNORE) == MPI_SUCCESS);
        break;
    case 9:
        CHECK(MPI_Irecv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &req[0]) == MPI_SUCCESS);
        CHECK(MPI_Bsend(s.arg, scount, stype, next, tag, MPI_COMM_WORLD) == MPI_SUCCESS);
        rc = MPI_Wait(&req[0], &st);
        break;
    case 10:
        /* The receive buffer is the send buffer: send this rank's pattern, get prev's. */
        rc = MPI_Sendrecv_replace(r.arg, rcount, type, next, tag, prev, tag, MPI_COMM_WORLD, &st);
        break;
    case 11: {
        MPI_Message msg;
        CHECK(MPI_Isend(s.arg, scount, stype, next, tag, MPI_COMM_WORLD, &req[1]) == MPI_SUCCESS);
        CHECK(MPI_Mprobe(prev, tag, MPI_COMM_WORLD, &msg, &st) == MPI_SUCCESS);
        rc = MPI_Mrecv(r.arg, rcount, type, &msg, &st);
        CHECK(MPI_Wait(&req[1], MPI_STATUS_IGNORE) == MPI_SUCCESS);
        break;
    }
    case 12:
        /* The send request is freed while active: the message must still arrive intact. The
         * send buffer may be freed only once the send is known complete by other means (MPI 4.1,
         * 3.7.3): next's notice that it received it. */
        CHECK(MPI_Isend(s.arg, scount, stype, next, tag, MPI_COMM_WORLD, &req[1]) == MPI_SUCCESS);
        CHECK(MPI_Request_free(&req[1]) == MPI_SUCCESS);
        rc = MPI_Recv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &st);
        ready_handshake(tag);
        break;
    case 13: {
        int flag = 0, c1, c2;
        CHECK(MPI_Isend(s.arg, scount, stype, next, tag, MPI_COMM_WORLD, &req[1]) == MPI_SUCCESS);
        while (!flag)
            MPI_Iprobe(prev, tag, MPI_COMM_WORLD, &flag, &st);
        MPI_Get_count(&st, type, &c1);
        MPI_Get_count(&ref.status, type, &c2);
        if (c1 != c2)
            FAIL("iprobe: count %d, system MPI %d: %s", c1, c2, desc);
        rc = MPI_Recv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &st);
        CHECK(MPI_Wait(&req[1], MPI_STATUS_IGNORE) == MPI_SUCCESS);
        break;
    }
    case 18:
        CHECK(MPI_Irecv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &req[0]) == MPI_SUCCESS);
        ready_handshake(tag);
        CHECK(MPI_Rsend(s.arg, scount, stype, next, tag, MPI_COMM_WORLD) == MPI_SUCCESS);
        rc = MPI_Wait(&req[0], &st);
        break;
    case 19:
    case 20:
    case 21: {
        MPI_Status sts[2];
        CHECK(MPI_Irecv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &req[0]) == MPI_SUCCESS);
        if (variant == 20)
            ready_handshake(tag);
        CHECK((variant == 19   ? MPI_Issend
               : variant == 20 ? MPI_Irsend
                               : MPI_Ibsend)(s.arg, scount, stype, next, tag, MPI_COMM_WORLD,
                                             &req[1]) == MPI_SUCCESS);
        rc = MPI_Waitall(2, req, sts);
        st = sts[0];
        break;
    }
    case 22:
    case 23:
    case 24: {
        /* The other persistent send modes, started one at a time (ready mode once the receive
         * is started and prev knows it). */
        MPI_Status sts[2];
        CHECK(MPI_Recv_init(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &req[0]) ==
              MPI_SUCCESS);
        CHECK((variant == 22   ? MPI_Ssend_init
               : variant == 23 ? MPI_Rsend_init
                               : MPI_Bsend_init)(s.arg, scount, stype, next, tag, MPI_COMM_WORLD,
                                                 &req[1]) == MPI_SUCCESS);
        CHECK(MPI_Start(&req[0]) == MPI_SUCCESS);
        if (variant == 23)
            ready_handshake(tag);
        CHECK(MPI_Start(&req[1]) == MPI_SUCCESS);
        rc = MPI_Waitall(2, req, sts);
        st = sts[0];
        MPI_Request_free(&req[0]);
        MPI_Request_free(&req[1]);
        break;
    }
    case 25: {
        MPI_Message msg;
        int flag = 0;
        CHECK(MPI_Isend(s.arg, scount, stype, next, tag, MPI_COMM_WORLD, &req[1]) == MPI_SUCCESS);
        while (!flag)
            CHECK(MPI_Improbe(prev, tag, MPI_COMM_WORLD, &flag, &msg, &st) == MPI_SUCCESS);
        CHECK(MPI_Imrecv(r.arg, rcount, type, &msg, &req[0]) == MPI_SUCCESS);
        rc = MPI_Wait(&req[0], &st);
        CHECK(MPI_Wait(&req[1], MPI_STATUS_IGNORE) == MPI_SUCCESS);
        break;
    }
    case 26:
    case 27:
    case 28: {
        /* The completion calls the loop above does not use: Testall, Testany, Waitsome. */
        MPI_Status sts[2];
        int flag = 0, left = 2, index, outcount, indices[2];
        sts[0].MPI_ERROR = STATUS_MARK;
        CHECK(MPI_Irecv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &req[0]) == MPI_SUCCESS);
        CHECK(MPI_Isend(s.arg, scount, stype, next, tag, MPI_COMM_WORLD, &req[1]) == MPI_SUCCESS);
        while (variant == 26 && !flag) {
            rc = MPI_Testall(2, req, &flag, sts);
            st = sts[0];
        }
        while (variant == 27 && left > 0) {
            rc = MPI_Testany(2, req, &index, &flag, &sts[0]);
            if (flag && index != MPI_UNDEFINED) {
                if (index == 0)
                    st = sts[0];
                left--;
            }
        }
        while (variant == 28 && left > 0) {
            rc = MPI_Waitsome(2, req, &outcount, indices, sts);
            note_receive(outcount, indices, sts, &st);
            left -= outcount;
        }
        break;
    }
    case 29: {
        /* MPI_Request_get_status reports the receive complete: its bytes must be there at once,
         * before the Wait that frees the request. */
        int flag = 0;
        CHECK(MPI_Irecv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &req[0]) == MPI_SUCCESS);
        CHECK(MPI_Isend(s.arg, scount, stype, next, tag, MPI_COMM_WORLD, &req[1]) == MPI_SUCCESS);
        while (!flag)
            rc = MPI_Request_get_status(req[0], &flag, &st);
        verify_status(what, &r, &ref, &st, rc, prev, tag, desc, true);
        CHECK(MPI_Wait(&req[0], MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(MPI_Wait(&req[1], MPI_STATUS_IGNORE) == MPI_SUCCESS);
        /* And still after the Wait, which only reports the completion. */
        verify(what, &r, &ref, &st, rc, prev, tag, desc);
        goto out;
    }
    case 30: {
        /* Sendrecv_replace whose source is MPI_PROC_NULL: only its send happens, and its buffer
         * keeps its bytes. */
        MPI_Status none;
        unsigned char *after = malloc((size_t)s.span);
        REQUIRE(after != NULL);
        CHECK(MPI_Irecv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &req[0]) == MPI_SUCCESS);
        CHECK(MPI_Sendrecv_replace(s.arg, scount, stype, next, tag, MPI_PROC_NULL, tag,
                                   MPI_COMM_WORLD, &none) == MPI_SUCCESS);
        if (none.MPI_SOURCE != MPI_PROC_NULL)
            FAIL("%s: MPI_SOURCE %d, expected MPI_PROC_NULL", what, none.MPI_SOURCE);
        rc = MPI_Wait(&req[0], &st);
        buf_get(&s.buf, after);
        if (memcmp(after, s.host, (size_t)s.span) != 0)
            FAIL("%s: the buffer changed: %s", what, desc);
        free(after);
        break;
    }
    default: /* 0 and 8 */
        CHECK(MPI_Irecv(r.arg, rcount, type, prev, tag, MPI_COMM_WORLD, &req[0]) == MPI_SUCCESS);
        CHECK(MPI_Isend(s.arg, scount, stype, next, tag, MPI_COMM_WORLD, &req[1]) == MPI_SUCCESS);
        {
            MPI_Status sts[2];
            rc = MPI_Waitall(2, req, sts);
            st = sts[0];
            if (rc == MPI_ERR_IN_STATUS)
                rc = sts[0].MPI_ERROR;
        }
        break;
    }
    if (variant == 14)
        reference_peer(&r, stype, scount, salt, next, prev, tag, &ref);
    verify_status(what, &r, &ref, &st, rc, prev, tag, desc,
                  single_completion(variant) && mpi_leaves_error(variant));
out:
    check_context();
    free(ref.data);
    side_free(&s);
    side_free(&r);
}

/* Three persistent sends of three strided types from one device buffer, started together: one
 * fused launch packs them all (each receive is unpacked by its own launch), and the bytes are
 * the system MPI's. */
static void fused_startall(void)
{
    enum { N = 3, SPAN = 1 << 16 };
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    MPI_Datatype types[N];
    MPI_Request req[2 * N];
    MPI_Status sts[2 * N];
    unsigned char *host = malloc(SPAN), *got = malloc(SPAN), *ref = malloc(SPAN);
    buf_t src = buf_alloc(K_DEVICE, SPAN), dst[N];
    long before;

    REQUIRE(host && got && ref);
    for (int t = 0; t < N; t++) {
        MPI_Type_vector(16 + t, 2 + t, 7 + 2 * t, MPI_INT, &types[t]);
        MPI_Type_commit(&types[t]);
        dst[t] = buf_alloc(K_DEVICE, SPAN);
    }
    for (int i = 0; i < SPAN; i++)
        host[i] = (unsigned char)(i * 3 + rank);
    buf_put(&src, host);
    for (int t = 0; t < N; t++) {
        memset(got, POISON, SPAN);
        buf_put(&dst[t], got);
        CHECK(MPI_Recv_init(dst[t].ptr, 2, types[t], prev, 777 + t, MPI_COMM_WORLD, &req[t]) ==
              MPI_SUCCESS);
        CHECK(MPI_Send_init(src.ptr, 2, types[t], next, 777 + t, MPI_COMM_WORLD, &req[N + t]) ==
              MPI_SUCCESS);
    }
    before = tj_counter("kernel_launches");
    CHECK(MPI_Startall(2 * N, req) == MPI_SUCCESS);
    CHECK(MPI_Waitall(2 * N, req, sts) == MPI_SUCCESS);
    if (tj_counter("kernel_launches") - before != 1 + N)
        FAIL("fused startall: %ld launches for %d sends and %d receives, expected %d",
             tj_counter("kernel_launches") - before, N, N, 1 + N);
    for (int t = 0; t < N; t++) {
        /* prev's pattern, sent and received by the system MPI over a self communicator. */
        MPI_Request r;
        for (int i = 0; i < SPAN; i++)
            host[i] = (unsigned char)(i * 3 + prev);
        memset(ref, POISON, SPAN);
        REQUIRE(PMPI_Irecv(ref, 2, types[t], 0, 5, self_comm, &r) == MPI_SUCCESS);
        REQUIRE(PMPI_Send(host, 2, types[t], 0, 5, self_comm) == MPI_SUCCESS);
        REQUIRE(PMPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        buf_get(&dst[t], got);
        if (memcmp(got, ref, SPAN) != 0)
            FAIL("fused startall: type %d received bytes differ", t);
        MPI_Request_free(&req[t]);
        MPI_Request_free(&req[N + t]);
        MPI_Type_free(&types[t]);
        buf_free(&dst[t]);
    }
    buf_free(&src);
    free(host);
    free(got);
    free(ref);
}

/* Persistent sends whose device buffer the application freed after their init, started together
 * (an erroneous program): the call fails with an MPI error and nothing is sent, in the fused
 * path as one by one; no kernel may run on the freed memory. Every rank does the same, so no
 * receive is needed. */
static void freed_startall(void)
{
    enum { N = 3, SPAN = 1 << 16 };
    int next = (rank + 1) % nranks;
    MPI_Datatype types[N];
    MPI_Request req[N];
    buf_t src = buf_alloc(K_DEVICE, SPAN);
    char *stale = src.ptr;

    for (int t = 0; t < N; t++) {
        MPI_Type_vector(16 + t, 2 + t, 7 + 2 * t, MPI_INT, &types[t]);
        MPI_Type_commit(&types[t]);
        CHECK(MPI_Send_init(src.ptr, 2, types[t], next, 888 + t, MPI_COMM_WORLD, &req[t]) ==
              MPI_SUCCESS);
    }
    buf_free(&src);
    if (MPI_Startall(N, req) == MPI_SUCCESS)
        FAIL("persistent sends of the freed device buffer %p were started", (void *)stale);
    for (int t = 0; t < N; t++) {
        MPI_Request_free(&req[t]);
        MPI_Type_free(&types[t]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* How often the test driver was asked cuPointerGetAttributes; -1 on a real driver. */
static long long pointer_queries(void)
{
    long long (*stats)(const char *) =
        (long long (*)(const char *))(uintptr_t)dlsym(RTLD_DEFAULT, "fakecuda_stats");
    return stats != NULL ? stats("calls:cuPointerGetAttributes") : -1;
}

/* A device send and a device receive ask the driver about the application's buffers only, once
 * each (a persistent receive's buffer is asked again when it completes, for it may have
 * changed since the init; this one's is not); never about typejit's own staging. */
static void query_count(void)
{
    enum { SPAN = 1 << 14 };
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    unsigned char *host = malloc(SPAN);
    buf_t src = buf_alloc(K_DEVICE, SPAN), dst = buf_alloc(K_DEVICE, SPAN);
    MPI_Datatype type;
    long long before;

    REQUIRE(host != NULL);
    memset(host, 7, SPAN);
    buf_put(&src, host);
    buf_put(&dst, host);
    MPI_Type_vector(64, 3, 8, MPI_INT, &type);
    MPI_Type_commit(&type);
    before = pointer_queries();
    CHECK(MPI_Sendrecv(src.ptr, 2, type, next, 901, dst.ptr, 2, type, prev, 901, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (before >= 0 && pointer_queries() - before != 2)
        FAIL("a device send and receive made %lld pointer queries, expected 2",
             pointer_queries() - before);
    MPI_Type_free(&type);
    buf_free(&src);
    buf_free(&dst);
    free(host);
}

/* --partial-stress: each thread receives, ROUNDS times, a message of 2.5 objects of a type of
 * its own (a vector whose shape depends on the thread) into a device buffer, from itself on a
 * tag of its own, so the last object of each is partial; the bytes must be those the system MPI
 * delivers on host memory (computed once). Another thread's partial object, unpacked into this
 * thread's buffer, would show as wrong bytes or a truncation error. */
typedef struct {
    int index;
    long rounds;
} stress_t;

static void *partial_stress(void *arg)
{
    const stress_t *job = arg;
    int index = job->index, blocks = 3 + index, size, len;
    int tag = 900000 + index;
    MPI_Datatype type;
    side_t r;
    reference_t ref;

    CUDRV(cuCtxSetCurrent(main_ctx));
    app_ctx = main_ctx;
    MPI_Type_vector(blocks, 1 + index % 2, 2 + index % 3, MPI_INT, &type);
    MPI_Type_commit(&type);
    MPI_Type_size(type, &size);
    len = size * 2 + size / 2;
    side_init(&r, type, 3, K_DEVICE);
    reference(&r, MPI_BYTE, len, (uint64_t)index * 17, NULL, tag, &ref);
    unsigned char *msg = malloc((size_t)len);
    REQUIRE(msg != NULL);
    for (int i = 0; i < len; i++)
        msg[i] = (unsigned char)(i * 29 + index * 17);
    for (long round = 0; round < job->rounds; round++) {
        MPI_Request req;
        MPI_Status st;
        poison(&r);
        CHECK(MPI_Isend(msg, len, MPI_BYTE, rank, tag, MPI_COMM_WORLD, &req) == MPI_SUCCESS);
        int rc = MPI_Recv(r.arg, 3, type, rank, tag, MPI_COMM_WORLD, &st);
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        verify("partial stress", &r, &ref, &st, rc, rank, tag, "a thread's own vector");
        if (atomic_load(&failures) > 0)
            break;
    }
    free(msg);
    free(ref.data);
    side_free(&r);
    MPI_Type_free(&type);
    return NULL;
}

/* Whether objects of @p type one extent apart never share a byte: receive buffers of the
 * peers of a collective may not overlap. */
static bool objects_apart(MPI_Datatype type)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(type, &lb, &ext);
    MPI_Type_get_true_extent(type, &tlb, &text);
    return ext > 0 && tlb >= lb && tlb + text <= lb + ext;
}

/* MPI_Alltoallv of @p count objects of @p type to every rank, device buffer to device buffer,
 * against PMPI_Alltoallv on host copies. Every rank calls it for the same types. */
static void alltoallv_check(MPI_Datatype type, const char *desc, int count, uint64_t salt)
{
    int counts[64], displs[64], rc;
    side_t s, r;
    unsigned char *ref;

    REQUIRE(nranks <= 64);
    for (int i = 0; i < nranks; i++) {
        counts[i] = count;
        displs[i] = i * count;
    }
    side_init(&s, type, nranks * count, K_DEVICE);
    side_init(&r, type, nranks * count, K_DEVICE);
    ref = malloc((size_t)r.span);
    REQUIRE(ref != NULL);
    fill(&s, salt + (uint64_t)rank);
    poison(&r);
    memset(ref, POISON, (size_t)r.span);
    REQUIRE(PMPI_Alltoallv(s.host - s.lo, counts, displs, type, ref - r.lo, counts, displs, type,
                           MPI_COMM_WORLD) == MPI_SUCCESS);
    rc = MPI_Alltoallv(s.arg, counts, displs, type, r.arg, counts, displs, type, MPI_COMM_WORLD);
    atomic_fetch_add(&checked, 1);
    buf_get(&r.buf, r.host);
    if (rc != MPI_SUCCESS || memcmp(r.host, ref, (size_t)r.span) != 0)
        FAIL("alltoallv: rc %d, %s: %s", rc,
             memcmp(r.host, ref, (size_t)r.span) ? "bytes differ" : "bytes agree", desc);
    check_context();
    free(ref);
    side_free(&s);
    side_free(&r);
}

static void *run(void *arg)
{
    const job_t *job = arg;
    rt_options_t opt = {
        .max_depth = 3, .max_size = 16 << 10, .max_span = 256 << 10, .huge_percent = 0};
    rt_rng_t rng;
    char desc[8192];
    static const kind_t kinds[4] = {K_DEVICE, K_MANAGED, K_PINNED, K_HOST};

    /* Every thread works in device 0's primary context, as a runtime-API program would. */
    CUDRV(cuCtxSetCurrent(main_ctx));
    app_ctx = main_ctx;
    rt_seed(&rng, job->seed);
    for (long t = 0; t < job->types; t++) {
        MPI_Datatype type =
            families > 0 ? rt_family_type(&rng, &opt, families, job->seed, desc, sizeof(desc))
                         : rt_random_type(&rng, &opt, desc, sizeof(desc));
        if (type == MPI_DATATYPE_NULL) {
            t--;
            continue;
        }
        int64_t lo, span, clo, cspan;
        footprint(type, 4, &lo, &span);
        int variant = (int)(t % VARIANTS);
        int count = 1 + (int)rt_range(&rng, 0, 3);
        kind_t sk = kinds[rt_range(&rng, 0, 3)], rk = kinds[rt_range(&rng, 0, 3)];
        uint64_t salt = rt_next(&rng);
        if (span > MAX_SPAN) {
            MPI_Type_free(&type);
            continue;
        }
        /* Most exchanges put both sides on the device. */
        if (t % 3 != 2)
            sk = rk = (t % 2) ? K_DEVICE : K_MANAGED;
        if (host_only) {
            sk = sk == K_PINNED ? K_PINNED : K_HOST;
            rk = rk == K_PINNED ? K_PINNED : K_HOST;
        }
        exchange(type, desc, variant, count, sk, rk, job->tag0 + (int)t, salt);
        footprint(type, nranks * count, &clo, &cspan);
        if (collective && nthreads == 1 && !host_only && cspan <= MAX_SPAN && objects_apart(type))
            alltoallv_check(type, desc, count, salt);
        MPI_Type_free(&type);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    long types = 180, stress_rounds = 0;
    int threads = 1, provided;
    pthread_t th[16];
    job_t jobs[16];
    static char bsend_buf[4 << 20];

    options_read(argc, argv,
                 (const opt_t[]){{"--seed", OPT_U64, &seed},
                                 {"--types", OPT_LONG, &types},
                                 {"--threads", OPT_INT, &threads},
                                 {"--families", OPT_INT, &families},
                                 {"--collective", OPT_FLAG, &collective},
                                 {"--partial-stress", OPT_LONG, &stress_rounds},
                                 {"--host-only", OPT_FLAG, &host_only},
                                 {NULL}});
    MPI_Init_thread(&argc, &argv, threads > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (!mpicheck_every_rank_has_device()) {
        MPI_Finalize();
        return 77;
    }
    REQUIRE(threads == 1 || provided == MPI_THREAD_MULTIPLE);
    CUDRV(cuCtxGetCurrent(&main_ctx));
    nthreads = threads;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_SELF, &self_comm);
    MPI_Comm_set_errhandler(self_comm, MPI_ERRORS_RETURN);
    MPI_Buffer_attach(bsend_buf, sizeof(bsend_buf));

    REQUIRE(threads >= 1 && threads <= 16);
    if (stress_rounds > 0) {
        stress_t stress[16];
        for (int i = 0; i < threads; i++) {
            stress[i] = (stress_t){i, stress_rounds};
            REQUIRE(pthread_create(&th[i], NULL, partial_stress, &stress[i]) == 0);
        }
        for (int i = 0; i < threads; i++)
            pthread_join(th[i], NULL);
        printf("rank %d: %ld partial receives checked, %ld failures\n", rank, atomic_load(&checked),
               atomic_load(&failures));
        CHECK(atomic_load(&failures) == 0);
        CHECK(tj_counter("recvs_gpu") > 0);
        MPI_Comm_free(&self_comm);
        MPI_Finalize();
        CHECK_DONE();
    }
    for (int i = 0; i < threads; i++) {
        jobs[i] = (job_t){.tag0 = i * 100000, .seed = seed + (uint64_t)i, .types = types};
        if (threads == 1)
            run(&jobs[0]);
        else
            REQUIRE(pthread_create(&th[i], NULL, run, &jobs[i]) == 0);
    }
    for (int i = 0; threads > 1 && i < threads; i++)
        pthread_join(th[i], NULL);
    /* Every rank takes part, or none (a rank that uses host buffers only never would). */
    int mine = !host_only && threads == 1, everyone = 0;
    MPI_Allreduce(&mine, &everyone, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (everyone) {
        fused_startall();
        freed_startall();
        query_count();
    }
    void *detached;
    int size;
    MPI_Buffer_detach(&detached, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d: %ld receives checked, sends_gpu=%ld recvs_gpu=%ld kernel_launches=%ld "
           "oneshot=%ld staged=%ld, %ld failures\n",
           rank, atomic_load(&checked), tj_counter("sends_gpu"), tj_counter("recvs_gpu"),
           tj_counter("kernel_launches"), tj_counter("method_oneshot"), tj_counter("method_staged"),
           atomic_load(&failures));
    CHECK(atomic_load(&failures) == 0);
    if (!host_only) {
        CHECK(tj_counter("sends_gpu") > 0);
        CHECK(tj_counter("recvs_gpu") > 0);
        CHECK(tj_counter("kernel_launches") > 0);
    }
    MPI_Comm_free(&self_comm);
    MPI_Finalize();
    CHECK_DONE();
}
