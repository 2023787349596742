/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point wrappers: sends and receives of every mode, blocking, non-blocking and
 * persistent, Sendrecv, Sendrecv_replace and the matched receives. A call with a device buffer
 * moves packed bytes (src/calls/p2p.c); every other call goes to the system MPI after one pointer
 * query (none on a machine without a CUDA device). Probe, Iprobe, Mprobe and Improbe need no
 * wrapper: the status of a packed message counts the same bytes. */
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "util/common.h"
#include "move/count.h"
#include "calls/p2p.h"
#include "calls/request.h"
#include "calls/send_queue.h"
#include "util/mpierr.h"

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

/* @p queue: the pack may be left running (a non-blocking send the send queue starts). */
static bool send_begin(MPI_Datatype type, const void *buf, int64_t count, int dest, MPI_Comm comm,
                       bool queue, tj_xfer_t *x, int *rc)
{
    const tj_type_info_t *info = tj_interpose_lookup(type);
    bool taken =
        tj_p2p_send_begin(info, type, buf, count, dest, comm, queue, x, rc) != TJ_CALL_PASS;
    tj_table_return(info);
    return taken;
}

static bool recv_begin(MPI_Datatype type, void *buf, int64_t count, int source, MPI_Comm comm,
                       tj_xfer_t *x, int *rc)
{
    const tj_type_info_t *info = tj_interpose_lookup(type);
    bool taken = tj_p2p_recv_begin(info, type, buf, count, source, comm, x, rc) != TJ_CALL_PASS;
    tj_table_return(info);
    return taken;
}

/* Whether typejit moves a send or receive (a device buffer it packs); *rc is then the result of
 * beginning it. False: the wrapper hands the call to the system MPI in the application's form. */
static bool send_take(const void *buf, int64_t count, MPI_Datatype type, int dest, MPI_Comm comm,
                      bool queue, tj_xfer_t *x, int *rc)
{
    return device_calls() && send_begin(type, buf, count, dest, comm, queue, x, rc);
}

static bool recv_take(void *buf, int64_t count, MPI_Datatype type, int source, MPI_Comm comm,
                      tj_xfer_t *x, int *rc)
{
    return device_calls() && recv_begin(type, buf, count, source, comm, x, rc);
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
        int done = tj_p2p_recv_finish(x, st, NULL);
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
    x->persistent = persistent;
    tj_request_add(r, *req, x, persistent);
    return rc;
}

/* ---- the packed bytes in the message -----------------------------------------------------------
 * typejit's own calls of the system MPI move x->bytes of MPI_PACKED: with an int count where it
 * fits, with the large-count form (where the MPI has it) where it does not, whichever form the
 * application called. Each pair is the system MPI's two forms of one call. */
typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
typedef int (*irecv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
#if TJ_HAVE_LARGE
typedef int (*send_c_fn)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm);
typedef int (*isend_c_fn)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*recv_c_fn)(void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
typedef int (*irecv_c_fn)(void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
#define PAIR(_name)                                                                                \
    {                                                                                              \
        PMPI_##_name, PMPI_##_name##_c                                                             \
    }
#else
typedef void *send_c_fn, *isend_c_fn, *recv_c_fn, *irecv_c_fn;
#define PAIR(_name)                                                                                \
    {                                                                                              \
        PMPI_##_name, NULL                                                                         \
    }
#endif
typedef struct {
    send_fn i;
    send_c_fn c;
} send_fns_t;
typedef struct {
    isend_fn i;
    isend_c_fn c;
} isend_fns_t;
typedef struct {
    recv_fn i;
    recv_c_fn c;
} recv_fns_t;
typedef struct {
    irecv_fn i;
    irecv_c_fn c;
} irecv_fns_t;

static const send_fns_t f_send = PAIR(Send), f_ssend = PAIR(Ssend), f_rsend = PAIR(Rsend),
                        f_bsend = PAIR(Bsend);
static const isend_fns_t f_isend = PAIR(Isend), f_issend = PAIR(Issend), f_irsend = PAIR(Irsend),
                         f_ibsend = PAIR(Ibsend), f_send_init = PAIR(Send_init),
                         f_ssend_init = PAIR(Ssend_init), f_rsend_init = PAIR(Rsend_init),
                         f_bsend_init = PAIR(Bsend_init);
static const recv_fns_t f_recv = PAIR(Recv);
static const irecv_fns_t f_irecv = PAIR(Irecv), f_recv_init = PAIR(Recv_init);

/* The message's count is int-sized unless the MPI has the large-count forms (tj_p2p_*_begin refuses
 * a larger message there), so the `_c` branch exists only where its function does. */
#if TJ_HAVE_LARGE
#define PACKED_CALL(_fns, _x, ...)                                                                 \
    (tj_count_fits_int((_x)->bytes)                                                                \
         ? (_fns)->i((_x)->message, (int)(_x)->bytes, MPI_PACKED, __VA_ARGS__)                     \
         : (_fns)->c((_x)->message, (MPI_Count)(_x)->bytes, MPI_PACKED, __VA_ARGS__))
#else
#define PACKED_CALL(_fns, _x, ...)                                                                 \
    (_fns)->i((_x)->message, (int)(_x)->bytes, MPI_PACKED, __VA_ARGS__)
#endif

/* ---- the shared implementations (64-bit counts) -------------------------------------------- */

static int blocking_send(const send_fns_t *fns, tj_xfer_t *x, int rc, int dest, int tag,
                         MPI_Comm comm)
{
    if (rc != MPI_SUCCESS)
        return fail(comm, rc);
    rc = PACKED_CALL(fns, x, dest, tag, comm);
    tj_p2p_end(x);
    return rc;
}

/* A non-blocking send whose pack still runs: the system MPI's persistent form of the same mode
 * (@p init) made on the packed staging now, started by the send queue once the pack is done. */
static int queued_send(const isend_fns_t *init, tj_xfer_t *x, int dest, int tag, MPI_Comm comm,
                       MPI_Request *req)
{
    tj_request_t *r;
    int rc;

    if ((r = reserve(x)) == NULL)
        return fail(comm, MPI_ERR_NO_MEM);
    if ((rc = PACKED_CALL(init, x, dest, tag, comm, req)) != MPI_SUCCESS) {
        tj_request_unreserve(r);
        tj_p2p_end(x);
        return rc;
    }
    tj_request_add_queued(r, *req, x);
    return MPI_SUCCESS;
}

static int nonblocking_send(const isend_fns_t *fns, const isend_fns_t *init, bool persistent,
                            tj_xfer_t *x, int rc, int dest, int tag, MPI_Comm comm,
                            MPI_Request *req)
{
    tj_request_t *r;

    if (rc == MPI_SUCCESS && x->event != NULL)
        return queued_send(init, x, dest, tag, comm, req);
    /* Sent now: after the queued sends to the same destination. */
    if (rc == MPI_SUCCESS && !persistent)
        tj_send_queue_flush_to(comm, dest);

    /* A persistent send repacks at every Start: it keeps the type, which the application may
     * free after the init. */
    if (rc == MPI_SUCCESS && persistent && (rc = tj_p2p_keep_type(x)) != MPI_SUCCESS)
        tj_p2p_end(x);
    if (rc != MPI_SUCCESS)
        return fail(comm, rc);
    if ((r = reserve(x)) == NULL)
        return fail(comm, MPI_ERR_NO_MEM);
    return tracked(r, PACKED_CALL(fns, x, dest, tag, comm, req), req, x, persistent);
}

static int blocking_recv(tj_xfer_t *x, int rc, int source, int tag, MPI_Comm comm,
                         MPI_Status *status)
{
    MPI_Status local, *st = status_for(status, &local);

    if (rc != MPI_SUCCESS)
        return fail(comm, rc);
    rc = PACKED_CALL(&f_recv, x, source, tag, comm, st);
    return recv_end(x, rc, st);
}

static int nonblocking_recv(const irecv_fns_t *fns, bool persistent, tj_xfer_t *x, int rc,
                            int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    tj_request_t *r;

    if (rc != MPI_SUCCESS)
        return fail(comm, rc);
    if ((r = reserve(x)) == NULL)
        return fail(comm, MPI_ERR_NO_MEM);
    return tracked(r, PACKED_CALL(fns, x, source, tag, comm, req), req, x, persistent);
}

/* Each wrapper in its int and large-count forms, from one definition: (suffix, count type).
 * On a machine without a device every call goes straight to the system MPI: one load and a
 * tail call, so that interposition costs next to nothing there. */
#define PASS_IF_NO_DEVICE(_call)                                                                   \
    do {                                                                                           \
        if (TJ_LIKELY(tj_gpu_absent()))                                                            \
            return _call;                                                                          \
    } while (0)
#define FORMS(_m, ...) _m(, int, __VA_ARGS__) TJ_IF_LARGE(_m(_c, MPI_Count, __VA_ARGS__))

#define BLOCKING_SEND(_s, _cnt, _name, _fns)                                                       \
    int TJ_WRAPPER(MPI_##_name##_s)(const void *buf, _cnt count, MPI_Datatype type, int dest,      \
                                    int tag, MPI_Comm comm)                                        \
    {                                                                                              \
        tj_xfer_t x;                                                                               \
        int rc;                                                                                    \
        PASS_IF_NO_DEVICE(PMPI_##_name##_s(buf, count, type, dest, tag, comm));                    \
        if (!send_take(buf, count, type, dest, comm, false, &x, &rc))                              \
            return PMPI_##_name##_s(buf, count, type, dest, tag, comm);                            \
        return blocking_send(&_fns, &x, rc, dest, tag, comm);                                      \
    }
FORMS(BLOCKING_SEND, Send, f_send)
FORMS(BLOCKING_SEND, Ssend, f_ssend)
FORMS(BLOCKING_SEND, Rsend, f_rsend)
FORMS(BLOCKING_SEND, Bsend, f_bsend)

/* @p _init: the persistent form of the same mode, for a send the send queue starts. A send of a
 * host buffer goes after the queued sends to its destination. */
#define NONBLOCKING_SEND(_s, _cnt, _name, _fns, _init, _persistent)                                \
    int TJ_WRAPPER(MPI_##_name##_s)(const void *buf, _cnt count, MPI_Datatype type, int dest,      \
                                    int tag, MPI_Comm comm, MPI_Request *req)                      \
    {                                                                                              \
        tj_xfer_t x;                                                                               \
        int rc;                                                                                    \
        PASS_IF_NO_DEVICE(PMPI_##_name##_s(buf, count, type, dest, tag, comm, req));               \
        if (!send_take(buf, count, type, dest, comm, !(_persistent) && tj_send_queue_enabled(),    \
                       &x, &rc)) {                                                                 \
            if (!(_persistent))                                                                    \
                tj_send_queue_flush_to(comm, dest);                                                \
            return PMPI_##_name##_s(buf, count, type, dest, tag, comm, req);                       \
        }                                                                                          \
        return nonblocking_send(&_fns, &_init, _persistent, &x, rc, dest, tag, comm, req);         \
    }
FORMS(NONBLOCKING_SEND, Isend, f_isend, f_send_init, false)
FORMS(NONBLOCKING_SEND, Issend, f_issend, f_ssend_init, false)
FORMS(NONBLOCKING_SEND, Irsend, f_irsend, f_rsend_init, false)
FORMS(NONBLOCKING_SEND, Ibsend, f_ibsend, f_bsend_init, false)
FORMS(NONBLOCKING_SEND, Send_init, f_send_init, f_send_init, true)
FORMS(NONBLOCKING_SEND, Ssend_init, f_ssend_init, f_ssend_init, true)
FORMS(NONBLOCKING_SEND, Rsend_init, f_rsend_init, f_rsend_init, true)
FORMS(NONBLOCKING_SEND, Bsend_init, f_bsend_init, f_bsend_init, true)

#define RECV(_s, _cnt, _unused)                                                                    \
    int TJ_WRAPPER(MPI_Recv##_s)(void *buf, _cnt count, MPI_Datatype type, int source, int tag,    \
                                 MPI_Comm comm, MPI_Status *status)                                \
    {                                                                                              \
        tj_xfer_t x;                                                                               \
        int rc;                                                                                    \
        PASS_IF_NO_DEVICE(PMPI_Recv##_s(buf, count, type, source, tag, comm, status));             \
        if (!recv_take(buf, count, type, source, comm, &x, &rc))                                   \
            return PMPI_Recv##_s(buf, count, type, source, tag, comm, status);                     \
        return blocking_recv(&x, rc, source, tag, comm, status);                                   \
    }
FORMS(RECV, -)

#define NONBLOCKING_RECV(_s, _cnt, _name, _fns, _persistent)                                       \
    int TJ_WRAPPER(MPI_##_name##_s)(void *buf, _cnt count, MPI_Datatype type, int source, int tag, \
                                    MPI_Comm comm, MPI_Request *req)                               \
    {                                                                                              \
        tj_xfer_t x;                                                                               \
        int rc;                                                                                    \
        PASS_IF_NO_DEVICE(PMPI_##_name##_s(buf, count, type, source, tag, comm, req));             \
        if (!recv_take(buf, count, type, source, comm, &x, &rc))                                   \
            return PMPI_##_name##_s(buf, count, type, source, tag, comm, req);                     \
        return nonblocking_recv(&_fns, _persistent, &x, rc, source, tag, comm, req);               \
    }
FORMS(NONBLOCKING_RECV, Irecv, f_irecv, false)
FORMS(NONBLOCKING_RECV, Recv_init, f_recv_init, true)

/* Both sides of an exchange begun, *s and *r whether each is typejit's (neither when typejit
 * takes no device calls); on an MPI error what was begun is ended. */
static int exchange_begin(MPI_Datatype stype, const void *sbuf, int64_t scount, int dest,
                          MPI_Datatype rtype, void *rbuf, int64_t rcount, int source, MPI_Comm comm,
                          tj_xfer_t *xs, tj_xfer_t *xr, bool *s, bool *r)
{
    int rc = MPI_SUCCESS;

    *s = *r = false;
    if (!device_calls())
        return MPI_SUCCESS;
    *s = send_begin(stype, sbuf, scount, dest, comm, false, xs, &rc);
    if (*s && rc != MPI_SUCCESS)
        return rc;
    *r = recv_begin(rtype, rbuf, rcount, source, comm, xr, &rc);
    if (*r && rc != MPI_SUCCESS) {
        if (*s)
            tj_p2p_end(xs);
        return rc;
    }
    return MPI_SUCCESS;
}

/* Sendrecv: either side may be typejit's; a side that is not goes to the system MPI as the
 * application gave it. False: neither side is typejit's. */
static bool sendrecv_take(const void *sbuf, int64_t scount, MPI_Datatype stype, int dest, int stag,
                          void *rbuf, int64_t rcount, MPI_Datatype rtype, int source, int rtag,
                          MPI_Comm comm, MPI_Status *status, int *result)
{
    MPI_Status local, *st = status_for(status, &local);
    tj_xfer_t xs, xr;
    bool s, r;
    int rc = exchange_begin(stype, sbuf, scount, dest, rtype, rbuf, rcount, source, comm, &xs, &xr,
                            &s, &r);
    if (rc != MPI_SUCCESS)
        return *result = fail(comm, rc), true;
    if (!s && !r)
        return false;
    rc = tj_count_sendrecv(s ? xs.message : sbuf, s ? xs.bytes : scount, s ? MPI_PACKED : stype,
                           dest, stag, r ? xr.message : rbuf, r ? xr.bytes : rcount,
                           r ? MPI_PACKED : rtype, source, rtag, comm, st);
    if (s)
        tj_p2p_end(&xs);
    *result = r ? recv_end(&xr, rc, st) : rc;
    return true;
}

#define SENDRECV(_s, _cnt, _unused)                                                                \
    int TJ_WRAPPER(MPI_Sendrecv##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype, int dest,  \
                                     int stag, void *rbuf, _cnt rcount, MPI_Datatype rtype,        \
                                     int source, int rtag, MPI_Comm comm, MPI_Status *status)      \
    {                                                                                              \
        int rc;                                                                                    \
        if (sendrecv_take(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,      \
                          comm, status, &rc))                                                      \
            return rc;                                                                             \
        return PMPI_Sendrecv##_s(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source,     \
                                 rtag, comm, status);                                              \
    }
FORMS(SENDRECV, -)

static bool sendrecv_replace_take(void *buf, int64_t count, MPI_Datatype type, int dest, int stag,
                                  int source, int rtag, MPI_Comm comm, MPI_Status *status,
                                  int *result)
{
    MPI_Status local, *st = status_for(status, &local);
    tj_xfer_t xs, xr;
    bool s, r;
    /* Both directions of the one buffer: packed out first, unpacked after the exchange. */
    int rc =
        exchange_begin(type, buf, count, dest, type, buf, count, source, comm, &xs, &xr, &s, &r);
    if (rc != MPI_SUCCESS)
        return *result = fail(comm, rc), true;
    if (!s && !r)
        return false;
    if (!r) {
        /* Nothing arrives into typejit's hands (MPI_PROC_NULL source): the send side alone. */
        rc = tj_count_sendrecv(xs.message, xs.bytes, MPI_PACKED, dest, stag, NULL, 0, MPI_BYTE,
                               source, rtag, comm, status);
        tj_p2p_end(&xs);
        return *result = rc, true;
    }
    rc = tj_count_sendrecv(s ? xs.message : buf, s ? xs.bytes : 0, s ? MPI_PACKED : MPI_BYTE, dest,
                           stag, xr.message, xr.bytes, MPI_PACKED, source, rtag, comm, st);
    if (s)
        tj_p2p_end(&xs);
    *result = recv_end(&xr, rc, st);
    return true;
}

#define SENDRECV_REPLACE(_s, _cnt, _unused)                                                        \
    int TJ_WRAPPER(MPI_Sendrecv_replace##_s)(void *buf, _cnt count, MPI_Datatype type, int dest,   \
                                             int stag, int source, int rtag, MPI_Comm comm,        \
                                             MPI_Status *status)                                   \
    {                                                                                              \
        int rc;                                                                                    \
        if (sendrecv_replace_take(buf, count, type, dest, stag, source, rtag, comm, status, &rc))  \
            return rc;                                                                             \
        return PMPI_Sendrecv_replace##_s(buf, count, type, dest, stag, source, rtag, comm,         \
                                         status);                                                  \
    }
FORMS(SENDRECV_REPLACE, -)

/* The matched receives: a message handle that names a real message, on a device buffer. */
static bool matched_take(void *buf, int64_t count, MPI_Datatype type, const MPI_Message *message,
                         tj_xfer_t *x, int *rc)
{
    return device_calls() && message != NULL && *message != MPI_MESSAGE_NO_PROC &&
           *message != MPI_MESSAGE_NULL && recv_begin(type, buf, count, 0, MPI_COMM_SELF, x, rc);
}

#if TJ_HAVE_LARGE
typedef int (*mrecv_c_fn)(void *, MPI_Count, MPI_Datatype, MPI_Message *, MPI_Status *);
typedef int (*imrecv_c_fn)(void *, MPI_Count, MPI_Datatype, MPI_Message *, MPI_Request *);
#else
typedef void *mrecv_c_fn, *imrecv_c_fn;
#endif
static const struct {
    int (*i)(void *, int, MPI_Datatype, MPI_Message *, MPI_Status *);
    mrecv_c_fn c;
} f_mrecv = PAIR(Mrecv);
static const struct {
    int (*i)(void *, int, MPI_Datatype, MPI_Message *, MPI_Request *);
    imrecv_c_fn c;
} f_imrecv = PAIR(Imrecv);

/* The matched receive once begun: blocking, the unpack done here. */
static int mrecv_finish(tj_xfer_t *x, MPI_Message *message, MPI_Status *status)
{
    MPI_Status local, *st = status_for(status, &local);

    return recv_end(x, PACKED_CALL(&f_mrecv, x, message, st), st);
}

/* Non-blocking: the unpack done at completion. */
static int imrecv_finish(tj_xfer_t *x, MPI_Message *message, MPI_Request *req)
{
    tj_request_t *r = reserve(x);

    if (r == NULL)
        return fail(MPI_COMM_SELF, MPI_ERR_NO_MEM);
    return tracked(r, PACKED_CALL(&f_imrecv, x, message, req), req, x, false);
}

/* Both matched receives: (suffix, count type, name, type and name of the last parameter, what
 * finishes the call). */
#define MATCHED_RECV(_s, _cnt, _name, _last_t, _last, _finish)                                     \
    int TJ_WRAPPER(MPI_##_name##_s)(void *buf, _cnt count, MPI_Datatype type,                      \
                                    MPI_Message *message, _last_t _last)                           \
    {                                                                                              \
        tj_xfer_t x;                                                                               \
        int rc;                                                                                    \
        if (!matched_take(buf, count, type, message, &x, &rc))                                     \
            return PMPI_##_name##_s(buf, count, type, message, _last);                             \
        if (rc != MPI_SUCCESS)                                                                     \
            return fail(MPI_COMM_SELF, rc);                                                        \
        return _finish(&x, message, _last);                                                        \
    }
FORMS(MATCHED_RECV, Mrecv, MPI_Status *, status, mrecv_finish)
FORMS(MATCHED_RECV, Imrecv, MPI_Request *, req, imrecv_finish)
