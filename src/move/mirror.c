/* SPDX-License-Identifier: BSD-3-Clause */
/* Host mirrors of device buffers (see mirror.h). The footprint is copied with one driver copy
 * each way; the write-back of a strided type packs the mirror on the CPU (the type engine) into
 * page-locked staging, from which the type's unpack kernel writes exactly the typed bytes. */
#include "move/mirror.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "move/move.h"
#include "type/lazy.h"
#include "move/span.h"
#include "move/staging.h"
#include "type/cpu.h"
#include "util/common.h"
#include "util/log.h"
#include "util/stats.h"

bool tj_mirror_find(const tj_type_info_t *info, MPI_Datatype type, const void *buf, int64_t count,
                    const char *fn, tj_mirror_t *m)
{
    int64_t reach;

    const tj_type_info_t *resolved;

    memset(m, 0, sizeof(*m));
    if (count <= 0 || type == MPI_DATATYPE_NULL || buf == MPI_IN_PLACE || !tj_gpu_available())
        return false;
    if (info == NULL) {
        tj_table_read_extents(type, &m->own);
        info = &m->own;
    }
    if (!info->extents || info->size == 0 || info->true_extent <= 0 ||
        !tj_mul64(count - 1, info->extent, &reach))
        return false;
    m->lo = info->true_lb + (reach < 0 ? reach : 0);
    m->hi = info->true_lb + info->true_extent + (reach > 0 ? reach : 0);
    m->error = tj_span_check(info, type, buf, count, fn);
    if (m->error == MPI_SUCCESS && tj_gpu_query((const char *)buf + info->true_lb, &m->at) != TJ_OK)
        m->error = MPI_ERR_INTERN; /* the query said why */
    if (m->error == MPI_SUCCESS && !tj_gpu_device_like(m->at.kind))
        return false;
    m->user = (char *)buf;
    m->count = count;
    m->type = type;
    if (info != &m->own) {
        resolved = tj_lazy_resolve(type, info);
        m->rec = tj_type_hold(resolved); /* until tj_mirror_free */
        tj_lazy_return(info, resolved);
    }
    return true;
}

/* Copy between the footprint and its host copy, in the buffer's context. */
static tj_status_t copy(const tj_mirror_t *m, bool to_device, int64_t lo, int64_t len)
{
    tj_gpu_scope_t scope;
    tj_status_t st;

    if ((st = tj_gpu_enter_at(&m->at, &scope)) != TJ_OK)
        return st;
    st = to_device ? tj_gpu_copy_htod((tj_devptr_t)(uintptr_t)(m->user + lo),
                                      m->host + (lo - m->lo), (size_t)len)
                   : tj_gpu_copy_dtoh(m->host + (lo - m->lo),
                                      (tj_devptr_t)(uintptr_t)(m->user + lo), (size_t)len);
    tj_gpu_leave(&scope);
    return st;
}

int tj_mirror_fetch(tj_mirror_t *m, const char *fn)
{
    uintptr_t base = (uintptr_t)m->user;

    if (m->error != MPI_SUCCESS)
        return m->error; /* tj_mirror_find said why */
    if (!tj_gpu_inside(&m->at, base + (uintptr_t)m->lo, base + (uintptr_t)m->hi)) {
        tj_log_error("%s: the datatype's bytes reach outside the device allocation of the buffer "
                     "(they must lie in one allocation); MPI_ERR_BUFFER",
                     fn);
        return MPI_ERR_BUFFER;
    }
    if ((m->host = malloc((size_t)(m->hi - m->lo))) == NULL) {
        tj_log_error("%s: out of memory staging %lld bytes of a device buffer", fn,
                     (long long)(m->hi - m->lo));
        return MPI_ERR_NO_MEM;
    }
    if (copy(m, false, m->lo, m->hi - m->lo) != TJ_OK)
        return MPI_ERR_INTERN; /* the driver call that failed said why */
    return MPI_SUCCESS;
}

int tj_mirror_keep_type(tj_mirror_t *m)
{
    MPI_Datatype d;
    int rc;

    if (m->own_type)
        return MPI_SUCCESS;
    if ((rc = PMPI_Type_dup(m->type, &d)) != MPI_SUCCESS)
        return rc;
    m->type = d;
    m->own_type = true;
    return MPI_SUCCESS;
}

/* A contiguous layout: the footprint is the typed bytes. */
static bool contiguous(const tj_mirror_t *m)
{
    const tj_type_info_t *i = tj_mirror_info(m);
    return i->size == i->true_extent && (m->count == 1 || i->extent == i->size);
}

/* The typed bytes of a type with a kernel through its unpack kernel: the CPU engine packs the
 * mirror into page-locked staging of the buffer's context and the kernel reads it there. False when
 * this way cannot serve the call (nothing written then). */
static bool write_typed(tj_mirror_t *m, int *rc)
{
    int64_t bytes;
    tj_gpu_scope_t scope;
    tj_stage_t *stage = NULL;
    const tj_type_info_t *info = tj_mirror_info(m);
    tj_move_t mv;

    if (!tj_type_info_kernel(info) || !tj_mul64(m->count, info->size, &bytes) || bytes > INT_MAX)
        return false;
    if (tj_gpu_enter_at(&m->at, &scope) != TJ_OK)
        return false;
    if (tj_staging_get(TJ_STAGE_PINNED, (size_t)bytes, &stage) != TJ_OK)
        stage = NULL;
    tj_gpu_leave(&scope);
    if (stage == NULL)
        return false;
    if (info->layout != NULL)
        tj_cpu_pack_layout(info->layout, tj_mirror_arg(m), m->count, stage->host);
    else
        tj_cpu_pack(&info->block, tj_mirror_arg(m), m->count, stage->host);
    mv = (tj_move_t){.pack = false,
                     .info = info,
                     .type = m->own_type ? m->type : tj_type_handle(m->rec, m->type),
                     .typed = m->user,
                     .tp = m->at,
                     .count = m->count,
                     .packed = stage->host,
                     .pp = tj_staging_where(stage, m->at.device),
                     .bytes = bytes,
                     .comm = MPI_COMM_SELF};
    *rc = tj_move(&mv);
    tj_staging_put(stage);
    return true;
}

int tj_mirror_write_back(tj_mirror_t *m)
{
    int rc = MPI_SUCCESS;

    if (m->host == NULL)
        return MPI_SUCCESS;
    if (!contiguous(m) && write_typed(m, &rc))
        return rc;
    /* The footprint as a whole: its bytes between the typed ones are those read at the fetch. */
    return copy(m, true, m->lo, m->hi - m->lo) == TJ_OK ? MPI_SUCCESS : MPI_ERR_INTERN;
}

void tj_mirror_free(tj_mirror_t *m)
{
    free(m->host);
    m->host = NULL;
    tj_type_release(m->rec);
    m->rec = NULL;
    if (m->own_type)
        PMPI_Type_free(&m->type);
    m->own_type = false;
}
