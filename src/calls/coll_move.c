/* SPDX-License-Identifier: BSD-3-Clause */
/* Moving a packed side of a collective (see coll_move.h). */
#include "calls/coll_move.h"

#include <limits.h>

#include "move/count.h"
#include "move/fused.h"
#include "move/move.h"
#include "util/common.h"
#include "util/log.h"

/* Slices [i, j) form one run: same type, objects consecutive in the typed buffer and in the
 * packed one, none skipped. Returns j and the run's object count. */
static int run_end(const tj_coll_side_t *sd, int i, bool only_in, int64_t *objs)
{
    const tj_coll_slice_t *a = &sd->slices[i];
    const tj_coll_type_t *ct = &sd->types[a->t];
    int64_t n = a->count;
    int j = i + 1;

    for (; j < sd->n; j++) {
        const tj_coll_slice_t *b = &sd->slices[j];
        int64_t total, bytes;
        int64_t reach, next;
        if (b->t != a->t || b->skip || (only_in && !b->in) || !tj_add64(n, b->count, &total) ||
            !tj_count_sayable(total) || !tj_mul64(total, ct->info->size, &bytes) ||
            !tj_count_sayable(bytes) || !tj_mul64(n, ct->info->extent, &reach) ||
            !tj_add64(a->off, reach, &next) || b->off != next ||
            b->poff != a->poff + n * ct->info->size)
            break;
        n = total;
    }
    *objs = n;
    return j;
}

/* Pack (or unpack) every run of a packed side with one fused kernel launch (move/fused.c), into
 * @p b. False, with nothing moved, when the side does not fit: fewer than two runs or more than
 * TJ_FUSED_MAX, a type with no record, or what tj_fused_move refuses; the caller then goes run
 * by run. */
static bool fused_move(tj_coll_side_t *sd, bool pack, tj_batch_t *b)
{
    tj_fused_item_t items[TJ_FUSED_MAX];
    int n = 0;

    if (sd->stage == NULL || sd->stage->dev == 0)
        return false;
    for (int i = 0; i < sd->n;) {
        const tj_coll_slice_t *sl = &sd->slices[i];
        const tj_coll_type_t *ct = &sd->types[sl->t];
        int64_t objs;

        if (sl->skip || sl->count == 0 || ct->info->size == 0) {
            i++;
            continue;
        }
        if (n == TJ_FUSED_MAX || !ct->known)
            return false;
        i = run_end(sd, i, false, &objs);
        items[n++] = (tj_fused_item_t){ct->info, sl->off, sl->poff, objs};
    }
    return tj_fused_move(sd->buf, sd->ctx, &sd->at, sd->stage->dev, items, n,
                         pack ? TJ_DIR_PACK : TJ_DIR_UNPACK, b);
}

/* Pack (or unpack) every slice of a packed side that moves bytes, into @p b; @p only_in: the
 * MPI_IN_PLACE slices. Returns the MPI result. */
int tj_coll_move_side(tj_coll_t *x, tj_coll_side_t *sd, bool pack, bool only_in, tj_batch_t *b)
{
    /* What a query of the staging would say: typejit made it. */
    tj_gpu_ptr_t at = tj_staging_where(sd->stage, sd->device);
    int i = 0;

    if (!only_in && fused_move(sd, pack, b))
        return MPI_SUCCESS;
    while (i < sd->n) {
        const tj_coll_slice_t *sl = &sd->slices[i];
        const tj_coll_type_t *ct = &sd->types[sl->t];
        int64_t objs;
        int j, rc = MPI_SUCCESS;
        int64_t pos = 0, len;
        char *typed, *packed;
        tj_gpu_ptr_t where;

        if (sl->skip || sl->count == 0 || ct->info->size == 0 || (only_in && !sl->in)) {
            i++;
            continue;
        }
        j = run_end(sd, i, only_in, &objs);
        if (!tj_count_sayable(objs * ct->info->size)) {
            tj_log_error("a device collective's slice of %lld packed bytes is more than this MPI "
                         "can say (%d); MPI_ERR_COUNT",
                         (long long)(objs * ct->info->size), INT_MAX);
            return MPI_ERR_COUNT;
        }
        len = objs * ct->info->size;
        typed = sd->buf + sl->off;
        packed = sd->stage->host + sl->poff;
        /* The side's one query answers for every slice inside the same allocation. */
        where = sd->at;
        if (!tj_move_inside(ct->info, typed, 0, objs, &where) &&
            tj_gpu_query(typed + ct->info->true_lb, &where) != TJ_OK)
            return MPI_ERR_INTERN; /* the query said why */
        if (!tj_gpu_device_like(where.kind)) {
            /* A slice in host memory: the system MPI packs it where it lies. */
            rc = pack ? tj_count_pack(typed, objs, ct->type, packed, len, &pos, x->c.comm)
                      : tj_count_unpack(packed, len, &pos, typed, objs, ct->type, x->c.comm);
        } else if (!tj_move_inside(ct->info, typed, 0, objs, &where)) {
            tj_log_error("a device collective's slice reaches outside its allocation (the "
                         "datatype's bytes must lie in one allocation); MPI_ERR_BUFFER");
            rc = MPI_ERR_BUFFER;
        } else {
            tj_move_t m = {.pack = pack,
                           .info = ct->info,
                           .type = ct->type,
                           .typed = typed,
                           .tp = where,
                           .count = objs,
                           .packed = packed,
                           .pp = at,
                           .bytes = len,
                           .comm = x->c.comm,
                           .batch = b};
            m.pp.id = 0;
            rc = tj_move(&m);
        }
        if (rc != MPI_SUCCESS)
            return rc;
        i = j;
    }
    return MPI_SUCCESS;
}
