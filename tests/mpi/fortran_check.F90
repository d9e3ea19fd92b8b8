! fortran_check.F90: a Fortran MPI program (it knows nothing of apsmpi) that sums REAL data with the three reductions, in place and not, and checks the results.
!
! Built three times (Makefile.am): -DBINDING=1 includes mpif.h (with gfortran's
! -fallow-argument-mismatch, as mpif.h has no interfaces), 2 uses `use mpi`, 3 uses
! `use mpi_f08` (handles of derived types, ierror left out on some calls). Each rank holds
! n REAL values whose exact sum it can compute (every rank's input is a formula of rank and
! index); it prints
!   worst <e>          the largest error relative to N * B, B the largest |input| of its
!                      scaling block of 4096 elements on any rank
!   checksum <h>       a hash of results that no compressor may touch: a DOUBLE PRECISION
!                      sum and a REAL MPI_MAX (compared bit for bit with and without apsmpi)
! and stops with status 1 if an ierror is not MPI_SUCCESS.
program fortran_check
#if BINDING == 3
  use mpi_f08
#elif BINDING == 2
  use mpi
#endif
  implicit none
#if BINDING == 1
  include 'mpif.h'
#endif
#if BINDING == 3
#define COMM_T type(MPI_Comm)
#define REQ_T type(MPI_Request)
#else
#define COMM_T integer
#define REQ_T integer
#endif
  integer, parameter :: n = 200000, block = 4096
  real, allocatable :: a(:), b(:), c(:), e(:), bmax(:)
  double precision, allocatable :: d(:), dsum(:)
  integer, allocatable :: counts(:)
  integer :: rank, nranks, ierr, i, per
  real :: worst
  integer(kind=8) :: h
  COMM_T :: comm
  REQ_T :: reqs(2)

  call MPI_Init(ierr)
  call check(ierr, 'MPI_Init')
  comm = MPI_COMM_WORLD
  call MPI_Comm_rank(comm, rank, ierr)
  call MPI_Comm_size(comm, nranks, ierr)
  allocate(a(n), b(n), c(n), e(n), d(n), dsum(n), counts(nranks), bmax((n + block - 1) / block))
  worst = 0.0
  ! the largest |input| of any rank in each block of 4096 (APSMPI_BLOCK_SIZE's default)
  bmax = 0
  do i = 1, n
    do per = 0, nranks - 1
      bmax((i - 1) / block + 1) = max(bmax((i - 1) / block + 1), abs(input(per, i)))
    end do
  end do

  ! MPI_Allreduce into another buffer
  call fill(a, rank)
  call MPI_Allreduce(a, b, n, MPI_REAL, MPI_SUM, comm, ierr)
  call check(ierr, 'MPI_Allreduce')
  call compare(b, 1, n)
  ! MPI_Allreduce with MPI_IN_PLACE (f08: without ierror)
  call fill(a, rank)
#if BINDING == 3
  call MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_REAL, MPI_SUM, comm)
#else
  call MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_REAL, MPI_SUM, comm, ierr)
  call check(ierr, 'MPI_Allreduce in place')
#endif
  call compare(a, 1, n)
  ! MPI_Reduce_scatter_block: n / nranks each
  per = n / nranks
  call fill(a, rank)
  call MPI_Reduce_scatter_block(a, b, per, MPI_REAL, MPI_SUM, comm, ierr)
  call check(ierr, 'MPI_Reduce_scatter_block')
  call compare(b, rank * per + 1, per)
  ! MPI_Reduce_scatter in place, uneven counts
  do i = 1, nranks
    counts(i) = per + merge(n - per * nranks, 0, i == nranks)
  end do
  call fill(a, rank)
  call MPI_Reduce_scatter(MPI_IN_PLACE, a, counts, MPI_REAL, MPI_SUM, comm, ierr)
  call check(ierr, 'MPI_Reduce_scatter in place')
  call compare(a, rank * per + 1, counts(rank + 1))

  ! Non-blocking: an MPI_Iallreduce and an MPI_Ireduce_scatter_block outstanding together,
  ! completed by MPI_Waitall; then an MPI_Iallreduce in place completed by MPI_Wait
  call fill(a, rank)
  call fill(c, rank)
  call MPI_Iallreduce(a, b, n, MPI_REAL, MPI_SUM, comm, reqs(1), ierr)
  call check(ierr, 'MPI_Iallreduce')
  call MPI_Ireduce_scatter_block(c, e, per, MPI_REAL, MPI_SUM, comm, reqs(2), ierr)
  call check(ierr, 'MPI_Ireduce_scatter_block')
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ierr, 'MPI_Waitall')
  call compare(b, 1, n)
  call compare(e, rank * per + 1, per)
  call fill(a, rank)
  call MPI_Iallreduce(MPI_IN_PLACE, a, n, MPI_REAL, MPI_SUM, comm, reqs(1), ierr)
  call check(ierr, 'MPI_Iallreduce in place')
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'MPI_Wait')
  call compare(a, 1, n)

  ! Calls apsmpi must hand to MPI untouched: a DOUBLE PRECISION sum, a REAL maximum
  do i = 1, n
    d(i) = input(rank, i)
  end do
  call MPI_Allreduce(d, dsum, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
  call check(ierr, 'MPI_Allreduce double')
  call fill(a, rank)
  call MPI_Allreduce(a, b, n, MPI_REAL, MPI_MAX, comm, ierr)
  call check(ierr, 'MPI_Allreduce max')
  h = 0
  do i = 1, n
    h = ieor(ishftc(h, 5), transfer(dsum(i), h))
    h = ieor(ishftc(h, 7), int(transfer(b(i), 0), 8))
  end do

  if (rank == 0) then
    print '(a, es12.4)', 'worst ', worst
    print '(a, z16.16)', 'checksum ', h
  end if
  call MPI_Finalize(ierr)
  call check(ierr, 'MPI_Finalize')

contains

  ! The input of rank r at index i: values of very different magnitude per layer of 5000.
  real function input(r, i)
    integer, intent(in) :: r, i
    integer :: layer
    layer = mod(i / 5000, 7)
    input = real(sin(0.37d0 * i + 1.3d0 * r) * 10.0d0**(layer - 3))
  end function

  subroutine fill(x, r)
    real, intent(out) :: x(:)
    integer, intent(in) :: r
    integer :: k
    do k = 1, size(x)
      x(k) = input(r, k)
    end do
  end subroutine

  ! Compares x(1:len), the elements first.. of the sum, with the exact sum.
  subroutine compare(x, first, len)
    real, intent(in) :: x(:)
    integer, intent(in) :: first, len
    integer :: k, r
    double precision :: exact, big
    do k = 1, len
      exact = 0
      do r = 0, nranks - 1
        exact = exact + input(r, first + k - 1)
      end do
      big = bmax((first + k - 2) / block + 1)
      if (big > 0) worst = max(worst, real(abs(x(k) - exact) / (nranks * big)))
    end do
  end subroutine

  subroutine check(code, what)
    integer, intent(in) :: code
    character(*), intent(in) :: what
    if (code /= MPI_SUCCESS) then
      print '(a, a, a, i0)', 'ierror of ', what, ': ', code
      stop 1
    end if
  end subroutine
end program fortran_check
