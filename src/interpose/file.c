/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI-IO wrappers: every read and write form (blocking, non-blocking, individual, shared and
 * ordered file pointers, explicit offsets, split collectives). A device buffer with an MPI that
 * is not CUDA-aware is staged exactly through host memory (src/calls/staged.c): a write's bytes
 * are read from the device first; a read's are written back when the call, the Wait or Test of a
 * non-blocking one, or the _end of a split collective completes it. Every other call goes to the
 * system MPI after one pointer query (none on a machine without a device). */
#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "move/model.h"
#include "calls/file_split.h"
#include "calls/staged.h"
#include "util/log.h"
#include "util/mpierr.h"

/* Stage `count` objects of @p type at @p buf for @p fn when they are on the device and the MPI
 * needs it (@p out: the MPI writes them; @p keep: the call completes later). Errors typejit
 * detects go through the file's error handler. */
static tj_call_result_t begin(const char *fn, MPI_File fh, const void *buf, int64_t count,
                              MPI_Datatype type, bool out, bool keep, tj_staged_t **s, int *rc)
{
    tj_staged_buf_t b = {buf, count, type, NULL, out};
    tj_call_result_t r;

    if (!tj_interpose_device_calls() || tj_model_cuda_aware())
        return TJ_CALL_PASS;
    b.info = tj_interpose_lookup(type);
    if ((r = tj_staged_begin(fn, 1, &b, keep, s, rc)) == TJ_CALL_FAILED)
        tj_mpi_raise_file(fh, *rc);
    tj_table_return(b.info);
    return r;
}

/* After the system MPI's call returned @p rc (and, non-blocking, its request): finish now or
 * at completion; a write-back that fails goes through the file's error handler. */
static int end(MPI_File fh, tj_staged_t *s, int rc, MPI_Request *req)
{
    if (rc != MPI_SUCCESS) {
        tj_staged_release(s);
        return rc;
    }
    if ((rc = tj_staged_complete(s, rc, req)) != MPI_SUCCESS)
        tj_mpi_raise_file(fh, rc);
    return rc;
}

#define ARG tj_staged_arg(s, 0, buf)

/* One wrapper: @p _pass is the system MPI's call as the application made it, @p _staged the
 * same on the staged buffer ARG. */
#define FILE_CALL(_fn, _out, _req, _pass, _staged)                                                 \
    do {                                                                                           \
        tj_staged_t *s;                                                                            \
        int rc;                                                                                    \
        tj_call_result_t r = begin(_fn, fh, buf, count, type, _out, (_req) != NULL, &s, &rc);      \
        if (r == TJ_CALL_PASS)                                                                     \
            return _pass;                                                                          \
        if (r == TJ_CALL_FAILED)                                                                   \
            return rc;                                                                             \
        return end(fh, s, _staged, _req);                                                          \
    } while (0)

/* Each wrapper in its int and large-count forms from one definition: (suffix, count type), then
 * the function's name, whether the MPI writes the buffer (a read) and the buffer's qualifier. */
#define FORMS(_m, ...) _m(, int, __VA_ARGS__) TJ_IF_LARGE(_m(_c, MPI_Count, __VA_ARGS__))

/* What comes before the buffer: the file, and the offset of the explicit-offset forms (AT). */
#define POINTER_PARAMS MPI_File fh
#define POINTER_ARGS   fh
#define AT_PARAMS      MPI_File fh, MPI_Offset offset
#define AT_ARGS        fh, offset
/* What comes after the type: the status of a blocking call, the request of a non-blocking one. */
#define STATUS_PARAM  MPI_Status *status
#define STATUS_ARG    status
#define STATUS_REQ    ((MPI_Request *)NULL)
#define REQUEST_PARAM MPI_Request *req
#define REQUEST_ARG   req
#define REQUEST_REQ   req

