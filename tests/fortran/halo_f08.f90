! SPDX-License-Identifier: BSD-3-Clause
! The same checks as halo.f90 through `use mpi_f08` (tests/fortran.cmake): Open MPI's mpi_f08
! module calls its mpif.h layer's ompi_*_f functions, which typejit interposes.
program halo_f08
    use mpi_f08
    use checks
    implicit none
    integer, parameter :: nx = 12, ny = 10, nz = 8
    double precision :: a(nx, ny, nz), b(nx, ny, nz), packed(nx * ny * nz)
    type(MPI_Datatype) :: xtype, dup
    type(MPI_Request) :: reqs(2)
    type(MPI_Status) :: statuses(2)
    integer :: rank, nranks, pos, left, right

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks)
    call start_checks(rank, nranks, left, right)
    call fill_halo(a, rank)
    ! The x face i = 2: ny * nz elements nx apart.
    call MPI_Type_vector(ny * nz, 1, nx, MPI_DOUBLE_PRECISION, xtype)
    call MPI_Type_commit(xtype)
    call MPI_Type_dup(xtype, dup)

    pos = 0
    call MPI_Pack(a(2, 1, 1), 1, dup, packed, 8 * size(packed), pos, MPI_COMM_WORLD)
    if (pos /= 8 * ny * nz) call fail('MPI_Pack position')
    if (any(reshape(packed(1:ny * nz), (/ ny, nz /)) /= a(2, :, :))) call fail('MPI_Pack')
    b = -1
    pos = 0
    call MPI_Unpack(packed, 8 * size(packed), pos, b(3, 1, 1), 1, xtype, MPI_COMM_WORLD)
    if (any(b(3, :, :) /= a(2, :, :))) call fail('MPI_Unpack')

    b = a
    call MPI_Irecv(b, 1, xtype, left, 1, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(a(2, 1, 1), 1, xtype, right, 1, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, statuses)
    if (statuses(1)%MPI_SOURCE /= left) call fail('MPI_Waitall status')
    if (any(b(1, :, :) /= a(2, :, :) - (rank - left) * 1000000)) call fail('MPI_Isend/MPI_Irecv')

    call MPI_Type_free(dup)
    call MPI_Type_free(xtype)
    call MPI_Finalize()
    if (failures > 0) stop 1
    if (rank == 0) print '(a)', 'PASS'
end program halo_f08
