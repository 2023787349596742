/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points of the datatype calls, in every family: commit, free and dup
 * (types.c), and the constructors (constructors.c), so that a Fortran program's types are
 * recorded at their creation as a C program's are (fortran.c says how each family's bindings
 * reach C). */
#include <stdlib.h>

#include "interpose/fortran_binding.h"

#if !defined(MPI_ABI_VERSION)

FORTRAN_CALL(MPI_Type_commit, type_commit, TYPE_COMMIT, (TYPE_INOUT))
FORTRAN_CALL(MPI_Type_free, type_free, TYPE_FREE, (TYPE_INOUT))
FORTRAN_CALL(MPI_Type_dup, type_dup, TYPE_DUP, (TYPE, TYPE_OUT))

/* The constructors, through the C wrappers so that each new type is recorded at its creation
 * (src/interpose/constructors.c) and its commit needs no MPI_Type_get_contents. Only the
 * current names: the deprecated MPI_TYPE_HVECTOR, MPI_TYPE_HINDEXED and MPI_TYPE_STRUCT (INTEGER
 * displacements) stay Open MPI's, and their types are translated at commit. The order and
 * distribution constants have the same values in Fortran and C in Open MPI, whose binding passes
 * them on. */
FORTRAN_CALL(MPI_Type_contiguous, type_contiguous, TYPE_CONTIGUOUS, (INT, TYPE, TYPE_OUT))
FORTRAN_CALL(MPI_Type_vector, type_vector, TYPE_VECTOR, (INT, INT, INT, TYPE, TYPE_OUT))
FORTRAN_CALL(MPI_Type_create_hvector, type_create_hvector, TYPE_CREATE_HVECTOR,
             (INT, INT, AINT, TYPE, TYPE_OUT))
FORTRAN_CALL(MPI_Type_indexed, type_indexed, TYPE_INDEXED, (INT, INTS, INTS, TYPE, TYPE_OUT))
FORTRAN_CALL(MPI_Type_create_hindexed, type_create_hindexed, TYPE_CREATE_HINDEXED,
             (INT, INTS, AINTS, TYPE, TYPE_OUT))
FORTRAN_CALL(MPI_Type_create_indexed_block, type_create_indexed_block, TYPE_CREATE_INDEXED_BLOCK,
             (INT, INT, INTS, TYPE, TYPE_OUT))
FORTRAN_CALL(MPI_Type_create_hindexed_block, type_create_hindexed_block, TYPE_CREATE_HINDEXED_BLOCK,
             (INT, INT, AINTS, TYPE, TYPE_OUT))
FORTRAN_CALL(MPI_Type_create_subarray, type_create_subarray, TYPE_CREATE_SUBARRAY,
             (INT, INTS, INTS, INTS, INT, TYPE, TYPE_OUT))
FORTRAN_CALL(MPI_Type_create_darray, type_create_darray, TYPE_CREATE_DARRAY,
             (INT, INT, INT, INTS, INTS, INTS, INTS, INT, TYPE, TYPE_OUT))
FORTRAN_CALL(MPI_Type_create_resized, type_create_resized, TYPE_CREATE_RESIZED,
             (TYPE, AINT, AINT, TYPE_OUT))

/* The array of types, as long as the count says, is converted here. */
static void f_type_create_struct(fint *count, fint *blocklengths, MPI_Aint *displs, fint *types,
                                 fint *newtype, fint *ierr)
{
    MPI_Datatype *c, t;
    int rc = MPI_ERR_NO_MEM;

    if (tj_fortran_types_heap(*count, types, &c)) {
        rc = MPI_Type_create_struct(*count, blocklengths, displs, c, &t);
        if (rc == MPI_SUCCESS)
            *newtype = PMPI_Type_c2f(t);
        free(c);
    }
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_type_create_struct, type_create_struct, TYPE_CREATE_STRUCT)

#endif /* MPI_ABI_VERSION */
