! SPDX-License-Identifier: BSD-3-Clause
! Fortran calls whose entry points typejit adds beside the C wrappers (tests/fortran.cmake):
! Allreduce, Iallreduce in place, Reduce_local, Alltoall, external32, one-sided Put and Get
! completed by a fence, a window in the mode's memory with every kind of synchronisation, MPI-IO
! at explicit offsets. Built twice, with `use mpi` and (TJ_F08) with `use mpi_f08`. The
! first argument is `host` or `device` (buffers from the CUDA driver, tests/fortran/buffers.c),
! the second the file to write. Every result is compared with the value it must have.
program calls
#ifdef TJ_F08
    use mpi_f08
#define HANDLE(_t) type(_t)
#define STATUS type(MPI_Status)
#else
    use mpi
#define HANDLE(_t) integer
#define STATUS integer, dimension(MPI_STATUS_SIZE)
#endif
    use, intrinsic :: iso_c_binding
    use checks
    implicit none
    interface
        function tj_buf_init(device) bind(C, name='tj_buf_init') result(rc)
            import :: c_int
            integer(c_int), value :: device
            integer(c_int) :: rc
        end function tj_buf_init
        function tj_buf_alloc(bytes) bind(C, name='tj_buf_alloc') result(p)
            import :: c_ptr, c_size_t
            integer(c_size_t), value :: bytes
            type(c_ptr) :: p
        end function tj_buf_alloc
        subroutine tj_buf_put(buf, host, bytes) bind(C, name='tj_buf_put')
            import :: c_ptr, c_size_t
            type(c_ptr), value :: buf, host
            integer(c_size_t), value :: bytes
        end subroutine tj_buf_put
        subroutine tj_buf_get(host, buf, bytes) bind(C, name='tj_buf_get')
            import :: c_ptr, c_size_t
            type(c_ptr), value :: host, buf
            integer(c_size_t), value :: bytes
        end subroutine tj_buf_get
        subroutine tj_buf_free(buf) bind(C, name='tj_buf_free')
            import :: c_ptr
            type(c_ptr), value :: buf
        end subroutine tj_buf_free
    end interface
    integer, parameter :: n = 12
    double precision, pointer, contiguous :: a(:), b(:)
    integer, pointer, contiguous :: ia(:), ib(:)
    double precision, target :: h(n), g(n), wbuf(n)
    integer, target :: ih(n), ig(n)
    integer(kind=1), target :: packed(4 * n)
    integer(kind=MPI_ADDRESS_KIND) :: pos, wsize
    integer(kind=MPI_OFFSET_KIND) :: offset
    HANDLE(MPI_Win) :: win
    HANDLE(MPI_Group) :: world, from, to
#ifndef TJ_F08
    integer(kind=MPI_ADDRESS_KIND) :: attr
    logical :: found
    character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
