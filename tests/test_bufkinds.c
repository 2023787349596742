/* SPDX-License-Identifier: BSD-3-Clause */
/* Every allocation kind a program brings (tests/devbuf.h: cuMemAlloc, stream-ordered pools of
 * device 0, of device 1 and of the host, VMM mappings of device memory and of host memory with and
 * without the CPU's access, managed memory plain and with advice and prefetch, page-locked memory
 * of each flag, registered memory, IPC-opened memory and IPC-imported pool memory, memory of
 * device 1 while device 0 is current, pageable memory) through MPI_Pack and
 * MPI_Unpack, MPI_Send/MPI_Recv, MPI_Isend/MPI_Irecv and MPI_Alltoall, through the preloaded
 * library, against the system MPI's own calls on host copies, byte for byte in poisoned buffers.
 * Where a kernel applies (the typed buffer is device-like and the other side reachable from its
 * device) each call must have launched kernels and staged nothing (the counters kernel_launches
 * and gpu_fallbacks, read before and after each call); a call between two host buffers must
 * have been the system MPI's (no launch); a call between two devices' buffers is staged through
 * host memory and must be exact all the same.
 *
 *   mpirun -np 2 test_bufkinds [--kinds a,b,...] [--all]
 *   test_bufkinds --faults query|pinned|devstage [--kinds a,b,...]
 *
 * --all: every kind must be available (the emu test; otherwise kinds this driver cannot make
 * are left out with a line saying why). --faults, on one rank, with FAKECUDA_FAIL failing the
 * pointer query (query), typejit's page-locked allocations (pinned) or every cuMemAlloc
 * (devstage: typejit's device staging; the kinds given must not use cuMemAlloc, and the packed
 * side of MPI_Pack and MPI_Unpack is pageable memory, so that they stage): each call returns
 * MPI_ERR_INTERN or is exact, never a fault; with pinned every call must succeed, through
 * pageable staging, and with devstage through page-locked staging the kernels reach. Exits 77
 * without a CUDA device. */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "counters.h"
#include "cudrv.h"
#include "devbuf.h"
#include "options.h"

#define POISON 0x5A
#define NTYPES 4

static int rank, nranks;
static MPI_Datatype types[NTYPES];
static const char *type_names[NTYPES] = {"vector(16,3,7,double)", "subarray face of floats",
                                         "hvector(4,1,200,vector(5,2,3,int))",
                                         "indexed({3,1,4,1},{0,5,9,20},short)"};
static const int counts[NTYPES] = {2, 1, 2, 3};

/* Per kind: calls checked, bytes that differed, calls that launched kernels, staged calls. */
typedef struct {
    long calls, mismatches, kernel_calls, fallbacks, errors;
} tally_t;
static tally_t tally[K_COUNT];

/* Buffers of one kind for one type: `count` objects (`objs` for the collective's send and
 * receive sides, nranks * count). */
typedef struct {
    kind_t kind;
    MPI_Datatype type;
    int count;
    int64_t lo, span;
    buf_t buf;
    char *arg; /* object 0 */
    unsigned char *host;
} side_t;

static void footprint(MPI_Datatype type, int count, int64_t *lo, int64_t *span)
{
    MPI_Aint tlb, text, lb, ext;
    MPI_Type_get_true_extent(type, &tlb, &text);
    MPI_Type_get_extent(type, &lb, &ext);
    int64_t reach = (int64_t)(count - 1) * ext;
    *lo = tlb + (reach < 0 ? reach : 0);
    *span = text + (reach < 0 ? -reach : reach);
}

/* IPC buffers come from the peer: each rank exports buffers of the sizes asked, in the same
 * order, and opens the peer's. The exports are freed at the end. */
#define MAX_EXPORTS 256
static buf_t exports[MAX_EXPORTS];
static int nexports;

/* What one process tells the other of an IPC pool allocation. */
typedef struct {
    int pid, fd;
    CUmemPoolPtrExportData data;
} pool_share_t;

