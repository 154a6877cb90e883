// Tests of parlot::Symbolizer against real objects: the fixture libraries
// (dlopen'ed into this process), this test executable (PIE) and a non-PIE
// helper executable that has already exited when its addresses are resolved.
#include "parlot/symbolizer.h"

#include <dirent.h>
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fixture_cxx.h"
#include "self_load_map.h"

// Functions of the test executable itself (PIE), resolved by SelfExecutable.
const int symb_test_local_function_line = __LINE__ + 1;
extern "C" int symb_test_local_function(int x) {
  return x * 5;
}

namespace symb_test {
struct Widget {
  static int frob(int x);
};
const int kFrobLine = __LINE__ + 1;
int Widget::frob(int x) {
  return x + 11;
}
}  // namespace symb_test

namespace parlot {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::uint64_t address_of(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

template <typename F>
std::uint64_t function_address(F* f) {
  return reinterpret_cast<std::uintptr_t>(f);
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// dlopen()s `path` once for the whole test run (never closed, so that load
// maps taken later stay valid). Returns nullptr on failure (test fails).
void* library(const char* path) {
  static std::map<std::string, void*> handles;
  auto [it, inserted] = handles.try_emplace(path, nullptr);
  if (inserted) {
    it->second = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (it->second == nullptr) ADD_FAILURE() << "dlopen(" << path << "): " << dlerror();
  }
  return it->second;
}

// Address of `name` in the library at `path` (0 and a test failure if absent).
std::uint64_t symbol_address(const char* path, const char* name) {
  void* handle = library(path);
  if (handle == nullptr) return 0;
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) ADD_FAILURE() << "dlsym(" << name << ") in " << path;
  return address_of(symbol);
}

int int_symbol(const char* path, const char* name) {
  const std::uint64_t address = symbol_address(path, name);
  return address == 0 ? -1 : *reinterpret_cast<const int*>(address);
}

// Load-map entry of this process holding `address`, or nullptr.
const LoadedObject* entry_for(const LoadMap& map, std::uint64_t address) {
  for (const LoadedObject& object : map) {
    if (object.contains(address)) return &object;
  }
  return nullptr;
}

LoadedObject make_object(std::uint64_t start, std::uint64_t end, std::uint64_t load_bias,
                         std::string build_id, std::string path) {
  LoadedObject object;
  object.start = start;
  object.end = end;
  object.load_bias = load_bias;
  object.build_id = std::move(build_id);
  object.path = std::move(path);
  return object;
}

// Collects warnings.
struct Warnings {
  std::vector<std::string> messages;
  Symbolizer::WarningSink sink() {
    return [this](const std::string& message) { messages.push_back(message); };
  }
};

// 1-based number of the first line of `path` whose text, leading blanks
// removed, starts with `prefix`; 0 when none does.
int line_starting_with(const char* path, const std::string& prefix) {
  std::ifstream in(path);
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    const std::size_t first = text.find_first_not_of(" \t");
    if (first != std::string::npos && text.compare(first, prefix.size(), prefix) == 0) return line;
  }
  return 0;
}

// Expects `loc` to describe a function found through DWARF.
void expect_dwarf(const SourceLocation& loc, const std::string& function, const std::string& file,
                  int line) {
  EXPECT_EQ(loc.function, function);
  EXPECT_EQ(base_name(loc.file), file);
  EXPECT_EQ(loc.line, line);
  EXPECT_TRUE(loc.from_debug_info);
}

// --- demangle_symbol --------------------------------------------------------

TEST(DemangleSymbol, CNamesAreNeverRewritten) {
  EXPECT_EQ(demangle_symbol("main", SymbolLanguage::kC), "main");
  EXPECT_EQ(demangle_symbol("compute_", SymbolLanguage::kC), "compute_");
  EXPECT_EQ(demangle_symbol("__m_MOD_p", SymbolLanguage::kC), "__m_MOD_p");
  EXPECT_EQ(demangle_symbol("_Z3foov", SymbolLanguage::kC), "_Z3foov");
}

TEST(DemangleSymbol, CxxNamesAreDemangled) {
  EXPECT_EQ(demangle_symbol("_ZN2ns3BoxIiE3getEi", SymbolLanguage::kCxx), "ns::Box<int>::get(int)");
  EXPECT_EQ(demangle_symbol("_ZNK2ns5Shape5sidesEv", SymbolLanguage::kCxx),
            "ns::Shape::sides() const");
  EXPECT_EQ(demangle_symbol("main", SymbolLanguage::kCxx), "main");
  EXPECT_EQ(demangle_symbol("_Znot_valid", SymbolLanguage::kCxx), "_Znot_valid");
  EXPECT_EQ(demangle_symbol("", SymbolLanguage::kCxx), "");
}

TEST(DemangleSymbol, FortranNamingRules) {
  EXPECT_EQ(demangle_symbol("__geometry_MOD_area", SymbolLanguage::kFortran), "geometry::area");
  EXPECT_EQ(demangle_symbol("__my_mod_MOD_my_proc", SymbolLanguage::kFortran), "my_mod::my_proc");
  EXPECT_EQ(demangle_symbol("ext_sub_", SymbolLanguage::kFortran), "ext_sub");
  EXPECT_EQ(demangle_symbol("bound_c", SymbolLanguage::kFortran), "bound_c");
  EXPECT_EQ(demangle_symbol("_", SymbolLanguage::kFortran), "_");
}

TEST(DemangleSymbol, UnknownLanguageKeepsTrailingUnderscore) {
  EXPECT_EQ(demangle_symbol("ext_sub_", SymbolLanguage::kUnknown), "ext_sub_");
  EXPECT_EQ(demangle_symbol("__geometry_MOD_area", SymbolLanguage::kUnknown), "geometry::area");
  EXPECT_EQ(demangle_symbol("_ZN2ns1fEv", SymbolLanguage::kUnknown), "ns::f()");
  EXPECT_EQ(demangle_symbol("__libc_start_main", SymbolLanguage::kUnknown), "__libc_start_main");
}

// --- C library with DWARF ----------------------------------------------------

TEST(SymbolizerC, ExportedFunctionFromDwarf) {
  const std::uint64_t address = symbol_address(SYMB_FIXTURE_C_DEBUG, "symb_c_add");
  const int line = int_symbol(SYMB_FIXTURE_C_DEBUG, "symb_c_add_line");
  const LoadMap map = test::self_load_map();
  const LoadedObject* entry = entry_for(map, address);
  ASSERT_NE(entry, nullptr);

  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  const SourceLocation& loc = symbolizer.resolve(address);
  expect_dwarf(loc, "symb_c_add", "fixture_c.c", line);
  EXPECT_EQ(loc.file, SYMB_FIXTURE_C_SOURCE);  // Absolute, as compiled.
  EXPECT_EQ(loc.dso, entry->path);
  EXPECT_EQ(base_name(loc.dso), base_name(SYMB_FIXTURE_C_DEBUG));
  EXPECT_EQ(loc.offset, address - entry->load_bias);
  EXPECT_THAT(warnings.messages, IsEmpty());
}

TEST(SymbolizerC, StaticFunctionFromDwarf) {
  void* handle = library(SYMB_FIXTURE_C_DEBUG);
  ASSERT_NE(handle, nullptr);
  using Getter = int (*(*)())(int);
  auto getter = reinterpret_cast<Getter>(dlsym(handle, "symb_c_static_address"));
  ASSERT_NE(getter, nullptr);
  const std::uint64_t address = function_address(getter());

  Symbolizer symbolizer(test::self_load_map());
  expect_dwarf(symbolizer.resolve(address), "symb_c_static_helper", "fixture_c.c",
               int_symbol(SYMB_FIXTURE_C_DEBUG, "symb_c_static_helper_line"));
}

TEST(SymbolizerC, CNamesKeepTrailingUnderscoreAndModLookalikes) {
  const std::uint64_t trailing = symbol_address(SYMB_FIXTURE_C_DEBUG, "symb_c_trailing_");
  const std::uint64_t fake = symbol_address(SYMB_FIXTURE_C_DEBUG, "__symb_fake_MOD_thing");
  Symbolizer symbolizer(test::self_load_map());
  expect_dwarf(symbolizer.resolve(trailing), "symb_c_trailing_", "fixture_c.c",
               int_symbol(SYMB_FIXTURE_C_DEBUG, "symb_c_trailing__line"));
  expect_dwarf(symbolizer.resolve(fake), "__symb_fake_MOD_thing", "fixture_c.c",
               int_symbol(SYMB_FIXTURE_C_DEBUG, "symb_c_fake_module_line"));
}

TEST(SymbolizerC, AddressInsideFunctionBodyNamesTheFunction) {
  const std::uint64_t address = symbol_address(SYMB_FIXTURE_C_DEBUG, "symb_c_add");
  Symbolizer symbolizer(test::self_load_map());
  const SourceLocation& loc = symbolizer.resolve(address + 4);
  EXPECT_EQ(loc.function, "symb_c_add");
  EXPECT_EQ(loc.line, int_symbol(SYMB_FIXTURE_C_DEBUG, "symb_c_add_line"));
}

// --- C library without DWARF ---------------------------------------------------

TEST(SymbolizerC, SymtabFallbackWithoutDebugInfo) {
  const std::uint64_t exported = symbol_address(SYMB_FIXTURE_C_NODEBUG, "symb_c_add");
  void* handle = library(SYMB_FIXTURE_C_NODEBUG);
  ASSERT_NE(handle, nullptr);
  using Getter = int (*(*)())(int);
  auto getter = reinterpret_cast<Getter>(dlsym(handle, "symb_c_static_address"));
  ASSERT_NE(getter, nullptr);
  const std::uint64_t file_local = function_address(getter());
  const std::uint64_t trailing = symbol_address(SYMB_FIXTURE_C_NODEBUG, "symb_c_trailing_");

  const LoadMap map = test::self_load_map();
  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  for (auto [address, name] :
       {std::pair{exported, "symb_c_add"}, std::pair{file_local, "symb_c_static_helper"},
        // No DWARF language: the underscore stays.
        std::pair{trailing, "symb_c_trailing_"}}) {
    const SourceLocation& loc = symbolizer.resolve(address);
    EXPECT_EQ(loc.function, name);
    EXPECT_EQ(loc.file, "");
    EXPECT_EQ(loc.line, 0);
    EXPECT_FALSE(loc.from_debug_info);
    EXPECT_EQ(base_name(loc.dso), base_name(SYMB_FIXTURE_C_NODEBUG));
    EXPECT_EQ(loc.offset, address - entry_for(map, address)->load_bias);
  }
  EXPECT_THAT(warnings.messages, IsEmpty());
}

TEST(SymbolizerC, DynsymFallbackWhenFullyStripped) {
  const std::uint64_t address = symbol_address(SYMB_FIXTURE_C_STRIPPED, "symb_c_add");
  Warnings warnings;
  Symbolizer symbolizer(test::self_load_map(), warnings.sink());
  const SourceLocation& loc = symbolizer.resolve(address);
  EXPECT_EQ(loc.function, "symb_c_add");
  EXPECT_EQ(loc.file, "");
  EXPECT_EQ(loc.line, 0);
  EXPECT_FALSE(loc.from_debug_info);
  EXPECT_EQ(loc.dso, SYMB_FIXTURE_C_STRIPPED);
  EXPECT_THAT(warnings.messages, IsEmpty());
}

TEST(SymbolizerC, SeparateDebugFileThroughDebuglink) {
  const std::uint64_t exported = symbol_address(SYMB_FIXTURE_C_DEBUGLINK, "symb_c_add");
  void* handle = library(SYMB_FIXTURE_C_DEBUGLINK);
  ASSERT_NE(handle, nullptr);
  using Getter = int (*(*)())(int);
  auto getter = reinterpret_cast<Getter>(dlsym(handle, "symb_c_static_address"));
  ASSERT_NE(getter, nullptr);
  const std::uint64_t file_local = function_address(getter());

  Warnings warnings;
  Symbolizer symbolizer(test::self_load_map(), warnings.sink());
  expect_dwarf(symbolizer.resolve(exported), "symb_c_add", "fixture_c.c",
               int_symbol(SYMB_FIXTURE_C_DEBUGLINK, "symb_c_add_line"));
  // Not in .dynsym and the file has no .symtab: only the debug file knows it.
  expect_dwarf(symbolizer.resolve(file_local), "symb_c_static_helper", "fixture_c.c",
               int_symbol(SYMB_FIXTURE_C_DEBUGLINK, "symb_c_static_helper_line"));
  EXPECT_EQ(symbolizer.resolve(exported).dso, SYMB_FIXTURE_C_DEBUGLINK);
  EXPECT_THAT(warnings.messages, IsEmpty());
}

// --- C++ ---------------------------------------------------------------------

TEST(SymbolizerCxx, QualifiedDemangledNamesFilesAndLines) {
  void* handle = library(SYMB_FIXTURE_CXX);
  ASSERT_NE(handle, nullptr);
  auto fill = reinterpret_cast<void (*)(SymbCxxFixture*)>(dlsym(handle, "symb_cxx_fixture"));
  ASSERT_NE(fill, nullptr);
  SymbCxxFixture f{};
  fill(&f);
  const std::uint64_t constructor = symbol_address(SYMB_FIXTURE_CXX, "_ZN4symb8geometry5ShapeC1Ei");

  Warnings warnings;
  Symbolizer symbolizer(test::self_load_map(), warnings.sink());
  const std::string file = "fixture_cxx.cpp";
  expect_dwarf(symbolizer.resolve(address_of(f.free_function)), "symb::geometry::area(int, int)",
               file, f.free_function_line);
  expect_dwarf(symbolizer.resolve(address_of(f.function_template)),
               "double symb::geometry::twice<double>(double)", file, f.function_template_line);
  expect_dwarf(symbolizer.resolve(address_of(f.member_function)),
               "symb::geometry::Shape::sides() const", file, f.member_function_line);
  expect_dwarf(symbolizer.resolve(constructor), "symb::geometry::Shape::Shape(int)", file,
               f.constructor_line);
  expect_dwarf(symbolizer.resolve(address_of(f.class_template_member)),
               "symb::geometry::Box<int>::scaled(int) const", file, f.class_template_member_line);
  expect_dwarf(symbolizer.resolve(address_of(f.static_member)),
               "symb::geometry::Box<long>::make(long)", file, f.static_member_line);
  expect_dwarf(symbolizer.resolve(address_of(f.anonymous_namespace_function)),
               "symb::(anonymous namespace)::helper(int)", file,
               f.anonymous_namespace_function_line);
  expect_dwarf(symbolizer.resolve(address_of(f.operator_function)),
               "symb::geometry::operator+(symb::geometry::Vec, symb::geometry::Vec)", file,
               f.operator_function_line);
  expect_dwarf(symbolizer.resolve(address_of(f.extern_c_function)), "symb_cxx_plain", file,
               f.extern_c_function_line);
  EXPECT_THAT(warnings.messages, IsEmpty());
}

// --- Fortran -----------------------------------------------------------------

TEST(SymbolizerFortran, ModuleAndExternalProcedures) {
#ifndef SYMB_FIXTURE_FORTRAN
  GTEST_SKIP() << "no Fortran compiler: the Fortran fixture was not built";
#else
  const std::uint64_t area = symbol_address(SYMB_FIXTURE_FORTRAN, "__symb_geometry_MOD_symb_area");
  const std::uint64_t ext_sub = symbol_address(SYMB_FIXTURE_FORTRAN, "symb_ext_sub_");
  const int area_line = line_starting_with(SYMB_FIXTURE_FORTRAN_SOURCE, "function symb_area(");
  const int ext_sub_line =
      line_starting_with(SYMB_FIXTURE_FORTRAN_SOURCE, "subroutine symb_ext_sub(");
  ASSERT_GT(area_line, 0);
  ASSERT_GT(ext_sub_line, 0);

  Warnings warnings;
  Symbolizer symbolizer(test::self_load_map(), warnings.sink());
  expect_dwarf(symbolizer.resolve(area), "symb_geometry::symb_area", "fixture_fortran.f90",
               area_line);
  expect_dwarf(symbolizer.resolve(ext_sub), "symb_ext_sub", "fixture_fortran.f90", ext_sub_line);
  EXPECT_EQ(base_name(symbolizer.resolve(area).dso), base_name(SYMB_FIXTURE_FORTRAN));
  EXPECT_THAT(warnings.messages, IsEmpty());
#endif
}

// --- Executables ---------------------------------------------------------------

TEST(SymbolizerExecutable, PieTestExecutableItself) {
  const LoadMap map = test::self_load_map();
  ASSERT_FALSE(map.empty());
  const std::uint64_t local = function_address(&symb_test_local_function);
  const std::uint64_t frob = function_address(&symb_test::Widget::frob);
  const LoadedObject* entry = entry_for(map, local);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->path, test::self_exe_path());
  EXPECT_NE(entry->load_bias, 0u) << "the test executable is expected to be PIE";

  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  const SourceLocation& loc = symbolizer.resolve(local);
  expect_dwarf(loc, "symb_test_local_function", "symbolizer_test.cpp",
               symb_test_local_function_line);
  EXPECT_EQ(loc.dso, entry->path);
  EXPECT_EQ(loc.offset, local - entry->load_bias);
  expect_dwarf(symbolizer.resolve(frob), "symb_test::Widget::frob(int)", "symbolizer_test.cpp",
               symb_test::kFrobLine);
  EXPECT_THAT(warnings.messages, IsEmpty());
}

