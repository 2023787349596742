/* SPDX-License-Identifier: BSD-3-Clause */
/* A CUDA-aware MPI for the emu tests: preloaded after libtypejit.so, it stands in front of the
 * system MPI's point-to-point calls (the PMPI_* names typejit calls) and lets them take buffers
 * in device memory of the CPU-only test driver, as a CUDA-aware MPI takes GPU memory. It stages
 * through host memory: a send copies the buffer's footprint to the host before the system MPI
 * sees it (at every Start for a persistent send), and a receive copies the footprint to the host,
 * receives there, and copies it back when the request completes, so bytes the typemap does not
 * touch stay as they were. The collectives typejit calls are staged the same way, over the hull
 * of each side's slices, and so are the reductions (which a CUDA-aware MPI gets as they are).
 * MPIX_Query_cuda_support says yes, so typejit's `device` method, which hands the MPI device
 * staging, and its collectives' CUDA-aware choices run in CI. Test code only: host staging is
 * leaked for sends whose request is freed while active. */
#include <cuda.h>
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Open MPI 4.1's mpi-ext.h declares it; its own returns 0 without CUDA. */
int MPIX_Query_cuda_support(void);

typedef enum { SEND_ONCE, RECV_ONCE, SEND_PERSISTENT, RECV_PERSISTENT } use_t;

/* A device footprint staged in host memory. */
typedef struct staged {
    MPI_Request req; /* the system MPI's request; MPI_REQUEST_NULL for a blocking call */
    use_t use;
    CUcontext ctx;
    CUdeviceptr dev; /* the footprint's first byte */
    char *host;
    size_t span;
    struct staged *next;
} staged_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static staged_t *pending;
static long nstaged; /* device footprints staged, said at MPI_Finalize (CUDAAWARE_SHIM_STATS=1) */

/* The few driver calls this needs, from the libcuda.so.1 the test and typejit use (the test has
 * initialised it). */
static struct {
    __typeof__(&cuPointerGetAttribute) pointer_attribute;
    __typeof__(&cuCtxPushCurrent) push;
    __typeof__(&cuCtxPopCurrent) pop;
    __typeof__(&cuMemcpyDtoH) dtoh;
    __typeof__(&cuMemcpyHtoD) htod;
} cu;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void cu_open(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (lib == NULL)
        return;
    *(void **)&cu.pointer_attribute = dlsym(lib, "cuPointerGetAttribute");
    *(void **)&cu.push = dlsym(lib, "cuCtxPushCurrent_v2");
    *(void **)&cu.pop = dlsym(lib, "cuCtxPopCurrent_v2");
    *(void **)&cu.dtoh = dlsym(lib, "cuMemcpyDtoH_v2");
    *(void **)&cu.htod = dlsym(lib, "cuMemcpyHtoD_v2");
}

/* A failed driver call here is a broken test, not a result. */
static void check(CUresult rc)
{
    if (rc != CUDA_SUCCESS)
        abort();
}

#define REAL(_name) ((__typeof__(&_name))dlsym(RTLD_NEXT, #_name))

int MPIX_Query_cuda_support(void)
{
    return 1;
}

/* Device memory of the test driver (managed and pinned memory are host-accessible as they are). */
static bool on_device(const void *p, CUcontext *ctx)
{
    unsigned type = 0;
    pthread_once(&cu_once, cu_open);
    if (cu.pointer_attribute == NULL || p == NULL ||
        cu.pointer_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p) !=
            CUDA_SUCCESS ||
        type != CU_MEMORYTYPE_DEVICE)
        return false;
    return cu.pointer_attribute(ctx, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)p) == CUDA_SUCCESS;
}

/* Copy between the device footprint and its host copy, in the buffer's context, leaving the
 * caller's current context as it was. */
static void copy(const staged_t *s, bool to_host)
{
    CUcontext popped;
    check(cu.push(s->ctx));
    check(to_host ? cu.dtoh(s->host, s->dev, s->span) : cu.htod(s->dev, s->host, s->span));
    check(cu.pop(&popped));
}

/* The bytes [*lo, *hi) relative to their buffer that @p count objects of @p type at byte offset
 * @p off touch, merged into the range already there (*lo > *hi: none yet). */
static void reach_of(int64_t off, int count, MPI_Datatype type, int64_t *lo, int64_t *hi)
{
    MPI_Aint tlb, text, lb, ext;
    int64_t reach, a, b;
    int size;

    /* An empty type touches nothing, whatever its true bounds say (Open MPI can give a lower
     * bound of 2^63 - 1). */
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
        size == 0 || PMPI_Type_get_true_extent(type, &tlb, &text) != MPI_SUCCESS ||
        PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS || text <= 0)
        return;
    reach = (int64_t)(count - 1) * ext;
    a = off + tlb + (reach < 0 ? reach : 0);
    b = a + text + (reach < 0 ? -reach : reach);
    if (*lo > *hi) {
        *lo = a;
        *hi = b;
    } else {
        *lo = a < *lo ? a : *lo;
        *hi = b > *hi ? b : *hi;
    }
}

static staged_t *stage_range(const void *buf, int64_t lo, int64_t hi, use_t use, void **arg);

/* Stage @p count objects of @p type at @p buf when its footprint starts in device memory: a host
 * copy of the footprint, and in *arg the buffer argument that points into it. NULL otherwise
 * (the call goes to the system MPI as it is). */
