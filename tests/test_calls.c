/* SPDX-License-Identifier: BSD-3-Clause */
/* Every MPI function of docs/device-calls.md on device buffers, through the preloaded library,
 * against the system MPI itself: each call runs on device buffers (MPI_X, typejit's wrapper),
 * then the same call runs through PMPI_X on host copies of every buffer, and the device buffers
 * are compared byte for byte with the host ones over their whole footprint (the bytes no
 * typemap touches included). Three datatypes made of doubles: a strided one (a column of a 16 x 16
 * matrix resized to one element, the type of FFT transposes), a not strided one (an irregular
 * MPI_Type_indexed) and MPI_DOUBLE; counts from 0, MPI_IN_PLACE where the standard allows it,
 * each root.
 *
 *   mpirun -np N test_calls [--only FAMILY] [--cudaaware] [--verbose]
 *
 * Families: p2p, coll (the collectives typejit packs), reduce, pack, rma, file, refuse, mixed.
 * --cudaaware: the system MPI takes device memory (the stand-in of tests/cudaaware_shim.c):
 * check the pass-through answers of the table instead. Exits 77 without a CUDA device. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include "check.h"
#include "counters.h"
#include "cudrv.h"
#include "devbuf.h"
#include "mpicheck.h"
#include "sysmpi.h"
#include "options.h"

static int rank, nranks;
static long failures, checked;
static bool verbose, cudaaware;
static const char *only;

#define FAIL(...) mpicheck_fail(&failures, 30, rank, __VA_ARGS__)

/* ---- the datatypes ------------------------------------------------------------------------- */

/* The first NTYPES are made of doubles (every family uses them); the pack family adds a struct
 * with holes and elements of three sizes, and a vector of shorts; MPI_Reduce_local MPI_INT and
 * MPI_FLOAT. */
enum { T_STRIDED, T_IRREGULAR, T_DOUBLE, NTYPES, T_MIXED = NTYPES, T_SHORTS, T_INT, T_FLOAT, NALL };
static const char *const type_names[NALL] = {"column", "indexed", "double", "struct",
                                             "shorts", "int",     "float"};
static MPI_Datatype types[NALL];
/* The byte offsets of each type's doubles in one object, for the user-defined operation. */
static int64_t elem_off[NTYPES][16];
static int nelem[NTYPES];
static MPI_Aint type_ext[NALL];

static void make_types(void)
{
    MPI_Datatype col;
    int bl[3] = {2, 1, 3}, dl[3] = {0, 3, 7};

    MPI_Type_vector(16, 1, 16, MPI_DOUBLE, &col);
    MPI_Type_create_resized(col, 0, sizeof(double), &types[T_STRIDED]);
    MPI_Type_free(&col);
    MPI_Type_indexed(3, bl, dl, MPI_DOUBLE, &types[T_IRREGULAR]);
    types[T_DOUBLE] = MPI_DOUBLE;
    types[T_INT] = MPI_INT;
    types[T_FLOAT] = MPI_FLOAT;
    {
        /* struct { int; double; char; } with its holes, resized to 24 bytes. */
        int sbl[3] = {1, 1, 1};
        MPI_Aint sd[3] = {0, 8, 16};
        MPI_Datatype st[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, raw;
        MPI_Type_create_struct(3, sbl, sd, st, &raw);
        MPI_Type_create_resized(raw, 0, 24, &types[T_MIXED]);
        MPI_Type_free(&raw);
        MPI_Type_vector(5, 2, 3, MPI_SHORT, &types[T_SHORTS]);
    }
    for (int t = 0; t < NALL; t++)
        if (t != T_DOUBLE && t != T_INT && t != T_FLOAT)
            MPI_Type_commit(&types[t]);
    for (int i = 0; i < 16; i++)
        elem_off[T_STRIDED][i] = 128 * i;
    nelem[T_STRIDED] = 16;
    for (int b = 0, n = 0; b < 3; b++)
        for (int k = 0; k < bl[b]; k++)
            elem_off[T_IRREGULAR][n++] = 8 * (dl[b] + k);
    nelem[T_IRREGULAR] = 6;
    elem_off[T_DOUBLE][0] = 0;
    nelem[T_DOUBLE] = 1;
    for (int t = 0; t < NALL; t++) {
        MPI_Aint lb;
        MPI_Type_get_extent(types[t], &lb, &type_ext[t]);
    }
}

/* A user-defined, non-commutative operation on our types: inout = 0.5 * inout + in, element by
 * element of the typemap. */
static void half_plus(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int t = 0;
    while (t < NTYPES && types[t] != *dt)
        t++;
    REQUIRE(t < NTYPES);
    for (int k = 0; k < *len; k++)
        for (int e = 0; e < nelem[t]; e++) {
            int64_t at = k * type_ext[t] + elem_off[t][e];
            double *a = (double *)((char *)in + at), *b = (double *)((char *)inout + at);
            *b = 0.5 * *b + *a;
        }
}
static MPI_Op user_op;

/* ---- buffers -------------------------------------------------------------------------------- */

/* A buffer on the device (or of another kind) and its host reference: the footprint [lo, hi)
 * relative to the argument, filled with doubles (so that reductions compute on numbers). */
typedef struct {
    buf_t b;
    int64_t lo, hi;
    char *arg;
    unsigned char *host, *ref;
} fbuf_t;

static void footprint(int t, int n, int64_t *lo, int64_t *hi)
{
    MPI_Aint tlb, text;
    int64_t reach = (int64_t)(n > 0 ? n - 1 : 0) * type_ext[t];
    MPI_Type_get_true_extent(types[t], &tlb, &text);
    *lo = tlb;
    *hi = tlb + text + reach;
}

static void fb_fill(fbuf_t *f, uint64_t salt)
{
    size_t len = (size_t)(f->hi - f->lo);
    for (size_t i = 0; i + 8 <= len; i += 8) {
        double v = (double)((i / 8 * 37 + salt * 11) % 1001) * 0.1 + rank * 0.01;
        memcpy(f->host + i, &v, 8);
    }
    for (size_t i = len & ~(size_t)7; i < len; i++)
        f->host[i] = (unsigned char)(i + salt);
    memcpy(f->ref, f->host, len);
    buf_put(&f->b, f->host);
}

/* The footprint of @p n objects of type @p t (at least one object's, so that every buffer is a
 * real allocation), in memory of @p kind. */
static void fb_make(fbuf_t *f, int t, int n, kind_t kind, uint64_t salt)
{
    footprint(t, n > 0 ? n : 1, &f->lo, &f->hi);
    f->b = buf_alloc(kind, (size_t)(f->hi - f->lo));
    f->arg = f->b.ptr - f->lo;
    f->host = malloc((size_t)(f->hi - f->lo));
    f->ref = malloc((size_t)(f->hi - f->lo));
    REQUIRE(f->host && f->ref);
    fb_fill(f, salt);
}

static char *fb_ref(fbuf_t *f)
{
    return (char *)f->ref - f->lo;
}

static void fb_check(fbuf_t *f, const char *what)
{
    checked++;
    buf_get(&f->b, f->host);
    for (int64_t i = 0; i < f->hi - f->lo; i++)
        if (f->host[i] != f->ref[i]) {
            FAIL("%s: byte %lld of the footprint is %d, system MPI %d", what,
                 (long long)(i + f->lo), f->host[i], f->ref[i]);
            return;
        }
}

static void fb_free(fbuf_t *f)
{
    buf_free(&f->b);
    free(f->host);
    free(f->ref);
}

/* Error codes are compared by class: an MPI may make a new code for each error it reports (MPICH
 * does: the class and an index of its message), so two calls that fail alike return different
 * codes there. */
static int error_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS && MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        cls = rc;
    return cls;
}

static void check_rc(const char *what, int rc, int ref_rc)
{
    if (error_class(rc) != error_class(ref_rc))
        FAIL("%s: returned %d (class %d), the system MPI %d (class %d)", what, rc, error_class(rc),
             ref_rc, error_class(ref_rc));
}

/* The reference of a non-blocking call: the system MPI's own non-blocking form (its algorithm
 * may differ from the blocking one's, in the scratch use of an in-place buffer for instance). */
static int ref_wait(int rc, MPI_Request *req)
{
    return rc == MPI_SUCCESS ? PMPI_Wait(req, MPI_STATUS_IGNORE) : rc;
}

/* A collective's call on the device buffers, blocking or not (completed as `how` says), into
 * `rc`, and the system MPI's own call of the same form on the host copies into `ref_rc`: @p _ifn
 * and @p _fn name the non-blocking and blocking forms, @p _dev and @p _ref their arguments in
 * parentheses, without the request. */
