// ProcessGroup::from_environment's refusals: each names the variable to set
// and is typed, and none gets as far as the side channel or the fabric.
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rendezvous/config.h"
#include "rendezvous/tcp_hosts.h"
#include "startup/process_group.h"
#include "tests/support/scratch.h"

namespace weft {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class ProcessGroupEnvironment : public ::testing::Test {
 protected:
  // A file removed after the test; its path.
  std::string write_json(const std::string& name, const std::string& json) {
    return written_.emplace_back(name, json).path();
  }

  // from_environment() over env_ alone.
  absl::Status start() {
    return ProcessGroup::from_environment(options()).status();
  }

  // start() of a Config made by the caller, over env_ alone.
  absl::Status start(const Config& config) {
    return ProcessGroup::start(config, options()).status();
  }

  StartOptions options() {
    StartOptions options;
    options.getenv = [this](const char* name) -> const char* {
      auto it = env_.find(name);
      return it == env_.end() ? nullptr : it->second.c_str();
    };
    // A side channel that is never made: every case here fails before it.
    options.make_bootstrap =
        [this](const Config&) -> absl::StatusOr<std::unique_ptr<Bootstrap>> {
      ++bootstraps_made_;
      return absl::InternalError("the test's bootstrap is not for use");
    };
    return options;
  }

  // A one-rank world: valid, so only the variable under test is wrong.
  void set_one_rank() {
    env_["JACCL_RANK"] = "0";
    env_["JACCL_IBV_DEVICES"] = write_json("one.json", "[[null]]");
  }

  std::map<std::string, std::string> env_;
  std::deque<weft::testing::ScratchFile> written_;
  int bootstraps_made_ = 0;
};

TEST_F(ProcessGroupEnvironment, MissingRankNamesTheVariable) {
  env_["JACCL_IBV_DEVICES"] = write_json("one.json", "[[null]]");
  const absl::Status s = start();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("JACCL_RANK"));
  EXPECT_EQ(bootstraps_made_, 0);
}

TEST_F(ProcessGroupEnvironment, BadCoordinatorNamesTheVariable) {
  env_["JACCL_RANK"] = "1";
  env_["JACCL_IBV_DEVICES"] =
      write_json("two.json", R"([[null, "en2"], ["en3", null]])");
  env_["JACCL_COORDINATOR"] = "no-port-here";
  const absl::Status s = start();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr("JACCL_COORDINATOR"), HasSubstr("no-port-here")));
  EXPECT_EQ(bootstraps_made_, 0);
}

TEST_F(ProcessGroupEnvironment, MissingDeviceFileIsNotFound) {
  env_["JACCL_RANK"] = "0";
  env_["JACCL_IBV_DEVICES"] = "/nonexistent/weft_devices.json";
  const absl::Status s = start();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("/nonexistent/weft_devices.json"));
}

TEST_F(ProcessGroupEnvironment, BadHostfileNamesTheRowBeforeTheSideChannel) {
  env_["MLX_RANK"] = "0";
  const std::string path =
      write_json("hosts.json", R"([["127.0.0.1:41000"], ["127.0.0.1:41000"]])");
  env_["MLX_HOSTFILE"] = path;
  const absl::Status s = start();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr("MLX_HOSTFILE: " + path),
                    HasSubstr("rank 1's entry 0 '127.0.0.1:41000' is the same "
                              "address as rank 0's entry 0")));
  EXPECT_EQ(bootstraps_made_, 0);
}

// Each bad WEFT_TIMEOUT_S / WEFT_CONNECT_TIMEOUT_S is refused with the
// variable, its text and what to set.
TEST_F(ProcessGroupEnvironment, BadTimeoutsNameTheVariable) {
  const std::vector<std::string> bad = {"",    "abc", "-5",           "0",
                                        "0.0", "1e3", " 60",          "60s",
                                        "2.",  ".5",  "1.0000000001", "86401"};
  for (const char* name : {"WEFT_TIMEOUT_S", "WEFT_CONNECT_TIMEOUT_S"}) {
    for (const std::string& text : bad) {
      env_.clear();
      set_one_rank();
      env_[name] = text;
      const absl::Status s = start();
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
          << name << "='" << text << "': " << s;
      EXPECT_THAT(std::string(s.message()),
                  AllOf(HasSubstr(absl::StrFormat("%s='%s'", name, text)),
                        HasSubstr("seconds")))
          << s;
    }
  }
  EXPECT_EQ(bootstraps_made_, 0);
}

