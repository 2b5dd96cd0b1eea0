// What weft's fuzz targets do when a property fails: name the property and
// where it is checked on stderr, then abort so libFuzzer keeps the input as
// a crash (build/fuzz/crash-<name>-*).
#ifndef WEFT_TESTS_FUZZ_FUZZ_CHECK_H_
#define WEFT_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace weft::fuzz {

[[noreturn]] inline void fail(const char* property, const char* file,
                              int line) {
  std::fprintf(stderr, "%s:%d: fuzz property violated: %s\n", file, line,
               property);
  std::abort();
}

// Requires `s` to be a rejection with `code` whose message contains `names`
// (what was being decoded, so a user can tell where the error came from).
inline void check_error(const absl::Status& s, absl::StatusCode code,
                        std::string_view names) {
  const std::string message(s.message());
  if (s.code() == code && message.find(names) != std::string::npos) return;
  std::fprintf(stderr,
               "fuzz property violated: expected %s naming \"%.*s\", got %s\n",
               absl::StatusCodeToString(code).c_str(), int(names.size()),
               names.data(), s.ToString().c_str());
  std::abort();
}

}  // namespace weft::fuzz

// Aborts with the text of `cond` when it is false.
#define WEFT_FUZZ_CHECK(cond) \
  ((cond) ? void(0) : ::weft::fuzz::fail(#cond, __FILE__, __LINE__))

#endif  // WEFT_TESTS_FUZZ_FUZZ_CHECK_H_