#define WITH_REQUEST(...) (__VA_ARGS__, &req)
#define CALL_AND_REF(_ifn, _fn, _dev, _ref)                                                        \
    do {                                                                                           \
        rc = nb ? _ifn WITH_REQUEST _dev : _fn _dev;                                               \
        if (nb && rc == MPI_SUCCESS)                                                               \
            rc = mpicheck_complete(&req, how);                                                     \
        ref_rc = nb ? ref_wait(P##_ifn WITH_REQUEST _ref, &req) : P##_fn _ref;                     \
    } while (0)

static bool want(const char *family)
{
    return only == NULL || strcmp(only, family) == 0;
}

/* ---- point-to-point ------------------------------------------------------------------------- */

enum {
    S_SEND,
    S_BSEND,
    S_SSEND,
    S_RSEND,
    S_ISEND,
    S_IBSEND,
    S_ISSEND,
    S_IRSEND,
    S_SEND_INIT,
    S_BSEND_INIT,
    S_SSEND_INIT,
    S_RSEND_INIT,
    NSEND
};
static const char *const send_names[NSEND] = {
    "send",   "bsend",  "ssend",     "rsend",      "isend",      "ibsend",
    "issend", "irsend", "send_init", "bsend_init", "ssend_init", "rsend_init"};
enum { V_RECV, V_IRECV, V_RECV_INIT, V_MRECV, V_IMRECV, NRECVS };
static const char *const recv_names[NRECVS] = {"recv", "irecv", "recv_init", "mrecv", "imrecv"};
/* Each send mode with a receive form: the ready modes with a receive posted first, the blocking
 * receive forms with a send that does not wait for them. */
static const int pairs[NSEND][2] = {
    {S_SEND, V_IRECV},       {S_BSEND, V_RECV_INIT},   {S_SSEND, V_IRECV},
    {S_RSEND, V_IRECV},      {S_ISEND, V_RECV},        {S_IBSEND, V_MRECV},
    {S_ISSEND, V_IMRECV},    {S_IRSEND, V_RECV_INIT},  {S_SEND_INIT, V_RECV},
    {S_BSEND_INIT, V_MRECV}, {S_SSEND_INIT, V_IMRECV}, {S_RSEND_INIT, V_IRECV}};

/* Send to the next rank with mode @p sm, receive from the previous one with form @p rf: on
 * device buffers through typejit (@p dev), else through PMPI on the host copies. */
static int p2p_pass(bool dev, int sm, int rf, char *sb, char *rb, int count, MPI_Datatype ty,
                    int tag)
{
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks, rc = MPI_SUCCESS, r;
    MPI_Request sreq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
    MPI_Message msg;
    bool posted = rf == V_IRECV || rf == V_RECV_INIT;
    MPI_Comm comm = MPI_COMM_WORLD;
#define P(_x) (dev ? MPI_##_x : PMPI_##_x)

    if (rf == V_IRECV)
        rc = P(Irecv)(rb, count, ty, prev, tag, comm, &rreq);
    else if (rf == V_RECV_INIT &&
             (rc = P(Recv_init)(rb, count, ty, prev, tag, comm, &rreq)) == MPI_SUCCESS)
        rc = P(Start)(&rreq);
    /* The ready modes need the receive posted everywhere first. */
    PMPI_Barrier(comm);
    switch (sm) {
    case S_SEND:
        r = P(Send)(sb, count, ty, next, tag, comm);
        break;
    case S_BSEND:
        r = P(Bsend)(sb, count, ty, next, tag, comm);
        break;
    case S_SSEND:
        r = P(Ssend)(sb, count, ty, next, tag, comm);
        break;
    case S_RSEND:
        r = P(Rsend)(sb, count, ty, next, tag, comm);
        break;
    case S_ISEND:
        r = P(Isend)(sb, count, ty, next, tag, comm, &sreq);
        break;
    case S_IBSEND:
        r = P(Ibsend)(sb, count, ty, next, tag, comm, &sreq);
        break;
    case S_ISSEND:
        r = P(Issend)(sb, count, ty, next, tag, comm, &sreq);
        break;
    case S_IRSEND:
        r = P(Irsend)(sb, count, ty, next, tag, comm, &sreq);
        break;
    default: {
        r = (sm == S_SEND_INIT    ? P(Send_init)
             : sm == S_BSEND_INIT ? P(Bsend_init)
             : sm == S_SSEND_INIT ? P(Ssend_init)
                                  : P(Rsend_init))(sb, count, ty, next, tag, comm, &sreq);
        if (r == MPI_SUCCESS)
            r = P(Start)(&sreq);
        break;
    }
    }
    rc = rc != MPI_SUCCESS ? rc : r;
    if (!posted) {
        if (rf == V_RECV) {
            r = P(Recv)(rb, count, ty, prev, tag, comm, MPI_STATUS_IGNORE);
        } else if ((r = P(Mprobe)(prev, tag, comm, &msg, MPI_STATUS_IGNORE)) == MPI_SUCCESS) {
            if (rf == V_MRECV)
                r = P(Mrecv)(rb, count, ty, &msg, MPI_STATUS_IGNORE);
            else if ((r = P(Imrecv)(rb, count, ty, &msg, &rreq)) == MPI_SUCCESS)
                r = P(Wait)(&rreq, MPI_STATUS_IGNORE);
        }
        rc = rc != MPI_SUCCESS ? rc : r;
    } else {
        r = P(Wait)(&rreq, MPI_STATUS_IGNORE);
        rc = rc != MPI_SUCCESS ? rc : r;
    }
    if (sreq != MPI_REQUEST_NULL) {
        r = P(Wait)(&sreq, MPI_STATUS_IGNORE);
        rc = rc != MPI_SUCCESS ? rc : r;
    }
    if (rf == V_RECV_INIT)
        P(Request_free)(&rreq);
    if (sm >= S_SEND_INIT)
        P(Request_free)(&sreq);
#undef P
    return rc;
}

static void p2p_family(void)
{
    int bsize = 1 << 20, rc, ref_rc;
    char *battach = malloc((size_t)bsize);
    char what[160];

    REQUIRE(battach != NULL);
    MPI_Buffer_attach(battach, bsize);
    for (int t = 0; t < NTYPES; t++)
        for (int count = 0; count <= 2; count += 2) {
            for (int k = 0; k < NSEND; k++) {
                fbuf_t sb, rb;
                int sm = pairs[k][0], rf = pairs[k][1];
                snprintf(what, sizeof(what), "%s to %s, %s, count %d", send_names[sm],
                         recv_names[rf], type_names[t], count);
                if (verbose)
                    fprintf(stderr, "rank %d: %s\n", rank, what);
                fb_make(&sb, t, count, K_DEVICE, 71 + (uint64_t)k);
                fb_make(&rb, t, count, K_DEVICE, 81 + (uint64_t)k);
                rc = p2p_pass(true, sm, rf, sb.arg, rb.arg, count, types[t], 100 + k);
                ref_rc =
                    p2p_pass(false, sm, rf, fb_ref(&sb), fb_ref(&rb), count, types[t], 200 + k);
                check_rc(what, rc, ref_rc);
                fb_check(&rb, what);
                fb_check(&sb, what);
                fb_free(&sb);
                fb_free(&rb);
            }
            /* Sendrecv and Sendrecv_replace around the ring. */
            for (int replace = 0; replace < 2; replace++) {
                fbuf_t sb, rb;
                int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
                snprintf(what, sizeof(what), "sendrecv%s, %s, count %d", replace ? "_replace" : "",
                         type_names[t], count);
                fb_make(&sb, t, count, K_DEVICE, 91);
                fb_make(&rb, t, count, K_DEVICE, 92);
                if (replace) {
                    rc = MPI_Sendrecv_replace(sb.arg, count, types[t], next, 7, prev, 7,
                                              MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    ref_rc = PMPI_Sendrecv_replace(fb_ref(&sb), count, types[t], next, 7, prev, 7,
                                                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    rc = MPI_Sendrecv(sb.arg, count, types[t], next, 8, rb.arg, count, types[t],
                                      prev, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    ref_rc =
                        PMPI_Sendrecv(fb_ref(&sb), count, types[t], next, 8, fb_ref(&rb), count,
                                      types[t], prev, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
                check_rc(what, rc, ref_rc);
                fb_check(&sb, what);
                fb_check(&rb, what);
                fb_free(&sb);
                fb_free(&rb);
            }
        }
    MPI_Buffer_detach(&battach, &bsize);
    free(battach);
}

/* ---- collectives typejit packs -------------------------------------------------------------- */

static MPI_Comm line; /* a 1-D Cartesian line, not periodic: MPI_PROC_NULL at both ends */

enum { C_ALLTOALL, C_NBR_ALLTOALL, C_NBR_ALLGATHER, C_NBR_ALLGATHERV, NCOLL };
static const char *const coll_names[NCOLL] = {"alltoall", "neighbor_alltoall", "neighbor_allgather",
                                              "neighbor_allgatherv"};

/* One collective: @p kind with @p count objects of type @p t per peer, blocking or not, in
 * place or not. */
static void coll_one(int kind, int t, int count, bool nb, bool inplace, int how)
{
    MPI_Datatype ty = types[t];
    MPI_Comm comm = kind == C_ALLTOALL ? MPI_COMM_WORLD : line;
    int peers = kind == C_ALLTOALL ? nranks : 2, rc, ref_rc;
    int rcounts[2], displs[2];
    fbuf_t s, r;
    MPI_Request req;
    char what[160];
    long launches = tj_counter("kernel_launches"), staged = tj_counter("gpu_fallbacks");

    snprintf(what, sizeof(what), "%s%s%s, %s, count %d", nb ? "i" : "", coll_names[kind],
             inplace ? " in place" : "", type_names[t], count);
    if (verbose)
        fprintf(stderr, "rank %d: %s\n", rank, what);
    /* Allgatherv: each in-slot gets `count` objects, the second one after a gap of one. */
    rcounts[0] = rcounts[1] = count;
    displs[0] = 0;
    displs[1] = count + 1;
    fb_make(&s, t, kind == C_NBR_ALLGATHER || kind == C_NBR_ALLGATHERV ? count : peers * count,
            K_DEVICE, 1 + (uint64_t)kind);
    fb_make(&r, t, kind == C_NBR_ALLGATHERV ? 2 * count + 1 : peers * count, K_DEVICE,
            7 + (uint64_t)kind);
    const void *sa = inplace ? MPI_IN_PLACE : s.arg, *sref = inplace ? MPI_IN_PLACE : fb_ref(&s);
    switch (kind) {
    case C_ALLTOALL:
        CALL_AND_REF(MPI_Ialltoall, MPI_Alltoall, (sa, count, ty, r.arg, count, ty, comm),
                     (sref, count, ty, fb_ref(&r), count, ty, comm));
        break;
    case C_NBR_ALLTOALL:
        CALL_AND_REF(MPI_Ineighbor_alltoall, MPI_Neighbor_alltoall,
                     (sa, count, ty, r.arg, count, ty, comm),
                     (sref, count, ty, fb_ref(&r), count, ty, comm));
        break;
    case C_NBR_ALLGATHER:
        CALL_AND_REF(MPI_Ineighbor_allgather, MPI_Neighbor_allgather,
                     (sa, count, ty, r.arg, count, ty, comm),
                     (sref, count, ty, fb_ref(&r), count, ty, comm));
        break;
    default:
        CALL_AND_REF(MPI_Ineighbor_allgatherv, MPI_Neighbor_allgatherv,
                     (sa, count, ty, r.arg, rcounts, displs, ty, comm),
                     (sref, count, ty, fb_ref(&r), rcounts, displs, ty, comm));
        break;
    }
    check_rc(what, rc, ref_rc);
    fb_check(&r, what);
    /* A strided type is packed by one kernel launch per side, and nothing is staged (the
     * issue's check for MPI_Alltoall); with a CUDA-aware MPI too. */
    if (kind == C_ALLTOALL && t == T_STRIDED) {
        long want_launches = count > 0 ? 2 : 0;
        if (tj_counter("kernel_launches") - launches != want_launches)
            FAIL("%s: %ld kernel launches, expected %ld (one per packed side)", what,
                 tj_counter("kernel_launches") - launches, want_launches);
        if (tj_counter("gpu_fallbacks") != staged)
            FAIL("%s: staged through host memory (gpu_fallbacks %ld -> %ld)", what, staged,
                 tj_counter("gpu_fallbacks"));
    }
    fb_free(&s);
    fb_free(&r);
}

static void coll_family(void)
{
    int how = 0;
    for (int kind = 0; kind < NCOLL; kind++)
        for (int t = 0; t < NTYPES; t++)
            for (int count = 0; count <= 2; count++)
                for (int nb = 0; nb < 2; nb++) {
                    coll_one(kind, t, count, nb, false, how++);
                    /* In place (Alltoall only). Open MPI 4.1's non-blocking in-place all-to-all
                     * forms return at once on zero counts without taking their tag, and the
                     * next non-blocking collective hangs: not with count 0 there. */
                    if (kind == C_ALLTOALL && !(nb && count == 0))
                        coll_one(kind, t, count, nb, true, how++);
                }
}

/* The collectives typejit packed first, each called once per type, count, root and
 * in-place choice (tests/test_coll.c checks them at length on random types). */
enum {
    K_BCAST,
    K_GATHER,
    K_GATHERV,
    K_SCATTER,
    K_SCATTERV,
    K_ALLGATHER,
    K_ALLGATHERV,
    K_ALLTOALLV,
    K_ALLTOALLW,
    K_NBR_ALLTOALLV,
    K_NBR_ALLTOALLW,
    NKINDS
};
static const char *const kinds_names[NKINDS] = {"bcast",
                                                "gather",
                                                "gatherv",
                                                "scatter",
                                                "scatterv",
                                                "allgather",
                                                "allgatherv",
                                                "alltoallv",
                                                "alltoallw",
                                                "neighbor_alltoallv",
                                                "neighbor_alltoallw"};

static void coll2_one(int kind, int t, int count, bool nb, bool inplace, int root, int how)
{
    MPI_Datatype ty = types[t], tys[4] = {ty, ty, ty, ty};
    bool nbr = kind == K_NBR_ALLTOALLV || kind == K_NBR_ALLTOALLW;
    MPI_Comm comm = nbr ? line : MPI_COMM_WORLD;
    int peers = nbr ? 2 : nranks, me_root = rank == root, rc = MPI_SUCCESS, ref_rc = MPI_SUCCESS;
    int *cnt = calloc((size_t)peers, sizeof(int)), *dis = calloc((size_t)peers, sizeof(int));
    int *bdis = calloc((size_t)peers, sizeof(int));
    MPI_Aint *adis = calloc((size_t)peers, sizeof(MPI_Aint));
    int nsend = count, nrecv = count;
    fbuf_t s, r;
    MPI_Request req;
    char what[160];

    REQUIRE(cnt && dis && bdis && adis);
    /* Slice i of the v and w forms: `count` objects after a gap of one object per slice. */
    for (int i = 0; i < peers; i++) {
        cnt[i] = count;
        dis[i] = i * (count + 1);
        bdis[i] = (int)(dis[i] * type_ext[t]);
        adis[i] = (MPI_Aint)bdis[i];
    }
    switch (kind) {
    case K_GATHER:
    case K_ALLGATHER:
        nrecv = peers * count;
        break;
    case K_SCATTER:
        nsend = peers * count;
        break;
    case K_GATHERV:
    case K_ALLGATHERV:
    case K_ALLTOALLV:
    case K_ALLTOALLW:
    case K_NBR_ALLTOALLV:
    case K_NBR_ALLTOALLW:
        nrecv = peers * (count + 1);
        nsend = kind == K_GATHERV || kind == K_ALLGATHERV ? count : peers * (count + 1);
        break;
    case K_SCATTERV:
        nsend = peers * (count + 1);
        break;
    }
    /* In place: the root's side of the rooted forms only. */
    if ((kind == K_GATHER || kind == K_GATHERV || kind == K_SCATTER || kind == K_SCATTERV) &&
        !me_root)
        inplace = false;
    snprintf(what, sizeof(what), "%s%s%s, %s, count %d, root %d", nb ? "i" : "", kinds_names[kind],
             inplace ? " in place" : "", type_names[t], count, root);
    if (verbose)
        fprintf(stderr, "rank %d: %s\n", rank, what);
    fb_make(&s, t, nsend, K_DEVICE, 51 + (uint64_t)kind);
    fb_make(&r, t, nrecv, K_DEVICE, 61 + (uint64_t)kind + (uint64_t)rank);
    for (int pass = 0; pass < 2; pass++) {
        bool dev = pass == 0;
        char *sb = dev ? s.arg : fb_ref(&s), *rb = dev ? r.arg : fb_ref(&r);
        const void *sa = inplace && kind != K_SCATTER && kind != K_SCATTERV ? MPI_IN_PLACE : sb;
        void *ra = inplace && (kind == K_SCATTER || kind == K_SCATTERV) ? MPI_IN_PLACE : rb;
        int got;
#define CALL(_x, _ix, ...)                                                                         \
    (nb ? (dev ? MPI_##_ix : PMPI_##_ix)(__VA_ARGS__, &req)                                        \
        : (dev ? MPI_##_x : PMPI_##_x)(__VA_ARGS__))
        switch (kind) {
        case K_BCAST:
            got = CALL(Bcast, Ibcast, rb, count, ty, root, comm);
            break;
        case K_GATHER:
            got = CALL(Gather, Igather, sa, count, ty, rb, count, ty, root, comm);
            break;
        case K_GATHERV:
            got = CALL(Gatherv, Igatherv, sa, count, ty, rb, cnt, dis, ty, root, comm);
            break;
        case K_SCATTER:
            got = CALL(Scatter, Iscatter, sb, count, ty, ra, count, ty, root, comm);
            break;
        case K_SCATTERV:
            got = CALL(Scatterv, Iscatterv, sb, cnt, dis, ty, ra, count, ty, root, comm);
            break;
        case K_ALLGATHER:
            got = CALL(Allgather, Iallgather, sa, count, ty, rb, count, ty, comm);
            break;
        case K_ALLGATHERV:
            got = CALL(Allgatherv, Iallgatherv, sa, count, ty, rb, cnt, dis, ty, comm);
            break;
        case K_ALLTOALLV:
            got = CALL(Alltoallv, Ialltoallv, sa, cnt, dis, ty, rb, cnt, dis, ty, comm);
            break;
        case K_ALLTOALLW:
            got = CALL(Alltoallw, Ialltoallw, sa, cnt, bdis, tys, rb, cnt, bdis, tys, comm);
            break;
        case K_NBR_ALLTOALLV:
            got = CALL(Neighbor_alltoallv, Ineighbor_alltoallv, sa, cnt, dis, ty, rb, cnt, dis, ty,
                       comm);
            break;
        default:
            got = CALL(Neighbor_alltoallw, Ineighbor_alltoallw, sa, cnt, adis, tys, rb, cnt, adis,
                       tys, comm);
            break;
        }
#undef CALL
        if (nb && got == MPI_SUCCESS)
            got = dev ? mpicheck_complete(&req, how) : PMPI_Wait(&req, MPI_STATUS_IGNORE);
        *(dev ? &rc : &ref_rc) = got;
    }
    check_rc(what, rc, ref_rc);
    fb_check(&r, what);
    fb_check(&s, what);
    fb_free(&s);
    fb_free(&r);
    free(cnt);
    free(dis);
    free(bdis);
    free(adis);
}

static void coll2_family(void)
{
    int how = 0;
    for (int kind = 0; kind < NKINDS; kind++)
        for (int t = 0; t < NTYPES; t++)
            for (int count = 0; count <= 2; count += 2)
                for (int nb = 0; nb < 2; nb++)
                    for (int k = 0; k < 2; k++) {
                        int root = k == 0 ? 0 : nranks - 1;
                        bool rooted = kind <= K_SCATTERV;
                        bool may =
                            kind != K_BCAST && kind != K_NBR_ALLTOALLV && kind != K_NBR_ALLTOALLW;
                        if (!rooted && k == 1)
                            continue;
                        coll2_one(kind, t, count, nb, false, root, how++);
                        /* Open MPI 4.1.4's non-blocking in-place all-to-all forms return early
                         * on zero counts and the next non-blocking collective hangs. */
                        if (may &&
                            !(nb && count == 0 && (kind == K_ALLTOALLV || kind == K_ALLTOALLW)))
                            coll2_one(kind, t, count, nb, true, root, how++);
                    }
}

/* ---- reductions ----------------------------------------------------------------------------- */

enum { R_REDUCE, R_ALLREDUCE, R_RSCATTER, R_RSCATTER_BLOCK, R_SCAN, R_EXSCAN, R_LOCAL, NRED };
static const char *const red_names[NRED] = {
    "reduce", "allreduce", "reduce_scatter", "reduce_scatter_block",
    "scan",   "exscan",    "reduce_local"};

/* One reduction of @p count elements of type @p t (per rank for the scatter forms). */
static void red_one(int kind, int t, int count, MPI_Op op, bool nb, bool inplace, int root, int how)
{
    MPI_Datatype ty = types[t];
    MPI_Comm comm = MPI_COMM_WORLD;
    int *rcounts = malloc((size_t)nranks * sizeof(int)), total = 0, mine, rc, ref_rc;
    fbuf_t s, r;
    MPI_Request req;
    char what[160];

    REQUIRE(rcounts != NULL);
    for (int i = 0; i < nranks; i++) {
        rcounts[i] = kind == R_RSCATTER ? (count + i) % 3 : count;
        total += rcounts[i];
    }
    mine = rcounts[rank];
    /* MPI_Reduce takes MPI_IN_PLACE at the root only. */
    if (kind == R_REDUCE && rank != root)
        inplace = false;
    snprintf(what, sizeof(what), "%s%s%s, %s, count %d, %s, root %d", nb ? "i" : "",
             red_names[kind], inplace ? " in place" : "", type_names[t], count,
             op == MPI_SUM ? "MPI_SUM" : "user op", root);
    if (verbose)
        fprintf(stderr, "rank %d: %s\n", rank, what);
    /* The input vector: all elements of the scatter forms; in place, it is the receive buffer. */
    int nin = kind == R_RSCATTER || kind == R_RSCATTER_BLOCK ? total : count;
    int nout = inplace ? nin : kind == R_RSCATTER || kind == R_RSCATTER_BLOCK ? mine : count;
    fb_make(&s, t, nin, K_DEVICE, 3 + (uint64_t)kind);
    fb_make(&r, t, nout, K_DEVICE, 5 + (uint64_t)kind);
    const void *sa = inplace ? MPI_IN_PLACE : s.arg, *sref = inplace ? MPI_IN_PLACE : fb_ref(&s);
    req = MPI_REQUEST_NULL;
    switch (kind) {
    case R_REDUCE:
        CALL_AND_REF(MPI_Ireduce, MPI_Reduce, (sa, r.arg, count, ty, op, root, comm),
                     (sref, fb_ref(&r), count, ty, op, root, comm));
        break;
    case R_ALLREDUCE:
        CALL_AND_REF(MPI_Iallreduce, MPI_Allreduce, (sa, r.arg, count, ty, op, comm),
                     (sref, fb_ref(&r), count, ty, op, comm));
        break;
    case R_RSCATTER:
        CALL_AND_REF(MPI_Ireduce_scatter, MPI_Reduce_scatter, (sa, r.arg, rcounts, ty, op, comm),
                     (sref, fb_ref(&r), rcounts, ty, op, comm));
        break;
    case R_RSCATTER_BLOCK:
        CALL_AND_REF(MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block,
                     (sa, r.arg, count, ty, op, comm), (sref, fb_ref(&r), count, ty, op, comm));
        break;
    case R_SCAN:
        CALL_AND_REF(MPI_Iscan, MPI_Scan, (sa, r.arg, count, ty, op, comm),
                     (sref, fb_ref(&r), count, ty, op, comm));
        break;
    case R_EXSCAN:
        CALL_AND_REF(MPI_Iexscan, MPI_Exscan, (sa, r.arg, count, ty, op, comm),
                     (sref, fb_ref(&r), count, ty, op, comm));
        break;
    default:
        rc = MPI_Reduce_local(s.arg, r.arg, count, ty, op);
        ref_rc = PMPI_Reduce_local(fb_ref(&s), fb_ref(&r), count, ty, op);
        break;
    }
    check_rc(what, rc, ref_rc);
    fb_check(&r, what);
    fb_check(&s, what); /* the send buffer is read, never written */
    fb_free(&s);
    fb_free(&r);
    free(rcounts);
}

/* MPI_Reduce_local with every predefined operation on the types of one element type (the
 * column, MPI_DOUBLE, MPI_FLOAT, MPI_INT, the vector of shorts) and on two others: a strided
 * type with an operation valid for its elements, which the system MPI accepts (Open MPI 4.1
 * refuses predefined operations on every derived type), runs one kernel (the operation and
 * element type baked in); anything else is staged or refused as the system MPI does; either
 * way the bytes are the system MPI's. */
static void local_family(void)
{
    static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
                                 MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    static const char *const names[] = {"MPI_SUM", "MPI_PROD", "MPI_MAX",  "MPI_MIN", "MPI_LAND",
                                        "MPI_LOR", "MPI_LXOR", "MPI_BAND", "MPI_BOR", "MPI_BXOR"};
    static const int ts[] = {T_STRIDED, T_DOUBLE, T_FLOAT, T_INT, T_SHORTS, T_IRREGULAR, T_MIXED};
    long kernels = 0;

    for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
        for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
            for (int count = 0; count <= 3; count++) {
                int t = ts[i], rc, ref_rc;
                bool floating = t != T_SHORTS && t != T_INT, valid = !floating || o < 4;
                bool kernel = count > 0 && valid && t != T_IRREGULAR && t != T_MIXED;
                /* MPICH 4.0 takes a logical operation on floating elements past its argument
                 * check and then aborts on an assertion in the operation (docs/mpis.md). */
                if (floating && (ops[o] == MPI_LAND || ops[o] == MPI_LOR || ops[o] == MPI_LXOR) &&
                    count > 0 && sysmpi_version_has("MPICH Version: 4.0"))
                    continue;
                long launches = tj_counter("kernel_launches"), staged = tj_counter("calls_staged");
                char what[128];
                fbuf_t in, io;
                snprintf(what, sizeof(what), "reduce_local %s, %s, count %d", names[o],
                         type_names[t], count);
                if (verbose)
                    fprintf(stderr, "rank %d: %s\n", rank, what);
                fb_make(&in, t, count, K_DEVICE, 101 + o);
                fb_make(&io, t, count, K_DEVICE, 111 + o);
                rc = MPI_Reduce_local(in.arg, io.arg, count, types[t], ops[o]);
                ref_rc = PMPI_Reduce_local(fb_ref(&in), fb_ref(&io), count, types[t], ops[o]);
                kernel = kernel && ref_rc == MPI_SUCCESS;
                check_rc(what, rc, ref_rc);
                fb_check(&io, what);
                fb_check(&in, what);
                fb_free(&in);
                fb_free(&io);
                if (kernel) {
                    kernels++;
                    if (tj_counter("kernel_launches") - launches != 1 ||
                        tj_counter("calls_staged") != staged)
                        FAIL("%s: not one kernel launch (%ld) without staging", what,
                             tj_counter("kernel_launches") - launches);
                }
            }
    checked++;
    if (kernels == 0)
        FAIL("reduce_local: no call for the kernel");
}

static void reduce_family(void)
{
    MPI_Op ops[2] = {MPI_SUM, user_op};
    int how = 0;
    long staged = tj_counter("calls_staged");

    for (int kind = 0; kind < NRED; kind++)
        for (int t = 0; t < NTYPES; t++)
            for (int count = 0; count <= 3; count += 1 + (count == 1))
                for (int o = 0; o < 2; o++)
                    for (int nb = 0; nb < (kind == R_LOCAL ? 1 : 2); nb++)
                        for (int in = 0; in < (kind == R_LOCAL ? 1 : 2); in++) {
                            int roots = kind == R_REDUCE ? 2 : 1;
                            /* The MPICH family computes MPI_Reduce_scatter_block with a
                             * non-commutative operation on the column (extent one element)
                             * wrongly, with other bytes on each call (docs/mpis.md). */
                            if (kind == R_RSCATTER_BLOCK && o == 1 && t == T_STRIDED &&
                                sysmpi_is_mpich_family())
                                continue;
                            for (int k = 0; k < roots; k++) {
                                int root = k == 0 ? 0 : nranks - 1;
                                red_one(kind, t, count, ops[o], nb, in, root, how++);
                            }
                        }
    /* Staged with an MPI that is not CUDA-aware; handed to a CUDA-aware one as they are. */
    if (!cudaaware && tj_counter("calls_staged") == staged)
        FAIL("reductions: none was staged by typejit");
    if (cudaaware && tj_counter("calls_staged") != staged)
        FAIL("reductions: staged by typejit with a CUDA-aware MPI");
}

/* ---- pack and unpack ------------------------------------------------------------------------- */

/* One MPI_Pack and MPI_Unpack (or their external32 forms) of @p count objects of type @p t
 * between a typed buffer of kind @p tk and a packed buffer of kind @p pk, from byte @p pos0 of
 * the packed buffer, which is one byte short with @p small. */
static void pack_one(int t, int count, kind_t tk, kind_t pk, bool external, int pos0, bool small)
{
    MPI_Datatype ty = types[t];
    MPI_Aint need = 0, xsize, xpos, xref;
    int size = 0, pos, ref_pos, rc, ref_rc;
    fbuf_t tb;
    buf_t pb;
    unsigned char *phost, *pref;
    char what[192];

    if (external)
        PMPI_Pack_external_size("external32", count, ty, &need);
    else
        PMPI_Pack_size(count, ty, MPI_COMM_WORLD, &size), need = size;
    xsize = pos0 + need - (small && need > 0 ? 1 : 0);
    snprintf(what, sizeof(what), "%s %s, count %d, typed %s, packed %s, position %d%s",
             external ? "pack_external" : "pack", type_names[t], count, kind_names[tk],
             kind_names[pk], pos0, small ? ", one byte short" : "");
    if (verbose)
        fprintf(stderr, "rank %d: %s\n", rank, what);
    fb_make(&tb, t, count, tk, 31 + (uint64_t)t);
    pb = buf_alloc(pk, (size_t)xsize + 1);
    phost = malloc((size_t)xsize + 1);
    pref = malloc((size_t)xsize + 1);
    REQUIRE(phost && pref);
    for (MPI_Aint i = 0; i <= xsize; i++)
        phost[i] = pref[i] = (unsigned char)(i * 13 + 5);
    buf_put(&pb, phost);

    /* A strided type of one element type between device buffers, the packed position aligned
     * for the element: one kernel with the byte swap baked in for external32, no staging. */
    static const int esize[NALL] = {8, 8, 8, 1, 2, 4, 4}; /* the elements, aligned for */
    bool kernel = external && tk == K_DEVICE && pk == K_DEVICE && !small && count > 0 &&
                  t != T_IRREGULAR && t != T_MIXED && pos0 % esize[t] == 0;
    long launches = tj_counter("kernel_launches"), staged = tj_counter("calls_staged");
    /* The MPICH family packs into a buffer too small what fits (external32: the whole call,
     * past the buffer's end), without an error, and unpacks from one in ways of its own
     * (docs/mpis.md); typejit refuses such a call on device memory with MPI_ERR_TRUNCATE, as Open
     * MPI does, writing nothing: the reference there. */
    bool refuse_short = small && sysmpi_is_mpich_family();

    /* Pack. */
    if (external) {
        xpos = xref = pos0;
        rc = MPI_Pack_external("external32", tb.arg, count, ty, pb.ptr, xsize, &xpos);
        ref_rc = refuse_short
                     ? MPI_ERR_TRUNCATE
                     : PMPI_Pack_external("external32", fb_ref(&tb), count, ty, pref, xsize, &xref);
        pos = (int)xpos, ref_pos = (int)xref;
    } else {
        pos = ref_pos = pos0;
        rc = MPI_Pack(tb.arg, count, ty, pb.ptr, (int)xsize, &pos, MPI_COMM_WORLD);
        ref_rc = refuse_short ? MPI_ERR_TRUNCATE
                              : PMPI_Pack(fb_ref(&tb), count, ty, pref, (int)xsize, &ref_pos,
                                          MPI_COMM_WORLD);
    }
    check_rc(what, rc, ref_rc);
    checked++;
    if (rc == MPI_SUCCESS && pos != ref_pos)
        FAIL("%s: position %d, the system MPI's %d", what, pos, ref_pos);
    buf_get(&pb, phost);
    if (memcmp(phost, pref, (size_t)xsize + 1) != 0)
        FAIL("%s: the packed bytes differ from the system MPI's", what);
    fb_check(&tb, what);
    if (kernel &&
        (tj_counter("kernel_launches") - launches != 1 || tj_counter("calls_staged") != staged))
        FAIL("%s: not one kernel launch (%ld) without staging", what,
             tj_counter("kernel_launches") - launches);
    launches = tj_counter("kernel_launches");
    staged = tj_counter("calls_staged");

    /* Unpack the same bytes into a fresh typed buffer. */
    fb_free(&tb);
    fb_make(&tb, t, count, tk, 41 + (uint64_t)t);
    if (external) {
        xpos = xref = pos0;
        rc = MPI_Unpack_external("external32", pb.ptr, xsize, &xpos, tb.arg, count, ty);
        ref_rc = refuse_short ? MPI_ERR_TRUNCATE
                              : PMPI_Unpack_external("external32", pref, xsize, &xref, fb_ref(&tb),
                                                     count, ty);
        pos = (int)xpos, ref_pos = (int)xref;
    } else {
        pos = ref_pos = pos0;
        rc = MPI_Unpack(pb.ptr, (int)xsize, &pos, tb.arg, count, ty, MPI_COMM_WORLD);
        ref_rc = refuse_short ? MPI_ERR_TRUNCATE
                              : PMPI_Unpack(pref, (int)xsize, &ref_pos, fb_ref(&tb), count, ty,
                                            MPI_COMM_WORLD);
    }
    snprintf(what, sizeof(what), "%s %s, count %d, typed %s, packed %s, position %d%s",
             external ? "unpack_external" : "unpack", type_names[t], count, kind_names[tk],
             kind_names[pk], pos0, small ? ", one byte short" : "");
    check_rc(what, rc, ref_rc);
    checked++;
    if (rc == MPI_SUCCESS && pos != ref_pos)
        FAIL("%s: position %d, the system MPI's %d", what, pos, ref_pos);
    fb_check(&tb, what);
    if (kernel &&
        (tj_counter("kernel_launches") - launches != 1 || tj_counter("calls_staged") != staged))
        FAIL("%s: not one kernel launch (%ld) without staging", what,
             tj_counter("kernel_launches") - launches);
    fb_free(&tb);
    buf_free(&pb);
    free(phost);
    free(pref);
}

static void pack_family(void)
{
    static const kind_t sides[3][2] = {
        {K_DEVICE, K_DEVICE}, {K_DEVICE, K_HOST}, {K_HOST, K_DEVICE}};
    long staged = tj_counter("calls_staged");

    for (int external = 0; external < 2; external++)
        for (int t = 0; t < NALL; t++)
            for (int count = 0; count <= 3; count++)
                for (int k = 0; k < 3; k++) {
                    /* The MPICH family dies in MPI_Pack_external_size of a struct of two element
                     * types (SIGILL; docs/mpis.md). */
                    if (external && t == T_MIXED && sysmpi_is_mpich_family())
                        continue;
                    pack_one(t, count, sides[k][0], sides[k][1], external, 0, false);
                    pack_one(t, count, sides[k][0], sides[k][1], external, 3 + count, false);
                    if (count > 0)
                        pack_one(t, count, sides[k][0], sides[k][1], external, 5, true);
                }
    if (tj_counter("calls_staged") == staged)
        FAIL("external32: no call was staged by typejit");
}

/* ---- one-sided communication ----------------------------------------------------------------- */

#define WIN_BYTES 4096

enum { O_PUT, O_GET, O_ACC, O_GET_ACC, O_FETCH_OP, O_CAS, NORIGIN };
static const char *const origin_names[NORIGIN] = {
    "put", "get", "accumulate", "get_accumulate", "fetch_and_op", "compare_and_swap"};
/* How the epoch is made: fence, a lock of the target, lock_all with a flush, or the R form of
 * the call completed by its request (inside lock_all). */
enum { E_FENCE, E_LOCK, E_FLUSH, E_REQUEST, NEPOCH };
static const char *const epoch_names[NEPOCH] = {"fence", "lock", "flush", "request"};

/* Both windows (typejit's and the reference) hold the same bytes before each operation. */
static void fill_window(unsigned char *mem, uint64_t salt)
{
    for (int i = 0; i < WIN_BYTES; i += 8) {
        double v = (double)((i / 8 * 13 + salt * 5 + (uint64_t)rank * 3) % 701) * 0.25;
        memcpy(mem + i, &v, 8);
    }
}

/* One origin-side call of kind @p kind with @p count objects of type @p t (the atomics: one
 * element), towards the next rank, in an epoch of kind @p epoch. */
static void rma_one(MPI_Win win, unsigned char *wmem, MPI_Win ref, unsigned char *rmem, int kind,
                    int t, int count, int epoch)
{
    bool atomic = kind == O_FETCH_OP || kind == O_CAS;
    MPI_Datatype ty = atomic ? (kind == O_CAS ? MPI_INT64_T : MPI_DOUBLE) : types[t];
    int tt = atomic ? T_DOUBLE : t, n = atomic ? 1 : count;
    int target = (rank + 1) % nranks, rc = MPI_SUCCESS, ref_rc = MPI_SUCCESS;
    MPI_Request req = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
    bool r = epoch == E_REQUEST &&
             (kind == O_PUT || kind == O_GET || kind == O_ACC || kind == O_GET_ACC);
    fbuf_t o, c, res;
    char what[160];

    snprintf(what, sizeof(what), "%s%s (%s), %s, count %d", r ? "r" : "", origin_names[kind],
             epoch_names[epoch], atomic ? (kind == O_CAS ? "int64" : "double") : type_names[t], n);
    if (verbose)
        fprintf(stderr, "rank %d: %s\n", rank, what);
    fill_window(wmem, (uint64_t)(kind * 7 + t * 3 + count));
    memcpy(rmem, wmem, WIN_BYTES);
    fb_make(&o, tt, n, K_DEVICE, 11 + (uint64_t)kind);
    fb_make(&c, tt, n, K_DEVICE, 12 + (uint64_t)kind);
    fb_make(&res, tt, n, K_DEVICE, 13 + (uint64_t)kind);
    unsigned char *o_early = malloc((size_t)(o.hi - o.lo)),
                  *res_early = malloc((size_t)(res.hi - res.lo));
    REQUIRE(o_early && res_early);
    /* Every window holds its bytes before any process accesses it. */
    MPI_Barrier(MPI_COMM_WORLD);
    /* The same epoch on both windows, one after the other; every rank is origin and target. */
    for (int pass = 0; pass < 2; pass++) {
        bool dev = pass == 0;
        MPI_Win w = dev ? win : ref;
        char *oa = dev ? o.arg : fb_ref(&o), *ca = dev ? c.arg : fb_ref(&c);
        char *ra = dev ? res.arg : fb_ref(&res);
        MPI_Request *rq = dev ? &req : &rreq;
        int got;

        if (epoch == E_FENCE)
            (dev ? MPI_Win_fence : PMPI_Win_fence)(0, w);
        else if (epoch == E_LOCK)
            (dev ? MPI_Win_lock : PMPI_Win_lock)(MPI_LOCK_SHARED, target, 0, w);
        else
            (dev ? MPI_Win_lock_all : PMPI_Win_lock_all)(0, w);
        switch (kind) {
        case O_PUT:
            got = r ? (dev ? MPI_Rput : PMPI_Rput)(oa, n, ty, target, 0, n, ty, w, rq)
                    : (dev ? MPI_Put : PMPI_Put)(oa, n, ty, target, 0, n, ty, w);
            break;
        case O_GET:
            got = r ? (dev ? MPI_Rget : PMPI_Rget)(oa, n, ty, target, 0, n, ty, w, rq)
                    : (dev ? MPI_Get : PMPI_Get)(oa, n, ty, target, 0, n, ty, w);
            break;
        case O_ACC:
            got = r ? (dev ? MPI_Raccumulate : PMPI_Raccumulate)(oa, n, ty, target, 0, n, ty,
                                                                 MPI_SUM, w, rq)
                    : (dev ? MPI_Accumulate : PMPI_Accumulate)(oa, n, ty, target, 0, n, ty, MPI_SUM,
                                                               w);
            break;
        case O_GET_ACC:
            got = r ? (dev ? MPI_Rget_accumulate : PMPI_Rget_accumulate)(
                          oa, n, ty, ra, n, ty, target, 0, n, ty, MPI_SUM, w, rq)
                    : (dev ? MPI_Get_accumulate : PMPI_Get_accumulate)(oa, n, ty, ra, n, ty, target,
                                                                       0, n, ty, MPI_SUM, w);
            break;
        case O_FETCH_OP:
            got = (dev ? MPI_Fetch_and_op : PMPI_Fetch_and_op)(oa, ra, ty, target, 0, MPI_SUM, w);
            break;
        default:
            got =
                (dev ? MPI_Compare_and_swap : PMPI_Compare_and_swap)(oa, ca, ra, ty, target, 0, w);
            break;
        }
        if (dev)
            rc = got;
        else
            ref_rc = got;
        /* A request completes the operation at the origin: the bytes are due at its Wait. */
        if (r && got == MPI_SUCCESS)
            (dev ? MPI_Wait : PMPI_Wait)(rq, MPI_STATUS_IGNORE);
        if (epoch == E_FLUSH)
            (dev ? MPI_Win_flush : PMPI_Win_flush)(target, w);
        if (dev && (epoch == E_FLUSH || r)) {
            /* Complete at the origin before the epoch ends: the bytes are due now. */
            buf_get(&o.b, o_early);
            buf_get(&res.b, res_early);
        }
        if (epoch == E_FENCE)
            (dev ? MPI_Win_fence : PMPI_Win_fence)(0, w);
        else if (epoch == E_LOCK)
            (dev ? MPI_Win_unlock : PMPI_Win_unlock)(target, w);
        else
            (dev ? MPI_Win_unlock_all : PMPI_Win_unlock_all)(w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check_rc(what, rc, ref_rc);
    if (epoch == E_FLUSH || r) {
        checked++;
        if (memcmp(o_early, o.ref, (size_t)(o.hi - o.lo)) != 0 ||
            memcmp(res_early, res.ref, (size_t)(res.hi - res.lo)) != 0)
            FAIL("%s: the origin's bytes were not there when the operation completed", what);
    }
    free(o_early);
    free(res_early);
    fb_check(&o, what);
    fb_check(&c, what);
    fb_check(&res, what);
    checked++;
    if (memcmp(wmem, rmem, WIN_BYTES) != 0)
        FAIL("%s: the target window differs from the system MPI's", what);
    fb_free(&o);
    fb_free(&c);
    fb_free(&res);
}

static void rma_family(void)
{
    unsigned char *wmem = malloc(WIN_BYTES), *rmem = malloc(WIN_BYTES);
    MPI_Win win, ref;
    long staged = tj_counter("calls_staged");

    REQUIRE(wmem && rmem);
    MPI_Win_create(wmem, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    PMPI_Win_create(rmem, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &ref);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int kind = 0; kind < NORIGIN; kind++)
        for (int epoch = 0; epoch < NEPOCH; epoch++)
            for (int t = 0; t < NTYPES; t++)
                for (int count = 0; count <= 2; count++) {
                    bool atomic = kind == O_FETCH_OP || kind == O_CAS;
                    if (atomic && (t > 0 || count > 0))
                        continue; /* one element of a predefined type */
                    rma_one(win, wmem, ref, rmem, kind, t, count, epoch);
                }
    MPI_Win_free(&win);
    PMPI_Win_free(&ref);
    if (!cudaaware && tj_counter("calls_staged") == staged)
        FAIL("one-sided calls: none was staged by typejit");

    free(wmem);
    free(rmem);
}

/* ---- file I/O -------------------------------------------------------------------------------- */

/* Each rank's block of the file: its explicit-offset and individual-pointer accesses start 8
 * bytes into it. */
#define FBLOCK 4096

/* How a form positions its access. */
enum { P_INDIVIDUAL, P_AT, P_SHARED, P_ORDERED };
/* How it completes. */
enum { M_BLOCKING, M_NONBLOCKING, M_SPLIT };

typedef struct {
    const char *name;
    int pos, mode;
    bool all; /* collective */
} fform_t;

static const fform_t fforms[] = {
    {"", P_INDIVIDUAL, M_BLOCKING, false},
    {"_all", P_INDIVIDUAL, M_BLOCKING, true},
    {"_at", P_AT, M_BLOCKING, false},
    {"_at_all", P_AT, M_BLOCKING, true},
    {"_shared", P_SHARED, M_BLOCKING, false},
    {"_ordered", P_ORDERED, M_BLOCKING, true},
    {"i", P_INDIVIDUAL, M_NONBLOCKING, false},
    {"i_all", P_INDIVIDUAL, M_NONBLOCKING, true},
    {"i_at", P_AT, M_NONBLOCKING, false},
    {"i_at_all", P_AT, M_NONBLOCKING, true},
    {"i_shared", P_SHARED, M_NONBLOCKING, false},
    {"_all_begin/end", P_INDIVIDUAL, M_SPLIT, true},
    {"_at_all_begin/end", P_AT, M_SPLIT, true},
    {"_ordered_begin/end", P_ORDERED, M_SPLIT, true},
};
#define NFFORMS ((int)(sizeof(fforms) / sizeof(fforms[0])))

/* The call of form @p f on one file (@p dev: typejit's wrapper, else PMPI_). */
static int file_call(const fform_t *f, bool write, bool dev, MPI_File fh, MPI_Offset off, void *buf,
                     int count, MPI_Datatype ty, MPI_Status *st, int how)
{
    MPI_Request req;
    int rc = MPI_SUCCESS;

#define PICK(_x) (dev ? MPI_File_##_x : PMPI_File_##_x)
    if (f->pos == P_INDIVIDUAL)
        PICK(seek)(fh, off, MPI_SEEK_SET);
    if (f->mode == M_BLOCKING) {
        switch (f->pos) {
        case P_INDIVIDUAL:
            rc = write ? (f->all ? PICK(write_all) : PICK(write))(fh, buf, count, ty, st)
                       : (f->all ? PICK(read_all) : PICK(read))(fh, buf, count, ty, st);
            break;
        case P_AT:
            rc = write ? (f->all ? PICK(write_at_all) : PICK(write_at))(fh, off, buf, count, ty, st)
                       : (f->all ? PICK(read_at_all) : PICK(read_at))(fh, off, buf, count, ty, st);
            break;
        case P_SHARED:
            rc = write ? PICK(write_shared)(fh, buf, count, ty, st)
                       : PICK(read_shared)(fh, buf, count, ty, st);
            break;
        default:
            rc = write ? PICK(write_ordered)(fh, buf, count, ty, st)
                       : PICK(read_ordered)(fh, buf, count, ty, st);
            break;
        }
        return rc;
    }
    if (f->mode == M_NONBLOCKING) {
        switch (f->pos) {
        case P_INDIVIDUAL:
            rc = write ? (f->all ? PICK(iwrite_all) : PICK(iwrite))(fh, buf, count, ty, &req)
                       : (f->all ? PICK(iread_all) : PICK(iread))(fh, buf, count, ty, &req);
            break;
        case P_AT:
            rc = write ? (f->all ? PICK(iwrite_at_all) : PICK(iwrite_at))(fh, off, buf, count, ty,
                                                                          &req)
                       : (f->all ? PICK(iread_at_all) : PICK(iread_at))(fh, off, buf, count, ty,
                                                                        &req);
            break;
        default:
            rc = write ? PICK(iwrite_shared)(fh, buf, count, ty, &req)
                       : PICK(iread_shared)(fh, buf, count, ty, &req);
            break;
        }
        if (rc == MPI_SUCCESS)
            rc = dev ? mpicheck_complete(&req, how) : PMPI_Wait(&req, MPI_STATUS_IGNORE);
        return rc;
    }
    switch (f->pos) {
    case P_INDIVIDUAL:
        rc = write ? PICK(write_all_begin)(fh, buf, count, ty)
                   : PICK(read_all_begin)(fh, buf, count, ty);
        if (rc == MPI_SUCCESS)
            rc = write ? PICK(write_all_end)(fh, buf, st) : PICK(read_all_end)(fh, buf, st);
        break;
    case P_AT:
        rc = write ? PICK(write_at_all_begin)(fh, off, buf, count, ty)
                   : PICK(read_at_all_begin)(fh, off, buf, count, ty);
        if (rc == MPI_SUCCESS)
            rc = write ? PICK(write_at_all_end)(fh, buf, st) : PICK(read_at_all_end)(fh, buf, st);
        break;
    default:
        rc = write ? PICK(write_ordered_begin)(fh, buf, count, ty)
                   : PICK(read_ordered_begin)(fh, buf, count, ty);
        if (rc == MPI_SUCCESS)
            rc = write ? PICK(write_ordered_end)(fh, buf, st) : PICK(read_ordered_end)(fh, buf, st);
        break;
    }
#undef PICK
    return rc;
}

/* Both files hold the same bytes: each rank writes its block with @p salt. */
static void file_reset(MPI_File fd, MPI_File fr, uint64_t salt)
{
    unsigned char *block = malloc(FBLOCK);
    REQUIRE(block != NULL);
    for (int i = 0; i < FBLOCK; i++)
        block[i] = (unsigned char)(i * 7 + salt + (uint64_t)rank * 31);
    PMPI_File_write_at(fd, (MPI_Offset)rank * FBLOCK, block, FBLOCK, MPI_BYTE, MPI_STATUS_IGNORE);
    PMPI_File_write_at(fr, (MPI_Offset)rank * FBLOCK, block, FBLOCK, MPI_BYTE, MPI_STATUS_IGNORE);
    PMPI_File_sync(fd);
    PMPI_File_sync(fr);
    MPI_Barrier(MPI_COMM_WORLD);
    PMPI_File_seek_shared(fd, 0, MPI_SEEK_SET);
    PMPI_File_seek_shared(fr, 0, MPI_SEEK_SET);
    free(block);
}

static void file_one(MPI_File fd, MPI_File fr, const fform_t *f, bool write, int t, int count,
                     bool past_end, int how)
{
    MPI_Datatype ty = types[t];
    MPI_Offset off = past_end ? (MPI_Offset)nranks * FBLOCK - 40 : (MPI_Offset)rank * FBLOCK + 8;
    MPI_Status st, rst;
    int rc = MPI_SUCCESS, ref_rc = MPI_SUCCESS;
    fbuf_t b;
    char what[160];

    snprintf(what, sizeof(what), "%s%s%s, %s, count %d%s", f->mode == M_NONBLOCKING ? "i" : "",
             write ? "write" : "read", f->name + (f->mode == M_NONBLOCKING), type_names[t], count,
             past_end ? ", past the end of the file" : "");
    if (verbose)
        fprintf(stderr, "rank %d: file %s\n", rank, what);
    file_reset(fd, fr, (uint64_t)(t * 5 + count + write));
    fb_make(&b, t, count, K_DEVICE, 21 + (uint64_t)write);
    for (int pass = 0; pass < 2; pass++) {
        bool dev = pass == 0;
        MPI_File fh = dev ? fd : fr;
        void *buf = dev ? b.arg : fb_ref(&b);
        MPI_Status *sp = dev ? &st : &rst;
        if (f->pos == P_SHARED) {
            /* Shared file pointer: one rank after the other, so both files see one order. */
            for (int r = 0; r < nranks; r++) {
                if (r == rank) {
                    int got = file_call(f, write, dev, fh, off, buf, count, ty, sp, how);
                    *(dev ? &rc : &ref_rc) = got;
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
        } else {
            *(dev ? &rc : &ref_rc) = file_call(f, write, dev, fh, off, buf, count, ty, sp, how);
        }
    }
    check_rc(what, rc, ref_rc);
    if (f->mode != M_NONBLOCKING && rc == MPI_SUCCESS) {
        int n = -1, rn = -2;
        MPI_Get_count(&st, ty, &n);
        MPI_Get_count(&rst, ty, &rn);
        if (n != rn)
            FAIL("%s: the status counts %d, the system MPI's %d", what, n, rn);
    }
    fb_check(&b, what);
    if (write) {
        /* The whole files, as every rank wrote them. */
        size_t len = (size_t)nranks * FBLOCK;
        unsigned char *x = malloc(len), *y = malloc(len);
        REQUIRE(x && y);
        PMPI_File_sync(fd);
        PMPI_File_sync(fr);
        MPI_Barrier(MPI_COMM_WORLD);
        PMPI_File_read_at(fd, 0, x, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
        PMPI_File_read_at(fr, 0, y, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
        checked++;
        if (memcmp(x, y, len) != 0)
            FAIL("%s: the file differs from the system MPI's", what);
        free(x);
        free(y);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fb_free(&b);
}

static void file_family(void)
{
    char paths[2][256];
    MPI_File fd, fr;
    long staged = tj_counter("calls_staged");
    int how = 0;

    if (rank == 0) {
        const char *dir = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
        snprintf(paths[0], sizeof(paths[0]), "%s/test_calls.%d.typejit", dir, (int)getpid());
        snprintf(paths[1], sizeof(paths[1]), "%s/test_calls.%d.system", dir, (int)getpid());
    }
    MPI_Bcast(paths, sizeof(paths), MPI_CHAR, 0, MPI_COMM_WORLD);
    REQUIRE(MPI_File_open(MPI_COMM_WORLD, paths[0], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                          &fd) == MPI_SUCCESS);
    REQUIRE(PMPI_File_open(MPI_COMM_WORLD, paths[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fr) == MPI_SUCCESS);
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < NFFORMS; k++)
            for (int t = 0; t < NTYPES; t++)
                for (int count = 0; count <= 3; count += 1 + (count == 1)) {
                    file_one(fd, fr, &fforms[k], w, t, count, false, how++);
                    /* A read that reaches past the end of the file stores fewer objects.
                     * (Open MPI 4.1.4's non-blocking and split collective reads past the end never
                     * complete, with or without typejit: blocking forms only. The MPICH family
                     * reports every object read and stores bytes of its own past the end of the
                     * file, other ones each call: docs/mpis.md.) */
                    if (!w && fforms[k].pos == P_AT && fforms[k].mode == M_BLOCKING && count == 3 &&
                        sysmpi_is_open_mpi())
                        file_one(fd, fr, &fforms[k], w, t, count, true, how++);
                }
    MPI_File_close(&fd);
    PMPI_File_close(&fr);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_File_delete(paths[0], MPI_INFO_NULL);
        MPI_File_delete(paths[1], MPI_INFO_NULL);
    }
    if (!cudaaware && tj_counter("calls_staged") == staged)
        FAIL("file I/O: no call was staged by typejit");
}

/* ---- refused calls -------------------------------------------------------------------------- */

/* The calls an MPI that is not CUDA-aware cannot take on device memory and that cannot be staged:
 * each returns MPI_ERR_BUFFER (the error line is the test's, see calls.cmake). */
static void refuse_family(void)
{
    buf_t dev = buf_alloc(K_DEVICE, WIN_BYTES);
    MPI_Win dyn;
    long refused = tj_counter("calls_refused");
    int rc, nrefused = 0;

    /* A dynamic window's origins address attached memory by its device addresses. */
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
    rc = MPI_Win_attach(dyn, dev.ptr, WIN_BYTES);
    check_rc("MPI_Win_attach of device memory", rc, MPI_ERR_BUFFER);
    MPI_Win_free(&dyn);
    nrefused++;

    /* The buffered-send buffer is written by the MPI's host code at every Bsend. */
    rc = MPI_Buffer_attach(dev.ptr, WIN_BYTES);
    check_rc("MPI_Buffer_attach of device memory", rc, MPI_ERR_BUFFER);
    nrefused++;

/* Persistent collectives: Open MPI 4.1's extension (MPIX_), else MPI 4.0's (Open MPI 5.0 has them
 * while its mpi.h says MPI 3.1). */
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PERSISTENT(_name) MPIX_##_name
#define PERSISTENT_PREFIX "MPIX_"
#elif MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define PERSISTENT(_name) MPI_##_name
#define PERSISTENT_PREFIX "MPI_"
#endif
#ifdef PERSISTENT
    /* Persistent collectives: refused on device memory; host buffers still work. */
    {
        MPI_Request req = MPI_REQUEST_NULL;
        double in[3] = {1, 2, 3 + rank}, out[3] = {0, 0, 0};
        rc = PERSISTENT(Allreduce_init)(dev.ptr, (char *)dev.ptr + 64, 3, MPI_DOUBLE, MPI_SUM,
                                        MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        check_rc(PERSISTENT_PREFIX "Allreduce_init on device memory", rc, MPI_ERR_BUFFER);
        rc = PERSISTENT(Alltoall_init)(dev.ptr, 1, types[T_STRIDED], (char *)dev.ptr + 2048, 1,
                                       types[T_STRIDED], MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        check_rc(PERSISTENT_PREFIX "Alltoall_init on device memory", rc, MPI_ERR_BUFFER);
        nrefused += 2;
        rc = PERSISTENT(Allreduce_init)(in, out, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                        MPI_INFO_NULL, &req);
        check_rc(PERSISTENT_PREFIX "Allreduce_init on host memory", rc, MPI_SUCCESS);
        for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++) {
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            checked++;
            if (out[0] != nranks || out[2] != 3.0 * nranks + nranks * (nranks - 1) / 2.0)
                FAIL(PERSISTENT_PREFIX "Allreduce_init on host memory: wrong sums %g %g", out[0],
                     out[2]);
        }
        if (rc == MPI_SUCCESS)
            MPI_Request_free(&req);
    }
#endif

    /* MPI_T values: refused on device memory, read as usual on the host. */
    {
        int provided, ncvar = 0, found = -1;
        MPI_T_cvar_handle handle;
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        MPI_T_cvar_get_num(&ncvar);
        for (int i = 0; i < ncvar && found < 0; i++) {
            char name[256], desc[256];
            int nl = sizeof(name), dl = sizeof(desc), verb, bind, scope;
            MPI_Datatype dt;
            MPI_T_enum en;
            if (MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) ==
                    MPI_SUCCESS &&
                dt == MPI_INT && bind == MPI_T_BIND_NO_OBJECT)
                found = i;
        }
        if (found >= 0 && MPI_T_cvar_handle_alloc(found, NULL, &handle, &ncvar) == MPI_SUCCESS) {
            int value = -1;
            rc = MPI_T_cvar_read(handle, dev.ptr);
            check_rc("MPI_T_cvar_read into device memory", rc, MPI_T_ERR_INVALID);
            rc = MPI_T_cvar_write(handle, dev.ptr);
            check_rc("MPI_T_cvar_write from device memory", rc, MPI_T_ERR_INVALID);
            rc = MPI_T_cvar_read(handle, &value);
            check_rc("MPI_T_cvar_read into host memory", rc, MPI_SUCCESS);
            nrefused += 2;
            MPI_T_cvar_handle_free(&handle);
        } else {
            FAIL("MPI_T: no integer control variable to read");
        }
        MPI_T_finalize();
    }

    checked++;
    if (tj_counter("calls_refused") - refused != nrefused)
        FAIL("refused calls: calls_refused grew by %ld, not %d",
             tj_counter("calls_refused") - refused, nrefused);
    buf_free(&dev);
}

/* ---- types whose bytes lie in several allocations ------------------------------------------ */

/* A struct of two blocks of four doubles at the absolute addresses @p a and @p b, used over
 * MPI_BOTTOM. */
/* Four doubles at @p a and four at @p b, at their addresses (over MPI_BOTTOM), or relative to
 * @p base when it is not NULL. */
static MPI_Datatype two_blocks_from(const void *base, const void *a, const void *b)
{
    int bl[2] = {4, 4};
    MPI_Aint d[2], at = 0;
    MPI_Datatype t[2] = {MPI_DOUBLE, MPI_DOUBLE}, ty;
    MPI_Get_address(a, &d[0]);
    MPI_Get_address(b, &d[1]);
    if (base != NULL) {
        MPI_Get_address(base, &at);
        d[0] = MPI_Aint_diff(d[0], at);
        d[1] = MPI_Aint_diff(d[1], at);
    }
    MPI_Type_create_struct(2, bl, d, t, &ty);
    MPI_Type_commit(&ty);
    return ty;
}

static MPI_Datatype two_blocks(const void *a, const void *b)
{
    return two_blocks_from(NULL, a, b);
}

/* Every call with a typed buffer, on a type whose blocks lie in @p a and @p b (memory of kinds
 * @p ka, @p kb): each returns MPI_ERR_BUFFER when they are apart, never crashes. */
static void split_calls(const char *what, void *a, void *b)
{
    MPI_Datatype ty = two_blocks(a, b);
    char packed[256], name[160];
    double sums[8];
    int pos = 0, rc;

    snprintf(name, sizeof(name), "MPI_Pack of %s", what);
    rc = MPI_Pack(MPI_BOTTOM, 1, ty, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
    check_rc(name, rc, MPI_ERR_BUFFER);
    pos = 0;
    snprintf(name, sizeof(name), "MPI_Unpack into %s", what);
    rc = MPI_Unpack(packed, sizeof(packed), &pos, MPI_BOTTOM, 1, ty, MPI_COMM_WORLD);
    check_rc(name, rc, MPI_ERR_BUFFER);
    snprintf(name, sizeof(name), "MPI_Sendrecv of %s", what);
    rc = MPI_Sendrecv(MPI_BOTTOM, 1, ty, rank, 5, packed, 64, MPI_DOUBLE, rank, 5, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    check_rc(name, rc, MPI_ERR_BUFFER);
    snprintf(name, sizeof(name), "MPI_Sendrecv into %s", what);
    memset(packed, 0, sizeof(packed));
    rc = MPI_Sendrecv(packed, 8, MPI_DOUBLE, rank, 6, MPI_BOTTOM, 1, ty, rank, 6, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    check_rc(name, rc, MPI_ERR_BUFFER);
    snprintf(name, sizeof(name), "MPI_Allgather of %s", what);
    rc = MPI_Allgather(MPI_BOTTOM, 1, ty, sums, 0, MPI_DOUBLE, MPI_COMM_WORLD);
    check_rc(name, rc, MPI_ERR_BUFFER);
    snprintf(name, sizeof(name), "MPI_Allreduce of %s", what);
    rc = MPI_Allreduce(MPI_BOTTOM, sums, 1, ty, MPI_SUM, MPI_COMM_WORLD);
    check_rc(name, rc, MPI_ERR_BUFFER);
    snprintf(name, sizeof(name), "MPI_Reduce_local into %s", what);
    rc = MPI_Reduce_local(sums, MPI_BOTTOM, 1, ty, MPI_SUM);
    check_rc(name, rc, MPI_ERR_BUFFER);
    checked += 7;
    MPI_Type_free(&ty);
}

/* The same calls where the blocks lie together (both in host memory, both in one device
 * allocation): exact, against the system MPI on a host copy. */
static void together_calls(const char *what, buf_t *buf, size_t second)
{
    double host[64], ref[64];
    char packed[128], rpacked[128], name[160];
    /* MPICH 4.0 refuses MPI_BOTTOM as the buffer of MPI_Pack and MPI_Unpack (MPI_ERR_ARG;
     * docs/mpis.md), which typejit packs exactly on the device: the reference there is the same
     * layout relative to its first block. */
    bool relative = on_device(buf->kind) && sysmpi_version_has("MPICH Version: 4.0");
    void *rbase = relative ? (void *)ref : MPI_BOTTOM;
    MPI_Datatype ty = two_blocks(buf->ptr, buf->ptr + second);
    MPI_Datatype rty = two_blocks_from(relative ? ref : NULL, ref, (char *)ref + second);
    int pos = 0, rpos = 0, rc, ref_rc;

    for (int i = 0; i < 64; i++)
        host[i] = ref[i] = i * 0.5 + rank;
    buf_put(buf, host);
    snprintf(name, sizeof(name), "MPI_Pack of %s", what);
    rc = MPI_Pack(MPI_BOTTOM, 1, ty, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
    ref_rc = PMPI_Pack(rbase, 1, rty, rpacked, sizeof(rpacked), &rpos, MPI_COMM_WORLD);
    check_rc(name, rc, ref_rc);
    checked++;
    if (pos != rpos || memcmp(packed, rpacked, (size_t)rpos) != 0)
        FAIL("%s: the packed bytes differ from the system MPI's", name);
    for (int i = 0; i < 64; i++)
        ((double *)packed)[i % 8] = 100 + i, ((double *)rpacked)[i % 8] = 100 + i;
    pos = rpos = 0;
    snprintf(name, sizeof(name), "MPI_Unpack into %s", what);
    rc = MPI_Unpack(packed, sizeof(packed), &pos, MPI_BOTTOM, 1, ty, MPI_COMM_WORLD);
    ref_rc = PMPI_Unpack(rpacked, sizeof(rpacked), &rpos, rbase, 1, rty, MPI_COMM_WORLD);
    check_rc(name, rc, ref_rc);
    buf_get(buf, host);
    checked++;
    if (memcmp(host, ref, sizeof(host)) != 0)
        FAIL("%s: the buffer differs from the system MPI's", name);
    MPI_Type_free(&ty);
    MPI_Type_free(&rty);
}

static void mixed_family(void)
{
    buf_t h1 = buf_alloc(K_HOST, 512), h2 = buf_alloc(K_HOST, 512);
    buf_t d1 = buf_alloc(K_DEVICE, 512), d2 = buf_alloc(K_DEVICE, 512);
    buf_t m1 = buf_alloc(K_MANAGED, 512), one = buf_alloc(K_DEVICE, 512);

    split_calls("host then device memory", h1.ptr, d1.ptr);
    split_calls("device then host memory", d1.ptr, h1.ptr);
    split_calls("two device allocations", d1.ptr, d2.ptr);
    split_calls("managed then device memory", m1.ptr, d1.ptr);
    together_calls("two host allocations", &h1, 256);
    together_calls("one device allocation", &one, 256);
    {
        /* Two host allocations as such, not one buffer: over MPI_BOTTOM, each with its bytes. */
        double a[8], b[8], ra[8], rb[8];
        char p1[128], p2[128];
        int pos = 0, rpos = 0;
        for (int i = 0; i < 8; i++)
            a[i] = ra[i] = i, b[i] = rb[i] = 10 + i;
        MPI_Datatype ty = two_blocks(a, b), rty = two_blocks(ra, rb);
        int rc = MPI_Pack(MPI_BOTTOM, 1, ty, p1, sizeof(p1), &pos, MPI_COMM_WORLD);
        int ref_rc = PMPI_Pack(MPI_BOTTOM, 1, rty, p2, sizeof(p2), &rpos, MPI_COMM_WORLD);
        check_rc("MPI_Pack of two stack arrays", rc, ref_rc);
        checked++;
        if (pos != rpos || memcmp(p1, p2, (size_t)pos) != 0)
            FAIL("MPI_Pack of two stack arrays: bytes differ");
        MPI_Type_free(&ty);
        MPI_Type_free(&rty);
    }
    buf_free(&h1);
    buf_free(&h2);
    buf_free(&d1);
    buf_free(&d2);
    buf_free(&m1);
    buf_free(&one);
}

/* ---- main ----------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    options_read(argc, argv,
                 (const opt_t[]){{"--only", OPT_TEXT, &only},
                                 {"--cudaaware", OPT_FLAG, &cudaaware},
                                 {"--verbose", OPT_FLAG, &verbose},
                                 {NULL}});
    if (!mpicheck_start(&argc, &argv, &rank, &nranks))
        return 77;
    int dims[1] = {nranks}, periods[1] = {0};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line);
    MPI_Comm_set_errhandler(line, MPI_ERRORS_RETURN);
    make_types();
    MPI_Op_create(half_plus, 0, &user_op);

    if (want("p2p"))
        p2p_family();
    if (want("coll")) {
        coll_family();
        coll2_family();
    }
    if (want("reduce")) {
        reduce_family();
        local_family();
    }
    if (want("pack"))
        pack_family();
    if (want("rma") && !cudaaware)
        rma_family();
    if (want("file") && !cudaaware)
        file_family();
    /* Refusals print their error line: only when asked for (calls.cmake checks the lines). */
    if (only != NULL && strcmp(only, "refuse") == 0 && !cudaaware)
        refuse_family();
    if (only != NULL && strcmp(only, "mixed") == 0)
        mixed_family();

    printf("rank %d: %ld results checked, calls_staged=%ld calls_refused=%ld kernel_launches=%ld, "
           "%ld failures\n",
           rank, checked, tj_counter("calls_staged"), tj_counter("calls_refused"),
           tj_counter("kernel_launches"), failures);
    CHECK(mpicheck_job_failures(failures) == 0);
    CHECK(checked > 0);
    MPI_Op_free(&user_op);
    for (int t = 0; t < NALL; t++)
        if (t != T_DOUBLE && t != T_INT && t != T_FLOAT)
            MPI_Type_free(&types[t]);
    MPI_Comm_free(&line);
    MPI_Finalize();
    CHECK_DONE();
}
