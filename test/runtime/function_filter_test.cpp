// Record-time filter (runtime/process/function_filter.h): globs, the qualified
// names patterns also match, and decisions on this test's own functions,
// named from its ELF symbol table.
#include "process/function_filter.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

using parlot::runtime::FunctionFilter;
using parlot::runtime::glob_match;
using parlot::runtime::qualified_name_of;

extern "C" [[gnu::noinline, gnu::used]] int parlot_filter_probe_alpha(int x) {
  return x + 1;
}
extern "C" [[gnu::noinline, gnu::used]] int parlot_filter_probe_beta(int x) {
  return x * 3;
}
namespace filter_probe {
struct Thing {
  [[gnu::noinline, gnu::used]] static int run(int x) { return x - 2; }
};
}  // namespace filter_probe

namespace {

std::uintptr_t address_of(int (*f)(int)) {
  return reinterpret_cast<std::uintptr_t>(f);
}

std::string qualified(const char* symbol) {
  char out[256];
  return qualified_name_of(symbol, out, sizeof out) ? std::string(out) : std::string("<none>");
}

TEST(GlobMatch, StarsQuestionMarksAndSets) {
  EXPECT_TRUE(glob_match("level*", "level1"));
  EXPECT_TRUE(glob_match("level*", "level"));
  EXPECT_FALSE(glob_match("level*", "xlevel1"));
  EXPECT_TRUE(glob_match("*::Shape::*", "ns::geometry::Shape::area"));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYbZc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYYbZ"));
  EXPECT_TRUE(glob_match("lev?l[0-9]", "level7"));
  EXPECT_FALSE(glob_match("lev?l[0-9]", "levelx"));
  EXPECT_TRUE(glob_match("f[!0-9]", "fa"));
  EXPECT_FALSE(glob_match("f[!0-9]", "f1"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("", "a"));
  EXPECT_FALSE(glob_match("f[ab", "fa"));  // unterminated set: no match
}

TEST(QualifiedName, PlainNestedFunctionsConstructorsAndFortran) {
  EXPECT_EQ(qualified("_ZN2ns1A1fEv"), "ns::A::f");
  EXPECT_EQ(qualified("_ZNK15parlot_examples8geometry4Vec26lengthEv"),
            "parlot_examples::geometry::Vec2::length");
  EXPECT_EQ(qualified("_ZN15parlot_examples8ResourceC2Eii"), "parlot_examples::Resource::Resource");
  EXPECT_EQ(qualified("_ZN15parlot_examples8ResourceD1Ev"), "parlot_examples::Resource::~Resource");
  EXPECT_EQ(qualified("_Z6level1i"), "level1");
  EXPECT_EQ(qualified("_ZL4mixsm"), "mixs");
  EXPECT_EQ(qualified("_ZNSt6vector4sizeEv"), "std::vector::size");
  EXPECT_EQ(qualified("__jacobi_mod_MOD_sweep"), "jacobi_mod::sweep");
  EXPECT_EQ(qualified("level1"), "<none>");  // C: the symbol itself
  EXPECT_EQ(qualified("_Z12weighted_sumIdET_St4spanIKS0_Lm18446744073709551615EE"),
            "weighted_sum");                              // parameters are ignored
  EXPECT_EQ(qualified("_ZN2ns3BoxIiE3getEv"), "<none>");  // template arguments
  EXPECT_EQ(qualified("_ZN2ns1AplERKS0_"), "<none>");     // operator+
  EXPECT_EQ(qualified("_ZN2ns1"), "<none>");              // cut short
}

TEST(FunctionFilter, WithoutPatternsRecordsEverything) {
  FunctionFilter f;
  ASSERT_TRUE(f.init("", ""));
  EXPECT_FALSE(f.active());
  EXPECT_TRUE(f.records(address_of(parlot_filter_probe_alpha)));
}

TEST(FunctionFilter, ExcludeByNameFromTheSymbolTable) {
  FunctionFilter f;
  ASSERT_TRUE(f.init("", "parlot_filter_probe_b*;nothing_else"));
  EXPECT_TRUE(f.active());
  EXPECT_TRUE(f.records(address_of(parlot_filter_probe_alpha)));
  EXPECT_FALSE(f.records(address_of(parlot_filter_probe_beta)));
}

TEST(FunctionFilter, IncludeListThenExcludeList) {
  FunctionFilter f;
  ASSERT_TRUE(f.init("parlot_filter_probe_*;filter_probe::*", "*beta"));
  EXPECT_TRUE(f.records(address_of(parlot_filter_probe_alpha)));
  EXPECT_FALSE(f.records(address_of(parlot_filter_probe_beta)));
  EXPECT_TRUE(f.records(address_of(&filter_probe::Thing::run)));
  EXPECT_FALSE(f.records(address_of(+[](int x) { return x; })));  // matches no include
}

TEST(FunctionFilter, QualifiedCppNames) {
  FunctionFilter f;
  ASSERT_TRUE(f.init("", "filter_probe::Thing::*"));
  EXPECT_FALSE(f.records(address_of(&filter_probe::Thing::run)));
  EXPECT_TRUE(f.records(address_of(parlot_filter_probe_alpha)));
}

TEST(FunctionFilter, ObjectPaths) {
  FunctionFilter f;
  ASSERT_TRUE(f.init("", "dso:*/runtime_unit_test"));
  EXPECT_FALSE(f.records(address_of(parlot_filter_probe_alpha)));
  FunctionFilter g;
  ASSERT_TRUE(g.init("dso:*/libc.so*", ""));
  EXPECT_FALSE(g.records(address_of(parlot_filter_probe_alpha)));
}

TEST(FunctionFilter, TooManyPatternsRecordEverything) {
  std::string list;
  for (int i = 0; i < 65; ++i) list += "p" + std::to_string(i) + ";";
  FunctionFilter f;
  EXPECT_FALSE(f.init("", list.c_str()));
  EXPECT_FALSE(f.active());
}

}  // namespace
