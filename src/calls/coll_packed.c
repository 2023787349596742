/* SPDX-License-Identifier: BSD-3-Clause */
/* Which sides of a collective typejit packs, and their packed layout (see coll_packed.h). */
#include "calls/coll_packed.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>

#include "move/count.h"
#include "move/model.h"
#include "move/span.h"
#include "type/lazy.h"
#include "util/common.h"
#include "util/log.h"

/* Whether a device-resident type needs typejit (see tj_coll_run); a type whose layout is pending
 * (type/lazy.h) may. */
static bool wants(const tj_coll_type_t *ct)
{
    const tj_block_t *b = &ct->info->block;
    if (!tj_model_cuda_aware())
        return true;
    if (ct->info->strided && b->ndims == 1 && b->extent == b->size)
        return tj_model_stage_contiguous();
    return tj_type_info_kernel(ct->info) || ct->info->pending;
}

/* Whether a type of the side's slices that move bytes wants typejit. */
static bool side_wants(const tj_coll_side_t *sd)
{
    bool want = false;

    for (int i = 0; i < sd->n && !want; i++) {
        const tj_coll_slice_t *sl = &sd->slices[i];
        if (sl->count != 0 && !sl->skip && sd->types[sl->t].info->size != 0)
            want = wants(&sd->types[sl->t]);
    }
    return want;
}

/* A side is packed when its first byte is on a GPU and a type it moves bytes of needs it. A side
 * the driver cannot place is packed blind: the other ranks are entering the collective and would
 * wait forever for this one, so the call is still made (as after a pack that failed: prepare),
 * with bytes that are no one's, and fails. */
void tj_coll_packed_classify(tj_coll_side_t *sd)
{
    const tj_coll_slice_t *first = NULL;
    bool want = false, pending = false;
    tj_gpu_ptr_t where;
    int rc;

    if (!sd->present)
        return;
    for (int i = 0; i < sd->n; i++) {
        const tj_coll_slice_t *sl = &sd->slices[i];
        const tj_coll_type_t *ct = &sd->types[sl->t];
        if (sl->count == 0 || sl->skip || ct->info->size == 0)
            continue;
        if (first == NULL)
            first = sl;
        want |= wants(ct);
        pending |= ct->info->pending;
        /* A type at absolute addresses may have bytes in host and device memory at once. */
        if (ct->info->wide && !sd->split && !sd->blind &&
            (rc = tj_span_check(ct->info, ct->type, sd->buf + sl->off, sl->count,
                                "a collective")) != MPI_SUCCESS) {
            sd->split = rc == MPI_ERR_BUFFER;
            sd->blind = !sd->split;
        }
    }
    if (sd->split)
        return;
    if (!sd->blind && first != NULL && want &&
        tj_gpu_query(sd->buf + first->off + sd->types[first->t].info->true_lb, &where) != TJ_OK)
        sd->blind = true; /* the query said why */
    if (sd->blind) {
        sd->packed = true;
        return;
    }
    if (first == NULL || !want)
        return;
    if (!tj_gpu_device_like(where.kind))
        return;
    /* On the device: the layouts of pending types are built now (held as the records are). */
    if (pending) {
        for (int t = 0; t < sd->ntypes; t++)
            if (sd->types[t].info->pending) {
                /* The built record is held in place of the pending one. */
                const tj_type_info_t *was = sd->types[t].info;
                const tj_type_info_t *built = tj_lazy_resolve(sd->types[t].type, was);
                sd->types[t].info = tj_type_hold(built);
                tj_lazy_return(was, built);
                tj_type_release(was);
            }
        if (!side_wants(sd))
            return;
    }
    sd->packed = true;
    sd->ctx = where.ctx;
    sd->device = where.device;
    sd->at = where;
}

/* Whether @p v fits the int of an int-form call (a large-count call takes any). */
static bool fits_int(const tj_coll_call_t *c, int64_t v, const char *what)
{
    if (c->large || v <= INT_MAX)
        return true;
    tj_log_error("a device collective's packed %s is %lld, more than an MPI int can say (%d); "
                 "MPI_ERR_COUNT",
                 what, (long long)v, INT_MAX);
    return false;
}

