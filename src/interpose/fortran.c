/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points (mpif.h, `use mpi`, `use mpi_f08`) of the functions typejit wraps.
 *
 * Open MPI's Fortran bindings call PMPI_* directly (libmpi_mpifh imports PMPI_Type_commit, not
 * MPI_Type_commit), so a Fortran program never reaches the C wrappers. Each function here
 * converts the Fortran handles, calls the C wrapper (MPI_*, typejit's own) and converts back,
 * as Open MPI's ompi/mpi/fortran/mpif-h does. They are exported under every name Open MPI's
 * mpif.h library exports (mpi_send, mpi_send_, mpi_send__, MPI_SEND), and as ompi_send_f, the
 * function Open MPI's mpi_f08 module calls for MPI_Send (libmpi_usempif08 -> libmpi_mpifh).
 *
 * The MPICH family's bindings (MPICH, Intel MPI, and Intel's for the standard ABI) reach the C
 * functions MPI_* from mpif.h and `use mpi`, and from `use mpi_f08` for every call with a buffer
 * (their choice-buffer wrappers), which typejit's C wrappers receive; but their mpi_f08 entry
 * points without a buffer (mpi_init_f08_, mpi_type_commit_f08_, mpi_wait_f08_, ...) call
 * PMPI_* directly. In an MPICH-family build this file therefore exports exactly those, under
 * their mpi_f08 names, with the f08 status of the C header (MPI_F08_status), so that each call
 * is intercepted once. The standard ABI's C header has no Fortran types at all: there this file
 * exports nothing (docs/mpis.md).
 *
 * This file holds the mechanisms every Fortran entry point shares (fortran_binding.h: sentinels,
 * statuses, the exported names; Passing every call through is interpose/passthrough.c's), and the
 * entry points of init and finalize, datatypes, pack and unpack, point to point and requests;
 * fortran_coll.c, fortran_rma.c and fortran_io.c those of the collectives and reductions, one-sided
 * communication and MPI-IO. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/fortran_binding.h"

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
static void *sentinels[NSENTINELS][4];
static pthread_once_t sentinels_once = PTHREAD_ONCE_INIT;

static void sentinels_load(void)
{
    for (int s = 0; s < NSENTINELS; s++) {
        char name[64], upper[64];
        int n = snprintf(name, sizeof(name), "mpi_fortran_%s", sentinel_names[s]);
        for (int i = 0; i <= n; i++)
            upper[i] = name[i] >= 'a' && name[i] <= 'z' ? (char)(name[i] - 'a' + 'A') : name[i];
        sentinels[s][0] = dlsym(RTLD_DEFAULT, name);
        sentinels[s][1] = dlsym(RTLD_DEFAULT, upper);
        snprintf(name + n, sizeof(name) - (size_t)n, "_");
        sentinels[s][2] = dlsym(RTLD_DEFAULT, name);
        snprintf(name + n, sizeof(name) - (size_t)n, "__");
        sentinels[s][3] = dlsym(RTLD_DEFAULT, name);
    }
}

static bool is_sentinel(int which, const void *p)
{
    pthread_once(&sentinels_once, sentinels_load);
    for (int i = 0; i < 4; i++)
        if (sentinels[which][i] != NULL && sentinels[which][i] == p)
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

/* A status is MPI_STATUS_SIZE INTEGERs (6 in Open MPI). */
#define FSTATUS ((int)(sizeof(MPI_Status) / sizeof(fint)))

static bool status_ignored(const fint *f)
{
    return is_sentinel(S_STATUS_IGNORE, f);
}

/* MPI_STATUSES_IGNORE, or none (a call without statuses). */
static bool statuses_ignored(const fint *f)
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
#define FSTATUS ((int)(sizeof(MPI_F08_status) / sizeof(fint)))

static bool status_ignored(const fint *f)
{
    return (const void *)f == (const void *)MPI_F08_STATUS_IGNORE;
}

static bool statuses_ignored(const fint *f)
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

/* ---- arrays of requests and statuses -------------------------------------------------------- */

typedef struct {
    MPI_Request *req;
    MPI_Status *st; /* MPI_STATUSES_IGNORE when the caller ignores them */
    int n;
    MPI_Request req_small[SMALL];
    MPI_Status st_small[SMALL];
} reqs_t;

static bool reqs_in(reqs_t *r, int n, const fint *f, const fint *fstatuses)
{
    r->n = n < 0 ? 0 : n;
    r->req = r->n <= SMALL ? r->req_small : malloc((size_t)r->n * sizeof(MPI_Request));
    /* MPI_STATUSES_IGNORE is a null pointer in Open MPI: only an allocation can fail here. */
    bool want = !statuses_ignored(fstatuses);
    r->st = MPI_STATUSES_IGNORE;
    if (want)
        r->st = r->n <= SMALL ? r->st_small : malloc((size_t)r->n * sizeof(MPI_Status));
    if (r->req == NULL || (want && r->st == NULL)) {
        if (r->req != r->req_small)
            free(r->req);
        if (r->st != r->st_small && r->st != MPI_STATUSES_IGNORE)
            free(r->st);
        return false;
    }
    for (int i = 0; i < r->n; i++)
        r->req[i] = PMPI_Request_f2c(f[i]);
    return true;
}

/* Write the requests back (completed ones are MPI_REQUEST_NULL now) and, when @p statuses_too,
 * the first @p nst statuses, then release the arrays. */
static void reqs_out(reqs_t *r, fint *f, fint *fstatuses, bool statuses_too, int nst)
{
    for (int i = 0; i < r->n; i++)
        f[i] = PMPI_Request_c2f(r->req[i]);
    if (statuses_too && r->st != MPI_STATUSES_IGNORE)
        for (int i = 0; i < nst; i++)
            c2f_one_status(&r->st[i], &fstatuses[(size_t)i * FSTATUS]);
    if (r->req != r->req_small)
        free(r->req);
    if (r->st != r->st_small && r->st != MPI_STATUSES_IGNORE)
        free(r->st);
}

/* ---- init and finalize ---------------------------------------------------------------------- */

static void f_init(fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    tj_fortran_ierr(ierr, MPI_Init(&argc, &argv));
}
FORTRAN_NAMES(f_init, init, INIT)

static void f_init_thread(fint *required, fint *provided, fint *ierr)
{
    int argc = 0, prov = 0, rc;
    char **argv = NULL;
    rc = MPI_Init_thread(&argc, &argv, *required, &prov);
    if (rc == MPI_SUCCESS)
        *provided = prov;
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_init_thread, init_thread, INIT_THREAD)

static void f_finalize(fint *ierr)
{
    tj_fortran_ierr(ierr, MPI_Finalize());
}
FORTRAN_NAMES(f_finalize, finalize, FINALIZE)

/* ---- datatypes ------------------------------------------------------------------------------ */

static void f_type_commit(fint *type, fint *ierr)
{
    MPI_Datatype t = PMPI_Type_f2c(*type);
    int rc = MPI_Type_commit(&t);
    if (rc == MPI_SUCCESS)
        *type = PMPI_Type_c2f(t);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_type_commit, type_commit, TYPE_COMMIT)

static void f_type_free(fint *type, fint *ierr)
{
    MPI_Datatype t = PMPI_Type_f2c(*type);
    int rc = MPI_Type_free(&t);
    if (rc == MPI_SUCCESS)
        *type = PMPI_Type_c2f(t);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_type_free, type_free, TYPE_FREE)

static void f_type_dup(fint *oldtype, fint *newtype, fint *ierr)
{
    MPI_Datatype t;
    int rc = MPI_Type_dup(PMPI_Type_f2c(*oldtype), &t);
    if (rc == MPI_SUCCESS)
        *newtype = PMPI_Type_c2f(t);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_type_dup, type_dup, TYPE_DUP)

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

/* ---- pack and unpack ------------------------------------------------------------------------ */

#if defined(OPEN_MPI) /* calls with a buffer: the MPICH family's bindings call the C wrappers */

static void f_pack(void *inbuf, fint *incount, fint *datatype, void *outbuf, fint *outsize,
                   fint *position, fint *comm, fint *ierr)
{
    int pos = *position;
    int rc = MPI_Pack(tj_fortran_bottom(inbuf), *incount, PMPI_Type_f2c(*datatype), outbuf,
                      *outsize, &pos, PMPI_Comm_f2c(*comm));
    if (rc == MPI_SUCCESS)
        *position = pos;
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_pack, pack, PACK)

static void f_unpack(void *inbuf, fint *insize, fint *position, void *outbuf, fint *outcount,
                     fint *datatype, fint *comm, fint *ierr)
{
    int pos = *position;
    int rc = MPI_Unpack(inbuf, *insize, &pos, tj_fortran_bottom(outbuf), *outcount,
                        PMPI_Type_f2c(*datatype), PMPI_Comm_f2c(*comm));
    if (rc == MPI_SUCCESS)
        *position = pos;
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_unpack, unpack, UNPACK)

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

static void f_pack_size(fint *incount, fint *datatype, fint *comm, fint *size, fint *ierr)
{
    int s = 0;
    int rc = MPI_Pack_size(*incount, PMPI_Type_f2c(*datatype), PMPI_Comm_f2c(*comm), &s);
    if (rc == MPI_SUCCESS)
        *size = s;
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_pack_size, pack_size, PACK_SIZE)

#if defined(OPEN_MPI) /* calls with a buffer: the MPICH family's bindings call the C wrappers */

/* ---- point to point ------------------------------------------------------------------------- */

/* Blocking sends: MPI_Send, MPI_Ssend, MPI_Rsend, MPI_Bsend. */
#define BLOCKING_SEND(_c, _lower, _upper)                                                          \
    static void f_##_lower(void *buf, fint *count, fint *datatype, fint *dest, fint *tag,          \
                           fint *comm, fint *ierr)                                                 \
    {                                                                                              \
        tj_fortran_ierr(ierr, _c(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), *dest,  \
                                 *tag, PMPI_Comm_f2c(*comm)));                                     \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

BLOCKING_SEND(MPI_Send, send, SEND)
BLOCKING_SEND(MPI_Ssend, ssend, SSEND)
BLOCKING_SEND(MPI_Rsend, rsend, RSEND)
BLOCKING_SEND(MPI_Bsend, bsend, BSEND)

/* Calls that return one request: the non-blocking sends and receive, the persistent inits. */
#define REQUEST_CALL(_c, _lower, _upper)                                                           \
    static void f_##_lower(void *buf, fint *count, fint *datatype, fint *peer, fint *tag,          \
                           fint *comm, fint *request, fint *ierr)                                  \
    {                                                                                              \
        MPI_Request r;                                                                             \
        int rc = _c(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), *peer, *tag,         \
                    PMPI_Comm_f2c(*comm), &r);                                                     \
        if (rc == MPI_SUCCESS)                                                                     \
            *request = PMPI_Request_c2f(r);                                                        \
        tj_fortran_ierr(ierr, rc);                                                                 \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

