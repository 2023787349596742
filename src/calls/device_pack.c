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
    bool pack;
    const tj_type_info_t *info; /* with extents; strided or not */
    MPI_Datatype type;
    const char *typed; /* the user's typed buffer argument (may be MPI_BOTTOM) */
    int64_t count;
    char *packed; /* the packed buffer argument */
    int64_t bufsize;
    int64_t *position;
    MPI_Comm comm;
    int64_t bytes;   /* packed bytes of the call */
    tj_gpu_ptr_t tp; /* the typed side, queried at its first touched byte */
    tj_gpu_ptr_t pp; /* the packed side, queried at *position */
} call_t;

/* Invalid arguments, which every MPI reports before it touches a buffer. */
static bool invalid_call(const call_t *c)
{
    return c->count <= 0 || c->position == NULL || c->packed == NULL || c->comm == MPI_COMM_NULL ||
           *c->position < 0 || c->bufsize < 0 || c->type == MPI_DATATYPE_NULL;
}

/* Whether the packed bytes fit the packed buffer; writes their count. Not enough room is
 * typejit's to report: Open MPI reports it without touching the buffers, but the MPICH family
 * packs what fits first (MPICH 4.0.2), which on a device buffer is a fault. */
static bool fits(const call_t *c, int64_t *bytes)
{
    int64_t n, end;
    if (!tj_mul64(c->count, c->info->size, &n) || !tj_add64(*c->position, n, &end) ||
        end > c->bufsize)
        return false;
    *bytes = n;
    return true;
}

static int system_call(const call_t *c)
{
    return c->pack ? tj_count_pack(c->typed, c->count, c->type, c->packed, c->bufsize, c->position,
                                   c->comm)
                   : tj_count_unpack(c->packed, c->bufsize, c->position, (void *)c->typed, c->count,
                                     c->type, c->comm);
}

/* Both sides' bytes lie inside their allocations: a kernel or copy past the end of one would
 * fault on a GPU and leave the application's context unusable. So does a footprint whose
 * count x extent overflows (the kernel's addresses would wrap). */
static bool within(const call_t *c)
{
    uintptr_t at = (uintptr_t)(c->packed + *c->position);

    return tj_move_inside(c->info, c->typed, 0, c->count, &c->tp) &&
           tj_gpu_inside(&c->pp, at, at + (uintptr_t)c->bytes);
}

/* Errors typejit detects go through the communicator's error handler, as the system MPI
 * raises its own. */
static int fail(const call_t *c, int code)
{
    return tj_mpi_raise(c->comm, code);
}

/* @p own: room for the extents of a type typejit has no record of. */
static bool run(call_t *c, tj_type_info_t *own, int *rc)
{
    const tj_type_info_t *given = c->info;
    tj_move_t m;
    bool taken = true;

    if (!tj_gpu_available())
        return false;
    if (c->info == NULL) {
        /* A type with no record (never committed through typejit): staged if on the device. */
        memset(own, 0, sizeof(*own));
        tj_table_read_extents(c->type, own);
        c->info = own;
    }
    /* Zero bytes touch no memory: the system MPI answers, whatever the pointers are. */
    if (!c->info->extents || c->count <= 0 || c->info->size == 0 || c->position == NULL ||
        *c->position < 0)
        return false;
    /* A type at absolute addresses may have bytes in host and device memory at once. */
    if (c->info->wide &&
        (*rc = tj_span_check(c->info, c->type, c->typed, c->count,
                             c->pack ? "MPI_Pack" : "MPI_Unpack")) != MPI_SUCCESS) {
        *rc = fail(c, *rc);
        return true;
    }
    /* A buffer the driver cannot place is no host buffer: the call fails (the query said why). */
    if (tj_gpu_query(c->typed + c->info->true_lb, &c->tp) != TJ_OK ||
        tj_gpu_query(c->packed != NULL && *c->position < c->bufsize ? c->packed + *c->position
                                                                    : c->packed,
                     &c->pp) != TJ_OK) {
        *rc = fail(c, MPI_ERR_INTERN);
        return true;
    }
    if (!tj_gpu_device_like(c->tp.kind) && !tj_gpu_device_like(c->pp.kind))
        return false;
    c->info = tj_lazy_resolve(c->type, c->info);
    if (invalid_call(c)) {
        *rc = system_call(c);
        goto out;
    }
    if (!fits(c, &c->bytes)) {
        *rc = tj_mpi_raise(c->comm, MPI_ERR_TRUNCATE);
        goto out;
    }
    if (!within(c)) {
        tj_log_error("a device %s reaches outside its allocation (the datatype's bytes must lie "
                     "in one allocation per side, count x extent within the address space); "
                     "MPI_ERR_BUFFER",
                     c->pack ? "pack" : "unpack");
        *rc = fail(c, MPI_ERR_BUFFER);
        goto out;
    }
    m = (tj_move_t){.pack = c->pack,
                    .info = c->info,
                    .type = c->type,
                    .typed = c->typed,
                    .tp = c->tp,
                    .count = c->count,
                    .packed = c->packed + *c->position,
                    .pp = c->pp,
                    .bytes = c->bytes,
                    .comm = c->comm};
    if ((*rc = tj_move(&m)) == MPI_SUCCESS)
        *c->position += c->bytes;
    else
        *rc = fail(c, *rc);
out:
    if (given != NULL)
        tj_lazy_return(given, c->info);
    return taken;
}

tj_call_result_t tj_device_pack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                                int64_t incount, void *outbuf, int64_t outsize, int64_t *position,
                                MPI_Comm comm, int *rc)
{
    tj_type_info_t own;
    if (tj_gpu_absent())
        return TJ_CALL_PASS; /* no device: host buffers only, and nothing to ask */
    call_t c = {.pack = true,
                .info = info,
                .type = type,
                .typed = inbuf,
                .count = incount,
                .packed = outbuf,
                .bufsize = outsize,
                .position = position,
                .comm = comm};
    return run(&c, &own, rc) ? TJ_CALL_TAKEN : TJ_CALL_PASS;
}

tj_call_result_t tj_device_unpack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                                  int64_t insize, int64_t *position, void *outbuf, int64_t outcount,
                                  MPI_Comm comm, int *rc)
{
    tj_type_info_t own;
    if (tj_gpu_absent())
        return TJ_CALL_PASS;
    call_t c = {.pack = false,
                .info = info,
                .type = type,
                .typed = outbuf,
                .count = outcount,
                .packed = (void *)inbuf,
                .bufsize = insize,
                .position = position,
                .comm = comm};
    return run(&c, &own, rc) ? TJ_CALL_TAKEN : TJ_CALL_PASS;
}
