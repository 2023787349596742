/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points (mpif.h, `use mpi`, `use mpi_f08`) of the functions typejit wraps, and
 * the mechanisms they all share: the sentinels, statuses and arrays of datatypes of each family's
 * bindings (declared in fortran_binding.h with the exported names).
 *
 * Open MPI's Fortran bindings call PMPI_* directly (libmpi_mpifh imports PMPI_Type_commit, not
 * MPI_Type_commit), so a Fortran program never reaches the C wrappers. Each entry point converts
 * the Fortran handles, calls the C wrapper (MPI_*, typejit's own) and converts back, as Open
 * MPI's ompi/mpi/fortran/mpif-h does. They are exported under every name Open MPI's mpif.h
 * library exports (mpi_send, mpi_send_, mpi_send__, MPI_SEND), and as ompi_send_f, the function
 * Open MPI's mpi_f08 module calls for MPI_Send (libmpi_usempif08 -> libmpi_mpifh).
 *
 * The MPICH family's bindings (MPICH, Intel MPI, and Intel's for the standard ABI) reach the C
 * functions MPI_* from mpif.h and `use mpi`, and from `use mpi_f08` for every call with a buffer
 * (their choice-buffer wrappers), which typejit's C wrappers receive; but their mpi_f08 entry
 * points without a buffer (mpi_init_f08_, mpi_type_commit_f08_, mpi_wait_f08_, ...) call
 * PMPI_* directly. In an MPICH-family build the entry points are therefore exactly those, under
 * their mpi_f08 names, with the f08 status of the C header (MPI_F08_status), so that each call
 * is intercepted once. The standard ABI's C header has no Fortran types at all: there nothing is
 * exported (docs/mpis.md).
 *
 * The entry points, one file a family of calls as the C wrappers are: init and finalize
 * (fortran_init.c), datatypes (fortran_types.c), pack and unpack (fortran_pack.c), point to point
 * (fortran_p2p.c), requests (fortran_requests.c), collectives and reductions (fortran_coll.c),
 * one-sided communication (fortran_rma.c) and MPI-IO (fortran_io.c). Passing every call through
 * is interpose/passthrough.c's. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/fortran_binding.h"
#include "interpose/state.h"

#if !defined(MPI_ABI_VERSION)

#if defined(OPEN_MPI)
/* ---- the Fortran sentinels ------------------------------------------------------------------
 * MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are Fortran variables
 * whose addresses libmpi exports (mpi_fortran_bottom_ and its other manglings). They are looked
 * up at run time, when a Fortran entry point is first called, so that the library needs no
 * Fortran MPI to load. */
enum { S_BOTTOM, S_IN_PLACE, S_STATUS_IGNORE, S_STATUSES_IGNORE, NSENTINELS };
static const char *const sentinel_names[NSENTINELS] = {"bottom", "in_place", "status_ignore",
                                                       "statuses_ignore"};
_Static_assert(NSENTINELS == TJ_FORTRAN_NSENTINELS, "one entry of the state per sentinel");

static void sentinels_load(void)
{
    for (int s = 0; s < NSENTINELS; s++) {
        char name[64], upper[64];
        int n = snprintf(name, sizeof(name), "mpi_fortran_%s", sentinel_names[s]);
        for (int i = 0; i <= n; i++)
            upper[i] = name[i] >= 'a' && name[i] <= 'z' ? (char)(name[i] - 'a' + 'A') : name[i];
        tj_interpose_state.fortran.sentinels[s][0] = dlsym(RTLD_DEFAULT, name);
        tj_interpose_state.fortran.sentinels[s][1] = dlsym(RTLD_DEFAULT, upper);
        snprintf(name + n, sizeof(name) - (size_t)n, "_");
        tj_interpose_state.fortran.sentinels[s][2] = dlsym(RTLD_DEFAULT, name);
        snprintf(name + n, sizeof(name) - (size_t)n, "__");
        tj_interpose_state.fortran.sentinels[s][3] = dlsym(RTLD_DEFAULT, name);
    }
}

static bool is_sentinel(int which, const void *p)
{
    pthread_once(&tj_interpose_state.fortran.sentinels_once, sentinels_load);
    for (int i = 0; i < 4; i++)
        if (tj_interpose_state.fortran.sentinels[which][i] != NULL &&
            tj_interpose_state.fortran.sentinels[which][i] == p)
            return true;
    return false;
}

void *tj_fortran_bottom(void *buf)
{
    return is_sentinel(S_BOTTOM, buf) ? MPI_BOTTOM : buf;
}

void *tj_fortran_in_place(void *buf)
{
    return is_sentinel(S_IN_PLACE, buf) ? MPI_IN_PLACE : tj_fortran_bottom(buf);
}

static bool status_ignored(const fint *f)
{
    return is_sentinel(S_STATUS_IGNORE, f);
}

bool tj_fortran_statuses_ignored(const fint *f)
{
    return f == NULL || is_sentinel(S_STATUSES_IGNORE, f);
}

static void c2f_one_status(const MPI_Status *c, fint *f)
{
    PMPI_Status_c2f(c, f);
}

static void f2c_one_status(const fint *f, MPI_Status *c)
{
    PMPI_Status_f2c(f, c);
}
#else
/* ---- the f08 status of the MPICH family -----------------------------------------------------
 * type(MPI_Status), whose ignore sentinels the C header names. */
static bool status_ignored(const fint *f)
{
    return (const void *)f == (const void *)MPI_F08_STATUS_IGNORE;
}

bool tj_fortran_statuses_ignored(const fint *f)
{
    return f == NULL || (const void *)f == (const void *)MPI_F08_STATUSES_IGNORE;
}

/* The C status and type(MPI_Status) are the same five integers in the MPICH family (its mpi.h
 * says so, and its own mpi_wait_f08_ hands the Fortran status to PMPI_Wait); the conversion
 * function, MPI_Status_c2f08, lives in its Fortran library, which a C program lacks. */
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status) &&
                   offsetof(MPI_F08_status, MPI_SOURCE) == offsetof(MPI_Status, MPI_SOURCE) &&
                   offsetof(MPI_F08_status, MPI_TAG) == offsetof(MPI_Status, MPI_TAG) &&
                   offsetof(MPI_F08_status, MPI_ERROR) == offsetof(MPI_Status, MPI_ERROR),
               "the f08 status is not the C status");

static void c2f_one_status(const MPI_Status *c, fint *f)
{
    memcpy(f, c, sizeof(MPI_Status));
}

static void f2c_one_status(const fint *f, MPI_Status *c)
{
    memcpy(c, f, sizeof(MPI_Status));
}
#endif

/* The fields a call does not set (MPI_ERROR, for a call that completes one request) must come
 * back as they were: the C status starts as the Fortran one. */
MPI_Status *tj_fortran_status_in(fint *f, MPI_Status *c)
{
    if (status_ignored(f))
        return MPI_STATUS_IGNORE;
    f2c_one_status(f, c);
    return c;
}

void tj_fortran_status_out(const MPI_Status *c, fint *f)
{
    if (c != MPI_STATUS_IGNORE)
        c2f_one_status(c, f);
}

bool tj_fortran_types_heap(int n, const fint *f, MPI_Datatype **out)
{
    *out = NULL;
    if (f == NULL)
        return true;
    n = n < 0 ? 0 : n;
    if ((*out = malloc((size_t)(n > 0 ? n : 1) * sizeof(MPI_Datatype))) == NULL)
        return false;
    for (int i = 0; i < n; i++)
        (*out)[i] = PMPI_Type_f2c(f[i]);
    return true;
}

#endif /* MPI_ABI_VERSION */
