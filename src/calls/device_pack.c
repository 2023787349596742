/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Pack and MPI_Unpack on device buffers: the calls' own checks, one pointer query per side,
 * and the move (move/move.h). A call is the GPU's when the first byte the type touches, or the
 * first packed byte, is in device or managed memory. Calls the system MPI would reject go to it
 * unchanged, and it rejects them before touching any buffer. */
#include "calls/device_pack.h"

#include <stdint.h>
#include <string.h>

#include "move/count.h"
#include "move/move.h"
#include "move/span.h"
#include "type/lazy.h"
#include "util/common.h"
#include "util/log.h"
#include "util/mpierr.h"

/* One MPI_Pack or MPI_Unpack call, in the terms both directions share. */
typedef struct {
    /* The move the call makes (move/move.h): m.tp is queried at the typed side's first touched
     * byte, m.pp at *position; m.packed is set once the call is checked. */
    tj_move_t m;
    char *packed; /* the packed buffer argument */
    int64_t bufsize;
    int64_t *position;
} call_t;

/* Invalid arguments, which every MPI reports before it touches a buffer. */
static bool invalid_call(const call_t *c)
{
    return c->m.count <= 0 || c->position == NULL || c->packed == NULL ||
           c->m.comm == MPI_COMM_NULL || *c->position < 0 || c->bufsize < 0 ||
           c->m.type == MPI_DATATYPE_NULL;
}

/* Whether the packed bytes fit the packed buffer; writes their count. Not enough room is
 * typejit's to report: Open MPI reports it without touching the buffers, but the MPICH family
 * packs what fits first (MPICH 4.0.2), which on a device buffer is a fault. */
static bool fits(const call_t *c, int64_t *bytes)
{
    int64_t n, end;
    if (!tj_mul64(c->m.count, c->m.info->size, &n) || !tj_add64(*c->position, n, &end) ||
        end > c->bufsize)
        return false;
    *bytes = n;
    return true;
}

static int system_call(const call_t *c)
{
    return c->m.pack ? tj_count_pack(c->m.typed, c->m.count, c->m.type, c->packed, c->bufsize,
                                     c->position, c->m.comm)
                     : tj_count_unpack(c->packed, c->bufsize, c->position, (void *)c->m.typed,
                                       c->m.count, c->m.type, c->m.comm);
}

/* Both sides' bytes lie inside their allocations: a kernel or copy past the end of one would
 * fault on a GPU and leave the application's context unusable. So does a footprint whose
 * count x extent overflows (the kernel's addresses would wrap). */
static bool within(const call_t *c)
{
    uintptr_t at = (uintptr_t)(c->packed + *c->position);

    return tj_move_inside(c->m.info, c->m.typed, 0, c->m.count, &c->m.tp) &&
           tj_gpu_inside(&c->m.pp, at, at + (uintptr_t)c->m.bytes);
}

/* Errors typejit detects go through the communicator's error handler, as the system MPI
 * raises its own. */
static int fail(const call_t *c, int code)
{
    return tj_mpi_raise(c->m.comm, code);
}

/* @p own: room for the extents of a type typejit has no record of. */
static bool run(call_t *c, tj_type_info_t *own, int *rc)
{
    const tj_type_info_t *given = c->m.info;
    bool taken = true;

    if (!tj_gpu_available())
        return false;
    if (c->m.info == NULL) {
        /* A type with no record (never committed through typejit): staged if on the device. */
        memset(own, 0, sizeof(*own));
        tj_table_read_extents(c->m.type, own);
        c->m.info = own;
    }
    /* Zero bytes touch no memory: the system MPI answers, whatever the pointers are. */
    if (!c->m.info->extents || c->m.count <= 0 || c->m.info->size == 0 || c->position == NULL ||
        *c->position < 0)
        return false;
    /* A type at absolute addresses may have bytes in host and device memory at once. */
    if (c->m.info->wide &&
        (*rc = tj_span_check(c->m.info, c->m.type, c->m.typed, c->m.count,
                             c->m.pack ? "MPI_Pack" : "MPI_Unpack")) != MPI_SUCCESS) {
        *rc = fail(c, *rc);
        return true;
    }
    /* A buffer the driver cannot place is no host buffer: the call fails (the query said why). */
    if (tj_gpu_query(c->m.typed + c->m.info->true_lb, &c->m.tp) != TJ_OK ||
        tj_gpu_query(c->packed != NULL && *c->position < c->bufsize ? c->packed + *c->position
                                                                    : c->packed,
                     &c->m.pp) != TJ_OK) {
        *rc = fail(c, MPI_ERR_INTERN);
        return true;
    }
    if (!tj_gpu_device_like(c->m.tp.kind) && !tj_gpu_device_like(c->m.pp.kind))
        return false;
    c->m.info = tj_lazy_resolve(c->m.type, c->m.info);
    if (invalid_call(c)) {
        *rc = system_call(c);
        goto out;
    }
    if (!fits(c, &c->m.bytes)) {
        *rc = tj_mpi_raise(c->m.comm, MPI_ERR_TRUNCATE);
        goto out;
    }
    if (!within(c)) {
        tj_log_error("a device %s reaches outside its allocation (the datatype's bytes must lie "
                     "in one allocation per side, count x extent within the address space); "
                     "MPI_ERR_BUFFER",
                     c->m.pack ? "pack" : "unpack");
        *rc = fail(c, MPI_ERR_BUFFER);
        goto out;
    }
    c->m.packed = c->packed + *c->position;
    if ((*rc = tj_move(&c->m)) == MPI_SUCCESS)
        *c->position += c->m.bytes;
    else
        *rc = fail(c, *rc);
out:
    if (given != NULL)
        tj_lazy_return(given, c->m.info);
    return taken;
}

static inline tj_call_result_t device_call(bool pack, const tj_type_info_t *info, MPI_Datatype type,
                                           const void *typed, int64_t count, void *packed,
                                           int64_t bufsize, int64_t *position, MPI_Comm comm,
                                           int *rc)
{
    tj_type_info_t own;
    if (tj_gpu_absent())
        return TJ_CALL_PASS; /* no device: host buffers only, and nothing to ask */
    call_t c = {.m = {.pack = pack,
                      .info = info,
                      .type = type,
                      .typed = typed,
                      .count = count,
                      .comm = comm},
                .packed = packed,
                .bufsize = bufsize,
                .position = position};
    return run(&c, &own, rc) ? TJ_CALL_TAKEN : TJ_CALL_PASS;
}

tj_call_result_t tj_device_pack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                                int64_t incount, void *outbuf, int64_t outsize, int64_t *position,
                                MPI_Comm comm, int *rc)
{
    return device_call(true, info, type, inbuf, incount, outbuf, outsize, position, comm, rc);
}

tj_call_result_t tj_device_unpack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                                  int64_t insize, int64_t *position, void *outbuf, int64_t outcount,
                                  MPI_Comm comm, int *rc)
{
    return device_call(false, info, type, outbuf, outcount, (void *)inbuf, insize, position, comm,
                       rc);
}