REQUEST_CALL(MPI_Isend, isend, ISEND)
REQUEST_CALL(MPI_Issend, issend, ISSEND)
REQUEST_CALL(MPI_Irsend, irsend, IRSEND)
REQUEST_CALL(MPI_Ibsend, ibsend, IBSEND)
REQUEST_CALL(MPI_Irecv, irecv, IRECV)
REQUEST_CALL(MPI_Send_init, send_init, SEND_INIT)
REQUEST_CALL(MPI_Ssend_init, ssend_init, SSEND_INIT)
REQUEST_CALL(MPI_Rsend_init, rsend_init, RSEND_INIT)
REQUEST_CALL(MPI_Bsend_init, bsend_init, BSEND_INIT)
REQUEST_CALL(MPI_Recv_init, recv_init, RECV_INIT)

static void f_recv(void *buf, fint *count, fint *datatype, fint *source, fint *tag, fint *comm,
                   fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    int rc = MPI_Recv(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), *source, *tag,
                      PMPI_Comm_f2c(*comm), s);
    if (rc == MPI_SUCCESS)
        tj_fortran_status_out(s, status);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_recv, recv, RECV)

static void f_sendrecv(void *sendbuf, fint *sendcount, fint *sendtype, fint *dest, fint *sendtag,
                       void *recvbuf, fint *recvcount, fint *recvtype, fint *source, fint *recvtag,
                       fint *comm, fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    int rc = MPI_Sendrecv(tj_fortran_bottom(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), *dest,
                          *sendtag, tj_fortran_bottom(recvbuf), *recvcount,
                          PMPI_Type_f2c(*recvtype), *source, *recvtag, PMPI_Comm_f2c(*comm), s);
    if (rc == MPI_SUCCESS)
        tj_fortran_status_out(s, status);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_sendrecv, sendrecv, SENDRECV)

