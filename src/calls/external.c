/* SPDX-License-Identifier: BSD-3-Clause */
/* external32 packing of device buffers (see external.h). A strided type whose elements are all of
 * one predefined type of the same size in external32 is packed by one kernel that reverses each
 * element's bytes as it moves it (the byte swap of the strided kernels: kernels/spec.h), when both
 * sides are on the device (or the packed side in mapped pinned memory). Everything else is staged:
 * the packed side's host copy covers [*position, *position + the packed size), clipped to the
 * buffer's size, and the system MPI is given it shifted so that the application's position and size
 * apply unchanged. A packed buffer too short for the call is refused with MPI_ERR_TRUNCATE. */
#include "calls/external.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda.h"
#include "kernels/launch.h"
#include "move/count.h"
#include "type/lazy.h"
#include "type/element.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* The packed side: its bytes from *position, at most @p want of them within @p size. */
typedef struct {
    char *user;      /* the buffer argument */
    int64_t from;    /* *position when the call began */
    int64_t len;     /* bytes of the host copy */
    tj_gpu_ptr_t at; /* where user + from lies */
    char *host;
} packed_t;

/* Whether the packed side is on the device (*on); sets it up. MPI_ERR_INTERN when the driver
 * cannot tell (the query said why). */
static int packed_find(packed_t *p, const void *buf, int64_t size, const int64_t *position,
                       int64_t want, bool *on)
{
    p->user = (char *)buf;
    p->host = NULL;
    *on = false;
    if (buf == NULL || position == NULL || *position < 0 || *position >= size || want <= 0)
        return MPI_SUCCESS;
    p->from = *position;
    p->len = size - *position < want ? size - *position : want;
    if (tj_gpu_query(p->user + p->from, &p->at) != TJ_OK)
        return MPI_ERR_INTERN;
    *on = tj_gpu_device_like(p->at.kind);
    return MPI_SUCCESS;
}

static int packed_copy(packed_t *p, bool to_device, int64_t len)
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
    if ((st = tj_gpu_enter_at(&p->at, &scope)) != TJ_OK)
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
                  const void *typed, int64_t count, MPI_Datatype type, bool unpack, packed_t *p,
                  const void *pbuf, int64_t psize, const int64_t *position, tj_staged_t **st,
                  bool *on_p, int *rc)
{
    int64_t want = 0;
    tj_staged_buf_t b = {typed, count, type, info, unpack};

    *st = NULL;
    *rc = MPI_SUCCESS;
    if (!tj_gpu_available() || count <= 0 || datarep == NULL ||
        tj_count_pack_external_size(datarep, count, type, &want) != MPI_SUCCESS)
        return false;
    if ((*rc = packed_find(p, pbuf, psize, position, want, on_p)) != MPI_SUCCESS)
        return true;
    switch (tj_staged_begin(fn, 1, &b, false, st, rc)) {
    case TJ_CALL_FAILED:
        return true;
    case TJ_CALL_PASS:
        *st = NULL;
        if (!*on_p)
            return false;
        break;
    case TJ_CALL_TAKEN:
        break;
    }
    /* A packed buffer too short for the call is refused before the system MPI sees it, as Open
     * MPI refuses it, with nothing written: the MPICH family converts the whole call anyway,
     * writing past outsize and reading past insize, which here would be past typejit's host
     * copy of the packed bytes. */
    if (position != NULL && *position >= 0 && want > psize - *position) {
        *rc = MPI_ERR_TRUNCATE;
        return true;
    }
    if (*on_p && (p->host = malloc((size_t)p->len)) == NULL) {
        tj_log_error("%s: out of memory staging %lld packed bytes", fn, (long long)p->len);
        *rc = MPI_ERR_NO_MEM;
    } else if (*on_p && unpack) {
        *rc = packed_copy(p, false, p->len);
    }
    return true;
}

static bool kernel_move(bool pack, const tj_type_info_t *info, const char *datarep,
                        const void *typed, const tj_gpu_ptr_t *tpp, int64_t count,
                        MPI_Datatype type, void *pbuf, int64_t psize, int64_t *position, int *rc);

