// The trace: determinism of its hash (same seed twice, other seeds with
// faults), the hash as the documented function of the events, and the
// Perfetto export.
#include <cstdint>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/p2p_traffic.h"
#include "nlohmann/json.hpp"
#include "sim/world.h"

namespace weft::sim {
namespace {

using ::testing::HasSubstr;

WorldOptions options(uint64_t seed, bool faults, bool keep = true) {
  WorldOptions o;
  o.topology = *Topology::mesh(4);
  o.seed = seed;
  o.keep_trace_events = keep;
  if (faults) {
    o.faults.rates = {.loss = 0.01,
                      .duplicate = 0.01,
                      .reorder = 0.01,
                      .error_completion = 0.001};
  }
  return o;
}

std::unique_ptr<World> run(WorldOptions o) {
  auto world = *World::create(std::move(o));
  harness::P2pConfig config;
  config.frames_per_pair = 100;
  config.frame_bytes = 256;
  auto traffic = *harness::P2pTraffic::create(*world, config);
  EXPECT_TRUE(world->run(traffic->programs()).completed());
  return world;
}

TEST(Trace, SameSeedSameHash) {
  const uint64_t first = run(options(7, true))->trace().hash();
  const uint64_t second = run(options(7, true))->trace().hash();
  EXPECT_EQ(first, second);
}

TEST(Trace, HashDoesNotDependOnKeepingEvents) {
  EXPECT_EQ(run(options(7, true, true))->trace().hash(),
            run(options(7, true, false))->trace().hash());
}

TEST(Trace, OtherSeedsWithFaultsGiveOtherHashes) {
  std::set<uint64_t> hashes;
  for (uint64_t seed = 1; seed <= 4; ++seed)
    hashes.insert(run(options(seed, true))->trace().hash());
  EXPECT_EQ(hashes.size(), 4u);
}

TEST(Trace, WithoutFaultsTheSeedChangesNothing) {
  EXPECT_EQ(run(options(1, false))->trace().hash(),
            run(options(2, false))->trace().hash());
}

// The documented hash, reimplemented: word-wise FNV-1a over each event's
// fields in a fixed order.
uint64_t reference_hash(const std::vector<TraceEvent>& events) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](uint64_t w) { h = (h ^ w) * 0x100000001b3ull; };
  for (const TraceEvent& e : events) {
    mix(static_cast<uint64_t>(e.time_ns));
    mix((uint64_t{static_cast<uint8_t>(e.kind)} << 56) |
        (uint64_t{static_cast<uint8_t>(e.fault)} << 48) |
        (uint64_t{static_cast<uint8_t>(e.drop)} << 40) |
        (uint64_t{static_cast<uint8_t>(e.work.kind)} << 32) |
        static_cast<uint32_t>(e.status));
    mix((uint64_t{e.rank} << 32) | e.peer);
    mix((uint64_t{e.cable} << 32) | e.bytes);
    mix((uint64_t{e.work.peer} << 32) | e.work.slot);
    mix(uint64_t{e.sequence} << 32);
    mix(e.frame);
    mix(static_cast<uint64_t>(e.start_ns));
  }
  return h;
}

TEST(Trace, HashIsTheDocumentedFunctionOfTheEvents) {
  auto world = run(options(3, true));
  const Trace& trace = world->trace();
  ASSERT_EQ(trace.events().size(), trace.size());
  EXPECT_EQ(trace.hash(), reference_hash(trace.events()));
  EXPECT_EQ(trace.hash_hex().size(), 16u);
}

TEST(Trace, RecordsEveryKindOfEvent) {
  auto world = run(options(3, true));
  std::set<TraceKind> kinds;
  for (const TraceEvent& e : world->trace().events()) kinds.insert(e.kind);
  for (TraceKind k :
       {TraceKind::kPostSend, TraceKind::kPostRecv, TraceKind::kDepart,
        TraceKind::kDeliver, TraceKind::kDrop, TraceKind::kCompletion,
        TraceKind::kFault, TraceKind::kConnect}) {
    EXPECT_TRUE(kinds.count(k)) << trace_kind_name(k);
  }
}

TEST(Trace, PerfettoJsonHasRankAndLinkTracks) {
  auto world = run(options(3, true));
  const std::string path = ::testing::TempDir() + "/weft_trace_test.json";
  ASSERT_TRUE(world->trace().write_perfetto_json(path).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  ASSERT_TRUE(doc["traceEvents"].is_array());
  std::set<std::string> threads, processes;
  bool fractional_ts = false, has_slice = false;
  for (const auto& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid"));
    if (e["ph"] == "M" && e["name"] == "thread_name")
      threads.insert(e["args"]["name"]);
    if (e["ph"] == "M" && e["name"] == "process_name")
      processes.insert(e["args"]["name"]);
    if (e["ph"] == "X") {
      has_slice = true;
      EXPECT_GT(e["dur"].get<double>(), 0.0);
    }
    if (e.contains("ts")) {
      const double ts = e["ts"].get<double>();
      if (ts != static_cast<double>(static_cast<int64_t>(ts)))
        fractional_ts = true;
    }
  }
  EXPECT_EQ(processes, (std::set<std::string>{"ranks", "links"}));
  for (int r = 0; r < 4; ++r)
    EXPECT_TRUE(threads.count("rank " + std::to_string(r))) << r;
  EXPECT_TRUE(threads.count("link 0->1 cable 0"));
  EXPECT_TRUE(threads.count("link 3->2 cable 0"));
  EXPECT_TRUE(has_slice);
  EXPECT_TRUE(fractional_ts);  // microseconds with nanosecond fractions
  EXPECT_EQ(doc["otherData"]["trace_hash"], world->trace().hash_hex());
}

TEST(Trace, ExportNeedsKeptEventsAndAWritablePath) {
  auto world = run(options(3, false, false));
  EXPECT_EQ(world->trace().perfetto_json().status().code(),
            absl::StatusCode::kFailedPrecondition);
  auto kept = run(options(3, false));
  absl::Status s = kept->trace().write_perfetto_json("/nonexistent-dir/x.json");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("/nonexistent-dir/x.json"));
}

}  // namespace
}  // namespace weft::sim
