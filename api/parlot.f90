! Fortran binding of Parlot's user API (include/parlot/parlot.h):
!   use parlot
!   call parlot_pause(); ...; call parlot_resume()
!   call parlot_mark("phase 2")
! Link with -lparlot-api (or the runtime).
module parlot
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_null_char
  implicit none
  private
  public :: parlot_pause, parlot_resume, parlot_pause_all, parlot_resume_all, &
            parlot_start, parlot_stop, parlot_flush, parlot_mark, parlot_is_tracing

  interface
    subroutine parlot_pause() bind(C, name="parlot_pause")
    end subroutine
    subroutine parlot_resume() bind(C, name="parlot_resume")
    end subroutine
    subroutine parlot_pause_all() bind(C, name="parlot_pause_all")
    end subroutine
    subroutine parlot_resume_all() bind(C, name="parlot_resume_all")
    end subroutine
    integer(c_int) function parlot_start() bind(C, name="parlot_start")
      import :: c_int
    end function
    integer(c_int) function parlot_stop() bind(C, name="parlot_stop")
      import :: c_int
    end function
    integer(c_int) function parlot_flush() bind(C, name="parlot_flush")
      import :: c_int
    end function
    integer(c_int) function parlot_is_tracing() bind(C, name="parlot_is_tracing")
      import :: c_int
    end function
    subroutine parlot_mark_c(label) bind(C, name="parlot_mark")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: label
    end subroutine
  end interface

contains

  !> Marks a point of the calling thread's trace with `label` (trailing
  !> blanks dropped, at most 1024 characters, as the runtime keeps; see
  !> parlot.h). Written without
  !> calls into libgfortran, so libparlot-api does not need it.
  subroutine parlot_mark(label)
    character(len=*), intent(in) :: label
    character(kind=c_char) :: buf(1025)
    integer :: n, i
    n = len(label)
    do while (n > 0)
      if (iachar(label(n:n)) /= 32) exit
      n = n - 1
    end do
    n = min(n, 1024)
    do i = 1, n
      buf(i) = label(i:i)
    end do
    buf(n + 1) = c_null_char
    call parlot_mark_c(buf)
  end subroutine

end module parlot
