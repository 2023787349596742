/* SPDX-License-Identifier: BSD-3-Clause */
/* What the files of Fortran entry points share (fortran_init.c, fortran_types.c, fortran_pack.c,
 * fortran_p2p.c, fortran_requests.c, fortran_coll.c, fortran_rma.c, fortran_io.c): the Fortran
 * INTEGER, the sentinels and statuses of the family's bindings, the error argument, and the
 * exported names. The mechanisms are defined once, in fortran.c. */
#ifndef TJ_INTERPOSE_FORTRAN_BINDING_H
#define TJ_INTERPOSE_FORTRAN_BINDING_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "interpose/wrappers.h"
#include "util/common.h"

#if !defined(MPI_ABI_VERSION) /* the standard ABI's C header has no Fortran types */

typedef MPI_Fint fint;

/* Arrays of requests and datatypes up to this size are converted on the stack. */
#define SMALL 16

/* Arrays of Fortran INTEGERs (counts, displacements) are passed to the C wrappers as they are,
 * as Open MPI's own bindings do when the two types have the same size. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER is not a C int");

#if defined(OPEN_MPI)
/* A buffer that may be MPI_BOTTOM (Open MPI's OMPI_F2C_BOTTOM). */
void *tj_fortran_bottom(void *buf);

/* A buffer that may be MPI_IN_PLACE or MPI_BOTTOM (OMPI_F2C_IN_PLACE, then OMPI_F2C_BOTTOM). */
void *tj_fortran_in_place(void *buf);
#endif

/* How many INTEGERs one Fortran status is: MPI_STATUS_SIZE (6 in Open MPI); in the MPICH
 * family, type(MPI_Status) of its mpi_f08 bindings. */
#if defined(OPEN_MPI)
#define FSTATUS ((int)(sizeof(MPI_Status) / sizeof(fint)))
#else
#define FSTATUS ((int)(sizeof(MPI_F08_status) / sizeof(fint)))
#endif

/* The C status for a Fortran one (MPI_STATUS_IGNORE for the Fortran sentinel), holding what the
 * Fortran status holds: the fields a call does not set must come back as they were. */
MPI_Status *tj_fortran_status_in(fint *f, MPI_Status *c);

/* Write the C status @p c (unless it is MPI_STATUS_IGNORE) into the Fortran one. */
void tj_fortran_status_out(const MPI_Status *c, fint *f);

/* Whether the Fortran statuses @p f are MPI_STATUSES_IGNORE, or none (a call without
 * statuses). */
bool tj_fortran_statuses_ignored(const fint *f);

/* @p n Fortran datatype handles converted on the heap (NULL for a null @p f); false when out of
 * memory. */
bool tj_fortran_types_heap(int n, const fint *f, MPI_Datatype **out);

/* The error argument, which mpi_f08 may leave out. */
static inline void tj_fortran_ierr(fint *ierr, int rc)
{
    if (ierr != NULL)
        *ierr = (fint)rc;
}

/* ---- exported names -------------------------------------------------------------------------
 * One function, five names: mpi_x, mpi_x_, mpi_x__, MPI_X (mpif.h and `use mpi`, all manglings
 * Open MPI exports) and ompi_x_f (what `use mpi_f08` calls). Each name is a trampoline that
 * jumps through its own slot: to the function here while typejit takes part, to the system
 * MPI's own entry point of that name once typejit has passed every call through
 * (interpose/passthrough.h). The slots are gathered in one section, so that Passing every call
 * through finds every name. */
typedef struct {
    const char *name;
    void *target;
} fortran_slot_t;

