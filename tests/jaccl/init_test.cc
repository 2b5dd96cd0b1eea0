// jaccl::init's refusals, as JACCL makes them (nullptr, or with strict an
// exception saying what to set), and the ones weft adds (a bad rank, no
// verbs library, a coordinator that never answers), which always throw.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaccl/jaccl.h"
#include "tests/jaccl/jaccl_env.h"
#include "tests/support/ports.h"

namespace jaccl {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string strict_error(const Config& cfg) {
  try {
    init(cfg, true);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no exception)";
}

std::string strict_env_error() {
  try {
    init(true);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(InitFromEnv, MissingVariables) {
  testing::ScopedEnv env;
  EXPECT_EQ(init(false), nullptr);
  EXPECT_THAT(strict_env_error(),
              AllOf(HasSubstr("JACCL_RANK/MLX_RANK"),
                    HasSubstr("JACCL_IBV_DEVICES/MLX_IBV_DEVICES"),
                    HasSubstr("JACCL_COORDINATOR/MLX_JACCL_COORDINATOR")));
  // Two of three is still missing one.
  testing::ScratchFile two("two.json", R"([[null, "a"], ["a", null]])");
  env.set("JACCL_RANK", "0");
  env.set("MLX_IBV_DEVICES", two.path());
  EXPECT_EQ(init(false), nullptr);
  EXPECT_THAT(strict_env_error(), HasSubstr("JACCL_COORDINATOR"));
}

// A device file with a one-way cable or a rank joined to none is no mesh
// and no ring, so, as in JACCL, init(false) forms no group (and says why on
// stderr) and init(true) throws; both say it in the line every weft reader
// of a device file gives (fabric/topology_check.h), naming the file.
TEST(InitFromEnv, AOneWayCableOrAnIsolatedRankIsNoGroupAndNamesTheFile) {
  struct Case {
    const char* name;
    const char* json;
    const char* says;
  };
  const Case cases[] = {
      {"one_way.json", R"([[null, "a"], [null, null]])",
       "rank 0 names device a toward rank 1 (cell [0][1]) but rank 1 names "
       "none toward rank 0 (cell [1][0] is null); name rank 1's device "
       "toward rank 0 in cell [1][0], or set cell [0][1] to null"},
      {"isolated.json",
       R"([[null, "a", null], ["b", null, null], [null, null, null]])",
       "rank 2 is joined to no rank (row 2 and column 2 are all null); give "
       "it cables to ranks 1 and 0 (its ring neighbours; to every rank for "
       "the mesh), or run with fewer ranks (remove row 2 and column 2)"},
  };
  for (const Case& c : cases) {
    testing::ScopedEnv env;
    testing::ScratchFile file(c.name, c.json);
    env.set("JACCL_RANK", "0");
    env.set("JACCL_IBV_DEVICES", file.path());
    env.set("JACCL_COORDINATOR", "127.0.0.1:1");
    const std::string line = "[jaccl] " + file.path() + ": " + c.says;
    ::testing::internal::CaptureStderr();
    const std::shared_ptr<Group> group = init(false);
    const std::string said = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(group, nullptr) << c.name;
    EXPECT_EQ(said, line + "\n") << c.name;
    EXPECT_EQ(strict_env_error(), line) << c.name;
  }
}

// A pair with a different number of cables each way, which JACCL's mesh
// would run over the first cable alone and weft cannot, is refused when the
// file is read, with or without strict.
TEST(InitFromEnv, ADifferentNumberOfCablesEachWayThrowsTheFilesLine) {
  testing::ScopedEnv env;
  testing::ScratchFile file("counts.json",
                            R"([[null, ["a", "b"]], ["c", null]])");
  env.set("JACCL_RANK", "0");
  env.set("JACCL_IBV_DEVICES", file.path());
  env.set("JACCL_COORDINATOR", "127.0.0.1:1");
  for (bool strict : {false, true}) {
    try {
      init(strict);
      ADD_FAILURE() << "counts.json was taken, strict " << strict;
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr("[jaccl] " + file.path() + ": "),
                                  HasSubstr("rank 0 gives rank 1 two cables")));
    }
  }
}

// from_env() without a rank variable has no rank: init(cfg) forms no group
// (JACCL would start every such process as rank 0).
TEST(InitFromEnv, ConfigWithoutARankIsNoGroup) {
  testing::ScopedEnv env;
  testing::ScratchFile two("two.json", R"([[null, "a"], ["a", null]])");
  env.set("JACCL_IBV_DEVICES", two.path());
  env.set("JACCL_COORDINATOR", "127.0.0.1:5000");
  const Config cfg = Config::from_env();
  EXPECT_TRUE(cfg.is_valid());
  EXPECT_EQ(init(cfg, false), nullptr);
  try {
    init(cfg, true);
    ADD_FAILURE() << "init(cfg, true) formed a group without a rank";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no rank: set JACCL_RANK or MLX_RANK"));
  }
  // A rank given later counts; text that is not a rank reads as -1.
  EXPECT_EQ(Config(cfg).set_rank(1).get_rank(), 1);
  EXPECT_EQ(Config(cfg).set_rank(3).set_rank("abc").get_rank(), -1);
}

TEST(InitFromEnv, OneRankWorldIsNoGroup) {
  testing::ScopedEnv env;
  testing::ScratchFile one("one.json", "[[null]]");
  env.set("JACCL_RANK", "0");
  env.set("JACCL_IBV_DEVICES", one.path());
  env.set("JACCL_COORDINATOR", "127.0.0.1:5000");
  EXPECT_EQ(init(false), nullptr);
  EXPECT_THAT(strict_env_error(),
              HasSubstr("should define a valid mesh or a valid ring"));
}

// weft's addition: WEFT_FABRIC=tcp, which weft-sim launch --fabric=tcp
// sets, forms the group over TCP from MLX's ring hostfile, where JACCL's
// variables alone form none.
TEST(InitFromEnv, WeftFabricTcpFormsTheGroupFromTheHostfile) {
  testing::ScopedEnv env;
  const std::vector<uint16_t> port = weft::testing::free_ports("127.0.0.1", 1);
  ASSERT_EQ(port.size(), 1u);
  testing::ScratchFile hosts("hosts.json",
                             absl::StrFormat(R"([["127.0.0.1:%u"]])", port[0]));
  env.set("MLX_HOSTFILE", hosts.path());
  env.set("MLX_RANK", "0");
  EXPECT_EQ(init(false), nullptr);
  env.set("WEFT_FABRIC", "tcp");
  EXPECT_TRUE(is_available());
  const std::shared_ptr<Group> group = init(false);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->rank(), 0);
  EXPECT_EQ(group->size(), 1);
}

