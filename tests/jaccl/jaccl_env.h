// Test helpers for code that reads the process environment and files:
// variables set for one scope and restored after, and scratch files.
#ifndef WEFT_TESTS_JACCL_JACCL_ENV_H_
#define WEFT_TESTS_JACCL_JACCL_ENV_H_

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/scratch.h"

namespace jaccl::testing {

// Every JACCL and MLX variable, unset while the scope lives (so the test's
// own settings are all there is), then restored; set() sets one more.
class ScopedEnv {
 public:
  ScopedEnv() {
    for (const char* name :
         {"JACCL_RANK", "MLX_RANK", "JACCL_IBV_DEVICES", "MLX_IBV_DEVICES",
          "JACCL_COORDINATOR", "MLX_JACCL_COORDINATOR", "JACCL_RING",
          "MLX_JACCL_RING", "WEFT_VERBS_LIBRARY", "WEFT_SIM_VERBS_RANKS",
          "WEFT_FABRIC", "WEFT_HOSTFILE", "MLX_HOSTFILE", "WEFT_RANK",
          "WEFT_COORDINATOR", "WEFT_SECRET"}) {
      unset(name);
    }
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second.has_value()) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

  void set(const char* name, const std::string& value) {
    save(name);
    ::setenv(name, value.c_str(), 1);
  }
  void unset(const char* name) {
    save(name);
    ::unsetenv(name);
  }

 private:
  void save(const char* name) {
    const char* old = std::getenv(name);
    saved_.emplace_back(
        name, old == nullptr ? std::nullopt : std::optional<std::string>(old));
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

using ::weft::testing::ScratchFile;

}  // namespace jaccl::testing

#endif  // WEFT_TESTS_JACCL_JACCL_ENV_H_
