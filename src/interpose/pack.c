/* MPI_Pack, MPI_Unpack, MPI_Pack_size, and MPI_Pack_external and MPI_Unpack_external (device
 * buffers staged through host memory, src/send/external.c). The engine takes only calls it can
 * complete exactly; every call the system MPI would reject (bad arguments, a too-small buffer) is
 * passed to it unchanged so that the error code and error handler are the system MPI's own. */
#include <stdint.h>

#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "send/devpack.h"
#include "send/external.h"
#include "type/cpu.h"
#include "util/common.h"
#include "util/mpierr.h"
#include "util/stats.h"

/* The engine's share: a strided type, a valid communicator, and `count` objects that fit
 * between *position and `bufsize`. Writes the byte count to @p bytes. */
static bool engine_takes(const tj_type_info_t *info, int count, const int *position, int bufsize,
                         const void *packed, MPI_Comm comm, int64_t *bytes)
{
    int64_t n, end;

    if (!info->strided || count <= 0 || position == NULL || packed == NULL ||
        comm == MPI_COMM_NULL || *position < 0 || bufsize < 0)
        return false;
    if (!tj_mul64(count, info->block.size, &n) || !tj_add64(*position, n, &end) || end > bufsize)
        return false;
    *bytes = n;
    return true;
}

int TJ_WRAPPER(MPI_Pack)(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                         int outsize, int *position, MPI_Comm comm)
{
    tj_type_info_t info;
    bool known;
    int64_t bytes;
    int rc;

    if (!tj_interpose_active())
        return PMPI_Pack(inbuf, incount, datatype, outbuf, outsize, position, comm);
    known = tj_interpose_lookup(datatype, &info);
    if (tj_devpack_pack(known ? &info : NULL, datatype, inbuf, incount, outbuf, outsize, position,
                        comm, &rc))
        return rc;
    if (tj_config()->host == TJ_HOST_ENGINE && inbuf != NULL && known &&
        engine_takes(&info, incount, position, outsize, outbuf, comm, &bytes)) {
        tj_cpu_pack(&info.block, inbuf, incount, (char *)outbuf + *position);
        *position += (int)bytes;
        tj_stats_inc(TJ_STAT_packs_engine);
        return MPI_SUCCESS;
    }
    tj_stats_inc(TJ_STAT_packs_system);
    return PMPI_Pack(inbuf, incount, datatype, outbuf, outsize, position, comm);
}

int TJ_WRAPPER(MPI_Unpack)(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                           MPI_Datatype datatype, MPI_Comm comm)
{
    tj_type_info_t info;
    bool known;
    int64_t bytes;
    int rc;

    if (!tj_interpose_active())
        return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, datatype, comm);
    known = tj_interpose_lookup(datatype, &info);
    if (tj_devpack_unpack(known ? &info : NULL, datatype, inbuf, insize, position, outbuf, outcount,
                          comm, &rc))
        return rc;
    if (tj_config()->host == TJ_HOST_ENGINE && outbuf != NULL && known &&
        engine_takes(&info, outcount, position, insize, inbuf, comm, &bytes)) {
        tj_cpu_unpack(&info.block, (const char *)inbuf + *position, outcount, outbuf);
        *position += (int)bytes;
        tj_stats_inc(TJ_STAT_unpacks_engine);
        return MPI_SUCCESS;
    }
    tj_stats_inc(TJ_STAT_unpacks_system);
    return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, datatype, comm);
}

int TJ_WRAPPER(MPI_Pack_size)(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    /* The packed size is the system MPI's: typejit packs the same bytes. */
    return PMPI_Pack_size(incount, datatype, comm, size);
}

int TJ_WRAPPER(MPI_Pack_external)(const char datarep[], const void *inbuf, int incount,
                                  MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
                                  MPI_Aint *position)
{
    tj_type_info_t info;
    tj_staged_result_t r = TJ_STAGED_PASS;
    int rc;

    if (tj_interpose_device_calls())
        r = tj_external_pack(tj_interpose_lookup(datatype, &info) ? &info : NULL, datarep, inbuf,
                             incount, datatype, outbuf, outsize, position, &rc);
    if (r == TJ_STAGED_FAILED)
        tj_mpi_raise(MPI_COMM_WORLD, rc);
    if (r != TJ_STAGED_PASS)
        return rc;
    return PMPI_Pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position);
}

int TJ_WRAPPER(MPI_Unpack_external)(const char datarep[], const void *inbuf, MPI_Aint insize,
                                    MPI_Aint *position, void *outbuf, int outcount,
                                    MPI_Datatype datatype)
{
    tj_type_info_t info;
    tj_staged_result_t r = TJ_STAGED_PASS;
    int rc;

    if (tj_interpose_device_calls())
        r = tj_external_unpack(tj_interpose_lookup(datatype, &info) ? &info : NULL, datarep, inbuf,
                               insize, position, outbuf, outcount, datatype, &rc);
    if (r == TJ_STAGED_FAILED)
        tj_mpi_raise(MPI_COMM_WORLD, rc);
    if (r != TJ_STAGED_PASS)
        return rc;
    return PMPI_Unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype);
}
