// C++ source text as the include checks see it: comments and string
// literals blanked out (line numbers kept), lines joined at backslash
// continuations, and #include directives parsed.
#ifndef WEFT_TOOLS_INCLUDE_CHECK_SOURCE_TEXT_H_
#define WEFT_TOOLS_INCLUDE_CHECK_SOURCE_TEXT_H_

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::tools::include_check {

// Two copies of a text, each as long as it with the same newlines (so
// offsets and line numbers agree): `without_comments` has comments blanked;
// `code` also has the contents of string and character literals blanked.
struct StrippedText {
  std::string without_comments;
  std::string code;
};

StrippedText strip(std::string_view text);

// A line after backslash continuations are joined; `line` is where it starts.
struct LogicalLine {
  int line = 0;
  std::string text;
};

std::vector<LogicalLine> logical_lines(std::string_view text);

struct IncludeDirective {
  int line = 0;
  bool angled = false;  // <name> rather than "name"
  std::string name;
};

// The #include of a line from StrippedText::without_comments, if it is one.
std::optional<IncludeDirective> parse_include(const LogicalLine& line);

// Every #include of a file's text, whatever conditional block it is in.
std::vector<IncludeDirective> includes_of(std::string_view text);

// The directive a line starts with ("if", "include", ...) and, in *rest,
// what follows it; "" when the line is not a directive.
std::string directive_of(std::string_view line, std::string_view* rest);

// Reads a whole file; false when it cannot be read.
bool read_text(const std::filesystem::path& path, std::string* text);

}  // namespace weft::tools::include_check

#endif  // WEFT_TOOLS_INCLUDE_CHECK_SOURCE_TEXT_H_
