// Test fixture for Config::from_environment: an environment of the test's
// own (env_) and files written for one test, removed after it.
#ifndef WEFT_TESTS_COLLECTIVES_CONFIG_ENV_FIXTURE_H_
#define WEFT_TESTS_COLLECTIVES_CONFIG_ENV_FIXTURE_H_

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "collectives/config.h"
#include "gtest/gtest.h"

namespace weft::testing {

class ConfigEnvFixture : public ::testing::Test {
 protected:
  // Writes `text` to a file of this process and test in the temporary
  // directory (tests may run in parallel processes).
  std::string write_json(const std::string& name, const std::string& text) {
    const std::string path = absl::StrFormat(
        "%s/weft_config_%d_%s_%s", ::testing::TempDir(), getpid(),
        ::testing::UnitTest::GetInstance()->current_test_info()->name(), name);
    std::ofstream(path) << text;
    written_.push_back(path);
    return path;
  }

  void TearDown() override {
    for (const std::string& path : written_) std::remove(path.c_str());
  }

  // Config::from_environment over env_ alone.
  absl::StatusOr<Config> read() {
    return Config::from_environment([this](const char* name) -> const char* {
      auto it = env_.find(name);
      return it == env_.end() ? nullptr : it->second.c_str();
    });
  }

  std::map<std::string, std::string> env_;
  std::vector<std::string> written_;
};

}  // namespace weft::testing

#endif  // WEFT_TESTS_COLLECTIVES_CONFIG_ENV_FIXTURE_H_
