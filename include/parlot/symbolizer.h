// Symbolizer: turns run-time function addresses recorded by the tracer into
// function names, source files and lines, after the traced process is gone.
//
// It works from the process's load map (include/parlot/load_map.h) and the
// object files still on disk, using elfutils libdw/libdwfl: DWARF debug
// information first (including separate debug files found through
// .gnu_debuglink or the build ID under /usr/lib/debug, via libdwfl's standard
// search, which may also ask debuginfod servers when DEBUGINFOD_URLS is set in
// the environment), then the ELF symbol table (.symtab, else .dynsym), then a
// plain hexadecimal address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parlot/load_map.h"

namespace parlot {

/// What is known about one code address.
struct SourceLocation {
  /// Human-readable, qualified function name. From DWARF, the function's
  /// linkage name passed through demangle_symbol() with the compile unit's
  /// language, else its DW_AT_name (C functions, extern "C" and main in C++,
  /// a Fortran main program's name). Without DWARF, the ELF symbol passed
  /// through demangle_symbol() with SymbolLanguage::kUnknown. Examples:
  ///  - C++: "ns::Box<int>::get(int) const";
  ///  - gfortran module procedure `__mod_MOD_proc`: "mod::proc";
  ///  - Fortran external procedure `proc_`: "proc" (the trailing underscore is
  ///    removed only when DWARF says the compile unit is Fortran);
  ///  - C: the name unchanged.
  /// When nothing is known about the address: "0x<lowercase hex address>"
  /// (the run-time address passed to Symbolizer::resolve(), no padding).
  std::string function;
  /// Source file of the function from DWARF (DW_AT_decl_file, else the line
  /// table), made absolute with the compile unit's DW_AT_comp_dir when it is
  /// recorded relative; empty when unknown.
  std::string file;
  /// 1-based line of the function's declaration (DW_AT_decl_line) or, failing
  /// that, the line-table line of its entry address; 0 when unknown.
  int line = 0;
  /// Path (as in the load map) of the object that holds the address; empty
  /// when the address lies in no object of the load map.
  std::string dso;
  /// Link-time address of `address` inside `dso`, i.e. address - load_bias
  /// (bytes); 0 when `dso` is empty.
  std::uint64_t offset = 0;
  /// True when DWARF debug information contributed to this result (name, file
  /// or line); false when only the ELF symbol table, or nothing, was used.
  bool from_debug_info = false;
};

/// The source line an instruction address was compiled from (the line
/// table's row; the innermost inlined call's line when code was inlined).
struct SourceLine {
  /// Source file as the line table names it, made absolute with the
  /// compile unit's DW_AT_comp_dir when relative; empty when unknown (no
  /// line table for the address).
  std::string file;
  /// 1-based line; 0 when unknown.
  int line = 0;
};

/// Source language of the code a symbol comes from, as far as naming rules
/// are concerned (see demangle_symbol()).
enum class SymbolLanguage {
  kUnknown,  ///< No DWARF language known (e.g. only an ELF symbol table).
  kC,        ///< C: names are shown exactly as written.
  kCxx,      ///< C++: Itanium-ABI `_Z` names are demangled.
  kFortran,  ///< Fortran: gfortran module and external-procedure naming.
};

/// Turns a linkage (ELF symbol) name into the name shown to users.
///
/// - kC: `symbol` is returned unchanged, whatever it looks like.
/// - kCxx: `_Z...` names are demangled with abi::__cxa_demangle (including the
///   parameter list, e.g. "ns::Box<int>::get(int) const"); other names, and
///   names that fail to demangle, are returned unchanged.
/// - kFortran: gfortran module procedures `__<module>_MOD_<proc>` become
///   "<module>::<proc>"; otherwise one trailing underscore is removed
///   ("proc_" -> "proc", as for external procedures).
/// - kUnknown: `_Z` names are demangled as for kCxx and `__<module>_MOD_<proc>`
///   names are rewritten as for kFortran, but a trailing underscore is kept,
///   because without DWARF a C name ending in '_' cannot be told apart.
/// Never throws except std::bad_alloc.
std::string demangle_symbol(std::string_view symbol, SymbolLanguage language);

/// Resolves run-time addresses of one traced process to SourceLocations.
///
/// Objects of the load map are opened lazily, the first time an address falls
/// into them, and stay open until the Symbolizer is destroyed. Results are
/// cached: each distinct address is looked up in libdw only once.
///
/// Problems with object files never throw and never abort: they are reported
/// through the WarningSink (at most once per object; load-map entries with the
/// same path, load bias and build ID count as one object) and the Symbolizer
/// degrades to whatever it can still learn (symbol table, hex address).
///
/// Not thread-safe: use one Symbolizer per thread or serialize calls.
class Symbolizer {
 public:
  /// Receives one human-readable sentence per problem (no trailing newline),
  /// e.g. a missing file or a build-ID mismatch. Must not throw.
  using WarningSink = std::function<void(const std::string&)>;

