/* SPDX-License-Identifier: BSD-3-Clause */
/* Calls whose buffer the MPI keeps and reads or writes later from host code, which typejit
 * refuses on device memory (MPI_ERR_BUFFER, one error line) when the MPI is not CUDA-aware: the
 * buffered-send buffer, and the MPI 4 point-to-point forms typejit does not pack yet (Isendrecv,
 * Isendrecv_replace, partitioned), each also in its large-count form (`_c`) where the MPI has
 * them. The MPI_T value buffers are read and written by the MPI
 * library itself whatever its CUDA support: refused on device memory with MPI_T_ERR_INVALID. */
#include "gpu/cuda.h"
#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/wrappers.h"
#include "move/model.h"
#include "util/mpierr.h"

static const char kept_why[] =
    "the buffer is in device memory and the system MPI is not CUDA-aware (the MPI keeps it and "
    "reads or writes it from host code later; typejit does not stage this call)";

/* Whether the call @p fn with the buffers (@p b0, @p c0, @p t0) and (@p b1, @p c1, @p t1) must
 * fail: MPI_ERR_BUFFER when one is in device memory and the MPI is not CUDA-aware (refused),
 * MPI_ERR_INTERN when the driver cannot tell where one lies; MPI_SUCCESS to pass it on. */
static int refuse(const char *fn, const void *b0, int64_t c0, MPI_Datatype t0, const void *b1,
                  int64_t c1, MPI_Datatype t1)
{
    bool on0 = false, on1 = false;
    int rc;

    if (!tj_interpose_device_calls() || tj_model_cuda_aware())
        return MPI_SUCCESS;
    if ((rc = tj_interpose_on_device(b0, c0, t0, &on0)) != MPI_SUCCESS ||
        (!on0 && (rc = tj_interpose_on_device(b1, c1, t1, &on1)) != MPI_SUCCESS))
        return rc;
    return on0 || on1 ? tj_interpose_refuse(fn, kept_why) : MPI_SUCCESS;
}

/* Each wrapper in its int and large-count forms from one definition: (suffix, count type). */
#define FORMS(_m) _m(, int) TJ_IF_LARGE(_m(_c, MPI_Count))

