#include "tools/cli/exit_status.h"

#include <cstdio>
#include <string>

namespace weft::tools::cli {

int report_line(std::string_view program, int code, std::string_view what) {
  std::string line(what);
  for (char& c : line) {
    if (c == '\n') c = ' ';  // one line, always
  }
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(program.size()),
               program.data(), line.c_str());
  return code;
}

}  // namespace weft::tools::cli
