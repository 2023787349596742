/* SPDX-License-Identifier: BSD-3-Clause */
/* Device buffers at the MPI wrappers: whether a call may meet one, whether a buffer is one, and the
 * refusal of a call typejit cannot serve on device memory. */
#ifndef TJ_INTERPOSE_DEVICE_H
#define TJ_INTERPOSE_DEVICE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

/* Whether a call may find a device buffer at all: typejit active and a CUDA device present.
 * Once the driver is known to have no device, one load answers. */
bool tj_interpose_device_calls(void);

/* Whether the first byte that `count` objects of @p type at @p buf touch lies in device or
 * managed memory (*on); false for calls that touch no byte (the system MPI answers those). One
 * pointer query. MPI_ERR_INTERN when the driver cannot tell (the query said why): the caller
 * fails its call with it, and never hands the buffer to the system MPI as host memory. */
int tj_interpose_on_device(const void *buf, int64_t count, MPI_Datatype type, bool *on);

/* Refuse a call of @p fn on device memory: one error line (the first time for @p fn) saying
 * @p why, counted in calls_refused; returns MPI_ERR_BUFFER, for the caller to pass through the
 * error handler of the call's communicator, window or file. */
int tj_interpose_refuse(const char *fn, const char *why);

#endif /* TJ_INTERPOSE_DEVICE_H */
