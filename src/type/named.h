/* SPDX-License-Identifier: BSD-3-Clause */
/* Named datatypes (the predefined ones, and the F90 types MPI makes) as IR: one dense run, or not
 * strided when the type has holes; the last few translated on each thread are kept. */
#ifndef TJ_TYPE_NAMED_H
#define TJ_TYPE_NAMED_H

#include <mpi.h>
#include <stdbool.h>

#include "type/ir.h"
#include "type/reason.h"

/* The translation of @p type when it is one of the last few named types tj_named_translate
 * translated on the calling thread: true, with its status in @p st and its IR in @p ir (or
 * its reason in @p why). False for any other type. */
bool tj_named_cached(MPI_Datatype type, tj_status_t *st, tj_ir_t *ir, tj_reason_t *why);

/* The IR of the named type @p type, remembered for tj_named_cached: a dense run when its size
 * equals its true extent, else TJ_ERR_NOT_STRIDED (TJ_REASON_NAMED_HOLES). */
tj_status_t tj_named_translate(MPI_Datatype type, tj_ir_t *ir, tj_reason_t *why);

#endif /* TJ_TYPE_NAMED_H */
