/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI functions typejit interposes, in one list: the exported entry points are made from it
 * (src/interpose/exports.c) and the symbol test checks the library's dynamic symbols against it
 * and against the definitions in src/interpose/.
 *
 * Each entry X(MPI_Name) has its wrapper defined as `int TJ_WRAPPER(MPI_Name)(...)`, a hidden
 * function with MPI_Name's prototype; the exported MPI_Name is a trampoline in front of it.
 * MPI_Init, MPI_Init_thread and MPI_Finalize are not in the list: they take no handle, decide
 * whether typejit takes part at all, and are exported as they are (TJ_EXPORT).
 *
 * A large-count form (MPI_Send_c, ...) is one more entry here, in TJ_WRAPPERS_LARGE; its
 * wrapper and the int form's are made from one definition and share one implementation that
 * takes 64-bit counts. */
#ifndef TJ_INTERPOSE_WRAPPERS_H
#define TJ_INTERPOSE_WRAPPERS_H

#include <mpi.h>

/* The wrappers that have Fortran entry points too (fortran_*.c; in the MPICH family only those
 * its bindings do not route to the C function). */
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
    _X(MPI_Ibcast)                                                                                 \
    /* collectives packed like the others (coll.c) */                                              \
    _X(MPI_Alltoall)                                                                               \
    _X(MPI_Ialltoall)                                                                              \
    _X(MPI_Neighbor_alltoall)                                                                      \
    _X(MPI_Ineighbor_alltoall)                                                                     \
    _X(MPI_Neighbor_allgather)                                                                     \
    _X(MPI_Ineighbor_allgather)                                                                    \
    _X(MPI_Neighbor_allgatherv)                                                                    \
    _X(MPI_Ineighbor_allgatherv)                                                                   \
    /* reductions, staged exactly (reduce.c) */                                                    \
    _X(MPI_Reduce)                                                                                 \
    _X(MPI_Ireduce)                                                                                \
    _X(MPI_Allreduce)                                                                              \
    _X(MPI_Iallreduce)                                                                             \
    _X(MPI_Reduce_scatter)                                                                         \
    _X(MPI_Ireduce_scatter)                                                                        \
    _X(MPI_Reduce_scatter_block)                                                                   \
    _X(MPI_Ireduce_scatter_block)                                                                  \
    _X(MPI_Scan)                                                                                   \
    _X(MPI_Iscan)                                                                                  \
    _X(MPI_Exscan)                                                                                 \
    _X(MPI_Iexscan)                                                                                \
    _X(MPI_Reduce_local)                                                                           \
    /* external32 (pack.c) */                                                                      \
    _X(MPI_Pack_external)                                                                          \
    _X(MPI_Unpack_external)                                                                        \
    /* one-sided: origin buffers, windows, synchronisations (rma.c) */                             \
    _X(MPI_Put)                                                                                    \
    _X(MPI_Rput)                                                                                   \
    _X(MPI_Get)                                                                                    \
    _X(MPI_Rget)                                                                                   \
    _X(MPI_Accumulate)                                                                             \
    _X(MPI_Raccumulate)                                                                            \
    _X(MPI_Get_accumulate)                                                                         \
    _X(MPI_Rget_accumulate)                                                                        \
    _X(MPI_Fetch_and_op)                                                                           \
    _X(MPI_Compare_and_swap)                                                                       \
    _X(MPI_Win_fence)                                                                              \
    _X(MPI_Win_post)                                                                               \
    _X(MPI_Win_complete)                                                                           \
    _X(MPI_Win_wait)                                                                               \
    _X(MPI_Win_test)                                                                               \
    _X(MPI_Win_lock)                                                                               \
    _X(MPI_Win_unlock)                                                                             \
    _X(MPI_Win_lock_all)                                                                           \
    _X(MPI_Win_unlock_all)                                                                         \
    _X(MPI_Win_sync)                                                                               \
    _X(MPI_Win_flush)                                                                              \
    _X(MPI_Win_flush_all)                                                                          \
    _X(MPI_Win_flush_local)                                                                        \
    _X(MPI_Win_flush_local_all)                                                                    \
    _X(MPI_Win_free)                                                                               \
    _X(MPI_Win_create)                                                                             \
    _X(MPI_Win_attach)                                                                             \
    _X(MPI_Win_get_attr)                                                                           \
    /* MPI-IO (file.c) */                                                                          \
    _X(MPI_File_read)                                                                              \
    _X(MPI_File_read_all)                                                                          \
    _X(MPI_File_read_shared)                                                                       \
    _X(MPI_File_read_ordered)                                                                      \
    _X(MPI_File_read_at)                                                                           \
    _X(MPI_File_read_at_all)                                                                       \
    _X(MPI_File_iread)                                                                             \
    _X(MPI_File_iread_all)                                                                         \
    _X(MPI_File_iread_shared)                                                                      \
    _X(MPI_File_iread_at)                                                                          \
    _X(MPI_File_iread_at_all)                                                                      \
    _X(MPI_File_write)                                                                             \
    _X(MPI_File_write_all)                                                                         \
    _X(MPI_File_write_shared)                                                                      \
    _X(MPI_File_write_ordered)                                                                     \
    _X(MPI_File_write_at)                                                                          \
    _X(MPI_File_write_at_all)                                                                      \
    _X(MPI_File_iwrite)                                                                            \
    _X(MPI_File_iwrite_all)                                                                        \
    _X(MPI_File_iwrite_shared)                                                                     \
    _X(MPI_File_iwrite_at)                                                                         \
    _X(MPI_File_iwrite_at_all)                                                                     \
    _X(MPI_File_read_all_begin)                                                                    \
    _X(MPI_File_read_all_end)                                                                      \
    _X(MPI_File_read_at_all_begin)                                                                 \
    _X(MPI_File_read_at_all_end)                                                                   \
    _X(MPI_File_read_ordered_begin)                                                                \
    _X(MPI_File_read_ordered_end)                                                                  \
    _X(MPI_File_write_all_begin)                                                                   \
    _X(MPI_File_write_all_end)                                                                     \
    _X(MPI_File_write_at_all_begin)                                                                \
    _X(MPI_File_write_at_all_end)                                                                  \
    _X(MPI_File_write_ordered_begin)                                                               \
    _X(MPI_File_write_ordered_end)                                                                 \
    /* refused on device memory (refused.c) */                                                     \
    _X(MPI_Buffer_attach)

