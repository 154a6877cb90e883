// Record-time function filter (PARLOT_INCLUDE / PARLOT_EXCLUDE): decides,
// once per function when the function-ID table first sees it, whether its
// calls are recorded. Excluded functions take no function ID; their hooks
// return after the ID lookup, and their callees nest under their caller.
//
// A pattern list holds patterns separated by ';'. A pattern is a glob
// (`*` any run of characters, `?` one character, `[...]` a set, `[!...]`
// its complement) matched against the whole of:
//  - with the prefix `dso:`: the path of the object holding the function
//    (the executable's path from /proc/self/exe, a library's path as the
//    dynamic loader has it), e.g. `dso:*/libfoo.so*`;
//  - otherwise the function's name, from the ELF symbol table of its object
//    on disk (.symtab, else .dynsym), cut at the first '.' (so `f` also
//    names its clones `f.constprop.0`, `f.part.1`). A pattern matches when it
//    matches the symbol as written (mangled for C++) or its qualified name:
//    for C++ symbols of a plain function, possibly nested in namespaces and
//    classes, with no template arguments and no operator (`_ZN2ns1A1fEv` ->
//    `ns::A::f`, constructors `A::A`, destructors `A::~A`), and for gfortran
//    module procedures (`__mod_MOD_proc` -> `mod::proc`).
// A function is recorded when the include list is empty or one of its
// patterns matches, and no exclude pattern matches. A function with no
// symbol (a stripped object) has no name: only `dso:` patterns can match it.
//
// The symbol table of each object is mapped once and its function symbols
// sorted by address once (heap sort into anonymous memory): a name costs a
// binary search. Cold path, but runs inside a hook: no malloc, no locks that a hook could
// wait on forever (a spin lock between threads classifying at the same time),
// async-signal-safe calls only (_dl_find_object, open, fstat, mmap).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

/// Glob match of `text` against `pattern` (`*`, `?`, `[...]`, `[!...]`),
/// whole string. No allocation, iterative (linear backtracking on the last
/// `*`).
bool glob_match(const char* pattern, const char* text);

/// Writes the qualified name of a plain C++ function symbol (`_ZN2ns1fEv` ->
/// `ns::f`) or a gfortran module procedure (`__m_MOD_p` -> `m::p`) into
/// `out` (`size` bytes). Returns false, leaving `out` unspecified, for any
/// other symbol (C names, templates, operators, too long).
bool qualified_name_of(const char* symbol, char* out, std::size_t size);

class FunctionFilter {
 public:
  /// Parses the two ';'-separated pattern lists (copied). Returns false and
  /// prints a notice when a list holds more than kMaxPatterns patterns (the
  /// filter then records everything). Call once, at initialisation.
  bool init(const char* include, const char* exclude);

  /// True when there is at least one pattern.
  bool active() const { return include_count_ + exclude_count_ != 0; }

  /// True when calls of the function at `address` are to be recorded.
  /// Thread-safe and async-signal-safe (see above); called once per function.
  bool records(std::uintptr_t address);

  /// Names the library-call entry stub at `address` (its symbol and the
  /// path of the library defining it) and returns true, or returns false
  /// for any other address; nullptr when library calls are not recorded.
  /// Async-signal-safe. Library calls are filtered by those names.
  bool (*names_stub)(std::uintptr_t address, const char** name, const char** library) = nullptr;

  static constexpr std::size_t kMaxPatterns = 64;

 private:
  struct Pattern {
    const char* glob;
    bool on_path;  ///< `dso:` pattern
  };
  // An object's symbol table, mapped from its file on first use.
  struct ObjectSymbols {
    const void* link_map;
    const unsigned char* file;  ///< the mapped file; nullptr: no symbols
    std::size_t file_bytes;
    const void* symbols;  ///< Elf64_Sym array
    std::size_t symbol_count;
    const char* strings;
    std::size_t string_bytes;
    /// The function symbols sorted by address (anonymous mmap), for a
    /// binary search per lookup; nullptr: none.
    const void* by_address;
    std::size_t function_count;
  };
  static bool any_matches(const Pattern* patterns, std::size_t n, const char* path,
                          const char* name, const char* qualified);
  // The symbols of the object `link_map`, mapped at `mapped_at`, whose file
  // is `path` (made absolute first when relative); nullptr past
  // kMaxObjects. Caller holds lock_.
  const ObjectSymbols* symbols_of(const void* link_map, const char* path, std::uintptr_t mapped_at);
  static void map_symbols(ObjectSymbols& o, const char* path);
  static void index_functions(ObjectSymbols& o);
  static const char* name_at(const ObjectSymbols& o, std::uintptr_t offset);

  char storage_[2 * 2048 + 2] = {};
  Pattern include_[kMaxPatterns] = {};
  Pattern exclude_[kMaxPatterns] = {};
  std::size_t include_count_ = 0;
  std::size_t exclude_count_ = 0;
  bool needs_names_ = false;
  char executable_[1024] = {};
  static constexpr std::size_t kMaxObjects = 256;
  ObjectSymbols objects_[kMaxObjects] = {};
  std::size_t object_count_ = 0;
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
};

}  // namespace parlot::runtime
