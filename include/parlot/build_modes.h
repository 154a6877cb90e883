/* The compiler flags of Parlot's two build modes, in one place. `parlot
 * flags`, the CMake package (parlot_instrument), pkg-config (parlot.pc,
 * parlot-sleds.pc) and the runtime's sled finder all take them from here.
 * CMake reads PARLOT_SLED_FLAGS and PARLOT_HOOK_FLAGS with a regular
 * expression (cmake/ParlotBuildModes.cmake): keep each on one line as
 * `#define NAME "value"`.
 *
 *   hooks  -finstrument-functions: the compiler calls
 *          __cyg_profile_func_enter/exit in every function, traced or not
 *          (a no-op call when not traced).
 *   sleds  -fpatchable-function-entry=N: every function starts with N bytes
 *          of NOPs and the address of each is listed in the section
 *          __patchable_function_entries; the runtime patches them into calls
 *          when tracing is on and leaves them NOPs when it is off.
 */
#ifndef PARLOT_BUILD_MODES_H
#define PARLOT_BUILD_MODES_H

/** Bytes of NOPs at each function's entry in the sled build (x86-64: room for
 *  one 5-byte `call rel32`). */
#define PARLOT_SLED_ENTRY_BYTES 5

/** The compile flag of the sled build (gcc >= 8 and clang >= 10). */
#define PARLOT_SLED_FLAGS "-fpatchable-function-entry=5"

/** The ELF section listing the sleds' addresses (8 bytes each on x86-64). */
#define PARLOT_SLED_SECTION "__patchable_function_entries"

/** The compile flag of the hook build (every compiler Parlot supports). */
#define PARLOT_HOOK_FLAGS "-finstrument-functions"

/** The hook build's cheaper variant with clang: only the functions left after
 *  inlining call the hooks. */
#define PARLOT_HOOK_FLAGS_CLANG_AFTER_INLINING "-finstrument-functions-after-inlining"

/** The hook build's cheaper variant with gcc (no after-inlining mode): the
 *  functions of system headers call no hooks. */
#define PARLOT_HOOK_FLAGS_GCC_AFTER_INLINING \
  "-finstrument-functions -finstrument-functions-exclude-file-list=/usr/include"

#endif /* PARLOT_BUILD_MODES_H */
