/* The datatype constructors: each new type's translation is recorded from the constructor's
 * arguments and its children's records, so that MPI_Type_commit need not ask
 * MPI_Type_get_contents (which in Open MPI duplicates every derived child). Types made by paths
 * typejit does not see are translated through envelope and contents at commit, as before. */
#include "interpose/constructors.h"
#include "interpose/init.h"
#include "interpose/wrappers.h"
#include "type/flatten.h"
#include "type/table.h"
#include "util/log.h"

/* The envelope MPI_Type_get_envelope reports for a type made by @p a, as the MPI standard
 * defines it (MPI 3.1, section 4.1.13), without asking MPI: it tells a record from a type that
 * MPI later put at the same handle unseen. */
static void envelope_of(const tj_type_args_t *a, tj_type_known_t *k)
{
    int n = a->count;

    k->combiner = a->combiner;
    k->ni = k->na = 0;
    k->nd = 1;
    switch (a->combiner) {
    case MPI_COMBINER_CONTIGUOUS:
        k->ni = 1;
        break;
    case MPI_COMBINER_VECTOR:
        k->ni = 3;
        break;
    case MPI_COMBINER_HVECTOR:
        k->ni = 2, k->na = 1;
        break;
    case MPI_COMBINER_INDEXED:
        k->ni = 2 * n + 1;
        break;
    case MPI_COMBINER_HINDEXED:
        k->ni = n + 1, k->na = n;
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        k->ni = n + 2;
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        k->ni = 2, k->na = n;
        break;
    case MPI_COMBINER_STRUCT:
        k->ni = n + 1, k->na = n, k->nd = n;
        break;
    case MPI_COMBINER_SUBARRAY:
        k->ni = 3 * n + 2;
        break;
    case MPI_COMBINER_DARRAY:
        k->ni = 4 * n + 4;
        break;
    case MPI_COMBINER_RESIZED:
        k->na = 2;
        break;
    default: /* MPI_COMBINER_DUP */
        break;
    }
}

void tj_interpose_learn(MPI_Datatype type, const tj_type_args_t *args)
{
    tj_type_known_t k;
    tj_layout_t *layout = NULL;
    tj_ir_t ir;

    envelope_of(args, &k);
    k.st = tj_translate_args(args, &ir);
    k.reason = k.st == TJ_ERR_NOT_STRIDED ? (int)tj_translate_reason() : TJ_REASON_NONE;
    /* Not one strided block: its layout, from the arguments and the children's records, while
     * the member arrays are at hand (at commit only MPI_Type_get_contents has them, a copy). A
     * type whose layout cannot be made keeps the reason why. */
    if (k.st == TJ_ERR_NOT_STRIDED && tj_reason_layout((tj_reason_t)k.reason)) {
        tj_reason_t why;
        tj_status_t st = tj_flatten_args(args, &layout, &why);
        if (st == TJ_ERR_NOT_STRIDED)
            k.reason = (int)why;
        else if (st != TJ_OK)
            layout = NULL; /* found again at commit, through the contents */
    }
    if (tj_table_put_known(type, &k, k.st == TJ_OK ? &ir : NULL, layout) != TJ_OK)
        tj_log_warn_once("out of memory recording a new datatype; it is translated at commit");
    tj_layout_release(layout);
}

/* Call the system MPI's constructor; on success record the new type from @p _args. */
#define CONSTRUCT(_call, _newtype, ...)                                                            \
    do {                                                                                           \
        int _rc;                                                                                   \
        if (!tj_interpose_active())                                                                \
            return _call;                                                                          \
        tj_in_wrapper = 1;                                                                         \
        _rc = _call;                                                                               \
        if (_rc == MPI_SUCCESS) {                                                                  \
            tj_type_args_t _a = {__VA_ARGS__};                                                     \
            tj_interpose_learn(*(_newtype), &_a);                                                  \
        }                                                                                          \
        tj_in_wrapper = 0;                                                                         \
        return _rc;                                                                                \
    } while (0)

int TJ_WRAPPER(MPI_Type_contiguous)(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CONSTRUCT(PMPI_Type_contiguous(count, oldtype, newtype), newtype,
              .combiner = MPI_COMBINER_CONTIGUOUS, .count = count, .child = oldtype);
}

