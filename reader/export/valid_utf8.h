// Text every export's consumer parses: Graphviz and its SVG (XML 1.0),
// callgrind_annotate and KCachegrind, flamegraph.pl, protobuf string fields
// (Perfetto), OTF2 strings and the JSON formats all need valid UTF-8 without
// control characters, while a function name, a path or a mark label from a
// trace is arbitrary bytes (symbol tables, `__asm__` labels, damaged files).
#pragma once

#include <string>
#include <string_view>

namespace parlot::exporter {

/// `text` with every byte that is not part of a well-formed UTF-8 sequence
/// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF)
/// replaced by U+FFFD, one replacement per byte. Valid text comes back
/// unchanged (control characters included: for labels, whose formats escape
/// them or take them). O(n), no error.
std::string valid_utf8(std::string_view text);

/// valid_utf8(), and every control character (U+0000-U+001F, U+007F-U+009F)
/// replaced by U+FFFD too: for names and paths, which line-based formats
/// (folded, callgrind) and XML (Graphviz's SVG) cannot hold otherwise.
std::string printable_utf8(std::string_view text);

}  // namespace parlot::exporter