static void f_sendrecv_replace(void *buf, fint *count, fint *datatype, fint *dest, fint *sendtag,
                               fint *source, fint *recvtag, fint *comm, fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    int rc = MPI_Sendrecv_replace(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), *dest,
                                  *sendtag, *source, *recvtag, PMPI_Comm_f2c(*comm), s);
    if (rc == MPI_SUCCESS)
        tj_fortran_status_out(s, status);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_sendrecv_replace, sendrecv_replace, SENDRECV_REPLACE)

static void f_mrecv(void *buf, fint *count, fint *datatype, fint *message, fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    MPI_Message m = PMPI_Message_f2c(*message);
    int rc = MPI_Mrecv(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), &m, s);
    if (rc == MPI_SUCCESS) {
        *message = PMPI_Message_c2f(m);
        tj_fortran_status_out(s, status);
    }
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_mrecv, mrecv, MRECV)

static void f_imrecv(void *buf, fint *count, fint *datatype, fint *message, fint *request,
                     fint *ierr)
{
    MPI_Message m = PMPI_Message_f2c(*message);
    MPI_Request r;
    int rc = MPI_Imrecv(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), &m, &r);
    if (rc == MPI_SUCCESS) {
        *message = PMPI_Message_c2f(m);
        *request = PMPI_Request_c2f(r);
    }
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_imrecv, imrecv, IMRECV)