int TJ_WRAPPER(MPI_Type_vector)(int count, int blocklength, int stride, MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    CONSTRUCT(PMPI_Type_vector(count, blocklength, stride, oldtype, newtype), newtype,
              .combiner = MPI_COMBINER_VECTOR, .count = count, .blocklen = blocklength,
              .stride = stride, .child = oldtype);
}

int TJ_WRAPPER(MPI_Type_create_hvector)(int count, int blocklength, MPI_Aint stride,
                                        MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CONSTRUCT(PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype), newtype,
              .combiner = MPI_COMBINER_HVECTOR, .count = count, .blocklen = blocklength,
              .stride = stride, .child = oldtype);
}

int TJ_WRAPPER(MPI_Type_indexed)(int count, const int blocklengths[], const int displacements[],
                                 MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CONSTRUCT(PMPI_Type_indexed(count, blocklengths, displacements, oldtype, newtype), newtype,
              .combiner = MPI_COMBINER_INDEXED, .count = count, .blocklens = blocklengths,
              .displs = displacements, .child = oldtype);
}

int TJ_WRAPPER(MPI_Type_create_hindexed)(int count, const int blocklengths[],
                                         const MPI_Aint displacements[], MPI_Datatype oldtype,
                                         MPI_Datatype *newtype)
{
    CONSTRUCT(PMPI_Type_create_hindexed(count, blocklengths, displacements, oldtype, newtype),
              newtype, .combiner = MPI_COMBINER_HINDEXED, .count = count, .blocklens = blocklengths,
              .bdispls = displacements, .child = oldtype);
}

int TJ_WRAPPER(MPI_Type_create_indexed_block)(int count, int blocklength, const int displacements[],
                                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CONSTRUCT(PMPI_Type_create_indexed_block(count, blocklength, displacements, oldtype, newtype),
              newtype, .combiner = MPI_COMBINER_INDEXED_BLOCK, .count = count,
              .blocklen = blocklength, .displs = displacements, .child = oldtype);
}

int TJ_WRAPPER(MPI_Type_create_hindexed_block)(int count, int blocklength,
                                               const MPI_Aint displacements[], MPI_Datatype oldtype,
                                               MPI_Datatype *newtype)
{
    CONSTRUCT(PMPI_Type_create_hindexed_block(count, blocklength, displacements, oldtype, newtype),
              newtype, .combiner = MPI_COMBINER_HINDEXED_BLOCK, .count = count,
              .blocklen = blocklength, .bdispls = displacements, .child = oldtype);
}

int TJ_WRAPPER(MPI_Type_create_struct)(int count, const int blocklengths[],
                                       const MPI_Aint displacements[], const MPI_Datatype types[],
                                       MPI_Datatype *newtype)
{
    CONSTRUCT(PMPI_Type_create_struct(count, blocklengths, displacements, types, newtype), newtype,
              .combiner = MPI_COMBINER_STRUCT, .count = count, .blocklens = blocklengths,
              .bdispls = displacements, .types = types);
}

int TJ_WRAPPER(MPI_Type_create_subarray)(int ndims, const int sizes[], const int subsizes[],
                                         const int starts[], int order, MPI_Datatype oldtype,
                                         MPI_Datatype *newtype)
{
    CONSTRUCT(PMPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, oldtype, newtype),
              newtype, .combiner = MPI_COMBINER_SUBARRAY, .count = ndims, .sizes = sizes,
              .subsizes = subsizes, .starts = starts, .order = order, .child = oldtype);
}

int TJ_WRAPPER(MPI_Type_create_darray)(int size, int rank, int ndims, const int gsizes[],
                                       const int distribs[], const int dargs[], const int psizes[],
                                       int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CONSTRUCT(PMPI_Type_create_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order,
                                      oldtype, newtype),
              newtype, .combiner = MPI_COMBINER_DARRAY, .count = ndims, .nprocs = size,
              .rank = rank, .sizes = gsizes, .distribs = distribs, .dargs = dargs, .psizes = psizes,
              .order = order, .child = oldtype);
}

int TJ_WRAPPER(MPI_Type_create_resized)(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                        MPI_Datatype *newtype)
{
    CONSTRUCT(PMPI_Type_create_resized(oldtype, lb, extent, newtype), newtype,
              .combiner = MPI_COMBINER_RESIZED, .child = oldtype);
}
