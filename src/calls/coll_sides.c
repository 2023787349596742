/* SPDX-License-Identifier: BSD-3-Clause */
/* A collective call as two sides of per-peer slices (see coll_sides.h). */
#include "calls/coll_sides.h"

#include <stdlib.h>
#include <string.h>

#include "util/common.h"
#include "util/log.h"

_Static_assert(sizeof(MPI_Count) == sizeof(int64_t) && sizeof(MPI_Aint) == sizeof(int64_t),
               "the large-count arrays hold 64-bit values");

/* Element @p i of the application's counts[] or displs[]: ints, or in a large-count call
 * MPI_Count counts and MPI_Aint displacements. */
static int64_t count_at(const tj_coll_call_t *c, const void *a, int i)
{
    return c->large ? (int64_t)((const MPI_Count *)a)[i] : ((const int *)a)[i];
}

static int64_t displ_at(const tj_coll_call_t *c, const void *a, int i)
{
    return c->large ? (int64_t)((const MPI_Aint *)a)[i] : ((const int *)a)[i];
}

static bool side_init(tj_coll_side_t *sd, const void *buf, int n, int ntypes)
{
    size_t k = n > 0 ? (size_t)n : 1;
    sd->present = true;
    sd->buf = (char *)buf;
    sd->n = n;
    sd->slices = calloc(k, sizeof(tj_coll_slice_t));
    sd->types = calloc(ntypes > 0 ? (size_t)ntypes : 1, sizeof(tj_coll_type_t));
    if (sd->slices == NULL || sd->types == NULL) {
        tj_log_error("out of memory describing a collective of %d peers", n);
        return false;
    }
    return true;
}

/* The index of @p type in the side's types, recorded on first use; -1 for a type whose extents
 * the system MPI does not know (it reports the error). */
static int type_index(tj_coll_side_t *sd, MPI_Datatype type, const tj_coll_call_t *c)
{
    tj_coll_type_t *ct;
    if (type == MPI_DATATYPE_NULL)
        return -1;
    for (int i = sd->ntypes - 1; i >= 0; i--)
        if (sd->types[i].type == type)
            return i;
    ct = &sd->types[sd->ntypes];
    ct->type = type;
    ct->packed_type = MPI_DATATYPE_NULL;
    ct->info = NULL;
    if (c->lookup != NULL) {
        const tj_type_info_t *found = c->lookup(type);
        /* The record may outlive the call (a non-blocking collective), and the type with it. */
        ct->info = tj_type_hold(found);
        tj_table_return(found);
    }
    ct->known = ct->info != NULL;
    if (!ct->known) {
        tj_type_info_t *own = calloc(1, sizeof(*own));
        if (own == NULL)
            return -1;
        tj_table_read_extents(type, own);
        ct->info = own;
    }
    if (!ct->info->extents) {
        if (ct->known)
            tj_type_release(ct->info);
        else
            free((void *)ct->info);
        ct->info = NULL;
        return -1;
    }
    return sd->ntypes++;
}

/* Slice @p i: @p count objects of @p type at byte offset @p off. False for arguments the system
 * MPI must judge (a negative count, a null type). */
static bool set_slice(tj_coll_side_t *sd, int i, int64_t count, MPI_Datatype type, int64_t off,
                      const tj_coll_call_t *c)
{
    tj_coll_slice_t *sl = &sd->slices[i];
    if (count < 0 || (sl->t = type_index(sd, type, c)) < 0)
        return false;
    sl->count = count;
    sl->off = off;
    return true;
}

/* A side of @p n slices from the single-count, v-form or per-peer-type arguments: displs[] in
 * bytes when @p bytes (Alltoallw), else in elements. */
static bool side_from(tj_coll_side_t *sd, const void *buf, int n, int64_t count, const void *counts,
                      const void *displs, bool bytes, const MPI_Aint *adispls, MPI_Datatype type,
                      const MPI_Datatype *types, const tj_coll_call_t *c)
{
    if (!side_init(sd, buf, n, types != NULL ? n : 1))
        return false;
    if ((counts != NULL && displs == NULL && adispls == NULL) ||
        (n > 0 && ((counts == NULL && count < 0) || (types != NULL && counts == NULL))))
        return false;
    for (int i = 0; i < n; i++) {
        MPI_Datatype t = types != NULL ? types[i] : type;
        int64_t k = counts != NULL ? count_at(c, counts, i) : count;
        int64_t off, ext, at;
        int ti = type_index(sd, t, c);
        if (ti < 0)
            return false;
        ext = sd->types[ti].info->extent;
        if (adispls != NULL)
            off = adispls[i];
        else if (displs != NULL && bytes)
            off = displ_at(c, displs, i);
        else if (displs != NULL ? !tj_mul64(displ_at(c, displs, i), ext, &off)
                                : !tj_mul64(i, count, &at) || !tj_mul64(at, ext, &off))
            return false;
        if (!set_slice(sd, i, k, t, off, c))
            return false;
    }
    return true;
}