/* Wrappers of C-only functions: the MPI_T tool interface has no Fortran binding. */
#define TJ_WRAPPERS_C(_X)                                                                          \
    /* requests (requests.c): a deferred send is started before it is cancelled (C only: a         \
     * process with Fortran bindings defers no send) */                                            \
    _X(MPI_Cancel)                                                                                 \
    /* the tool interface, refused on device memory (refused.c) */                                 \
    _X(MPI_T_cvar_read)                                                                            \
    _X(MPI_T_cvar_write)                                                                           \
    _X(MPI_T_pvar_read)                                                                            \
    _X(MPI_T_pvar_write)                                                                           \
    _X(MPI_T_pvar_readreset)

/* Wrappers of calls only some MPIs have; each list is empty where the MPI lacks them. */
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#include <openmpi/mpiext/pmpiext_pcollreq_c.h>
#define TJ_HAVE_MPIX_INIT 1
#define TJ_WRAPPERS_MPIX_INIT(_X)                                                                  \
    /* Open MPI's persistent collectives (persist.c) */                                            \
    _X(MPIX_Bcast_init)                                                                            \
    _X(MPIX_Gather_init)                                                                           \
    _X(MPIX_Gatherv_init)                                                                          \
    _X(MPIX_Scatter_init)                                                                          \
    _X(MPIX_Scatterv_init)                                                                         \
    _X(MPIX_Allgather_init)                                                                        \
    _X(MPIX_Allgatherv_init)                                                                       \
    _X(MPIX_Alltoall_init)                                                                         \
    _X(MPIX_Alltoallv_init)                                                                        \
    _X(MPIX_Alltoallw_init)                                                                        \
    _X(MPIX_Neighbor_allgather_init)                                                               \
    _X(MPIX_Neighbor_allgatherv_init)                                                              \
    _X(MPIX_Neighbor_alltoall_init)                                                                \
    _X(MPIX_Neighbor_alltoallv_init)                                                               \
    _X(MPIX_Neighbor_alltoallw_init)                                                               \
    _X(MPIX_Reduce_init)                                                                           \
    _X(MPIX_Allreduce_init)                                                                        \
    _X(MPIX_Reduce_scatter_init)                                                                   \
    _X(MPIX_Reduce_scatter_block_init)                                                             \
    _X(MPIX_Scan_init)                                                                             \
    _X(MPIX_Exscan_init)
#else
#define TJ_WRAPPERS_MPIX_INIT(_X)
#endif
/* Open MPI 5.0 has these calls of MPI 4.0 while its mpi.h says MPI 3.1 (not MPI_T events). */
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define TJ_HAVE_MPI4 1
#define TJ_WRAPPERS_MPI4(_X)                                                                       \
    /* MPI 4.0 persistent collectives (persist.c) */                                               \
    _X(MPI_Bcast_init)                                                                             \
    _X(MPI_Gather_init)                                                                            \
    _X(MPI_Gatherv_init)                                                                           \
    _X(MPI_Scatter_init)                                                                           \
    _X(MPI_Scatterv_init)                                                                          \
    _X(MPI_Allgather_init)                                                                         \
    _X(MPI_Allgatherv_init)                                                                        \
    _X(MPI_Alltoall_init)                                                                          \
    _X(MPI_Alltoallv_init)                                                                         \
    _X(MPI_Alltoallw_init)                                                                         \
    _X(MPI_Neighbor_allgather_init)                                                                \
    _X(MPI_Neighbor_allgatherv_init)                                                               \
    _X(MPI_Neighbor_alltoall_init)                                                                 \
    _X(MPI_Neighbor_alltoallv_init)                                                                \
    _X(MPI_Neighbor_alltoallw_init)                                                                \
    _X(MPI_Reduce_init)                                                                            \
    _X(MPI_Allreduce_init)                                                                         \
    _X(MPI_Reduce_scatter_init)                                                                    \
    _X(MPI_Reduce_scatter_block_init)                                                              \
    _X(MPI_Scan_init)                                                                              \
    _X(MPI_Exscan_init)                                                                            \
    /* MPI 4.0 calls refused on device memory (refused.c) */                                       \
    _X(MPI_Isendrecv)                                                                              \
    _X(MPI_Isendrecv_replace)                                                                      \
    _X(MPI_Psend_init)                                                                             \
    _X(MPI_Precv_init)
