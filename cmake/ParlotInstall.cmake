# Install layout (README "Install"): bin/parlot, bin/parlot-read,
# lib/libparlotrt.so.<version> (SONAME libparlotrt.so.<major>),
# lib/libparlot-api.so.<version>, include/parlot/, lib/cmake/Parlot/,
# lib/pkgconfig/parlot.pc, parlot-sleds.pc and parlot-api.pc, man pages,
# bash completion.
include(CMakePackageConfigHelpers)

set(PARLOT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Parlot)
install(EXPORT ParlotTargets NAMESPACE Parlot:: DESTINATION ${PARLOT_CMAKE_DIR})
configure_package_config_file(cmake/ParlotConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ParlotConfig.cmake
  INSTALL_DESTINATION ${PARLOT_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ParlotConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ParlotConfig.cmake
  ${PROJECT_BINARY_DIR}/ParlotConfigVersion.cmake DESTINATION ${PARLOT_CMAKE_DIR})

foreach(pc parlot parlot-sleds parlot-api)
  configure_file(cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

install(FILES man/parlot.1 man/parlot-read.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES man/parlot.3 DESTINATION ${CMAKE_INSTALL_MANDIR}/man3)