/* @p v: per-peer counts (and displacements), as opposed to one count for every peer. */
static bool send_side(tj_coll_t *x, int n, bool v)
{
    const tj_coll_call_t *c = &x->c;
    return side_from(&x->s, c->sbuf, n, c->scount, v ? c->scounts : NULL, v ? c->sdispls : NULL,
                     c->kind == TJ_COLL_ALLTOALLW, c->sadispls, c->stype, c->stypes, c);
}

static bool recv_side(tj_coll_t *x, int n, bool v)
{
    const tj_coll_call_t *c = &x->c;
    return side_from(&x->r, c->rbuf, n, c->rcount, v ? c->rcounts : NULL, v ? c->rdispls : NULL,
                     c->kind == TJ_COLL_ALLTOALLW, c->radispls, c->rtype, c->rtypes, c);
}

/* The single send slice of the gather and allgather forms. */
static bool one_send(tj_coll_t *x)
{
    const tj_coll_call_t *c = &x->c;
    return side_init(&x->s, c->sbuf, 1, 1) && set_slice(&x->s, 0, c->scount, c->stype, 0, c);
}

/* The single receive slice of the scatter forms. */
static bool one_recv(tj_coll_t *x)
{
    const tj_coll_call_t *c = &x->c;
    return side_init(&x->r, c->rbuf, 1, 1) && set_slice(&x->r, 0, c->rcount, c->rtype, 0, c);
}

/* The neighbours of a process topology, in the order the neighbourhood collectives use them:
 * per Cartesian dimension the -1 neighbour, then the +1 neighbour. */
static bool neighbours(MPI_Comm comm, int *in, int **src, int *out, int **dst)
{
    int topo, rank, weighted = 0;
    *src = *dst = NULL;
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
        return false;
    if (topo == MPI_CART) {
        int nd;
        if (PMPI_Cartdim_get(comm, &nd) != MPI_SUCCESS)
            return false;
        *in = *out = 2 * nd;
        *src = malloc((size_t)(2 * nd + 1) * sizeof(int));
        *dst = malloc((size_t)(2 * nd + 1) * sizeof(int));
        if (*src == NULL || *dst == NULL)
            return false;
        for (int d = 0; d < nd; d++) {
            int lo, hi;
            if (PMPI_Cart_shift(comm, d, 1, &lo, &hi) != MPI_SUCCESS)
                return false;
            (*src)[2 * d] = (*dst)[2 * d] = lo;
            (*src)[2 * d + 1] = (*dst)[2 * d + 1] = hi;
        }
        return true;
    }
    if (topo == MPI_GRAPH) {
        int nn;
        if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
            PMPI_Graph_neighbors_count(comm, rank, &nn) != MPI_SUCCESS)
            return false;
        *in = *out = nn;
        *src = malloc((size_t)(nn + 1) * sizeof(int));
        *dst = malloc((size_t)(nn + 1) * sizeof(int));
        if (*src == NULL || *dst == NULL ||
            PMPI_Graph_neighbors(comm, rank, nn, *src) != MPI_SUCCESS)
            return false;
        memcpy(*dst, *src, (size_t)nn * sizeof(int));
        return true;
    }
    if (topo == MPI_DIST_GRAPH) {
        int *sw = NULL, *dw = NULL;
        bool ok;
        if (PMPI_Dist_graph_neighbors_count(comm, in, out, &weighted) != MPI_SUCCESS)
            return false;
        *src = malloc((size_t)(*in + 1) * sizeof(int));
        *dst = malloc((size_t)(*out + 1) * sizeof(int));
        if (weighted) {
            sw = malloc((size_t)(*in + 1) * sizeof(int));
            dw = malloc((size_t)(*out + 1) * sizeof(int));
        }
        ok = *src != NULL && *dst != NULL && (!weighted || (sw != NULL && dw != NULL)) &&
             PMPI_Dist_graph_neighbors(comm, *in, *src, weighted ? sw : MPI_UNWEIGHTED, *out, *dst,
                                       weighted ? dw : MPI_UNWEIGHTED) == MPI_SUCCESS;
        free(sw);
        free(dw);
        return ok;
    }
    return false; /* no topology: the system MPI reports the error */
}

