! SPDX-License-Identifier: BSD-3-Clause
! A Fortran halo exchange through typejit (tests/fortran.cmake): faces of a 3-D array described
! by derived datatypes (subarray, vector, hvector, a dup; the x face also through every other
! constructor), packed with MPI_Pack and MPI_Unpack
! and exchanged with MPI_Sendrecv, MPI_Isend/MPI_Irecv/MPI_Waitall, persistent requests, and
! every other completion call (Waitany, Testany, Waitsome, Testall, Request_get_status, Test),
! then through the collectives: MPI_Alltoallv, MPI_Alltoallw, MPI_Ialltoallw,
! MPI_Ineighbor_alltoallw, MPI_Bcast and MPI_Iallgather (also with MPI_IN_PLACE).
! Every result is checked against the array itself; the counters line that TYPEJIT_STATS=1
! prints at MPI_Finalize shows that the Fortran calls reached typejit.
program halo
    use mpi
    use checks
    implicit none
    integer, parameter :: nx = 12, ny = 10, nz = 8
    double precision :: a(nx, ny, nz), b(nx, ny, nz), c(nx, ny, nz)
    double precision :: packed(nx * ny * nz), xface(ny, nz), yface(nx, nz)
    integer :: sizes(3), subsizes(3), starts(3)
    integer :: xtype, ytype, plane, ztype, dup, ierr, rank, nranks, pos, i, j, k, left, right
    integer :: reqs(4), statuses(MPI_STATUS_SIZE, 4), status(MPI_STATUS_SIZE), psize
    integer(kind=MPI_ADDRESS_KIND) :: lb, dext
    integer, allocatable :: scounts(:), sdispls(:), rcounts(:), rdispls(:), stypes(:), rtypes(:)
    double precision, allocatable :: r(:, :, :, :), g(:)
    integer :: p, req, ring, nstypes(2), nrtypes(2), ncounts(2), t, idx, done, outcount
    integer :: indices(2)
    logical :: flag
    integer, allocatable :: blens(:), idispls(:)
    integer(kind=MPI_ADDRESS_KIND), allocatable :: adispls(:)
    integer(kind=MPI_ADDRESS_KIND) :: nsdispls(2), nrdispls(2)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
    call start_checks(rank, nranks, left, right)
    call fill_halo(a, rank)

    ! The x face i = 2 (a subarray), the y face j = 3 (a vector of x rows, nz planes apart).
    sizes = (/ nx, ny, nz /)
    subsizes = (/ 1, ny, nz /)
    starts = (/ 1, 0, 0 /)
    call MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, &
                                  MPI_DOUBLE_PRECISION, xtype, ierr)
    call MPI_Type_commit(xtype, ierr)
    call MPI_Type_get_extent(MPI_DOUBLE_PRECISION, lb, dext, ierr)
    call MPI_Type_contiguous(nx, MPI_DOUBLE_PRECISION, plane, ierr)
    call MPI_Type_create_hvector(nz, 1, dext * nx * ny, plane, ytype, ierr)
    call MPI_Type_commit(ytype, ierr)
    call MPI_Type_vector(ny * nz, 1, nx, MPI_DOUBLE_PRECISION, ztype, ierr)
    call MPI_Type_commit(ztype, ierr)
    call MPI_Type_dup(xtype, dup, ierr)

    ! Pack and unpack on host memory (TYPEJIT_HOST=engine: the engine's CPU packer).
    call MPI_Pack_size(1, xtype, MPI_COMM_WORLD, psize, ierr)
    if (psize < 8 * ny * nz) call fail('MPI_Pack_size')
    pos = 0
    call MPI_Pack(a, 1, xtype, packed, 8 * size(packed), pos, MPI_COMM_WORLD, ierr)
    if (pos /= 8 * ny * nz) call fail('MPI_Pack position')
    xface = reshape(packed(1:ny * nz), (/ ny, nz /))
    if (any(xface /= a(2, :, :))) call fail('MPI_Pack of the x face')
    pos = 0
    call MPI_Pack(a(1, 3, 1), 1, ytype, packed, 8 * size(packed), pos, MPI_COMM_WORLD, ierr)
    yface = reshape(packed(1:nx * nz), (/ nx, nz /))
    if (any(yface /= a(:, 3, :))) call fail('MPI_Pack of the y face')
    b = -1
    pos = 0
    call MPI_Unpack(packed, 8 * size(packed), pos, b(1, 5, 1), 1, ytype, MPI_COMM_WORLD, ierr)
    if (any(b(:, 5, :) /= a(:, 3, :))) call fail('MPI_Unpack of the y face')
    pos = 0
    call MPI_Pack(a, 1, dup, packed, 8 * size(packed), pos, MPI_COMM_WORLD, ierr)
    if (any(reshape(packed(1:ny * nz), (/ ny, nz /)) /= a(2, :, :))) call fail('MPI_Pack of a dup')

    ! The x face made by the other constructors, each packed and compared: indexed (element
    ! and byte displacements, with and without a common block length), a struct of one member,
    ! a resized one; and the whole array as a darray over one process.
    allocate(blens(ny * nz), idispls(ny * nz), adispls(ny * nz))
    do k = 1, nz
        do j = 1, ny
            idispls((k - 1) * ny + j) = 1 + (j - 1) * nx + (k - 1) * nx * ny
        end do
    end do
    blens = 1
    adispls = 8 * idispls
    call MPI_Type_indexed(ny * nz, blens, idispls, MPI_DOUBLE_PRECISION, t, ierr)
    call check_x(t, 'MPI_Type_indexed')
    call MPI_Type_create_indexed_block(ny * nz, 1, idispls, MPI_DOUBLE_PRECISION, t, ierr)
    call check_x(t, 'MPI_Type_create_indexed_block')
    call MPI_Type_create_hindexed(ny * nz, blens, adispls, MPI_DOUBLE_PRECISION, t, ierr)
    call check_x(t, 'MPI_Type_create_hindexed')
    call MPI_Type_create_hindexed_block(ny * nz, 1, adispls, MPI_DOUBLE_PRECISION, t, ierr)
    call check_x(t, 'MPI_Type_create_hindexed_block')
    call MPI_Type_create_struct(1, (/ 1 /), (/ 0_MPI_ADDRESS_KIND /), (/ xtype /), t, ierr)
    call check_x(t, 'MPI_Type_create_struct')
    call MPI_Type_create_resized(xtype, 0_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND * nx * ny * nz, &
                                 t, ierr)
    call check_x(t, 'MPI_Type_create_resized')
    deallocate(blens, idispls, adispls)
    call MPI_Type_create_darray(1, 0, 3, sizes, (/ MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE, &
                                MPI_DISTRIBUTE_NONE /), (/ MPI_DISTRIBUTE_DFLT_DARG, &
                                MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG /), &
                                (/ 1, 1, 1 /), MPI_ORDER_FORTRAN, MPI_DOUBLE_PRECISION, t, ierr)
    call MPI_Type_commit(t, ierr)
    pos = 0
    call MPI_Pack(a, 1, t, packed, 8 * size(packed), pos, MPI_COMM_WORLD, ierr)
    if (pos /= 8 * nx * ny * nz .or. any(packed /= reshape(a, (/ nx * ny * nz /)))) &
        call fail('MPI_Type_create_darray')
    call MPI_Type_free(t, ierr)

    ! Exchange: my x face i = 2 goes right into the neighbour's i = 1 ghost face.
    b = a
    ! A call that completes one request leaves status(MPI_ERROR) as it was.
    status(MPI_ERROR) = 4242
    call MPI_Sendrecv(a, 1, xtype, right, 1, b, 1, ztype, left, 1, MPI_COMM_WORLD, status, ierr)
    if (status(MPI_SOURCE) /= left) call fail('MPI_Sendrecv status')
    if (status(MPI_ERROR) /= 4242) call fail('MPI_Sendrecv changed status(MPI_ERROR)')
    if (any(b(1, :, :) /= a(2, :, :) - (rank - left) * 1000000)) call fail('MPI_Sendrecv')
    b = a
    call MPI_Irecv(b, 1, ztype, left, 2, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(a, 1, xtype, right, 2, MPI_COMM_WORLD, reqs(2), ierr)
    c = -1
    call MPI_Irecv(c(1, 1, 1), 1, ytype, left, 3, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Isend(a(1, 3, 1), 1, ytype, right, 3, MPI_COMM_WORLD, reqs(4), ierr)
    call MPI_Waitall(4, reqs, statuses, ierr)
    if (any(reqs /= MPI_REQUEST_NULL)) call fail('MPI_Waitall requests')
    if (statuses(MPI_TAG, 3) /= 3) call fail('MPI_Waitall statuses')
    if (any(b(1, :, :) /= a(2, :, :) - (rank - left) * 1000000)) call fail('MPI_Irecv x face')
    if (any(c(:, 1, :) /= a(:, 3, :) - (rank - left) * 1000000)) call fail('MPI_Irecv y face')
    call MPI_Send_init(a, 1, xtype, right, 4, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Recv_init(b, 1, ztype, left, 4, MPI_COMM_WORLD, reqs(2), ierr)
    do i = 1, 2
        b = a
        call MPI_Startall(2, reqs, ierr)
        call MPI_Wait(reqs(2), MPI_STATUS_IGNORE, ierr)
        call MPI_Wait(reqs(1), status, ierr)
        if (any(b(1, :, :) /= a(2, :, :) - (rank - left) * 1000000)) call fail('persistent')
    end do
    call MPI_Request_free(reqs(1), ierr)
    call MPI_Request_free(reqs(2), ierr)

    ! The other completion calls and send modes, on the same exchange. Fortran indices count
    ! from 1; Request_get_status must show the bytes before the request is freed.
    do i = 10, 14
        b = a
        call MPI_Irecv(b, 1, ztype, left, i, MPI_COMM_WORLD, reqs(1), ierr)
        if (i == 10) then
            call MPI_Issend(a, 1, xtype, right, i, MPI_COMM_WORLD, reqs(2), ierr)
        else
            call MPI_Isend(a, 1, xtype, right, i, MPI_COMM_WORLD, reqs(2), ierr)
        end if
        done = 0
        flag = .false.
        select case (i)
        case (10)
            do while (done < 2)
                call MPI_Waitany(2, reqs, idx, status, ierr)
                if (idx < 1 .or. idx > 2) call fail('MPI_Waitany index')
                if (idx == 1 .and. status(MPI_SOURCE) /= left) call fail('MPI_Waitany status')
                done = done + 1
            end do
        case (11)
            do while (done < 2)
                call MPI_Testany(2, reqs, idx, flag, status, ierr)
                if (flag .and. idx /= MPI_UNDEFINED) then
                    if (idx < 1 .or. idx > 2) call fail('MPI_Testany index')
                    done = done + 1
                end if
            end do
        case (12)
            do while (done < 2)
                call MPI_Waitsome(2, reqs, outcount, indices, statuses, ierr)
                if (any(indices(1:outcount) < 1 .or. indices(1:outcount) > 2)) &
                    call fail('MPI_Waitsome indices')
                done = done + outcount
            end do
        case (13)
            do while (.not. flag)
                call MPI_Testall(2, reqs, flag, statuses, ierr)
            end do
            if (statuses(MPI_SOURCE, 1) /= left) call fail('MPI_Testall statuses')
        case default
            do while (.not. flag)
                call MPI_Request_get_status(reqs(1), flag, status, ierr)
            end do
            if (any(b(1, :, :) /= a(2, :, :) - (rank - left) * 1000000)) &
                call fail('MPI_Request_get_status: the bytes are not there')
            call MPI_Test(reqs(1), flag, status, ierr)
            if (.not. flag .or. reqs(1) /= MPI_REQUEST_NULL) call fail('MPI_Test after get_status')
            call MPI_Wait(reqs(2), status, ierr)
        end select
        if (any(reqs(1:2) /= MPI_REQUEST_NULL)) call fail('completion left a request')
        if (any(b(1, :, :) /= a(2, :, :) - (rank - left) * 1000000)) call fail('completion calls')
    end do

    ! Collectives. Alltoallv: my x face (xtype) to every rank, received as plain doubles.
    allocate(scounts(0:nranks - 1), sdispls(0:nranks - 1), rcounts(0:nranks - 1))
    allocate(rdispls(0:nranks - 1), stypes(0:nranks - 1), rtypes(0:nranks - 1))
    allocate(r(nx, ny, nz, 0:nranks - 1), g(ny * nz * nranks))
    scounts = 1
    sdispls = 0
    rcounts = ny * nz
    rdispls = (/ (p * ny * nz, p = 0, nranks - 1) /)
    g = -1
    call MPI_Alltoallv(a, scounts, sdispls, xtype, g, rcounts, rdispls, MPI_DOUBLE_PRECISION, &
                       MPI_COMM_WORLD, ierr)
    do p = 0, nranks - 1
        if (any(reshape(g(p * ny * nz + 1:(p + 1) * ny * nz), (/ ny, nz /)) /= &
                a(2, :, :) - (rank - p) * 1000000)) call fail('MPI_Alltoallv')
    end do

    ! Alltoallw: to an even rank my x face (xtype), to an odd one my y face (ytype, 2 * nx
    ! doubles in); received as x faces (ztype) or y faces (ytype) into r(:, :, :, p).
    ! Displacements are in bytes.
    do p = 0, nranks - 1
        if (mod(p, 2) == 0) then
            stypes(p) = xtype
            sdispls(p) = 0
        else
            stypes(p) = ytype
            sdispls(p) = 8 * 2 * nx
        end if
        if (mod(rank, 2) == 0) then
            rtypes(p) = ztype
            rdispls(p) = 8 * nx * ny * nz * p
        else
            rtypes(p) = ytype
            rdispls(p) = 8 * nx * ny * nz * p + 8 * 2 * nx
        end if
    end do
    rcounts = 1
    r = -1
    call MPI_Alltoallw(a, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, &
                       MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_Alltoallw ierr')
    call check_w('MPI_Alltoallw')

    ! The same as MPI_Ialltoallw: the converted type arrays must live until MPI_Wait.
    r = -1
    call MPI_Ialltoallw(a, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, &
                        MPI_COMM_WORLD, req, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_Ialltoallw ierr')
    call MPI_Wait(req, status, ierr)
    call check_w('MPI_Ialltoallw')

    ! Ineighbor_alltoallw on a periodic ring: my x face (xtype) to both neighbours, theirs
    ! received as x faces (ztype) into r(:, :, :, 0) from the left and r(:, :, :, 1) from the
    ! right. Displacements are INTEGER(KIND=MPI_ADDRESS_KIND) bytes.
    call MPI_Cart_create(MPI_COMM_WORLD, 1, (/ nranks /), (/ .true. /), .false., ring, ierr)
    nstypes = xtype
    nrtypes = ztype
    ncounts = 1
    nsdispls = 0
    nrdispls(1) = 0
    nrdispls(2) = 8 * nx * ny * nz
    r = -1
    call MPI_Ineighbor_alltoallw(a, ncounts, nsdispls, nstypes, r, ncounts, nrdispls, nrtypes, &
                                 ring, req, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_Ineighbor_alltoallw ierr')
    call MPI_Wait(req, status, ierr)
    if (any(r(1, :, :, 0) /= a(2, :, :) - (rank - left) * 1000000)) &
        call fail('MPI_Ineighbor_alltoallw from the left')
    if (any(r(1, :, :, 1) /= a(2, :, :) - (rank - right) * 1000000)) &
        call fail('MPI_Ineighbor_alltoallw from the right')
    if (any(r(2:, :, :, 0:1) /= -1)) call fail('MPI_Ineighbor_alltoallw wrote outside x faces')
    call MPI_Comm_free(ring, ierr)

    ! Bcast of rank 0's y face in place of mine (ytype); the rest of b stays as it was.
    b = a
    call MPI_Bcast(b(1, 3, 1), 1, ytype, 0, MPI_COMM_WORLD, ierr)
    if (any(b(:, 3, :) /= a(:, 3, :) - rank * 1000000)) call fail('MPI_Bcast')
    if (any(b(:, 4:, :) /= a(:, 4:, :))) call fail('MPI_Bcast wrote outside the y face')

    ! Iallgather of x faces (xtype) as plain doubles, then with MPI_IN_PLACE.
    g = -1
    call MPI_Iallgather(a, 1, xtype, g, ny * nz, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, status, ierr)
    do p = 0, nranks - 1
        if (any(reshape(g(p * ny * nz + 1:(p + 1) * ny * nz), (/ ny, nz /)) /= &
                a(2, :, :) - (rank - p) * 1000000)) call fail('MPI_Iallgather')
    end do
    g = -1
    g(rank * ny * nz + 1:(rank + 1) * ny * nz) = reshape(a(2, :, :), (/ ny * nz /))
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, ny * nz, MPI_DOUBLE_PRECISION, &
                       MPI_COMM_WORLD, ierr)
    do p = 0, nranks - 1
        if (any(reshape(g(p * ny * nz + 1:(p + 1) * ny * nz), (/ ny, nz /)) /= &
                a(2, :, :) - (rank - p) * 1000000)) call fail('MPI_Allgather in place')
    end do
    deallocate(scounts, sdispls, rcounts, rdispls, stypes, rtypes, r, g)

    call MPI_Type_free(dup, ierr)
    call MPI_Type_free(ztype, ierr)
    call MPI_Type_free(ytype, ierr)
    call MPI_Type_free(plane, ierr)
    call MPI_Type_free(xtype, ierr)
    if (xtype /= MPI_DATATYPE_NULL) call fail('MPI_Type_free')
    call MPI_Finalize(ierr)
    if (failures > 0) stop 1
    if (rank == 0) print '(a)', 'PASS'

contains

    ! Commit t, pack one of it from a: it must give the x face i = 2. Frees t.
    subroutine check_x(t, what)
        integer, intent(inout) :: t
        character(len=*), intent(in) :: what
        integer :: at, err
        call MPI_Type_commit(t, err)
        at = 0
        call MPI_Pack(a, 1, t, packed, 8 * size(packed), at, MPI_COMM_WORLD, err)
        if (err /= MPI_SUCCESS .or. at /= 8 * ny * nz .or. &
            any(reshape(packed(1:ny * nz), (/ ny, nz /)) /= a(2, :, :))) call fail(what)
        call MPI_Type_free(t, err)
    end subroutine check_x

    ! What an Alltoallw above must have received in r.
    subroutine check_w(what)
        character(len=*), intent(in) :: what
        integer :: q
        do q = 0, nranks - 1
            if (mod(rank, 2) == 0) then
                if (any(r(1, :, :, q) /= a(2, :, :) - (rank - q) * 1000000)) &
                    call fail(what // ' x faces')
                if (any(r(2:, :, :, q) /= -1)) call fail(what // ' wrote outside x faces')
            else
                if (any(r(:, 3, :, q) /= a(:, 3, :) - (rank - q) * 1000000)) &
                    call fail(what // ' y faces')
                if (any(r(:, 4:, :, q) /= -1)) call fail(what // ' wrote outside y faces')
            end if
        end do
    end subroutine check_w

end program halo
