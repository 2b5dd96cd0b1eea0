// Formatting of diagnostics.
#include "tools/include-check/report.h"

namespace weft::tools::include_check {

std::string format(const Diagnostic& diagnostic) {
  std::string where = diagnostic.file;
  if (diagnostic.line > 0) where += ":" + std::to_string(diagnostic.line);
  return where + ": " + diagnostic.message;
}

}  // namespace weft::tools::include_check
