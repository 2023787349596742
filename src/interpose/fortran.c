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
 * exports nothing (docs/mpis.md). */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/fortran.h"
#include "send/request.h"
#include "util/log.h"

#if defined(MPI_ABI_VERSION)
void tj_fortran_step_aside(void) {}
#else

typedef MPI_Fint fint;

/* Arrays of requests up to this size are converted on the stack. */
#define SMALL 16

/* Arrays of Fortran INTEGERs (counts, displacements) are passed to the C wrappers as they are,
 * as Open MPI's own bindings do when the two types have the same size. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER is not a C int");

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

static void *f2c_bottom(void *buf)
{
    return is_sentinel(S_BOTTOM, buf) ? MPI_BOTTOM : buf;
}

/* A buffer that may be MPI_IN_PLACE or MPI_BOTTOM (OMPI_F2C_IN_PLACE, then OMPI_F2C_BOTTOM). */
static void *f2c_in_place(void *buf)
{
    return is_sentinel(S_IN_PLACE, buf) ? MPI_IN_PLACE : f2c_bottom(buf);
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

/* The C status for a Fortran one, holding what the Fortran status holds: the fields a call does
 * not set (MPI_ERROR, for a call that completes one request) must come back as they were. */
static MPI_Status *f2c_status(fint *f, MPI_Status *c)
{
    if (status_ignored(f))
        return MPI_STATUS_IGNORE;
    f2c_one_status(f, c);
    return c;
}

static void c2f_status(const MPI_Status *c, fint *f)
{
    if (c != MPI_STATUS_IGNORE)
        c2f_one_status(c, f);
}

static void set_ierr(fint *ierr, int rc)
{
    if (ierr != NULL) /* mpi_f08 may pass none */
        *ierr = (fint)rc;
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

/* ---- exported names -------------------------------------------------------------------------
 * One function, five names: mpi_x, mpi_x_, mpi_x__, MPI_X (mpif.h and `use mpi`, all manglings
 * Open MPI exports) and ompi_x_f (what `use mpi_f08` calls). Each name is a trampoline that
 * jumps through its own slot: to the function here while typejit takes part, to the system
 * MPI's own entry point of that name once typejit has stepped aside (tj_fortran_step_aside).
 * The slots are gathered in one section, so that stepping aside finds every name. */
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

/* Called once, before the system MPI is initialised. A name the system MPI does not have is
 * one no program of it calls; it keeps typejit's function. */
void tj_fortran_step_aside(void)
{
    /* The linker's bounds of the section; hidden, so that it does not export them. */
    extern fortran_slot_t __start_tj_fortran[] __attribute__((visibility("hidden")));
    extern fortran_slot_t __stop_tj_fortran[] __attribute__((visibility("hidden")));
    for (fortran_slot_t *s = __start_tj_fortran; s < __stop_tj_fortran; s++) {
        void *next = dlsym(RTLD_NEXT, s->name);
        if (next != NULL)
            s->target = next;
    }
}

/* ---- init and finalize ---------------------------------------------------------------------- */

static void f_init(fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    set_ierr(ierr, MPI_Init(&argc, &argv));
}
FORTRAN_NAMES(f_init, init, INIT)

static void f_init_thread(fint *required, fint *provided, fint *ierr)
{
    int argc = 0, prov = 0, rc;
    char **argv = NULL;
    rc = MPI_Init_thread(&argc, &argv, *required, &prov);
    if (rc == MPI_SUCCESS)
        *provided = prov;
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_init_thread, init_thread, INIT_THREAD)

static void f_finalize(fint *ierr)
{
    set_ierr(ierr, MPI_Finalize());
}
FORTRAN_NAMES(f_finalize, finalize, FINALIZE)

/* ---- datatypes ------------------------------------------------------------------------------ */

static void f_type_commit(fint *type, fint *ierr)
{
    MPI_Datatype t = PMPI_Type_f2c(*type);
    int rc = MPI_Type_commit(&t);
    if (rc == MPI_SUCCESS)
        *type = PMPI_Type_c2f(t);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_type_commit, type_commit, TYPE_COMMIT)

static void f_type_free(fint *type, fint *ierr)
{
    MPI_Datatype t = PMPI_Type_f2c(*type);
    int rc = MPI_Type_free(&t);
    if (rc == MPI_SUCCESS)
        *type = PMPI_Type_c2f(t);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_type_free, type_free, TYPE_FREE)

static void f_type_dup(fint *oldtype, fint *newtype, fint *ierr)
{
    MPI_Datatype t;
    int rc = MPI_Type_dup(PMPI_Type_f2c(*oldtype), &t);
    if (rc == MPI_SUCCESS)
        *newtype = PMPI_Type_c2f(t);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_type_dup, type_dup, TYPE_DUP)

/* @p n Fortran handles converted on the heap (NULL for a null @p f); false when out of memory. */
static bool types_heap(int n, const fint *f, MPI_Datatype **out)
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
        set_ierr(ierr, _rc);                                                                       \
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

    if (!types_heap(*count, types, &c)) {
        set_ierr(ierr, MPI_ERR_NO_MEM);
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
    int rc = MPI_Pack(f2c_bottom(inbuf), *incount, PMPI_Type_f2c(*datatype), outbuf, *outsize, &pos,
                      PMPI_Comm_f2c(*comm));
    if (rc == MPI_SUCCESS)
        *position = pos;
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_pack, pack, PACK)

static void f_unpack(void *inbuf, fint *insize, fint *position, void *outbuf, fint *outcount,
                     fint *datatype, fint *comm, fint *ierr)
{
    int pos = *position;
    int rc = MPI_Unpack(inbuf, *insize, &pos, f2c_bottom(outbuf), *outcount,
                        PMPI_Type_f2c(*datatype), PMPI_Comm_f2c(*comm));
    if (rc == MPI_SUCCESS)
        *position = pos;
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_unpack, unpack, UNPACK)

#endif /* OPEN_MPI */

static void f_pack_size(fint *incount, fint *datatype, fint *comm, fint *size, fint *ierr)
{
    int s = 0;
    int rc = MPI_Pack_size(*incount, PMPI_Type_f2c(*datatype), PMPI_Comm_f2c(*comm), &s);
    if (rc == MPI_SUCCESS)
        *size = s;
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_pack_size, pack_size, PACK_SIZE)

#if defined(OPEN_MPI) /* calls with a buffer: the MPICH family's bindings call the C wrappers */

/* ---- point to point ------------------------------------------------------------------------- */

/* Blocking sends: MPI_Send, MPI_Ssend, MPI_Rsend, MPI_Bsend. */
#define BLOCKING_SEND(_c, _lower, _upper)                                                          \
    static void f_##_lower(void *buf, fint *count, fint *datatype, fint *dest, fint *tag,          \
                           fint *comm, fint *ierr)                                                 \
    {                                                                                              \
        set_ierr(ierr, _c(f2c_bottom(buf), *count, PMPI_Type_f2c(*datatype), *dest, *tag,          \
                          PMPI_Comm_f2c(*comm)));                                                  \
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
        int rc = _c(f2c_bottom(buf), *count, PMPI_Type_f2c(*datatype), *peer, *tag,                \
                    PMPI_Comm_f2c(*comm), &r);                                                     \
        if (rc == MPI_SUCCESS)                                                                     \
            *request = PMPI_Request_c2f(r);                                                        \
        set_ierr(ierr, rc);                                                                        \
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
    MPI_Status cs, *s = f2c_status(status, &cs);
    int rc = MPI_Recv(f2c_bottom(buf), *count, PMPI_Type_f2c(*datatype), *source, *tag,
                      PMPI_Comm_f2c(*comm), s);
    if (rc == MPI_SUCCESS)
        c2f_status(s, status);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_recv, recv, RECV)

static void f_sendrecv(void *sendbuf, fint *sendcount, fint *sendtype, fint *dest, fint *sendtag,
                       void *recvbuf, fint *recvcount, fint *recvtype, fint *source, fint *recvtag,
                       fint *comm, fint *status, fint *ierr)
{
    MPI_Status cs, *s = f2c_status(status, &cs);
    int rc = MPI_Sendrecv(f2c_bottom(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), *dest,
                          *sendtag, f2c_bottom(recvbuf), *recvcount, PMPI_Type_f2c(*recvtype),
                          *source, *recvtag, PMPI_Comm_f2c(*comm), s);
    if (rc == MPI_SUCCESS)
        c2f_status(s, status);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_sendrecv, sendrecv, SENDRECV)

static void f_sendrecv_replace(void *buf, fint *count, fint *datatype, fint *dest, fint *sendtag,
                               fint *source, fint *recvtag, fint *comm, fint *status, fint *ierr)
{
    MPI_Status cs, *s = f2c_status(status, &cs);
    int rc = MPI_Sendrecv_replace(f2c_bottom(buf), *count, PMPI_Type_f2c(*datatype), *dest,
                                  *sendtag, *source, *recvtag, PMPI_Comm_f2c(*comm), s);
    if (rc == MPI_SUCCESS)
        c2f_status(s, status);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_sendrecv_replace, sendrecv_replace, SENDRECV_REPLACE)

static void f_mrecv(void *buf, fint *count, fint *datatype, fint *message, fint *status, fint *ierr)
{
    MPI_Status cs, *s = f2c_status(status, &cs);
    MPI_Message m = PMPI_Message_f2c(*message);
    int rc = MPI_Mrecv(f2c_bottom(buf), *count, PMPI_Type_f2c(*datatype), &m, s);
    if (rc == MPI_SUCCESS) {
        *message = PMPI_Message_c2f(m);
        c2f_status(s, status);
    }
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_mrecv, mrecv, MRECV)

static void f_imrecv(void *buf, fint *count, fint *datatype, fint *message, fint *request,
                     fint *ierr)
{
    MPI_Message m = PMPI_Message_f2c(*message);
    MPI_Request r;
    int rc = MPI_Imrecv(f2c_bottom(buf), *count, PMPI_Type_f2c(*datatype), &m, &r);
    if (rc == MPI_SUCCESS) {
        *message = PMPI_Message_c2f(m);
        *request = PMPI_Request_c2f(r);
    }
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_imrecv, imrecv, IMRECV)

#endif /* OPEN_MPI */

/* ---- requests ------------------------------------------------------------------------------- */

static void f_wait(fint *request, fint *status, fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    MPI_Status cs, *s = f2c_status(status, &cs);
    int rc = MPI_Wait(&r, s);
    if (rc == MPI_SUCCESS) {
        *request = PMPI_Request_c2f(r);
        c2f_status(s, status);
    }
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_wait, wait, WAIT)

static void f_test(fint *request, fint *flag, fint *status, fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    MPI_Status cs, *s = f2c_status(status, &cs);
    int done = 0, rc = MPI_Test(&r, &done, s);
    if (rc == MPI_SUCCESS) {
        *request = PMPI_Request_c2f(r);
        *flag = done ? 1 : 0; /* gfortran's .TRUE. */
        if (done)
            c2f_status(s, status);
    }
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_test, test, TEST)

static void f_request_get_status(fint *request, fint *flag, fint *status, fint *ierr)
{
    MPI_Status cs, *s = f2c_status(status, &cs);
    int done = 0, rc = MPI_Request_get_status(PMPI_Request_f2c(*request), &done, s);
    if (rc == MPI_SUCCESS) {
        *flag = done ? 1 : 0;
        if (done)
            c2f_status(s, status);
    }
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_request_get_status, request_get_status, REQUEST_GET_STATUS)

static void f_request_free(fint *request, fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    int rc = MPI_Request_free(&r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_request_free, request_free, REQUEST_FREE)

static void f_start(fint *request, fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    int rc = MPI_Start(&r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_start, start, START)

static void f_startall(fint *count, fint *requests, fint *ierr)
{
    reqs_t r;
    int rc;
    if (!reqs_in(&r, *count, requests, NULL)) {
        set_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Startall(r.n, r.req);
    reqs_out(&r, requests, NULL, false, 0);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_startall, startall, STARTALL)

static void f_waitall(fint *count, fint *requests, fint *statuses, fint *ierr)
{
    reqs_t r;
    int rc;
    if (!reqs_in(&r, *count, requests, statuses)) {
        set_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Waitall(r.n, r.req, r.st);
    reqs_out(&r, requests, statuses, rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS, r.n);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_waitall, waitall, WAITALL)

static void f_testall(fint *count, fint *requests, fint *flag, fint *statuses, fint *ierr)
{
    reqs_t r;
    int done = 0, rc;
    if (!reqs_in(&r, *count, requests, statuses)) {
        set_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Testall(r.n, r.req, &done, r.st);
    reqs_out(&r, requests, statuses, done && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS), r.n);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
        *flag = done ? 1 : 0;
    set_ierr(ierr, rc);
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
        c2f_status(cs, status);
}

static void f_waitany(fint *count, fint *requests, fint *index, fint *status, fint *ierr)
{
    MPI_Status cs, *s = f2c_status(status, &cs);
    reqs_t r;
    int idx = MPI_UNDEFINED, rc;
    if (!reqs_in(&r, *count, requests, NULL)) {
        set_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Waitany(r.n, r.req, &idx, s);
    any_out(&r, requests, rc, idx, index, s, status);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_waitany, waitany, WAITANY)

static void f_testany(fint *count, fint *requests, fint *index, fint *flag, fint *status,
                      fint *ierr)
{
    MPI_Status cs, *s = f2c_status(status, &cs);
    reqs_t r;
    int idx = MPI_UNDEFINED, done = 0, rc;
    if (!reqs_in(&r, *count, requests, NULL)) {
        set_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Testany(r.n, r.req, &idx, &done, s);
    any_out(&r, requests, rc, done ? idx : MPI_UNDEFINED, index, s, status);
    if (rc == MPI_SUCCESS)
        *flag = done ? 1 : 0;
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_testany, testany, TESTANY)

/* Waitsome and Testsome: statuses of the completed ones, in order, and indices from 1. */
static void some(bool wait, fint *incount, fint *requests, fint *outcount, fint *indices,
                 fint *statuses, fint *ierr)
{
    reqs_t r;
    int out = MPI_UNDEFINED, rc, *idx;
    if (!reqs_in(&r, *incount, requests, statuses)) {
        set_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    idx = malloc((size_t)(r.n > 0 ? r.n : 1) * sizeof(int));
    if (idx == NULL) {
        reqs_out(&r, requests, NULL, false, 0);
        set_ierr(ierr, MPI_ERR_NO_MEM);
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
    set_ierr(ierr, rc);
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

#if defined(OPEN_MPI) /* calls with a buffer: the MPICH family's bindings call the C wrappers */

/* ---- collectives ----------------------------------------------------------------------------
 * Each collective is one function that takes the Fortran arguments and a C request, NULL for the
 * blocking form, and calls the C wrapper; COLL_PAIR makes the blocking entry point and the
 * non-blocking one (MPI_X and MPI_IX) from it. Buffers are converted as Open MPI 4.1's mpif-h
 * bindings convert them: MPI_IN_PLACE where that binding recognises it, MPI_BOTTOM everywhere.
 * Fortran arrays of counts and displacements are INTEGER, passed as they are, except
 * Neighbor_alltoallw's displacements, INTEGER(KIND=MPI_ADDRESS_KIND) (MPI_Aint). */
#define UNPAREN(...) __VA_ARGS__
#define COLL_PAIR(_impl, _lower, _upper, _params, _args)                                           \
    static void f_##_lower(UNPAREN _params, fint *ierr)                                            \
    {                                                                                              \
        set_ierr(ierr, _impl(UNPAREN _args, NULL));                                                \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)                                                      \
    static void f_i##_lower(UNPAREN _params, fint *request, fint *ierr)                            \
    {                                                                                              \
        MPI_Request r;                                                                             \
        int rc = _impl(UNPAREN _args, &r);                                                         \
        if (rc == MPI_SUCCESS)                                                                     \
            *request = PMPI_Request_c2f(r);                                                        \
        set_ierr(ierr, rc);                                                                        \
    }                                                                                              \
    FORTRAN_NAMES(f_i##_lower, i##_lower, I##_upper)

/* An array of Fortran datatype handles converted to C ones (the w forms); small ones on the
 * stack. A null @p f (the send types of an MPI_IN_PLACE call, which are not read) gives NULL.
 *
 * The non-blocking w forms keep their arrays on the heap until the request is released (w_keep
 * below): Open MPI 4.1 keeps the pointers to the C arrays of types of MPI_Ialltoallw and
 * MPI_Ineighbor_alltoallw in the request and releases the datatypes in them at completion
 * (ompi_coll_base_retain_datatypes_w). */
typedef struct {
    MPI_Datatype *t;
    MPI_Datatype small[SMALL];
} types_t;

static bool types_in(types_t *t, int n, const fint *f)
{
    t->t = NULL;
    if (f == NULL)
        return true;
    n = n < 0 ? 0 : n;
    t->t = n <= SMALL ? t->small : malloc((size_t)n * sizeof(MPI_Datatype));
    if (t->t == NULL)
        return false;
    for (int i = 0; i < n; i++)
        t->t[i] = PMPI_Type_f2c(f[i]);
    return true;
}

static void types_free(types_t *t)
{
    if (t->t != t->small)
        free(t->t);
}

/* The converted type arrays of a non-blocking w form, which must outlive the call. */
typedef struct {
    MPI_Datatype *st, *rt;
} w_arrays_t;

static void w_arrays_free(void *arg)
{
    w_arrays_t *w = arg;
    free(w->st);
    free(w->rt);
    free(w);
}

/* The arrays of a non-blocking w form (@p ns send and @p nr receive types) on the heap; NULL
 * when out of memory. */
static w_arrays_t *w_arrays(int ns, const fint *stypes, int nr, const fint *rtypes)
{
    w_arrays_t *w = calloc(1, sizeof(*w));
    if (w == NULL || !types_heap(ns, stypes, &w->st) || !types_heap(nr, rtypes, &w->rt)) {
        if (w != NULL)
            w_arrays_free(w);
        return NULL;
    }
    return w;
}

/* After a non-blocking w form started as @p rc says: hand its arrays to the request, to be
 * freed when typejit releases it; freed now if the call failed. If the request cannot be
 * tracked (out of memory), the arrays are left allocated: freeing them while the MPI may still
 * read them would be worse. */
static int w_keep(int rc, MPI_Request req, w_arrays_t *w)
{
    if (rc != MPI_SUCCESS)
        w_arrays_free(w);
    else if (tj_request_on_release(req, w_arrays_free, w) != TJ_OK)
        tj_log_warn_once("cannot track a non-blocking alltoallw request; its type arrays are "
                         "not freed");
    return rc;
}

/* The number of send and receive types of an Alltoallw: the remote group's size on an
 * intercommunicator, as in Open MPI's binding. */
static int alltoallw_peers(MPI_Comm comm, int *n)
{
    int inter = 0, rc = PMPI_Comm_test_inter(comm, &inter);
    if (rc != MPI_SUCCESS)
        return rc;
    return inter ? PMPI_Comm_remote_size(comm, n) : PMPI_Comm_size(comm, n);
}

/* The in- and out-degree of a communicator with a topology: the number of receive and send types
 * of a Neighbor_alltoallw. Open MPI 4.1's binding converts the communicator's size instead,
 * which is too few on a distributed graph that lists a neighbour more than once. Without a
 * topology both are 0 and the C call reports the error. */
static int neighbor_degrees(MPI_Comm comm, int *indegree, int *outdegree)
{
    int topo = MPI_UNDEFINED, rc = PMPI_Topo_test(comm, &topo), n = 0, rank = 0, weighted = 0;
    *indegree = *outdegree = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    if (topo == MPI_CART) {
        rc = PMPI_Cartdim_get(comm, &n);
        *indegree = *outdegree = 2 * n;
    } else if (topo == MPI_GRAPH) {
        rc = PMPI_Comm_rank(comm, &rank);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Graph_neighbors_count(comm, rank, &n);
        *indegree = *outdegree = n;
    } else if (topo == MPI_DIST_GRAPH) {
        rc = PMPI_Dist_graph_neighbors_count(comm, indegree, outdegree, &weighted);
    }
    return rc;
}

static int coll_alltoallv(void *sbuf, fint *scounts, fint *sdispls, fint *stype, void *rbuf,
                          fint *rcounts, fint *rdispls, fint *rtype, fint *comm, MPI_Request *req)
{
    void *sb = f2c_in_place(sbuf), *rb = f2c_bottom(rbuf);
    MPI_Datatype st = PMPI_Type_f2c(*stype), rt = PMPI_Type_f2c(*rtype);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    return req ? MPI_Ialltoallv(sb, scounts, sdispls, st, rb, rcounts, rdispls, rt, c, req)
               : MPI_Alltoallv(sb, scounts, sdispls, st, rb, rcounts, rdispls, rt, c);
}
COLL_PAIR(coll_alltoallv, alltoallv, ALLTOALLV,
          (void *sbuf, fint *scounts, fint *sdispls, fint *stype, void *rbuf, fint *rcounts,
           fint *rdispls, fint *rtype, fint *comm),
          (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm))

static void f_alltoallw(void *sbuf, fint *scounts, fint *sdispls, fint *stypes, void *rbuf,
                        fint *rcounts, fint *rdispls, fint *rtypes, fint *comm, fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    void *sb = f2c_in_place(sbuf), *rb = f2c_bottom(rbuf);
    types_t st, rt;
    int n = 0, rc = alltoallw_peers(c, &n);
    if (rc != MPI_SUCCESS)
        goto out;
    rc = MPI_ERR_NO_MEM;
    if (!types_in(&st, n, sb == MPI_IN_PLACE ? NULL : stypes))
        goto out;
    if (!types_in(&rt, n, rtypes))
        goto free_st;
    rc = MPI_Alltoallw(sb, scounts, sdispls, st.t, rb, rcounts, rdispls, rt.t, c);
    types_free(&rt);
free_st:
    types_free(&st);
out:
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_alltoallw, alltoallw, ALLTOALLW)

static void f_ialltoallw(void *sbuf, fint *scounts, fint *sdispls, fint *stypes, void *rbuf,
                         fint *rcounts, fint *rdispls, fint *rtypes, fint *comm, fint *request,
                         fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    void *sb = f2c_in_place(sbuf), *rb = f2c_bottom(rbuf);
    MPI_Request r;
    w_arrays_t *w;
    int n = 0, rc = alltoallw_peers(c, &n);

    if (rc == MPI_SUCCESS) {
        w = w_arrays(n, sb == MPI_IN_PLACE ? NULL : stypes, n, rtypes);
        rc = w == NULL ? MPI_ERR_NO_MEM
                       : w_keep(MPI_Ialltoallw(sb, scounts, sdispls, w->st, rb, rcounts, rdispls,
                                               w->rt, c, &r),
                                r, w);
        if (rc == MPI_SUCCESS)
            *request = PMPI_Request_c2f(r);
    }
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_ialltoallw, ialltoallw, IALLTOALLW)

static int coll_neighbor_alltoallv(void *sbuf, fint *scounts, fint *sdispls, fint *stype,
                                   void *rbuf, fint *rcounts, fint *rdispls, fint *rtype,
                                   fint *comm, MPI_Request *req)
{
    void *sb = f2c_in_place(sbuf), *rb = f2c_bottom(rbuf);
    MPI_Datatype st = PMPI_Type_f2c(*stype), rt = PMPI_Type_f2c(*rtype);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    return req ? MPI_Ineighbor_alltoallv(sb, scounts, sdispls, st, rb, rcounts, rdispls, rt, c, req)
               : MPI_Neighbor_alltoallv(sb, scounts, sdispls, st, rb, rcounts, rdispls, rt, c);
}
COLL_PAIR(coll_neighbor_alltoallv, neighbor_alltoallv, NEIGHBOR_ALLTOALLV,
          (void *sbuf, fint *scounts, fint *sdispls, fint *stype, void *rbuf, fint *rcounts,
           fint *rdispls, fint *rtype, fint *comm),
          (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm))

/* No MPI_IN_PLACE here: the neighbourhood w forms do not allow it. */
static void f_neighbor_alltoallw(void *sbuf, fint *scounts, MPI_Aint *sdispls, fint *stypes,
                                 void *rbuf, fint *rcounts, MPI_Aint *rdispls, fint *rtypes,
                                 fint *comm, fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    void *sb = f2c_bottom(sbuf), *rb = f2c_bottom(rbuf);
    types_t st, rt;
    int in = 0, out = 0, rc = neighbor_degrees(c, &in, &out);
    if (rc != MPI_SUCCESS)
        goto out;
    rc = MPI_ERR_NO_MEM;
    if (!types_in(&st, out, stypes))
        goto out;
    if (!types_in(&rt, in, rtypes))
        goto free_st;
    rc = MPI_Neighbor_alltoallw(sb, scounts, sdispls, st.t, rb, rcounts, rdispls, rt.t, c);
    types_free(&rt);
free_st:
    types_free(&st);
out:
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_neighbor_alltoallw, neighbor_alltoallw, NEIGHBOR_ALLTOALLW)

static void f_ineighbor_alltoallw(void *sbuf, fint *scounts, MPI_Aint *sdispls, fint *stypes,
                                  void *rbuf, fint *rcounts, MPI_Aint *rdispls, fint *rtypes,
                                  fint *comm, fint *request, fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    void *sb = f2c_bottom(sbuf), *rb = f2c_bottom(rbuf);
    MPI_Request r;
    w_arrays_t *w;
    int in = 0, out = 0, rc = neighbor_degrees(c, &in, &out);

    if (rc == MPI_SUCCESS) {
        w = w_arrays(out, stypes, in, rtypes);
        rc = w == NULL ? MPI_ERR_NO_MEM
                       : w_keep(MPI_Ineighbor_alltoallw(sb, scounts, sdispls, w->st, rb, rcounts,
                                                        rdispls, w->rt, c, &r),
                                r, w);
        if (rc == MPI_SUCCESS)
            *request = PMPI_Request_c2f(r);
    }
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_ineighbor_alltoallw, ineighbor_alltoallw, INEIGHBOR_ALLTOALLW)

static int coll_allgather(void *sbuf, fint *scount, fint *stype, void *rbuf, fint *rcount,
                          fint *rtype, fint *comm, MPI_Request *req)
{
    void *sb = f2c_in_place(sbuf), *rb = f2c_bottom(rbuf);
    MPI_Datatype st = PMPI_Type_f2c(*stype), rt = PMPI_Type_f2c(*rtype);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    return req ? MPI_Iallgather(sb, *scount, st, rb, *rcount, rt, c, req)
               : MPI_Allgather(sb, *scount, st, rb, *rcount, rt, c);
}
COLL_PAIR(coll_allgather, allgather, ALLGATHER,
          (void *sbuf, fint *scount, fint *stype, void *rbuf, fint *rcount, fint *rtype,
           fint *comm),
          (sbuf, scount, stype, rbuf, rcount, rtype, comm))

static int coll_allgatherv(void *sbuf, fint *scount, fint *stype, void *rbuf, fint *rcounts,
                           fint *displs, fint *rtype, fint *comm, MPI_Request *req)
{
    void *sb = f2c_in_place(sbuf), *rb = f2c_bottom(rbuf);
    MPI_Datatype st = PMPI_Type_f2c(*stype), rt = PMPI_Type_f2c(*rtype);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    return req ? MPI_Iallgatherv(sb, *scount, st, rb, rcounts, displs, rt, c, req)
               : MPI_Allgatherv(sb, *scount, st, rb, rcounts, displs, rt, c);
}
COLL_PAIR(coll_allgatherv, allgatherv, ALLGATHERV,
          (void *sbuf, fint *scount, fint *stype, void *rbuf, fint *rcounts, fint *displs,
           fint *rtype, fint *comm),
          (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm))

static int coll_gather(void *sbuf, fint *scount, fint *stype, void *rbuf, fint *rcount, fint *rtype,
                       fint *root, fint *comm, MPI_Request *req)
{
    void *sb = f2c_in_place(sbuf), *rb = f2c_bottom(rbuf);
    MPI_Datatype st = PMPI_Type_f2c(*stype), rt = PMPI_Type_f2c(*rtype);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    return req ? MPI_Igather(sb, *scount, st, rb, *rcount, rt, *root, c, req)
               : MPI_Gather(sb, *scount, st, rb, *rcount, rt, *root, c);
}
COLL_PAIR(coll_gather, gather, GATHER,
          (void *sbuf, fint *scount, fint *stype, void *rbuf, fint *rcount, fint *rtype, fint *root,
           fint *comm),
          (sbuf, scount, stype, rbuf, rcount, rtype, root, comm))

static int coll_gatherv(void *sbuf, fint *scount, fint *stype, void *rbuf, fint *rcounts,
                        fint *displs, fint *rtype, fint *root, fint *comm, MPI_Request *req)
{
    void *sb = f2c_in_place(sbuf), *rb = f2c_bottom(rbuf);
    MPI_Datatype st = PMPI_Type_f2c(*stype), rt = PMPI_Type_f2c(*rtype);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    return req ? MPI_Igatherv(sb, *scount, st, rb, rcounts, displs, rt, *root, c, req)
               : MPI_Gatherv(sb, *scount, st, rb, rcounts, displs, rt, *root, c);
}
COLL_PAIR(coll_gatherv, gatherv, GATHERV,
          (void *sbuf, fint *scount, fint *stype, void *rbuf, fint *rcounts, fint *displs,
           fint *rtype, fint *root, fint *comm),
          (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm))

/* Scatter and Scatterv: MPI_IN_PLACE is the receive buffer (at the root). */
static int coll_scatter(void *sbuf, fint *scount, fint *stype, void *rbuf, fint *rcount,
                        fint *rtype, fint *root, fint *comm, MPI_Request *req)
{
    void *sb = f2c_bottom(sbuf), *rb = f2c_in_place(rbuf);
    MPI_Datatype st = PMPI_Type_f2c(*stype), rt = PMPI_Type_f2c(*rtype);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    return req ? MPI_Iscatter(sb, *scount, st, rb, *rcount, rt, *root, c, req)
               : MPI_Scatter(sb, *scount, st, rb, *rcount, rt, *root, c);
}
COLL_PAIR(coll_scatter, scatter, SCATTER,
          (void *sbuf, fint *scount, fint *stype, void *rbuf, fint *rcount, fint *rtype, fint *root,
           fint *comm),
          (sbuf, scount, stype, rbuf, rcount, rtype, root, comm))

static int coll_scatterv(void *sbuf, fint *scounts, fint *displs, fint *stype, void *rbuf,
                         fint *rcount, fint *rtype, fint *root, fint *comm, MPI_Request *req)
{
    void *sb = f2c_bottom(sbuf), *rb = f2c_in_place(rbuf);
    MPI_Datatype st = PMPI_Type_f2c(*stype), rt = PMPI_Type_f2c(*rtype);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    return req ? MPI_Iscatterv(sb, scounts, displs, st, rb, *rcount, rt, *root, c, req)
               : MPI_Scatterv(sb, scounts, displs, st, rb, *rcount, rt, *root, c);
}
COLL_PAIR(coll_scatterv, scatterv, SCATTERV,
          (void *sbuf, fint *scounts, fint *displs, fint *stype, void *rbuf, fint *rcount,
           fint *rtype, fint *root, fint *comm),
          (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm))

static int coll_bcast(void *buf, fint *count, fint *type, fint *root, fint *comm, MPI_Request *req)
{
    void *b = f2c_bottom(buf);
    MPI_Datatype t = PMPI_Type_f2c(*type);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    return req ? MPI_Ibcast(b, *count, t, *root, c, req) : MPI_Bcast(b, *count, t, *root, c);
}
COLL_PAIR(coll_bcast, bcast, BCAST, (void *buf, fint *count, fint *type, fint *root, fint *comm),
          (buf, count, type, root, comm))

#endif /* OPEN_MPI: collectives */

#endif /* MPI_ABI_VERSION */
