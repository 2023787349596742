/* SPDX-License-Identifier: BSD-3-Clause */
/* Why a datatype is not strided: one reason per decision of the translation, shown in the debug
 * log and by tj_type_describe ("not strided (irregular block lengths): system MPI"). */
#ifndef TJ_TYPE_REASON_H
#define TJ_TYPE_REASON_H

#include <stdbool.h>

#include "typejit.h"

#define TJ_REASON_LIST(_X)                                                                         \
    _X(NONE, "strided")                                                                            \
    _X(DEPTH, "nesting too deep")                                                                  \
    _X(CHAIN, "more than 48 strided levels")                                                       \
    _X(DIMS, "more than 16 strided dimensions")                                                    \
    _X(NAMED_HOLES, "named type with holes")                                                       \
    _X(IRREGULAR_BLOCKS, "irregular block lengths")                                                \
    _X(IRREGULAR_DISPLS, "irregular displacements")                                                \
    _X(MIXED_MEMBERS, "mixed struct members")                                                      \
    _X(STRIDE_M1, "byte stride -1, which Open MPI reads as contiguous")                            \
    _X(DARRAY, "darray")                                                                           \
    _X(PARTS, "more than 4194304 pieces")                                                          \
    _X(COMBINER, "constructor not handled")                                                        \
    _X(EMPTY, "packs no bytes")                                                                    \
    _X(BLOCK, "no strided block of this shape")                                                    \
    _X(SIZE, "size disagrees with the system MPI")

typedef enum {
#define TJ_REASON_ENUM(_name, _msg) TJ_REASON_##_name,
    TJ_REASON_LIST(TJ_REASON_ENUM)
#undef TJ_REASON_ENUM
} tj_reason_t;

/* Text of a reason, a static lowercase string. */
const char *tj_reason_string(tj_reason_t reason);

/* TJ_ERR_NOT_STRIDED, with @p reason written to @p why: what a translation returns where it
 * decides that a type is not strided, so that the innermost level's reason comes back through
 * its parents. */
static inline tj_status_t tj_reason_not_strided(tj_reason_t reason, tj_reason_t *why)
{
    *why = reason;
    return TJ_ERR_NOT_STRIDED;
}

/* Whether a type left out for @p reason may still have a layout (type/flatten.h): its typemap
 * is some list of strided pieces, not something typejit cannot or may not move. */
bool tj_reason_layout(tj_reason_t reason);

#endif /* TJ_TYPE_REASON_H */
