/* MPI-IO wrappers: every read and write form (blocking, non-blocking, individual, shared and
 * ordered file pointers, explicit offsets, split collectives). A device buffer with an MPI that
 * is not CUDA-aware is staged exactly through host memory (src/send/staged.c): a write's bytes
 * are read from the device first; a read's are written back when the call, the Wait or Test of a
 * non-blocking one, or the _end of a split collective completes it. Every other call goes to the
 * system MPI after one pointer query (none on a machine without a device). */
#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "send/model.h"
#include "send/split.h"
#include "send/staged.h"
#include "util/log.h"

/* Stage `count` objects of @p type at @p buf for @p fn when they are on the device and the MPI
 * needs it (@p out: the MPI writes them; @p keep: the call completes later). Errors typejit
 * detects go through the file's error handler. */
static tj_staged_result_t begin(const char *fn, MPI_File fh, const void *buf, int count,
                                MPI_Datatype type, bool out, bool keep, tj_staged_t **s, int *rc)
{
    tj_type_info_t info;
    tj_staged_buf_t b = {buf, count, type, NULL, out};
    tj_staged_result_t r;

    if (!tj_interpose_device_calls() || tj_model_cuda_aware())
        return TJ_STAGED_PASS;
    b.info = tj_interpose_lookup(type, &info) ? &info : NULL;
    if ((r = tj_staged_begin(fn, 1, &b, keep, s, rc)) == TJ_STAGED_FAILED)
        PMPI_File_call_errhandler(fh, *rc);
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
        PMPI_File_call_errhandler(fh, rc);
    return rc;
}

#define ARG tj_staged_arg(s, 0, buf)

/* One wrapper: @p _pass is the system MPI's call as the application made it, @p _staged the
 * same on the staged buffer ARG. */
#define FILE_CALL(_fn, _out, _req, _pass, _staged)                                                 \
    do {                                                                                           \
        tj_staged_t *s;                                                                            \
        int rc;                                                                                    \
        switch (begin(_fn, fh, buf, count, type, _out, (_req) != NULL, &s, &rc)) {                 \
        case TJ_STAGED_PASS:                                                                       \
            return _pass;                                                                          \
        case TJ_STAGED_FAILED:                                                                     \
            return rc;                                                                             \
        case TJ_STAGED_OK:                                                                         \
            break;                                                                                 \
        }                                                                                          \
        return end(fh, s, _staged, _req);                                                          \
    } while (0)

