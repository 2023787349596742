/* Point-to-point wrappers: sends and receives of every mode, blocking, non-blocking and
 * persistent, Sendrecv, Sendrecv_replace and the matched receives. A call with a device buffer
 * moves packed bytes (src/send/p2p.c); every other call goes to the system MPI after one pointer
 * query (none on a machine without a CUDA device). Probe, Iprobe, Mprobe and Improbe need no
 * wrapper: the status of a packed message counts the same bytes. */
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "util/common.h"
#include "send/p2p.h"
#include "send/request.h"
#include "util/mpierr.h"

/* On a machine without a device every call goes straight to the system MPI: one load and a
 * tail call, so that interposition costs next to nothing there. */
#define PASS_IF_NO_DEVICE(_call)                                                                   \
    do {                                                                                           \
        if (TJ_LIKELY(tj_gpu_absent()))                                                            \
            return _call;                                                                          \
    } while (0)

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

/* Errors typejit itself detects go through the communicator's error handler, as the system
 * MPI's do. */
static int fail(MPI_Comm comm, int rc)
{
    return tj_mpi_raise(comm, rc);
}

/* Whether a call may be typejit's at all: interposition active and a device present. Once the
 * driver is known to have no device, one load answers. */
static bool device_calls(void)
{
    return !tj_gpu_absent() && tj_interpose_active() && tj_gpu_available();
}

static bool send_begin(MPI_Datatype type, const void *buf, int count, int dest, MPI_Comm comm,
                       tj_xfer_t *x, int *rc)
{
    tj_type_info_t info;
    bool known = tj_interpose_lookup(type, &info);
    return tj_p2p_send_begin(known ? &info : NULL, type, buf, count, dest, comm, x, rc);
}

static bool recv_begin(MPI_Datatype type, void *buf, int count, int source, MPI_Comm comm,
                       tj_xfer_t *x, int *rc)
{
    tj_type_info_t info;
    bool known = tj_interpose_lookup(type, &info);
    return tj_p2p_recv_begin(known ? &info : NULL, type, buf, count, source, comm, x, rc);
}

/* The status a call hands to the system MPI: the application's own, so that the system MPI
 * alone decides what is written there (a single-completion call leaves MPI_ERROR as it was),
 * or @p local when the application ignores it (typejit still needs the count). */
static MPI_Status *status_for(MPI_Status *status, MPI_Status *local)
{
    return status != MPI_STATUS_IGNORE ? status : local;
}

/* Finish a blocking receive that the system MPI completed with @p rc and status @p st (a
 * truncated message is unpacked as far as it was stored, and still reported). */
static int recv_end(tj_xfer_t *x, int rc, const MPI_Status *st)
{
    if (rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE) {
        int done = tj_p2p_recv_finish(x, st);
        if (done != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = fail(x->comm, done);
    }
    tj_p2p_end(x);
    return rc;
}

/* The record of a non-blocking or persistent call's request, taken before the system MPI starts
 * the call: once started nothing may fail, or the call would have to be completed here
 * (blocking a non-blocking call) or dropped. NULL (the transfer released): the caller fails the
 * call with MPI_ERR_NO_MEM. */
static tj_request_t *reserve(tj_xfer_t *x)
{
    tj_request_t *r = tj_request_reserve();
    if (r == NULL)
        tj_p2p_end(x);
    return r;
}

/* After the system MPI's call returned @p rc: remember the request in @p r, or give both back. */
static int tracked(tj_request_t *r, int rc, MPI_Request *req, tj_xfer_t *x, bool persistent)
{
    if (rc != MPI_SUCCESS) {
        tj_request_unreserve(r);
        tj_p2p_end(x);
        return rc;
    }
    tj_request_add(r, *req, x, persistent);
    return rc;
}

static int blocking_send(send_fn fn, const void *buf, int count, MPI_Datatype type, int dest,
                         int tag, MPI_Comm comm)
{
    tj_xfer_t x;
    int rc;

    if (!device_calls() || !send_begin(type, buf, count, dest, comm, &x, &rc))
        return fn(buf, count, type, dest, tag, comm);
    if (rc != MPI_SUCCESS)
        return fail(comm, rc);
    rc = fn(x.wire, (int)x.bytes, MPI_PACKED, dest, tag, comm);
    tj_p2p_end(&x);
    return rc;
}

static int nonblocking_send(isend_fn fn, bool persistent, const void *buf, int count,
                            MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    tj_request_t *r;
    tj_xfer_t x;
    int rc;

    if (!device_calls() || !send_begin(type, buf, count, dest, comm, &x, &rc))
        return fn(buf, count, type, dest, tag, comm, req);
    /* A persistent send repacks at every Start: it keeps the type, which the application may
     * free after the init. */
    if (rc == MPI_SUCCESS && persistent && (rc = tj_p2p_keep_type(&x)) != MPI_SUCCESS)
        tj_p2p_end(&x);
    if (rc != MPI_SUCCESS)
        return fail(comm, rc);
    if ((r = reserve(&x)) == NULL)
        return fail(comm, MPI_ERR_NO_MEM);
    return tracked(r, fn(x.wire, (int)x.bytes, MPI_PACKED, dest, tag, comm, req), req, &x,
                   persistent);
}

int TJ_WRAPPER(MPI_Send)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm)
{
    PASS_IF_NO_DEVICE(PMPI_Send(buf, count, type, dest, tag, comm));
    return blocking_send(PMPI_Send, buf, count, type, dest, tag, comm);
}

