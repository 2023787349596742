/* SPDX-License-Identifier: BSD-3-Clause */
/* What the files of Fortran entry points share (fortran_init.c, fortran_types.c, fortran_pack.c,
 * fortran_p2p.c, fortran_requests.c, fortran_coll.c, fortran_rma.c, fortran_io.c): the Fortran
 * INTEGER, the sentinels and statuses of the family's bindings, the error argument, the
 * exported names, and the kinds of arguments from which FORTRAN_CALL makes an entry point. The
 * mechanisms are defined once, in fortran.c. */
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

/* ---- entry points from a description ---------------------------------------------------------
 * FORTRAN_CALL(MPI_Send, send, SEND, (BUF, INT, TYPE, INT, INT, COMM)) is the Fortran entry point
 * of the C wrapper MPI_Send under the names of send and SEND: one parameter per argument kind, in
 * order, then the error argument. It converts each argument into C, calls the wrapper, and
 * writes the outputs back only when the call succeeded, as MPICH's generated bindings do.
 *
 * A kind is four things: the Fortran parameter, what is set up before the call, the C argument,
 * and what is written back after a successful call. */
/* clang-format off */
/* Buffers (Open MPI builds only): */
#define F_KIND_BUF(_a)          (void *_a, , tj_fortran_bottom(_a), )   /* or MPI_BOTTOM */
#define F_KIND_BUF_IN_PLACE(_a) (void *_a, , tj_fortran_in_place(_a), ) /* or MPI_IN_PLACE */
#define F_KIND_MEM(_a)          (void *_a, , _a, ) /* as it is, as Open MPI's bindings pass it */
/* Values, and arrays of INTEGER and INTEGER(KIND=MPI_ADDRESS_KIND) passed as they are: */
#define F_KIND_INT(_a)          (fint *_a, , *_a, )
#define F_KIND_AINT(_a)         (MPI_Aint *_a, , *_a, )
#define F_KIND_OFFSET(_a)       (MPI_Offset *_a, , *_a, )
#define F_KIND_INTS(_a)         (fint *_a, , _a, )
#define F_KIND_AINTS(_a)        (MPI_Aint *_a, , _a, )
/* Handles the call reads: */
#define F_KIND_TYPE(_a)         F_HANDLE(Type, _a)
#define F_KIND_COMM(_a)         F_HANDLE(Comm, _a)
#define F_KIND_OP(_a)           F_HANDLE(Op, _a)
#define F_KIND_WIN(_a)          F_HANDLE(Win, _a)
#define F_KIND_FILE(_a)         F_HANDLE(File, _a)
#define F_KIND_INFO(_a)         F_HANDLE(Info, _a)
#define F_KIND_GROUP(_a)        F_HANDLE(Group, _a)
/* Handles the call returns, and those it reads and may replace (MPI_Type_commit(&type)): */
#define F_KIND_TYPE_OUT(_a)      F_HANDLE_OUT(MPI_Datatype, Type, _a)
#define F_KIND_WIN_OUT(_a)       F_HANDLE_OUT(MPI_Win, Win, _a)
#define F_KIND_REQUEST_OUT(_a)   F_HANDLE_OUT(MPI_Request, Request, _a)
#define F_KIND_TYPE_INOUT(_a)    F_HANDLE_INOUT(MPI_Datatype, Type, _a)
#define F_KIND_WIN_INOUT(_a)     F_HANDLE_INOUT(MPI_Win, Win, _a)
#define F_KIND_REQUEST_INOUT(_a) F_HANDLE_INOUT(MPI_Request, Request, _a)
#define F_KIND_MESSAGE_INOUT(_a) F_HANDLE_INOUT(MPI_Message, Message, _a)
/* Integers the call returns or updates (a pack position), a LOGICAL (gfortran's .TRUE. is 1),
 * and a status, which may be MPI_STATUS_IGNORE: */