static staged_t *stage(const void *buf, int count, MPI_Datatype type, use_t use, void **arg)
{
    int64_t lo = 1, hi = 0;
    reach_of(0, count, type, &lo, &hi);
    return stage_range(buf, lo, hi, use, arg);
}

/* Stage the bytes [lo, hi) relative to @p buf when they start in device memory. */
static staged_t *stage_range(const void *buf, int64_t lo, int64_t hi, use_t use, void **arg)
{
    int64_t span = hi - lo;
    CUcontext ctx;
    staged_t *s;

    *arg = (void *)buf;
    if (buf == NULL || buf == MPI_IN_PLACE || lo >= hi || !on_device((const char *)buf + lo, &ctx))
        return NULL;
    s = calloc(1, sizeof(*s));
    if (s == NULL || (s->host = malloc((size_t)span)) == NULL)
        abort();
    pthread_mutex_lock(&lock);
    nstaged++;
    pthread_mutex_unlock(&lock);
    s->req = MPI_REQUEST_NULL;
    s->use = use;
    s->ctx = ctx;
    s->dev = (CUdeviceptr)((const char *)buf + lo);
    s->span = (size_t)span;
    /* A receive keeps what it does not overwrite; a persistent send copies at each Start. */
    if (use != SEND_PERSISTENT)
        copy(s, true);
    *arg = s->host - lo;
    return s;
}

static void keep(staged_t *s, MPI_Request req)
{
    s->req = req;
    pthread_mutex_lock(&lock);
    s->next = pending;
    pending = s;
    pthread_mutex_unlock(&lock);
}

static void drop(staged_t *s)
{
    if (s == NULL)
        return;
    free(s->host);
    free(s);
}

/* The record of @p req, taken out of the list when @p take. */
static staged_t *find(MPI_Request req, bool take)
{
    staged_t **at, *s = NULL;
    pthread_mutex_lock(&lock);
    for (at = &pending; *at != NULL; at = &(*at)->next)
        if ((*at)->req == req) {
            s = *at;
            if (take)
                *at = s->next;
            break;
        }
    pthread_mutex_unlock(&lock);
    return s;
}

/* @p req (its handle before the completion call) completed: a receive's bytes go to the device;
 * a one-time record ends. A collective's request has a record per side. */
static void completed(MPI_Request req)
{
    staged_t *done = NULL, **at, *s;

    if (req == MPI_REQUEST_NULL)
        return;
    pthread_mutex_lock(&lock);
    for (at = &pending; *at != NULL;) {
        s = *at;
        if (s->req != req) {
            at = &s->next;
            continue;
        }
        if (s->use == RECV_ONCE || s->use == RECV_PERSISTENT)
            copy(s, false);
        if (s->use == SEND_ONCE || s->use == RECV_ONCE) {
            *at = s->next;
            s->next = done;
            done = s;
        } else {
            at = &s->next;
        }
    }
    pthread_mutex_unlock(&lock);
    while (done != NULL) {
        s = done;
        done = s->next;
        drop(s);
    }
}

/* ---- sends ---------------------------------------------------------------------------------- */

#define BLOCKING_SEND(_name)                                                                       \
    int _name(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)     \
    {                                                                                              \
        void *arg;                                                                                 \
        staged_t *s = stage(buf, count, type, SEND_ONCE, &arg);                                    \
        int rc = REAL(_name)(arg, count, type, dest, tag, comm);                                   \
        drop(s);                                                                                   \
        return rc;                                                                                 \
    }
BLOCKING_SEND(PMPI_Send)
BLOCKING_SEND(PMPI_Ssend)
BLOCKING_SEND(PMPI_Rsend)
BLOCKING_SEND(PMPI_Bsend)

#define REQUEST_SEND(_name, _use)                                                                  \
    int _name(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,     \
              MPI_Request *req)                                                                    \
    {                                                                                              \
        void *arg;                                                                                 \
        staged_t *s = stage(buf, count, type, _use, &arg);                                         \
        int rc = REAL(_name)(arg, count, type, dest, tag, comm, req);                              \
        if (s != NULL && rc == MPI_SUCCESS)                                                        \
            keep(s, *req);                                                                         \
        else                                                                                       \
            drop(s);                                                                               \
        return rc;                                                                                 \
    }
REQUEST_SEND(PMPI_Isend, SEND_ONCE)
REQUEST_SEND(PMPI_Issend, SEND_ONCE)
REQUEST_SEND(PMPI_Irsend, SEND_ONCE)
REQUEST_SEND(PMPI_Ibsend, SEND_ONCE)
REQUEST_SEND(PMPI_Send_init, SEND_PERSISTENT)
REQUEST_SEND(PMPI_Ssend_init, SEND_PERSISTENT)
REQUEST_SEND(PMPI_Rsend_init, SEND_PERSISTENT)
REQUEST_SEND(PMPI_Bsend_init, SEND_PERSISTENT)

/* A persistent send's bytes are those of the buffer when it starts. */
static void starting(MPI_Request req)
{
    staged_t *s = find(req, false);
    if (s != NULL && s->use == SEND_PERSISTENT)
        copy(s, true);
}

int PMPI_Start(MPI_Request *req)
{
    starting(*req);
    return REAL(PMPI_Start)(req);
}

