// Registered user memory (Group::register_memory), over every fabric that
// registers it: every collective on registered buffers, in place and out
// of place, matches the reference on mesh and ring; an operation on a
// registered buffer really sends from it (the group's counters say how
// many payload bytes went zero-copy and how many were staged); a handle
// destroyed while an operation uses its memory ends the registration only
// after that operation; bad registrations are typed errors.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/registered_memory.h"
#include "fabric/errors.h"
#include "gtest/gtest.h"
#include "tests/collectives_suite/cases.h"
#include "tests/collectives_suite/suite.h"

namespace weft::testing {
namespace {

// Every collective (two dtypes, sizes from one element to many frames), in
// place and out of place.
std::vector<Case> cases_for(uint32_t n, Algorithm algorithm) {
  std::vector<Case> cases;
  uint64_t salt = 100;
  for (DType dtype : {DType::kInt32, DType::kFloat32}) {
    for (uint64_t count : {uint64_t{1}, uint64_t{7}, uint64_t{3001}}) {
      for (bool in_place : {false, true}) {
        const Case base{.dtype = dtype, .count = count, .in_place = in_place};
        for (Kind kind :
             {Kind::kAllReduce, Kind::kAllGather, Kind::kReduceScatter,
              Kind::kBroadcast, Kind::kReduce, Kind::kAllToAll}) {
          Case c = base;
          c.kind = kind;
          c.algorithm = algorithm;
          c.root = static_cast<uint32_t>(count % n);
          c.salt = salt++;
          cases.push_back(c);
        }
      }
    }
  }
  return cases;
}

// Whether the fabric registers user memory at all; the tests skip where
// it does not (Unimplemented).
bool registers_memory(Cluster& c) {
  std::vector<std::byte> probe(64);
  return c.group(0).register_memory(std::span(probe)).status().code() !=
         absl::StatusCode::kUnimplemented;
}
constexpr char kNoRegistration[] = "the fabric registers no user memory";

RegisteredMemory register_or_fail(Group& g, Bytes buffer) {
  absl::StatusOr<RegisteredMemory> h = g.register_memory(buffer);
  EXPECT_TRUE(h.ok()) << h.status();
  return h.ok() ? *std::move(h) : RegisteredMemory();
}

// Registers every buffer of `cases` on every rank.
std::vector<RegisteredMemory> register_all(Cluster& c,
                                           std::vector<PreparedCase>& cases) {
  std::vector<RegisteredMemory> handles;
  for (PreparedCase& pc : cases) {
    for (uint32_t r = 0; r < c.size(); ++r) {
      for (Bytes b : pc.buffers(r)) {
        handles.push_back(register_or_fail(c.group(r), b));
      }
    }
  }
  return handles;
}

uint64_t total(Cluster& c, uint64_t GroupCounters::*field) {
  uint64_t sum = 0;
  for (uint32_t r = 0; r < c.size(); ++r) sum += c.group(r).counters().*field;
  return sum;
}

void run_registered(const ClusterFactory& fabric, const ClusterSpec& spec,
                    Algorithm algorithm) {
  absl::StatusOr<std::unique_ptr<Cluster>> cluster =
      fabric.create(spec, small_frames());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  if (!registers_memory(c)) GTEST_SKIP() << kNoRegistration;
  std::vector<PreparedCase> cases;
  for (const Case& k : cases_for(c.size(), algorithm)) {
    cases.emplace_back(k, c.size());
  }
  const std::vector<RegisteredMemory> handles = register_all(c, cases);
  ScriptRun run = run_cases(c, cases);
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < c.size(); ++r) {
    for (size_t i = 0; i < run.results[r].size(); ++i) {
      ASSERT_TRUE(run.results[r][i].ok())
          << "rank " << r << " step " << i << ": " << run.results[r][i];
    }
  }
  for (const PreparedCase& pc : cases) {
    for (uint32_t r = 0; r < c.size(); ++r) EXPECT_EQ(pc.check(r), "");
  }
  EXPECT_GT(total(c, &GroupCounters::payload_bytes_zero_copy), 0u);
}

TEST_P(CollectivesRegistered, MeshExchangeMatchesTheReference) {
  run_registered(*GetParam(), spec_of(*Topology::mesh(3)),
                 Algorithm::kMeshExchange);
}

TEST_P(CollectivesRegistered, MeshScatterTwoCablesMatchesTheReference) {
  run_registered(*GetParam(), spec_of(*Topology::mesh(3, 2)),
                 Algorithm::kMeshScatter);
}

TEST_P(CollectivesRegistered, RingMatchesTheReference) {
  run_registered(*GetParam(), spec_of(*Topology::mesh(4)), Algorithm::kRing);
}

// An out-of-place all-gather over a mesh sends each rank's input block to
// every peer, all of it from the registered input: 0 bytes staged.
TEST_P(CollectivesRegistered, ARegisteredInputIsSentWithoutStaging) {
  auto cluster = GetParam()->create(spec_of(*Topology::mesh(3)), {});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  const Case k{.kind = Kind::kAllGather,
               .dtype = DType::kFloat32,
               .count = 20000,
               .algorithm = Algorithm::kMeshExchange};
  std::vector<PreparedCase> cases;
  cases.emplace_back(k, c.size());
  if (!registers_memory(c)) GTEST_SKIP() << kNoRegistration;
  std::vector<RegisteredMemory> handles;
  for (uint32_t r = 0; r < c.size(); ++r) {  // the input only
    handles.push_back(register_or_fail(c.group(r), cases[0].buffers(r)[0]));
  }
  ScriptRun run = run_cases(c, cases);
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < c.size(); ++r) {
    ASSERT_TRUE(run.results[r][0].ok()) << run.results[r][0];
    EXPECT_EQ(cases[0].check(r), "");
  }
  const uint64_t block = 20000 * 4;
  EXPECT_EQ(total(c, &GroupCounters::payload_bytes_zero_copy),
            c.size() * (c.size() - 1) * block);
  EXPECT_EQ(total(c, &GroupCounters::payload_bytes_staged), 0u);
}