int TJ_WRAPPER(MPI_Ssend)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                          MPI_Comm comm)
{
    PASS_IF_NO_DEVICE(PMPI_Ssend(buf, count, type, dest, tag, comm));
    return blocking_send(PMPI_Ssend, buf, count, type, dest, tag, comm);
}

int TJ_WRAPPER(MPI_Rsend)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                          MPI_Comm comm)
{
    PASS_IF_NO_DEVICE(PMPI_Rsend(buf, count, type, dest, tag, comm));
    return blocking_send(PMPI_Rsend, buf, count, type, dest, tag, comm);
}

int TJ_WRAPPER(MPI_Bsend)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                          MPI_Comm comm)
{
    PASS_IF_NO_DEVICE(PMPI_Bsend(buf, count, type, dest, tag, comm));
    return blocking_send(PMPI_Bsend, buf, count, type, dest, tag, comm);
}

int TJ_WRAPPER(MPI_Isend)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                          MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_NO_DEVICE(PMPI_Isend(buf, count, type, dest, tag, comm, req));
    return nonblocking_send(PMPI_Isend, false, buf, count, type, dest, tag, comm, req);
}

int TJ_WRAPPER(MPI_Issend)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_NO_DEVICE(PMPI_Issend(buf, count, type, dest, tag, comm, req));
    return nonblocking_send(PMPI_Issend, false, buf, count, type, dest, tag, comm, req);
}

int TJ_WRAPPER(MPI_Irsend)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_NO_DEVICE(PMPI_Irsend(buf, count, type, dest, tag, comm, req));
    return nonblocking_send(PMPI_Irsend, false, buf, count, type, dest, tag, comm, req);
}

int TJ_WRAPPER(MPI_Ibsend)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_NO_DEVICE(PMPI_Ibsend(buf, count, type, dest, tag, comm, req));
    return nonblocking_send(PMPI_Ibsend, false, buf, count, type, dest, tag, comm, req);
}

int TJ_WRAPPER(MPI_Send_init)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                              MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_NO_DEVICE(PMPI_Send_init(buf, count, type, dest, tag, comm, req));
    return nonblocking_send(PMPI_Send_init, true, buf, count, type, dest, tag, comm, req);
}

int TJ_WRAPPER(MPI_Ssend_init)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                               MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_NO_DEVICE(PMPI_Ssend_init(buf, count, type, dest, tag, comm, req));
    return nonblocking_send(PMPI_Ssend_init, true, buf, count, type, dest, tag, comm, req);
}

int TJ_WRAPPER(MPI_Rsend_init)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                               MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_NO_DEVICE(PMPI_Rsend_init(buf, count, type, dest, tag, comm, req));
    return nonblocking_send(PMPI_Rsend_init, true, buf, count, type, dest, tag, comm, req);
}

int TJ_WRAPPER(MPI_Bsend_init)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                               MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_NO_DEVICE(PMPI_Bsend_init(buf, count, type, dest, tag, comm, req));
    return nonblocking_send(PMPI_Bsend_init, true, buf, count, type, dest, tag, comm, req);
}

int TJ_WRAPPER(MPI_Recv)(void *buf, int count, MPI_Datatype type, int source, int tag,
                         MPI_Comm comm, MPI_Status *status)
{
    MPI_Status local, *st = status_for(status, &local);
    tj_xfer_t x;
    int rc;

    PASS_IF_NO_DEVICE(PMPI_Recv(buf, count, type, source, tag, comm, status));
    if (!device_calls() || !recv_begin(type, buf, count, source, comm, &x, &rc))
        return PMPI_Recv(buf, count, type, source, tag, comm, status);
    if (rc != MPI_SUCCESS)
        return fail(comm, rc);
    rc = PMPI_Recv(x.wire, (int)x.bytes, MPI_PACKED, source, tag, comm, st);
    return recv_end(&x, rc, st);
}

static int nonblocking_recv(bool persistent, void *buf, int count, MPI_Datatype type, int source,
                            int tag, MPI_Comm comm, MPI_Request *req)
{
    tj_request_t *r;
    tj_xfer_t x;
    int rc;

    if (!device_calls() || !recv_begin(type, buf, count, source, comm, &x, &rc))
        return persistent ? PMPI_Recv_init(buf, count, type, source, tag, comm, req)
                          : PMPI_Irecv(buf, count, type, source, tag, comm, req);
    if (rc != MPI_SUCCESS)
        return fail(comm, rc);
    if ((r = reserve(&x)) == NULL)
        return fail(comm, MPI_ERR_NO_MEM);
    return tracked(r,
                   persistent
                       ? PMPI_Recv_init(x.wire, (int)x.bytes, MPI_PACKED, source, tag, comm, req)
                       : PMPI_Irecv(x.wire, (int)x.bytes, MPI_PACKED, source, tag, comm, req),
                   req, &x, persistent);
}