int PMPI_Startall(int n, MPI_Request reqs[])
{
    for (int i = 0; i < n; i++)
        starting(reqs[i]);
    return REAL(PMPI_Startall)(n, reqs);
}

/* ---- receives ------------------------------------------------------------------------------- */

int PMPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    void *arg;
    staged_t *s = stage(buf, count, type, RECV_ONCE, &arg);
    int rc = REAL(PMPI_Recv)(arg, count, type, source, tag, comm, status);
    if (s != NULL)
        copy(s, false);
    drop(s);
    return rc;
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    void *arg;
    staged_t *s = stage(buf, count, type, RECV_ONCE, &arg);
    int rc = REAL(PMPI_Irecv)(arg, count, type, source, tag, comm, req);
    if (s != NULL && rc == MPI_SUCCESS)
        keep(s, *req);
    else
        drop(s);
    return rc;
}

int PMPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    void *arg;
    staged_t *s = stage(buf, count, type, RECV_PERSISTENT, &arg);
    int rc = REAL(PMPI_Recv_init)(arg, count, type, source, tag, comm, req);
    if (s != NULL && rc == MPI_SUCCESS)
        keep(s, *req);
    else
        drop(s);
    return rc;
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    void *arg;
    staged_t *s = stage(buf, count, type, RECV_ONCE, &arg);
    int rc = REAL(PMPI_Mrecv)(arg, count, type, message, status);
    if (s != NULL)
        copy(s, false);
    drop(s);
    return rc;
}

int PMPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *req)
{
    void *arg;
    staged_t *s = stage(buf, count, type, RECV_ONCE, &arg);
    int rc = REAL(PMPI_Imrecv)(arg, count, type, message, req);
    if (s != NULL && rc == MPI_SUCCESS)
        keep(s, *req);
    else
        drop(s);
    return rc;
}

int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                  int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                  MPI_Status *status)
{
    void *sarg, *rarg;
    staged_t *s = stage(sbuf, scount, stype, SEND_ONCE, &sarg);
    staged_t *r = stage(rbuf, rcount, rtype, RECV_ONCE, &rarg);
    int rc = REAL(PMPI_Sendrecv)(sarg, scount, stype, dest, stag, rarg, rcount, rtype, source, rtag,
                                 comm, status);
    if (r != NULL)
        copy(r, false);
    drop(s);
    drop(r);
    return rc;
}

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int source,
                          int rtag, MPI_Comm comm, MPI_Status *status)
{
    void *arg;
    staged_t *s = stage(buf, count, type, RECV_ONCE, &arg);
    int rc = REAL(PMPI_Sendrecv_replace)(arg, count, type, dest, stag, source, rtag, comm, status);
    if (s != NULL)
        copy(s, false);
    drop(s);
    return rc;
}

/* ---- completion ----------------------------------------------------------------------------- */

int PMPI_Wait(MPI_Request *req, MPI_Status *status)
{
    MPI_Request h = *req;
    int rc = REAL(PMPI_Wait)(req, status);
    completed(h);
    return rc;
}

int PMPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    MPI_Request h = *req;
    int rc = REAL(PMPI_Test)(req, flag, status);
    if (*flag)
        completed(h);
    return rc;
}

int PMPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    int rc = REAL(PMPI_Request_get_status)(req, flag, status);
    /* Complete but not freed: the bytes are due now; the Wait that frees it copies again. */
    pthread_mutex_lock(&lock);
    for (staged_t *s = pending; *flag && s != NULL; s = s->next)
        if (s->req == req && (s->use == RECV_ONCE || s->use == RECV_PERSISTENT))
            copy(s, false);
    pthread_mutex_unlock(&lock);
    return rc;
}

/* The handles before a call on several requests, NULL when too many for this test's needs. */
#define SAVED_MAX 64

int PMPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    MPI_Request h[SAVED_MAX];
    int rc;
    if (n > SAVED_MAX)
        abort();
    memcpy(h, reqs, (size_t)(n > 0 ? n : 0) * sizeof(MPI_Request));
    rc = REAL(PMPI_Waitall)(n, reqs, statuses);
    for (int i = 0; i < n; i++)
        completed(h[i]);
    return rc;
}

int PMPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    MPI_Request h[SAVED_MAX];
    int rc;
    if (n > SAVED_MAX)
        abort();
    memcpy(h, reqs, (size_t)(n > 0 ? n : 0) * sizeof(MPI_Request));
    rc = REAL(PMPI_Testall)(n, reqs, flag, statuses);
    for (int i = 0; *flag && i < n; i++)
        completed(h[i]);
    return rc;
}

int PMPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    MPI_Request h[SAVED_MAX];
    int rc;
    if (n > SAVED_MAX)
        abort();
    memcpy(h, reqs, (size_t)(n > 0 ? n : 0) * sizeof(MPI_Request));
    rc = REAL(PMPI_Waitany)(n, reqs, index, status);
    if (*index != MPI_UNDEFINED && *index >= 0 && *index < n)
        completed(h[*index]);
    return rc;
}

int PMPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    MPI_Request h[SAVED_MAX];
    int rc;
    if (n > SAVED_MAX)
        abort();
    memcpy(h, reqs, (size_t)(n > 0 ? n : 0) * sizeof(MPI_Request));
    rc = REAL(PMPI_Testany)(n, reqs, index, flag, status);
    if (*flag && *index != MPI_UNDEFINED && *index >= 0 && *index < n)
        completed(h[*index]);
    return rc;
}

