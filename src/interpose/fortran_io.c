/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points of MPI-IO's reads and writes (file.c), in Open MPI builds: the MPICH
 * family's bindings of these calls, which all take a buffer, reach the C wrappers (fortran.c
 * says how each family's bindings reach C). One line an entry point, its arguments' kinds as
 * fortran_binding.h describes them. */
#include "interpose/fortran_binding.h"

#if defined(OPEN_MPI)

/* MPI_File_@p _x (Fortran names file_@p _x and FILE_@p _X). */
#define FILE_CALL(_x, _X, _kinds) FORTRAN_CALL(MPI_File_##_x, file_##_x, FILE_##_X, _kinds)

/* The accesses of one direction, @p _dir read or write (@p _DIR in capitals): the blocking ones
 * at the individual file pointer, all, at the shared pointer, ordered, and at an explicit offset,
 * with a status; the non-blocking ones, with a request; the beginnings and ends of the split
 * collectives. */
#define FILE_ACCESSES(_dir, _DIR)                                                                  \
    FILE_CALL(_dir, _DIR, (FILE, BUF, INT, TYPE, STATUS))                                          \
    FILE_CALL(_dir##_all, _DIR##_ALL, (FILE, BUF, INT, TYPE, STATUS))                              \
    FILE_CALL(_dir##_shared, _DIR##_SHARED, (FILE, BUF, INT, TYPE, STATUS))                        \
    FILE_CALL(_dir##_ordered, _DIR##_ORDERED, (FILE, BUF, INT, TYPE, STATUS))                      \
    FILE_CALL(_dir##_at, _DIR##_AT, (FILE, OFFSET, BUF, INT, TYPE, STATUS))                        \
    FILE_CALL(_dir##_at_all, _DIR##_AT_ALL, (FILE, OFFSET, BUF, INT, TYPE, STATUS))                \
    FILE_CALL(i##_dir, I##_DIR, (FILE, BUF, INT, TYPE, REQUEST_OUT))                               \
    FILE_CALL(i##_dir##_all, I##_DIR##_ALL, (FILE, BUF, INT, TYPE, REQUEST_OUT))                   \
    FILE_CALL(i##_dir##_shared, I##_DIR##_SHARED, (FILE, BUF, INT, TYPE, REQUEST_OUT))             \
    FILE_CALL(i##_dir##_at, I##_DIR##_AT, (FILE, OFFSET, BUF, INT, TYPE, REQUEST_OUT))             \
    FILE_CALL(i##_dir##_at_all, I##_DIR##_AT_ALL, (FILE, OFFSET, BUF, INT, TYPE, REQUEST_OUT))     \
    FILE_CALL(_dir##_all_begin, _DIR##_ALL_BEGIN, (FILE, BUF, INT, TYPE))                          \
    FILE_CALL(_dir##_ordered_begin, _DIR##_ORDERED_BEGIN, (FILE, BUF, INT, TYPE))                  \
    FILE_CALL(_dir##_at_all_begin, _DIR##_AT_ALL_BEGIN, (FILE, OFFSET, BUF, INT, TYPE))            \
    FILE_CALL(_dir##_all_end, _DIR##_ALL_END, (FILE, BUF, STATUS))                                 \
    FILE_CALL(_dir##_ordered_end, _DIR##_ORDERED_END, (FILE, BUF, STATUS))                         \
    FILE_CALL(_dir##_at_all_end, _DIR##_AT_ALL_END, (FILE, BUF, STATUS))

FILE_ACCESSES(read, READ)
FILE_ACCESSES(write, WRITE)

#endif /* OPEN_MPI */
