/* SPDX-License-Identifier: BSD-3-Clause */
/* The system MPI's collective on the packed bytes (see coll_system.h). */
#include "calls/coll_system.h"

#include "move/count.h"

int tj_coll_system_call(tj_coll_t *x, MPI_Request *req)
{
    const tj_coll_call_t *c = &x->c;
    const tj_coll_side_t *s = &x->s, *r = &x->r;
    const void *sb = x->inplace ? MPI_IN_PLACE : s->packed ? (const void *)s->stage->host : c->sbuf;
    void *rb = r->packed ? r->stage->host : c->rbuf;
    /* Arrays in the call's form: int, or MPI_Count counts and MPI_Aint displacements. */
    const void *sc = s->packed ? s->wcounts : c->scounts, *rc = r->packed ? r->wcounts : c->rcounts;
    const void *sd = s->packed ? s->wdispls : c->sdispls, *rd = r->packed ? r->wdispls : c->rdispls;
    const MPI_Aint *sad = s->packed ? s->wadispls : c->sadispls;
    const MPI_Aint *rad = r->packed ? r->wadispls : c->radispls;
    MPI_Datatype st = s->packed ? s->types[0].packed_type : c->stype;
    MPI_Datatype rt = r->packed ? r->types[0].packed_type : c->rtype;
    const MPI_Datatype *sts = s->packed ? s->wtypes : c->stypes;
    const MPI_Datatype *rts = r->packed ? r->wtypes : c->rtypes;
    int64_t sn = c->scount, rn = c->rcount;
    MPI_Comm comm = c->comm;
    bool l = c->large;

/* The non-blocking form when the call has a request, else the blocking one. */
#define CALL(_inb, _b, ...)                                                                        \
    (req ? TJ_COUNT_CALL(l, _inb, __VA_ARGS__, req) : TJ_COUNT_CALL(l, _b, __VA_ARGS__))

    switch (c->kind) {
    case TJ_COLL_ALLTOALL:
        return CALL(Ialltoall, Alltoall, sb, sn, st, rb, rn, rt, comm);
    case TJ_COLL_ALLTOALLV:
        return CALL(Ialltoallv, Alltoallv, sb, sc, sd, st, rb, rc, rd, rt, comm);
    case TJ_COLL_ALLTOALLW:
        return CALL(Ialltoallw, Alltoallw, sb, sc, sd, sts, rb, rc, rd, rts, comm);
    case TJ_COLL_NEIGHBOR_ALLTOALLV:
        return CALL(Ineighbor_alltoallv, Neighbor_alltoallv, sb, sc, sd, st, rb, rc, rd, rt, comm);
    case TJ_COLL_NEIGHBOR_ALLTOALLW:
        return CALL(Ineighbor_alltoallw, Neighbor_alltoallw, sb, sc, sad, sts, rb, rc, rad, rts,
                    comm);
    case TJ_COLL_NEIGHBOR_ALLTOALL:
        return CALL(Ineighbor_alltoall, Neighbor_alltoall, sb, sn, st, rb, rn, rt, comm);
    case TJ_COLL_NEIGHBOR_ALLGATHER:
        return CALL(Ineighbor_allgather, Neighbor_allgather, sb, sn, st, rb, rn, rt, comm);
    case TJ_COLL_NEIGHBOR_ALLGATHERV:
        return CALL(Ineighbor_allgatherv, Neighbor_allgatherv, sb, sn, st, rb, rc, rd, rt, comm);
    case TJ_COLL_ALLGATHER:
        return CALL(Iallgather, Allgather, sb, sn, st, rb, rn, rt, comm);
    case TJ_COLL_ALLGATHERV:
        return CALL(Iallgatherv, Allgatherv, sb, sn, st, rb, rc, rd, rt, comm);
    case TJ_COLL_GATHER:
        return CALL(Igather, Gather, sb, sn, st, rb, rn, rt, c->root, comm);
    case TJ_COLL_GATHERV:
        return CALL(Igatherv, Gatherv, sb, sn, st, rb, rc, rd, rt, c->root, comm);
    case TJ_COLL_SCATTER:
        return CALL(Iscatter, Scatter, sb, sn, st, rb, rn, rt, c->root, comm);
    case TJ_COLL_SCATTERV:
        return CALL(Iscatterv, Scatterv, sb, sc, sd, st, rb, rn, rt, c->root, comm);
    case TJ_COLL_BCAST: {
        /* One buffer: the root's send side or another rank's receive side. */
        void *buf = (s->present ? s->packed : r->packed) ? (s->present ? s->stage : r->stage)->host
                                                         : (void *)c->sbuf;
        MPI_Datatype t = s->present ? st : rt;
        return CALL(Ibcast, Bcast, buf, sn, t, c->root, comm);
    }
    }
#undef CALL
    return MPI_ERR_INTERN;
}