TEST(InitFromEnv, WeftFabricNamingNoFabricThrows) {
  testing::ScopedEnv env;
  env.set("WEFT_FABRIC", "rdma");
  EXPECT_TRUE(is_available());  // so that init() says what is wrong
  try {
    init(false);
    FAIL() << "WEFT_FABRIC=rdma was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr("[jaccl] WEFT_FABRIC=rdma names no fabric"),
                      HasSubstr("tcp"), HasSubstr("verbs")));
  }
}

Config two_rank_mesh() {
  Config c;
  c.set_devices({{{}, {"en2"}}, {{"en3"}, {}}});
  c.set_coordinator("127.0.0.1:1");
  return c;
}

TEST(InitFromConfig, InvalidTopologyIsNullOrThrows) {
  Config c;
  c.set_devices({{{}}});
  EXPECT_EQ(init(c, false), nullptr);
  EXPECT_THAT(strict_error(c), HasSubstr("valid mesh or a valid ring"));
}

// Devices neither the mesh nor the ring runs on: strict says which pair to
// join, in the words weft-sim and weft-bench use for the same cables.
TEST(InitFromConfig, CablesNeitherTheMeshNorTheRingRunsOnSayWhatToJoin) {
  Config c;
  // A line 0-1-2-3: the ring lacks 3-0.
  c.set_devices({{{}, {"a"}, {}, {}},
                 {{"b"}, {}, {"c"}, {}},
                 {{}, {"d"}, {}, {"e"}},
                 {{}, {}, {"f"}, {}}});
  c.set_rank(0);
  c.set_coordinator("127.0.0.1:1");
  EXPECT_EQ(init(c, false), nullptr);
  EXPECT_EQ(strict_error(c),
            "[jaccl] the devices: ranks 3 and 0 are not joined (cells [3][0] "
            "and [0][3] are null), so neither the ring (each rank joined to "
            "the next) nor the mesh (every pair joined) runs on these cables; "
            "join ranks 3 and 0 for the ring, or every pair for the mesh");
}

// Past JACCL's checks, a bad rank throws even without strict.
TEST(InitFromConfig, BadRankTextThrowsNamingIt) {
  Config c = two_rank_mesh();
  c.set_rank("one");
  try {
    init(c, false);
    FAIL() << "rank 'one' was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("[jaccl]"), HasSubstr("'one'")));
  }
}

TEST(InitFromConfig, RankOutOfRangeThrows) {
  Config c = two_rank_mesh();
  c.set_rank(5);
  EXPECT_THAT(strict_error(c), AllOf(HasSubstr("rank 5"), HasSubstr("2")));
  c.set_rank(-1);
  EXPECT_THAT(strict_error(c), HasSubstr("-1"));
}

TEST(InitFromConfig, NoVerbsLibraryThrowsNamingIt) {
  testing::ScopedEnv env;
  env.set("WEFT_VERBS_LIBRARY", "/nonexistent/libibverbs.so.1");
  EXPECT_FALSE(is_available());
  Config c = two_rank_mesh();
  c.set_rank(0);
  int calls = 0;
  c.set_all_gather([&](const char*, char*, size_t) { ++calls; });
  try {
    init(c, false);
    FAIL() << "a group formed without a verbs library";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("[jaccl]"),
                                HasSubstr("/nonexistent/libibverbs.so.1")));
  }
  EXPECT_EQ(calls, 0);  // the side channel was made, never used
}

// Rank 1 tries the coordinator (where nothing listens) until
// WEFT_CONNECT_TIMEOUT_S, then throws naming the address.
TEST(InitFromConfig, UnreachableCoordinatorThrowsWithinTheConnectTimeout) {
  testing::ScopedEnv env;
  env.set("WEFT_CONNECT_TIMEOUT_S", "0.2");
  Config c = two_rank_mesh();
  c.set_rank(1);
  try {
    init(c, false);
    FAIL() << "a group formed without rank 0";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr("[jaccl]"), HasSubstr("127.0.0.1:1")));
  }
}

}  // namespace
}  // namespace jaccl
