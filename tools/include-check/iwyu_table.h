// The include-what-you-use table: names of the standard library and Abseil
// that current libraries no longer drag in through other headers, and the
// header that declares each. Older Abseil and libstdc++ headers included
// one another by accident, so a file that leans on that breaks on upgrade.
#ifndef WEFT_TOOLS_INCLUDE_CHECK_IWYU_TABLE_H_
#define WEFT_TOOLS_INCLUDE_CHECK_IWYU_TABLE_H_

#include <string>
#include <string_view>

namespace weft::tools::include_check {

// One name as code spells it. `std::vector` has qualifier "std", a bare
// `uint64_t` has "", `::uint64_t` has "::", a member after `.` or `->` has
// ".", and a name after `X<...>::` has ">".
struct NameUse {
  int line = 0;
  std::string_view qualifier;
  std::string_view name;
  bool call = false;   // followed by '('
  int arguments = -1;  // top-level arguments of the call; -1 when unknown
};

// The header that declares `use` as an #include names it ("vector",
// "absl/strings/str_cat.h"), or "" when the table does not list it.
// std::move with one argument needs <utility>, with three or more (the
// algorithm) <algorithm>; with two it is left alone.
std::string_view header_for(const NameUse& use);

// Whether `#include <included>` (or "included") provides what `header`
// declares: the same header, its C form (<stdint.h> for <cstdint>), or a
// header that declares it too (<iostream> and <iosfwd> for std::ostream).
bool provides(std::string_view included, std::string_view header);

// How a finding spells `header`: <vector>, or "absl/strings/str_cat.h".
std::string spelled_include(std::string_view header);

// How a finding spells `use`: std::vector, absl::StrCat, uint64_t.
std::string spelled_name(const NameUse& use);

}  // namespace weft::tools::include_check

#endif  // WEFT_TOOLS_INCLUDE_CHECK_IWYU_TABLE_H_
