/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Pack, MPI_Unpack, MPI_Pack_size, and MPI_Pack_external and MPI_Unpack_external (device
 * buffers staged through host memory, src/calls/external.c). The engine takes only calls it can
 * complete exactly; every call the system MPI would reject (bad arguments, a too-small buffer) is
 * passed to it unchanged so that the error code and error handler are the system MPI's own. */
#include <stdint.h>

#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "calls/device_pack.h"
#include "calls/external.h"
#include "type/lazy.h"
#include "type/cpu.h"
#include "util/common.h"
#include "util/mpierr.h"
#include "util/stats.h"

/* The engine's share: a strided type, a valid communicator, and `count` objects that fit
 * between *position and `bufsize`. Writes the byte count to @p bytes. */
static bool engine_takes(const tj_type_info_t *info, int64_t count, int64_t position,
                         int64_t bufsize, const void *packed, MPI_Comm comm, int64_t *bytes)
{
    int64_t n, end;

    if (!info->strided || count <= 0 || packed == NULL || comm == MPI_COMM_NULL || position < 0 ||
        bufsize < 0)
        return false;
    if (!tj_mul64(count, info->block.size, &n) || !tj_add64(position, n, &end) || end > bufsize)
        return false;
    *bytes = n;
    return true;
}

/* The record the CPU engine packs (or unpacks) a host call of @p datatype with, or NULL:
 * TYPEJIT_HOST=engine for every strided type (a pending type may be one: type/lazy.h, resolved
 * here, and given back with tj_lazy_return), auto as the cost model chose at commit, system
 * never. */
static inline const tj_type_info_t *host_engine(MPI_Datatype datatype, const tj_type_info_t *info,
                                                bool unpack)
{
    switch (tj_config()->host) {
    case TJ_HOST_ENGINE:
        return tj_lazy_resolve(datatype, info);
    case TJ_HOST_AUTO:
        return (unpack ? info->cpu.unpack : info->cpu.pack) ? info : NULL;
    default:
        return NULL;
    }
}

/* Nothing for typejit to do: no device, and the system MPI packs the host buffers of this type
 * (TYPEJIT_HOST=system, or auto where the cost model gave it the type; counted). A few loads.
 * Under MPI_THREAD_MULTIPLE, where a record is borrowed with a reference, the call goes the
 * longer way. */
static inline bool system_packs(MPI_Datatype type, bool unpack)
{
    const tj_config_t *cfg;
    const tj_type_info_t *info;

    if (!tj_gpu_absent())
        return false;
    cfg = tj_config();
    if (cfg->host != TJ_HOST_SYSTEM) {
        if (cfg->host != TJ_HOST_AUTO || tj_table_threaded())
            return false;
        info = tj_table_get(type);
        if (info == NULL || (unpack ? info->cpu.unpack : info->cpu.pack))
            return false;
    }
    tj_stats_inc(unpack ? TJ_STAT_unpacks_system : TJ_STAT_packs_system);
    return true;
}

/* MPI_Pack (@p unpack false) or MPI_Unpack, in 64-bit counts: whether typejit does the call (the
 * device paths, or the CPU engine on host buffers: host_engine), with *position advanced and the
 * result in *rc; false when the caller hands the call to the system MPI unchanged. @p inbuf and
 * @p outbuf as in the call, @p count objects of the typed buffer, @p size bytes of the packed
 * one. Always inlined with a constant direction: one function with a run-time direction flag
 * cost every steady MPI_Pack and MPI_Unpack 40 to 50 instructions more (bench/run-call-cost.sh). */
static inline __attribute__((always_inline)) bool take(bool unpack, const void *inbuf, void *outbuf,
                                                       int64_t count, int64_t size,
                                                       MPI_Datatype datatype, int64_t *position,
                                                       MPI_Comm comm, int *rc)
{
    const tj_type_info_t *info = tj_interpose_lookup(datatype), *e = NULL;
    const void *typed = unpack ? outbuf : inbuf, *packed = unpack ? inbuf : outbuf;
    tj_call_result_t r;
    int64_t bytes;
    bool taken = true;

    if (tj_gpu_absent())
        r = TJ_CALL_PASS;
    else if (unpack)
        r = tj_device_unpack(info, datatype, inbuf, size, position, outbuf, count, comm, rc);
    else
        r = tj_device_pack(info, datatype, inbuf, count, outbuf, size, position, comm, rc);
    if (r != TJ_CALL_PASS)
        goto out;
    if (typed != NULL && info != NULL && (e = host_engine(datatype, info, unpack)) != NULL &&
        engine_takes(e, count, *position, size, packed, comm, &bytes)) {
        if (unpack)
            tj_cpu_unpack_plan(&e->block, &e->cpu, (const char *)inbuf + *position, count, outbuf);
        else
            tj_cpu_pack_plan(&e->block, &e->cpu, inbuf, count, (char *)outbuf + *position);
        *position += bytes;
        tj_stats_inc(unpack ? TJ_STAT_unpacks_engine : TJ_STAT_packs_engine);
        *rc = MPI_SUCCESS;
        goto out;
    }
    tj_stats_inc(unpack ? TJ_STAT_unpacks_system : TJ_STAT_packs_system);
    taken = false;
out:
    if (e != NULL)
        tj_lazy_return(info, e);
    tj_table_return(info);
    return taken;
}

/* One wrapper: (MPI name, suffix, count type, direction, the names of the typed count and of the
 * packed size, the parameters and the arguments of the call). The position is handed over in 64
 * bits and written back only when typejit did the call: otherwise the system MPI's own form of
 * the call gets the application's arguments as they are. A position that typejit advanced stays
 * within the buffer size, so it fits the form's type. The wrapper is the few loads of its first
 * test and a tail call when typejit has nothing to do (no device, TYPEJIT_HOST=system): the rest
 * lies in a function of its own, so that the common case saves no registers. */
