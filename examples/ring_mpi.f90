! ring_mpi: a token passed around a ring of MPI ranks, then reduced; a
! gfortran program that calls MPI through `use mpi` (the Fortran bindings
! mpi_send_, mpi_recv_, ...), so that Parlot's MPI wrappers can be checked on
! Fortran calls. Usage: ring_mpi [laps]. Prints one line from rank 0.
module ring
  use mpi
  implicit none
contains
  subroutine pass_token(token, rank, nranks)
    integer, intent(inout) :: token
    integer, intent(in) :: rank, nranks
    integer :: ierr, status(MPI_STATUS_SIZE)
    if (rank == 0) then
      call MPI_Send(token, 1, MPI_INTEGER, mod(rank + 1, nranks), 7, MPI_COMM_WORLD, ierr)
      call MPI_Recv(token, 1, MPI_INTEGER, nranks - 1, 7, MPI_COMM_WORLD, status, ierr)
    else
      call MPI_Recv(token, 1, MPI_INTEGER, rank - 1, 7, MPI_COMM_WORLD, status, ierr)
      token = token + rank
      call MPI_Send(token, 1, MPI_INTEGER, mod(rank + 1, nranks), 7, MPI_COMM_WORLD, ierr)
    end if
  end subroutine pass_token

  ! Nonblocking: each rank sends its rank to both neighbours and receives
  ! theirs (MPI_Waitall, with statuses and with MPI_STATUSES_IGNORE), then
  ! once more completing one request at a time (MPI_Waitany), so the Fortran
  ! binding's completion calls are traced.
  subroutine exchange_with_neighbours(rank, nranks)
    integer, intent(in) :: rank, nranks
    integer :: ierr, next, prev, which, k, from_prev, mine
    integer :: requests(2), statuses(MPI_STATUS_SIZE, 2), status(MPI_STATUS_SIZE)
    next = mod(rank + 1, nranks)
    prev = mod(rank + nranks - 1, nranks)
    mine = rank
    call MPI_Irecv(from_prev, 1, MPI_INTEGER, prev, 11, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Isend(mine, 1, MPI_INTEGER, next, 11, MPI_COMM_WORLD, requests(2), ierr)
    call MPI_Waitall(2, requests, statuses, ierr)
    call MPI_Irecv(from_prev, 1, MPI_INTEGER, prev, 13, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Isend(mine, 1, MPI_INTEGER, next, 13, MPI_COMM_WORLD, requests(2), ierr)
    call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
    call MPI_Irecv(from_prev, 1, MPI_INTEGER, prev, 12, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Isend(mine, 1, MPI_INTEGER, next, 12, MPI_COMM_WORLD, requests(2), ierr)
    do k = 1, 2
      call MPI_Waitany(2, requests, which, status, ierr)
    end do
  end subroutine exchange_with_neighbours

  integer function total_of(token)
    integer, intent(in) :: token
    integer :: ierr
    call MPI_Allreduce(token, total_of, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  end function total_of
end module ring

program ring_mpi
  use mpi
  use ring
  implicit none
  integer :: ierr, rank, nranks, lap, laps, token, total
  character(len=32) :: arg
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  laps = 3
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) laps
  end if
  token = 0
  do lap = 1, laps
    if (nranks > 1) call pass_token(token, rank, nranks)
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (nranks > 1) call exchange_with_neighbours(rank, nranks)
  total = total_of(token)
  if (rank == 0) print '(a,i0,a,i0,a,i0)', 'ring ranks=', nranks, ' laps=', laps, ' total=', total
  call MPI_Finalize(ierr)
end program ring_mpi
