// The drop-in verbs library (the simulated provider as libibverbs.so.1 and
// librdma.dylib in its drop-in directory): each ibv_* function has the
// default symbol version rdma-core 44 gives it, every version node of that
// release is defined, and weft's own control calls stay reachable by plain
// name.
#include <dlfcn.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft::verbs {
namespace {

using ::testing::HasSubstr;

std::string dropin(const char* name) {
  return std::string(WEFT_SIM_VERBS_DROPIN_DIR) + "/" + name;
}

struct Versioned {
  const char* name;
  const char* version;
};

// rdma-core 44's libibverbs/libibverbs.map.in: the default (@@) version of
// each function the provider implements.
constexpr Versioned kRdmaCore44[] = {
    {"ibv_create_comp_channel", "IBVERBS_1.0"},
    {"ibv_destroy_comp_channel", "IBVERBS_1.0"},
    {"ibv_read_sysfs_file", "IBVERBS_1.0"},
    {"ibv_ack_cq_events", "IBVERBS_1.1"},
    {"ibv_alloc_pd", "IBVERBS_1.1"},
    {"ibv_close_device", "IBVERBS_1.1"},
    {"ibv_create_cq", "IBVERBS_1.1"},
    {"ibv_create_qp", "IBVERBS_1.1"},
    {"ibv_dealloc_pd", "IBVERBS_1.1"},
    {"ibv_dereg_mr", "IBVERBS_1.1"},
    {"ibv_destroy_cq", "IBVERBS_1.1"},
    {"ibv_destroy_qp", "IBVERBS_1.1"},
    {"ibv_event_type_str", "IBVERBS_1.1"},
    {"ibv_free_device_list", "IBVERBS_1.1"},
    {"ibv_get_cq_event", "IBVERBS_1.1"},
    {"ibv_get_device_guid", "IBVERBS_1.1"},
    {"ibv_get_device_list", "IBVERBS_1.1"},
    {"ibv_get_device_name", "IBVERBS_1.1"},
    {"ibv_modify_qp", "IBVERBS_1.1"},
    {"ibv_node_type_str", "IBVERBS_1.1"},
    {"ibv_open_device", "IBVERBS_1.1"},
    {"ibv_port_state_str", "IBVERBS_1.1"},
    {"ibv_query_device", "IBVERBS_1.1"},
    {"ibv_query_gid", "IBVERBS_1.1"},
    {"ibv_query_port", "IBVERBS_1.1"},
    {"ibv_query_qp", "IBVERBS_1.1"},
    {"ibv_reg_mr", "IBVERBS_1.1"},
    {"ibv_wc_status_str", "IBVERBS_1.1"},
    {"ibv_query_gid_type", "IBVERBS_PRIVATE_34"},
};

// Every version node rdma-core 44 defines.
constexpr const char* kRdmaCore44Nodes[] = {
    "IBVERBS_1.0",       "IBVERBS_1.1",  "IBVERBS_1.5",  "IBVERBS_1.6",
    "IBVERBS_1.7",       "IBVERBS_1.8",  "IBVERBS_1.9",  "IBVERBS_1.10",
    "IBVERBS_1.11",      "IBVERBS_1.12", "IBVERBS_1.13", "IBVERBS_1.14",
    "IBVERBS_PRIVATE_34"};

class Library {
 public:
  explicit Library(const std::string& path)
      : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~Library() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  void* handle() const { return handle_; }

 private:
  void* handle_;
};

TEST(DropinSymbolVersionsTest, EachFunctionHasRdmaCore44sDefaultVersion) {
  Library ours(dropin("libibverbs.so.1"));
  ASSERT_NE(ours.handle(), nullptr) << dlerror();
  for (const Versioned& f : kRdmaCore44) {
    void* versioned = dlvsym(ours.handle(), f.name, f.version);
    EXPECT_NE(versioned, nullptr) << f.name << "@" << f.version;
    // The plain name (what weft's loader and dlsym users get) is that one.
    EXPECT_EQ(dlsym(ours.handle(), f.name), versioned) << f.name;
  }
  // A version rdma-core does not give the name is not there.
  EXPECT_EQ(dlvsym(ours.handle(), "ibv_get_device_list", "IBVERBS_1.0"),
            nullptr);
  EXPECT_EQ(dlvsym(ours.handle(), "ibv_query_gid_type", "IBVERBS_1.1"),
            nullptr);
}

// The table above against the machine's rdma-core, when it is release 44.
TEST(DropinSymbolVersionsTest, TableMatchesTheSystemsRdmaCore44) {
  if (WEFT_RDMA_CORE_RELEASE != 44) {
    GTEST_SKIP() << "this machine's rdma-core is release "
                 << WEFT_RDMA_CORE_RELEASE << ", not 44";
  }
  Library system(WEFT_RDMA_CORE_LIBRARY);
  ASSERT_NE(system.handle(), nullptr) << dlerror();
  ASSERT_EQ(dlsym(system.handle(), "weft_sim_verbs_reset"), nullptr);
  for (const Versioned& f : kRdmaCore44) {
    void* versioned = dlvsym(system.handle(), f.name, f.version);
    EXPECT_NE(versioned, nullptr) << f.name << "@" << f.version;
    EXPECT_EQ(dlsym(system.handle(), f.name), versioned) << f.name;
  }
}

TEST(DropinSymbolVersionsTest, EveryVersionNodeOfRelease44IsDefined) {
  const std::string command = std::string("'") + WEFT_READELF +
                              "' --version-info '" + dropin("libibverbs.so.1") +
                              "' 2>&1";
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    out.append(buffer, n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  const std::string definitions =
      out.substr(0, out.find("Version needs section"));
  for (const char* node : kRdmaCore44Nodes) {
    EXPECT_THAT(definitions, HasSubstr(std::string("Name: ") + node + "\n"))
        << out;
  }
}

TEST(DropinSymbolVersionsTest, ControlCallsAndApplesNameReachTheSameLibrary) {
  Library ibverbs(dropin("libibverbs.so.1"));
  Library apple(dropin("librdma.dylib"));
  Library provider(WEFT_SIM_VERBS_PATH);
  ASSERT_TRUE(ibverbs.handle() && apple.handle() && provider.handle())
      << dlerror();
  void* reset = dlsym(provider.handle(), "weft_sim_verbs_reset");
  ASSERT_NE(reset, nullptr);
  // One library loaded once, whichever name opened it.
  EXPECT_EQ(dlsym(ibverbs.handle(), "weft_sim_verbs_reset"), reset);
  EXPECT_EQ(dlsym(apple.handle(), "weft_sim_verbs_reset"), reset);
  EXPECT_EQ(dlsym(apple.handle(), "ibv_get_device_list"),
            dlsym(provider.handle(), "ibv_get_device_list"));
  // weft's own code inside stays local.
  EXPECT_EQ(
      dlsym(provider.handle(), "_ZN4weft3sim5World6createENS0_12WorldOptionsE"),
      nullptr);
}

}  // namespace
}  // namespace weft::verbs
