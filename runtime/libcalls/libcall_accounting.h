// Which relocations of an instrumented object the library-call patcher
// leaves as they are, and why (libcall_patcher.h's LibcallLeft), counted in
// g_libcall_counts and written to the process's `libcalls` file
// (docs/FORMAT.md).
#pragma once

#include <cstddef>

#include "io/raw_io.h"
#include "libcalls/libcall_lookup.h"
#include "libcalls/libcall_objects.h"
#include "libcalls/libcall_patcher.h"

namespace parlot::runtime::libcall {

/// Why `name` is never patched (functions that return twice or switch
/// stacks, that read their caller's return address, the C library's start,
/// the TLS resolver, the hooks), or LibcallLeft::kCount
/// when it may be.
LibcallLeft never_patched(const char* name);

/// Adds one relocation left for `reason` to g_libcall_counts.
void count_left(LibcallLeft reason);

/// True when `library` (where a relocation of `o` leads) is one whose calls
/// are recorded: an uninstrumented object other than `o` and Parlot's,
/// whose file name matches `spec`.
bool recorded_library(const Object& o, const Object* library, const char* spec);

/// Counts o's GLOB_DAT relocations of functions in recorded libraries:
/// function pointers and -fno-plt calls, which cannot be patched (`&f`
/// must keep its value). `o` held.
void count_function_pointers(const Object& o, const char* spec);

/// Counts o's JUMP_SLOT entries into recorded libraries as left for
/// `reason` (an audit module is active), and its function pointers. `c`:
/// o's record in this pass. `o` held.
void count_all_left(const Object& o, const Caller& c, const char* spec, LibcallLeft reason);

/// Appends the `libcalls` file's text (docs/FORMAT.md) to `t`: the patched
/// and left counts and each stub's line, never a line cut short when the
/// buffer is full. Called with the patcher's lock held.
void format_libcall_record(TextBuilder& t, std::size_t capacity);

}  // namespace parlot::runtime::libcall
