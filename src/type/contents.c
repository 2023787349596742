/* Envelope and contents of a datatype (see contents.h). */
#include "type/contents.h"

#include <stdlib.h>

bool tj_contents_is_named(int combiner)
{
    return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
           combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

void tj_contents_free(tj_contents_t *c)
{
    /* get_contents returns new handles for derived children; named ones must not be freed.
     * A struct of a million members usually repeats one type: ask about each handle once. */
    MPI_Datatype last = MPI_DATATYPE_NULL;
    bool last_named = true;
    for (int i = 0; i < c->nd; i++) {
        int ni, na, nd, combiner;
        MPI_Datatype t = c->types[i];
        if (t != last || i == 0) {
            last = t;
            last_named = PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
                         tj_contents_is_named(combiner);
        }
        if (!last_named)
            PMPI_Type_free(&c->types[i]);
    }
    if (c->ints != c->ints_small)
        free(c->ints);
    if (c->addrs != c->addrs_small)
        free(c->addrs);
    if (c->types != c->types_small)
        free(c->types);
}

tj_status_t tj_contents_get(MPI_Datatype type, tj_contents_t *c)
{
    if (PMPI_Type_get_envelope(type, &c->ni, &c->na, &c->nd, &c->combiner) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    c->ints = c->ni <= TJ_CONTENTS_SMALL ? c->ints_small : malloc((size_t)c->ni * sizeof(int));
    c->addrs =
        c->na <= TJ_CONTENTS_SMALL ? c->addrs_small : malloc((size_t)c->na * sizeof(MPI_Aint));
    c->types =
        c->nd <= TJ_CONTENTS_SMALL ? c->types_small : malloc((size_t)c->nd * sizeof(MPI_Datatype));
    if (c->ints == NULL || c->addrs == NULL || c->types == NULL) {
        int nd = c->nd;
        c->nd = 0; /* nothing to free yet */
        tj_contents_free(c);
        return nd >= 0 ? TJ_ERR_NOMEM : TJ_ERR_MPI;
    }
    if (tj_contents_is_named(c->combiner)) {
        c->nd = 0;
        return TJ_OK;
    }
    if (PMPI_Type_get_contents(type, c->ni, c->na, c->nd, c->ints, c->addrs, c->types) !=
        MPI_SUCCESS) {
        c->nd = 0;
        tj_contents_free(c);
        return TJ_ERR_MPI;
    }
    return TJ_OK;
}

void tj_contents_args(const tj_contents_t *c, tj_type_args_t *a)
{
    const int *in = c->ints;

    *a = (tj_type_args_t){.combiner = c->combiner};
    if (c->nd > 0)
        a->child = c->types[0];
    switch (c->combiner) {
    case MPI_COMBINER_CONTIGUOUS:
        a->count = in[0];
        break;
    case MPI_COMBINER_VECTOR:
        a->count = in[0], a->blocklen = in[1], a->stride = in[2];
        break;
    case MPI_COMBINER_HVECTOR:
        a->count = in[0], a->blocklen = in[1], a->stride = c->addrs[0];
        break;
    case MPI_COMBINER_SUBARRAY:
        a->count = in[0];
        a->sizes = &in[1], a->subsizes = &in[1 + a->count], a->starts = &in[1 + 2 * a->count];
        a->order = in[1 + 3 * a->count];
        break;
    case MPI_COMBINER_DARRAY:
        a->nprocs = in[0], a->rank = in[1], a->count = in[2];
        a->sizes = &in[3], a->distribs = &in[3 + a->count], a->dargs = &in[3 + 2 * a->count];
        a->psizes = &in[3 + 3 * a->count], a->order = in[3 + 4 * a->count];
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        a->count = in[0], a->blocklen = in[1], a->displs = &in[2], a->bdispls = c->addrs;
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT:
        a->count = in[0], a->blocklens = &in[1], a->displs = &in[1 + a->count];
        a->bdispls = c->addrs, a->types = c->types;
        break;
    default:
        break;
    }
}