  /// Creates a symbolizer for the process described by `load_map`.
  /// Opens no file yet (see resolve()). Entries whose path is empty or names a
  /// pseudo object ("[vdso]", "linux-vdso.so.1", "linux-gate.so.1") are never
  /// opened and never warned about.
  /// `warn` receives warnings; when empty, warnings are written to stderr
  /// prefixed with "parlot: warning: ".
  explicit Symbolizer(LoadMap load_map, WarningSink warn = {});

  /// Releases every libdwfl session, ELF handle and file descriptor.
  ~Symbolizer();

  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  /// Returns what is known about the run-time virtual address `address`.
  ///
  /// The object is the first load-map entry whose [start, end) contains the
  /// address. On the first lookup into an object its file is opened; if it
  /// cannot be opened, or its GNU build ID differs from the recorded
  /// (non-empty) one, the WarningSink is called once for that object. With a
  /// mismatched build ID the file is still used, best effort; with an
  /// unreadable file the result is the hex address (with `dso` and `offset`
  /// still filled in). An address in no object yields "0x..." with an empty
  /// `dso`.
  ///
  /// The returned reference stays valid, and refers to the same object for
  /// the same address, for the lifetime of the Symbolizer. Throws nothing but
  /// std::bad_alloc (and whatever the WarningSink throws).
  const SourceLocation& resolve(std::uint64_t address);

  /// The source line of the instruction at run-time address `address`
  /// (e.g. a call site: its return address minus one), from the DWARF line
  /// table of the object holding it (per object, at its load bias).
  /// Unknown (empty file, line 0) when the address lies in no object of
  /// the load map or the object has no line table for it; problems with
  /// the object are warned about as for resolve(). Cached per address; the
  /// reference stays valid for the Symbolizer's lifetime. Throws nothing
  /// but std::bad_alloc.
  const SourceLine& source_line(std::uint64_t address);

 private:
  struct Object;  // Per-object state (libdwfl session, indexes); symbolizer.cpp.

  // Index into load_map_ of the first entry containing `address`, or -1.
  // O(log n) through range_starts_/range_entries_.
  int find_object(std::uint64_t address) const;
  // Fills range_starts_/range_entries_ from load_map_ (O(n log n)).
  void build_address_index();
  // Opens the object of load_map_[index] on first use (warning about problems once);
  // returns false when the object cannot be used for symbolization.
  bool open_object(std::size_t index);
  // Uncached resolve().
  SourceLocation lookup(std::uint64_t address);
  void warn(const std::string& message) const;

  LoadMap load_map_;
  WarningSink warn_;
  // One per distinct object, allocated on first use (open_object()).
  std::vector<std::unique_ptr<Object>> objects_;
  std::vector<std::uint32_t> entry_objects_;  // Parallel to load_map_: index into objects_.
  // Address index: from range_starts_[k] up to the next start, the first
  // entry containing the address is range_entries_[k] (-1: none). Sorted.
  std::vector<std::uint64_t> range_starts_;
  std::vector<int> range_entries_;
  std::unordered_map<std::uint64_t, SourceLocation> cache_;
  std::unordered_map<std::uint64_t, SourceLine> line_cache_;
};

}  // namespace parlot
