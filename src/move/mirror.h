/* SPDX-License-Identifier: BSD-3-Clause */
/* Host mirrors: the exact staging of a device buffer for a call that the system MPI runs on host
 * memory with the application's own datatype (reductions, one-sided origin buffers, file I/O,
 * external32 packing). A mirror holds the buffer's whole typed footprint, read from the device
 * when it is made, so that every byte the MPI does not write keeps its value; after the call only
 * the bytes the datatype covers go back to the device (a kernel unpacks the mirror's packed
 * bytes), or, for a type without a kernel, the footprint as a whole. */
#ifndef TJ_MOVE_MIRROR_H
#define TJ_MOVE_MIRROR_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpu/cuda.h"
#include "type/table.h"

typedef struct {
    char *user; /* the application's buffer argument */
    int64_t count;
    MPI_Datatype type;   /* for the write-back: the application's, or a kept duplicate */
    bool own_type;       /* `type` is typejit's duplicate */
    /* The type's record, held until tj_mirror_free, or NULL: `own` has its extents (a type
     * typejit has no record of). tj_mirror_info reads whichever it is. */
    const tj_type_info_t *rec;
    tj_type_info_t own;
    int64_t lo, hi;      /* the footprint, relative to `user` */
    tj_gpu_ptr_t at;     /* the allocation of the footprint's first byte */
    char *host;          /* [lo, hi) in host memory, once fetched */
    int error; /* tj_mirror_fetch refuses it: MPI_ERR_BUFFER, a wide type's bytes lie apart;
                * MPI_ERR_INTERN, the driver cannot tell where the buffer lies */
} tj_mirror_t;

/* Whether `count` objects of @p type at @p buf lie in device or managed memory (their first
 * byte does), so that a call the system MPI runs on them needs a mirror; @p m is then set up
 * for tj_mirror_fetch. False for host memory and for calls that touch no byte (count 0, an empty
 * type, a type the system MPI does not know: it answers those itself). @p info may be NULL for
 * a type typejit has no record of. One pointer query, none without a device. A wide type whose
 * bytes lie in more than one allocation or memory kind is found too, with `error` set (one error
 * line naming @p fn said so), for tj_mirror_fetch to refuse, and so is a buffer the driver cannot
 * place (a query that failed: never taken for host memory). */
bool tj_mirror_find(const tj_type_info_t *info, MPI_Datatype type, const void *buf, int64_t count,
                    const char *fn, tj_mirror_t *m);

/* Copy the footprint to host memory. MPI result: MPI_ERR_BUFFER (one error line, naming @p fn)
 * when the footprint reaches outside its allocation, MPI_ERR_NO_MEM, MPI_ERR_INTERN when the
 * driver fails (it said why), or the `error` tj_mirror_find found. */
int tj_mirror_fetch(tj_mirror_t *m, const char *fn);

static inline const tj_type_info_t *tj_mirror_info(const tj_mirror_t *m)
{
    return m->rec != NULL ? m->rec : &m->own;
}

/* The buffer argument to give the system MPI in place of the application's. */
static inline void *tj_mirror_arg(const tj_mirror_t *m)
{
    return m->host - m->lo;
}

/* Write back from a duplicate of the type from now on (the application may free its type
 * before a non-blocking call completes). MPI result. */
int tj_mirror_keep_type(tj_mirror_t *m);

/* Write the bytes the type covers back to the device. MPI result. */
int tj_mirror_write_back(tj_mirror_t *m);

/* Release the host copy and the type duplicate. */
void tj_mirror_free(tj_mirror_t *m);

#endif /* TJ_MOVE_MIRROR_H */