static int some(bool wait, int n, MPI_Request reqs[], int *outcount, int indices[],
                MPI_Status statuses[])
{
    MPI_Request h[SAVED_MAX];
    int rc;
    if (n > SAVED_MAX)
        abort();
    memcpy(h, reqs, (size_t)(n > 0 ? n : 0) * sizeof(MPI_Request));
    rc = wait ? REAL(PMPI_Waitsome)(n, reqs, outcount, indices, statuses)
              : REAL(PMPI_Testsome)(n, reqs, outcount, indices, statuses);
    for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)
        completed(h[indices[i]]);
    return rc;
}

int PMPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    return some(true, n, reqs, outcount, indices, statuses);
}

int PMPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    return some(false, n, reqs, outcount, indices, statuses);
}

/* A freed request's record goes; a send still under way keeps its host copy (leaked). */
int PMPI_Request_free(MPI_Request *req)
{
    staged_t *s = find(*req, true);
    if (s != NULL && s->use != SEND_ONCE)
        drop(s);
    return REAL(PMPI_Request_free)(req);
}

/* ---- collectives ---------------------------------------------------------------------------- */

/* One side of a collective: @p n slices, slice i being counts[i] (or @p count) objects of
 * types[i] (or @p type) at displs[i] (in the type's extents, or bytes when @p bytes), adispls[i]
 * (bytes), or, with neither, i * count objects. */
typedef struct {
    const void *buf;
    int n, count;
    const int *counts, *displs;
    const MPI_Aint *adispls;
    bool bytes;
    MPI_Datatype type;
    const MPI_Datatype *types;
} side_t;

static staged_t *stage_side(const side_t *sd, use_t use, void **arg)
{
    int64_t lo = 1, hi = 0;

    for (int i = 0; i < sd->n; i++) {
        MPI_Datatype t = sd->types != NULL ? sd->types[i] : sd->type;
        int c = sd->counts != NULL ? sd->counts[i] : sd->count;
        MPI_Aint lb, ext;
        int64_t off;
        if (c <= 0 || t == MPI_DATATYPE_NULL || PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS)
            continue;
        off = sd->adispls != NULL ? (int64_t)sd->adispls[i]
              : sd->displs != NULL
                  ? (sd->bytes ? (int64_t)sd->displs[i] : (int64_t)sd->displs[i] * ext)
                  : (int64_t)i * sd->count * ext;
        reach_of(off, c, t, &lo, &hi);
    }
    return stage_range(sd->buf, lo, hi, use, arg);
}

/* The peers of a collective: the remote group of an intercommunicator. */
static int peers(MPI_Comm comm, bool *inter)
{
    int flag = 0, n = 0;
    PMPI_Comm_test_inter(comm, &flag);
    *inter = flag != 0;
    (flag ? PMPI_Comm_remote_size : PMPI_Comm_size)(comm, &n);
    return n;
}

/* In- and out-degree of a communicator with a topology. */
static void degrees(MPI_Comm comm, int *in, int *out)
{
    int topo = MPI_UNDEFINED, n = 0, rank = 0, weighted = 0;
    *in = *out = 0;
    PMPI_Topo_test(comm, &topo);
    if (topo == MPI_CART) {
        PMPI_Cartdim_get(comm, &n);
        *in = *out = 2 * n;
    } else if (topo == MPI_GRAPH) {
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &n);
        *in = *out = n;
    } else if (topo == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, in, out, &weighted);
    }
}

/* Rooted collectives: whether this rank is the root, and whether it takes no part (the other
 * members of the root's group of an intercommunicator). */
static bool rooted(MPI_Comm comm, int root, bool inter, bool *none)
{
    int rank = -1;
    *none = inter && root == MPI_PROC_NULL;
    if (inter)
        return root == MPI_ROOT;
    PMPI_Comm_rank(comm, &rank);
    return rank == root;
}

/* After the system MPI's call: a blocking one's receive side goes back to the device now, a
 * non-blocking one's when its request completes. */
static int done(int rc, MPI_Request *req, staged_t *s, staged_t *r)
{
    if (req != NULL && rc == MPI_SUCCESS) {
        if (s != NULL)
            keep(s, *req);
        if (r != NULL)
            keep(r, *req);
        return rc;
    }
    if (req == NULL && r != NULL && rc == MPI_SUCCESS)
        copy(r, false);
    drop(s);
    drop(r);
    return rc;
}

static int alltoallv(const void *sbuf, const int *sc, const int *sd, MPI_Datatype st, void *rbuf,
                     const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    bool inter;
    int n = peers(comm, &inter);
    side_t ss = {sbuf, n, 0, sc, sd, NULL, false, st, NULL};
    side_t rs = {rbuf, n, 0, rc, rd, NULL, false, rt, NULL};
    void *sa, *ra;
    staged_t *s = sbuf == MPI_IN_PLACE ? NULL : stage_side(&ss, SEND_ONCE, &sa);
    staged_t *r = stage_side(&rs, RECV_ONCE, &ra);
    if (sbuf == MPI_IN_PLACE)
        sa = (void *)sbuf;
    return done(req ? REAL(PMPI_Ialltoallv)(sa, sc, sd, st, ra, rc, rd, rt, comm, req)
                    : REAL(PMPI_Alltoallv)(sa, sc, sd, st, ra, rc, rd, rt, comm),
                req, s, r);
}

