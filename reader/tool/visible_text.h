// Text from a trace (function names, file names, arguments) made safe to
// print on a terminal: a traced program's symbols are arbitrary bytes.
#pragma once

#include <string>
#include <string_view>

namespace parlot::tool {

/// Returns `text` with every byte that a terminal would act on or that is
/// not part of valid UTF-8 shown as a visible escape: C0 controls (ESC
/// included), DEL and C1 controls (U+0080..U+009F) as "\xNN" per byte,
/// bytes outside a valid UTF-8 sequence (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF) as "\xNN", and '\' as "\\", so the
/// escaped form is unambiguous. Valid printable UTF-8 is copied unchanged.
/// Linear in the length of `text`; never throws except std::bad_alloc.
std::string visible_text(std::string_view text);

/// `text` as visible_text() shows it, in double quotes, with '"' shown as
/// \" so the quoted form is unambiguous (a mark's label in `trace`, `diff`).
std::string quoted_visible_text(std::string_view text);

/// JSON string literal (with quotes) of `text`: control characters as
/// \uXXXX escapes, and each byte that is not valid UTF-8 replaced by
/// U+FFFD, so one bad name never ends the stream. Never throws except
/// std::bad_alloc.
std::string json_string(std::string_view text);

}  // namespace parlot::tool