// Runs the non-PIE helper; fills its load map and function addresses/lines.
void run_nonpie_helper(LoadMap& map, std::map<std::string, std::pair<std::uint64_t, int>>& fns) {
  FILE* pipe = popen(SYMB_NONPIE_HELPER, "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0);
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "object") {
      LoadedObject o;
      in >> std::hex >> o.start >> o.end >> o.load_bias >> o.build_id;
      if (o.build_id == "-") o.build_id.clear();
      in >> std::ws;
      std::getline(in, o.path);
      map.push_back(o);
    } else if (kind == "function") {
      std::string key;
      std::uint64_t address = 0;
      int source_line = 0;
      in >> key >> std::hex >> address >> std::dec >> source_line;
      fns[key] = {address, source_line};
    }
  }
}

TEST(SymbolizerExecutable, NonPieExecutableAfterItExited) {
  LoadMap map;
  std::map<std::string, std::pair<std::uint64_t, int>> fns;
  ASSERT_NO_FATAL_FAILURE(run_nonpie_helper(map, fns));
  ASSERT_EQ(fns.count("compute"), 1u);
  ASSERT_EQ(fns.count("scale"), 1u);
  const auto [compute, compute_line] = fns["compute"];
  const auto [scale, scale_line] = fns["scale"];
  const LoadedObject* entry = entry_for(map, compute);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->path, SYMB_NONPIE_HELPER);
  EXPECT_EQ(entry->load_bias, 0u) << "the helper is expected to be non-PIE";

  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  const SourceLocation& loc = symbolizer.resolve(compute);
  expect_dwarf(loc, "symb_nonpie_compute", "nonpie_helper.cpp", compute_line);
  EXPECT_EQ(loc.offset, compute);
  EXPECT_EQ(loc.dso, SYMB_NONPIE_HELPER);
  expect_dwarf(symbolizer.resolve(scale), "symb_nonpie::scale(double, int)", "nonpie_helper.cpp",
               scale_line);
  EXPECT_THAT(warnings.messages, IsEmpty());
}