int PMPI_Alltoallv(const void *sbuf, const int sc[], const int sd[], MPI_Datatype st, void *rbuf,
                   const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm comm)
{
    return alltoallv(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, NULL);
}

int PMPI_Ialltoallv(const void *sbuf, const int sc[], const int sd[], MPI_Datatype st, void *rbuf,
                    const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm comm,
                    MPI_Request *req)
{
    return alltoallv(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, req);
}

static int alltoallw(const void *sbuf, const int *sc, const int *sd, const MPI_Datatype *st,
                     void *rbuf, const int *rc, const int *rd, const MPI_Datatype *rt,
                     MPI_Comm comm, MPI_Request *req)
{
    bool inter;
    int n = peers(comm, &inter);
    side_t ss = {sbuf, n, 0, sc, sd, NULL, true, MPI_DATATYPE_NULL, st};
    side_t rs = {rbuf, n, 0, rc, rd, NULL, true, MPI_DATATYPE_NULL, rt};
    void *sa = (void *)sbuf, *ra;
    staged_t *s = sbuf == MPI_IN_PLACE ? NULL : stage_side(&ss, SEND_ONCE, &sa);
    staged_t *r = stage_side(&rs, RECV_ONCE, &ra);
    return done(req ? REAL(PMPI_Ialltoallw)(sa, sc, sd, st, ra, rc, rd, rt, comm, req)
                    : REAL(PMPI_Alltoallw)(sa, sc, sd, st, ra, rc, rd, rt, comm),
                req, s, r);
}

int PMPI_Alltoallw(const void *sbuf, const int sc[], const int sd[], const MPI_Datatype st[],
                   void *rbuf, const int rc[], const int rd[], const MPI_Datatype rt[],
                   MPI_Comm comm)
{
    return alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, NULL);
}

int PMPI_Ialltoallw(const void *sbuf, const int sc[], const int sd[], const MPI_Datatype st[],
                    void *rbuf, const int rc[], const int rd[], const MPI_Datatype rt[],
                    MPI_Comm comm, MPI_Request *req)
{
    return alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, req);
}

static int neighbor_v(const void *sbuf, const int *sc, const int *sd, MPI_Datatype st, void *rbuf,
                      const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm comm,
                      MPI_Request *req)
{
    int in, out;
    void *sa, *ra;
    degrees(comm, &in, &out);
    side_t ss = {sbuf, out, 0, sc, sd, NULL, false, st, NULL};
    side_t rs = {rbuf, in, 0, rc, rd, NULL, false, rt, NULL};
    staged_t *s = stage_side(&ss, SEND_ONCE, &sa), *r = stage_side(&rs, RECV_ONCE, &ra);
    return done(req ? REAL(PMPI_Ineighbor_alltoallv)(sa, sc, sd, st, ra, rc, rd, rt, comm, req)
                    : REAL(PMPI_Neighbor_alltoallv)(sa, sc, sd, st, ra, rc, rd, rt, comm),
                req, s, r);
}

int PMPI_Neighbor_alltoallv(const void *sbuf, const int sc[], const int sd[], MPI_Datatype st,
                            void *rbuf, const int rc[], const int rd[], MPI_Datatype rt,
                            MPI_Comm comm)
{
    return neighbor_v(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, NULL);
}

int PMPI_Ineighbor_alltoallv(const void *sbuf, const int sc[], const int sd[], MPI_Datatype st,
                             void *rbuf, const int rc[], const int rd[], MPI_Datatype rt,
                             MPI_Comm comm, MPI_Request *req)
{
    return neighbor_v(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, req);
}

static int neighbor_w(const void *sbuf, const int *sc, const MPI_Aint *sd, const MPI_Datatype *st,
                      void *rbuf, const int *rc, const MPI_Aint *rd, const MPI_Datatype *rt,
                      MPI_Comm comm, MPI_Request *req)
{
    int in, out;
    void *sa, *ra;
    degrees(comm, &in, &out);
    side_t ss = {sbuf, out, 0, sc, NULL, sd, true, MPI_DATATYPE_NULL, st};
    side_t rs = {rbuf, in, 0, rc, NULL, rd, true, MPI_DATATYPE_NULL, rt};
    staged_t *s = stage_side(&ss, SEND_ONCE, &sa), *r = stage_side(&rs, RECV_ONCE, &ra);
    return done(req ? REAL(PMPI_Ineighbor_alltoallw)(sa, sc, sd, st, ra, rc, rd, rt, comm, req)
                    : REAL(PMPI_Neighbor_alltoallw)(sa, sc, sd, st, ra, rc, rd, rt, comm),
                req, s, r);
}

int PMPI_Neighbor_alltoallw(const void *sbuf, const int sc[], const MPI_Aint sd[],
                            const MPI_Datatype st[], void *rbuf, const int rc[],
                            const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm comm)
{
    return neighbor_w(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, NULL);
}

int PMPI_Ineighbor_alltoallw(const void *sbuf, const int sc[], const MPI_Aint sd[],
                             const MPI_Datatype st[], void *rbuf, const int rc[],
                             const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm comm,
                             MPI_Request *req)
{
    return neighbor_w(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, req);
}