#define BUFFER_ATTACH(_s, _cnt)                                                                    \
    int TJ_WRAPPER(MPI_Buffer_attach##_s)(void *buffer, _cnt size)                                 \
    {                                                                                              \
        int rc = refuse("MPI_Buffer_attach" #_s, buffer, size, MPI_BYTE, NULL, 0, MPI_BYTE);       \
        return rc != MPI_SUCCESS ? tj_mpi_raise(MPI_COMM_WORLD, rc)                                \
                                 : PMPI_Buffer_attach##_s(buffer, size);                           \
    }
FORMS(BUFFER_ATTACH)

#if defined(TJ_HAVE_MPI4)
#define ISENDRECV(_s, _cnt)                                                                        \
    int TJ_WRAPPER(MPI_Isendrecv##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype, int dest, \
                                      int stag, void *rbuf, _cnt rcount, MPI_Datatype rtype,       \
                                      int source, int rtag, MPI_Comm comm, MPI_Request *req)       \
    {                                                                                              \
        int rc = refuse("MPI_Isendrecv" #_s, sbuf, dest == MPI_PROC_NULL ? 0 : scount, stype,      \
                        rbuf, source == MPI_PROC_NULL ? 0 : rcount, rtype);                        \
        return rc != MPI_SUCCESS ? tj_mpi_raise(comm, rc)                                          \
                                 : PMPI_Isendrecv##_s(sbuf, scount, stype, dest, stag, rbuf,       \
                                                      rcount, rtype, source, rtag, comm, req);     \
    }
FORMS(ISENDRECV)

#define ISENDRECV_REPLACE(_s, _cnt)                                                                \
    int TJ_WRAPPER(MPI_Isendrecv_replace##_s)(void *buf, _cnt count, MPI_Datatype type, int dest,  \
                                              int stag, int source, int rtag, MPI_Comm comm,       \
                                              MPI_Request *req)                                    \
    {                                                                                              \
        int rc = refuse("MPI_Isendrecv_replace" #_s, buf, count, type, NULL, 0, MPI_BYTE);         \
        return rc != MPI_SUCCESS ? tj_mpi_raise(comm, rc)                                          \
                                 : PMPI_Isendrecv_replace##_s(buf, count, type, dest, stag,        \
                                                              source, rtag, comm, req);            \
    }
FORMS(ISENDRECV_REPLACE)

/* The partitioned inits, asked where the buffer's first object lies (nothing when it has no
 * bytes): (name, the buffer's qualifier, the peer). */
#define PARTITIONED(_name, _q, _peer)                                                              \
    int TJ_WRAPPER(MPI_##_name)(_q void *buf, int partitions, MPI_Count count, MPI_Datatype type,  \
                                int _peer, int tag, MPI_Comm comm, MPI_Info info,                  \
                                MPI_Request *req)                                                  \
    {                                                                                              \
        int rc = refuse("MPI_" #_name, buf, partitions > 0 && count > 0 ? 1 : 0, type, NULL, 0,    \
                        MPI_BYTE);                                                                 \
        return rc != MPI_SUCCESS                                                                   \
                   ? tj_mpi_raise(comm, rc)                                                        \
                   : PMPI_##_name(buf, partitions, count, type, _peer, tag, comm, info, req);      \
    }
PARTITIONED(Psend_init, const, dest)
PARTITIONED(Precv_init, , source)
#endif

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define COMM_ATTACH_BUFFER(_s, _cnt)                                                               \
    int TJ_WRAPPER(MPI_Comm_attach_buffer##_s)(MPI_Comm comm, void *buffer, _cnt size)             \
    {                                                                                              \
        int rc = refuse("MPI_Comm_attach_buffer" #_s, buffer, size, MPI_BYTE, NULL, 0, MPI_BYTE);  \
        return rc != MPI_SUCCESS ? tj_mpi_raise(comm, rc)                                          \
                                 : PMPI_Comm_attach_buffer##_s(comm, buffer, size);                \
    }
FORMS(COMM_ATTACH_BUFFER)

#define SESSION_ATTACH_BUFFER(_s, _cnt)                                                            \
    int TJ_WRAPPER(MPI_Session_attach_buffer##_s)(MPI_Session session, void *buffer, _cnt size)    \
    {                                                                                              \
        int rc =                                                                                   \
            refuse("MPI_Session_attach_buffer" #_s, buffer, size, MPI_BYTE, NULL, 0, MPI_BYTE);    \
        return rc != MPI_SUCCESS ? tj_mpi_raise_session(session, rc)                               \
                                 : PMPI_Session_attach_buffer##_s(session, buffer, size);          \
    }
FORMS(SESSION_ATTACH_BUFFER)
#endif

/* ---- MPI_T values ---------------------------------------------------------------------------- */

/* MPI_T may be used outside MPI_Init and MPI_Finalize: only the driver is asked. */
static bool t_device(const void *buf)
{
    tj_gpu_ptr_t where;
    if (buf == NULL || tj_gpu_absent() || !tj_gpu_available())
        return false;
    /* A buffer the driver cannot place (the query said why) is refused too: it may be device
     * memory, which the MPI library would touch from host code. */
    if (tj_gpu_query(buf, &where) != TJ_OK)
        return true;
    return tj_gpu_device_like(where.kind);
}

static int t_refuse(const char *fn)
{
    tj_interpose_refuse(fn, "an MPI_T value buffer in device memory (the MPI library reads and "
                            "writes it from host code, CUDA-aware or not)");
    return MPI_T_ERR_INVALID;
}

int TJ_WRAPPER(MPI_T_cvar_read)(MPI_T_cvar_handle handle, void *buf)
{
    return t_device(buf) ? t_refuse("MPI_T_cvar_read") : PMPI_T_cvar_read(handle, buf);
}

int TJ_WRAPPER(MPI_T_cvar_write)(MPI_T_cvar_handle handle, const void *buf)
{
    return t_device(buf) ? t_refuse("MPI_T_cvar_write") : PMPI_T_cvar_write(handle, buf);
}

int TJ_WRAPPER(MPI_T_pvar_read)(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return t_device(buf) ? t_refuse("MPI_T_pvar_read") : PMPI_T_pvar_read(session, handle, buf);
}

int TJ_WRAPPER(MPI_T_pvar_write)(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                 const void *buf)
{
    return t_device(buf) ? t_refuse("MPI_T_pvar_write") : PMPI_T_pvar_write(session, handle, buf);
}

int TJ_WRAPPER(MPI_T_pvar_readreset)(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                     void *buf)
{
    return t_device(buf) ? t_refuse("MPI_T_pvar_readreset")
                         : PMPI_T_pvar_readreset(session, handle, buf);
}

#if defined(TJ_HAVE_MPI4_T_EVENTS)
int TJ_WRAPPER(MPI_T_event_read)(MPI_T_event_instance event_instance, int element_index,
                                 void *buffer)
{
    return t_device(buffer) ? t_refuse("MPI_T_event_read")
                            : PMPI_T_event_read(event_instance, element_index, buffer);
}

int TJ_WRAPPER(MPI_T_event_copy)(MPI_T_event_instance event_instance, void *buffer)
{
    return t_device(buffer) ? t_refuse("MPI_T_event_copy")
                            : PMPI_T_event_copy(event_instance, buffer);
}
#endif
