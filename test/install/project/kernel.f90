! A Fortran user: `use parlot` from the installed module.
module kernel
contains
  integer function twice(x)
    integer, intent(in) :: x
    twice = 2 * x
  end function
end module kernel

program main
  use parlot
  use kernel
  integer :: s
  call parlot_mark("set-up   ")
  s = twice(2)
  call parlot_pause()
  s = s + twice(3)
  call parlot_resume()
  call parlot_mark("report")
  print '(a,i0)', 'fortran ', s
end program main