/* Element @p i of a packed side's counts or displacements, in the call's form. */
static void put_count(const tj_coll_call_t *c, void *a, int i, int64_t v)
{
    if (c->large)
        ((MPI_Count *)a)[i] = (MPI_Count)v;
    else
        ((int *)a)[i] = (int)v;
}

static void put_displ(const tj_coll_call_t *c, void *a, int i, int64_t v)
{
    if (c->large)
        ((MPI_Aint *)a)[i] = (MPI_Aint)v;
    else
        ((int *)a)[i] = (int)v;
}

/* @p n bytes rounded up to the alignment of every type the arguments' arrays hold. */
static size_t aligned(size_t n)
{
    const size_t a = _Alignof(max_align_t);
    return (n + a - 1) / a * a;
}

/* Packed offsets, the types of the packed bytes and the arguments the system MPI gets; MPI result.
 */
int tj_coll_packed_layout(const tj_coll_call_t *c, tj_coll_side_t *sd, bool bytes_displs)
{
    size_t k = sd->n > 0 ? (size_t)sd->n : 1;
    int64_t at = 0;

    size_t adispls = aligned(k * sizeof(MPI_Aint));
    size_t counts = aligned(k * (c->large ? sizeof(MPI_Count) : sizeof(int)));
    size_t displs = aligned(k * (c->large ? sizeof(MPI_Aint) : sizeof(int)));
    char *block = malloc(adispls + counts + displs + k * sizeof(MPI_Datatype));

    if (block == NULL) {
        tj_log_error("out of memory laying out a collective of %d peers", sd->n);
        return MPI_ERR_NO_MEM;
    }
    sd->wadispls = (MPI_Aint *)block;
    sd->wcounts = block + adispls;
    sd->wdispls = block + adispls + counts;
    sd->wtypes = (MPI_Datatype *)(block + adispls + counts + displs);
    for (int t = 0; t < sd->ntypes; t++) {
        tj_coll_type_t *ct = &sd->types[t];
        int rc;
        if (ct->info->size == 0)
            continue;
        if (!fits_int(c, ct->info->size, "object size"))
            return MPI_ERR_COUNT;
        if ((rc = tj_count_contiguous(ct->info->size, MPI_BYTE, &ct->packed_type)) != MPI_SUCCESS)
            return rc;
        if ((rc = PMPI_Type_commit(&ct->packed_type)) != MPI_SUCCESS)
            return rc;
    }
    for (int i = 0; i < sd->n; i++) {
        tj_coll_slice_t *sl = &sd->slices[i];
        const tj_coll_type_t *ct = &sd->types[sl->t];
        int64_t len;
        if (!tj_mul64(sl->count, ct->info->size, &len) || !tj_add64(at, len, &sd->bytes)) {
            tj_log_error("a device collective's packed size overflows 64 bits; MPI_ERR_COUNT");
            return MPI_ERR_COUNT;
        }
        sl->poff = at;
        put_count(c, sd->wcounts, i, ct->info->size > 0 ? sl->count : 0);
        sd->wtypes[i] = ct->packed_type != MPI_DATATYPE_NULL ? ct->packed_type : MPI_BYTE;
        sd->wadispls[i] = (MPI_Aint)at;
        if (bytes_displs) {
            if (!fits_int(c, at, "byte displacement"))
                return MPI_ERR_COUNT;
            put_displ(c, sd->wdispls, i, at);
        } else {
            /* In objects of the packed bytes' type, whose extent is the type's size. */
            int64_t d = ct->info->size > 0 ? at / ct->info->size : 0;
            if (!fits_int(c, d, "displacement"))
                return MPI_ERR_COUNT;
            put_displ(c, sd->wdispls, i, d);
        }
        at = sd->bytes;
    }
    return MPI_SUCCESS;
}

int tj_coll_packed_stage(tj_coll_side_t *sd)
{
    size_t len = (size_t)(sd->bytes > 0 ? sd->bytes : 1);
    tj_gpu_scope_t scope;
    tj_status_t st;

    if (sd->blind)
        return tj_staging_host(len, &sd->stage) == TJ_OK ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if ((st = tj_gpu_enter_at(&sd->at, &scope)) != TJ_OK)
        return MPI_ERR_INTERN;
    st = tj_staging_get(TJ_STAGE_PINNED, len, &sd->stage);
    tj_gpu_leave(&scope);
    return st == TJ_OK ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}
