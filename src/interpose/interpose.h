/* Shared state of the PMPI wrappers: the re-entry guard and the "is typejit active" test. */
#ifndef TJ_INTERPOSE_INTERPOSE_H
#define TJ_INTERPOSE_INTERPOSE_H

#include <mpi.h>
#include <stdbool.h>

#include "type/table.h"
#include "util/config.h"

/* Set while a wrapper runs, so that an MPI call the system MPI makes from inside one of our
 * PMPI calls goes straight through. */
extern _Thread_local int tj_in_wrapper;

/* True when this call should be looked at: typejit is enabled, MPI is initialised by us and we
 * are not inside another wrapper. */
bool tj_interpose_active(void);

/* The record of @p type, computing it on first use for named types (which are never
 * committed). */
bool tj_interpose_lookup(MPI_Datatype type, tj_type_info_t *info);

/* Translate @p type and record it (MPI_Type_commit). */
void tj_interpose_record(MPI_Datatype type);

#endif /* TJ_INTERPOSE_INTERPOSE_H */
