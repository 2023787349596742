/* SPDX-License-Identifier: BSD-3-Clause */
/* The datatype constructors: each new type's translation is recorded from the constructor's
 * arguments and its children's records, so that MPI_Type_commit need not ask
 * MPI_Type_get_contents (which in Open MPI duplicates every derived child). Types made by paths
 * typejit does not see are translated through envelope and contents at commit, as before. */
#include "interpose/constructors.h"
#include "interpose/init.h"
#include "interpose/state.h"
#include "interpose/wrappers.h"
#include "type/table.h"
#include "util/log.h"

void tj_interpose_learn(MPI_Datatype type, const tj_type_args_t *args)
{
    tj_type_known_t k;
    tj_reason_t why;
    tj_ir_t ir;

    tj_envelope_of(args, &k.env);
    k.st = tj_translate_args(args, &ir, &why);
    k.reason = k.st == TJ_ERR_NOT_STRIDED ? (int)why : TJ_REASON_NONE;
    /* A type that is not one strided block gets no layout here: that waits for its first device
     * call (type/lazy.h), through MPI_Type_get_contents. */
    if (tj_table_put_known(type, &k, k.st == TJ_OK ? &ir : NULL) != TJ_OK)
        tj_log_warn_once("out of memory recording a new datatype; it is translated at commit");
}

/* Call the system MPI's constructor; on success record the new type from @p _args. */
#define CONSTRUCT(_call, _newtype, ...)                                                            \
    do {                                                                                           \
        int _rc;                                                                                   \
        if (!tj_interpose_active())                                                                \
            return _call;                                                                          \
        tj_interpose_thread.init.in_wrapper = 1;                                                   \
        _rc = _call;                                                                               \
        if (_rc == MPI_SUCCESS) {                                                                  \
            tj_type_args_t _a = {__VA_ARGS__};                                                     \
            tj_interpose_learn(*(_newtype), &_a);                                                  \
        }                                                                                          \
        tj_interpose_thread.init.in_wrapper = 0;                                                   \
        return _rc;                                                                                \
    } while (0)

/* Each constructor in its two forms, from one definition: the MPI-3 one (int counts, MPI_Aint
 * byte displacements) and, where the MPI has it, the MPI-4 large-count one (`_c`: MPI_Count
 * for both). A form is (suffix, count type, byte type, array view of counts, array view of
 * byte values, large). */
#define FORM_INT(_m) _m(, int, MPI_Aint, TJ_ARRAY_OF_INT, TJ_ARRAY_OF_AINT, false)
#if TJ_HAVE_LARGE
#define FORM_C(_m) _m(_c, MPI_Count, MPI_Count, TJ_ARRAY_OF_COUNT, TJ_ARRAY_OF_COUNT, true)
#else
#define FORM_C(_m)
#endif
#define BOTH_FORMS(_m) FORM_INT(_m) FORM_C(_m)

#define CONTIGUOUS(_s, _cnt, _byte, _CA, _BA, _large)                                              \
    int TJ_WRAPPER(MPI_Type_contiguous##_s)(_cnt count, MPI_Datatype oldtype,                      \
                                            MPI_Datatype * newtype)                                \
    {                                                                                              \
        CONSTRUCT(PMPI_Type_contiguous##_s(count, oldtype, newtype), newtype, .large = _large,     \
                  .combiner = MPI_COMBINER_CONTIGUOUS, .count = count, .child = oldtype);          \
    }
BOTH_FORMS(CONTIGUOUS)

/* Each h-form differs from its plain form only in its stride or displacements: bytes (the form's
 * byte type) where the plain form counts extents of the old type (its count type). So each
 * family is one definition: (the form's suffix, count type and large, the name, the combiner,
 * the type of the stride or displacements and, for displacements, the record's field and the
 * array view it takes). */
#define VECTOR_FAMILY(_s, _cnt, _large, _name, _combiner, _stride)                                 \
    int TJ_WRAPPER(MPI_Type_##_name##_s)(_cnt count, _cnt blocklength, _stride stride,             \
                                         MPI_Datatype oldtype, MPI_Datatype * newtype)             \
    {                                                                                              \
        CONSTRUCT(PMPI_Type_##_name##_s(count, blocklength, stride, oldtype, newtype), newtype,    \
                  .large = _large, .combiner = _combiner, .count = count, .blocklen = blocklength, \
                  .stride = stride, .child = oldtype);                                             \
    }
#define VECTOR(_s, _cnt, _byte, _CA, _BA, _large)                                                  \
    VECTOR_FAMILY(_s, _cnt, _large, vector, MPI_COMBINER_VECTOR, _cnt)
#define HVECTOR(_s, _cnt, _byte, _CA, _BA, _large)                                                 \
    VECTOR_FAMILY(_s, _cnt, _large, create_hvector, MPI_COMBINER_HVECTOR, _byte)
BOTH_FORMS(VECTOR)
BOTH_FORMS(HVECTOR)

#define INDEXED_FAMILY(_s, _cnt, _CA, _large, _name, _combiner, _disp, _field, _view)              \
    int TJ_WRAPPER(MPI_Type_##_name##_s)(_cnt count, const _cnt blocklengths[],                    \
                                         const _disp displacements[], MPI_Datatype oldtype,        \
                                         MPI_Datatype *newtype)                                    \
    {                                                                                              \
        CONSTRUCT(PMPI_Type_##_name##_s(count, blocklengths, displacements, oldtype, newtype),     \
                  newtype, .large = _large, .combiner = _combiner, .count = count,                 \
                  .blocklens = _CA(blocklengths), ._field = _view(displacements),                  \
                  .child = oldtype);                                                               \
    }
