// WEFT_TRACE and WEFT_LOG_LEVEL on the verbs fabric, over the simulated
// provider (verbs_cluster.h): each rank writes its own Perfetto timeline,
// with one track per rank and per link direction and cable, and a slice for
// every frame it sent - as many as Group::counters() says the engine sent;
// the files merge into one view. At info level a run logs each connect and
// GID choice, at debug each retransmission; at the default level a clean
// run prints nothing; an unknown level is reported once.
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/collectives_suite/cases.h"
#include "tests/support/trace_nesting.h"
#include "tests/verbs/verbs_cluster.h"
#include "timeline/timeline.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using verbs::testing::VerbsCluster;

constexpr uint32_t kRanks = 3;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

GroupOptions small_frames() {
  GroupOptions o;
  o.timeout_ns = 20 * kNsPerMs;
  o.max_frame_bytes = GroupOptions::kMinFrameBytes;
  return o;
}

// One mesh all-reduce of 40 KB on a fresh cluster; every rank succeeds.
// Then every group is stepped until nothing is pending, so no frame is
// sent after the counters are read.
std::vector<GroupCounters> run_once(const sim::FaultPlan& faults = {}) {
  harness::ClusterSpec spec;
  spec.topology = *Topology::mesh(kRanks);
  spec.faults = faults;
  absl::StatusOr<std::unique_ptr<VerbsCluster>> cluster =
      VerbsCluster::create(spec, small_frames());
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return {};
  std::vector<PreparedCase> cases;
  cases.emplace_back(Case{.kind = Kind::kAllReduce,
                          .dtype = DType::kFloat32,
                          .count = 10000,
                          .algorithm = Algorithm::kMeshExchange},
                     kRanks);
  ScriptRun run = run_cases(**cluster, cases);
  EXPECT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < kRanks; ++r) {
    EXPECT_TRUE(run.results[r][0].ok()) << run.results[r][0];
    EXPECT_EQ(cases[0].check(r), "") << "rank " << r;
  }
  constexpr int kMaxRounds = 1 << 16;
  bool settled = false;
  for (int round = 0; round < kMaxRounds && !settled; ++round) {
    settled = true;
    for (uint32_t r = 0; r < kRanks; ++r) {
      settled &= (*cluster)->group(r).progress().is_done();
    }
  }
  EXPECT_TRUE(settled) << "the groups never settled";
  std::vector<GroupCounters> counters;
  for (uint32_t r = 0; r < kRanks; ++r) {
    counters.push_back((*cluster)->group(r).counters());
  }
  return counters;  // the cluster goes: each fabric writes its file
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    setenv(name, value, 1);
    base::reload_log_level();
  }
  ~ScopedEnv() {
    unsetenv(name_);
    base::reload_log_level();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// A link's tracks are named for it, slot 0 alone and the others with
// " slot S" (frames in flight at once): by link, the slots' events count
// together.
struct Tracks {
  std::map<int64_t, std::string> ranks;  // tid -> name
  std::map<int64_t, std::string> links;  // tid -> its link's name
  std::map<std::string, uint64_t> slices;  // link name -> "X" events
  std::set<std::string> link_names() const {
    std::set<std::string> out;
    for (const auto& [tid, name] : links) out.insert(name);
    return out;
  }
};

std::string link_of_track(const std::string& track) {
  return track.substr(0, track.find(" slot "));
}

Tracks tracks_of(const std::string& text) {
  const nlohmann::json doc = nlohmann::json::parse(text);
  Tracks t;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name") {
      const std::string name = e.at("args").at("name");
      if (e.at("pid") == 1) {
        t.ranks[e.at("tid").get<int64_t>()] = name;
      } else {
        t.links[e.at("tid").get<int64_t>()] = link_of_track(name);
      }
    }
  }
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "X" && e.at("pid") == 2) {
      ++t.slices[t.links.at(e.at("tid").get<int64_t>())];
    }
  }
  return t;
}

