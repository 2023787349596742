/* A CUDA-aware MPI for the emu tests: preloaded after libtypejit.so, it stands in front of the
 * system MPI's point-to-point calls (the PMPI_* names typejit calls) and lets them take buffers
 * in device memory of the CPU-only test driver, as a CUDA-aware MPI takes GPU memory. It stages
 * through host memory: a send copies the buffer's footprint to the host before the system MPI
 * sees it (at every Start for a persistent send), and a receive copies the footprint to the host,
 * receives there, and copies it back when the request completes, so bytes the typemap does not
 * touch stay as they were. MPIX_Query_cuda_support says yes, so typejit's `device` method, which
 * hands the MPI device staging, runs in CI. Test code only: no collectives, and host staging is
 * leaked for sends whose request is freed while active. */
#include <cuda.h>
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
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
    return cu.pointer_attribute(ctx, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)p) ==
           CUDA_SUCCESS;
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

/* Stage @p count objects of @p type at @p buf when its footprint starts in device memory: a host
 * copy of the footprint, and in *arg the buffer argument that points into it. NULL otherwise
 * (the call goes to the system MPI as it is). */
static staged_t *stage(const void *buf, int count, MPI_Datatype type, use_t use, void **arg)
{
    MPI_Aint tlb, text, lb, ext;
    int64_t reach, lo, span;
    CUcontext ctx;
    staged_t *s;

    *arg = (void *)buf;
    if (count <= 0 || buf == NULL || type == MPI_DATATYPE_NULL ||
        PMPI_Type_get_true_extent(type, &tlb, &text) != MPI_SUCCESS ||
        PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS || text <= 0)
        return NULL;
    reach = (int64_t)(count - 1) * ext;
    lo = tlb + (reach < 0 ? reach : 0);
    span = text + (reach < 0 ? -reach : reach);
    if (!on_device((const char *)buf + lo, &ctx))
        return NULL;
    s = calloc(1, sizeof(*s));
    if (s == NULL || (s->host = malloc((size_t)span)) == NULL)
        abort();
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
 * a one-time record ends. */
static void completed(MPI_Request req)
{
    staged_t *s;
    if (req == MPI_REQUEST_NULL || (s = find(req, false)) == NULL)
        return;
    if (s->use == RECV_ONCE || s->use == RECV_PERSISTENT)
        copy(s, false);
    if (s->use == SEND_ONCE || s->use == RECV_ONCE)
        drop(find(req, true));
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
    int rc = REAL(PMPI_Sendrecv)(sarg, scount, stype, dest, stag, rarg, rcount, rtype, source,
                                 rtag, comm, status);
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
    staged_t *s;
    /* Complete but not freed: the bytes are due now; the Wait that frees it copies again. */
    if (*flag && (s = find(req, false)) != NULL && (s->use == RECV_ONCE || s->use == RECV_PERSISTENT))
        copy(s, false);
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
