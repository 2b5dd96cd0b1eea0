// The Darwin portability check: the code a macOS build compiles (conditional
// blocks resolved under a model of Darwin's macros, unknown conditions keep
// both branches) must not use Linux-only names or headers.
#ifndef WEFT_TOOLS_INCLUDE_CHECK_DARWIN_SCAN_H_
#define WEFT_TOOLS_INCLUDE_CHECK_DARWIN_SCAN_H_

#include <string>
#include <string_view>
#include <vector>

#include "tools/include-check/pp_condition.h"
#include "tools/include-check/report.h"
#include "tools/include-check/source_text.h"
#include "tools/include-check/source_tree.h"

namespace weft::tools::include_check {

// A use of a Linux-only name or header in code macOS may compile.
struct DarwinFinding {
  int line = 0;
  std::string what;  // "MADV_HUGEPAGE", or "<sys/epoll.h>" for a header
  bool is_header = false;
};

struct DarwinScan {
  std::vector<DarwinFinding> findings;
  // The #includes in blocks macOS may compile (to follow into headers).
  std::vector<IncludeDirective> live_includes;
};

// __APPLE__ and __MACH__ defined; __linux__, __gnu_linux__, __GLIBC__ and
// every banned name undefined; __has_include false for banned headers.
const MacroModel& darwin_model();

// Whole identifiers (epoll_ and timerfd_ are prefixes).
bool is_banned_name(std::string_view identifier);
// <linux/...> and the listed glibc/Linux headers.
bool is_banned_header(std::string_view header);

// Scans one file's text.
DarwinScan scan_for_darwin(std::string_view text);

// "<what> is not on macOS; guard it (...) or mark the target
// WEFT_LINUX_ONLY".
std::string darwin_message(const DarwinFinding& finding);

// Scans every source of every target that is not WEFT_LINUX_ONLY, the
// public headers of folders holding only such libraries, and the repository
// headers all of those include in live blocks. Notes name the targets
// skipped as Linux-only.
Report check_darwin(const SourceTree& tree);

}  // namespace weft::tools::include_check

#endif  // WEFT_TOOLS_INCLUDE_CHECK_DARWIN_SCAN_H_