// --- Load map problems -----------------------------------------------------------

TEST(SymbolizerLoadMap, AddressInNoObjectIsHex) {
  Warnings warnings;
  Symbolizer symbolizer(test::self_load_map(), warnings.sink());
  const SourceLocation& loc = symbolizer.resolve(0x10);
  EXPECT_EQ(loc.function, "0x10");
  EXPECT_EQ(loc.file, "");
  EXPECT_EQ(loc.line, 0);
  EXPECT_EQ(loc.dso, "");
  EXPECT_EQ(loc.offset, 0u);
  EXPECT_FALSE(loc.from_debug_info);
  EXPECT_EQ(symbolizer.resolve(0xffffffffffffff00).function, "0xffffffffffffff00");
  EXPECT_THAT(warnings.messages, IsEmpty());
}

TEST(SymbolizerLoadMap, EmptyLoadMap) {
  Warnings warnings;
  Symbolizer symbolizer(LoadMap{}, warnings.sink());
  EXPECT_EQ(symbolizer.resolve(0x401000).function, "0x401000");
  EXPECT_EQ(symbolizer.resolve(0x401000).dso, "");
  EXPECT_THAT(warnings.messages, IsEmpty());
}

TEST(SymbolizerLoadMap, MissingFileWarnsOnceAndGivesHex) {
  const std::string path = "/nonexistent/parlot/libgone.so";
  const LoadMap map = {
      make_object(0x7f0000001000, 0x7f0000003000, 0x7f0000000000, "0123456789abcdef", path)};
  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  const SourceLocation& first = symbolizer.resolve(0x7f0000001234);
  EXPECT_EQ(first.function, "0x7f0000001234");
  EXPECT_EQ(first.dso, path);
  EXPECT_EQ(first.offset, 0x1234u);
  EXPECT_EQ(first.file, "");
  EXPECT_FALSE(first.from_debug_info);
  EXPECT_EQ(symbolizer.resolve(0x7f0000002000).function, "0x7f0000002000");
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_THAT(warnings.messages[0], HasSubstr(path));
}

