/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points of MPI_Pack, MPI_Unpack, their external32 forms and MPI_Pack_size
 * (pack.c): every one in Open MPI builds, MPI_Pack_size alone in the MPICH family, whose bindings
 * of the calls with a buffer reach the C wrappers (fortran.c says how each family's bindings
 * reach C). */
#include <string.h>

#include "interpose/fortran_binding.h"

#if !defined(MPI_ABI_VERSION)

#if defined(OPEN_MPI) /* calls with a buffer: the MPICH family's bindings call the C wrappers */

FORTRAN_CALL(MPI_Pack, pack, PACK, (BUF, INT, TYPE, MEM, INT, INT_INOUT, COMM))
FORTRAN_CALL(MPI_Unpack, unpack, UNPACK, (MEM, INT, INT_INOUT, BUF, INT, TYPE, COMM))

/* A Fortran CHARACTER argument as a C string, without the blanks around it (as Open MPI's
 * ompi_fortran_string_f2c): the data representation of the external32 calls, whose length comes
 * after the other arguments (an int passed by value in Open MPI's f08 interface; the low half of
 * gfortran's size_t for mpif.h). Longer names than the MPI allows are cut, and still unknown. */
static void fortran_string(const char *f, int len, char *c, size_t size)
{
    size_t n = len > 0 ? (size_t)len : 0;
    while (n > 0 && f[n - 1] == ' ')
        n--;
    while (n > 0 && f[0] == ' ') {
        f++;
        n--;
    }
    if (n >= size)
        n = size - 1;
    memcpy(c, f, n);
    c[n] = '\0';
}

static void f_pack_external(char *datarep, void *inbuf, fint *incount, fint *datatype, void *outbuf,
                            MPI_Aint *outsize, MPI_Aint *position, fint *ierr, int datarep_len)
{
    char rep[MPI_MAX_DATAREP_STRING + 1];
    fortran_string(datarep, datarep_len, rep, sizeof(rep));
    tj_fortran_ierr(ierr, MPI_Pack_external(rep, tj_fortran_bottom(inbuf), *incount,
                                            PMPI_Type_f2c(*datatype), outbuf, *outsize, position));
}
FORTRAN_NAMES(f_pack_external, pack_external, PACK_EXTERNAL)

static void f_unpack_external(char *datarep, void *inbuf, MPI_Aint *insize, MPI_Aint *position,
                              void *outbuf, fint *outcount, fint *datatype, fint *ierr,
                              int datarep_len)
{
    char rep[MPI_MAX_DATAREP_STRING + 1];
    fortran_string(datarep, datarep_len, rep, sizeof(rep));
    tj_fortran_ierr(ierr,
                    MPI_Unpack_external(rep, inbuf, *insize, position, tj_fortran_bottom(outbuf),
                                        *outcount, PMPI_Type_f2c(*datatype)));
}
FORTRAN_NAMES(f_unpack_external, unpack_external, UNPACK_EXTERNAL)

#endif /* OPEN_MPI */

FORTRAN_CALL(MPI_Pack_size, pack_size, PACK_SIZE, (INT, TYPE, COMM, INT_OUT))

#endif /* MPI_ABI_VERSION */
