#include "export/simplify_name.h"

#include <gtest/gtest.h>

namespace parlot::exporter {
namespace {

TEST(SimplifyName, PlainNamesUnchanged) {
  EXPECT_EQ(simplify_name("main"), "main");
  EXPECT_EQ(simplify_name("ns::f(int, double) const"), "ns::f(int, double) const");
  EXPECT_EQ(simplify_name("mod::proc"), "mod::proc");
}

TEST(SimplifyName, CollapsesTemplateArguments) {
  EXPECT_EQ(simplify_name("ns::Box<int>::get(int) const"), "ns::Box<>::get(int) const");
  EXPECT_EQ(simplify_name("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int "
                          "const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int, "
                          "std::allocator<int> > >, int const&)"),
            "void std::vector<>::_M_realloc_insert<>(__gnu_cxx::__normal_iterator<>, int const&)");
}

TEST(SimplifyName, StandardLibraryNoise) {
  EXPECT_EQ(simplify_name("f(std::__cxx11::basic_string<char, std::char_traits<char>, "
                          "std::allocator<char> > const&)"),
            "f(std::string const&)");
  EXPECT_EQ(simplify_name("std::__cxx11::list<int>::size() const"), "std::list<>::size() const");
  EXPECT_EQ(simplify_name("name[abi:cxx11]()"), "name()");
}

TEST(SimplifyName, KeepsAngleOperators) {
  EXPECT_EQ(simplify_name("operator<(A const&, A const&)"), "operator<(A const&, A const&)");
  EXPECT_EQ(simplify_name("std::ostream& operator<< <int>(std::ostream&, V<int> const&)"),
            "std::ostream& operator<< <>(std::ostream&, V<> const&)");
  EXPECT_EQ(simplify_name("Ptr<T>::operator->() const"), "Ptr<>::operator->() const");
  EXPECT_EQ(simplify_name("operator<=>(A, A)"), "operator<=>(A, A)");
  EXPECT_EQ(simplify_name("X<int>::operator>>(int)"), "X<>::operator>>(int)");
}

}  // namespace
}  // namespace parlot::exporter