#if defined(__x86_64__)
#define FORTRAN_TRAMPOLINE(_sym)                                                                   \
    __asm__(".text\n"                                                                              \
            ".globl " #_sym "\n"                                                                   \
            ".type " #_sym ", @function\n"                                                         \
            ".p2align 4\n" #_sym ":\n"                                                             \
            "\tendbr64\n"                                                                          \
            "\tjmp *tj_fslot_" #_sym "+8(%rip)\n"                                                  \
            ".size " #_sym ", .-" #_sym "\n");
#elif defined(__aarch64__)
#define FORTRAN_TRAMPOLINE(_sym)                                                                   \
    __asm__(".text\n"                                                                              \
            ".globl " #_sym "\n"                                                                   \
            ".type " #_sym ", %function\n"                                                         \
            ".p2align 2\n" #_sym ":\n"                                                             \
            "\tadrp x16, tj_fslot_" #_sym "\n"                                                     \
            "\tadd x16, x16, :lo12:tj_fslot_" #_sym "\n"                                           \
            "\tldr x16, [x16, #8]\n"                                                               \
            "\tbr x16\n"                                                                           \
            ".size " #_sym ", .-" #_sym "\n");
#else
#error "typejit's exported entry points are written for x86_64 and aarch64 only"
#endif

#define EXPORT_AS(_fn, _sym)                                                                       \
    __attribute__((section("tj_fortran"), used))                                                   \
    fortran_slot_t tj_fslot_##_sym = {#_sym, (void *)_fn};                                         \
    FORTRAN_TRAMPOLINE(_sym)
#if defined(OPEN_MPI)
#define FORTRAN_NAMES(_fn, _lower, _upper)                                                         \
    EXPORT_AS(_fn, mpi_##_lower)                                                                   \
    EXPORT_AS(_fn, mpi_##_lower##_)                                                                \
    EXPORT_AS(_fn, mpi_##_lower##__)                                                               \
    EXPORT_AS(_fn, MPI_##_upper)                                                                   \
    EXPORT_AS(_fn, ompi_##_lower##_f)
#else
/* The mpi_f08 name of MPI_X in the MPICH family: the external MPI_X_f08, as gfortran and Intel's
 * compilers write it. */
#define FORTRAN_NAMES(_fn, _lower, _upper) EXPORT_AS(_fn, mpi_##_lower##_f08_)
#endif

/* A call whose one argument is a handle it reads and may replace (MPI_Type_commit(&type),
 * MPI_Start(&request), MPI_Win_free(&win)): the handle of C type _type, converted by
 * PMPI__kind_f2c and PMPI__kind_c2f. */
#define HANDLE_CALL(_c, _lower, _upper, _type, _kind)                                              \
    static void f_##_lower(fint *handle, fint *ierr)                                               \
    {                                                                                              \
        _type h = PMPI_##_kind##_f2c(*handle);                                                     \
        int rc = _c(&h);                                                                           \
        if (rc == MPI_SUCCESS)                                                                     \
            *handle = PMPI_##_kind##_c2f(h);                                                       \
        tj_fortran_ierr(ierr, rc);                                                                 \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

/* A blocking call and its form that returns a request (MPI_X and MPI_IX, MPI_Put and MPI_Rput)
 * from one function _impl that takes the Fortran arguments _params and a C request, NULL for the
 * blocking form: the entry points _lower and _rlower. */
#define REQUEST_PAIR(_impl, _lower, _upper, _rlower, _rupper, _params, _args)                      \
    static void f_##_lower(TJ_UNPAREN _params, fint *ierr)                                         \
    {                                                                                              \
        tj_fortran_ierr(ierr, _impl(TJ_UNPAREN _args, NULL));                                      \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)                                                      \
    static void f_##_rlower(TJ_UNPAREN _params, fint *request, fint *ierr)                         \
    {                                                                                              \
        MPI_Request r;                                                                             \
        int rc = _impl(TJ_UNPAREN _args, &r);                                                      \
        if (rc == MPI_SUCCESS)                                                                     \
            *request = PMPI_Request_c2f(r);                                                        \
        tj_fortran_ierr(ierr, rc);                                                                 \
    }                                                                                              \
    FORTRAN_NAMES(f_##_rlower, _rlower, _rupper)

#endif /* MPI_ABI_VERSION */

#endif /* TJ_INTERPOSE_FORTRAN_BINDING_H */
