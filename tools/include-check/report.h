// What weft-include-check found: one Diagnostic per problem (file, line and
// what to do), gathered in a Report the tool prints and its tests inspect.
#ifndef WEFT_TOOLS_INCLUDE_CHECK_REPORT_H_
#define WEFT_TOOLS_INCLUDE_CHECK_REPORT_H_

#include <string>
#include <vector>

namespace weft::tools::include_check {

struct Diagnostic {
  std::string file;  // relative to the source root
  int line = 0;      // 1-based; 0 when it is about the whole file
  std::string message;
};

// "file:line: message" ("file: message" when line is 0).
std::string format(const Diagnostic& diagnostic);

struct Report {
  std::vector<Diagnostic> errors;    // each fails the check
  std::vector<Diagnostic> warnings;  // printed, never fail the check
  std::vector<std::string> notes;    // e.g. folders skipped, one line each
  int files_checked = 0;
};

}  // namespace weft::tools::include_check

#endif  // WEFT_TOOLS_INCLUDE_CHECK_REPORT_H_
