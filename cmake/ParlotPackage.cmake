# `cpack -G DEB` (run in the build directory): parlot_<version>_<arch>.deb
# for Debian 12, installing under /usr. Depends is computed by
# dpkg-shlibdeps from the installed binaries (libc6, libstdc++6,
# libdw1, libelf1, libfmt9, ...); a compiler is recommended, since programs
# are rebuilt with -finstrument-functions to be traced. The Python package
# is in it when the build made it (pybind11 found).
set(CPACK_PACKAGE_NAME parlot)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Parlot developers <parlot@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "whole-program function-call tracer for C, C++ and Fortran")
set(CPACK_PACKAGE_DESCRIPTION
  "Parlot records every function call and return of every thread of a program\n"
  "compiled with -finstrument-functions, compressing the call stream as it is\n"
  "produced (the ParLoT method), and prints named, nested call traces and call\n"
  "statistics. parlot record runs a program under the tracer; parlot trace,\n"
  "stats and info read its traces.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# The Python package `parlot` (lib/python3/dist-packages) imports numpy and pandas.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gcc | clang, pkg-config, python3, python3-numpy, python3-pandas")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cmake, gfortran")
# Only what install() lays out; the build tree's tests and examples stay out.
include(CPack)