static buf_t alloc_kind(kind_t kind, size_t len)
{
    CUipcMemHandle mine, theirs;
    pool_share_t my_share, their_share;
    int peer = (rank + 1) % nranks;

    if (kind != K_IPC && kind != K_IPC_POOL)
        return buf_alloc(kind, len);
    REQUIRE(nexports < MAX_EXPORTS);
    if (kind == K_IPC_POOL) {
        my_share.pid = (int)getpid();
        exports[nexports++] = buf_ipc_pool_export(len, &my_share.fd, &my_share.data);
        REQUIRE(MPI_Sendrecv(&my_share, sizeof(my_share), MPI_BYTE, peer, 7, &their_share,
                             sizeof(their_share), MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE) == MPI_SUCCESS);
        return buf_ipc_pool_open(their_share.pid, their_share.fd, &their_share.data, len);
    }
    exports[nexports++] = buf_ipc_export(len, &mine);
    REQUIRE(MPI_Sendrecv(&mine, sizeof(mine), MPI_BYTE, peer, 7, &theirs, sizeof(theirs), MPI_BYTE,
                         peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    return buf_ipc_open(&theirs, len);
}

static void side_init(side_t *s, kind_t kind, MPI_Datatype type, int count)
{
    s->kind = kind;
    s->type = type;
    s->count = count;
    footprint(type, count, &s->lo, &s->span);
    s->buf = alloc_kind(kind, (size_t)s->span);
    s->arg = s->buf.ptr - s->lo;
    s->host = malloc((size_t)s->span);
    REQUIRE(s->host != NULL);
}

static void pattern(unsigned char *p, int64_t n, unsigned salt)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31 + salt * 7 + 1);
}

static void side_fill(side_t *s, unsigned salt)
{
    pattern(s->host, s->span, salt);
    buf_put(&s->buf, s->host);
}

static void side_poison(side_t *s)
{
    memset(s->host, POISON, (size_t)s->span);
    buf_put(&s->buf, s->host);
}

static void side_free(side_t *s)
{
    buf_free(&s->buf);
    free(s->host);
}

/* Host scratch for a pack of @p size bytes from a typed side spanning @p span: the system MPI's
 * packed bytes (@p want), room for the bytes read back of either buffer (@p got) and the typed
 * reference (@p ref). */
static void scratch_alloc(int size, int64_t span, unsigned char **want, unsigned char **got,
                          unsigned char **ref)
{
    *want = malloc((size_t)size);
    *got = malloc((size_t)(size > (int)span ? size : (int)span));
    *ref = malloc((size_t)span);
    REQUIRE(*want && *got && *ref);
}

/* A flat buffer of packed bytes of a kind. */
typedef struct {
    buf_t buf;
    int len;
} flat_t;

static flat_t flat_alloc(kind_t kind, int len)
{
    flat_t f = {alloc_kind(kind, (size_t)len), len};
    return f;
}

/* Before an unpack of the packed bytes @p want from @p p into the typed side @p s: @p s poisoned,
 * @p p holding @p want, and in @p ref what the system MPI unpacks into a poisoned host copy. */
static void unpack_reference(side_t *s, flat_t *p, unsigned char *want, unsigned char *ref)
{
    int pos = 0;

    side_poison(s);
    memcpy(ref, s->host, (size_t)s->span);
    REQUIRE(PMPI_Unpack(want, p->len, &pos, ref - s->lo, s->count, s->type, MPI_COMM_SELF) ==
            MPI_SUCCESS);
    buf_put(&p->buf, want);
}

/* The counters a check reads before and after a call. */
typedef struct {
    long launches, fallbacks;
} snap_t;

static snap_t snap(void)
{
    snap_t s = {tj_counter("kernel_launches"), tj_counter("gpu_fallbacks")};
    return s;
}

/* What a call between a typed buffer of kind @p typed and the other side's kind @p other must
 * have done: kernels and nothing staged when the typed side is device-like and the other side
 * host memory or in the same device; nothing on the device when both sides are host memory (the
 * system MPI's call, whatever the device could reach); anything exact otherwise (two devices'
 * buffers are staged through host memory). */
typedef enum { BY_KERNEL, BY_HOST, BY_ANY } by_t;

static by_t expected(kind_t typed, kind_t other)
{
    if (!on_device(typed))
        return on_device(other) ? BY_ANY : BY_HOST;
    if (!on_device(other) || needs_two_devices(typed) == needs_two_devices(other))
        return BY_KERNEL;
    return BY_ANY;
}

