// The include-what-you-use check: a file that uses a name of the table
// (iwyu_table.h) must include the header that declares it, itself or
// through its own header (x.h beside x.cc), not lean on what other headers
// happen to include on one version of the library.
#ifndef WEFT_TOOLS_INCLUDE_CHECK_IWYU_SCAN_H_
#define WEFT_TOOLS_INCLUDE_CHECK_IWYU_SCAN_H_

#include <string>
#include <string_view>
#include <vector>

#include "tools/include-check/iwyu_table.h"
#include "tools/include-check/report.h"
#include "tools/include-check/source_tree.h"

namespace weft::tools::include_check {

// A header a file needs and does not include, at its first use.
struct IwyuFinding {
  int line = 0;
  std::string name;    // as spelled in the message: std::vector
  std::string header;  // as the table names it: vector
};

// The names of `code` (comments and literals already blanked) in order, with
// their qualifiers; the lines of every directive but #define are skipped.
// The views point into `code`.
std::vector<NameUse> name_uses(std::string_view code);

// Scans one file's text; `included` lists the #include names of the file
// and of its own header. One finding per missing header, at its first use.
std::vector<IwyuFinding> scan_for_iwyu(
    std::string_view text, const std::vector<std::string>& included);

// "uses std::vector without #include <vector>; include it (...)".
std::string iwyu_message(const IwyuFinding& finding);

// Checks every C++ file of every unit, whatever platform builds it.
Report check_include_what_you_use(const SourceTree& tree);

}  // namespace weft::tools::include_check

#endif  // WEFT_TOOLS_INCLUDE_CHECK_IWYU_SCAN_H_