#else
#define TJ_WRAPPERS_MPI4(_X)
#endif
#if MPI_VERSION >= 4
#define TJ_HAVE_MPI4_T_EVENTS 1
#define TJ_WRAPPERS_MPI4_T_EVENTS(_X)                                                              \
    /* MPI 4.0 MPI_T events (refused.c) */                                                         \
    _X(MPI_T_event_read)                                                                           \
    _X(MPI_T_event_copy)
#else
#define TJ_WRAPPERS_MPI4_T_EVENTS(_X)
#endif
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define TJ_HAVE_MPI41 1
#define TJ_WRAPPERS_MPI41(_X)                                                                      \
    /* MPI 4.1 buffer attachment (refused.c) */                                                    \
    _X(MPI_Comm_attach_buffer)                                                                     \
    _X(MPI_Session_attach_buffer)                                                                  \
    _X(MPI_Comm_attach_buffer_c)                                                                   \
    _X(MPI_Session_attach_buffer_c)
#else
#define TJ_WRAPPERS_MPI41(_X)
#endif

/* The MPI-4 large-count forms (`_c`: MPI_Count counts, MPI_Aint or MPI_Count displacements) of
 * every wrapped call that has one, where the MPI has them (MPICH 4 and 5, the standard ABI; not
 * Open MPI 5.0); those of MPI 4.1's calls are in TJ_WRAPPERS_MPI41. Each is made from its int
 * form's definition and shares its implementation. */
