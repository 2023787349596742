/* The Fortran entry points (mpif.h, use mpi, use mpi_f08) of the wrappers typejit defines. */
#ifndef TJ_INTERPOSE_FORTRAN_H
#define TJ_INTERPOSE_FORTRAN_H

/* Point every exported Fortran entry point at the system MPI's own, before typejit steps aside
 * (pairing.c). */
void tj_fortran_step_aside(void);

#endif /* TJ_INTERPOSE_FORTRAN_H */
