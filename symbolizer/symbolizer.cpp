// Symbolizer implementation on top of elfutils libdwfl/libdw.
//
// One libdwfl session (Dwfl) per loaded object, opened lazily with
// dwfl_report_elf() at the recorded load bias. An address is resolved through
// its compile unit and a per-CU index of the concrete DW_TAG_subprogram DIEs
// (built once per CU), then through the ELF symbol table, and is otherwise
// shown in hex.
#include "parlot/symbolizer.h"
#include <algorithm>
#include <cstring>
#include <deque>
#include <filesystem>

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <queue>
#include <string_view>
#include <tuple>
#include <utility>

namespace parlot {
namespace {

// DW_LANG_* values newer than the dwarf.h of elfutils 0.188.
constexpr int kDwLangCPlusPlus17 = 0x2a;
constexpr int kDwLangCPlusPlus20 = 0x2b;
constexpr int kDwLangC17 = 0x2c;
constexpr int kDwLangFortran18 = 0x2d;

// Deepest DIE nesting the CU indexer follows; guards against corrupt DWARF.
constexpr int kMaxDieDepth = 128;

struct DwflDeleter {
  void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
};
using DwflPtr = std::unique_ptr<Dwfl, DwflDeleter>;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// Standard offline callbacks: separate debug files are searched next to the
// object, in its .debug/ directory and under /usr/lib/debug (by
// .gnu_debuglink and by build ID). The object itself is opened by
// dwfl_report_elf(), so find_elf is only a formality.
char* g_debuginfo_path = nullptr;  // nullptr: libdwfl's default search path.
const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &g_debuginfo_path,
};

// Message of the last libdwfl error of this thread.
std::string last_dwfl_error() {
  const char* message = dwfl_errmsg(-1);
  return message != nullptr ? message : "unknown libdwfl error";
}

std::string to_hex(std::uint64_t value) {
  char buf[2 + 16];
  buf[0] = '0';
  buf[1] = 'x';
  auto [end, ec] = std::to_chars(buf + 2, buf + sizeof buf, value, 16);
  (void)ec;  // Cannot fail: 16 hex digits always fit.
  return std::string(buf, end);
}

std::string bytes_to_hex(const unsigned char* bytes, int length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(static_cast<std::size_t>(length) * 2);
  for (int i = 0; i < length; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

std::string to_lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

bool is_pseudo_object(const std::string& path) {
  return path.empty() || path.front() == '[' || path.starts_with("linux-vdso") ||
         path.starts_with("linux-gate");
}

SymbolLanguage language_of(Dwarf_Die* cu_die) {
  switch (dwarf_srclang(cu_die)) {
    case DW_LANG_C:
    case DW_LANG_C89:
    case DW_LANG_C99:
    case DW_LANG_C11:
    case kDwLangC17:
      return SymbolLanguage::kC;
    case DW_LANG_C_plus_plus:
    case DW_LANG_C_plus_plus_03:
    case DW_LANG_C_plus_plus_11:
    case DW_LANG_C_plus_plus_14:
    case kDwLangCPlusPlus17:
    case kDwLangCPlusPlus20:
      return SymbolLanguage::kCxx;
    case DW_LANG_Fortran77:
    case DW_LANG_Fortran90:
    case DW_LANG_Fortran95:
    case DW_LANG_Fortran03:
    case DW_LANG_Fortran08:
    case kDwLangFortran18:
      return SymbolLanguage::kFortran;
    default:
      return SymbolLanguage::kUnknown;
  }
}

// String value of `name` on `die` or, through DW_AT_abstract_origin and
// DW_AT_specification, on the DIEs it refines; nullptr when absent.
const char* integrated_string(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(die, name, &attr) == nullptr) return nullptr;
  return dwarf_formstring(&attr);
}

// `file` as an absolute path when it is relative and `comp_dir` is known,
// lexically normalised ("build/../src/a.c" -> "src/a.c": compilers run
// through ccache with CCACHE_BASEDIR record such relative names).
std::string join_comp_dir(const char* file, const char* comp_dir) {
  if (file == nullptr) return {};
  std::string path(file);
  if (path.empty() || path.front() == '/' || comp_dir == nullptr || *comp_dir == '\0') {
    return path;
  }
  std::string joined(comp_dir);
  if (joined.back() != '/') joined.push_back('/');
  return std::filesystem::path(joined + path).lexically_normal().string();
}

// Demangles an Itanium-ABI name; empty when it is not one.
std::string cxa_demangle(std::string_view symbol) {
  if (!symbol.starts_with("_Z")) return {};
  std::string copy(symbol);  // __cxa_demangle needs a NUL-terminated string.
  int status = 0;
  std::unique_ptr<char, FreeDeleter> demangled(
      abi::__cxa_demangle(copy.c_str(), nullptr, nullptr, &status));
  if (status != 0 || demangled == nullptr) return {};
  return std::string(demangled.get());
}

// "__<module>_MOD_<proc>" -> "<module>::<proc>"; empty when not that shape.
std::string fortran_module_name(std::string_view symbol) {
  if (!symbol.starts_with("__")) return {};
  const std::size_t mod = symbol.find("_MOD_", 2);
  if (mod == std::string_view::npos || mod == 2 || mod + 5 >= symbol.size()) return {};
  std::string out(symbol.substr(2, mod - 2));
  out += "::";
  out += symbol.substr(mod + 5);
  return out;
}

// One address range of a concrete (out-of-line) function of a CU.
struct FunctionRange {
  Dwarf_Addr low = 0;   // DWARF (link-time) address, inclusive.
  Dwarf_Addr high = 0;  // Exclusive.
  int depth = 0;        // Nesting of subprograms; innermost wins.
  Dwarf_Die die{};
};

// One address range of a compile unit (fallback CU index, see find_cu()).
struct CuRange {
  Dwarf_Addr low = 0;           // DWARF (link-time) address, inclusive.
  Dwarf_Addr high = 0;          // Exclusive.
  Dwarf_Addr bias = 0;          // Module address minus DWARF address.
  Dwarf_Die* cu_die = nullptr;  // Owned by the Dwfl_Module.
};

// CU ranges read from the CU DIEs, for objects without .debug_aranges
// (Clang's default), which dwfl_module_addrdie() of elfutils < 0.191 cannot
// search. Built on first need.
struct CuIndex {
  bool built = false;
  std::vector<CuRange> ranges;
};

// Adds every concrete DW_TAG_subprogram below `parent` to `out`. Descends
// into namespaces, classes, Fortran modules, lexical blocks and subprograms
// (nested functions); skips inlined instances, types and variables.
void index_functions(Dwarf_Die* parent, int depth, int nesting, std::vector<FunctionRange>& out) {
  if (depth > kMaxDieDepth) return;
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    switch (dwarf_tag(&child)) {
      case DW_TAG_subprogram: {
        ptrdiff_t offset = 0;
        Dwarf_Addr base = 0, low = 0, high = 0;
        bool has_code = false;
        while ((offset = dwarf_ranges(&child, offset, &base, &low, &high)) > 0) {
          if (high > low) {
            out.push_back({low, high, nesting, child});
            has_code = true;
          }
        }
        // Nested subprograms (Fortran contained procedures, GNU C nested
        // functions) and local classes' methods live below.
        index_functions(&child, depth + 1, nesting + (has_code ? 1 : 0), out);
        break;
      }
      case DW_TAG_namespace:
      case DW_TAG_module:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
      case DW_TAG_union_type:
      case DW_TAG_interface_type:
      case DW_TAG_lexical_block:
        index_functions(&child, depth + 1, nesting, out);
        break;
      default:
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// Compile unit holding the module address `address`, or nullptr; sets *bias
// (module address minus DWARF address).
Dwarf_Die* find_cu(Dwfl_Module* module, CuIndex& index, Dwarf_Addr address, Dwarf_Addr* bias) {
  if (Dwarf_Die* cu_die = dwfl_module_addrdie(module, address, bias)) return cu_die;
  if (!index.built) {
    index.built = true;
    Dwarf_Addr cu_bias = 0;
    for (Dwarf_Die* cu_die = dwfl_module_nextcu(module, nullptr, &cu_bias); cu_die != nullptr;
         cu_die = dwfl_module_nextcu(module, cu_die, &cu_bias)) {
      ptrdiff_t offset = 0;
      Dwarf_Addr base = 0, low = 0, high = 0;
      while ((offset = dwarf_ranges(cu_die, offset, &base, &low, &high)) > 0) {
        if (high > low) index.ranges.push_back({low, high, cu_bias, cu_die});
      }
    }
  }
  for (const CuRange& range : index.ranges) {
    if (address - range.bias >= range.low && address - range.bias < range.high) {
      *bias = range.bias;
      return range.cu_die;
    }
  }
  return nullptr;
}

}  // namespace

std::string demangle_symbol(std::string_view symbol, SymbolLanguage language) {
  switch (language) {
    case SymbolLanguage::kC:
      return std::string(symbol);
    case SymbolLanguage::kCxx: {
      std::string demangled = cxa_demangle(symbol);
      return demangled.empty() ? std::string(symbol) : demangled;
    }
    case SymbolLanguage::kFortran: {
      std::string module_proc = fortran_module_name(symbol);
      if (!module_proc.empty()) return module_proc;
      if (symbol.size() > 1 && symbol.back() == '_') symbol.remove_suffix(1);
      return std::string(symbol);
    }
    case SymbolLanguage::kUnknown:
      break;
  }
  std::string demangled = cxa_demangle(symbol);
  if (!demangled.empty()) return demangled;
  std::string module_proc = fortran_module_name(symbol);
  if (!module_proc.empty()) return module_proc;
  return std::string(symbol);
}

// Per-object state, shared by the load-map entries of one object.
// ELF function symbols of one module sorted by address: libdwfl's
// dwfl_module_addrinfo() scans the whole symbol table on every call, which
// is quadratic for objects with tens of thousands of functions.
struct SymbolIndex {
  struct Entry {
    Dwarf_Addr address;  // run-time address (module bias applied)
    GElf_Xword size;     // bytes; 0 when the symbol table gives none
    const char* name;    // owned by libdwfl
    // Of several aliases at one address, the lowest rank names it: an
    // exported name (global or weak, default visibility) before a local
    // one, and a name without a leading underscore before one with it
    // (glibc: qsort, not __GI_qsort; puts, not _IO_puts).
    int rank;
  };
  bool built = false;
  std::vector<Entry> entries;
  std::deque<std::string> unversioned_;  // names with "@VERSION" cut (stable addresses)

  void build(Dwfl_Module* module) {
    built = true;
    const int n = dwfl_module_getsymtab(module);
    for (int i = 1; i < n; ++i) {
      GElf_Sym sym{};
      GElf_Addr address = 0;
      const char* name =
          dwfl_module_getsym_info(module, i, &sym, &address, nullptr, nullptr, nullptr);
      const int type = GELF_ST_TYPE(sym.st_info);
      if (name == nullptr || *name == '\0' || sym.st_shndx == SHN_UNDEF ||
          (type != STT_FUNC && type != STT_GNU_IFUNC)) {
        continue;
      }
      // A separate debug file's .symtab names versioned symbols
      // "name@@VERSION" (glibc's pthread_join@@GLIBC_2.34): the version is
      // not part of the function's name.
      if (const char* at = std::strchr(name, '@'); at != nullptr && at != name)
        name = unversioned_.emplace_back(name, at).c_str();
      const bool exported =
          GELF_ST_BIND(sym.st_info) != STB_LOCAL && GELF_ST_VISIBILITY(sym.st_other) == STV_DEFAULT;
      entries.push_back(
          {address, sym.st_size, name, (exported ? 0 : 2) + (name[0] == '_' ? 1 : 0)});
    }
    // Stable: of aliases of equal rank at one address, find() returns the
    // first in symbol-table order.
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return a.address != b.address ? a.address < b.address : a.rank < b.rank;
    });
  }

  // The symbol containing `address`, and `address` minus its start.
  const char* find(Dwarf_Addr address, GElf_Off* offset, int* rank = nullptr) const {
    auto it = std::upper_bound(entries.begin(), entries.end(), address,
                               [](Dwarf_Addr a, const Entry& e) { return a < e.address; });
    if (it == entries.begin()) return nullptr;
    --it;
    // Walk back over aliases to the first symbol at this address.
    while (it != entries.begin() && std::prev(it)->address == it->address) --it;
    const GElf_Xword size = it->size == 0 ? 1 : it->size;
    if (address >= it->address + size) return nullptr;
    *offset = address - it->address;
    if (rank != nullptr) *rank = it->rank;
    return it->name;
  }
};

struct Symbolizer::Object {
  enum class State { kUnopened, kOpen, kUnusable };
  State state = State::kUnopened;
  DwflPtr dwfl;
  Dwfl_Module* module = nullptr;  // Owned by `dwfl`.
  // Function index per compile unit, keyed by the CU DIE's data pointer
  // (unique across the main and any alternate Dwarf).
  std::unordered_map<const void*, std::vector<FunctionRange>> functions_by_cu;
  CuIndex cus;          // Fallback CU lookup, see find_cu().
  SymbolIndex symbols;  // Built on the first symbol-table lookup.
};

Symbolizer::Symbolizer(LoadMap load_map, WarningSink warn)
    : load_map_(std::move(load_map)), warn_(std::move(warn)) {
  // Entries naming the same file at the same bias (e.g. one entry per
  // segment) share one Object, so the file is opened and warned about once.
  // Keyed by views into load_map_, which never changes: O(n) expected.
  struct IdentityHash {
    std::size_t operator()(
        const std::tuple<std::string_view, std::uint64_t, std::string_view>& k) const {
      const std::hash<std::string_view> h;
      return h(std::get<0>(k)) ^ (std::hash<std::uint64_t>()(std::get<1>(k)) * 31) ^
             (h(std::get<2>(k)) * 131);
    }
  };
  std::unordered_map<std::tuple<std::string_view, std::uint64_t, std::string_view>, std::uint32_t,
                     IdentityHash>
      by_identity;
  by_identity.reserve(load_map_.size());
  entry_objects_.reserve(load_map_.size());
  for (const LoadedObject& entry : load_map_) {
    // Objects are allocated when first opened (most entries of a huge map
    // are never looked up).
    auto [it, inserted] = by_identity.try_emplace({entry.path, entry.load_bias, entry.build_id},
                                                  static_cast<std::uint32_t>(objects_.size()));
    if (inserted) objects_.emplace_back();
    entry_objects_.push_back(it->second);
  }
  build_address_index();
}

void Symbolizer::build_address_index() {
  // Sweep over the range bounds in address order with a min-heap of the
  // entries open there (removed lazily): each elementary interval between
  // two bounds gets the lowest-indexed entry that contains it. O(n log n)
  // time, O(n) memory; find_object() is then one binary search.
  struct Bound {
    std::uint64_t address;
    int entry;
    bool opens;
  };
  std::vector<Bound> bounds;
  bounds.reserve(2 * load_map_.size());
  for (std::size_t i = 0; i < load_map_.size(); ++i) {
    const LoadedObject& e = load_map_[i];
    if (e.end <= e.start) continue;  // contains() nothing
    bounds.push_back({e.start, static_cast<int>(i), true});
    bounds.push_back({e.end, static_cast<int>(i), false});
  }
  std::sort(bounds.begin(), bounds.end(),
            [](const Bound& a, const Bound& b) { return a.address < b.address; });
  std::vector<bool> closed(load_map_.size(), false);
  std::priority_queue<int, std::vector<int>, std::greater<>> open;
  for (std::size_t k = 0; k < bounds.size();) {
    const std::uint64_t at = bounds[k].address;
    for (; k < bounds.size() && bounds[k].address == at; ++k) {
      if (bounds[k].opens) {
        open.push(bounds[k].entry);
      } else {
        closed[static_cast<std::size_t>(bounds[k].entry)] = true;
      }
    }
    while (!open.empty() && closed[static_cast<std::size_t>(open.top())]) open.pop();
    const int entry = open.empty() ? -1 : open.top();
    if (range_entries_.empty() || range_entries_.back() != entry) {
      range_starts_.push_back(at);
      range_entries_.push_back(entry);
    }
  }
}

Symbolizer::~Symbolizer() = default;

void Symbolizer::warn(const std::string& message) const {
  if (warn_) {
    warn_(message);
  } else {
    std::fprintf(stderr, "parlot: warning: %s\n", message.c_str());
  }
}

int Symbolizer::find_object(std::uint64_t address) const {
  const auto it = std::upper_bound(range_starts_.begin(), range_starts_.end(), address);
  if (it == range_starts_.begin()) return -1;
  return range_entries_[static_cast<std::size_t>(it - range_starts_.begin() - 1)];
}

bool Symbolizer::open_object(std::size_t index) {
  std::unique_ptr<Object>& slot = objects_[entry_objects_[index]];
  if (!slot) slot = std::make_unique<Object>();
  Object& object = *slot;
  if (object.state != Object::State::kUnopened) return object.state == Object::State::kOpen;
  object.state = Object::State::kUnusable;  // Until proven otherwise.
  const LoadedObject& entry = load_map_[index];
  if (is_pseudo_object(entry.path)) return false;
  // A FIFO or device in the load map (a damaged or hostile trace) would block
  // or misbehave when opened: only regular files are read.
  std::error_code ec;
  const auto status = std::filesystem::status(entry.path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    warn(entry.path + " is not a regular file; its addresses stay unnamed");
    return false;
  }

  DwflPtr dwfl(dwfl_begin(&kCallbacks));
  if (dwfl == nullptr) {
    warn("cannot symbolize addresses in " + entry.path + ": libdwfl failed to start (" +
         last_dwfl_error() + ")");
    return false;
  }
  dwfl_report_begin(dwfl.get());
  // add_p_vaddr=true: the module's bias is exactly `load_bias` (ignored by
  // libdwfl for ET_EXEC files, whose bias is always 0).
  Dwfl_Module* module = dwfl_report_elf(dwfl.get(), entry.path.c_str(), entry.path.c_str(), -1,
                                        entry.load_bias, /*add_p_vaddr=*/true);
  if (module == nullptr) {
    warn("cannot read " + entry.path + " (" + last_dwfl_error() +
         "); addresses in it are shown as hexadecimal numbers");
    return false;
  }
  if (dwfl_report_end(dwfl.get(), nullptr, nullptr) != 0) {
    warn("cannot symbolize addresses in " + entry.path + ": " + last_dwfl_error());
    return false;
  }

  if (!entry.build_id.empty()) {
    const unsigned char* bits = nullptr;
    GElf_Addr vaddr = 0;
    const int length = dwfl_module_build_id(module, &bits, &vaddr);
    const std::string on_disk = length > 0 ? bytes_to_hex(bits, length) : std::string();
    if (on_disk != to_lower(entry.build_id)) {
      warn("build ID mismatch for " + entry.path + ": the trace recorded " + entry.build_id +
           " but the file on disk has " + (on_disk.empty() ? "no build ID" : on_disk) +
           ", so it was probably rebuilt after the trace was taken and its function names "
           "and lines may be wrong");
    }
  }

  object.dwfl = std::move(dwfl);
  object.module = module;
  object.state = Object::State::kOpen;
  return true;
}

SourceLocation Symbolizer::lookup(std::uint64_t address) {
  SourceLocation loc;
  loc.function = to_hex(address);
  const int index = find_object(address);
  if (index < 0) return loc;
  const auto entry_index = static_cast<std::size_t>(index);
  const LoadedObject& entry = load_map_[entry_index];
  loc.dso = entry.path;
  loc.offset = address - entry.load_bias;
  if (!open_object(entry_index)) return loc;
  Object& object = *objects_[entry_objects_[entry_index]];
  Dwfl_Module* module = object.module;

  // ELF symbol containing the address (.symtab, else .dynsym or
  // .gnu_debugdata), looked up only when DWARF alone is not enough.
  bool symbol_looked_up = false;
  GElf_Off symbol_offset = 0;  // address - symbol start, bytes.
  const char* symbol_name = nullptr;
  int symbol_rank = 0;
  auto elf_symbol = [&]() -> const char* {
    if (!symbol_looked_up) {
      symbol_looked_up = true;
      if (!object.symbols.built) object.symbols.build(module);
      symbol_name = object.symbols.find(address, &symbol_offset, &symbol_rank);
    }
    return symbol_name;
  };

  // DWARF: compile unit, then the innermost concrete function in it.
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu_die = find_cu(module, object.cus, address, &bias);
  SymbolLanguage language = SymbolLanguage::kUnknown;
  const FunctionRange* function = nullptr;
  if (cu_die != nullptr) {
    language = language_of(cu_die);
    auto [it, inserted] = object.functions_by_cu.try_emplace(cu_die->addr);
    if (inserted) index_functions(cu_die, 0, 0, it->second);
    const Dwarf_Addr pc = address - bias;
    for (const FunctionRange& range : it->second) {
      if (pc >= range.low && pc < range.high &&
          (function == nullptr || range.depth > function->depth)) {
        function = &range;
      }
    }
  }

  Dwarf_Addr entry_address = address;  // Function entry, module address.
  if (function != nullptr) {
    Dwarf_Die die = function->die;
    loc.from_debug_info = true;
    const char* linkage = integrated_string(&die, DW_AT_linkage_name);
    if (linkage == nullptr) linkage = integrated_string(&die, DW_AT_MIPS_linkage_name);
    const char* name = integrated_string(&die, DW_AT_name);
    if ((language == SymbolLanguage::kC || language == SymbolLanguage::kUnknown) &&
        elf_symbol() != nullptr && symbol_rank < 2 &&
        symbol_offset == address - (function->low + bias)) {
      // C (or assembler): the exported name of the function when it has
      // one (a library's `qsort`, `printf`, `getpid`), not an internal
      // alias given by an asm label in DWARF (glibc's `__GI_qsort`) or the
      // name of its definition (`__printf`, `__getpid`).
      loc.function = symbol_name;
    } else if (linkage != nullptr && *linkage != '\0') {
      loc.function = demangle_symbol(linkage, language);
    } else if (language == SymbolLanguage::kCxx && elf_symbol() != nullptr &&
               std::string_view(symbol_name).starts_with("_Z") &&
               symbol_offset == address - (function->low + bias)) {
      // No linkage name in DWARF (e.g. -gline-tables-only): the symbol that
      // starts where this function starts carries the qualified name.
      loc.function = demangle_symbol(symbol_name, language);
    } else if (name != nullptr && *name != '\0') {
      loc.function = name;
    } else if (elf_symbol() != nullptr) {
      loc.function = demangle_symbol(symbol_name, language);
    }

    Dwarf_Attribute attr;
    const char* comp_dir = dwarf_formstring(dwarf_attr(cu_die, DW_AT_comp_dir, &attr));
    loc.file = join_comp_dir(dwarf_decl_file(&die), comp_dir);
    int line = 0;
    if (dwarf_decl_line(&die, &line) == 0 && line > 0) loc.line = line;
    Dwarf_Addr entry_pc = 0;
    if (dwarf_entrypc(&die, &entry_pc) == 0) entry_address = entry_pc + bias;
  } else if (elf_symbol() != nullptr) {
    loc.function = demangle_symbol(symbol_name, language);
    entry_address = address - symbol_offset;
  }

  // File/line from the line table at the function's entry when DW_AT_decl_*
  // gave nothing (or when only the symbol table knew the function).
  if (cu_die != nullptr && (loc.file.empty() || loc.line == 0)) {
    if (Dwarf_Line* line = dwarf_getsrc_die(cu_die, entry_address - bias); line != nullptr) {
      int lineno = 0;
      const char* file = dwarf_linesrc(line, nullptr, nullptr);
      if (file != nullptr && dwarf_lineno(line, &lineno) == 0) {
        Dwarf_Attribute attr;
        const char* comp_dir = dwarf_formstring(dwarf_attr(cu_die, DW_AT_comp_dir, &attr));
        if (loc.file.empty()) loc.file = join_comp_dir(file, comp_dir);
        if (loc.line == 0) loc.line = lineno;
        loc.from_debug_info = true;
      }
    }
  }
  return loc;
}

const SourceLine& Symbolizer::source_line(std::uint64_t address) {
  if (auto it = line_cache_.find(address); it != line_cache_.end()) return it->second;
  SourceLine out;
  if (const int index = find_object(address); index >= 0) {
    const auto entry_index = static_cast<std::size_t>(index);
    if (open_object(entry_index)) {
      Object& object = *objects_[entry_objects_[entry_index]];
      Dwarf_Addr bias = 0;
      Dwarf_Die* cu_die = find_cu(object.module, object.cus, address, &bias);
      if (cu_die != nullptr) {
        if (Dwarf_Line* line = dwarf_getsrc_die(cu_die, address - bias); line != nullptr) {
          int lineno = 0;
          const char* file = dwarf_linesrc(line, nullptr, nullptr);
          if (file != nullptr && dwarf_lineno(line, &lineno) == 0 && lineno > 0) {
            Dwarf_Attribute attr;
            const char* comp_dir = dwarf_formstring(dwarf_attr(cu_die, DW_AT_comp_dir, &attr));
            out.file = join_comp_dir(file, comp_dir);
            out.line = lineno;
          }
        }
      }
    }
  }
  return line_cache_.emplace(address, std::move(out)).first->second;
}

const SourceLocation& Symbolizer::resolve(std::uint64_t address) {
  if (auto it = cache_.find(address); it != cache_.end()) return it->second;
  // unordered_map nodes are stable: the reference survives later inserts.
  return cache_.emplace(address, lookup(address)).first->second;
}

}  // namespace parlot