#if MPI_VERSION >= 4
#define TJ_HAVE_LARGE 1
#define TJ_WRAPPERS_LARGE(_X)                                                                      \
    /* datatypes (constructors.c) */                                                               \
    _X(MPI_Type_contiguous_c)                                                                      \
    _X(MPI_Type_vector_c)                                                                          \
    _X(MPI_Type_create_hvector_c)                                                                  \
    _X(MPI_Type_indexed_c)                                                                         \
    _X(MPI_Type_create_hindexed_c)                                                                 \
    _X(MPI_Type_create_indexed_block_c)                                                            \
    _X(MPI_Type_create_hindexed_block_c)                                                           \
    _X(MPI_Type_create_struct_c)                                                                   \
    _X(MPI_Type_create_subarray_c)                                                                 \
    _X(MPI_Type_create_darray_c)                                                                   \
    _X(MPI_Type_create_resized_c)                                                                  \
    /* pack and unpack (pack.c) */                                                                 \
    _X(MPI_Pack_c)                                                                                 \
    _X(MPI_Unpack_c)                                                                               \
    _X(MPI_Pack_size_c)                                                                            \
    /* point to point (p2p.c) */                                                                   \
    _X(MPI_Send_c)                                                                                 \
    _X(MPI_Ssend_c)                                                                                \
    _X(MPI_Rsend_c)                                                                                \
    _X(MPI_Bsend_c)                                                                                \
    _X(MPI_Isend_c)                                                                                \
    _X(MPI_Issend_c)                                                                               \
    _X(MPI_Irsend_c)                                                                               \
    _X(MPI_Ibsend_c)                                                                               \
    _X(MPI_Send_init_c)                                                                            \
    _X(MPI_Ssend_init_c)                                                                           \
    _X(MPI_Rsend_init_c)                                                                           \
    _X(MPI_Bsend_init_c)                                                                           \
    _X(MPI_Recv_c)                                                                                 \
    _X(MPI_Irecv_c)                                                                                \
    _X(MPI_Recv_init_c)                                                                            \
    _X(MPI_Sendrecv_c)                                                                             \
    _X(MPI_Sendrecv_replace_c)                                                                     \
    _X(MPI_Mrecv_c)                                                                                \
    _X(MPI_Imrecv_c)                                                                               \
    /* collectives (coll.c) */                                                                     \
    _X(MPI_Alltoall_c)                                                                             \
    _X(MPI_Ialltoall_c)                                                                            \
    _X(MPI_Alltoallv_c)                                                                            \
    _X(MPI_Ialltoallv_c)                                                                           \
    _X(MPI_Alltoallw_c)                                                                            \
    _X(MPI_Ialltoallw_c)                                                                           \
    _X(MPI_Neighbor_alltoall_c)                                                                    \
    _X(MPI_Ineighbor_alltoall_c)                                                                   \
    _X(MPI_Neighbor_alltoallv_c)                                                                   \
    _X(MPI_Ineighbor_alltoallv_c)                                                                  \
    _X(MPI_Neighbor_alltoallw_c)                                                                   \
    _X(MPI_Ineighbor_alltoallw_c)                                                                  \
    _X(MPI_Neighbor_allgather_c)                                                                   \
    _X(MPI_Ineighbor_allgather_c)                                                                  \
    _X(MPI_Neighbor_allgatherv_c)                                                                  \
    _X(MPI_Ineighbor_allgatherv_c)                                                                 \
    _X(MPI_Allgather_c)                                                                            \
    _X(MPI_Iallgather_c)                                                                           \
    _X(MPI_Allgatherv_c)                                                                           \
    _X(MPI_Iallgatherv_c)                                                                          \
    _X(MPI_Gather_c)                                                                               \
    _X(MPI_Igather_c)                                                                              \
    _X(MPI_Gatherv_c)                                                                              \
    _X(MPI_Igatherv_c)                                                                             \
    _X(MPI_Scatter_c)                                                                              \
    _X(MPI_Iscatter_c)                                                                             \
    _X(MPI_Scatterv_c)                                                                             \
    _X(MPI_Iscatterv_c)                                                                            \
    _X(MPI_Bcast_c)                                                                                \
    _X(MPI_Ibcast_c)                                                                               \
    /* reductions (reduce.c) */                                                                    \
    _X(MPI_Reduce_c)                                                                               \
    _X(MPI_Ireduce_c)                                                                              \
    _X(MPI_Allreduce_c)                                                                            \
    _X(MPI_Iallreduce_c)                                                                           \
    _X(MPI_Reduce_scatter_c)                                                                       \
    _X(MPI_Ireduce_scatter_c)                                                                      \
    _X(MPI_Reduce_scatter_block_c)                                                                 \
    _X(MPI_Ireduce_scatter_block_c)                                                                \
    _X(MPI_Scan_c)                                                                                 \
    _X(MPI_Iscan_c)                                                                                \
    _X(MPI_Exscan_c)                                                                               \
    _X(MPI_Iexscan_c)                                                                              \
    _X(MPI_Reduce_local_c)                                                                         \
    /* external32 (pack.c) */                                                                      \
    _X(MPI_Pack_external_c)                                                                        \
    _X(MPI_Unpack_external_c)                                                                      \
    /* one-sided (rma.c) */                                                                        \
    _X(MPI_Put_c)                                                                                  \
    _X(MPI_Rput_c)                                                                                 \
    _X(MPI_Get_c)                                                                                  \
    _X(MPI_Rget_c)                                                                                 \
    _X(MPI_Accumulate_c)                                                                           \
    _X(MPI_Raccumulate_c)                                                                          \
    _X(MPI_Get_accumulate_c)                                                                       \
    _X(MPI_Rget_accumulate_c)                                                                      \
    _X(MPI_Win_create_c)                                                                           \
    /* MPI-IO (file.c) */                                                                          \
    _X(MPI_File_read_c)                                                                            \
    _X(MPI_File_read_all_c)                                                                        \
    _X(MPI_File_read_shared_c)                                                                     \
    _X(MPI_File_read_ordered_c)                                                                    \
    _X(MPI_File_read_at_c)                                                                         \
    _X(MPI_File_read_at_all_c)                                                                     \
    _X(MPI_File_iread_c)                                                                           \
    _X(MPI_File_iread_all_c)                                                                       \
    _X(MPI_File_iread_shared_c)                                                                    \
    _X(MPI_File_iread_at_c)                                                                        \
    _X(MPI_File_iread_at_all_c)                                                                    \
    _X(MPI_File_write_c)                                                                           \
    _X(MPI_File_write_all_c)                                                                       \
    _X(MPI_File_write_shared_c)                                                                    \
    _X(MPI_File_write_ordered_c)                                                                   \
    _X(MPI_File_write_at_c)                                                                        \
    _X(MPI_File_write_at_all_c)                                                                    \
    _X(MPI_File_iwrite_c)                                                                          \
    _X(MPI_File_iwrite_all_c)                                                                      \
    _X(MPI_File_iwrite_shared_c)                                                                   \
    _X(MPI_File_iwrite_at_c)                                                                       \
    _X(MPI_File_iwrite_at_all_c)                                                                   \
    _X(MPI_File_read_all_begin_c)                                                                  \
    _X(MPI_File_read_at_all_begin_c)                                                               \
    _X(MPI_File_read_ordered_begin_c)                                                              \
    _X(MPI_File_write_all_begin_c)                                                                 \
    _X(MPI_File_write_at_all_begin_c)                                                              \
    _X(MPI_File_write_ordered_begin_c)                                                             \
    /* persistent collectives (persist.c) */                                                       \
    _X(MPI_Bcast_init_c)                                                                           \
    _X(MPI_Gather_init_c)                                                                          \
    _X(MPI_Gatherv_init_c)                                                                         \
    _X(MPI_Scatter_init_c)                                                                         \
    _X(MPI_Scatterv_init_c)                                                                        \
    _X(MPI_Allgather_init_c)                                                                       \
    _X(MPI_Allgatherv_init_c)                                                                      \
    _X(MPI_Alltoall_init_c)                                                                        \
    _X(MPI_Alltoallv_init_c)                                                                       \
    _X(MPI_Alltoallw_init_c)                                                                       \
    _X(MPI_Neighbor_allgather_init_c)                                                              \
    _X(MPI_Neighbor_allgatherv_init_c)                                                             \
    _X(MPI_Neighbor_alltoall_init_c)                                                               \
    _X(MPI_Neighbor_alltoallv_init_c)                                                              \
    _X(MPI_Neighbor_alltoallw_init_c)                                                              \
    _X(MPI_Reduce_init_c)                                                                          \
    _X(MPI_Allreduce_init_c)                                                                       \
    _X(MPI_Reduce_scatter_init_c)                                                                  \
    _X(MPI_Reduce_scatter_block_init_c)                                                            \
    _X(MPI_Scan_init_c)                                                                            \
    _X(MPI_Exscan_init_c)                                                                          \
    /* refused on device memory (refused.c) */                                                     \
    _X(MPI_Buffer_attach_c)                                                                        \
    _X(MPI_Isendrecv_c)                                                                            \
    _X(MPI_Isendrecv_replace_c)
