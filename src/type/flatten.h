/* SPDX-License-Identifier: BSD-3-Clause */
/* Translation of the datatypes that are not one strided block into layouts (type/layout.h):
 * indexed and struct types of any members, named types with a hole, darrays, chains too long for
 * a block. Run only for types the strided translation (type/translate.h) leaves out. */
#ifndef TJ_TYPE_FLATTEN_H
#define TJ_TYPE_FLATTEN_H

#include <mpi.h>

#include "type/layout.h"
#include "type/translate.h"

/* The layout of @p type through envelope and contents, not finished: its extent and size are
 * the caller's to give (tj_layout_finish). On TJ_ERR_NOT_STRIDED *why says why;
 * TJ_ERR_UNSUPPORTED: a darray, where the system MPI builds them otherwise than MPI defines
 * (tj_flatten_commit probes it). */
tj_status_t tj_flatten_type(MPI_Datatype type, tj_layout_t **out, tj_reason_t *why);

/* The finished layout of a committed @p type of MPI extent @p extent and size @p size that the
 * strided translation left out for @p reason, through envelope and contents (at the type's first
 * device call, type/lazy.h, or in the tools); where typejit cannot take the type apart (any
 * other reason, or a translation that fails or is unsupported), probed from the system MPI
 * (type/probe.h). TJ_ERR_NOT_STRIDED with *why when it has none. */
tj_status_t tj_flatten_commit(MPI_Datatype type, int64_t extent, int64_t size, tj_reason_t reason,
                              tj_layout_t **out, tj_reason_t *why);

/* What a commit and the type's first device call make of @p type, through its contents (the
 * tools'): TJ_OK with its strided block in *block and *layout NULL, or TJ_OK with its finished
 * layout in *layout (a reference the caller releases); TJ_ERR_NOT_STRIDED with *why when it has
 * neither (the system MPI handles it), another status when MPI or memory failed. */
tj_status_t tj_flatten_form(MPI_Datatype type, tj_block_t *block, tj_layout_t **layout,
                            tj_reason_t *why);

#endif /* TJ_TYPE_FLATTEN_H */