/* The kernel path: true when it did the whole call (*rc its result), false to stage instead. */
static bool kernel_path(bool pack, const tj_type_info_t *info, const char *datarep,
                        const void *typed, int64_t count, MPI_Datatype type, void *pbuf,
                        int64_t psize, int64_t *position, int *rc)
{
    const tj_type_info_t *given = info;
    tj_gpu_ptr_t tp;
    bool done;

    if (info == NULL || info->wide || count <= 0 || position == NULL || pbuf == NULL)
        return false;
    if (tj_gpu_query((const char *)typed + info->true_lb, &tp) != TJ_OK) {
        *rc = MPI_ERR_INTERN; /* the query said why */
        return true;
    }
    if (!tj_gpu_device_like(tp.kind))
        return false;
    /* A type whose layout is pending may be one strided block: found out now that the call is
     * on the device (type/lazy.h). */
    info = tj_lazy_resolve(type, given);
    done = kernel_move(pack, info, datarep, typed, &tp, count, type, pbuf, psize, position, rc);
    tj_lazy_return(given, info);
    return done;
}

/* kernel_path's launch once the typed side, at @p tp, is known to be on the device. */
static bool kernel_move(bool pack, const tj_type_info_t *info, const char *datarep,
                        const void *typed, const tj_gpu_ptr_t *tpp, int64_t count,
                        MPI_Datatype type, void *pbuf, int64_t psize, int64_t *position, int *rc)
{
    int esize = 0, kind;
    MPI_Aint xsize = 0;
    int64_t bytes, lo, hi, reach;
    tj_gpu_ptr_t tp = *tpp, pp;
    tj_devptr_t pdev;
    tj_words_t words;
    tj_gpu_scope_t scope;
    tj_status_t st;
    MPI_Datatype e;

    if (!info->strided || datarep == NULL || strcmp(datarep, "external32") != 0 ||
        tj_config()->jit == TJ_JIT_OFF || (e = tj_type_element(type)) == MPI_DATATYPE_NULL ||
        tj_element_ctype(e, &esize, &kind) == NULL ||
        PMPI_Pack_external_size("external32", 1, e, &xsize) != MPI_SUCCESS || xsize != esize ||
        !tj_mul64(count, info->size, &bytes) || *position < 0 || bytes > psize - *position ||
        !tj_mul64(count - 1, info->extent, &reach) ||
        (!pack && !tj_block_disjoint(&info->block, count)))
        return false;
    lo = info->true_lb + (reach < 0 ? reach : 0);
    hi = info->true_lb + info->true_extent + (reach > 0 ? reach : 0);
    if (tj_gpu_query((const char *)pbuf + *position, &pp) != TJ_OK) {
        *rc = MPI_ERR_INTERN; /* the query said why */
        return true;
    }
    if (!(tj_gpu_device_like(pp.kind) || pp.kind == TJ_MEM_PINNED) ||
        (tj_gpu_device_like(pp.kind) && pp.ctx != tp.ctx) ||
        !tj_gpu_inside(&tp, (uintptr_t)typed + (uintptr_t)lo, (uintptr_t)typed + (uintptr_t)hi) ||
        !tj_gpu_inside(&pp, (uintptr_t)pbuf + (uintptr_t)*position,
                       (uintptr_t)pbuf + (uintptr_t)(*position + bytes)))
        return false;
    /* Every element at an address of its size on both sides: the plain word of the launch. */
    words = tj_block_words(&info->block, count, (uintptr_t)typed + (uintptr_t)info->block.start,
                           (uintptr_t)pbuf + (uintptr_t)*position);
    if ((words.edge != 0 ? words.edge : words.word) % esize != 0)
        return false;
    if (tj_launch_possible() != TJ_OK || tj_gpu_enter_at(&tp, &scope) != TJ_OK)
        return false;
    pdev = (tj_devptr_t)(uintptr_t)((char *)pbuf + *position);
    if (pp.kind == TJ_MEM_PINNED && tj_gpu_host_devptr((char *)pbuf + *position, &pdev) != TJ_OK) {
        tj_gpu_leave(&scope);
        return false;
    }
    {
        /* The strided kernel family with each element's bytes reversed (one element per word),
         * from the launch path. */
        tj_launch_desc_t d = {.block = &info->block,
                              .count = count,
                              .op = {.kind = TJ_OP_SWAP},
                              .op_size = esize,
                              .dir = pack ? TJ_DIR_PACK : TJ_DIR_UNPACK,
                              .typed = (tj_devptr_t)(uintptr_t)typed,
                              .packed = pdev,
                              .device = tp.device,
                              .policy = TJ_LAUNCH_COMPILE};
        tj_launch_ready_t ready;
        if (tj_launch_prepare(&d, &ready) != TJ_OK) {
            tj_gpu_leave(&scope);
            return false; /* no kernel: staged */
        }
        if ((st = tj_launch_go(&ready)) == TJ_OK)
            st = tj_gpu_sync();
    }
    tj_gpu_leave(&scope);
    if (st != TJ_OK) {
        /* The driver said why; a kernel fault left the context unusable. */
        *rc = MPI_ERR_INTERN;
        return true;
    }
    tj_stats_inc(pack ? TJ_STAT_packs_gpu : TJ_STAT_unpacks_gpu);
    *position += bytes;
    *rc = MPI_SUCCESS;
    return true;
}

