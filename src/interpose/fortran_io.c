/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points of MPI-IO's reads and writes (file.c), in Open MPI builds: the MPICH
 * family's bindings of these calls, which all take a buffer, reach the C wrappers (fortran.c
 * says how each family's bindings reach C). Buffers may be MPI_BOTTOM; offsets are
 * INTEGER(KIND=MPI_OFFSET_KIND). */
#include "interpose/fortran_binding.h"

#if defined(OPEN_MPI)

/* Blocking accesses at the individual or shared file pointer: a status. */
#define ACCESS(_lower, _upper, _c)                                                                 \
    static void f_##_lower(fint *fh, void *buf, fint *count, fint *type, fint *status, fint *ierr) \
    {                                                                                              \
        MPI_Status cs, *s = tj_fortran_status_in(status, &cs);                                     \
        int rc = _c(PMPI_File_f2c(*fh), tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*type), s);  \
        if (rc == MPI_SUCCESS)                                                                     \
            tj_fortran_status_out(s, status);                                                      \
        tj_fortran_ierr(ierr, rc);                                                                 \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

/* Blocking accesses at an explicit offset. */
#define ACCESS_AT(_lower, _upper, _c)                                                              \
    static void f_##_lower(fint *fh, MPI_Offset *offset, void *buf, fint *count, fint *type,       \
                           fint *status, fint *ierr)                                               \
    {                                                                                              \
        MPI_Status cs, *s = tj_fortran_status_in(status, &cs);                                     \
        int rc = _c(PMPI_File_f2c(*fh), *offset, tj_fortran_bottom(buf), *count,                   \
                    PMPI_Type_f2c(*type), s);                                                      \
        if (rc == MPI_SUCCESS)                                                                     \
            tj_fortran_status_out(s, status);                                                      \
        tj_fortran_ierr(ierr, rc);                                                                 \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

/* Non-blocking accesses: a request. */
#define IACCESS(_lower, _upper, _c)                                                                \
    static void f_##_lower(fint *fh, void *buf, fint *count, fint *type, fint *request,            \
                           fint *ierr)                                                             \
    {                                                                                              \
        MPI_Request r;                                                                             \
        int rc = _c(PMPI_File_f2c(*fh), tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*type), &r); \
        if (rc == MPI_SUCCESS)                                                                     \
            *request = PMPI_Request_c2f(r);                                                        \
        tj_fortran_ierr(ierr, rc);                                                                 \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