TEST(SymbolizerLoadMap, FileThatIsNotElfWarnsOnce) {
  const LoadMap map = {make_object(0x1000, 0x2000, 0, "", SYMB_FIXTURE_C_SOURCE)};
  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  EXPECT_EQ(symbolizer.resolve(0x1800).function, "0x1800");
  EXPECT_EQ(symbolizer.resolve(0x1900).function, "0x1900");
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_THAT(warnings.messages[0], HasSubstr(SYMB_FIXTURE_C_SOURCE));
}

TEST(SymbolizerLoadMap, PseudoObjectsAreNotWarnedAbout) {
  const LoadMap map = {make_object(0x1000, 0x2000, 0, "", "linux-vdso.so.1"),
                       make_object(0x3000, 0x4000, 0, "", "[vdso]"),
                       make_object(0x5000, 0x6000, 0, "", "")};
  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  EXPECT_EQ(symbolizer.resolve(0x1010).function, "0x1010");
  EXPECT_EQ(symbolizer.resolve(0x1010).dso, "linux-vdso.so.1");
  EXPECT_EQ(symbolizer.resolve(0x3010).function, "0x3010");
  EXPECT_EQ(symbolizer.resolve(0x5010).function, "0x5010");
  EXPECT_THAT(warnings.messages, IsEmpty());
}

