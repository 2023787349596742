/* MPI datatype -> IR chain -> canonical strided block, through envelope and contents. */
#ifndef TJ_TYPE_TRANSLATE_H
#define TJ_TYPE_TRANSLATE_H

#include <mpi.h>

#include "type/block.h"
#include "type/ir.h"

/* The IR of one instance of @p type, one constructor level at a time, each level simplified as
 * soon as it is built (members of indexed and struct types are compared by their canonical
 * shape). Offsets are not yet hoisted. TJ_ERR_NOT_STRIDED when the typemap is not a
 * chain: irregular indexed, multi-member struct of different shapes, darray, holes in a named
 * type. */
tj_status_t tj_translate_ir(MPI_Datatype type, tj_ir_t *ir);

/* The canonical strided block of @p type (offsets hoisted into the start, extent and size from
 * the system MPI), and optionally the canonical IR it came from. TJ_ERR_NOT_STRIDED when the
 * type is not strided or packs no bytes. */
tj_status_t tj_translate_block(MPI_Datatype type, tj_block_t *block, tj_ir_t *canonical);

#endif /* TJ_TYPE_TRANSLATE_H */