/* Allgather(v): @p rcounts NULL for the fixed-count form. */
static int allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                     const int *rcounts, const int *displs, MPI_Datatype rt, MPI_Comm comm,
                     MPI_Request *req)
{
    bool inter;
    int n = peers(comm, &inter);
    side_t rs = {rbuf, n, rcount, rcounts, displs, NULL, false, rt, NULL};
    void *sa = (void *)sbuf, *ra;
    staged_t *s = sbuf == MPI_IN_PLACE ? NULL : stage(sbuf, scount, st, SEND_ONCE, &sa);
    staged_t *r = stage_side(&rs, RECV_ONCE, &ra);
    int rc = rcounts == NULL
                 ? (req ? REAL(PMPI_Iallgather)(sa, scount, st, ra, rcount, rt, comm, req)
                        : REAL(PMPI_Allgather)(sa, scount, st, ra, rcount, rt, comm))
                 : (req ? REAL(PMPI_Iallgatherv)(sa, scount, st, ra, rcounts, displs, rt, comm, req)
                        : REAL(PMPI_Allgatherv)(sa, scount, st, ra, rcounts, displs, rt, comm));
    return done(rc, req, s, r);
}

int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                   MPI_Datatype rt, MPI_Comm comm)
{
    return allgather(sbuf, scount, st, rbuf, rcount, NULL, NULL, rt, comm, NULL);
}

int PMPI_Iallgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                    MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    return allgather(sbuf, scount, st, rbuf, rcount, NULL, NULL, rt, comm, req);
}

int PMPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rc[],
                    const int d[], MPI_Datatype rt, MPI_Comm comm)
{
    return allgather(sbuf, scount, st, rbuf, 0, rc, d, rt, comm, NULL);
}

int PMPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rc[],
                     const int d[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    return allgather(sbuf, scount, st, rbuf, 0, rc, d, rt, comm, req);
}

/* Gather(v): the receive side is the root's; its own send buffer may be MPI_IN_PLACE. */
static int gather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                  const int *rcounts, const int *displs, MPI_Datatype rt, int root, MPI_Comm comm,
                  MPI_Request *req)
{
    bool inter, none;
    int n = peers(comm, &inter), rc;
    bool at_root = rooted(comm, root, inter, &none);
    side_t rs = {rbuf, n, rcount, rcounts, displs, NULL, false, rt, NULL};
    void *sa = (void *)sbuf, *ra = rbuf;
    staged_t *s = NULL, *r = NULL;
    if (!none && !(inter && at_root) && sbuf != MPI_IN_PLACE)
        s = stage(sbuf, scount, st, SEND_ONCE, &sa);
    if (at_root)
        r = stage_side(&rs, RECV_ONCE, &ra);
    rc = rcounts == NULL
             ? (req ? REAL(PMPI_Igather)(sa, scount, st, ra, rcount, rt, root, comm, req)
                    : REAL(PMPI_Gather)(sa, scount, st, ra, rcount, rt, root, comm))
             : (req ? REAL(PMPI_Igatherv)(sa, scount, st, ra, rcounts, displs, rt, root, comm, req)
                    : REAL(PMPI_Gatherv)(sa, scount, st, ra, rcounts, displs, rt, root, comm));
    return done(rc, req, s, r);
}

int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                MPI_Datatype rt, int root, MPI_Comm comm)
{
    return gather(sbuf, scount, st, rbuf, rcount, NULL, NULL, rt, root, comm, NULL);
}

int PMPI_Igather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                 MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    return gather(sbuf, scount, st, rbuf, rcount, NULL, NULL, rt, root, comm, req);
}

int PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rc[],
                 const int d[], MPI_Datatype rt, int root, MPI_Comm comm)
{
    return gather(sbuf, scount, st, rbuf, 0, rc, d, rt, root, comm, NULL);
}

int PMPI_Igatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rc[],
                  const int d[], MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    return gather(sbuf, scount, st, rbuf, 0, rc, d, rt, root, comm, req);
}

/* Scatter(v): the send side is the root's; its own receive buffer may be MPI_IN_PLACE. */
static int scatter(const void *sbuf, int scount, const int *scounts, const int *displs,
                   MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, int root,
                   MPI_Comm comm, MPI_Request *req)
{
    bool inter, none;
    int n = peers(comm, &inter), rc;
    bool at_root = rooted(comm, root, inter, &none);
    side_t ss = {sbuf, n, scount, scounts, displs, NULL, false, st, NULL};
    void *sa = (void *)sbuf, *ra = rbuf;
    staged_t *s = NULL, *r = NULL;
    if (at_root)
        s = stage_side(&ss, SEND_ONCE, &sa);
    if (!none && !(inter && at_root) && rbuf != MPI_IN_PLACE)
        r = stage(rbuf, rcount, rt, RECV_ONCE, &ra);
    rc = scounts == NULL
             ? (req ? REAL(PMPI_Iscatter)(sa, scount, st, ra, rcount, rt, root, comm, req)
                    : REAL(PMPI_Scatter)(sa, scount, st, ra, rcount, rt, root, comm))
             : (req ? REAL(PMPI_Iscatterv)(sa, scounts, displs, st, ra, rcount, rt, root, comm, req)
                    : REAL(PMPI_Scatterv)(sa, scounts, displs, st, ra, rcount, rt, root, comm));
    return done(rc, req, s, r);
}