/* Refused on device memory (refused.c); the buffer is kept by the MPI as it is. */
static void f_buffer_attach(void *buffer, fint *size, fint *ierr)
{
    tj_fortran_ierr(ierr, MPI_Buffer_attach(buffer, *size));
}
FORTRAN_NAMES(f_buffer_attach, buffer_attach, BUFFER_ATTACH)

#endif /* OPEN_MPI */

/* ---- requests ------------------------------------------------------------------------------- */

static void f_wait(fint *request, fint *status, fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    int rc = MPI_Wait(&r, s);
    if (rc == MPI_SUCCESS) {
        *request = PMPI_Request_c2f(r);
        tj_fortran_status_out(s, status);
    }
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_wait, wait, WAIT)

static void f_test(fint *request, fint *flag, fint *status, fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    int done = 0, rc = MPI_Test(&r, &done, s);
    if (rc == MPI_SUCCESS) {
        *request = PMPI_Request_c2f(r);
        *flag = done ? 1 : 0; /* gfortran's .TRUE. */
        if (done)
            tj_fortran_status_out(s, status);
    }
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_test, test, TEST)

static void f_request_get_status(fint *request, fint *flag, fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    int done = 0, rc = MPI_Request_get_status(PMPI_Request_f2c(*request), &done, s);
    if (rc == MPI_SUCCESS) {
        *flag = done ? 1 : 0;
        if (done)
            tj_fortran_status_out(s, status);
    }
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_request_get_status, request_get_status, REQUEST_GET_STATUS)