#endif
    double precision, pointer, contiguous :: w(:)
    HANDLE(MPI_Request) :: req
    HANDLE(MPI_File) :: fh
    STATUS :: status
    integer :: rank, nranks, left, right, i, s, c, cnt, ierr
    character(len=16) :: mode
    character(len=256) :: fname
    type(c_ptr) :: pa, pb, pia, pib, pw

    call get_command_argument(1, mode)
    call get_command_argument(2, fname)
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
    call start_checks(rank, nranks, left, right)
    if (tj_buf_init(merge(1_c_int, 0_c_int, mode == 'device')) /= 0) then
        call fail('no buffers of kind ' // trim(mode))
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
    pa = tj_buf_alloc(int(8 * n, c_size_t))
    pb = tj_buf_alloc(int(8 * n, c_size_t))
    pia = tj_buf_alloc(int(4 * n, c_size_t))
    pib = tj_buf_alloc(int(4 * n, c_size_t))
    call c_f_pointer(pa, a, (/ n /))
    call c_f_pointer(pb, b, (/ n /))
    call c_f_pointer(pia, ia, (/ n /))
    call c_f_pointer(pib, ib, (/ n /))

    ! MPI_ALLREDUCE.
    h = (/ (val(rank, i), i = 1, n) /)
    call put(pa, h)
    call MPI_Allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call get(g, pb)
    if (ierr /= MPI_SUCCESS .or. any(g /= (/ (sum_val(i), i = 1, n) /))) call fail('MPI_Allreduce')
    ! In place, non-blocking (one call of it only: MPICH's `use mpi` has no interfaces for
    ! choice buffers, and gfortran refuses calls of one procedure with different argument types).
    call put(pb, h)
    call MPI_Iallreduce(MPI_IN_PLACE, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req, &
                        ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call get(g, pb)
    if (ierr /= MPI_SUCCESS .or. any(g /= (/ (sum_val(i), i = 1, n) /))) &
        call fail('MPI_Iallreduce in place')

    ! MPI_REDUCE_LOCAL: inout = in + inout, the input in host memory.
    call put(pb, h)
    g = (/ (dble(i * 1000), i = 1, n) /)
    call MPI_Reduce_local(g, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, ierr)
    call get(g, pb)
    if (ierr /= MPI_SUCCESS .or. any(g /= (/ (val(rank, i) + dble(i * 1000), i = 1, n) /))) &
        call fail('MPI_Reduce_local')

    ! MPI_ALLTOALL, two doubles to each rank: element c for rank s is 100 * sender + 10 * s + c.
    if (2 * nranks <= n) then
        h = -1
        do s = 0, nranks - 1
            do c = 1, 2
                h(2 * s + c) = dble(100 * rank + 10 * s + c)
            end do
        end do
        call put(pa, h)
        call MPI_Alltoall(a, 2, MPI_DOUBLE_PRECISION, b, 2, MPI_DOUBLE_PRECISION, &
                          MPI_COMM_WORLD, ierr)
        call get(g, pb)
        do s = 0, nranks - 1
            do c = 1, 2
                if (g(2 * s + c) /= dble(100 * s + 10 * rank + c)) call fail('MPI_Alltoall')
            end do
        end do
    end if

    ! MPI_PACK_EXTERNAL into host memory (big-endian), MPI_UNPACK_EXTERNAL back.
    ih = (/ (10 * rank + i, i = 1, n) /)
    call tj_buf_put(pia, c_loc(ih), int(4 * n, c_size_t))
    packed = -1
    pos = 0
    call MPI_Pack_external('external32', ia, n, MPI_INTEGER, packed, &
                           int(4 * n, MPI_ADDRESS_KIND), pos, ierr)
    if (ierr /= MPI_SUCCESS .or. pos /= 4 * n) call fail('MPI_Pack_external position')
    do i = 1, n
        if (any(packed(4 * i - 3:4 * i - 1) /= 0) .or. packed(4 * i) /= 10 * rank + i) &
            call fail('MPI_Pack_external bytes')
    end do
    pos = 0
    call MPI_Unpack_external('external32', packed, int(4 * n, MPI_ADDRESS_KIND), pos, ib, n, &
                             MPI_INTEGER, ierr)
    call tj_buf_get(c_loc(ig), pib, int(4 * n, c_size_t))
    if (ierr /= MPI_SUCCESS .or. pos /= 4 * n .or. any(ig /= ih)) call fail('MPI_Unpack_external')

    ! MPI_PUT to the right neighbour's window (host memory), MPI_GET back from it, each completed
    ! by MPI_WIN_FENCE.
    wbuf = -1
    wsize = 8 * n
    call MPI_Win_create(wbuf, wsize, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
    h = (/ (val(rank, i), i = 1, n) /)
    call put(pa, h)
    call MPI_Win_fence(0, win, ierr)
    call MPI_Put(a, n, MPI_DOUBLE_PRECISION, right, 0_MPI_ADDRESS_KIND, n, MPI_DOUBLE_PRECISION, &
                 win, ierr)
    call MPI_Win_fence(0, win, ierr)
    if (any(wbuf /= (/ (val(left, i), i = 1, n) /))) call fail('MPI_Put')
    g = -1
    call put(pb, g)
    call MPI_Get(b, n, MPI_DOUBLE_PRECISION, right, 0_MPI_ADDRESS_KIND, n, MPI_DOUBLE_PRECISION, &
                 win, ierr)
    call MPI_Win_fence(0, win, ierr)
    call get(g, pb)
    if (any(g /= h)) call fail('MPI_Get')
    call MPI_Win_free(win, ierr)

    ! A window on a buffer of the mode's kind (device memory: a host public copy, in the separate
    ! memory model): MPI_PUT in post/start/complete/wait epochs (completed by MPI_WIN_WAIT, then a
    ! MPI_WIN_TEST loop), stores in a lock of the own window read by the neighbour's MPI_GET in a
    ! lock_all epoch, a MPI_PUT made private by MPI_WIN_SYNC.
    pw = tj_buf_alloc(int(8 * n, c_size_t))
    call c_f_pointer(pw, w, (/ n /))
    g = -1
    call put(pw, g)
    call MPI_Win_create(w, wsize, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
#ifndef TJ_F08
    ! (Open MPI's mpi_f08 MPI_Win_get_attr and MPI_Win_test call its profiling names
    ! pmpi_win_get_attr_ and pmpi_win_test_, which typejit does not take, and the MPICH family's
    ! bindings read attributes inside MPICH: docs/device-calls.md.)
    call MPI_Get_library_version(version, cnt, ierr)
    call MPI_Win_get_attr(win, MPI_WIN_MODEL, attr, found, ierr)
    if (.not. found .or. (mode == 'device' .and. index(version, 'MPICH') == 0 .and. &
                          attr /= MPI_WIN_SEPARATE)) &
        call fail('MPI_WIN_MODEL of a window in device memory')
#endif
    call MPI_Comm_group(MPI_COMM_WORLD, world, ierr)
    call MPI_Group_incl(world, 1, (/ left /), from, ierr)
    call MPI_Group_incl(world, 1, (/ right /), to, ierr)
    do s = 1, 2
        h = (/ (val(rank + s, i), i = 1, n) /)
        call put(pa, h)
        call MPI_Win_post(from, 0, win, ierr)
        call MPI_Win_start(to, 0, win, ierr)
        call MPI_Put(a, n, MPI_DOUBLE_PRECISION, right, 0_MPI_ADDRESS_KIND, n, &
                     MPI_DOUBLE_PRECISION, win, ierr)
        call MPI_Win_complete(win, ierr)
#ifndef TJ_F08
        if (s == 2) then
            found = .false.
            do while (.not. found)
                call MPI_Win_test(win, found, ierr)
            end do
        else
            call MPI_Win_wait(win, ierr)
        end if
#else
        call MPI_Win_wait(win, ierr)
#endif
        call get(g, pw)
        if (any(g /= (/ (val(left + s, i), i = 1, n) /))) call fail('MPI_Put, MPI_Win_wait')
    end do
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win, ierr)
    h = (/ (val(rank + 7, i), i = 1, n) /)
    call put(pw, h)
    call MPI_Win_unlock(rank, win, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Win_lock_all(0, win, ierr)
    call MPI_Get(b, n, MPI_DOUBLE_PRECISION, right, 0_MPI_ADDRESS_KIND, n, MPI_DOUBLE_PRECISION, &
                 win, ierr)
    call MPI_Win_flush(right, win, ierr)
    call get(g, pb)
    if (any(g /= (/ (val(right + 7, i), i = 1, n) /))) call fail('MPI_Win_unlock of the own window')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Put(a, n, MPI_DOUBLE_PRECISION, right, 0_MPI_ADDRESS_KIND, n, MPI_DOUBLE_PRECISION, &
                 win, ierr)
    call MPI_Win_flush(right, win, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Win_sync(win, ierr)
    call get(g, pw)
    if (any(g /= (/ (val(left + 2, i), i = 1, n) /))) call fail('MPI_Win_sync')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Win_unlock_all(win, ierr)
    call MPI_Win_free(win, ierr)
    call MPI_Group_free(from, ierr)
    call MPI_Group_free(to, ierr)
    call MPI_Group_free(world, ierr)
    call tj_buf_free(pw)
    h = (/ (val(rank, i), i = 1, n) /)
    call put(pa, h)

    ! MPI_FILE_WRITE_AT each rank's block, MPI_FILE_READ_AT the left neighbour's.
    call MPI_File_open(MPI_COMM_WORLD, trim(fname), MPI_MODE_CREATE + MPI_MODE_RDWR, &
                       MPI_INFO_NULL, fh, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_File_open')
    offset = 8 * n * rank
    call MPI_File_write_at(fh, offset, a, n, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_File_write_at')
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)
    g = -1
    call put(pb, g)
    offset = 8 * n * left
    call MPI_File_read_at(fh, offset, b, n, MPI_DOUBLE_PRECISION, status, ierr)
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, cnt, ierr)
    call get(g, pb)
    if (cnt /= n .or. any(g /= (/ (val(left, i), i = 1, n) /))) call fail('MPI_File_read_at')
    call MPI_File_close(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call MPI_File_delete(trim(fname), MPI_INFO_NULL, ierr)

    call tj_buf_free(pa)
    call tj_buf_free(pb)
    call tj_buf_free(pia)
    call tj_buf_free(pib)
    call MPI_Finalize(ierr)
    if (failures > 0) stop 1
    if (rank == 0) print '(a)', 'PASS'

contains

    double precision function val(r, i)
        integer, intent(in) :: r, i
        val = dble(100 * r + i)
    end function val

    ! The sum over all ranks of val(r, i).
    double precision function sum_val(i)
        integer, intent(in) :: i
        sum_val = dble(100 * (nranks * (nranks - 1) / 2) + nranks * i)
    end function sum_val

    subroutine put(buf, host)
        type(c_ptr), intent(in) :: buf
        double precision, target, intent(in) :: host(n)
        call tj_buf_put(buf, c_loc(host), int(8 * n, c_size_t))
    end subroutine put

    subroutine get(host, buf)
        double precision, target, intent(inout) :: host(n)
        type(c_ptr), intent(in) :: buf
        call tj_buf_get(c_loc(host), buf, int(8 * n, c_size_t))
    end subroutine get

end program calls