#else
#define TJ_HAVE_LARGE 0
#define TJ_WRAPPERS_LARGE(_X)
#endif

/* Its arguments where the MPI has the large-count forms, nothing elsewhere: the `_c` half of a
 * pair of wrappers made from one definition. */
#if TJ_HAVE_LARGE
#define TJ_IF_LARGE(...) __VA_ARGS__
#else
#define TJ_IF_LARGE(...)
#endif

/* Every wrapper this build defines. */
#define TJ_ALL_WRAPPERS(_X)                                                                        \
    TJ_WRAPPERS(_X)                                                                                \
    TJ_WRAPPERS_C(_X)                                                                              \
    TJ_WRAPPERS_MPIX_INIT(_X)                                                                      \
    TJ_WRAPPERS_MPI4(_X) TJ_WRAPPERS_MPI4_T_EVENTS(_X) TJ_WRAPPERS_MPI41(_X) TJ_WRAPPERS_LARGE(_X)

/* ---- the send queue at every entry point ----------------------------------------------------
 * While sends wait in the send queue (calls/send_queue.h), every exported entry point first
 * hands them on: a call that may block inside the system MPI (blocking point to point, Wait and
 * Probe, collectives, communicator and window creation, window synchronisation, file opening
 * and collective I/O) starts them all, waiting for their packs, so that a program that completes
 * without typejit completes with it; any other call starts those whose packs have completed.
 * Every call is taken to block unless it is named here; TJ_BLOCKING_OF(MPI_X) is 0 or 1. */
