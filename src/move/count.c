/* SPDX-License-Identifier: BSD-3-Clause */
/* typejit's own MPI calls with 64-bit counts (see count.h). */
#include "move/count.h"

int tj_count_pack(const void *inbuf, int64_t incount, MPI_Datatype type, void *outbuf,
                  int64_t outsize, int64_t *position, MPI_Comm comm)
{
    int rc;

    if (tj_count_fits_int(incount) && tj_count_fits_int(outsize) && tj_count_fits_int(*position)) {
        int pos = (int)*position;
        rc = PMPI_Pack(inbuf, (int)incount, type, outbuf, (int)outsize, &pos, comm);
        if (rc == MPI_SUCCESS)
            *position = pos;
        return rc;
    }
#if TJ_COUNT_LARGE
    {
        MPI_Count pos = *position;
        rc = PMPI_Pack_c(inbuf, incount, type, outbuf, outsize, &pos, comm);
        if (rc == MPI_SUCCESS)
            *position = pos;
        return rc;
    }
#else
    return MPI_ERR_COUNT;
#endif
}

int tj_count_unpack(const void *inbuf, int64_t insize, int64_t *position, void *outbuf,
                    int64_t outcount, MPI_Datatype type, MPI_Comm comm)
{
    int rc;

    if (tj_count_fits_int(outcount) && tj_count_fits_int(insize) && tj_count_fits_int(*position)) {
        int pos = (int)*position;
        rc = PMPI_Unpack(inbuf, (int)insize, &pos, outbuf, (int)outcount, type, comm);
        if (rc == MPI_SUCCESS)
            *position = pos;
        return rc;
    }
#if TJ_COUNT_LARGE
    {
        MPI_Count pos = *position;
        rc = PMPI_Unpack_c(inbuf, insize, &pos, outbuf, outcount, type, comm);
        if (rc == MPI_SUCCESS)
            *position = pos;
        return rc;
    }
#else
    return MPI_ERR_COUNT;
#endif
}

int tj_count_sendrecv(const void *sbuf, int64_t scount, MPI_Datatype stype, int dest, int stag,
                      void *rbuf, int64_t rcount, MPI_Datatype rtype, int source, int rtag,
                      MPI_Comm comm, MPI_Status *status)
{
    if (tj_count_fits_int(scount) && tj_count_fits_int(rcount))
        return PMPI_Sendrecv(sbuf, (int)scount, stype, dest, stag, rbuf, (int)rcount, rtype, source,
                             rtag, comm, status);
#if TJ_COUNT_LARGE
    return PMPI_Sendrecv_c(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                           status);
#else
    return MPI_ERR_COUNT;
#endif
}

int tj_count_pack_external_size(const char *datarep, int64_t count, MPI_Datatype type,
                                int64_t *size)
{
    int rc;

    if (tj_count_fits_int(count)) {
        MPI_Aint n = 0;
        if ((rc = PMPI_Pack_external_size(datarep, (int)count, type, &n)) == MPI_SUCCESS)
            *size = n;
        return rc;
    }
#if TJ_COUNT_LARGE
    {
        MPI_Count n = 0;
        if ((rc = PMPI_Pack_external_size_c(datarep, count, type, &n)) == MPI_SUCCESS)
            *size = n;
        return rc;
    }
#else
    return MPI_ERR_COUNT;
#endif
}

int tj_count_pack_external(const char *datarep, const void *inbuf, int64_t incount,
                           MPI_Datatype type, void *outbuf, int64_t outsize, int64_t *position)
{
    int rc;

    if (tj_count_fits_int(incount)) {
        MPI_Aint pos = (MPI_Aint)*position;
        rc =
            PMPI_Pack_external(datarep, inbuf, (int)incount, type, outbuf, (MPI_Aint)outsize, &pos);
        if (rc == MPI_SUCCESS)
            *position = pos;
        return rc;
    }
#if TJ_COUNT_LARGE
    {
        MPI_Count pos = *position;
        rc = PMPI_Pack_external_c(datarep, inbuf, incount, type, outbuf, outsize, &pos);
        if (rc == MPI_SUCCESS)
            *position = pos;
        return rc;
    }
#else
    return MPI_ERR_COUNT;
#endif
}

int tj_count_unpack_external(const char *datarep, const void *inbuf, int64_t insize,
                             int64_t *position, void *outbuf, int64_t outcount, MPI_Datatype type)
{
    int rc;

    if (tj_count_fits_int(outcount)) {
        MPI_Aint pos = (MPI_Aint)*position;
        rc = PMPI_Unpack_external(datarep, inbuf, (MPI_Aint)insize, &pos, outbuf, (int)outcount,
                                  type);
        if (rc == MPI_SUCCESS)
            *position = pos;
        return rc;
    }
#if TJ_COUNT_LARGE
    {
        MPI_Count pos = *position;
        rc = PMPI_Unpack_external_c(datarep, inbuf, insize, &pos, outbuf, outcount, type);
        if (rc == MPI_SUCCESS)
            *position = pos;
        return rc;
    }
#else
    return MPI_ERR_COUNT;
#endif
}

int tj_count_contiguous(int64_t count, MPI_Datatype old, MPI_Datatype *out)
{
    if (tj_count_fits_int(count))
        return PMPI_Type_contiguous((int)count, old, out);
#if TJ_COUNT_LARGE
    return PMPI_Type_contiguous_c(count, old, out);
#else
    return MPI_ERR_COUNT;
#endif
}

bool tj_count_received(const MPI_Status *status, int64_t *bytes)
{
    MPI_Count n = 0;
    if (PMPI_Get_elements_x(status, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
        return false;
    *bytes = n;
    return true;
}