TEST(SymbolizerLoadMap, WrongBuildIdWarnsOnceButStillSymbolizes) {
  const std::uint64_t add = symbol_address(SYMB_FIXTURE_C_DEBUG, "symb_c_add");
  const std::uint64_t trailing = symbol_address(SYMB_FIXTURE_C_DEBUG, "symb_c_trailing_");
  LoadMap map = test::self_load_map();
  LoadedObject* entry = const_cast<LoadedObject*>(entry_for(map, add));
  ASSERT_NE(entry, nullptr);
  ASSERT_FALSE(entry->build_id.empty());
  const std::string real_build_id = entry->build_id;
  entry->build_id = "00112233445566778899aabbccddeeff00112233";

  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  EXPECT_EQ(symbolizer.resolve(add).function, "symb_c_add");
  EXPECT_EQ(symbolizer.resolve(trailing).function, "symb_c_trailing_");
  EXPECT_EQ(symbolizer.resolve(add + 1).function, "symb_c_add");
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_THAT(warnings.messages[0], HasSubstr(entry->path));
  EXPECT_THAT(warnings.messages[0], HasSubstr("build ID"));
  EXPECT_THAT(warnings.messages[0], HasSubstr("00112233445566778899aabbccddeeff00112233"));
  EXPECT_THAT(warnings.messages[0], HasSubstr(real_build_id));
}

