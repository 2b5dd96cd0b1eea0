#include "fabric/assert.h"

#include <cstdio>
#include <cstdlib>

namespace weft::fabric::internal {

void assertion_failed(const char* condition, const char* message,
                      const char* file, int line) {
  std::fprintf(stderr, "weft: invariant broken at %s:%d: %s (%s)\n", file, line,
               message, condition);
  std::fflush(stderr);
  std::abort();
}

}  // namespace weft::fabric::internal