/* One call checked: its result, its bytes, and its counters. */
static void judge(kind_t kind, const char *what, int t, int rc, const void *got, const void *want,
                  size_t len, snap_t before, by_t by)
{
    snap_t after = snap();
    tally_t *y = &tally[kind];
    long launches = after.launches - before.launches, staged = after.fallbacks - before.fallbacks;

    y->calls++;
    if (rc != MPI_SUCCESS) {
        y->errors++;
        fprintf(stderr, "rank %d: %s %s of %s: MPI error %d\n", rank, kind_names[kind], what,
                type_names[t], rc);
        check_failures++;
        return;
    }
    if (memcmp(got, want, len) != 0) {
        y->mismatches++;
        fprintf(stderr, "rank %d: %s %s of %s: bytes differ from the system MPI's\n", rank,
                kind_names[kind], what, type_names[t]);
        check_failures++;
    }
    y->fallbacks += staged > 0;
    y->kernel_calls += launches > 0;
    if ((by == BY_KERNEL && (launches == 0 || staged != 0)) ||
        (by == BY_HOST && (launches != 0 || staged != 0))) {
        fprintf(stderr, "rank %d: %s %s of %s: %ld kernel launches, %ld staged calls (%s)\n", rank,
                kind_names[kind], what, type_names[t], launches, staged,
                by == BY_KERNEL ? "a kernel applies" : "host memory: the system MPI's call");
        check_failures++;
    }
}

/* MPI_Pack from a typed buffer of @p kind into packed memory of @p pkind, and MPI_Unpack back. */
static void pack_pair(kind_t kind, kind_t pkind, int t, unsigned salt)
{
    MPI_Datatype type = types[t];
    int size, pos, rpos;
    side_t s;
    flat_t p;
    unsigned char *want, *got, *ref;
    snap_t before;
    char what[64];

    MPI_Type_size(type, &size);
    size *= counts[t];
    side_init(&s, kind, type, counts[t]);
    p = flat_alloc(pkind, size);
    scratch_alloc(size, s.span, &want, &got, &ref);

    /* Pack: the system MPI's bytes from the host copy. */
    side_fill(&s, salt);
    memset(got, POISON, (size_t)size);
    buf_put(&p.buf, got);
    rpos = 0;
    REQUIRE(PMPI_Pack(s.host - s.lo, s.count, type, want, size, &rpos, MPI_COMM_SELF) ==
            MPI_SUCCESS);
    pos = 0;
    before = snap();
    int rc = MPI_Pack(s.arg, s.count, type, p.buf.ptr, size, &pos, MPI_COMM_SELF);
    buf_get(&p.buf, got);
    snprintf(what, sizeof(what), "pack into %s", kind_names[pkind]);
    judge(kind, what, t, rc == MPI_SUCCESS && pos != size ? -1 : rc, got, want, (size_t)size,
          before, expected(kind, pkind));

    /* Unpack: into poisoned typed memory, against the system MPI's unpack into a poisoned copy. */
    unpack_reference(&s, &p, want, ref);
    pos = 0;
    before = snap();
    rc = MPI_Unpack(p.buf.ptr, size, &pos, s.arg, s.count, type, MPI_COMM_SELF);
    buf_get(&s.buf, got);
    snprintf(what, sizeof(what), "unpack from %s", kind_names[pkind]);
    judge(kind, what, t, rc == MPI_SUCCESS && pos != size ? -1 : rc, got, ref, (size_t)s.span,
          before, expected(kind, pkind));

    buf_free(&p.buf);
    side_free(&s);
    free(want);
    free(got);
    free(ref);
}

/* What the peer's pattern @p salt, sent as @p count objects, leaves in a poisoned receive
 * footprint of the same type: the system MPI's send-receive over MPI_COMM_SELF on host copies. */
