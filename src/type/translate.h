/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI datatype -> IR chain -> canonical strided block, through envelope and contents. */
#ifndef TJ_TYPE_TRANSLATE_H
#define TJ_TYPE_TRANSLATE_H

#include <mpi.h>
#include <stdbool.h>

#include "type/block.h"
#include "type/contents.h"
#include "type/ir.h"
#include "type/reason.h"

/* Every translation that returns TJ_ERR_NOT_STRIDED writes why into its last argument, @p why;
 * it is left as it was for any other status. */

/* The IR of one instance of @p type, one constructor level at a time, each level simplified as
 * soon as it is built (members of indexed and struct types are compared by their canonical
 * shape). Offsets are not yet hoisted. TJ_ERR_NOT_STRIDED when the typemap is not a
 * chain: irregular indexed, multi-member struct of different shapes, darray, holes in a named
 * type (@p why says which). */
tj_status_t tj_translate_ir(MPI_Datatype type, tj_ir_t *ir, tj_reason_t *why);

/* The canonical strided block of @p type (offsets hoisted into the start, extent and size from
 * the system MPI), and optionally the canonical IR it came from. TJ_ERR_NOT_STRIDED when the
 * type is not strided or packs no bytes. */
tj_status_t tj_translate_block_why(MPI_Datatype type, tj_block_t *block, tj_ir_t *canonical,
                                   tj_reason_t *why);

/* The same, for a caller that needs only the status. */
static inline tj_status_t tj_translate_block(MPI_Datatype type, tj_block_t *block,
                                             tj_ir_t *canonical)
{
    tj_reason_t why;
    return tj_translate_block_why(type, block, canonical, &why);
}

/* What tj_translate_ir gives for the type made by one constructor call, from its arguments:
 * children with a record of their creation (tj_table_put_known) are not translated again, the
 * others are translated through envelope and contents. */
tj_status_t tj_translate_args(const tj_type_args_t *args, tj_ir_t *ir, tj_reason_t *why);

/* The recorded translation of @p type: true when there is a record and the handle's envelope
 * still matches it (a handle freed unseen and reused by MPI does not), with its status in @p st
 * and, when that is TJ_ERR_NOT_STRIDED, its reason in @p why. */
bool tj_translate_known(MPI_Datatype type, tj_status_t *st, tj_ir_t *ir, tj_reason_t *why);

/* The second half of tj_translate_block_why: the canonical block of the chain @p raw, given the
 * type's MPI extent and size. @p raw must be simplified, as tj_translate_ir, tj_translate_args
 * and tj_translate_known give it. */
tj_status_t tj_translate_finish(const tj_ir_t *raw, int64_t extent, int64_t size, tj_block_t *block,
                                tj_ir_t *canonical, tj_reason_t *why);

#endif /* TJ_TYPE_TRANSLATE_H */