#define IACCESS_AT(_lower, _upper, _c)                                                             \
    static void f_##_lower(fint *fh, MPI_Offset *offset, void *buf, fint *count, fint *type,       \
                           fint *request, fint *ierr)                                              \
    {                                                                                              \
        MPI_Request r;                                                                             \
        int rc = _c(PMPI_File_f2c(*fh), *offset, tj_fortran_bottom(buf), *count,                   \
                    PMPI_Type_f2c(*type), &r);                                                     \
        if (rc == MPI_SUCCESS)                                                                     \
            *request = PMPI_Request_c2f(r);                                                        \
        tj_fortran_ierr(ierr, rc);                                                                 \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

/* The beginning of a split collective. */
#define BEGIN(_lower, _upper, _c)                                                                  \
    static void f_##_lower(fint *fh, void *buf, fint *count, fint *type, fint *ierr)               \
    {                                                                                              \
        tj_fortran_ierr(                                                                           \
            ierr, _c(PMPI_File_f2c(*fh), tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*type)));   \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

#define BEGIN_AT(_lower, _upper, _c)                                                               \
    static void f_##_lower(fint *fh, MPI_Offset *offset, void *buf, fint *count, fint *type,       \
                           fint *ierr)                                                             \
    {                                                                                              \
        tj_fortran_ierr(ierr, _c(PMPI_File_f2c(*fh), *offset, tj_fortran_bottom(buf), *count,      \
                                 PMPI_Type_f2c(*type)));                                           \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

/* The end of a split collective: a status. */
#define END(_lower, _upper, _c)                                                                    \
    static void f_##_lower(fint *fh, void *buf, fint *status, fint *ierr)                          \
    {                                                                                              \
        MPI_Status cs, *s = tj_fortran_status_in(status, &cs);                                     \
        int rc = _c(PMPI_File_f2c(*fh), tj_fortran_bottom(buf), s);                                \
        if (rc == MPI_SUCCESS)                                                                     \
            tj_fortran_status_out(s, status);                                                      \
        tj_fortran_ierr(ierr, rc);                                                                 \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

ACCESS(file_read, FILE_READ, MPI_File_read)
ACCESS(file_read_all, FILE_READ_ALL, MPI_File_read_all)
ACCESS(file_read_shared, FILE_READ_SHARED, MPI_File_read_shared)
ACCESS(file_read_ordered, FILE_READ_ORDERED, MPI_File_read_ordered)
ACCESS(file_write, FILE_WRITE, MPI_File_write)
ACCESS(file_write_all, FILE_WRITE_ALL, MPI_File_write_all)
ACCESS(file_write_shared, FILE_WRITE_SHARED, MPI_File_write_shared)
ACCESS(file_write_ordered, FILE_WRITE_ORDERED, MPI_File_write_ordered)
ACCESS_AT(file_read_at, FILE_READ_AT, MPI_File_read_at)
ACCESS_AT(file_read_at_all, FILE_READ_AT_ALL, MPI_File_read_at_all)
ACCESS_AT(file_write_at, FILE_WRITE_AT, MPI_File_write_at)
ACCESS_AT(file_write_at_all, FILE_WRITE_AT_ALL, MPI_File_write_at_all)
IACCESS(file_iread, FILE_IREAD, MPI_File_iread)
IACCESS(file_iread_all, FILE_IREAD_ALL, MPI_File_iread_all)
IACCESS(file_iread_shared, FILE_IREAD_SHARED, MPI_File_iread_shared)
IACCESS(file_iwrite, FILE_IWRITE, MPI_File_iwrite)
IACCESS(file_iwrite_all, FILE_IWRITE_ALL, MPI_File_iwrite_all)
IACCESS(file_iwrite_shared, FILE_IWRITE_SHARED, MPI_File_iwrite_shared)
IACCESS_AT(file_iread_at, FILE_IREAD_AT, MPI_File_iread_at)
IACCESS_AT(file_iread_at_all, FILE_IREAD_AT_ALL, MPI_File_iread_at_all)
IACCESS_AT(file_iwrite_at, FILE_IWRITE_AT, MPI_File_iwrite_at)
IACCESS_AT(file_iwrite_at_all, FILE_IWRITE_AT_ALL, MPI_File_iwrite_at_all)
BEGIN(file_read_all_begin, FILE_READ_ALL_BEGIN, MPI_File_read_all_begin)
BEGIN(file_read_ordered_begin, FILE_READ_ORDERED_BEGIN, MPI_File_read_ordered_begin)
BEGIN(file_write_all_begin, FILE_WRITE_ALL_BEGIN, MPI_File_write_all_begin)
BEGIN(file_write_ordered_begin, FILE_WRITE_ORDERED_BEGIN, MPI_File_write_ordered_begin)
BEGIN_AT(file_read_at_all_begin, FILE_READ_AT_ALL_BEGIN, MPI_File_read_at_all_begin)
BEGIN_AT(file_write_at_all_begin, FILE_WRITE_AT_ALL_BEGIN, MPI_File_write_at_all_begin)
END(file_read_all_end, FILE_READ_ALL_END, MPI_File_read_all_end)
END(file_read_at_all_end, FILE_READ_AT_ALL_END, MPI_File_read_at_all_end)
END(file_read_ordered_end, FILE_READ_ORDERED_END, MPI_File_read_ordered_end)
END(file_write_all_end, FILE_WRITE_ALL_END, MPI_File_write_all_end)
END(file_write_at_all_end, FILE_WRITE_AT_ALL_END, MPI_File_write_at_all_end)
END(file_write_ordered_end, FILE_WRITE_ORDERED_END, MPI_File_write_ordered_end)

#endif /* OPEN_MPI */
