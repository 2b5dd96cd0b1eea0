// ProcessGroup::start on a one-rank group over the simulated verbs
// provider: the deadlines from WEFT_TIMEOUT_S and WEFT_CONNECT_TIMEOUT_S
// reach the group and the Config, with recovery limits that outlast them;
// keep_timeouts leaves the caller's.
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "collectives/group.h"
#include "collectives/group_options.h"
#include "gtest/gtest.h"
#include "rendezvous/config.h"
#include "startup/process_group.h"
#include "verbs/verbs_fabric.h"

namespace weft {
namespace {

class ProcessGroupStart : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("WEFT_VERBS_LIBRARY");
    if (old != nullptr) old_library_ = old;
    ::setenv("WEFT_VERBS_LIBRARY", WEFT_SIM_VERBS_PATH, 1);
  }
  void TearDown() override {
    if (old_library_.empty()) {
      ::unsetenv("WEFT_VERBS_LIBRARY");
    } else {
      ::setenv("WEFT_VERBS_LIBRARY", old_library_.c_str(), 1);
    }
  }

  std::unique_ptr<ProcessGroup> start(StartOptions options) {
    options.getenv = [this](const char* name) -> const char* {
      auto it = env_.find(name);
      return it == env_.end() ? nullptr : it->second.c_str();
    };
    absl::StatusOr<std::unique_ptr<ProcessGroup>> pg =
        ProcessGroup::start(Config{}, options);
    EXPECT_TRUE(pg.ok()) << pg.status();
    return pg.ok() ? *std::move(pg) : nullptr;
  }

  std::map<std::string, std::string> env_;
  std::string old_library_;
};

TEST_F(ProcessGroupStart, DefaultsAreTenMinutes) {
  std::unique_ptr<ProcessGroup> pg = start({});
  ASSERT_NE(pg, nullptr);
  EXPECT_EQ(pg->group().options().timeout_ns, 600 * kNsPerS);
  EXPECT_EQ(pg->config().connect_timeout_ns, 600 * kNsPerS);
  // 600 s outlasted: 1000 retries with a 1.2 s ceiling (deadlines_test.cc).
  EXPECT_EQ(pg->group().options().recovery.max_retries, 1000u);
  EXPECT_TRUE(pg->virtual_time());
  EXPECT_EQ(pg->bootstrap().size(), 1u);
}

TEST_F(ProcessGroupStart, VariablesSetTheDeadlines) {
  env_["WEFT_TIMEOUT_S"] = "100";
  env_["WEFT_CONNECT_TIMEOUT_S"] = "2.5";
  std::unique_ptr<ProcessGroup> pg = start({});
  ASSERT_NE(pg, nullptr);
  EXPECT_EQ(pg->group().options().timeout_ns, 100 * kNsPerS);
  EXPECT_EQ(pg->config().connect_timeout_ns, 2'500'000'000);
  EXPECT_EQ(pg->group().options().recovery.max_retries, 214u);
}

TEST_F(ProcessGroupStart, KeepTimeoutsKeepsTheCallersAndIgnoresTheVariables) {
  env_["WEFT_TIMEOUT_S"] = "not read";
  StartOptions options;
  options.keep_timeouts = true;
  options.group.timeout_ns = 7 * kNsPerS;
  std::unique_ptr<ProcessGroup> pg = start(options);
  ASSERT_NE(pg, nullptr);
  EXPECT_EQ(pg->group().options().timeout_ns, 7 * kNsPerS);
  EXPECT_EQ(pg->group().options().recovery.max_retries,
            RecoveryOptions{}.max_retries);
  EXPECT_EQ(pg->config().connect_timeout_ns, Config::kDefaultConnectTimeoutNs);
}

// WEFT_MR_BUDGET reaches the verbs fabric; unset, the default.
TEST_F(ProcessGroupStart, MemoryRegionBudgetReachesTheVerbsFabric) {
  std::unique_ptr<ProcessGroup> defaults = start({});
  ASSERT_NE(defaults, nullptr);
  auto* fabric = dynamic_cast<verbs::VerbsFabric*>(&defaults->fabric());
  ASSERT_NE(fabric, nullptr);
  EXPECT_EQ(fabric->memory_region_budget(), 96u);
  defaults.reset();
  env_["WEFT_MR_BUDGET"] = "7";
  std::unique_ptr<ProcessGroup> pg = start({});
  ASSERT_NE(pg, nullptr);
  fabric = dynamic_cast<verbs::VerbsFabric*>(&pg->fabric());
  ASSERT_NE(fabric, nullptr);
  EXPECT_EQ(fabric->memory_region_budget(), 7u);
}

}  // namespace
}  // namespace weft