/* Which sides this rank has in the call, and their slices. False: not typejit's call. */
bool tj_coll_sides_describe(tj_coll_t *x)
{
    const tj_coll_call_t *c = &x->c;
    int inter = 0, rank = 0, size = 0, n;
    bool root;

    if (c->comm == MPI_COMM_NULL || PMPI_Comm_test_inter(c->comm, &inter) != MPI_SUCCESS ||
        PMPI_Comm_rank(c->comm, &rank) != MPI_SUCCESS ||
        (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(c->comm, &size) != MPI_SUCCESS)
        return false;
    n = size; /* peers: the remote group of an intercommunicator */
    /* Rooted forms: the root's side, the others' side, or none (MPI_PROC_NULL); a root out of
     * range is the system MPI's error to report. */
    if (c->kind == TJ_COLL_GATHER || c->kind == TJ_COLL_GATHERV || c->kind == TJ_COLL_SCATTER ||
        c->kind == TJ_COLL_SCATTERV || c->kind == TJ_COLL_BCAST) {
        if (inter) {
            root = c->root == MPI_ROOT;
            if (!root && (c->root < 0 || c->root >= size))
                return false;
        } else {
            int local = 0;
            PMPI_Comm_size(c->comm, &local);
            if (c->root < 0 || c->root >= local)
                return false;
            root = c->root == rank;
        }
    } else {
        root = false;
    }

    switch (c->kind) {
    case TJ_COLL_ALLTOALL:
    case TJ_COLL_ALLTOALLV:
    case TJ_COLL_ALLTOALLW: {
        bool v = c->kind != TJ_COLL_ALLTOALL;
        x->inplace = !inter && c->sbuf == MPI_IN_PLACE;
        if (!x->inplace && !send_side(x, n, v))
            return false;
        if (!recv_side(x, n, v))
            return false;
        for (int i = 0; x->inplace && i < n; i++)
            x->r.slices[i].in = true;
        return true;
    }
    case TJ_COLL_NEIGHBOR_ALLTOALL:
    case TJ_COLL_NEIGHBOR_ALLTOALLV:
    case TJ_COLL_NEIGHBOR_ALLTOALLW:
    case TJ_COLL_NEIGHBOR_ALLGATHER:
    case TJ_COLL_NEIGHBOR_ALLGATHERV: {
        /* The allgather forms send one slice to every out-neighbour; the others one slice per
         * out-neighbour. Receives: one slice per in-neighbour. */
        bool gather =
            c->kind == TJ_COLL_NEIGHBOR_ALLGATHER || c->kind == TJ_COLL_NEIGHBOR_ALLGATHERV;
        bool sv = c->kind == TJ_COLL_NEIGHBOR_ALLTOALLV || c->kind == TJ_COLL_NEIGHBOR_ALLTOALLW;
        bool rv = sv || c->kind == TJ_COLL_NEIGHBOR_ALLGATHERV;
        int in = 0, out = 0, *src, *dst;
        bool ok = neighbours(c->comm, &in, &src, &out, &dst) &&
                  (gather ? one_send(x) : send_side(x, out, sv)) && recv_side(x, in, rv);
        for (int i = 0; ok && !gather && i < out; i++)
            x->s.slices[i].skip = dst[i] == MPI_PROC_NULL;
        for (int i = 0; ok && i < in; i++)
            x->r.slices[i].skip = src[i] == MPI_PROC_NULL;
        free(src);
        free(dst);
        return ok;
    }
    case TJ_COLL_ALLGATHER:
    case TJ_COLL_ALLGATHERV:
        x->inplace = !inter && c->sbuf == MPI_IN_PLACE;
        if ((!x->inplace && !one_send(x)) || !recv_side(x, n, c->kind == TJ_COLL_ALLGATHERV))
            return false;
        if (x->inplace)
            x->r.slices[rank].in = true;
        return true;
    case TJ_COLL_GATHER:
    case TJ_COLL_GATHERV:
        if (!root)
            return one_send(x);
        x->inplace = !inter && c->sbuf == MPI_IN_PLACE;
        if ((!inter && !x->inplace && !one_send(x)) || !recv_side(x, n, c->kind == TJ_COLL_GATHERV))
            return false;
        if (x->inplace)
            x->r.slices[rank].in = true;
        return true;
    case TJ_COLL_SCATTER:
    case TJ_COLL_SCATTERV: {
        bool v = c->kind == TJ_COLL_SCATTERV;
        if (!root)
            return one_recv(x);
        /* MPI_IN_PLACE at the root: its own slice stays where it is. */
        if (!send_side(x, n, v))
            return false;
        return inter || c->rbuf == MPI_IN_PLACE || one_recv(x);
    }
    case TJ_COLL_BCAST:
        if (root)
            return side_init(&x->s, c->sbuf, 1, 1) &&
                   set_slice(&x->s, 0, c->scount, c->stype, 0, c);
        return side_init(&x->r, c->sbuf, 1, 1) && set_slice(&x->r, 0, c->scount, c->stype, 0, c);
    }
    return false;
}

void tj_coll_sides_free(tj_coll_side_t *sd)
{
    tj_staging_put(sd->stage);
    for (int t = 0; t < sd->ntypes; t++) {
        if (sd->types[t].known)
            tj_type_release(sd->types[t].info);
        else
            free((void *)sd->types[t].info);
        if (sd->types[t].packed_type != MPI_DATATYPE_NULL)
            PMPI_Type_free(&sd->types[t].packed_type);
        if (sd->types[t].dup)
            PMPI_Type_free(&sd->types[t].type);
    }
    free(sd->slices);
    free(sd->types);
    free(sd->wadispls); /* and the other argument arrays: one allocation */
}
