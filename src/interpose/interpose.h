/* Shared state of the PMPI wrappers: the re-entry guard and the "is typejit active" test. */
#ifndef TJ_INTERPOSE_INTERPOSE_H
#define TJ_INTERPOSE_INTERPOSE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "interpose/wrappers.h"
#include "type/table.h"
#include "type/translate.h"
#include "util/config.h"

/* Set while a wrapper runs, so that an MPI call the system MPI makes from inside one of our
 * PMPI calls goes straight through. */
extern _Thread_local int tj_in_wrapper __attribute__((tls_model("initial-exec")));

/* True when this call should be looked at: typejit is enabled, MPI is initialised by us and we
 * are not inside another wrapper. */
bool tj_interpose_active(void);

/* The record of @p type, computing it on first use for named types (which are never
 * committed). */
bool tj_interpose_lookup(MPI_Datatype type, tj_type_info_t *info);

/* Translate @p type and record it (MPI_Type_commit). */
void tj_interpose_record(MPI_Datatype type);

/* Record what the constructor call @p args made of @p type, just created (constructors.c). */
void tj_interpose_learn(MPI_Datatype type, const tj_type_args_t *args);

/* The one-line description of a record, as tj_type_describe writes it. */
void tj_interpose_describe(const tj_type_info_t *info, char *buf, size_t len);

/* Activate typejit after the system MPI's MPI_Init or MPI_Init_thread returned MPI_SUCCESS
 * (init.c; also the Fortran entry points). */
void tj_interpose_after_init(void);

/* Point every exported Fortran entry point at the system MPI's own (fortran.c), before typejit
 * steps aside (pairing.c). */
void tj_fortran_step_aside(void);

#endif /* TJ_INTERPOSE_INTERPOSE_H */