#define TJ_NONBLOCKING_MPI_Type_commit                  ~, 0
#define TJ_NONBLOCKING_MPI_Type_free                    ~, 0
#define TJ_NONBLOCKING_MPI_Type_dup                     ~, 0
#define TJ_NONBLOCKING_MPI_Type_contiguous              ~, 0
#define TJ_NONBLOCKING_MPI_Type_contiguous_c            ~, 0
#define TJ_NONBLOCKING_MPI_Type_vector                  ~, 0
#define TJ_NONBLOCKING_MPI_Type_vector_c                ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_hvector          ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_hvector_c        ~, 0
#define TJ_NONBLOCKING_MPI_Type_indexed                 ~, 0
#define TJ_NONBLOCKING_MPI_Type_indexed_c               ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_hindexed         ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_hindexed_c       ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_indexed_block    ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_indexed_block_c  ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_hindexed_block   ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_hindexed_block_c ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_struct           ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_struct_c         ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_subarray         ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_subarray_c       ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_darray           ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_darray_c         ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_resized          ~, 0
#define TJ_NONBLOCKING_MPI_Type_create_resized_c        ~, 0
#define TJ_NONBLOCKING_MPI_Pack                         ~, 0
#define TJ_NONBLOCKING_MPI_Pack_c                       ~, 0
#define TJ_NONBLOCKING_MPI_Unpack                       ~, 0
#define TJ_NONBLOCKING_MPI_Unpack_c                     ~, 0
#define TJ_NONBLOCKING_MPI_Pack_size                    ~, 0
#define TJ_NONBLOCKING_MPI_Pack_size_c                  ~, 0
#define TJ_NONBLOCKING_MPI_Pack_external                ~, 0
#define TJ_NONBLOCKING_MPI_Pack_external_c              ~, 0
#define TJ_NONBLOCKING_MPI_Unpack_external              ~, 0
#define TJ_NONBLOCKING_MPI_Unpack_external_c            ~, 0
#define TJ_NONBLOCKING_MPI_Isend                        ~, 0
#define TJ_NONBLOCKING_MPI_Isend_c                      ~, 0
#define TJ_NONBLOCKING_MPI_Issend                       ~, 0
#define TJ_NONBLOCKING_MPI_Issend_c                     ~, 0
#define TJ_NONBLOCKING_MPI_Irsend                       ~, 0
#define TJ_NONBLOCKING_MPI_Irsend_c                     ~, 0
#define TJ_NONBLOCKING_MPI_Ibsend                       ~, 0
#define TJ_NONBLOCKING_MPI_Ibsend_c                     ~, 0
#define TJ_NONBLOCKING_MPI_Send_init                    ~, 0
#define TJ_NONBLOCKING_MPI_Send_init_c                  ~, 0
#define TJ_NONBLOCKING_MPI_Ssend_init                   ~, 0
#define TJ_NONBLOCKING_MPI_Ssend_init_c                 ~, 0
#define TJ_NONBLOCKING_MPI_Rsend_init                   ~, 0
#define TJ_NONBLOCKING_MPI_Rsend_init_c                 ~, 0
#define TJ_NONBLOCKING_MPI_Bsend_init                   ~, 0
#define TJ_NONBLOCKING_MPI_Bsend_init_c                 ~, 0
#define TJ_NONBLOCKING_MPI_Irecv                        ~, 0
#define TJ_NONBLOCKING_MPI_Irecv_c                      ~, 0
#define TJ_NONBLOCKING_MPI_Recv_init                    ~, 0
#define TJ_NONBLOCKING_MPI_Recv_init_c                  ~, 0
#define TJ_NONBLOCKING_MPI_Imrecv                       ~, 0
#define TJ_NONBLOCKING_MPI_Imrecv_c                     ~, 0
#define TJ_NONBLOCKING_MPI_Test                         ~, 0
#define TJ_NONBLOCKING_MPI_Testall                      ~, 0
#define TJ_NONBLOCKING_MPI_Testany                      ~, 0
#define TJ_NONBLOCKING_MPI_Testsome                     ~, 0
#define TJ_NONBLOCKING_MPI_Start                        ~, 0
#define TJ_NONBLOCKING_MPI_Startall                     ~, 0
#define TJ_NONBLOCKING_MPI_Request_free                 ~, 0
#define TJ_NONBLOCKING_MPI_Request_get_status           ~, 0
#define TJ_NONBLOCKING_MPI_Cancel                       ~, 0
#define TJ_NONBLOCKING_MPI_Iprobe                       ~, 0
#define TJ_NONBLOCKING_MPI_Improbe                      ~, 0
#define TJ_NONBLOCKING_MPI_Iallgather                   ~, 0
#define TJ_NONBLOCKING_MPI_Iallgather_c                 ~, 0
#define TJ_NONBLOCKING_MPI_Iallgatherv                  ~, 0
#define TJ_NONBLOCKING_MPI_Iallgatherv_c                ~, 0
#define TJ_NONBLOCKING_MPI_Iallreduce                   ~, 0
#define TJ_NONBLOCKING_MPI_Iallreduce_c                 ~, 0
#define TJ_NONBLOCKING_MPI_Ialltoall                    ~, 0
#define TJ_NONBLOCKING_MPI_Ialltoall_c                  ~, 0
#define TJ_NONBLOCKING_MPI_Ialltoallv                   ~, 0
#define TJ_NONBLOCKING_MPI_Ialltoallv_c                 ~, 0
#define TJ_NONBLOCKING_MPI_Ialltoallw                   ~, 0
#define TJ_NONBLOCKING_MPI_Ialltoallw_c                 ~, 0
#define TJ_NONBLOCKING_MPI_Ibcast                       ~, 0
#define TJ_NONBLOCKING_MPI_Ibcast_c                     ~, 0
#define TJ_NONBLOCKING_MPI_Iexscan                      ~, 0
#define TJ_NONBLOCKING_MPI_Iexscan_c                    ~, 0
#define TJ_NONBLOCKING_MPI_Igather                      ~, 0
#define TJ_NONBLOCKING_MPI_Igather_c                    ~, 0
#define TJ_NONBLOCKING_MPI_Igatherv                     ~, 0
#define TJ_NONBLOCKING_MPI_Igatherv_c                   ~, 0
#define TJ_NONBLOCKING_MPI_Ineighbor_allgather          ~, 0
#define TJ_NONBLOCKING_MPI_Ineighbor_allgather_c        ~, 0
#define TJ_NONBLOCKING_MPI_Ineighbor_allgatherv         ~, 0
#define TJ_NONBLOCKING_MPI_Ineighbor_allgatherv_c       ~, 0
#define TJ_NONBLOCKING_MPI_Ineighbor_alltoall           ~, 0
#define TJ_NONBLOCKING_MPI_Ineighbor_alltoall_c         ~, 0
#define TJ_NONBLOCKING_MPI_Ineighbor_alltoallv          ~, 0
#define TJ_NONBLOCKING_MPI_Ineighbor_alltoallv_c        ~, 0
#define TJ_NONBLOCKING_MPI_Ineighbor_alltoallw          ~, 0
#define TJ_NONBLOCKING_MPI_Ineighbor_alltoallw_c        ~, 0
#define TJ_NONBLOCKING_MPI_Ireduce                      ~, 0
#define TJ_NONBLOCKING_MPI_Ireduce_c                    ~, 0
#define TJ_NONBLOCKING_MPI_Ireduce_scatter              ~, 0
#define TJ_NONBLOCKING_MPI_Ireduce_scatter_c            ~, 0
#define TJ_NONBLOCKING_MPI_Ireduce_scatter_block        ~, 0
#define TJ_NONBLOCKING_MPI_Ireduce_scatter_block_c      ~, 0
#define TJ_NONBLOCKING_MPI_Iscan                        ~, 0
#define TJ_NONBLOCKING_MPI_Iscan_c                      ~, 0
#define TJ_NONBLOCKING_MPI_Iscatter                     ~, 0
#define TJ_NONBLOCKING_MPI_Iscatter_c                   ~, 0
#define TJ_NONBLOCKING_MPI_Iscatterv                    ~, 0
#define TJ_NONBLOCKING_MPI_Iscatterv_c                  ~, 0
#define TJ_NONBLOCKING_MPI_Reduce_local                 ~, 0
#define TJ_NONBLOCKING_MPI_Reduce_local_c               ~, 0
#define TJ_NONBLOCKING_MPI_Put                          ~, 0
#define TJ_NONBLOCKING_MPI_Put_c                        ~, 0
#define TJ_NONBLOCKING_MPI_Get                          ~, 0
#define TJ_NONBLOCKING_MPI_Get_c                        ~, 0
#define TJ_NONBLOCKING_MPI_Accumulate                   ~, 0
#define TJ_NONBLOCKING_MPI_Accumulate_c                 ~, 0
#define TJ_NONBLOCKING_MPI_Get_accumulate               ~, 0
#define TJ_NONBLOCKING_MPI_Get_accumulate_c             ~, 0
#define TJ_NONBLOCKING_MPI_Fetch_and_op                 ~, 0
#define TJ_NONBLOCKING_MPI_Compare_and_swap             ~, 0
#define TJ_NONBLOCKING_MPI_Rput                         ~, 0
#define TJ_NONBLOCKING_MPI_Rput_c                       ~, 0
#define TJ_NONBLOCKING_MPI_Rget                         ~, 0
#define TJ_NONBLOCKING_MPI_Rget_c                       ~, 0
#define TJ_NONBLOCKING_MPI_Raccumulate                  ~, 0
#define TJ_NONBLOCKING_MPI_Raccumulate_c                ~, 0
#define TJ_NONBLOCKING_MPI_Rget_accumulate              ~, 0
#define TJ_NONBLOCKING_MPI_Rget_accumulate_c            ~, 0
#define TJ_NONBLOCKING_MPI_Win_test                     ~, 0
#define TJ_NONBLOCKING_MPI_Win_get_attr                 ~, 0
#define TJ_NONBLOCKING_MPI_Win_attach                   ~, 0
#define TJ_NONBLOCKING_MPI_File_iread                   ~, 0
#define TJ_NONBLOCKING_MPI_File_iread_c                 ~, 0
#define TJ_NONBLOCKING_MPI_File_iread_all               ~, 0
#define TJ_NONBLOCKING_MPI_File_iread_all_c             ~, 0
#define TJ_NONBLOCKING_MPI_File_iread_at                ~, 0
#define TJ_NONBLOCKING_MPI_File_iread_at_c              ~, 0
#define TJ_NONBLOCKING_MPI_File_iread_at_all            ~, 0
#define TJ_NONBLOCKING_MPI_File_iread_at_all_c          ~, 0
#define TJ_NONBLOCKING_MPI_File_iread_shared            ~, 0
#define TJ_NONBLOCKING_MPI_File_iread_shared_c          ~, 0
#define TJ_NONBLOCKING_MPI_File_iwrite                  ~, 0
#define TJ_NONBLOCKING_MPI_File_iwrite_c                ~, 0
#define TJ_NONBLOCKING_MPI_File_iwrite_all              ~, 0
#define TJ_NONBLOCKING_MPI_File_iwrite_all_c            ~, 0
#define TJ_NONBLOCKING_MPI_File_iwrite_at               ~, 0
#define TJ_NONBLOCKING_MPI_File_iwrite_at_c             ~, 0
#define TJ_NONBLOCKING_MPI_File_iwrite_at_all           ~, 0
#define TJ_NONBLOCKING_MPI_File_iwrite_at_all_c         ~, 0
#define TJ_NONBLOCKING_MPI_File_iwrite_shared           ~, 0
#define TJ_NONBLOCKING_MPI_File_iwrite_shared_c         ~, 0
#define TJ_NONBLOCKING_MPI_Buffer_attach                ~, 0
#define TJ_NONBLOCKING_MPI_Buffer_attach_c              ~, 0
#define TJ_NONBLOCKING_MPI_Comm_attach_buffer           ~, 0
#define TJ_NONBLOCKING_MPI_Comm_attach_buffer_c         ~, 0
#define TJ_NONBLOCKING_MPI_Session_attach_buffer        ~, 0
#define TJ_NONBLOCKING_MPI_Session_attach_buffer_c      ~, 0
#define TJ_NONBLOCKING_MPI_T_cvar_read                  ~, 0
#define TJ_NONBLOCKING_MPI_T_cvar_write                 ~, 0
#define TJ_NONBLOCKING_MPI_T_pvar_read                  ~, 0
#define TJ_NONBLOCKING_MPI_T_pvar_write                 ~, 0
#define TJ_NONBLOCKING_MPI_T_pvar_readreset             ~, 0
#define TJ_NONBLOCKING_MPI_T_event_read                 ~, 0
#define TJ_NONBLOCKING_MPI_T_event_copy                 ~, 0
#define TJ_SECOND(_a, _b, ...)                          _b
#define TJ_SECOND_X(...)                                TJ_SECOND(__VA_ARGS__)
#define TJ_BLOCKING_OF(_name)                           TJ_SECOND_X(TJ_NONBLOCKING_##_name, 1, ~)