static void end(tj_staged_t *st, packed_t *p)
{
    if (st != NULL)
        tj_staged_release(st);
    free(p->host);
}

tj_call_result_t tj_external_pack(const tj_type_info_t *info, const char *datarep,
                                  const void *inbuf, int64_t incount, MPI_Datatype type,
                                  void *outbuf, int64_t outsize, int64_t *position, int *rc)
{
    packed_t p;
    tj_staged_t *st;
    bool on_p = false;
    tj_call_result_t r = TJ_CALL_FAILED;

    if (tj_gpu_available() &&
        kernel_path(true, info, datarep, inbuf, incount, type, outbuf, outsize, position, rc))
        return *rc == MPI_SUCCESS ? TJ_CALL_TAKEN : TJ_CALL_FAILED;
    if (!begin("MPI_Pack_external", info, datarep, inbuf, incount, type, false, &p, outbuf, outsize,
               position, &st, &on_p, rc))
        return TJ_CALL_PASS;
    if (*rc == MPI_SUCCESS) {
        int64_t before = *position;
        r = TJ_CALL_TAKEN;
        *rc = tj_count_pack_external(datarep, st != NULL ? tj_staged_arg(st, 0, inbuf) : inbuf,
                                     incount, type, on_p ? packed_arg(&p) : outbuf, outsize,
                                     position);
        if (*rc == MPI_SUCCESS && on_p &&
            (*rc = packed_copy(&p, true, *position - before)) != MPI_SUCCESS)
            r = TJ_CALL_FAILED;
    }
    end(st, &p);
    return r;
}

tj_call_result_t tj_external_unpack(const tj_type_info_t *info, const char *datarep,
                                    const void *inbuf, int64_t insize, int64_t *position,
                                    void *outbuf, int64_t outcount, MPI_Datatype type, int *rc)
{
    packed_t p;
    tj_staged_t *st;
    bool on_p = false;
    tj_call_result_t r = TJ_CALL_FAILED;

    if (tj_gpu_available() && kernel_path(false, info, datarep, outbuf, outcount, type,
                                          (void *)inbuf, insize, position, rc))
        return *rc == MPI_SUCCESS ? TJ_CALL_TAKEN : TJ_CALL_FAILED;
    if (!begin("MPI_Unpack_external", info, datarep, outbuf, outcount, type, true, &p, inbuf,
               insize, position, &st, &on_p, rc))
        return TJ_CALL_PASS;
    if (*rc == MPI_SUCCESS) {
        r = TJ_CALL_TAKEN;
        *rc = tj_count_unpack_external(datarep, on_p ? packed_arg(&p) : inbuf, insize, position,
                                       st != NULL ? tj_staged_arg(st, 0, outbuf) : outbuf, outcount,
                                       type);
        if (*rc == MPI_SUCCESS && st != NULL && (*rc = tj_staged_finish(st)) != MPI_SUCCESS)
            r = TJ_CALL_FAILED;
    }
    end(st, &p);
    return r;
}
