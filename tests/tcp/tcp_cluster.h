// Test harness: the collectives over TcpFabric, every rank in one process
// on its own thread, over real loopback sockets: the shared collectives
// suite's Cluster (harness/cluster.h) for this fabric. Each rank listens on
// one 127.0.0.1 address per cable (the system picks the ports); the
// ClusterSpec's topology is rewritten so each rank's devices are its own
// listening addresses, and the groups form through form_groups_in_process
// (the TCP fabric's connect() never blocks, so one thread forms them all).
// Runs are real time: a run that passes the time limit is reported, never
// waited on forever.
#ifndef WEFT_TESTS_TCP_TCP_CLUSTER_H_
#define WEFT_TESTS_TCP_TCP_CLUSTER_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "collectives/group.h"
#include "collectives/inprocess_bootstrap.h"
#include "fabric/topology.h"
#include "harness/cluster.h"
#include "harness/script_program.h"
#include "tcp/tcp_fabric.h"

namespace weft::tcp::testing {

using weft::harness::ClusterSpec;
using weft::harness::ScriptProgram;
using weft::harness::ScriptRun;
using weft::harness::Starter;

class TcpCluster final : public weft::harness::Cluster {
 public:
  // Least wall time a run may take before it is reported as hung (the
  // spec's limit is meant for virtual time, which runs faster).
  static constexpr TimeNs kMinTimeLimitNs = 120 * kNsPerS;

  static absl::StatusOr<std::unique_ptr<TcpCluster>> create(
      const ClusterSpec& spec, const GroupOptions& options = {}) {
    std::unique_ptr<TcpCluster> c(new TcpCluster(spec));
    absl::StatusOr<Topology> topology = c->open_fabrics(spec.topology);
    if (!topology.ok()) return topology.status();
    std::vector<Fabric*> fabrics;
    for (const auto& f : c->fabrics_) fabrics.push_back(f.get());
    absl::StatusOr<std::vector<std::unique_ptr<Group>>> groups =
        form_groups_in_process(fabrics, *topology, options);
    if (!groups.ok()) return groups.status();
    c->groups_ = *std::move(groups);
    return c;
  }

  // Each group lingers until its last frames are acknowledged: destroyed
  // on their ranks' threads at once, so they answer one another.
  ~TcpCluster() override {
    std::vector<std::thread> threads;
    for (auto& g : groups_) threads.emplace_back([&g] { g.reset(); });
    for (std::thread& t : threads) t.join();
    groups_.clear();
    fabrics_.clear();
  }
  TcpCluster(const TcpCluster&) = delete;
  TcpCluster& operator=(const TcpCluster&) = delete;

  uint32_t size() const override {
    return static_cast<uint32_t>(groups_.size());
  }
  Group& group(uint32_t rank) override { return *groups_[rank]; }
  bool crashed(uint32_t) const override { return false; }
  // Changes whenever a rank sends a message.
  uint64_t trace_hash() const override {
    uint64_t h = 0;
    for (const auto& f : fabrics_) {
      h = h * 1000003u + f->messages_sent();
    }
    return h;
  }

  // Runs scripts[r] on rank r's thread; a rank done with its script keeps
  // serving the others until every rank is done or the time limit passes.
  ScriptRun run_scripts(std::vector<std::vector<Starter>> scripts) override {
    const uint32_t n = size();
    std::vector<std::unique_ptr<ScriptProgram>> programs;
    for (uint32_t r = 0; r < n; ++r) {
      programs.push_back(
          std::make_unique<ScriptProgram>(*groups_[r], std::move(scripts[r])));
    }
    const TimeNs limit_ns = deadline_after(
        clock_.now_ns(), std::max(time_limit_ns_, kMinTimeLimitNs));
    std::atomic<uint32_t> finished{0};
    std::vector<char> done(n, 0);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        run_rank(*programs[r], *fabrics_[r], limit_ns, finished, done[r]);
      });
    }
    for (std::thread& t : threads) t.join();
    ScriptRun out;
    out.run.outcome = finished.load() == n
                          ? sim::RunResult::Outcome::kCompleted
                          : sim::RunResult::Outcome::kTimeLimit;
    for (uint32_t r = 0; r < n; ++r) {
      if (!done[r]) out.run.report += programs[r]->outstanding() + "\n";
      out.results.push_back(programs[r]->results());
    }
    out.run.end_ns = clock_.now_ns();
    return out;
  }

 private:
  explicit TcpCluster(const ClusterSpec& spec)
      : time_limit_ns_(spec.time_limit_ns) {}

  // One fabric per rank listening on one loopback address per cable; the
  // topology with those addresses as device names.
  absl::StatusOr<Topology> open_fabrics(const Topology& spec) {
    const uint32_t n = spec.ranks();
    size_t cables = 1;
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        cables = std::max(cables, spec.devices(i, j).size());
      }
    }
    for (uint32_t r = 0; r < n; ++r) {
      TcpOptions o;
      o.listen.assign(cables, "127.0.0.1:0");
      absl::StatusOr<std::unique_ptr<TcpFabric>> f = TcpFabric::open(r, o);
      if (!f.ok()) return f.status();
      fabrics_.push_back(*std::move(f));
    }
    std::vector<std::string> rows;
    for (uint32_t i = 0; i < n; ++i) {
      const std::vector<std::string> mine = fabrics_[i]->listen_addresses();
      std::vector<std::string> cells;
      for (uint32_t j = 0; j < n; ++j) {
        std::vector<std::string> names;
        for (size_t c = 0; c < spec.devices(i, j).size(); ++c) {
          names.push_back("\"" + mine[c] + "\"");
        }
        cells.push_back(names.empty() ? "null"
                                      : "[" + absl::StrJoin(names, ",") + "]");
      }
      rows.push_back("[" + absl::StrJoin(cells, ",") + "]");
    }
    return Topology::parse_json("[" + absl::StrJoin(rows, ",") + "]");
  }

  void run_rank(ScriptProgram& program, TcpFabric& fabric, TimeNs limit_ns,
                std::atomic<uint32_t>& finished, char& done) {
    const uint32_t n = size();
    while (clock_.now_ns() < limit_ns) {
      const Progress p = done ? program.serve() : program.step();
      if (!done && p.is_done()) {
        done = 1;
        finished.fetch_add(1);
      }
      if (done && finished.load() == n) return;
      if (p.state == Progress::State::kAdvanced) continue;
      // Waiting, or done and only serving: wait for the sockets.
      fabric.idle(p.is_done() ? deadline_after(clock_.now_ns(), kNsPerMs)
                              : p.wake_at_ns);
    }
  }

  WallClock clock_;
  TimeNs time_limit_ns_;
  std::vector<std::unique_ptr<TcpFabric>> fabrics_;
  std::vector<std::unique_ptr<Group>> groups_;  // destroyed first
};

}  // namespace weft::tcp::testing

#endif  // WEFT_TESTS_TCP_TCP_CLUSTER_H_