int PMPI_Scatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                 MPI_Datatype rt, int root, MPI_Comm comm)
{
    return scatter(sbuf, scount, NULL, NULL, st, rbuf, rcount, rt, root, comm, NULL);
}

int PMPI_Iscatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                  MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    return scatter(sbuf, scount, NULL, NULL, st, rbuf, rcount, rt, root, comm, req);
}

int PMPI_Scatterv(const void *sbuf, const int sc[], const int d[], MPI_Datatype st, void *rbuf,
                  int rcount, MPI_Datatype rt, int root, MPI_Comm comm)
{
    return scatter(sbuf, 0, sc, d, st, rbuf, rcount, rt, root, comm, NULL);
}

int PMPI_Iscatterv(const void *sbuf, const int sc[], const int d[], MPI_Datatype st, void *rbuf,
                   int rcount, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    return scatter(sbuf, 0, sc, d, st, rbuf, rcount, rt, root, comm, req);
}

/* Bcast: one buffer, read at the root, written elsewhere; staged as a receive everywhere (the
 * root's copy back writes the bytes it sent). */
static int bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req)
{
    bool inter, none;
    void *arg = buf;
    staged_t *s = NULL;
    peers(comm, &inter);
    rooted(comm, root, inter, &none);
    if (!none)
        s = stage(buf, count, type, RECV_ONCE, &arg);
    return done(req ? REAL(PMPI_Ibcast)(arg, count, type, root, comm, req)
                    : REAL(PMPI_Bcast)(arg, count, type, root, comm),
                req, NULL, s);
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    return bcast(buf, count, type, root, comm, NULL);
}

int PMPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req)
{
    return bcast(buf, count, type, root, comm, req);
}

static int alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                    MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    bool inter;
    int n = peers(comm, &inter);
    void *sa = (void *)sbuf, *ra;
    staged_t *s = sbuf == MPI_IN_PLACE ? NULL : stage(sbuf, n * scount, st, SEND_ONCE, &sa);
    staged_t *r = stage(rbuf, n * rcount, rt, RECV_ONCE, &ra);
    return done(req ? REAL(PMPI_Ialltoall)(sa, scount, st, ra, rcount, rt, comm, req)
                    : REAL(PMPI_Alltoall)(sa, scount, st, ra, rcount, rt, comm),
                req, s, r);
}

int PMPI_Alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                  MPI_Datatype rt, MPI_Comm comm)
{
    return alltoall(sbuf, scount, st, rbuf, rcount, rt, comm, NULL);
}

int PMPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                   MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    return alltoall(sbuf, scount, st, rbuf, rcount, rt, comm, req);
}

/* Neighbor_alltoall (@p gather false: a slice per out-neighbour) and Neighbor_allgather(v)
 * (one send slice; @p rcounts NULL for the fixed-count form). */
static int neighbor(bool gather, const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
                    int rcount, const int *rcounts, const int *displs, MPI_Datatype rt,
                    MPI_Comm comm, MPI_Request *req)
{
    int in, out, rc;
    void *sa, *ra;
    degrees(comm, &in, &out);
    side_t rs = {rbuf, in, rcount, rcounts, displs, NULL, false, rt, NULL};
    staged_t *s = stage(sbuf, gather ? scount : out * scount, st, SEND_ONCE, &sa);
    staged_t *r = stage_side(&rs, RECV_ONCE, &ra);
    if (!gather)
        rc = req ? REAL(PMPI_Ineighbor_alltoall)(sa, scount, st, ra, rcount, rt, comm, req)
                 : REAL(PMPI_Neighbor_alltoall)(sa, scount, st, ra, rcount, rt, comm);
    else if (rcounts == NULL)
        rc = req ? REAL(PMPI_Ineighbor_allgather)(sa, scount, st, ra, rcount, rt, comm, req)
                 : REAL(PMPI_Neighbor_allgather)(sa, scount, st, ra, rcount, rt, comm);
    else
        rc = req ? REAL(PMPI_Ineighbor_allgatherv)(sa, scount, st, ra, rcounts, displs, rt, comm,
                                                   req)
                 : REAL(PMPI_Neighbor_allgatherv)(sa, scount, st, ra, rcounts, displs, rt, comm);
    return done(rc, req, s, r);
}

int PMPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                           MPI_Datatype rt, MPI_Comm comm)
{
    return neighbor(false, sbuf, scount, st, rbuf, rcount, NULL, NULL, rt, comm, NULL);
}

int PMPI_Ineighbor_alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                            MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    return neighbor(false, sbuf, scount, st, rbuf, rcount, NULL, NULL, rt, comm, req);
}

int PMPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                            MPI_Datatype rt, MPI_Comm comm)
{
    return neighbor(true, sbuf, scount, st, rbuf, rcount, NULL, NULL, rt, comm, NULL);
}

int PMPI_Ineighbor_allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                             MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    return neighbor(true, sbuf, scount, st, rbuf, rcount, NULL, NULL, rt, comm, req);
}

int PMPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
                             const int rc[], const int d[], MPI_Datatype rt, MPI_Comm comm)
{
    return neighbor(true, sbuf, scount, st, rbuf, 0, rc, d, rt, comm, NULL);
}

int PMPI_Ineighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
                              const int rc[], const int d[], MPI_Datatype rt, MPI_Comm comm,
                              MPI_Request *req)
{
    return neighbor(true, sbuf, scount, st, rbuf, 0, rc, d, rt, comm, req);
}

