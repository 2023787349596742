/* SPDX-License-Identifier: BSD-3-Clause */
/* The system MPI's calls that typejit makes itself with 64-bit counts: the int form where every
 * value fits an int (every MPI has it), the MPI-4 large-count form (`_c`) where one does not and
 * the MPI has it. Where neither can say the value, MPI_ERR_COUNT, with no error handler run. */
#ifndef TJ_MOVE_COUNT_H
#define TJ_MOVE_COUNT_H

#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

/* Whether this build can make calls with counts past INT_MAX (the MPI has the `_c` forms). */
#if MPI_VERSION >= 4
#define TJ_COUNT_LARGE 1
#else
#define TJ_COUNT_LARGE 0
#endif

static inline bool tj_count_fits_int(int64_t v)
{
    return v >= INT_MIN && v <= INT_MAX;
}

/* The system MPI's call @p _name with the arguments as given: its large-count form
 * (PMPI_<name>_c) when @p _large, else the int form; the same arguments serve both (64-bit
 * counts become the int form's ints, void pointers the arrays either form takes), so a caller
 * that received a call in one form makes its own call in the same one. */
#if TJ_COUNT_LARGE
#define TJ_COUNT_CALL(_large, _name, ...)                                                          \
    ((_large) ? PMPI_##_name##_c(__VA_ARGS__) : PMPI_##_name(__VA_ARGS__))
#else
#define TJ_COUNT_CALL(_large, _name, ...) ((void)(_large), PMPI_##_name(__VA_ARGS__))
#endif

/* Whether a count of @p v can be said to the system MPI at all. */
static inline bool tj_count_sayable(int64_t v)
{
    return TJ_COUNT_LARGE || tj_count_fits_int(v);
}

int tj_count_pack(const void *inbuf, int64_t incount, MPI_Datatype type, void *outbuf,
                  int64_t outsize, int64_t *position, MPI_Comm comm);
int tj_count_unpack(const void *inbuf, int64_t insize, int64_t *position, void *outbuf,
                    int64_t outcount, MPI_Datatype type, MPI_Comm comm);

int tj_count_sendrecv(const void *sbuf, int64_t scount, MPI_Datatype stype, int dest, int stag,
                      void *rbuf, int64_t rcount, MPI_Datatype rtype, int source, int rtag,
                      MPI_Comm comm, MPI_Status *status);

/* external32: the int form takes an int count and MPI_Aint sizes and positions. */
int tj_count_pack_external_size(const char *datarep, int64_t count, MPI_Datatype type,
                                int64_t *size);
int tj_count_pack_external(const char *datarep, const void *inbuf, int64_t incount,
                           MPI_Datatype type, void *outbuf, int64_t outsize, int64_t *position);
int tj_count_unpack_external(const char *datarep, const void *inbuf, int64_t insize,
                             int64_t *position, void *outbuf, int64_t outcount, MPI_Datatype type);

/* A contiguous type of @p count objects of @p old (typejit's types of packed bytes). */
int tj_count_contiguous(int64_t count, MPI_Datatype old, MPI_Datatype *out);

/* The bytes a status says were received (MPI_Get_elements_x of MPI_BYTE); false when the
 * system MPI cannot say. */
bool tj_count_received(const MPI_Status *status, int64_t *bytes);

#endif /* TJ_MOVE_COUNT_H */