#define INDEXED(_s, _cnt, _byte, _CA, _BA, _large)                                                 \
    INDEXED_FAMILY(_s, _cnt, _CA, _large, indexed, MPI_COMBINER_INDEXED, _cnt, displs, _CA)
#define HINDEXED(_s, _cnt, _byte, _CA, _BA, _large)                                                \
    INDEXED_FAMILY(_s, _cnt, _CA, _large, create_hindexed, MPI_COMBINER_HINDEXED, _byte, bdispls,  \
                   _BA)
BOTH_FORMS(INDEXED)
BOTH_FORMS(HINDEXED)

#define BLOCK_FAMILY(_s, _cnt, _large, _name, _combiner, _disp, _field, _view)                     \
    int TJ_WRAPPER(MPI_Type_##_name##_s)(_cnt count, _cnt blocklength,                             \
                                         const _disp displacements[], MPI_Datatype oldtype,        \
                                         MPI_Datatype *newtype)                                    \
    {                                                                                              \
        CONSTRUCT(PMPI_Type_##_name##_s(count, blocklength, displacements, oldtype, newtype),      \
                  newtype, .large = _large, .combiner = _combiner, .count = count,                 \
                  .blocklen = blocklength, ._field = _view(displacements), .child = oldtype);      \
    }
#define INDEXED_BLOCK(_s, _cnt, _byte, _CA, _BA, _large)                                           \
    BLOCK_FAMILY(_s, _cnt, _large, create_indexed_block, MPI_COMBINER_INDEXED_BLOCK, _cnt, displs, \
                 _CA)
#define HINDEXED_BLOCK(_s, _cnt, _byte, _CA, _BA, _large)                                          \
    BLOCK_FAMILY(_s, _cnt, _large, create_hindexed_block, MPI_COMBINER_HINDEXED_BLOCK, _byte,      \
                 bdispls, _BA)
BOTH_FORMS(INDEXED_BLOCK)
BOTH_FORMS(HINDEXED_BLOCK)

#define STRUCT(_s, _cnt, _byte, _CA, _BA, _large)                                                  \
    int TJ_WRAPPER(MPI_Type_create_struct##_s)(_cnt count, const _cnt blocklengths[],              \
                                               const _byte displacements[],                        \
                                               const MPI_Datatype types[], MPI_Datatype *newtype)  \
    {                                                                                              \
        CONSTRUCT(PMPI_Type_create_struct##_s(count, blocklengths, displacements, types, newtype), \
                  newtype, .large = _large, .combiner = MPI_COMBINER_STRUCT, .count = count,       \
                  .blocklens = _CA(blocklengths), .bdispls = _BA(displacements), .types = types);  \
    }
BOTH_FORMS(STRUCT)

#define SUBARRAY(_s, _cnt, _byte, _CA, _BA, _large)                                                \
    int TJ_WRAPPER(MPI_Type_create_subarray##_s)(                                                  \
        int ndims, const _cnt sizes[], const _cnt subsizes[], const _cnt starts[], int order,      \
        MPI_Datatype oldtype, MPI_Datatype *newtype)                                               \
    {                                                                                              \
        CONSTRUCT(PMPI_Type_create_subarray##_s(ndims, sizes, subsizes, starts, order, oldtype,    \
                                                newtype),                                          \
                  newtype, .large = _large, .combiner = MPI_COMBINER_SUBARRAY, .count = ndims,     \
                  .sizes = _CA(sizes), .subsizes = _CA(subsizes), .starts = _CA(starts),           \
                  .order = order, .child = oldtype);                                               \
    }
BOTH_FORMS(SUBARRAY)

#define DARRAY(_s, _cnt, _byte, _CA, _BA, _large)                                                  \
    int TJ_WRAPPER(MPI_Type_create_darray##_s)(int size, int rank, int ndims, const _cnt gsizes[], \
                                               const int distribs[], const int dargs[],            \
                                               const int psizes[], int order,                      \
                                               MPI_Datatype oldtype, MPI_Datatype *newtype)        \
    {                                                                                              \
        CONSTRUCT(PMPI_Type_create_darray##_s(size, rank, ndims, gsizes, distribs, dargs, psizes,  \
                                              order, oldtype, newtype),                            \
                  newtype, .large = _large, .combiner = MPI_COMBINER_DARRAY, .count = ndims,       \
                  .nprocs = size, .rank = rank, .sizes = _CA(gsizes),                              \
                  .distribs = TJ_ARRAY_OF_INT(distribs), .dargs = TJ_ARRAY_OF_INT(dargs),          \
                  .psizes = TJ_ARRAY_OF_INT(psizes), .order = order, .child = oldtype);            \
    }
BOTH_FORMS(DARRAY)

#define RESIZED(_s, _cnt, _byte, _CA, _BA, _large)                                                 \
    int TJ_WRAPPER(MPI_Type_create_resized##_s)(MPI_Datatype oldtype, _byte lb, _byte extent,      \
                                                MPI_Datatype * newtype)                            \
    {                                                                                              \
        CONSTRUCT(PMPI_Type_create_resized##_s(oldtype, lb, extent, newtype), newtype,             \
                  .large = _large, .combiner = MPI_COMBINER_RESIZED, .child = oldtype);            \
    }
BOTH_FORMS(RESIZED)