TEST(VerbsTrace, EachRankWritesItsTimelineWithEveryFrameItSent) {
  const std::string pattern = absl::StrFormat("%s/weft_trace_%d_%%r.json",
                                              ::testing::TempDir(), getpid());
  std::vector<GroupCounters> counters;
  {
    ScopedEnv trace("WEFT_TRACE", pattern.c_str());
    counters = run_once();
  }
  ASSERT_EQ(counters.size(), kRanks);
  std::vector<std::string> names, files;
  for (uint32_t r = 0; r < kRanks; ++r) {
    names.push_back(absl::StrFormat("%s/weft_trace_%d_%u.json",
                                    ::testing::TempDir(), getpid(), r));
    files.push_back(read_file(names.back()));
    std::remove(names.back().c_str());
    ASSERT_FALSE(files.back().empty()) << names.back() << " was not written";
    const Tracks t = tracks_of(files.back());
    ASSERT_EQ(t.ranks.size(), 1u);
    EXPECT_EQ(t.ranks.begin()->second, absl::StrFormat("rank %u", r));
    // Both directions of every cable this rank has.
    EXPECT_EQ(t.link_names().size(), 2 * (kRanks - 1)) << files.back();
    for (const PeerCounters& p : counters[r].peers) {
      const LinkCounters& c = p.counts;
      const std::string out =
          absl::StrFormat("link %u->%u cable %u", r, p.peer, p.cable);
      EXPECT_EQ(t.slices.count(out), 1u) << out;
      const uint64_t frames = t.slices.count(out) ? t.slices.at(out) : 0;
      EXPECT_EQ(frames, c.frames_sent + c.frames_resent + c.acks_sent) << out;
      EXPECT_GT(c.frames_sent, 0u);
    }
  }
  absl::StatusOr<std::string> merged = timeline::merge_timelines(names, files);
  ASSERT_TRUE(merged.ok()) << merged.status();
  const Tracks all = tracks_of(*merged);
  EXPECT_EQ(all.ranks.size(), kRanks);
  EXPECT_EQ(all.link_names().size(), kRanks * (kRanks - 1))
      << "each direction of each cable once";
  EXPECT_THAT(weft::testing::nesting_violations(nlohmann::json::parse(*merged)),
              ::testing::IsEmpty());
  uint64_t sent = 0, slices = 0;
  for (const GroupCounters& c : counters) {
    sent += c.total.frames_sent + c.total.frames_resent + c.total.acks_sent;
  }
  for (const auto& [name, n] : all.slices) slices += n;
  EXPECT_EQ(slices, sent);
}

TEST(VerbsTrace, MergeRefusesWhatIsNotATimeline) {
  const std::vector<std::string> names = {"a.json"};
  const std::vector<std::string> docs = {"{\"not\": 1}"};
  absl::StatusOr<std::string> merged = timeline::merge_timelines(names, docs);
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(merged.status().message()), HasSubstr("a.json"));
}

TEST(VerbsLogging, InfoShowsConnectsAndGidChoices) {
  ScopedEnv level("WEFT_LOG_LEVEL", "info");
  ::testing::internal::CaptureStderr();
  run_once();
  const std::string err = ::testing::internal::GetCapturedStderr();
  for (uint32_t r = 0; r < kRanks; ++r) {
    for (uint32_t p = 0; p < kRanks; ++p) {
      if (p == r) continue;
      EXPECT_THAT(
          err, HasSubstr(absl::StrFormat(
                   "weft I rank %u: connected to peer %u cable 0 on ", r, p)));
    }
  }
  EXPECT_THAT(err, HasSubstr("GID index"));
  EXPECT_THAT(err, Not(HasSubstr("resending"))) << "a clean run";
}

TEST(VerbsLogging, DebugShowsARetransmission) {
  sim::ScriptedFault drop;
  drop.kind = sim::FaultKind::kDrop;
  drop.rank = 0;
  drop.peer = 1;
  drop.frame = 3;
  sim::FaultPlan plan;
  plan.script.push_back(drop);
  ScopedEnv level("WEFT_LOG_LEVEL", "debug");
  ::testing::internal::CaptureStderr();
  const std::vector<GroupCounters> counters = run_once(plan);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("weft D rank 0: resending data frame "));
  EXPECT_THAT(err, HasSubstr("to peer 1 cable 0"));
  ASSERT_EQ(counters.size(), kRanks);
  EXPECT_GE(counters[0].total.frames_resent, 1u);
}

TEST(VerbsLogging, DefaultLevelPrintsNothingOnACleanRun) {
  unsetenv("WEFT_LOG_LEVEL");
  base::reload_log_level();
  ::testing::internal::CaptureStderr();
  run_once();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(VerbsLogging, AnUnknownLevelIsReportedWithTheAcceptedOnes) {
  ::testing::internal::CaptureStderr();
  {
    ScopedEnv level("WEFT_LOG_LEVEL", "verbose");
    EXPECT_FALSE(base::log_enabled(base::LogLevel::kInfo));
    EXPECT_TRUE(base::log_enabled(base::LogLevel::kWarning));
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("WEFT_LOG_LEVEL=verbose is not a level; use "
                             "error, warning, info or debug"));
}

}  // namespace
}  // namespace weft::testing