#define F_KIND_INT_OUT(_a)       (fint *_a, int _a##_c = 0;, &_a##_c, *_a = _a##_c;)
#define F_KIND_INT_INOUT(_a)     (fint *_a, int _a##_c = *_a;, &_a##_c, *_a = _a##_c;)
#define F_KIND_FLAG_OUT(_a)      (fint *_a, int _a##_c = 0;, &_a##_c, *_a = _a##_c ? 1 : 0;)
#define F_KIND_STATUS(_a)                                                                          \
    (fint *_a,                                                                                     \
     MPI_Status _a##_s; MPI_Status *_a##_c = tj_fortran_status_in(_a, &_a##_s);,                   \
     _a##_c,                                                                                       \
     tj_fortran_status_out(_a##_c, _a);)

#define F_HANDLE(_h, _a) (fint *_a, , PMPI_##_h##_f2c(*_a), )
#define F_HANDLE_OUT(_type, _h, _a)                                                                \
    (fint *_a, _type _a##_c;, &_a##_c, *_a = PMPI_##_h##_c2f(_a##_c);)
#define F_HANDLE_INOUT(_type, _h, _a)                                                              \
    (fint *_a, _type _a##_c = PMPI_##_h##_f2c(*_a);, &_a##_c, *_a = PMPI_##_h##_c2f(_a##_c);)

/* The four parts of kind @p _k for the argument @p _a. */
#define F_PARAM(_k, _a)                       F_APPLY(F_PART_PARAM, F_KIND_##_k(_a)),
#define F_IN(_k, _a)                          F_APPLY(F_PART_IN, F_KIND_##_k(_a))
#define F_ARG(_k, _a)                         , F_APPLY(F_PART_ARG, F_KIND_##_k(_a))
#define F_OUT(_k, _a)                         F_APPLY(F_PART_OUT, F_KIND_##_k(_a))
#define F_APPLY(_part, _kind)                 _part _kind
#define F_PART_PARAM(_param, _in, _arg, _out) _param
#define F_PART_IN(_param, _in, _arg, _out)    _in
#define F_PART_ARG(_param, _in, _arg, _out)   _arg
#define F_PART_OUT(_param, _in, _arg, _out)   _out

/* _m(kind, name) for each kind of the list, its argument named a1, a2, ... from the last. */
#define F_EACH(_m, ...)        F_EACH_N(F_COUNT(__VA_ARGS__), _m, __VA_ARGS__)
#define F_EACH_N(_n, _m, ...)  F_CAT(F_EACH_, _n)(_m, __VA_ARGS__)
#define F_CAT(_a, _b)          F_CAT_(_a, _b)
#define F_CAT_(_a, _b)         _a##_b
#define F_EACH_1(_m, _k)       _m(_k, a1)
#define F_EACH_2(_m, _k, ...)  _m(_k, a2) F_EACH_1(_m, __VA_ARGS__)
#define F_EACH_3(_m, _k, ...)  _m(_k, a3) F_EACH_2(_m, __VA_ARGS__)
#define F_EACH_4(_m, _k, ...)  _m(_k, a4) F_EACH_3(_m, __VA_ARGS__)
#define F_EACH_5(_m, _k, ...)  _m(_k, a5) F_EACH_4(_m, __VA_ARGS__)
#define F_EACH_6(_m, _k, ...)  _m(_k, a6) F_EACH_5(_m, __VA_ARGS__)
#define F_EACH_7(_m, _k, ...)  _m(_k, a7) F_EACH_6(_m, __VA_ARGS__)
#define F_EACH_8(_m, _k, ...)  _m(_k, a8) F_EACH_7(_m, __VA_ARGS__)
#define F_EACH_9(_m, _k, ...)  _m(_k, a9) F_EACH_8(_m, __VA_ARGS__)
#define F_EACH_10(_m, _k, ...) _m(_k, a10) F_EACH_9(_m, __VA_ARGS__)
#define F_EACH_11(_m, _k, ...) _m(_k, a11) F_EACH_10(_m, __VA_ARGS__)
#define F_EACH_12(_m, _k, ...) _m(_k, a12) F_EACH_11(_m, __VA_ARGS__)
#define F_EACH_13(_m, _k, ...) _m(_k, a13) F_EACH_12(_m, __VA_ARGS__)
#define F_COUNT(...)           F_COUNT_(__VA_ARGS__, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define F_COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _n, ...) _n
/* clang-format on */

/* The C call of the arguments F_ARG made, each after a comma. */
#define F_CALL(_c, ...)         F_CALL_(_c, __VA_ARGS__)
#define F_CALL_(_c, _none, ...) _c(__VA_ARGS__)

#define FORTRAN_CALL(_c, _lower, _upper, _kinds)                                                   \
    static void f_##_lower(F_EACH(F_PARAM, TJ_UNPAREN _kinds) fint *ierr)                          \
    {                                                                                              \
        F_EACH(F_IN, TJ_UNPAREN _kinds)                                                            \
        int rc = F_CALL(_c, F_EACH(F_ARG, TJ_UNPAREN _kinds));                                     \
        if (rc == MPI_SUCCESS) {                                                                   \
            F_EACH(F_OUT, TJ_UNPAREN _kinds)                                                       \
        }                                                                                          \
        tj_fortran_ierr(ierr, rc);                                                                 \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

#endif /* MPI_ABI_VERSION */

#endif /* TJ_INTERPOSE_FORTRAN_BINDING_H */