/* ---- reductions ------------------------------------------------------------------------------ */

typedef enum { RED, ALLRED, RSCAT, RSCAT_BLOCK, SCAN, EXSCAN } red_t;

/* The input vector and the receive buffer of a reduction, staged where they are on the device:
 * the receive buffer (which holds the input in place) is copied in and back. */
static int reduction(red_t kind, const void *sbuf, void *rbuf, int count, const int *rcounts,
                     MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm, MPI_Request *req)
{
    int n = 1, me = 0, nin = count, nout = count, rc;
    bool inter = false, at_root = true;
    void *sa = (void *)sbuf, *ra = rbuf;
    staged_t *s = NULL, *r = NULL;

    PMPI_Comm_size(comm, &n);
    PMPI_Comm_rank(comm, &me);
    if (kind == RSCAT) {
        nin = 0;
        for (int i = 0; i < n; i++)
            nin += rcounts[i];
        nout = rcounts[me];
    } else if (kind == RSCAT_BLOCK) {
        nin = count * n;
    }
    if (sbuf == MPI_IN_PLACE)
        nout = nin;
    if (kind == RED) {
        bool none;
        peers(comm, &inter);
        at_root = rooted(comm, root, inter, &none);
    }
    if (sbuf != MPI_IN_PLACE)
        s = stage(sbuf, nin, t, SEND_ONCE, &sa);
    if (at_root)
        r = stage(rbuf, nout, t, RECV_ONCE, &ra);
    switch (kind) {
    case RED:
        rc = req ? REAL(PMPI_Ireduce)(sa, ra, count, t, op, root, comm, req)
                 : REAL(PMPI_Reduce)(sa, ra, count, t, op, root, comm);
        break;
    case ALLRED:
        rc = req ? REAL(PMPI_Iallreduce)(sa, ra, count, t, op, comm, req)
                 : REAL(PMPI_Allreduce)(sa, ra, count, t, op, comm);
        break;
    case RSCAT:
        rc = req ? REAL(PMPI_Ireduce_scatter)(sa, ra, rcounts, t, op, comm, req)
                 : REAL(PMPI_Reduce_scatter)(sa, ra, rcounts, t, op, comm);
        break;
    case RSCAT_BLOCK:
        rc = req ? REAL(PMPI_Ireduce_scatter_block)(sa, ra, count, t, op, comm, req)
                 : REAL(PMPI_Reduce_scatter_block)(sa, ra, count, t, op, comm);
        break;
    case SCAN:
        rc = req ? REAL(PMPI_Iscan)(sa, ra, count, t, op, comm, req)
                 : REAL(PMPI_Scan)(sa, ra, count, t, op, comm);
        break;
    default:
        rc = req ? REAL(PMPI_Iexscan)(sa, ra, count, t, op, comm, req)
                 : REAL(PMPI_Exscan)(sa, ra, count, t, op, comm);
        break;
    }
    return done(rc, req, s, r);
}

#define REDUCTION(_name, _iname, _kind)                                                            \
    int _name(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm)   \
    {                                                                                              \
        return reduction(_kind, sbuf, rbuf, count, NULL, t, op, 0, comm, NULL);                    \
    }                                                                                              \
    int _iname(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,  \
               MPI_Request *req)                                                                   \
    {                                                                                              \
        return reduction(_kind, sbuf, rbuf, count, NULL, t, op, 0, comm, req);                     \
    }
REDUCTION(PMPI_Allreduce, PMPI_Iallreduce, ALLRED)
REDUCTION(PMPI_Reduce_scatter_block, PMPI_Ireduce_scatter_block, RSCAT_BLOCK)
REDUCTION(PMPI_Scan, PMPI_Iscan, SCAN)
REDUCTION(PMPI_Exscan, PMPI_Iexscan, EXSCAN)

int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root,
                MPI_Comm comm)
{
    return reduction(RED, sbuf, rbuf, count, NULL, t, op, root, comm, NULL);
}

int PMPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request *req)
{
    return reduction(RED, sbuf, rbuf, count, NULL, t, op, root, comm, req);
}

int PMPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype t,
                        MPI_Op op, MPI_Comm comm)
{
    return reduction(RSCAT, sbuf, rbuf, 0, rcounts, t, op, 0, comm, NULL);
}

int PMPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype t,
                         MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return reduction(RSCAT, sbuf, rbuf, 0, rcounts, t, op, 0, comm, req);
}

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype t, MPI_Op op)
{
    void *ia, *oa;
    staged_t *i = stage(inbuf, count, t, SEND_ONCE, &ia);
    staged_t *o = stage(inoutbuf, count, t, RECV_ONCE, &oa);
    return done(REAL(PMPI_Reduce_local)(ia, oa, count, t, op), NULL, i, o);
}

/* So that a test can tell the stand-in was used: with CUDAAWARE_SHIM_STATS=1, one line on stderr,
 * "cudaaware shim[RANK]: N device buffers staged". */
int PMPI_Finalize(void)
{
    const char *say = getenv("CUDAAWARE_SHIM_STATS");
    int rank = -1;
    if (say != NULL && strcmp(say, "1") == 0) {
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "cudaaware shim[%d]: %ld device buffers staged\n", rank, nstaged);
    }
    return REAL(PMPI_Finalize)();
}