static void reference(const side_t *r, unsigned salt, unsigned char *out)
{
    unsigned char *src = malloc((size_t)r->span);
    REQUIRE(src != NULL);
    pattern(src, r->span, salt);
    memset(out, POISON, (size_t)r->span);
    REQUIRE(PMPI_Sendrecv(src - r->lo, r->count, r->type, 0, 5, out - r->lo, r->count, r->type, 0,
                          5, MPI_COMM_SELF, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    free(src);
}

/* MPI_Send from @p kind into the peer's MPI_Recv into @p kind (rank 0 sends first). */
static void send_recv(kind_t kind, int t, unsigned salt)
{
    int peer = (rank + 1) % nranks;
    side_t s, r;
    unsigned char *want;
    snap_t before;
    int rc, rc2;

    side_init(&s, kind, types[t], counts[t]);
    side_init(&r, kind, types[t], counts[t]);
    want = malloc((size_t)r.span);
    REQUIRE(want != NULL);
    side_fill(&s, salt + (unsigned)rank);
    side_poison(&r);
    before = snap();
    if (rank == 0) {
        rc = MPI_Send(s.arg, s.count, s.type, peer, 1, MPI_COMM_WORLD);
        rc2 = MPI_Recv(r.arg, r.count, r.type, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        rc2 = MPI_Recv(r.arg, r.count, r.type, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        rc = MPI_Send(s.arg, s.count, s.type, peer, 1, MPI_COMM_WORLD);
    }
    buf_get(&r.buf, r.host);
    reference(&r, salt + (unsigned)peer, want);
    judge(kind, "send/recv", t, rc != MPI_SUCCESS ? rc : rc2, r.host, want, (size_t)r.span, before,
          expected(kind, kind));
    free(want);
    side_free(&s);
    side_free(&r);
}

/* MPI_Isend and MPI_Irecv both ways between @p kind and device 0's cuMemAlloc memory: this
 * rank's @p kind buffer to the peer's device buffer, the peer's device buffer into this rank's
 * @p kind buffer (for the kinds of device 1: device 0 memory into device 1 memory), Waitall. */
static void isend_irecv(kind_t kind, int t, unsigned salt)
{
    int peer = (rank + 1) % nranks;
    side_t sk, sd, rk, rd;
    unsigned char *want_k, *want_d;
    MPI_Request req[4];
    MPI_Status st[4]; /* not MPI_STATUSES_IGNORE: GCC takes MPICH's for an array of none */
    snap_t before;
    int rc;

    side_init(&sk, kind, types[t], counts[t]);
    side_init(&sd, K_DEVICE, types[t], counts[t]);
    side_init(&rk, kind, types[t], counts[t]);
    side_init(&rd, K_DEVICE, types[t], counts[t]);
    want_k = malloc((size_t)rk.span);
    want_d = malloc((size_t)rd.span);
    REQUIRE(want_k && want_d);
    side_fill(&sk, salt + (unsigned)rank);
    side_fill(&sd, salt + 100 + (unsigned)rank);
    side_poison(&rk);
    side_poison(&rd);
    before = snap();
    rc = MPI_Irecv(rk.arg, rk.count, rk.type, peer, 2, MPI_COMM_WORLD, &req[0]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Irecv(rd.arg, rd.count, rd.type, peer, 3, MPI_COMM_WORLD, &req[1]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Isend(sd.arg, sd.count, sd.type, peer, 2, MPI_COMM_WORLD, &req[2]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Isend(sk.arg, sk.count, sk.type, peer, 3, MPI_COMM_WORLD, &req[3]);
    REQUIRE(rc == MPI_SUCCESS);
    rc = MPI_Waitall(4, req, st);
    buf_get(&rk.buf, rk.host);
    buf_get(&rd.buf, rd.host);
    reference(&rk, salt + 100 + (unsigned)peer, want_k);
    reference(&rd, salt + (unsigned)peer, want_d);
    judge(kind, "irecv from device memory", t, rc, rk.host, want_k, (size_t)rk.span, before,
          on_device(kind) ? BY_KERNEL : BY_ANY);
    judge(kind, "isend to device memory", t, rc, rd.host, want_d, (size_t)rd.span, before,
          on_device(kind) ? BY_KERNEL : BY_ANY);
    free(want_k);
    free(want_d);
    side_free(&sk);
    side_free(&sd);
    side_free(&rk);
    side_free(&rd);
}

/* MPI_Alltoall of `count` objects per peer, both sides of @p kind, against the system MPI's on
 * host copies. */
static void alltoall(kind_t kind, int t, unsigned salt)
{
    int n = counts[t] * nranks;
    side_t s, r;
    unsigned char *src, *want;
    snap_t before;
    int rc;

    side_init(&s, kind, types[t], n);
    side_init(&r, kind, types[t], n);
    src = malloc((size_t)s.span);
    want = malloc((size_t)r.span);
    REQUIRE(src && want);
    side_fill(&s, salt + (unsigned)rank);
    memcpy(src, s.host, (size_t)s.span);
    side_poison(&r);
    memset(want, POISON, (size_t)r.span);
    REQUIRE(PMPI_Alltoall(src - s.lo, counts[t], types[t], want - r.lo, counts[t], types[t],
                          MPI_COMM_WORLD) == MPI_SUCCESS);
    before = snap();
    rc = MPI_Alltoall(s.arg, counts[t], types[t], r.arg, counts[t], types[t], MPI_COMM_WORLD);
    buf_get(&r.buf, r.host);
    judge(kind, "alltoall", t, rc, r.host, want, (size_t)r.span, before, expected(kind, kind));
    free(src);
    free(want);
    side_free(&s);
    side_free(&r);
}

static void make_types(void)
{
    MPI_Datatype inner;
    int sizes[3] = {12, 10, 8}, sub[3] = {12, 3, 8}, starts[3] = {0, 2, 0};
    int lens[4] = {3, 1, 4, 1}, displs[4] = {0, 5, 9, 20};

    MPI_Type_vector(16, 3, 7, MPI_DOUBLE, &types[0]);
    MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_FLOAT, &types[1]);
    MPI_Type_vector(5, 2, 3, MPI_INT, &inner);
    MPI_Type_create_hvector(4, 1, 200, inner, &types[2]);
    MPI_Type_free(&inner);
    MPI_Type_indexed(4, lens, displs, MPI_SHORT, &types[3]);
    for (int t = 0; t < NTYPES; t++)
        MPI_Type_commit(&types[t]);
}

/* The kinds asked for (a comma-separated list of names), all by default. */
static int parse_kinds(const char *list, kind_t *out)
{
    int n = 0;
    char *copy, *save = NULL;

    if (list == NULL) {
        for (int k = 0; k < K_COUNT; k++)
            out[n++] = (kind_t)k;
        return n;
    }
    copy = strdup(list);
    REQUIRE(copy != NULL);
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        int k = kind_by_name(tok);
        if (k < 0) {
            fprintf(stderr, "test_bufkinds: no memory kind \"%s\"\n", tok);
            exit(2);
        }
        out[n++] = (kind_t)k;
    }
    free(copy);
    return n;
}

/* ---- injected failures ---------------------------------------------------------------------- */

typedef struct {
    long calls, exact, errors;
} fault_tally_t;

/* A call's result under injected failures: an MPI_ERR_INTERN (the query's reason logged), or
 * exact bytes. */
static void fault_judge(fault_tally_t *f, const char *what, kind_t kind, int t, int rc,
                        const void *got, const void *want, size_t len)
{
    int cls = -1;
    f->calls++;
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_INTERN) {
            fprintf(stderr, "%s %s of %s: MPI error class %d, MPI_ERR_INTERN expected\n",
                    kind_names[kind], what, type_names[t], cls);
            check_failures++;
        }
        f->errors++;
        return;
    }
    if (memcmp(got, want, len) != 0) {
        fprintf(stderr, "%s %s of %s: succeeded with wrong bytes\n", kind_names[kind], what,
                type_names[t]);
        check_failures++;
        return;
    }
    f->exact++;
}

/* One rank: MPI_Pack and MPI_Unpack against device memory, a send to itself (MPI_Irecv, MPI_Send,
 * MPI_Wait) and MPI_Alltoall on MPI_COMM_SELF, each of them exact or MPI_ERR_INTERN. A receive
 * that failed leaves its message to be drained by the system MPI; a send that failed has its
 * receive cancelled. */
static void fault_round(fault_tally_t *f, kind_t kind, kind_t packed_kind, int t, unsigned salt)
{
    MPI_Datatype type = types[t];
    int size, pos, rpos, rc, rc2;
    side_t s, r;
    flat_t p;
    unsigned char *want, *got, *ref;
    MPI_Request req;

    MPI_Type_size(type, &size);
    size *= counts[t];
    side_init(&s, kind, type, counts[t]);
    side_init(&r, kind, type, counts[t]);
    p = flat_alloc(packed_kind, size);
    scratch_alloc(size, s.span, &want, &got, &ref);

    side_fill(&s, salt);
    rpos = 0;
    REQUIRE(PMPI_Pack(s.host - s.lo, s.count, type, want, size, &rpos, MPI_COMM_SELF) ==
            MPI_SUCCESS);
    pos = 0;
    rc = MPI_Pack(s.arg, s.count, type, p.buf.ptr, size, &pos, MPI_COMM_SELF);
    buf_get(&p.buf, got);
    fault_judge(f, "pack", kind, t, rc, got, want, (size_t)size);

    unpack_reference(&r, &p, want, ref);
    pos = 0;
    rc = MPI_Unpack(p.buf.ptr, size, &pos, r.arg, r.count, type, MPI_COMM_SELF);
    buf_get(&r.buf, got);
    fault_judge(f, "unpack", kind, t, rc, got, ref, (size_t)r.span);

    /* To itself, the reference being the unpack's: MPI_Irecv then MPI_Send (only when the
     * receive was posted: a blocking send to itself would wait for it forever), then MPI_Isend
     * then MPI_Recv (a receive that failed leaves the message for the system MPI to drain). A
     * send that failed has its posted receive cancelled. */
    for (int blocking_recv = 0; blocking_recv < 2; blocking_recv++) {
        MPI_Request sreq = MPI_REQUEST_NULL;
        req = MPI_REQUEST_NULL;
        side_poison(&r);
        if (!blocking_recv) {
            rc2 = MPI_Irecv(r.arg, r.count, type, 0, 9, MPI_COMM_SELF, &req);
            rc = rc2 == MPI_SUCCESS ? MPI_Send(s.arg, s.count, type, 0, 9, MPI_COMM_SELF)
                                    : MPI_SUCCESS;
        } else {
            rc = MPI_Isend(s.arg, s.count, type, 0, 9, MPI_COMM_SELF, &sreq);
            rc2 = rc == MPI_SUCCESS
                      ? MPI_Recv(r.arg, r.count, type, 0, 9, MPI_COMM_SELF, MPI_STATUS_IGNORE)
                      : MPI_SUCCESS;
        }
        if (rc2 != MPI_SUCCESS && rc == MPI_SUCCESS) {
            /* A receive may fail before it is posted (the message is still there) or after (its
             * unpack could not place the buffer: the message was taken). */
            unsigned char *drain = malloc((size_t)size);
            int pending = 0;
            REQUIRE(drain != NULL);
            REQUIRE(PMPI_Iprobe(0, 9, MPI_COMM_SELF, &pending, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            if (pending)
                REQUIRE(PMPI_Recv(drain, size, MPI_BYTE, 0, 9, MPI_COMM_SELF, MPI_STATUS_IGNORE) ==
                        MPI_SUCCESS);
            free(drain);
        } else if (rc != MPI_SUCCESS && req != MPI_REQUEST_NULL) {
            REQUIRE(MPI_Cancel(&req) == MPI_SUCCESS);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (req != MPI_REQUEST_NULL) {
            rc2 = MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        if (sreq != MPI_REQUEST_NULL)
            REQUIRE(MPI_Wait(&sreq, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        buf_get(&r.buf, got);
        fault_judge(f, blocking_recv ? "isend/recv" : "irecv/send", kind, t,
                    rc != MPI_SUCCESS ? rc : rc2, got, ref, (size_t)r.span);
    }

    /* On MPI_COMM_SELF, MPI_Alltoall is a copy through the system MPI. */
    side_poison(&r);
    rc = MPI_Alltoall(s.arg, counts[t], type, r.arg, counts[t], type, MPI_COMM_SELF);
    buf_get(&r.buf, got);
    fault_judge(f, "alltoall", kind, t, rc, got, ref, (size_t)r.span);

    buf_free(&p.buf);
    side_free(&s);
    side_free(&r);
    free(want);
    free(got);
    free(ref);
}

static int faults(const char *mode, const kind_t *kinds, int nkinds)
{
    fault_tally_t f = {0, 0, 0};
    bool pinned = strcmp(mode, "pinned") == 0, devstage = strcmp(mode, "devstage") == 0;
    long pageable, mapped;

    if (!pinned && !devstage && strcmp(mode, "query") != 0) {
        fprintf(stderr, "test_bufkinds: --faults query, pinned or devstage\n");
        return 2;
    }
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < nkinds; i++)
            for (int t = 0; t < NTYPES; t++)
                fault_round(&f, kinds[i], devstage ? K_HOST : K_DEVICE, t,
                            (unsigned)(round * 16 + i * 4 + t));
    pageable = tj_counter("staging_pageable");
    mapped = tj_counter("staging_mapped");
    printf("faults (%s): %ld calls, %ld exact, %ld MPI_ERR_INTERN, staging_pageable=%ld "
           "staging_mapped=%ld method_oneshot=%ld\n",
           mode, f.calls, f.exact, f.errors, pageable, mapped, tj_counter("method_oneshot"));
    /* The injection must have hit: queries failed, or staging went pageable (pinned) or to
     * page-locked memory (devstage) with no error. */
    if (pinned) {
        CHECK(f.errors == 0);
        CHECK(pageable > 0);
    } else if (devstage) {
        CHECK(f.errors == 0);
        CHECK(mapped > 0);
        CHECK(tj_counter("method_oneshot") > 0);
        CHECK(tj_counter("method_staged") == 0 && tj_counter("method_device") == 0);
    } else {
        CHECK(f.errors > 0);
        CHECK(f.exact > 0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *list = NULL, *fault_mode = NULL;
    kind_t kinds[K_COUNT * 4];
    bool all = false;
    int nkinds, provided;

    options_read(argc, argv,
                 (const opt_t[]){{"--kinds", OPT_TEXT, &list},
                                 {"--faults", OPT_TEXT, &fault_mode},
                                 {"--all", OPT_FLAG, &all},
                                 {NULL}});
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (!cudrv_open()) {
        MPI_Finalize();
        return 77;
    }
    make_types();
    nkinds = parse_kinds(list, kinds);
    /* Kinds this driver cannot make are left out (with --all, a failure). */
    for (int i = 0; i < nkinds; i++) {
        const char *why;
        bool ipc = kinds[i] == K_IPC || kinds[i] == K_IPC_POOL;
        if ((ipc && nranks < 2) || !kind_available(kinds[i], &why)) {
            if (ipc && nranks < 2)
                why = "needs two ranks";
            if (rank == 0)
                printf("%s: not run (%s)\n", kind_names[kinds[i]], why);
            if (all)
                check_failures++;
            memmove(&kinds[i], &kinds[i + 1], (size_t)(nkinds - i - 1) * sizeof(kind_t));
            nkinds--;
            i--;
        }
    }
    if (fault_mode != NULL) {
        int rc = faults(fault_mode, kinds, nkinds);
        for (int t = 0; t < NTYPES; t++)
            MPI_Type_free(&types[t]);
        MPI_Finalize();
        if (rc != 0)
            return rc;
        CHECK_DONE();
    }
    REQUIRE(nranks == 2);
    for (int i = 0; i < nkinds; i++) {
        kind_t k = kinds[i];
        for (int t = 0; t < NTYPES; t++) {
            unsigned salt = (unsigned)(k * 8 + t);
            pack_pair(k, K_PINNED, t, salt);
            if (k != K_HOST)
                pack_pair(k, k, t, salt + 1);
            pack_pair(k, K_DEVICE, t, salt + 2);
            send_recv(k, t, salt + 3);
            isend_irecv(k, t, salt + 4);
            alltoall(k, t, salt + 5);
        }
        if (rank == 0)
            printf("%s: %ld calls checked, %ld mismatches, %ld with kernels, %ld staged, %ld "
                   "errors\n",
                   kind_names[k], tally[k].calls, tally[k].mismatches, tally[k].kernel_calls,
                   tally[k].fallbacks, tally[k].errors);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < nexports; i++)
        buf_free(&exports[i]);
    for (int t = 0; t < NTYPES; t++)
        MPI_Type_free(&types[t]);
    MPI_Finalize();
    CHECK_DONE();
}
