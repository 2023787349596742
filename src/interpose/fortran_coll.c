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
 * A family's blocking and non-blocking entry points (MPI_X and MPI_IX) are made from its
 * arguments (interpose/coll_args.h), then the communicator: each role is an argument kind of
 * fortran_binding.h. Buffers are converted as Open MPI 4.1's mpif-h bindings convert them:
 * MPI_IN_PLACE where that binding recognises it, MPI_BOTTOM everywhere. Fortran arrays of counts
 * and displacements are INTEGER, passed as they are. The neighbourhood calls do not allow
 * MPI_IN_PLACE; given one, the C wrapper reports the error the MPI gives. */
#define F_ROLE_SBUF               BUF_IN_PLACE
#define F_ROLE_RBUF               BUF
#define F_ROLE_SCATTER_SBUF       BUF
#define F_ROLE_SCATTER_RBUF       BUF_IN_PLACE
#define F_ROLE_BUF                BUF
#define F_ROLE_COUNT              INT
#define F_ROLE_COUNTS             INTS
#define F_ROLE_DISPLS             INTS
#define F_ROLE_TYPE               TYPE
#define F_ROLE_ROOT               INT
#define F_ROLE_OP                 OP
#define F_ROLE_KIND(_role, _name) F_ROLE_##_role,

