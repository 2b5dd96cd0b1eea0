// Test fixture for Config::from_environment: an environment of the test's
// own (env_) and files written for one test, removed after it.
#ifndef WEFT_TESTS_COLLECTIVES_CONFIG_ENV_FIXTURE_H_
#define WEFT_TESTS_COLLECTIVES_CONFIG_ENV_FIXTURE_H_

#include <deque>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "rendezvous/config.h"
#include "tests/support/scratch.h"

namespace weft::testing {

class ConfigEnvFixture : public ::testing::Test {
 protected:
  // Writes `text` to a file of this process and test (tests may run in
  // parallel processes), removed after the test; returns its path.
  std::string write_json(const std::string& name, const std::string& text) {
    return written_.emplace_back(name, text).path();
  }

  // Config::from_environment over env_ alone.
  absl::StatusOr<Config> read() {
    return Config::from_environment([this](const char* name) -> const char* {
      auto it = env_.find(name);
      return it == env_.end() ? nullptr : it->second.c_str();
    });
  }

  std::map<std::string, std::string> env_;
  std::deque<ScratchFile> written_;
};

}  // namespace weft::testing

#endif  // WEFT_TESTS_COLLECTIVES_CONFIG_ENV_FIXTURE_H_
