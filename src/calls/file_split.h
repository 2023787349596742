/* SPDX-License-Identifier: BSD-3-Clause */
/* Split collective file accesses in progress (MPI_File_*_begin ... _end): the staged buffer of
 * each file handle's _begin, until its _end. A file handle has at most one split collective in
 * progress (MPI-3.1 13.4.5). */
#ifndef TJ_CALLS_FILE_SPLIT_H
#define TJ_CALLS_FILE_SPLIT_H

#include <mpi.h>
#include <stdbool.h>

#include "calls/staged.h"

/* Remember @p s for @p fh. False (nothing remembered) when out of memory. */
bool tj_file_split_put(MPI_File fh, tj_staged_t *s);

/* Take the staged buffer of @p fh's split collective; NULL when its _begin was not staged. */
tj_staged_t *tj_file_split_take(MPI_File fh);

#endif /* TJ_CALLS_FILE_SPLIT_H */