/* MPI functions typejit does not wrap that may block, or that are collectives (which must
 * reach the system MPI after a queued non-blocking collective of the same communicator):
 * exported only to start the queued sends first (or, for the probes that do not block, those
 * whose packs have completed), then straight to the system MPI. */
#define TJ_FLUSHED_CALLS(_X)                                                                       \
    _X(MPI_Barrier)                                                                                \
    _X(MPI_Ibarrier)                                                                               \
    _X(MPI_Probe)                                                                                  \
    _X(MPI_Mprobe)                                                                                 \
    _X(MPI_Iprobe)                                                                                 \
    _X(MPI_Improbe)                                                                                \
    _X(MPI_Comm_free)                                                                              \
    _X(MPI_Comm_disconnect)                                                                        \
    _X(MPI_Comm_dup)                                                                               \
    _X(MPI_Comm_dup_with_info)                                                                     \
    _X(MPI_Comm_idup)                                                                              \
    _X(MPI_Comm_split)                                                                             \
    _X(MPI_Comm_split_type)                                                                        \
    _X(MPI_Comm_create)                                                                            \
    _X(MPI_Comm_create_group)                                                                      \
    _X(MPI_Intercomm_create)                                                                       \
    _X(MPI_Intercomm_merge)                                                                        \
    _X(MPI_Cart_create)                                                                            \
    _X(MPI_Cart_sub)                                                                               \
    _X(MPI_Graph_create)                                                                           \
    _X(MPI_Dist_graph_create)                                                                      \
    _X(MPI_Dist_graph_create_adjacent)                                                             \
    _X(MPI_Win_allocate)                                                                           \
    _X(MPI_Win_allocate_shared)                                                                    \
    _X(MPI_Win_create_dynamic)                                                                     \
    _X(MPI_Win_start)                                                                              \
    _X(MPI_Buffer_detach)                                                                          \
    _X(MPI_File_open)                                                                              \
    _X(MPI_File_close)                                                                             \
    _X(MPI_File_set_view)                                                                          \
    _X(MPI_File_set_size)                                                                          \
    _X(MPI_File_preallocate)                                                                       \
    _X(MPI_File_sync)                                                                              \
    _X(MPI_File_set_atomicity)                                                                     \
    _X(MPI_File_seek_shared)                                                                       \
    _X(MPI_Comm_accept)                                                                            \
    _X(MPI_Comm_connect)                                                                           \
    _X(MPI_Comm_spawn)                                                                             \
    _X(MPI_Comm_spawn_multiple)                                                                    \
    _X(MPI_Comm_join)

/* The hidden function that implements the wrapper of MPI function @p _name. */
#define TJ_WRAPPER(_name) tj_wrap_##_name

/* A symbol of the library's interface, exported whatever the MPI's header says. */
#define TJ_EXPORT __attribute__((visibility("default")))

#define TJ_DECLARE_WRAPPER(_name) extern __typeof__(_name) TJ_WRAPPER(_name);
TJ_ALL_WRAPPERS(TJ_DECLARE_WRAPPER)
#undef TJ_DECLARE_WRAPPER

#endif /* TJ_INTERPOSE_WRAPPERS_H */