#define F_COLL_FAMILY(_name, _iname, _lower, _upper, _kind, _args)                                 \
    FORTRAN_CALL(MPI_##_name, _lower, _upper, (_args(F_ROLE_KIND) COMM))                           \
    FORTRAN_CALL(MPI_##_iname, i##_lower, I##_upper, (_args(F_ROLE_KIND) COMM, REQUEST_OUT))
TJ_COLL_FAMILIES(F_COLL_FAMILY)

/* ---- the w forms ----------------------------------------------------------------------------
 * Their arrays of Fortran datatype handles are as long as the communicator has peers, so each
 * family is one function, which converts them, for its blocking (@p req NULL) and non-blocking
 * forms. Small arrays of a blocking call are converted on the stack; a non-blocking call's stay
 * on the heap until the request is released: Open MPI 4.1 keeps the pointers to the C arrays of
 * types of MPI_Ialltoallw and MPI_Ineighbor_alltoallw in the request and releases the datatypes
 * in them at completion (ompi_coll_base_retain_datatypes_w). */
typedef struct {
    MPI_Datatype *t;
    MPI_Datatype small[SMALL];
} types_t;

/* @p n Fortran handles @p f converted (NULL for a null @p f); false when out of memory. */
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

/* The arrays of a w form's call: the send and receive types it takes, held in s and r for a
 * blocking call, in kept for a non-blocking one. */
typedef struct {
    MPI_Datatype *st, *rt;
    types_t s, r;
    w_arrays_t *kept;
} w_types_t;

/* The number of send and receive types of a w form on a communicator. */
typedef int w_peers_fn(MPI_Comm comm, int *nsend, int *nrecv);

/* The arrays of a w form's call on @p comm, from the Fortran handles @p stypes (none when null:
 * an MPI_IN_PLACE call's send types are not read) and @p rtypes, for a blocking call (@p req
 * NULL) or a non-blocking one. */
static int w_types_in(w_types_t *t, MPI_Comm comm, w_peers_fn *peers, const fint *stypes,
                      const fint *rtypes, const MPI_Request *req)
{
    int ns = 0, nr = 0, rc = peers(comm, &ns, &nr);
    w_arrays_t *w;

    t->kept = NULL;
    if (rc != MPI_SUCCESS)
        return rc;
    if (req != NULL) {
        w = t->kept = calloc(1, sizeof(*w));
        if (w == NULL || !tj_fortran_types_heap(ns, stypes, &w->st) ||
            !tj_fortran_types_heap(nr, rtypes, &w->rt)) {
            if (w != NULL)
                w_arrays_free(w);
            return MPI_ERR_NO_MEM;
        }
        t->st = w->st;
        t->rt = w->rt;
        return MPI_SUCCESS;
    }
    if (!types_in(&t->s, ns, stypes))
        return MPI_ERR_NO_MEM;
    if (!types_in(&t->r, nr, rtypes)) {
        types_free(&t->s);
        return MPI_ERR_NO_MEM;
    }
    t->st = t->s.t;
    t->rt = t->r.t;
    return MPI_SUCCESS;
}

/* After the call returned @p rc: a blocking call's arrays are freed; a non-blocking call's are
 * handed to its request, to be freed when typejit releases it, or freed now if the call failed.
 * If the request cannot be tracked (out of memory), the arrays are left allocated: freeing them
 * while the MPI may still read them would be worse. */
static int w_types_done(w_types_t *t, int rc, const MPI_Request *req)
{
    if (t->kept == NULL) {
        types_free(&t->r);
        types_free(&t->s);
    } else if (rc != MPI_SUCCESS) {
        w_arrays_free(t->kept);
    } else if (tj_request_on_release(*req, w_arrays_free, t->kept) != TJ_OK) {
        tj_log_warn_once("cannot track a non-blocking alltoallw request; its type arrays are "
                         "not freed");
    }
    return rc;
}

/* The peers of an Alltoallw: the remote group's size on an intercommunicator, as in Open MPI's
 * binding. */
static int alltoallw_peers(MPI_Comm comm, int *nsend, int *nrecv)
{
    int inter = 0, rc = PMPI_Comm_test_inter(comm, &inter);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = inter ? PMPI_Comm_remote_size(comm, nsend) : PMPI_Comm_size(comm, nsend);
    *nrecv = *nsend;
    return rc;
}

/* The out- and in-degree of a communicator with a topology: the number of send and receive types
 * of a Neighbor_alltoallw. Open MPI 4.1's binding converts the communicator's size instead,
 * which is too few on a distributed graph that lists a neighbour more than once. Without a
 * topology both are 0 and the C call reports the error. */
static int neighbor_peers(MPI_Comm comm, int *outdegree, int *indegree)
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

static int alltoallw(const void *sb, const int *scounts, const int *sdispls, const fint *stypes,
                     void *rb, const int *rcounts, const int *rdispls, const fint *rtypes,
                     MPI_Comm c, MPI_Request *req)
{
    w_types_t t;
    int rc = w_types_in(&t, c, alltoallw_peers, sb == MPI_IN_PLACE ? NULL : stypes, rtypes, req);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = req ? MPI_Ialltoallw(sb, scounts, sdispls, t.st, rb, rcounts, rdispls, t.rt, c, req)
             : MPI_Alltoallw(sb, scounts, sdispls, t.st, rb, rcounts, rdispls, t.rt, c);
    return w_types_done(&t, rc, req);
}

/* Its displacements are INTEGER(KIND=MPI_ADDRESS_KIND), in every form. */
static int neighbor_alltoallw(const void *sb, const int *scounts, const MPI_Aint *sdispls,
                              const fint *stypes, void *rb, const int *rcounts,
                              const MPI_Aint *rdispls, const fint *rtypes, MPI_Comm c,
                              MPI_Request *req)
{
    w_types_t t;
    int rc = w_types_in(&t, c, neighbor_peers, stypes, rtypes, req);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = req ? MPI_Ineighbor_alltoallw(sb, scounts, sdispls, t.st, rb, rcounts, rdispls, t.rt, c,
                                       req)
             : MPI_Neighbor_alltoallw(sb, scounts, sdispls, t.st, rb, rcounts, rdispls, t.rt, c);
    return w_types_done(&t, rc, req);
}

/* The blocking forms: the same functions without a request. The arrays of types are INTEGER
 * handles, passed as they are to the functions above. */
#define ALLTOALLW_BLOCKING(...)          alltoallw(__VA_ARGS__, NULL)
#define NEIGHBOR_ALLTOALLW_BLOCKING(...) neighbor_alltoallw(__VA_ARGS__, NULL)
FORTRAN_CALL(ALLTOALLW_BLOCKING, alltoallw, ALLTOALLW,
             (BUF_IN_PLACE, INTS, INTS, INTS, BUF, INTS, INTS, INTS, COMM))
FORTRAN_CALL(alltoallw, ialltoallw, IALLTOALLW,
             (BUF_IN_PLACE, INTS, INTS, INTS, BUF, INTS, INTS, INTS, COMM, REQUEST_OUT))
FORTRAN_CALL(NEIGHBOR_ALLTOALLW_BLOCKING, neighbor_alltoallw, NEIGHBOR_ALLTOALLW,
             (BUF, INTS, AINTS, INTS, BUF, INTS, AINTS, INTS, COMM))
FORTRAN_CALL(neighbor_alltoallw, ineighbor_alltoallw, INEIGHBOR_ALLTOALLW,
             (BUF, INTS, AINTS, INTS, BUF, INTS, AINTS, INTS, COMM, REQUEST_OUT))

/* ---- reductions ----------------------------------------------------------------------------- */

TJ_RED_FAMILIES(F_COLL_FAMILY)
FORTRAN_CALL(MPI_Reduce_local, reduce_local, REDUCE_LOCAL, (BUF, BUF, INT, TYPE, OP))

#endif /* OPEN_MPI */
