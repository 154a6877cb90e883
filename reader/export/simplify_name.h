// --simplify: shorter C++ names for every view.
#pragma once

#include <string>
#include <string_view>

namespace parlot::exporter {

/// `name` with standard-library noise removed and template arguments
/// collapsed: std::__cxx11::basic_string<char, ...> -> std::string,
/// "std::__cxx11::" / "std::__1::" -> "std::", ABI tags "[abi:cxx11]"
/// dropped, and every outermost "<...>" of a template argument list
/// replaced by "<>" (operator<, operator<<, operator<=> and operator->
/// are kept). Parameter lists are kept. Names without '<' or "std::" come
/// back unchanged.
std::string simplify_name(std::string_view name);

}  // namespace parlot::exporter