// The handle goes away right after the operation on its memory started:
// the operation still completes correctly, and the registration ends once
// it did (the same memory registers again afterwards).
TEST_P(CollectivesRegistered, AHandleDestroyedInUseReleasesAfterTheOperation) {
  auto cluster = GetParam()->create(spec_of(*Topology::mesh(2)), {});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  // The mesh scatter sends from the registered buffer (two ranks' auto
  // runs the exchange, which in place sends a copy).
  const Case k{.kind = Kind::kAllReduce,
               .dtype = DType::kInt32,
               .count = 50000,
               .in_place = true,
               .algorithm = Algorithm::kMeshScatter};
  std::vector<PreparedCase> cases;
  cases.emplace_back(k, c.size());
  // [rank]: every buffer of the rank (in place, the call uses the output).
  std::vector<std::vector<RegisteredMemory>> handles(c.size());
  std::vector<std::vector<Starter>> scripts(c.size());
  if (!registers_memory(c)) GTEST_SKIP() << kNoRegistration;
  for (uint32_t r = 0; r < c.size(); ++r) {
    for (Bytes b : cases[0].buffers(r)) {
      handles[r].push_back(register_or_fail(c.group(r), b));
    }
    Starter start = *cases[0].starter(r);
    scripts[r].push_back([start, &handles, r](Group& g) {
      Operation op = start(g);
      for (RegisteredMemory& h : handles[r]) h.reset();  // while queued
      return op;
    });
  }
  ScriptRun run = c.run_scripts(std::move(scripts));
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < c.size(); ++r) {
    ASSERT_TRUE(run.results[r][0].ok()) << run.results[r][0];
    EXPECT_EQ(cases[0].check(r), "");
    for (Bytes b : cases[0].buffers(r)) {
      auto again = c.group(r).register_memory(b);
      EXPECT_TRUE(again.ok()) << "still registered: " << again.status();
    }
  }
  EXPECT_GT(total(c, &GroupCounters::payload_bytes_zero_copy), 0u);
}

TEST_P(CollectivesRegistered, BadRegistrationsAreTypedErrors) {
  auto cluster = GetParam()->create(spec_of(*Topology::mesh(2)), {});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  if (!registers_memory(**cluster)) GTEST_SKIP() << kNoRegistration;
  Group& g = (*cluster)->group(0);
  std::vector<std::byte> buffer(4096);
  absl::StatusOr<RegisteredMemory> h = g.register_memory(std::span(buffer));
  ASSERT_TRUE(h.ok()) << h.status();
  const absl::Status empty = g.register_memory(std::span<std::byte>()).status();
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument) << empty;
  EXPECT_EQ(error_place(empty)->cause, ErrorCause::kBadInput);
  const absl::Status overlap =
      g.register_memory(std::span(buffer).subspan(1000, 8)).status();
  EXPECT_EQ(overlap.code(), absl::StatusCode::kInvalidArgument) << overlap;
  // Released: the same memory registers again.
  h->reset();
  EXPECT_TRUE(g.register_memory(std::span(buffer)).ok());
}

}  // namespace
}  // namespace weft::testing