TEST(SymbolizerLoadMap, EmptyRecordedBuildIdIsNotChecked) {
  const std::uint64_t add = symbol_address(SYMB_FIXTURE_C_DEBUG, "symb_c_add");
  LoadMap map = test::self_load_map();
  for (LoadedObject& object : map) object.build_id.clear();
  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  EXPECT_EQ(symbolizer.resolve(add).function, "symb_c_add");
  EXPECT_THAT(warnings.messages, IsEmpty());
}

TEST(SymbolizerLoadMap, EntriesOfTheSameObjectWarnOnce) {
  // E.g. a load map with one entry per PT_LOAD segment.
  const std::string path = "/nonexistent/parlot/libsplit.so";
  const LoadMap map = {make_object(0x10000, 0x11000, 0x10000, "abcd", path),
                       make_object(0x12000, 0x13000, 0x10000, "abcd", path)};
  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  EXPECT_EQ(symbolizer.resolve(0x10010).offset, 0x10u);
  EXPECT_EQ(symbolizer.resolve(0x12010).offset, 0x2010u);
  EXPECT_EQ(symbolizer.resolve(0x12010).dso, path);
  EXPECT_EQ(warnings.messages.size(), 1u);
}

TEST(SymbolizerLoadMap, DefaultSinkWritesToStderr) {
  const LoadMap map = {make_object(0x1000, 0x2000, 0, "", "/nonexistent/parlot/libstderr.so")};
  Symbolizer symbolizer(map);
  ::testing::internal::CaptureStderr();
  symbolizer.resolve(0x1100);
  symbolizer.resolve(0x1200);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("parlot: warning: "));
  EXPECT_THAT(err, HasSubstr("/nonexistent/parlot/libstderr.so"));
  EXPECT_EQ(err.find("parlot: warning: "), err.rfind("parlot: warning: ")) << err;
}

