/* SPDX-License-Identifier: BSD-3-Clause */
/* The members of an indexed or struct type, streamed: whether they are one shape at evenly
 * spaced displacements, the members' part of the strided decision (type/translate.c builds each
 * member's shape from its child's translation).
 *
 * Each member is `blocklen` consecutive copies of its type at a byte displacement. The typemap
 * is strided when, after dropping empty members and merging members that continue one another,
 * all members have the same shape at evenly spaced displacements. Types with millions of members
 * are common (MPICH's DTPools, irregular halos written as indexed types), so the members are
 * streamed: each is compared with the first and with the spacing of the first two as it comes,
 * the scan stops at the first mismatch, and only a few members are ever held, so memory is
 * bounded by the nesting depth, not the member count. Merging only ever extends the member just
 * before, so the streamed decision is the one a pass over all member shapes would make. */
#ifndef TJ_TYPE_MEMBERS_H
#define TJ_TYPE_MEMBERS_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "type/contents.h"
#include "type/reason.h"
#include "util/common.h"

/* The members of one constructor call, as its arguments give them. */
typedef struct {
    tj_array_t blocklens;
    int bl_stride;          /* 0: one blocklen for all members (the _block forms), 1: one each */
    tj_array_t byte_displs; /* byte displacements; p NULL when they are element ones */
    tj_array_t displs;      /* element displacements, when byte_displs has none */
    const MPI_Datatype *types;
    int64_t ntypes; /* 1: every member has types[0]; n: struct */
    int64_t n;
} tj_members_t;

static inline int64_t tj_members_blocklen(const tj_members_t *ms, int64_t i)
{
    return tj_array_at(ms->blocklens, i * ms->bl_stride);
}

/* The byte displacement of member @p i, whose type has extent @p ext. */
static inline tj_status_t tj_members_displacement(const tj_members_t *ms, int64_t i, int64_t ext,
                                                  int64_t *disp)
{
    if (ms->byte_displs.p != NULL)
        *disp = tj_array_at(ms->byte_displs, i);
    else if (!tj_mul64(tj_array_at(ms->displs, i), ext, disp))
        return TJ_ERR_OVERFLOW;
    return TJ_OK;
}

/* One member, reduced to what the strided decision needs. Two members have equal shapes when
 * both are dense runs of the same size, or both are not dense and have the same key. */
typedef struct {
    int64_t offset; /* hoisted offset */
    int64_t size;   /* bytes: the extent of a dense member */
    int64_t key;    /* not dense: equal keys mean equal shapes */
    bool dense;
} tj_member_t;

static inline bool tj_member_same_shape(const tj_member_t *a, const tj_member_t *b)
{
    if (a->dense != b->dense)
        return false;
    return a->dense ? a->size == b->size : a->key == b->key;
}

/* The streamed decision: the first member, the pending one (which the next may still extend),
 * how many are final and their spacing. Starts zeroed, with the reason to give when two shapes
 * differ. */
typedef struct {
    tj_member_t first, pending;
    bool has_pending;
    int64_t k, step, prev;
    tj_reason_t unequal; /* the reason given when two shapes differ */
} tj_member_scan_t;

/* Add one non-empty member: it extends the pending one when both are dense and it starts where
 * the pending one ends; otherwise the pending one is final. TJ_ERR_NOT_STRIDED (and @p why)
 * when the members are not one shape at one spacing. */
tj_status_t tj_members_add(tj_member_scan_t *s, const tj_member_t *m, tj_reason_t *why);

/* The end of the members: the pending one is final. */
tj_status_t tj_members_end(tj_member_scan_t *s, tj_reason_t *why);

/* From member @p i on, accept the members of blocklen @p bl (their type of extent @p ext) whose
 * displacement plus @p csum, the sum of the child's offsets, lies one step beyond the pending
 * member, while the displacement stays within @p limit: each makes the pending member final and
 * replaces it. Returns the first member not accepted; the caller has checked that such members
 * do not merge. */
int64_t tj_members_steady_run(const tj_members_t *ms, int64_t i, int64_t bl, int64_t ext,
                              int64_t csum, int64_t limit, tj_member_scan_t *s);

#endif /* TJ_TYPE_MEMBERS_H */
