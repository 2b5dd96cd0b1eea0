// The loader and what VerbsFabric and device listing say when the library
// is missing, incomplete, or (rdma-core's real libibverbs.so.1 on a machine
// without RDMA hardware) lists no devices.
#include "verbs/loader.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "base/absl_compat.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "verbs/departure_check.h"
#include "verbs/device_info.h"
#include "verbs/verbs_fabric.h"

namespace weft::verbs {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Sets WEFT_VERBS_LIBRARY for one scope, restoring the previous value.
class ScopedLibraryEnv {
 public:
  explicit ScopedLibraryEnv(const char* value) {
    if (const char* old = std::getenv(kLibraryEnv)) old_ = old;
    if (value == nullptr) {
      unsetenv(kLibraryEnv);
    } else {
      setenv(kLibraryEnv, value, 1);
    }
  }
  ~ScopedLibraryEnv() {
    if (old_.has_value()) {
      setenv(kLibraryEnv, old_->c_str(), 1);
    } else {
      unsetenv(kLibraryEnv);
    }
  }

 private:
  std::optional<std::string> old_;
};

constexpr const char* kMissing = "/nonexistent/weft/libibverbs-missing.so";

TEST(LoaderTest, SystemLibraryNameIsThePlatforms) {
#if defined(__APPLE__)
  EXPECT_EQ(system_library_name(), "librdma.dylib");
#else
  EXPECT_EQ(system_library_name(), "libibverbs.so.1");
#endif
  ScopedLibraryEnv unset(nullptr);
  EXPECT_EQ(VerbsLibrary::default_path(), std::string(system_library_name()));
  ScopedLibraryEnv set("/opt/x/libverbs.so");
  EXPECT_EQ(VerbsLibrary::default_path(), "/opt/x/libverbs.so");
}

TEST(LoaderTest, MissingLibraryIsAnErrorNamingIt) {
  auto library = VerbsLibrary::load(kMissing);
  ASSERT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(base::message_of(library.status()),
              AllOf(HasSubstr("cannot load the RDMA library"),
                    HasSubstr(kMissing), HasSubstr("No such file")));
  EXPECT_EQ(error_place(library.status())->cause, ErrorCause::kFabric);
}

TEST(LoaderTest, MissingLibraryFromTheEnvironmentSaysWhereItCameFrom) {
  ScopedLibraryEnv env(kMissing);
  auto fabric = VerbsFabric::open(0);
  ASSERT_EQ(fabric.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      base::message_of(fabric.status()),
      AllOf(HasSubstr(kMissing), HasSubstr("named by WEFT_VERBS_LIBRARY"),
            HasSubstr("unset it to use libibverbs.so.1")));
}

TEST(LoaderTest, MissingEntryPointIsNamed) {
  auto library = VerbsLibrary::load(WEFT_INCOMPLETE_VERBS_PATH);
  ASSERT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(base::message_of(library.status()),
              AllOf(HasSubstr("has no entry point ibv_modify_qp"),
                    HasSubstr("not an ibverbs library")));
  VerbsFabric::Options options;
  options.library = WEFT_INCOMPLETE_VERBS_PATH;
  EXPECT_THAT(base::message_of(VerbsFabric::open(0, options).status()),
              HasSubstr("ibv_modify_qp"));
}

// rdma-core's own library, on a machine with no RDMA device (CI).
class RealLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto library = VerbsLibrary::load("libibverbs.so.1");
    if (!library.ok()) GTEST_SKIP() << library.status();
    library_ = *library;
    if (list_devices(*library_).ok()) {
      GTEST_SKIP() << "this host has RDMA devices";
    }
  }
  const VerbsLibrary* library_ = nullptr;
};

TEST_F(RealLibraryTest, EveryEntryPointResolves) {
  const VerbsApi& api = library_->api();
  EXPECT_NE(api.modify_qp, nullptr);
  EXPECT_NE(api.query_port, nullptr);
  EXPECT_NE(api.reg_mr, nullptr);
  EXPECT_NE(api.get_device_guid, nullptr);
  EXPECT_NE(api.query_device, nullptr);
  EXPECT_EQ(library_->status_name(5), "Work Request Flushed Error");
  // weft's simulated provider's own calls are not there: a group on this
  // library watches its side channel for dead peers.
  EXPECT_EQ(api.sim_departed, nullptr);
  EXPECT_FALSE(departure_check(*library_, 0));
}

TEST_F(RealLibraryTest, NoDevicesIsACleanError) {
  auto devices = list_devices(*library_);
  ASSERT_EQ(devices.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(base::message_of(devices.status()),
              AllOf(HasSubstr("no RDMA devices found by libibverbs.so.1"),
                    HasSubstr("ibv_get_device_list")));
  VerbsFabric::Options options;
  options.library = "libibverbs.so.1";
  auto fabric = VerbsFabric::open(3, options);
  ASSERT_EQ(fabric.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(base::message_of(fabric.status()),
              AllOf(HasSubstr("rank 3"), HasSubstr("no RDMA devices"),
                    HasSubstr(std::string(no_devices_remedy()))));
}

}  // namespace
}  // namespace weft::verbs
