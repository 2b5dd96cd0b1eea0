// Finding the qualified names of a file's code and the headers they need.
#include "tools/include-check/iwyu_scan.h"

#include <cctype>
#include <set>

#include "tools/include-check/source_text.h"

namespace weft::tools::include_check {
namespace {

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\';
}

// `code` with the lines of every directive except #define blanked (their
// continuation lines too); newlines are kept, so line numbers hold.
std::string without_directives(std::string_view code) {
  std::string out(code);
  bool continuing = false;  // the previous line ended in a backslash
  bool blanking = false;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    if (!continuing) {
      std::string_view rest;
      std::string directive =
          directive_of(std::string_view(out).substr(start, end - start), &rest);
      blanking = !directive.empty() && directive != "define";
    }
    continuing = end > start && out[end - 1] == '\\';
    if (blanking) {
      for (size_t i = start; i < end; ++i) out[i] = ' ';
    }
    start = end + 1;
  }
  return out;
}

// What precedes the name starting at `start` (see NameUse::qualifier).
std::string_view qualifier_before(std::string_view code, size_t start) {
  size_t i = start;
  while (i > 0 && is_space(code[i - 1])) --i;
  if (i >= 1 && code[i - 1] == '.') return ".";
  if (i >= 2 && code[i - 1] == '>' && code[i - 2] == '-') return ".";
  if (i < 2 || code[i - 1] != ':' || code[i - 2] != ':') return "";
  i -= 2;
  while (i > 0 && is_space(code[i - 1])) --i;
  if (i > 0 && code[i - 1] == '>') return ">";
  size_t end = i;
  while (i > 0 && is_identifier_char(code[i - 1])) --i;
  return i == end ? "::" : code.substr(i, end - i);
}

// The top-level arguments of the call whose '(' is at `open`; -1 when the
// parenthesis is not closed.
int count_arguments(std::string_view code, size_t open) {
  int depth = 0;
  int commas = 0;
  bool empty = true;
  for (size_t i = open; i < code.size(); ++i) {
    char c = code[i];
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) return empty ? 0 : commas + 1;
    } else if (c == ',' && depth == 1) {
      ++commas;
    }
    if (i > open && !is_space(c)) empty = false;
  }
  return -1;
}

// Fills in whether the name ending at `end` is called, and with how many
// arguments.
void read_call(std::string_view code, size_t end, NameUse* use) {
  while (end < code.size() && is_space(code[end])) ++end;
  if (end >= code.size() || code[end] != '(') return;
  use->call = true;
  use->arguments = count_arguments(code, end);
}

}  // namespace

std::vector<NameUse> name_uses(std::string_view code) {
  std::vector<NameUse> uses;
  int line = 1;
  size_t i = 0;
  while (i < code.size()) {
    if (!is_identifier_char(code[i])) {
      if (code[i++] == '\n') ++line;
      continue;
    }
    size_t start = i;
    bool number = std::isdigit(static_cast<unsigned char>(code[i])) != 0;
    while (i < code.size() && (is_identifier_char(code[i]) ||
                               (number && (code[i] == '.' || code[i] == '\''))))
      ++i;
    if (number) continue;
    NameUse use{line, qualifier_before(code, start),
                code.substr(start, i - start)};
    read_call(code, i, &use);
    uses.push_back(use);
  }
  return uses;
}

std::vector<IwyuFinding> scan_for_iwyu(
    std::string_view text, const std::vector<std::string>& included) {
  std::string code = without_directives(strip(text).code);
  std::vector<IwyuFinding> findings;
  std::set<std::string_view> done;  // headers found included or reported
  for (const NameUse& use : name_uses(code)) {
    std::string_view header = header_for(use);
    if (header.empty() || !done.insert(header).second) continue;
    bool found = false;
    for (const std::string& name : included) {
      found = found || provides(name, header);
    }
    if (!found) {
      findings.push_back({use.line, spelled_name(use), std::string(header)});
    }
  }
  return findings;
}

std::string iwyu_message(const IwyuFinding& finding) {
  return "uses " + finding.name + " without #include " +
         spelled_include(finding.header) +
         "; include it (current libraries no longer include it for you)";
}

}  // namespace weft::tools::include_check