int TJ_WRAPPER(MPI_Irecv)(void *buf, int count, MPI_Datatype type, int source, int tag,
                          MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_NO_DEVICE(PMPI_Irecv(buf, count, type, source, tag, comm, req));
    return nonblocking_recv(false, buf, count, type, source, tag, comm, req);
}

int TJ_WRAPPER(MPI_Recv_init)(void *buf, int count, MPI_Datatype type, int source, int tag,
                              MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_NO_DEVICE(PMPI_Recv_init(buf, count, type, source, tag, comm, req));
    return nonblocking_recv(true, buf, count, type, source, tag, comm, req);
}

int TJ_WRAPPER(MPI_Sendrecv)(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                             void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                             MPI_Comm comm, MPI_Status *status)
{
    MPI_Status local, *st = status_for(status, &local);
    tj_xfer_t xs, xr;
    bool s, r;
    int rc = MPI_SUCCESS;

    if (!device_calls())
        return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
                             comm, status);
    s = send_begin(stype, sbuf, scount, dest, comm, &xs, &rc);
    if (s && rc != MPI_SUCCESS)
        return fail(comm, rc);
    r = recv_begin(rtype, rbuf, rcount, source, comm, &xr, &rc);
    if (r && rc != MPI_SUCCESS) {
        if (s)
            tj_p2p_end(&xs);
        return fail(comm, rc);
    }
    if (!s && !r)
        return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
                             comm, status);
    rc = PMPI_Sendrecv(s ? xs.wire : sbuf, s ? (int)xs.bytes : scount, s ? MPI_PACKED : stype, dest,
                       stag, r ? xr.wire : rbuf, r ? (int)xr.bytes : rcount, r ? MPI_PACKED : rtype,
                       source, rtag, comm, st);
    if (s)
        tj_p2p_end(&xs);
    return r ? recv_end(&xr, rc, st) : rc;
}

int TJ_WRAPPER(MPI_Sendrecv_replace)(void *buf, int count, MPI_Datatype type, int dest, int stag,
                                     int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Status local, *st = status_for(status, &local);
    tj_xfer_t xs, xr;
    bool s, r;
    int rc = MPI_SUCCESS;

    if (!device_calls())
        return PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status);
    /* Both directions of the one buffer: packed out first, unpacked after the exchange. */
    s = send_begin(type, buf, count, dest, comm, &xs, &rc);
    if (s && rc != MPI_SUCCESS)
        return fail(comm, rc);
    r = recv_begin(type, buf, count, source, comm, &xr, &rc);
    if (r && rc != MPI_SUCCESS) {
        if (s)
            tj_p2p_end(&xs);
        return fail(comm, rc);
    }
    if (!s && !r)
        return PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status);
    if (!r) {
        /* Nothing arrives into typejit's hands (MPI_PROC_NULL source): the send side alone. */
        rc = PMPI_Sendrecv(xs.wire, (int)xs.bytes, MPI_PACKED, dest, stag, NULL, 0, MPI_BYTE,
                           source, rtag, comm, status);
        tj_p2p_end(&xs);
        return rc;
    }
    rc = PMPI_Sendrecv(s ? xs.wire : buf, s ? (int)xs.bytes : 0, s ? MPI_PACKED : MPI_BYTE, dest,
                       stag, xr.wire, (int)xr.bytes, MPI_PACKED, source, rtag, comm, st);
    if (s)
        tj_p2p_end(&xs);
    return recv_end(&xr, rc, st);
}

int TJ_WRAPPER(MPI_Mrecv)(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                          MPI_Status *status)
{
    MPI_Status local, *st = status_for(status, &local);
    tj_xfer_t x;
    int rc;

    if (!device_calls() || message == NULL || *message == MPI_MESSAGE_NO_PROC ||
        *message == MPI_MESSAGE_NULL || !recv_begin(type, buf, count, 0, MPI_COMM_SELF, &x, &rc))
        return PMPI_Mrecv(buf, count, type, message, status);
    if (rc != MPI_SUCCESS)
        return fail(MPI_COMM_SELF, rc);
    rc = PMPI_Mrecv(x.wire, (int)x.bytes, MPI_PACKED, message, st);
    return recv_end(&x, rc, st);
}

int TJ_WRAPPER(MPI_Imrecv)(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                           MPI_Request *req)
{
    tj_request_t *r;
    tj_xfer_t x;
    int rc;

    if (!device_calls() || message == NULL || *message == MPI_MESSAGE_NO_PROC ||
        *message == MPI_MESSAGE_NULL || !recv_begin(type, buf, count, 0, MPI_COMM_SELF, &x, &rc))
        return PMPI_Imrecv(buf, count, type, message, req);
    if (rc != MPI_SUCCESS)
        return fail(MPI_COMM_SELF, rc);
    if ((r = reserve(&x)) == NULL)
        return fail(MPI_COMM_SELF, MPI_ERR_NO_MEM);
    return tracked(r, PMPI_Imrecv(x.wire, (int)x.bytes, MPI_PACKED, message, req), req, &x, false);
}
