! Parlot example: Jacobi relaxation for the 2-D Poisson equation (Fortran 90).
!
! Usage: jacobi [grid_size] [iterations]     (defaults: 12 5)
!
! Solves -laplace(u) = 1 on the unit square with a grid_size x grid_size grid
! (boundary included) by Jacobi sweeps. The module `stencil` holds the grid
! routines as contained procedures (init_grid, relax_point, apply_stencil,
! point_residual, residual, swap_grids); the boundary condition
! (set_boundary) and the checksum (grid_checksum) are external procedures
! outside the module. The main program sweeps `iterations` times, checking
! the residual every 10 sweeps and at the end.
!
! Single-threaded and deterministic.
!
! Output (one line):
!   jacobi n=<n> iterations=<k> residual=<e> checksum=<f>

module stencil
  implicit none
  private
  public :: dp, init_grid, apply_stencil, residual, swap_grids

  integer, parameter :: dp = kind(1.0d0)

contains

  ! Allocates both grids, zeroes them and applies the boundary condition.
  subroutine init_grid(u, unew, n)
    real(dp), allocatable, intent(inout) :: u(:, :), unew(:, :)
    integer, intent(in) :: n
    interface
      subroutine set_boundary(g, n)
        import :: dp
        integer, intent(in) :: n
        real(dp), intent(inout) :: g(n, n)
      end subroutine set_boundary
    end interface

    allocate (u(n, n), unew(n, n))
    u = 0.0_dp
    unew = 0.0_dp
    call set_boundary(u, n)
    call set_boundary(unew, n)
  end subroutine init_grid

  ! New value of one interior point from its four neighbours.
  pure function relax_point(north, south, west, east, h2f) result(v)
    real(dp), intent(in) :: north, south, west, east, h2f
    real(dp) :: v
    v = 0.25_dp * (north + south + west + east + h2f)
  end function relax_point

  ! One Jacobi sweep over the interior: unew = relax(u).
  subroutine apply_stencil(u, unew, n, h2)
    integer, intent(in) :: n
    real(dp), intent(in) :: u(n, n), h2
    real(dp), intent(inout) :: unew(n, n)
    integer :: i, j

    do j = 2, n - 1
      do i = 2, n - 1
        unew(i, j) = relax_point(u(i, j + 1), u(i, j - 1), u(i - 1, j), u(i + 1, j), h2)
      end do
    end do
  end subroutine apply_stencil

  ! Residual of -laplace(u) = 1 at one interior point, times h**2.
  pure function point_residual(center, north, south, west, east, h2f) result(r)
    real(dp), intent(in) :: center, north, south, west, east, h2f
    real(dp) :: r
    r = h2f - (4.0_dp * center - north - south - west - east)
  end function point_residual

  ! Root-mean-square residual over the interior.
  function residual(u, n, h2) result(rms)
    integer, intent(in) :: n
    real(dp), intent(in) :: u(n, n), h2
    real(dp) :: rms, r
    integer :: i, j

    rms = 0.0_dp
    do j = 2, n - 1
      do i = 2, n - 1
        r = point_residual(u(i, j), u(i, j + 1), u(i, j - 1), u(i - 1, j), u(i + 1, j), h2)
        rms = rms + r * r
      end do
    end do
    rms = sqrt(rms / real((n - 2) * (n - 2), dp)) / h2
  end function residual

  ! Exchanges the old and new grids without copying.
  subroutine swap_grids(u, unew)
    real(dp), allocatable, intent(inout) :: u(:, :), unew(:, :)
    real(dp), allocatable :: tmp(:, :)

    call move_alloc(u, tmp)
    call move_alloc(unew, u)
    call move_alloc(tmp, unew)
  end subroutine swap_grids

end module stencil

! External subroutine (outside the module): u = x * (1 - x) on the top edge,
! 0 on the other edges.
subroutine set_boundary(g, n)
  use stencil, only: dp
  implicit none
  integer, intent(in) :: n
  real(dp), intent(inout) :: g(n, n)
  integer :: i
  real(dp) :: x

  g(:, 1) = 0.0_dp
  g(1, :) = 0.0_dp
  g(n, :) = 0.0_dp
  do i = 1, n
    x = real(i - 1, dp) / real(n - 1, dp)
    g(i, n) = x * (1.0_dp - x)
  end do
end subroutine set_boundary

! External function (outside the module): position-weighted sum of the grid.
function grid_checksum(g, n) result(s)
  use stencil, only: dp
  implicit none
  integer, intent(in) :: n
  real(dp), intent(in) :: g(n, n)
  real(dp) :: s
  integer :: i, j

  s = 0.0_dp
  do j = 1, n
    do i = 1, n
      s = s + g(i, j) * real(mod(i * 7 + j * 13, 17) + 1, dp)
    end do
  end do
end function grid_checksum

program jacobi
  use stencil, only: dp, init_grid, apply_stencil, residual, swap_grids
  implicit none
  interface
    function grid_checksum(g, n) result(s)
      import :: dp
      integer, intent(in) :: n
      real(dp), intent(in) :: g(n, n)
      real(dp) :: s
    end function grid_checksum
  end interface

  integer :: n, iterations, it
  real(dp), allocatable :: u(:, :), unew(:, :)
  real(dp) :: h, h2, res

  if (command_argument_count() > 2) then
    write (0, '(a)') 'usage: jacobi [grid_size] [iterations]'
    stop 2
  end if
  n = read_arg(1, 12, 3, 100000)
  iterations = read_arg(2, 5, 1, 100000000)

  h = 1.0_dp / real(n - 1, dp)
  h2 = h * h
  call init_grid(u, unew, n)
  res = 0.0_dp
  do it = 1, iterations
    call apply_stencil(u, unew, n, h2)
    call swap_grids(u, unew)
    if (mod(it, 10) == 0 .or. it == iterations) res = residual(u, n, h2)
  end do

  write (*, '(a,i0,a,i0,a,es14.8,a,f0.10)') 'jacobi n=', n, ' iterations=', iterations, &
    ' residual=', res, ' checksum=', grid_checksum(u, n)
  deallocate (u, unew)

contains

  ! Integer command-line argument `pos`, or `default` when absent. Exits with
  ! status 2 on a malformed or out-of-range value.
  function read_arg(pos, default, lo, hi) result(v)
    integer, intent(in) :: pos, default, lo, hi
    integer :: v, stat
    character(len=64) :: text

    v = default
    if (command_argument_count() < pos) return
    call get_command_argument(pos, text)
    read (text, *, iostat=stat) v
    if (stat /= 0 .or. v < lo .or. v > hi) then
      write (0, '(a,i0,a,i0,a,i0)') 'jacobi: invalid argument ', pos, '; expected ', lo, '..', hi
      stop 2
    end if
  end function read_arg

end program jacobi
