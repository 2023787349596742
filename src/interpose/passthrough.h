/* SPDX-License-Identifier: BSD-3-Clause */
/* Passing every call through: once typejit has decided not to take part (interpose/pairing.h),
 * every entry point it exports goes straight to the system MPI: the C trampolines read a flag
 * (interpose/exports.c), and the slots of the Fortran names (interpose/fortran_binding.h) are
 * pointed at the system MPI's own entry points. */
#ifndef TJ_INTERPOSE_PASSTHROUGH_H
#define TJ_INTERPOSE_PASSTHROUGH_H

/* Pass every call through for the whole process, once, before the system MPI is initialised: the
 * Fortran names' slots first, then the flag. A name the system MPI does not have is one no program
 * of it calls; it keeps typejit's function. */
void tj_passthrough_start(void);

#endif /* TJ_INTERPOSE_PASSTHROUGH_H */
