/* external32 packing of device buffers, staged (see external.h). The packed side's host copy
 * covers [*position, *position + the packed size), clipped to the buffer's size: the system MPI
 * is given it shifted so that the application's position and size apply unchanged. */
#include "send/external.h"

#include <stdlib.h>

#include "gpu/cuda.h"
#include "util/log.h"

static bool is_gpu(tj_mem_t m)
{
    return m == TJ_MEM_DEVICE || m == TJ_MEM_MANAGED;
}

/* The packed side: its bytes from *position, at most @p want of them within @p size. */
typedef struct {
    char *user;      /* the buffer argument */
    MPI_Aint from;   /* *position when the call began */
    MPI_Aint len;    /* bytes of the host copy */
    tj_gpu_ptr_t at; /* where user + from lies */
    char *host;
} packed_t;

/* Whether the packed side is on the device; sets it up. */
static bool packed_find(packed_t *p, const void *buf, MPI_Aint size, const MPI_Aint *position,
                        MPI_Aint want)
{
    p->user = (char *)buf;
    p->host = NULL;
    if (buf == NULL || position == NULL || *position < 0 || *position >= size || want <= 0)
        return false;
    p->from = *position;
    p->len = size - *position < want ? size - *position : want;
    tj_gpu_query(p->user + p->from, &p->at);
    return is_gpu(p->at.kind);
}

static int packed_copy(packed_t *p, bool to_device, MPI_Aint len)
{
    tj_gpu_scope_t scope;
    tj_status_t st;
    tj_devptr_t dev = (tj_devptr_t)(uintptr_t)(p->user + p->from);

    if (len <= 0)
        return MPI_SUCCESS;
    if (!tj_gpu_inside(&p->at, (uintptr_t)dev, (uintptr_t)dev + (uintptr_t)len)) {
        tj_log_error("external32 packing: the packed bytes reach outside the device allocation of "
                     "the buffer; MPI_ERR_BUFFER");
        return MPI_ERR_BUFFER;
    }
    if ((st = tj_gpu_enter(p->at.ctx, &scope)) != TJ_OK)
        return MPI_ERR_INTERN;
    st = to_device ? tj_gpu_copy_htod(dev, p->host, (size_t)len)
                   : tj_gpu_copy_dtoh(p->host, dev, (size_t)len);
    tj_gpu_leave(&scope);
    return st == TJ_OK ? MPI_SUCCESS : MPI_ERR_INTERN;
}

/* The packed side's argument for the system MPI: its host copy, shifted by the position. */
static void *packed_arg(const packed_t *p)
{
    return p->host - p->from;
}

/* Stage the typed side and, on the device, the packed one. MPI result; *typed is NULL when the
 * typed side is in host memory. False: nothing on the device. */
static bool begin(const char *fn, const tj_type_info_t *info, const char *datarep,
                  const void *typed, int count, MPI_Datatype type, bool unpack, packed_t *p,
                  const void *pbuf, MPI_Aint psize, const MPI_Aint *position, tj_staged_t **st,
                  bool *on_p, int *rc)
{
    MPI_Aint want = 0;
    tj_staged_buf_t b = {typed, count, type, info, unpack};

    *st = NULL;
    *rc = MPI_SUCCESS;
    if (!tj_gpu_available() || count <= 0 || datarep == NULL ||
        PMPI_Pack_external_size(datarep, count, type, &want) != MPI_SUCCESS)
        return false;
    *on_p = packed_find(p, pbuf, psize, position, want);
    switch (tj_staged_begin(fn, 1, &b, false, st, rc)) {
    case TJ_STAGED_FAILED:
        return true;
    case TJ_STAGED_PASS:
        *st = NULL;
        if (!*on_p)
            return false;
        break;
    case TJ_STAGED_OK:
        break;
    }
    if (*on_p && (p->host = malloc((size_t)p->len)) == NULL) {
        tj_log_error("%s: out of memory staging %lld packed bytes", fn, (long long)p->len);
        *rc = MPI_ERR_NO_MEM;
    } else if (*on_p && unpack) {
        *rc = packed_copy(p, false, p->len);
    }
    return true;
}

static void end(tj_staged_t *st, packed_t *p)
{
    if (st != NULL)
        tj_staged_release(st);
    free(p->host);
}

tj_staged_result_t tj_external_pack(const tj_type_info_t *info, const char *datarep,
                                    const void *inbuf, int incount, MPI_Datatype type, void *outbuf,
                                    MPI_Aint outsize, MPI_Aint *position, int *rc)
{
    packed_t p;
    tj_staged_t *st;
    bool on_p = false;
    tj_staged_result_t r = TJ_STAGED_FAILED;

    if (!begin("MPI_Pack_external", info, datarep, inbuf, incount, type, false, &p, outbuf, outsize,
               position, &st, &on_p, rc))
        return TJ_STAGED_PASS;
    if (*rc == MPI_SUCCESS) {
        MPI_Aint before = *position;
        r = TJ_STAGED_OK;
        *rc = PMPI_Pack_external(datarep, st != NULL ? tj_staged_arg(st, 0, inbuf) : inbuf, incount,
                                 type, on_p ? packed_arg(&p) : outbuf, outsize, position);
        if (*rc == MPI_SUCCESS && on_p &&
            (*rc = packed_copy(&p, true, *position - before)) != MPI_SUCCESS)
            r = TJ_STAGED_FAILED;
    }
    end(st, &p);
    return r;
}

tj_staged_result_t tj_external_unpack(const tj_type_info_t *info, const char *datarep,
                                      const void *inbuf, MPI_Aint insize, MPI_Aint *position,
                                      void *outbuf, int outcount, MPI_Datatype type, int *rc)
{
    packed_t p;
    tj_staged_t *st;
    bool on_p = false;
    tj_staged_result_t r = TJ_STAGED_FAILED;

    if (!begin("MPI_Unpack_external", info, datarep, outbuf, outcount, type, true, &p, inbuf,
               insize, position, &st, &on_p, rc))
        return TJ_STAGED_PASS;
    if (*rc == MPI_SUCCESS) {
        r = TJ_STAGED_OK;
        *rc = PMPI_Unpack_external(datarep, on_p ? packed_arg(&p) : inbuf, insize, position,
                                   st != NULL ? tj_staged_arg(st, 0, outbuf) : outbuf, outcount,
                                   type);
        if (*rc == MPI_SUCCESS && st != NULL && (*rc = tj_staged_finish(st)) != MPI_SUCCESS)
            r = TJ_STAGED_FAILED;
    }
    end(st, &p);
    return r;
}
