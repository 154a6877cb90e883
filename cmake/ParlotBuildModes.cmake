# The compile flags of Parlot's build modes, read from their one definition
# in include/parlot/build_modes.h (the front end and the runtime include
# that header): sets PARLOT_SLED_FLAGS (the sled build,
# -fpatchable-function-entry=N) and PARLOT_HOOK_FLAGS (the hook build,
# -finstrument-functions) for the CMake package and the pkg-config files.
function(_parlot_read_build_flag name)
  file(STRINGS ${PROJECT_SOURCE_DIR}/include/parlot/build_modes.h line
    REGEX "^#define ${name} \"[^\"]*\"$")
  if(NOT line MATCHES "^#define ${name} \"([^\"]*)\"$")
    message(FATAL_ERROR "include/parlot/build_modes.h: no one-line #define ${name} \"...\"")
  endif()
  set(${name} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()
_parlot_read_build_flag(PARLOT_SLED_FLAGS)
_parlot_read_build_flag(PARLOT_HOOK_FLAGS)