#define PACK_CALL(_name, _s, _cnt, _unpack, _count, _size, _params, _args)                         \
    __attribute__((noinline)) static int call_##_name##_s _params                                  \
    {                                                                                              \
        int64_t pos = *position;                                                                   \
        int rc;                                                                                    \
        if (!take(_unpack, inbuf, outbuf, _count, _size, datatype, &pos, comm, &rc))               \
            return PMPI_##_name##_s _args;                                                         \
        if (rc == MPI_SUCCESS)                                                                     \
            *position = (_cnt)pos;                                                                 \
        return rc;                                                                                 \
    }                                                                                              \
    int TJ_WRAPPER(MPI_##_name##_s) _params                                                        \
    {                                                                                              \
        if (!tj_interpose_active() || position == NULL || system_packs(datatype, _unpack))         \
            return PMPI_##_name##_s _args;                                                         \
        return call_##_name##_s _args;                                                             \
    }
#define PACK(_s, _cnt)                                                                             \
    PACK_CALL(Pack, _s, _cnt, false, incount, outsize,                                             \
              (const void *inbuf, _cnt incount, MPI_Datatype datatype, void *outbuf, _cnt outsize, \
               _cnt *position, MPI_Comm comm),                                                     \
              (inbuf, incount, datatype, outbuf, outsize, position, comm))
#define UNPACK(_s, _cnt)                                                                           \
    PACK_CALL(Unpack, _s, _cnt, true, outcount, insize,                                            \
              (const void *inbuf, _cnt insize, _cnt *position, void *outbuf, _cnt outcount,        \
               MPI_Datatype datatype, MPI_Comm comm),                                              \
              (inbuf, insize, position, outbuf, outcount, datatype, comm))
/* The packed size is the system MPI's: typejit packs the same bytes. */
#define PACK_SIZE(_s, _cnt)                                                                        \
    int TJ_WRAPPER(MPI_Pack_size##_s)(_cnt incount, MPI_Datatype datatype, MPI_Comm comm,          \
                                      _cnt * size)                                                 \
    {                                                                                              \
        return PMPI_Pack_size##_s(incount, datatype, comm, size);                                  \
    }

#define FORMS(_m) _m(, int) TJ_IF_LARGE(_m(_c, MPI_Count))
FORMS(PACK)
FORMS(UNPACK)
FORMS(PACK_SIZE)

/* external32, in its int form (int counts, MPI_Aint sizes and positions) and its large-count
 * form (MPI_Count throughout) from one definition: (suffix, count type, position type). */
#define EXTERNAL_FORMS(_m) _m(, int, MPI_Aint) TJ_IF_LARGE(_m(_c, MPI_Count, MPI_Count))

/* external32 on a device buffer (tj_external_*), @p inbuf, @p outbuf, @p count and @p size as in
 * take; errors typejit detects go through MPI_COMM_WORLD's handler (the call has no
 * communicator). */
static tj_call_result_t external(bool unpack, const char *datarep, const void *inbuf, void *outbuf,
                                 int64_t count, int64_t size, MPI_Datatype datatype,
                                 int64_t *position, int *rc)
{
    const tj_type_info_t *info = tj_interpose_lookup(datatype);
    tj_call_result_t r =
        unpack
            ? tj_external_unpack(info, datarep, inbuf, size, position, outbuf, count, datatype, rc)
            : tj_external_pack(info, datarep, inbuf, count, datatype, outbuf, size, position, rc);

    tj_table_return(info);
    if (r == TJ_CALL_FAILED)
        tj_mpi_raise(MPI_COMM_WORLD, *rc);
    return r;
}

/* One wrapper, as PACK_CALL: (MPI name, suffix, position type, direction, the names of the typed
 * count and of the packed size, the parameters and the arguments of the call). */
#define EXTERNAL_CALL(_name, _s, _pos, _unpack, _count, _size, _params, _args)                     \
    int TJ_WRAPPER(MPI_##_name##_s) _params                                                        \
    {                                                                                              \
        tj_call_result_t r = TJ_CALL_PASS;                                                         \
        int64_t pos = 0;                                                                           \
        int rc;                                                                                    \
        if (tj_interpose_device_calls() && position != NULL) {                                     \
            pos = *position;                                                                       \
            r = external(_unpack, datarep, inbuf, outbuf, _count, _size, datatype, &pos, &rc);     \
        }                                                                                          \
        if (r == TJ_CALL_PASS)                                                                     \
            return PMPI_##_name##_s _args;                                                         \
        if (r == TJ_CALL_TAKEN && rc == MPI_SUCCESS)                                               \
            *position = (_pos)pos;                                                                 \
        return rc;                                                                                 \
    }
#define PACK_EXTERNAL(_s, _cnt, _pos)                                                              \
    EXTERNAL_CALL(Pack_external, _s, _pos, false, incount, outsize,                                \
                  (const char datarep[], const void *inbuf, _cnt incount, MPI_Datatype datatype,   \
                   void *outbuf, _pos outsize, _pos *position),                                    \
                  (datarep, inbuf, incount, datatype, outbuf, outsize, position))
#define UNPACK_EXTERNAL(_s, _cnt, _pos)                                                            \
    EXTERNAL_CALL(Unpack_external, _s, _pos, true, outcount, insize,                               \
                  (const char datarep[], const void *inbuf, _pos insize, _pos *position,           \
                   void *outbuf, _cnt outcount, MPI_Datatype datatype),                            \
                  (datarep, inbuf, insize, position, outbuf, outcount, datatype))
EXTERNAL_FORMS(PACK_EXTERNAL)
EXTERNAL_FORMS(UNPACK_EXTERNAL)
