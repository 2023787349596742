/* SPDX-License-Identifier: BSD-3-Clause */
/* Which MPI typejit runs in front of, and whether it was built for it. */
#ifndef TJ_INTERPOSE_PAIRING_H
#define TJ_INTERPOSE_PAIRING_H

#include <stdbool.h>

/* Families of MPI libraries whose handles mean the same thing: a libtypejit.so built against
 * one member runs in front of every other (MPICH, Intel MPI, MVAPICH and Cray MPICH share the
 * MPICH ABI; Open MPI 4 and 5 share theirs; the MPI 5.0 standard ABI is its own). */
typedef enum {
    TJ_MPI_UNKNOWN,
    TJ_MPI_OPEN_MPI,
    TJ_MPI_MPICH,
    TJ_MPI_STANDARD_ABI,
} tj_mpi_family_t;

/* Decides once, before the system MPI is initialised, whether typejit takes part: false when
 * TYPEJIT_DISABLE is set or the MPI in this process is of another family than the one typejit
 * was built for (said in one line). Then typejit has passed every call through for the whole
 * process (interpose/passthrough.h). */
bool tj_pairing_check(void);

/* The family typejit was built for and its name. */
tj_mpi_family_t tj_pairing_built_for(void);
const char *tj_pairing_family_name(tj_mpi_family_t family);

/* The first line of the MPI's MPI_Get_library_version, once tj_pairing_check ran ("" before). */
const char *tj_pairing_mpi_version(void);

/* The family of an MPI from its MPI_Get_library_version text and MPI_Abi_get_version's major
 * version (-1 where the library has none or does not implement the standard ABI). */
tj_mpi_family_t tj_pairing_classify(const char *version, int abi_major);

#endif /* TJ_INTERPOSE_PAIRING_H */
