// Comment and literal stripping, line joining and #include parsing.
#include "tools/include-check/source_text.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <utility>

namespace weft::tools::include_check {
namespace {

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Blanks text[from, to) in `out`, keeping newlines and backslash-newline
// pairs so both copies of StrippedText join lines the same way.
void blank(std::string_view text, size_t from, size_t to, std::string* out) {
  for (size_t i = from; i < to && i < text.size(); ++i) {
    bool continuation =
        text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n';
    if (text[i] != '\n' && !continuation) (*out)[i] = ' ';
  }
}

// The end of the quoted literal opening at `open` (one past its closing
// quote, or the end of the line when it is not closed).
size_t literal_end(std::string_view text, size_t open) {
  char quote = text[open];
  for (size_t i = open + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == quote || text[i] == '\n') {
      return i + 1;
    }
  }
  return text.size();
}

// For R"delim( at `quote`: the end of the raw literal, or npos when the
// characters before `quote` do not make it a raw string.
size_t raw_literal_end(std::string_view text, size_t quote) {
  if (quote == 0 || text[quote - 1] != 'R') return std::string_view::npos;
  size_t prefix = quote - 1;  // R, u8R, uR, UR, LR
  while (prefix > 0 && is_identifier_char(text[prefix - 1])) --prefix;
  std::string_view head = text.substr(prefix, quote - prefix);
  if (head != "R" && head != "u8R" && head != "uR" && head != "UR" &&
      head != "LR") {
    return std::string_view::npos;
  }
  size_t paren = text.find('(', quote);
  if (paren == std::string_view::npos) return text.size();
  std::string close =
      ")" + std::string(text.substr(quote + 1, paren - quote - 1)) + "\"";
  size_t end = text.find(close, paren);
  return end == std::string_view::npos ? text.size() : end + close.size();
}

// Whether the ' at `i` separates digits (1'000) rather than opening a char.
bool is_digit_separator(std::string_view text, size_t i) {
  size_t start = i;
  while (start > 0 && (is_identifier_char(text[start - 1]) ||
                       text[start - 1] == '\'' || text[start - 1] == '.')) {
    --start;
  }
  return start < i && std::isdigit(static_cast<unsigned char>(text[start]));
}

}  // namespace

StrippedText strip(std::string_view text) {
  StrippedText out{std::string(text), std::string(text)};
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == '/' && next == '/') {
      size_t end = text.find('\n', i);
      if (end == std::string_view::npos) end = text.size();
      blank(text, i, end, &out.without_comments);
      blank(text, i, end, &out.code);
      i = end;
    } else if (c == '/' && next == '*') {
      size_t end = text.find("*/", i + 2);
      end = end == std::string_view::npos ? text.size() : end + 2;
      blank(text, i, end, &out.without_comments);
      blank(text, i, end, &out.code);
      i = end;
    } else if (c == '"' || (c == '\'' && !is_digit_separator(text, i))) {
      size_t end = c == '"' ? raw_literal_end(text, i) : std::string_view::npos;
      if (end == std::string_view::npos) end = literal_end(text, i);
      blank(text, i + 1, end - 1, &out.code);
      i = end;
    } else {
      ++i;
    }
  }
  return out;
}

std::vector<LogicalLine> logical_lines(std::string_view text) {
  std::vector<LogicalLine> lines;
  int number = 1;
  size_t start = 0;
  while (start < text.size()) {
    LogicalLine line{number, ""};
    size_t end = start;
    while (true) {
      end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      ++number;
      bool continued = end > start && text[end - 1] == '\\';
      line.text += text.substr(start, end - start - (continued ? 1 : 0));
      start = end + 1;
      if (!continued || start >= text.size()) break;
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string directive_of(std::string_view line, std::string_view* rest) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string_view::npos) return "";
  size_t end = i;
  while (end < line.size() && is_identifier_char(line[end])) ++end;
  *rest = line.substr(end);
  return std::string(line.substr(i, end - i));
}

std::optional<IncludeDirective> parse_include(const LogicalLine& line) {
  std::string_view rest;
  if (directive_of(line.text, &rest) != "include") return std::nullopt;
  size_t open = rest.find_first_of("<\"");
  if (open == std::string_view::npos) return std::nullopt;  // a macro
  char close = rest[open] == '<' ? '>' : '"';
  size_t end = rest.find(close, open + 1);
  if (end == std::string_view::npos) return std::nullopt;
  return IncludeDirective{line.line, close == '>',
                          std::string(rest.substr(open + 1, end - open - 1))};
}

std::vector<IncludeDirective> includes_of(std::string_view text) {
  std::vector<IncludeDirective> includes;
  for (const LogicalLine& line : logical_lines(strip(text).without_comments)) {
    if (std::optional<IncludeDirective> include = parse_include(line)) {
      includes.push_back(std::move(*include));
    }
  }
  return includes;
}

bool read_text(const std::filesystem::path& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  return true;
}

}  // namespace weft::tools::include_check
