/* Shared state of the PMPI wrappers: the re-entry guard and the "is typejit active" test. */
#ifndef TJ_INTERPOSE_INTERPOSE_H
#define TJ_INTERPOSE_INTERPOSE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

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

/* Whether a call may find a device buffer at all: typejit active and a CUDA device present.
 * Once the driver is known to have no device, one load answers. */
bool tj_interpose_device_calls(void);

/* Whether the first byte that `count` objects of @p type at @p buf touch lies in device or
 * managed memory; false for calls that touch no byte (the system MPI answers those). One
 * pointer query. */
bool tj_interpose_on_device(const void *buf, int count, MPI_Datatype type);

/* Refuse a call of @p fn on device memory: one error line (the first time for @p fn) saying
 * @p why, counted in calls_refused; returns MPI_ERR_BUFFER, for the caller to pass through the
 * error handler of the call's communicator, window or file. */
int tj_interpose_refuse(const char *fn, const char *why);

/* Activate typejit after the system MPI's MPI_Init or MPI_Init_thread returned MPI_SUCCESS
 * (init.c; also the Fortran entry points). */
void tj_interpose_after_init(void);

#endif /* TJ_INTERPOSE_INTERPOSE_H */