int TJ_WRAPPER(MPI_File_read)(MPI_File fh, void *buf, int count, MPI_Datatype type,
                              MPI_Status *status)
{
    FILE_CALL("MPI_File_read", true, (MPI_Request *)NULL,
              PMPI_File_read(fh, buf, count, type, status),
              PMPI_File_read(fh, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_read_all)(MPI_File fh, void *buf, int count, MPI_Datatype type,
                                  MPI_Status *status)
{
    FILE_CALL("MPI_File_read_all", true, (MPI_Request *)NULL,
              PMPI_File_read_all(fh, buf, count, type, status),
              PMPI_File_read_all(fh, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_read_shared)(MPI_File fh, void *buf, int count, MPI_Datatype type,
                                     MPI_Status *status)
{
    FILE_CALL("MPI_File_read_shared", true, (MPI_Request *)NULL,
              PMPI_File_read_shared(fh, buf, count, type, status),
              PMPI_File_read_shared(fh, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_read_ordered)(MPI_File fh, void *buf, int count, MPI_Datatype type,
                                      MPI_Status *status)
{
    FILE_CALL("MPI_File_read_ordered", true, (MPI_Request *)NULL,
              PMPI_File_read_ordered(fh, buf, count, type, status),
              PMPI_File_read_ordered(fh, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_read_at)(MPI_File fh, MPI_Offset offset, void *buf, int count,
                                 MPI_Datatype type, MPI_Status *status)
{
    FILE_CALL("MPI_File_read_at", true, (MPI_Request *)NULL,
              PMPI_File_read_at(fh, offset, buf, count, type, status),
              PMPI_File_read_at(fh, offset, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_read_at_all)(MPI_File fh, MPI_Offset offset, void *buf, int count,
                                     MPI_Datatype type, MPI_Status *status)
{
    FILE_CALL("MPI_File_read_at_all", true, (MPI_Request *)NULL,
              PMPI_File_read_at_all(fh, offset, buf, count, type, status),
              PMPI_File_read_at_all(fh, offset, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_iread)(MPI_File fh, void *buf, int count, MPI_Datatype type,
                               MPI_Request *req)
{
    FILE_CALL("MPI_File_iread", true, req, PMPI_File_iread(fh, buf, count, type, req),
              PMPI_File_iread(fh, ARG, count, type, req));
}

int TJ_WRAPPER(MPI_File_iread_all)(MPI_File fh, void *buf, int count, MPI_Datatype type,
                                   MPI_Request *req)
{
    FILE_CALL("MPI_File_iread_all", true, req, PMPI_File_iread_all(fh, buf, count, type, req),
              PMPI_File_iread_all(fh, ARG, count, type, req));
}

int TJ_WRAPPER(MPI_File_iread_shared)(MPI_File fh, void *buf, int count, MPI_Datatype type,
                                      MPI_Request *req)
{
    FILE_CALL("MPI_File_iread_shared", true, req, PMPI_File_iread_shared(fh, buf, count, type, req),
              PMPI_File_iread_shared(fh, ARG, count, type, req));
}

int TJ_WRAPPER(MPI_File_iread_at)(MPI_File fh, MPI_Offset offset, void *buf, int count,
                                  MPI_Datatype type, MPI_Request *req)
{
    FILE_CALL("MPI_File_iread_at", true, req, PMPI_File_iread_at(fh, offset, buf, count, type, req),
              PMPI_File_iread_at(fh, offset, ARG, count, type, req));
}

int TJ_WRAPPER(MPI_File_iread_at_all)(MPI_File fh, MPI_Offset offset, void *buf, int count,
                                      MPI_Datatype type, MPI_Request *req)
{
    FILE_CALL("MPI_File_iread_at_all", true, req,
              PMPI_File_iread_at_all(fh, offset, buf, count, type, req),
              PMPI_File_iread_at_all(fh, offset, ARG, count, type, req));
}

int TJ_WRAPPER(MPI_File_write)(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                               MPI_Status *status)
{
    FILE_CALL("MPI_File_write", false, (MPI_Request *)NULL,
              PMPI_File_write(fh, buf, count, type, status),
              PMPI_File_write(fh, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_write_all)(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                                   MPI_Status *status)
{
    FILE_CALL("MPI_File_write_all", false, (MPI_Request *)NULL,
              PMPI_File_write_all(fh, buf, count, type, status),
              PMPI_File_write_all(fh, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_write_shared)(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                                      MPI_Status *status)
{
    FILE_CALL("MPI_File_write_shared", false, (MPI_Request *)NULL,
              PMPI_File_write_shared(fh, buf, count, type, status),
              PMPI_File_write_shared(fh, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_write_ordered)(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                                       MPI_Status *status)
{
    FILE_CALL("MPI_File_write_ordered", false, (MPI_Request *)NULL,
              PMPI_File_write_ordered(fh, buf, count, type, status),
              PMPI_File_write_ordered(fh, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_write_at)(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                  MPI_Datatype type, MPI_Status *status)
{
    FILE_CALL("MPI_File_write_at", false, (MPI_Request *)NULL,
              PMPI_File_write_at(fh, offset, buf, count, type, status),
              PMPI_File_write_at(fh, offset, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_write_at_all)(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                      MPI_Datatype type, MPI_Status *status)
{
    FILE_CALL("MPI_File_write_at_all", false, (MPI_Request *)NULL,
              PMPI_File_write_at_all(fh, offset, buf, count, type, status),
              PMPI_File_write_at_all(fh, offset, ARG, count, type, status));
}

int TJ_WRAPPER(MPI_File_iwrite)(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                                MPI_Request *req)
{
    FILE_CALL("MPI_File_iwrite", false, req, PMPI_File_iwrite(fh, buf, count, type, req),
              PMPI_File_iwrite(fh, ARG, count, type, req));
}

int TJ_WRAPPER(MPI_File_iwrite_all)(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                                    MPI_Request *req)
{
    FILE_CALL("MPI_File_iwrite_all", false, req, PMPI_File_iwrite_all(fh, buf, count, type, req),
              PMPI_File_iwrite_all(fh, ARG, count, type, req));
}

int TJ_WRAPPER(MPI_File_iwrite_shared)(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                                       MPI_Request *req)
{
    FILE_CALL("MPI_File_iwrite_shared", false, req,
              PMPI_File_iwrite_shared(fh, buf, count, type, req),
              PMPI_File_iwrite_shared(fh, ARG, count, type, req));
}

int TJ_WRAPPER(MPI_File_iwrite_at)(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                   MPI_Datatype type, MPI_Request *req)
{
    FILE_CALL("MPI_File_iwrite_at", false, req,
              PMPI_File_iwrite_at(fh, offset, buf, count, type, req),
              PMPI_File_iwrite_at(fh, offset, ARG, count, type, req));
}

int TJ_WRAPPER(MPI_File_iwrite_at_all)(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                       MPI_Datatype type, MPI_Request *req)
{
    FILE_CALL("MPI_File_iwrite_at_all", false, req,
              PMPI_File_iwrite_at_all(fh, offset, buf, count, type, req),
              PMPI_File_iwrite_at_all(fh, offset, ARG, count, type, req));
}

/* ---- split collectives ------------------------------------------------------------------------
 */

/* The _begin of a split collective: staged, the staging kept until the _end. */
static int split_begin(const char *fn, MPI_File fh, const void *buf, int count, MPI_Datatype type,
                       bool out, tj_staged_t **s, int *rc)
{
    switch (begin(fn, fh, buf, count, type, out, true, s, rc)) {
    case TJ_STAGED_PASS:
        return 0;
    case TJ_STAGED_FAILED:
        return -1;
    case TJ_STAGED_OK:
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
    if (!tj_split_put(fh, s)) {
        /* The _end could not find its staging; the access goes on, on the mirror, which is
         * kept (leaked) rather than freed under the MPI's feet. */
        tj_log_error("%s: out of memory recording a split collective; its bytes will not reach "
                     "the device",
                     fn);
        PMPI_File_call_errhandler(fh, MPI_ERR_NO_MEM);
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

int TJ_WRAPPER(MPI_File_read_all_begin)(MPI_File fh, void *buf, int count, MPI_Datatype type)
{
    tj_staged_t *s;
    int rc, r = split_begin("MPI_File_read_all_begin", fh, buf, count, type, true, &s, &rc);
    if (r == 0)
        return PMPI_File_read_all_begin(fh, buf, count, type);
    if (r < 0)
        return rc;
    return split_started("MPI_File_read_all_begin", fh, s,
                         PMPI_File_read_all_begin(fh, ARG, count, type));
}

int TJ_WRAPPER(MPI_File_read_all_end)(MPI_File fh, void *buf, MPI_Status *status)
{
    tj_staged_t *s = tj_interpose_active() ? tj_split_take(fh) : NULL;
    if (s == NULL)
        return PMPI_File_read_all_end(fh, buf, status);
    return end(fh, s, PMPI_File_read_all_end(fh, ARG, status), NULL);
}

int TJ_WRAPPER(MPI_File_read_at_all_begin)(MPI_File fh, MPI_Offset offset, void *buf, int count,
                                           MPI_Datatype type)
{
    tj_staged_t *s;
    int rc, r = split_begin("MPI_File_read_at_all_begin", fh, buf, count, type, true, &s, &rc);
    if (r == 0)
        return PMPI_File_read_at_all_begin(fh, offset, buf, count, type);
    if (r < 0)
        return rc;
    return split_started("MPI_File_read_at_all_begin", fh, s,
                         PMPI_File_read_at_all_begin(fh, offset, ARG, count, type));
}

int TJ_WRAPPER(MPI_File_read_at_all_end)(MPI_File fh, void *buf, MPI_Status *status)
{
    tj_staged_t *s = tj_interpose_active() ? tj_split_take(fh) : NULL;
    if (s == NULL)
        return PMPI_File_read_at_all_end(fh, buf, status);
    return end(fh, s, PMPI_File_read_at_all_end(fh, ARG, status), NULL);
}

int TJ_WRAPPER(MPI_File_read_ordered_begin)(MPI_File fh, void *buf, int count, MPI_Datatype type)
{
    tj_staged_t *s;
    int rc, r = split_begin("MPI_File_read_ordered_begin", fh, buf, count, type, true, &s, &rc);
    if (r == 0)
        return PMPI_File_read_ordered_begin(fh, buf, count, type);
    if (r < 0)
        return rc;
    return split_started("MPI_File_read_ordered_begin", fh, s,
                         PMPI_File_read_ordered_begin(fh, ARG, count, type));
}

int TJ_WRAPPER(MPI_File_read_ordered_end)(MPI_File fh, void *buf, MPI_Status *status)
{
    tj_staged_t *s = tj_interpose_active() ? tj_split_take(fh) : NULL;
    if (s == NULL)
        return PMPI_File_read_ordered_end(fh, buf, status);
    return end(fh, s, PMPI_File_read_ordered_end(fh, ARG, status), NULL);
}

int TJ_WRAPPER(MPI_File_write_all_begin)(MPI_File fh, const void *buf, int count, MPI_Datatype type)
{
    tj_staged_t *s;
    int rc, r = split_begin("MPI_File_write_all_begin", fh, buf, count, type, false, &s, &rc);
    if (r == 0)
        return PMPI_File_write_all_begin(fh, buf, count, type);
    if (r < 0)
        return rc;
    return split_started("MPI_File_write_all_begin", fh, s,
                         PMPI_File_write_all_begin(fh, ARG, count, type));
}

int TJ_WRAPPER(MPI_File_write_all_end)(MPI_File fh, const void *buf, MPI_Status *status)
{
    tj_staged_t *s = tj_interpose_active() ? tj_split_take(fh) : NULL;
    if (s == NULL)
        return PMPI_File_write_all_end(fh, buf, status);
    return end(fh, s, PMPI_File_write_all_end(fh, ARG, status), NULL);
}

int TJ_WRAPPER(MPI_File_write_at_all_begin)(MPI_File fh, MPI_Offset offset, const void *buf,
                                            int count, MPI_Datatype type)
{
    tj_staged_t *s;
    int rc, r = split_begin("MPI_File_write_at_all_begin", fh, buf, count, type, false, &s, &rc);
    if (r == 0)
        return PMPI_File_write_at_all_begin(fh, offset, buf, count, type);
    if (r < 0)
        return rc;
    return split_started("MPI_File_write_at_all_begin", fh, s,
                         PMPI_File_write_at_all_begin(fh, offset, ARG, count, type));
}

int TJ_WRAPPER(MPI_File_write_at_all_end)(MPI_File fh, const void *buf, MPI_Status *status)
{
    tj_staged_t *s = tj_interpose_active() ? tj_split_take(fh) : NULL;
    if (s == NULL)
        return PMPI_File_write_at_all_end(fh, buf, status);
    return end(fh, s, PMPI_File_write_at_all_end(fh, ARG, status), NULL);
}

int TJ_WRAPPER(MPI_File_write_ordered_begin)(MPI_File fh, const void *buf, int count,
                                             MPI_Datatype type)
{
    tj_staged_t *s;
    int rc, r = split_begin("MPI_File_write_ordered_begin", fh, buf, count, type, false, &s, &rc);
    if (r == 0)
        return PMPI_File_write_ordered_begin(fh, buf, count, type);
    if (r < 0)
        return rc;
    return split_started("MPI_File_write_ordered_begin", fh, s,
                         PMPI_File_write_ordered_begin(fh, ARG, count, type));
}

int TJ_WRAPPER(MPI_File_write_ordered_end)(MPI_File fh, const void *buf, MPI_Status *status)
{
    tj_staged_t *s = tj_interpose_active() ? tj_split_take(fh) : NULL;
    if (s == NULL)
        return PMPI_File_write_ordered_end(fh, buf, status);
    return end(fh, s, PMPI_File_write_ordered_end(fh, ARG, status), NULL);
}
