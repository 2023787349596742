/* SPDX-License-Identifier: BSD-3-Clause */
/* The streamed decision over the members of an indexed or struct type (see members.h). */
#include "type/members.h"

static tj_status_t scan_final(tj_member_scan_t *s, const tj_member_t *m, tj_reason_t *why)
{
    int64_t d;

    if (s->k > 0) {
        if (!tj_member_same_shape(m, &s->first))
            return tj_reason_not_strided(s->unequal, why);
        if (__builtin_sub_overflow(m->offset, s->prev, &d))
            return tj_reason_not_strided(TJ_REASON_IRREGULAR_DISPLS, why);
        if (s->k == 1)
            s->step = d;
        else if (d != s->step)
            return tj_reason_not_strided(TJ_REASON_IRREGULAR_DISPLS, why);
    } else
        s->first = *m;
    s->prev = m->offset;
    s->k++;
    return TJ_OK;
}

tj_status_t tj_members_add(tj_member_scan_t *s, const tj_member_t *m, tj_reason_t *why)
{
    tj_member_t *p = &s->pending;
    int64_t end, size;

    if (s->has_pending && p->dense && m->dense &&
        !__builtin_add_overflow(p->offset, p->size, &end) && end == m->offset &&
        !__builtin_add_overflow(p->size, m->size, &size)) {
        p->size = size;
        return TJ_OK;
    }
    if (s->has_pending) {
        tj_status_t st = scan_final(s, p, why);
        if (st != TJ_OK)
            return st;
    }
    *p = *m;
    s->has_pending = true;
    return TJ_OK;
}

tj_status_t tj_members_end(tj_member_scan_t *s, tj_reason_t *why)
{
    tj_status_t st = TJ_OK;
    if (s->has_pending)
        st = scan_final(s, &s->pending, why);
    s->has_pending = false;
    return st;
}

int64_t tj_members_steady_run(const tj_members_t *ms, int64_t i, int64_t bl, int64_t ext,
                              int64_t csum, int64_t limit, tj_member_scan_t *s)
{
    const int64_t step = s->step;
    int64_t off = s->pending.offset, next;
    int64_t j = i;

    for (; j < ms->n; j++) {
        int64_t disp;
        if (tj_members_blocklen(ms, j) != bl)
            break;
        if (ms->byte_displs.p != NULL)
            disp = tj_array_at(ms->byte_displs, j);
        else if (__builtin_mul_overflow(tj_array_at(ms->displs, j), ext, &disp))
            break;
        if (disp > limit || disp < -limit || __builtin_add_overflow(off, step, &next) ||
            disp + csum != next)
            break;
        off = next;
    }
    if (j > i) {
        s->k += j - i;
        s->prev = off - step;
        s->pending.offset = off;
    }
    return j;
}
