! SPDX-License-Identifier: BSD-3-Clause
! What the Fortran test programs share: failed checks counted and printed with the rank, and the
! array of the halo programs filled with the values their checks expect.
module checks
    implicit none
    private
    public :: failures, fail, start_checks, fill_halo
    integer :: failures = 0   ! the checks that failed on this rank
    integer :: check_rank = 0 ! this process's rank, which each failure names

contains

    ! This process's checks begin: the rank its failures name; its neighbours on a ring.
    subroutine start_checks(rank, nranks, left, right)
        integer, intent(in) :: rank, nranks
        integer, intent(out) :: left, right
        check_rank = rank
        right = mod(rank + 1, nranks)
        left = mod(rank - 1 + nranks, nranks)
    end subroutine start_checks

    subroutine fail(what)
        character(len=*), intent(in) :: what
        print '(a, i0, 2a)', 'FAIL on rank ', check_rank, ': ', what
        failures = failures + 1
    end subroutine fail

    ! a(i, j, k) = rank * 1000000 + i * 10000 + j * 100 + k: every element tells its place and
    ! its rank.
    subroutine fill_halo(a, rank)
        double precision, intent(out) :: a(:, :, :)
        integer, intent(in) :: rank
        integer :: i, j, k
        do k = 1, size(a, 3)
            do j = 1, size(a, 2)
                do i = 1, size(a, 1)
                    a(i, j, k) = rank * 1000000 + i * 10000 + j * 100 + k
                end do
            end do
        end do
    end subroutine fill_halo

end module checks