TEST(SymbolizerLoadMap, WholeProcessHasMatchingBuildIds) {
  // Every object of this process (executable, libc, libstdc++, fixtures...)
  // opens without a warning: build IDs read from memory match the files.
  for (const char* path : {SYMB_FIXTURE_C_DEBUG, SYMB_FIXTURE_C_NODEBUG, SYMB_FIXTURE_CXX}) {
    ASSERT_NE(library(path), nullptr);
  }
  const LoadMap map = test::self_load_map();
  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  for (const LoadedObject& object : map) {
    const SourceLocation& loc = symbolizer.resolve(object.start);
    EXPECT_EQ(loc.dso, object.path);
    EXPECT_FALSE(loc.function.empty());
  }
  EXPECT_THAT(warnings.messages, IsEmpty());
}

TEST(SymbolizerLoadMap, LibcFunctionFromSymbolTable) {
  // Debian's libc has no .symtab and no local debug info: .dynsym gives the
  // exported name.
  const std::uint64_t address = function_address(&getppid);
  Warnings warnings;
  Symbolizer symbolizer(test::self_load_map(), warnings.sink());
  const SourceLocation& loc = symbolizer.resolve(address);
  EXPECT_THAT(loc.function, HasSubstr("getppid"));
  EXPECT_THAT(base_name(loc.dso), HasSubstr("libc.so"));
  EXPECT_THAT(warnings.messages, IsEmpty());
}

// --- Cache -----------------------------------------------------------------------

TEST(SymbolizerCache, SameAddressSameReference) {
  const std::uint64_t address = symbol_address(SYMB_FIXTURE_C_DEBUG, "symb_c_add");
  Symbolizer symbolizer(test::self_load_map());
  const SourceLocation& first = symbolizer.resolve(address);
  const SourceLocation& again = symbolizer.resolve(address);
  EXPECT_EQ(&first, &again);
  // Many other lookups (forcing the cache to grow) keep the reference valid.
  for (std::uint64_t i = 1; i <= 2000; ++i) symbolizer.resolve(address + i);
  const SourceLocation& later = symbolizer.resolve(address);
  EXPECT_EQ(&first, &later);
  EXPECT_EQ(first.function, "symb_c_add");
}

