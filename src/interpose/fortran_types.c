/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points of the datatype calls, in every family: commit, free and dup
 * (types.c), and the constructors (constructors.c), so that a Fortran program's types are
 * recorded at their creation as a C program's are (fortran.c says how each family's bindings
 * reach C). */
#include <stdlib.h>

#include "interpose/fortran_binding.h"

#if !defined(MPI_ABI_VERSION)

HANDLE_CALL(MPI_Type_commit, type_commit, TYPE_COMMIT, MPI_Datatype, Type)

HANDLE_CALL(MPI_Type_free, type_free, TYPE_FREE, MPI_Datatype, Type)

static void f_type_dup(fint *oldtype, fint *newtype, fint *ierr)
{
    MPI_Datatype t;
    int rc = MPI_Type_dup(PMPI_Type_f2c(*oldtype), &t);
    if (rc == MPI_SUCCESS)
        *newtype = PMPI_Type_c2f(t);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_type_dup, type_dup, TYPE_DUP)

/* The constructors, through the C wrappers so that each new type is recorded at its creation
 * (src/interpose/constructors.c) and its commit needs no MPI_Type_get_contents. Only the
 * current names: the deprecated MPI_TYPE_HVECTOR, MPI_TYPE_HINDEXED and MPI_TYPE_STRUCT (INTEGER
 * displacements) stay Open MPI's, and their types are translated at commit. Arrays of INTEGER
 * and of INTEGER(KIND=MPI_ADDRESS_KIND) are passed as they are; the order and distribution
 * constants have the same values in Fortran and C in Open MPI, whose binding passes them on. */
#define CONSTRUCTED(_call)                                                                         \
    do {                                                                                           \
        MPI_Datatype _t;                                                                           \
        int _rc = _call;                                                                           \
        if (_rc == MPI_SUCCESS)                                                                    \
            *newtype = PMPI_Type_c2f(_t);                                                          \
        tj_fortran_ierr(ierr, _rc);                                                                \
    } while (0)

static void f_type_contiguous(fint *count, fint *oldtype, fint *newtype, fint *ierr)
{
    CONSTRUCTED(MPI_Type_contiguous(*count, PMPI_Type_f2c(*oldtype), &_t));
}
FORTRAN_NAMES(f_type_contiguous, type_contiguous, TYPE_CONTIGUOUS)

static void f_type_vector(fint *count, fint *blocklength, fint *stride, fint *oldtype,
                          fint *newtype, fint *ierr)
{
    CONSTRUCTED(MPI_Type_vector(*count, *blocklength, *stride, PMPI_Type_f2c(*oldtype), &_t));
}
FORTRAN_NAMES(f_type_vector, type_vector, TYPE_VECTOR)

static void f_type_create_hvector(fint *count, fint *blocklength, MPI_Aint *stride, fint *oldtype,
                                  fint *newtype, fint *ierr)
{
    CONSTRUCTED(
        MPI_Type_create_hvector(*count, *blocklength, *stride, PMPI_Type_f2c(*oldtype), &_t));
}
FORTRAN_NAMES(f_type_create_hvector, type_create_hvector, TYPE_CREATE_HVECTOR)

static void f_type_indexed(fint *count, fint *blocklengths, fint *displs, fint *oldtype,
                           fint *newtype, fint *ierr)
{
    CONSTRUCTED(MPI_Type_indexed(*count, blocklengths, displs, PMPI_Type_f2c(*oldtype), &_t));
}
FORTRAN_NAMES(f_type_indexed, type_indexed, TYPE_INDEXED)

static void f_type_create_hindexed(fint *count, fint *blocklengths, MPI_Aint *displs, fint *oldtype,
                                   fint *newtype, fint *ierr)
{
    CONSTRUCTED(
        MPI_Type_create_hindexed(*count, blocklengths, displs, PMPI_Type_f2c(*oldtype), &_t));
}
FORTRAN_NAMES(f_type_create_hindexed, type_create_hindexed, TYPE_CREATE_HINDEXED)

static void f_type_create_indexed_block(fint *count, fint *blocklength, fint *displs, fint *oldtype,
                                        fint *newtype, fint *ierr)
{
    CONSTRUCTED(
        MPI_Type_create_indexed_block(*count, *blocklength, displs, PMPI_Type_f2c(*oldtype), &_t));
}
FORTRAN_NAMES(f_type_create_indexed_block, type_create_indexed_block, TYPE_CREATE_INDEXED_BLOCK)

static void f_type_create_hindexed_block(fint *count, fint *blocklength, MPI_Aint *displs,
                                         fint *oldtype, fint *newtype, fint *ierr)
{
    CONSTRUCTED(
        MPI_Type_create_hindexed_block(*count, *blocklength, displs, PMPI_Type_f2c(*oldtype), &_t));
}
FORTRAN_NAMES(f_type_create_hindexed_block, type_create_hindexed_block, TYPE_CREATE_HINDEXED_BLOCK)

static void f_type_create_struct(fint *count, fint *blocklengths, MPI_Aint *displs, fint *types,
                                 fint *newtype, fint *ierr)
{
    MPI_Datatype *c;

    if (!tj_fortran_types_heap(*count, types, &c)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    CONSTRUCTED(MPI_Type_create_struct(*count, blocklengths, displs, c, &_t));
    free(c);
}
FORTRAN_NAMES(f_type_create_struct, type_create_struct, TYPE_CREATE_STRUCT)

static void f_type_create_subarray(fint *ndims, fint *sizes, fint *subsizes, fint *starts,
                                   fint *order, fint *oldtype, fint *newtype, fint *ierr)
{
    CONSTRUCTED(MPI_Type_create_subarray(*ndims, sizes, subsizes, starts, *order,
                                         PMPI_Type_f2c(*oldtype), &_t));
}
FORTRAN_NAMES(f_type_create_subarray, type_create_subarray, TYPE_CREATE_SUBARRAY)

static void f_type_create_darray(fint *size, fint *rank, fint *ndims, fint *gsizes, fint *distribs,
                                 fint *dargs, fint *psizes, fint *order, fint *oldtype,
                                 fint *newtype, fint *ierr)
{
    CONSTRUCTED(MPI_Type_create_darray(*size, *rank, *ndims, gsizes, distribs, dargs, psizes,
                                       *order, PMPI_Type_f2c(*oldtype), &_t));
}
FORTRAN_NAMES(f_type_create_darray, type_create_darray, TYPE_CREATE_DARRAY)

static void f_type_create_resized(fint *oldtype, MPI_Aint *lb, MPI_Aint *extent, fint *newtype,
                                  fint *ierr)
{
    CONSTRUCTED(MPI_Type_create_resized(PMPI_Type_f2c(*oldtype), *lb, *extent, &_t));
}
FORTRAN_NAMES(f_type_create_resized, type_create_resized, TYPE_CREATE_RESIZED)

#endif /* MPI_ABI_VERSION */
