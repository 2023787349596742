/* The MPI functions typejit interposes, in one list: the exported entry points are made from it
 * (src/interpose/exports.c) and the symbol test checks the library's dynamic symbols against it
 * and against the definitions in src/interpose/.
 *
 * Each entry X(MPI_Name) has its wrapper defined as `int TJ_WRAPPER(MPI_Name)(...)`, a hidden
 * function with MPI_Name's prototype; the exported MPI_Name is a trampoline in front of it.
 * MPI_Init, MPI_Init_thread and MPI_Finalize are not in the list: they take no handle, decide
 * whether typejit takes part at all, and are exported as they are (TJ_EXPORT).
 *
 * A large-count form (MPI_Send_c, ...) is one more entry here with its own wrapper. */
#ifndef TJ_INTERPOSE_WRAPPERS_H
#define TJ_INTERPOSE_WRAPPERS_H

#include <mpi.h>

#define TJ_WRAPPERS(_X)                                                                            \
    /* datatypes (types.c, constructors.c) */                                                      \
    _X(MPI_Type_commit)                                                                            \
    _X(MPI_Type_free)                                                                              \
    _X(MPI_Type_dup)                                                                               \
    _X(MPI_Type_contiguous)                                                                        \
    _X(MPI_Type_vector)                                                                            \
    _X(MPI_Type_create_hvector)                                                                    \
    _X(MPI_Type_indexed)                                                                           \
    _X(MPI_Type_create_hindexed)                                                                   \
    _X(MPI_Type_create_indexed_block)                                                              \
    _X(MPI_Type_create_hindexed_block)                                                             \
    _X(MPI_Type_create_struct)                                                                     \
    _X(MPI_Type_create_subarray)                                                                   \
    _X(MPI_Type_create_darray)                                                                     \
    _X(MPI_Type_create_resized)                                                                    \
    /* pack and unpack (pack.c) */                                                                 \
    _X(MPI_Pack)                                                                                   \
    _X(MPI_Unpack)                                                                                 \
    _X(MPI_Pack_size)                                                                              \
    /* point to point (p2p.c) */                                                                   \
    _X(MPI_Send)                                                                                   \
    _X(MPI_Ssend)                                                                                  \
    _X(MPI_Rsend)                                                                                  \
    _X(MPI_Bsend)                                                                                  \
    _X(MPI_Isend)                                                                                  \
    _X(MPI_Issend)                                                                                 \
    _X(MPI_Irsend)                                                                                 \
    _X(MPI_Ibsend)                                                                                 \
    _X(MPI_Send_init)                                                                              \
    _X(MPI_Ssend_init)                                                                             \
    _X(MPI_Rsend_init)                                                                             \
    _X(MPI_Bsend_init)                                                                             \
    _X(MPI_Recv)                                                                                   \
    _X(MPI_Irecv)                                                                                  \
    _X(MPI_Recv_init)                                                                              \
    _X(MPI_Sendrecv)                                                                               \
    _X(MPI_Sendrecv_replace)                                                                       \
    _X(MPI_Mrecv)                                                                                  \
    _X(MPI_Imrecv)                                                                                 \
    /* requests (requests.c) */                                                                    \
    _X(MPI_Wait)                                                                                   \
    _X(MPI_Test)                                                                                   \
    _X(MPI_Waitall)                                                                                \
    _X(MPI_Testall)                                                                                \
    _X(MPI_Waitany)                                                                                \
    _X(MPI_Testany)                                                                                \
    _X(MPI_Waitsome)                                                                               \
    _X(MPI_Testsome)                                                                               \
    _X(MPI_Start)                                                                                  \
    _X(MPI_Startall)                                                                               \
    _X(MPI_Request_free)                                                                           \
    _X(MPI_Request_get_status)                                                                     \
    /* collectives (coll.c) */                                                                     \
    _X(MPI_Alltoallv)                                                                              \
    _X(MPI_Ialltoallv)                                                                             \
    _X(MPI_Alltoallw)                                                                              \
    _X(MPI_Ialltoallw)                                                                             \
    _X(MPI_Neighbor_alltoallv)                                                                     \
    _X(MPI_Ineighbor_alltoallv)                                                                    \
    _X(MPI_Neighbor_alltoallw)                                                                     \
    _X(MPI_Ineighbor_alltoallw)                                                                    \
    _X(MPI_Allgather)                                                                              \
    _X(MPI_Iallgather)                                                                             \
    _X(MPI_Allgatherv)                                                                             \
    _X(MPI_Iallgatherv)                                                                            \
    _X(MPI_Gather)                                                                                 \
    _X(MPI_Igather)                                                                                \
    _X(MPI_Gatherv)                                                                                \
    _X(MPI_Igatherv)                                                                               \
    _X(MPI_Scatter)                                                                                \
    _X(MPI_Iscatter)                                                                               \
    _X(MPI_Scatterv)                                                                               \
    _X(MPI_Iscatterv)                                                                              \
    _X(MPI_Bcast)                                                                                  \
    _X(MPI_Ibcast)

/* The hidden function that implements the wrapper of MPI function @p _name. */
#define TJ_WRAPPER(_name) tj_wrap_##_name

/* A symbol of the library's interface, exported whatever the MPI's header says. */
#define TJ_EXPORT __attribute__((visibility("default")))

#define TJ_DECLARE_WRAPPER(_name) extern __typeof__(_name) TJ_WRAPPER(_name);
TJ_WRAPPERS(TJ_DECLARE_WRAPPER)
#undef TJ_DECLARE_WRAPPER

#endif /* TJ_INTERPOSE_WRAPPERS_H */