TEST(SymbolizerCache, UnknownAddressesAreCachedToo) {
  Symbolizer symbolizer(LoadMap{});
  const SourceLocation& a = symbolizer.resolve(0x1234);
  EXPECT_EQ(&a, &symbolizer.resolve(0x1234));
  EXPECT_NE(&a, &symbolizer.resolve(0x1235));
}

// --- Resources ---------------------------------------------------------------------

int open_fd_count() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++count;
    closedir(dir);
  }
  return count;
}

// Issue 8 case 15: a load map of many entries is indexed in O(n log n) (the
// constructor once compared every entry with every earlier one). 200,000
// overlapping, partly duplicated entries, each at its own load bias so the
// entry chosen shows in `offset`; every address must resolve to the first
// entry containing it, as a linear scan over the map would find it. Pseudo
// objects ("[vdso]") are never opened, so no file is touched.
TEST(SymbolizerLoadMap, ManyOverlappingEntriesResolveToTheFirstContainingEntry) {
  constexpr std::uint64_t kEntries = 200000;
  LoadMap map;
  map.reserve(kEntries);
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (std::uint64_t i = 0; i < kEntries; ++i) {
    const std::uint64_t start = 0x100000 + (next() % 4000000) * 16;
    const std::uint64_t length = 16 + (next() % 64) * 16;
    map.push_back(make_object(start, start + length, i, "", "[vdso]"));
    if (i % 10 == 0 && i + 1 < kEntries) {  // an exact duplicate range, later in the map
      map.push_back(make_object(start, start + length, ++i, "", "[vdso]"));
    }
  }
  Warnings warnings;
  Symbolizer symbolizer(map, warnings.sink());
  for (int k = 0; k < 400; ++k) {
    // Half the probes at an entry's first or last byte, half anywhere.
    const LoadedObject& some = map[next() % map.size()];
    const std::uint64_t address = k % 4 == 0   ? some.start
                                  : k % 4 == 1 ? some.end - 1
                                  : k % 4 == 2 ? some.end
                                               : 0x100000 + next() % (4000000 * 16);
    const LoadedObject* expected = nullptr;
    for (const LoadedObject& e : map) {
      if (e.contains(address)) {
        expected = &e;
        break;
      }
    }
    const SourceLocation& loc = symbolizer.resolve(address);
    if (expected == nullptr) {
      EXPECT_EQ(loc.dso, "") << std::hex << address;
    } else {
      EXPECT_EQ(loc.dso, "[vdso]") << std::hex << address;
      EXPECT_EQ(loc.offset, address - expected->load_bias)
          << "address " << std::hex << address << " resolved to load bias " << address - loc.offset
          << ", the first containing entry has " << expected->load_bias;
    }
  }
  EXPECT_THAT(warnings.messages, IsEmpty());
}

TEST(SymbolizerResources, DestructorClosesEveryFile) {
  const std::uint64_t c_add = symbol_address(SYMB_FIXTURE_C_DEBUG, "symb_c_add");
  const std::uint64_t debuglink = symbol_address(SYMB_FIXTURE_C_DEBUGLINK, "symb_c_add");
  const std::uint64_t nodebug = symbol_address(SYMB_FIXTURE_C_NODEBUG, "symb_c_add");
  const LoadMap map = test::self_load_map();
  const int before = open_fd_count();
  {
    Symbolizer symbolizer(map);
    EXPECT_EQ(symbolizer.resolve(c_add).function, "symb_c_add");
    EXPECT_EQ(symbolizer.resolve(debuglink).function, "symb_c_add");
    EXPECT_EQ(symbolizer.resolve(nodebug).function, "symb_c_add");
    EXPECT_GT(open_fd_count(), before);  // The objects are held open...
  }
  EXPECT_EQ(open_fd_count(), before);  // ...and closed with the Symbolizer.
}

}  // namespace
}  // namespace parlot
