/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points of the collectives and reductions (coll.c, reduce.c), in Open MPI
 * builds: the MPICH family's bindings of these calls, which all take a buffer, reach the C
 * wrappers (fortran.c says how each family's bindings reach C). */
#include <stdlib.h>

#include "interpose/coll_args.h"
#include "interpose/fortran_binding.h"
#include "calls/request.h"
#include "util/log.h"

#if defined(OPEN_MPI)

/* ---- collectives ----------------------------------------------------------------------------
 * Each collective is one function that takes the Fortran arguments and a C request, NULL for the
 * blocking form, and calls the C wrapper; COLL_PAIR makes the blocking entry point and the
 * non-blocking one (MPI_X and MPI_IX) from it. Buffers are converted as Open MPI 4.1's mpif-h
 * bindings convert them: MPI_IN_PLACE where that binding recognises it, MPI_BOTTOM everywhere.
 * Fortran arrays of counts and displacements are INTEGER, passed as they are, except
 * Neighbor_alltoallw's displacements, INTEGER(KIND=MPI_ADDRESS_KIND) (MPI_Aint). */
#define COLL_PAIR(_impl, _lower, _upper, _params, _args)                                           \
    REQUEST_PAIR(_impl, _lower, _upper, i##_lower, I##_upper, _params, _args)

/* A family's arguments (interpose/coll_args.h), then the communicator, as the Fortran bindings
 * take them; each role's Fortran type and the C argument made of it. */
#define F_PARAMS(_args)         _args(F_PARAM) fint *comm
#define F_PARAM(_role, _name)   F_TYPE_##_role _name,
#define F_ARG(_role, _name)     F_TO_C_##_role(_name),
#define F_TYPE_SBUF             void *
#define F_TO_C_SBUF(_n)         tj_fortran_in_place(_n)
#define F_TYPE_RBUF             void *
#define F_TO_C_RBUF(_n)         tj_fortran_bottom(_n)
#define F_TYPE_SCATTER_SBUF     void *
#define F_TO_C_SCATTER_SBUF(_n) tj_fortran_bottom(_n)
#define F_TYPE_SCATTER_RBUF     void *
#define F_TO_C_SCATTER_RBUF(_n) tj_fortran_in_place(_n)
#define F_TYPE_BUF              void *
#define F_TO_C_BUF(_n)          tj_fortran_bottom(_n)
#define F_TYPE_COUNT            fint *
#define F_TO_C_COUNT(_n)        *_n
#define F_TYPE_COUNTS           fint *
#define F_TO_C_COUNTS(_n)       _n
#define F_TYPE_DISPLS           fint *
#define F_TO_C_DISPLS(_n)       _n
#define F_TYPE_TYPE             fint *
#define F_TO_C_TYPE(_n)         PMPI_Type_f2c(*_n)
#define F_TYPE_ROOT             fint *
#define F_TO_C_ROOT(_n)         *_n
#define F_TYPE_OP               fint *
#define F_TO_C_OP(_n)           PMPI_Op_f2c(*_n)

/* The entry points of a family's blocking and non-blocking calls, MPI_@p _name and MPI_@p _iname
 * (Fortran names @p _lower and @p _upper), from its arguments @p _args. */
#define F_COLL(_lower, _upper, _name, _iname, _args)                                               \
    static int coll_##_lower(F_PARAMS(_args), MPI_Request *req)                                    \
    {                                                                                              \
        MPI_Comm c = PMPI_Comm_f2c(*comm);                                                         \
        return req ? MPI_##_iname(_args(F_ARG) c, req) : MPI_##_name(_args(F_ARG) c);              \
    }                                                                                              \
    COLL_PAIR(coll_##_lower, _lower, _upper, (F_PARAMS(_args)), (TJ_NAMES(_args, BLOCKING)))

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
    if (w == NULL || !tj_fortran_types_heap(ns, stypes, &w->st) ||
        !tj_fortran_types_heap(nr, rtypes, &w->rt)) {
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

static void f_alltoallw(void *sbuf, fint *scounts, fint *sdispls, fint *stypes, void *rbuf,
                        fint *rcounts, fint *rdispls, fint *rtypes, fint *comm, fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    void *sb = tj_fortran_in_place(sbuf), *rb = tj_fortran_bottom(rbuf);
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
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_alltoallw, alltoallw, ALLTOALLW)

static void f_ialltoallw(void *sbuf, fint *scounts, fint *sdispls, fint *stypes, void *rbuf,
                         fint *rcounts, fint *rdispls, fint *rtypes, fint *comm, fint *request,
                         fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    void *sb = tj_fortran_in_place(sbuf), *rb = tj_fortran_bottom(rbuf);
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
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_ialltoallw, ialltoallw, IALLTOALLW)

/* No MPI_IN_PLACE here: the neighbourhood w forms do not allow it. */
static void f_neighbor_alltoallw(void *sbuf, fint *scounts, MPI_Aint *sdispls, fint *stypes,
                                 void *rbuf, fint *rcounts, MPI_Aint *rdispls, fint *rtypes,
                                 fint *comm, fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    void *sb = tj_fortran_bottom(sbuf), *rb = tj_fortran_bottom(rbuf);
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
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_neighbor_alltoallw, neighbor_alltoallw, NEIGHBOR_ALLTOALLW)

static void f_ineighbor_alltoallw(void *sbuf, fint *scounts, MPI_Aint *sdispls, fint *stypes,
                                  void *rbuf, fint *rcounts, MPI_Aint *rdispls, fint *rtypes,
                                  fint *comm, fint *request, fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    void *sb = tj_fortran_bottom(sbuf), *rb = tj_fortran_bottom(rbuf);
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
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_ineighbor_alltoallw, ineighbor_alltoallw, INEIGHBOR_ALLTOALLW)

/* The collectives without arrays of types. The neighbourhood calls do not allow MPI_IN_PLACE;
 * given one, the C wrapper reports the error the MPI gives. */
#define F_COLL_FAMILY(_name, _iname, _lower, _upper, _kind, _args)                                 \
    F_COLL(_lower, _upper, _name, _iname, _args)
TJ_COLL_FAMILIES(F_COLL_FAMILY)

/* ---- reductions ----------------------------------------------------------------------------- */

TJ_RED_FAMILIES(F_COLL_FAMILY)

static void f_reduce_local(void *inbuf, void *inoutbuf, fint *count, fint *type, fint *op,
                           fint *ierr)
{
    tj_fortran_ierr(ierr, MPI_Reduce_local(tj_fortran_bottom(inbuf), tj_fortran_bottom(inoutbuf),
                                           *count, PMPI_Type_f2c(*type), PMPI_Op_f2c(*op)));
}
FORTRAN_NAMES(f_reduce_local, reduce_local, REDUCE_LOCAL)

#endif /* OPEN_MPI */