// The connect timeout's limit is Config's (an hour), lower than an
// operation's (a day).
TEST_F(ProcessGroupEnvironment, ConnectTimeoutPastAnHourIsRefused) {
  set_one_rank();
  env_["WEFT_CONNECT_TIMEOUT_S"] = "3601";
  const absl::Status s = start();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("3600"));
}

// Good timeouts pass: the start gets as far as the side channel (the test's,
// which refuses).
TEST_F(ProcessGroupEnvironment, GoodTimeoutsReachTheSideChannel) {
  set_one_rank();
  env_["WEFT_TIMEOUT_S"] = "86400";
  env_["WEFT_CONNECT_TIMEOUT_S"] = "0.5";
  const absl::Status s = start();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_EQ(bootstraps_made_, 1);
}

// Each bad WEFT_MR_BUDGET is refused before the side channel, naming the
// variable, its text and the range; a good one gets as far as the side
// channel; over TCP it is not read.
TEST_F(ProcessGroupEnvironment, BadMemoryRegionBudgetNamesTheVariable) {
  const std::vector<std::string> bad = {"",    "abc",   "0",         "-5",
                                        "+96", " 96",   "96 ",       "9.5",
                                        "1e2", "65537", "9999999999"};
  for (const std::string& text : bad) {
    env_.clear();
    set_one_rank();
    env_["WEFT_MR_BUDGET"] = text;
    const absl::Status s = start();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
        << "WEFT_MR_BUDGET='" << text << "': " << s;
    EXPECT_THAT(std::string(s.message()),
                AllOf(HasSubstr("WEFT_MR_BUDGET='" + text + "'"),
                      HasSubstr("from 1 to 65536")))
        << s;
  }
  EXPECT_EQ(bootstraps_made_, 0);
  env_.clear();
  set_one_rank();
  env_["WEFT_MR_BUDGET"] = "65536";
  EXPECT_EQ(start().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(bootstraps_made_, 1);
}

// WEFT_CHECK_WIRING is 0 or 1; other text is refused before the side
// channel, naming the variable.
TEST_F(ProcessGroupEnvironment, BadCheckWiringNamesTheVariable) {
  for (const std::string text : {"yes", "2", "true", " 1"}) {
    env_.clear();
    set_one_rank();
    env_["WEFT_CHECK_WIRING"] = text;
    const absl::Status s = start();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("WEFT_CHECK_WIRING='" + text + "'"));
  }
  EXPECT_EQ(bootstraps_made_, 0);
  for (const std::string text : {"0", "1", ""}) {
    env_.clear();
    set_one_rank();
    env_["WEFT_CHECK_WIRING"] = text;
    EXPECT_EQ(start().code(), absl::StatusCode::kInternal) << text;
  }
  EXPECT_EQ(bootstraps_made_, 3);
}

TEST_F(ProcessGroupEnvironment, TcpDoesNotReadTheMemoryRegionBudget) {
  env_["MLX_RANK"] = "0";
  env_["MLX_HOSTFILE"] = write_json("hosts.json", R"([["127.0.0.1:41000"]])");
  env_["WEFT_MR_BUDGET"] = "not read";
  EXPECT_EQ(start().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(bootstraps_made_, 1);
}

// WEFT_FABRIC, which weft-sim launch sets, names the fabric: a Config the
// caller made for the other one is refused before the side channel, and
// so is a value that names no fabric; a Config that agrees starts.
TEST_F(ProcessGroupEnvironment, ACallersConfigMustRunOnTheLaunchedFabric) {
  Config verbs;  // one rank, RDMA devices, no TCP hosts
  Config tcp;
  tcp.tcp_hosts = {{"127.0.0.1:41000"}};
  tcp.devices = tcp_mesh_topology(tcp.tcp_hosts);
  env_["WEFT_FABRIC"] = "tcp";
  absl::Status s = start(verbs);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr("WEFT_FABRIC=tcp"),
                    HasSubstr("has RDMA devices and no TCP hosts"),
                    HasSubstr("ProcessGroup::from_environment()")));
  env_["WEFT_FABRIC"] = "verbs";
  s = start(tcp);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr("WEFT_FABRIC=verbs"), HasSubstr("TCP hosts")));
  env_["WEFT_FABRIC"] = "sim";
  s = start(verbs);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("WEFT_FABRIC='sim' is not a fabric"));
  EXPECT_EQ(bootstraps_made_, 0);
  env_["WEFT_FABRIC"] = "tcp";
  EXPECT_EQ(start(tcp).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(bootstraps_made_, 1);
}

}  // namespace
}  // namespace weft