/* A read or write, blocking or not: (..., POINTER or AT, STATUS or REQUEST). */
#define ACCESS(_s, _cnt, _name, _out, _q, _where, _end)                                            \
    int TJ_WRAPPER(MPI_File_##_name##_s)(_where##_PARAMS, _q void *buf, _cnt count,                \
                                         MPI_Datatype type, _end##_PARAM)                          \
    {                                                                                              \
        FILE_CALL("MPI_File_" #_name #_s, _out, _end##_REQ,                                        \
                  PMPI_File_##_name##_s(_where##_ARGS, buf, count, type, _end##_ARG),              \
                  PMPI_File_##_name##_s(_where##_ARGS, ARG, count, type, _end##_ARG));             \
    }

/* The read and the write of one kind of access: (`i` for the non-blocking ones, the rest of the
 * name, POINTER or AT, STATUS or REQUEST). */
#define READ_WRITE(_i, _tail, _where, _end)                                                        \
    FORMS(ACCESS, _i##read##_tail, true, , _where, _end)                                           \
    FORMS(ACCESS, _i##write##_tail, false, const, _where, _end)
READ_WRITE(, , POINTER, STATUS)
READ_WRITE(, _all, POINTER, STATUS)
READ_WRITE(, _shared, POINTER, STATUS)
READ_WRITE(, _ordered, POINTER, STATUS)
READ_WRITE(, _at, AT, STATUS)
READ_WRITE(, _at_all, AT, STATUS)
READ_WRITE(i, , POINTER, REQUEST)
READ_WRITE(i, _all, POINTER, REQUEST)
READ_WRITE(i, _shared, POINTER, REQUEST)
READ_WRITE(i, _at, AT, REQUEST)
READ_WRITE(i, _at_all, AT, REQUEST)

/* ---- split collectives ------------------------------------------------------------------------
 */

/* The _begin of a split collective: staged, the staging kept until the _end. */
static int split_begin(const char *fn, MPI_File fh, const void *buf, int64_t count,
                       MPI_Datatype type, bool out, tj_staged_t **s, int *rc)
{
    switch (begin(fn, fh, buf, count, type, out, true, s, rc)) {
    case TJ_CALL_PASS:
        return 0;
    case TJ_CALL_FAILED:
        return -1;
    case TJ_CALL_TAKEN:
        break;
    }
    return 1;
}

/* After the system MPI's _begin returned @p rc on the staged buffer. */
static int split_started(const char *fn, MPI_File fh, tj_staged_t *s, int rc)
{
    if (rc != MPI_SUCCESS) {
        tj_staged_release(s);
        return rc;
    }
    if (!tj_file_split_put(fh, s)) {
        /* The _end could not find its staging; the access goes on, on the mirror, which is
         * kept (leaked) rather than freed under the MPI's feet. */
        tj_log_error("%s: out of memory recording a split collective; its bytes will not reach "
                     "the device",
                     fn);
        tj_mpi_raise_file(fh, MPI_ERR_NO_MEM);
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

/* The _begin of each split collective in its int and large-count forms: (..., POINTER or AT). */
#define SPLIT_BEGIN(_s, _cnt, _name, _out, _q, _where)                                             \
    int TJ_WRAPPER(MPI_File_##_name##_s)(_where##_PARAMS, _q void *buf, _cnt count,                \
                                         MPI_Datatype type)                                        \
    {                                                                                              \
        tj_staged_t *s;                                                                            \
        int rc, r = split_begin("MPI_File_" #_name #_s, fh, buf, count, type, _out, &s, &rc);      \
        if (r == 0)                                                                                \
            return PMPI_File_##_name##_s(_where##_ARGS, buf, count, type);                         \
        if (r < 0)                                                                                 \
            return rc;                                                                             \
        return split_started("MPI_File_" #_name #_s, fh, s,                                        \
                             PMPI_File_##_name##_s(_where##_ARGS, ARG, count, type));              \
    }

/* The _end of a split collective (no count: one form) completes the staging of its _begin:
 * (name, the buffer's qualifier). */
#define SPLIT_END(_name, _q)                                                                       \
    int TJ_WRAPPER(MPI_File_##_name)(MPI_File fh, _q void *buf, MPI_Status *status)                \
    {                                                                                              \
        tj_staged_t *s = tj_interpose_active() ? tj_file_split_take(fh) : NULL;                    \
        if (s == NULL)                                                                             \
            return PMPI_File_##_name(fh, buf, status);                                             \
        return end(fh, s, PMPI_File_##_name(fh, ARG, status), NULL);                               \
    }

/* The read and the write of one split collective, _begin and _end: (the rest of the name, POINTER
 * or AT). */
#define SPLIT_READ_WRITE(_tail, _where)                                                            \
    FORMS(SPLIT_BEGIN, read##_tail##_begin, true, , _where)                                        \
    FORMS(SPLIT_BEGIN, write##_tail##_begin, false, const, _where)                                 \
    SPLIT_END(read##_tail##_end, )                                                                 \
    SPLIT_END(write##_tail##_end, const)
SPLIT_READ_WRITE(_all, POINTER)
SPLIT_READ_WRITE(_ordered, POINTER)
SPLIT_READ_WRITE(_at_all, AT)