static void f_request_free(fint *request, fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    int rc = MPI_Request_free(&r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_request_free, request_free, REQUEST_FREE)

static void f_start(fint *request, fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    int rc = MPI_Start(&r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_start, start, START)

static void f_startall(fint *count, fint *requests, fint *ierr)
{
    reqs_t r;
    int rc;
    if (!reqs_in(&r, *count, requests, NULL)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Startall(r.n, r.req);
    reqs_out(&r, requests, NULL, false, 0);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_startall, startall, STARTALL)

static void f_waitall(fint *count, fint *requests, fint *statuses, fint *ierr)
{
    reqs_t r;
    int rc;
    if (!reqs_in(&r, *count, requests, statuses)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Waitall(r.n, r.req, r.st);
    reqs_out(&r, requests, statuses, rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS, r.n);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_waitall, waitall, WAITALL)

static void f_testall(fint *count, fint *requests, fint *flag, fint *statuses, fint *ierr)
{
    reqs_t r;
    int done = 0, rc;
    if (!reqs_in(&r, *count, requests, statuses)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Testall(r.n, r.req, &done, r.st);
    reqs_out(&r, requests, statuses, done && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS), r.n);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
        *flag = done ? 1 : 0;
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_testall, testall, TESTALL)

/* Waitany and Testany: Fortran indices start at 1. */
static void any_out(reqs_t *r, fint *requests, int rc, int idx, fint *index, MPI_Status *cs,
                    fint *status)
{
    reqs_out(r, requests, NULL, false, 0);
    if (rc != MPI_SUCCESS)
        return;
    *index = idx == MPI_UNDEFINED ? MPI_UNDEFINED : idx + 1;
    if (idx != MPI_UNDEFINED)
        tj_fortran_status_out(cs, status);
}

static void f_waitany(fint *count, fint *requests, fint *index, fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    reqs_t r;
    int idx = MPI_UNDEFINED, rc;
    if (!reqs_in(&r, *count, requests, NULL)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Waitany(r.n, r.req, &idx, s);
    any_out(&r, requests, rc, idx, index, s, status);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_waitany, waitany, WAITANY)

static void f_testany(fint *count, fint *requests, fint *index, fint *flag, fint *status,
                      fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    reqs_t r;
    int idx = MPI_UNDEFINED, done = 0, rc;
    if (!reqs_in(&r, *count, requests, NULL)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Testany(r.n, r.req, &idx, &done, s);
    any_out(&r, requests, rc, done ? idx : MPI_UNDEFINED, index, s, status);
    if (rc == MPI_SUCCESS)
        *flag = done ? 1 : 0;
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_testany, testany, TESTANY)

/* Waitsome and Testsome: statuses of the completed ones, in order, and indices from 1. */
static void some(bool wait, fint *incount, fint *requests, fint *outcount, fint *indices,
                 fint *statuses, fint *ierr)
{
    reqs_t r;
    int out = MPI_UNDEFINED, rc, *idx;
    if (!reqs_in(&r, *incount, requests, statuses)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    idx = malloc((size_t)(r.n > 0 ? r.n : 1) * sizeof(int));
    if (idx == NULL) {
        reqs_out(&r, requests, NULL, false, 0);
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = wait ? MPI_Waitsome(r.n, r.req, &out, idx, r.st)
              : MPI_Testsome(r.n, r.req, &out, idx, r.st);
    bool ok = rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS;
    reqs_out(&r, requests, statuses, ok && out != MPI_UNDEFINED, ok ? out : 0);
    if (ok) {
        *outcount = out;
        for (int i = 0; out != MPI_UNDEFINED && i < out; i++)
            indices[i] = idx[i] + 1;
    }
    free(idx);
    tj_fortran_ierr(ierr, rc);
}

static void f_waitsome(fint *incount, fint *requests, fint *outcount, fint *indices, fint *statuses,
                       fint *ierr)
{
    some(true, incount, requests, outcount, indices, statuses, ierr);
}
FORTRAN_NAMES(f_waitsome, waitsome, WAITSOME)

static void f_testsome(fint *incount, fint *requests, fint *outcount, fint *indices, fint *statuses,
                       fint *ierr)
{
    some(false, incount, requests, outcount, indices, statuses, ierr);
}
FORTRAN_NAMES(f_testsome, testsome, TESTSOME)

#endif /* MPI_ABI_VERSION */
