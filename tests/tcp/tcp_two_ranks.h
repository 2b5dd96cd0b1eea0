// Test helper: a group of two ranks over TcpFabric in one process, each
// rank's group driven from its own thread, connected both ways (a barrier
// ran on both threads), plus byte views of float vectors.
#ifndef WEFT_TESTS_TCP_TCP_TWO_RANKS_H_
#define WEFT_TESTS_TCP_TCP_TWO_RANKS_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group.h"
#include "collectives/inprocess_bootstrap.h"
#include "fabric/topology.h"
#include "tcp/tcp_fabric.h"

namespace weft::tcp::testing {

struct TwoRanks {
  std::vector<std::unique_ptr<TcpFabric>> fabrics;
  std::vector<std::unique_ptr<Group>> groups;  // destroyed first
};

// Both ranks on 127.0.0.1 with `base`'s options (its listen is replaced).
inline absl::StatusOr<TwoRanks> two_ranks(const TcpOptions& base) {
  TwoRanks out;
  for (uint32_t r = 0; r < 2; ++r) {
    TcpOptions o = base;
    o.listen = {"127.0.0.1:0"};
    absl::StatusOr<std::unique_ptr<TcpFabric>> f = TcpFabric::open(r, o);
    if (!f.ok()) return f.status();
    out.fabrics.push_back(*std::move(f));
  }
  const std::string a0 = out.fabrics[0]->listen_addresses()[0];
  const std::string a1 = out.fabrics[1]->listen_addresses()[0];
  absl::StatusOr<Topology> topology =
      Topology::parse_json("[[null,[\"" + a0 + "\"]],[[\"" + a1 + "\"],null]]");
  if (!topology.ok()) return topology.status();
  std::vector<Fabric*> fabrics{out.fabrics[0].get(), out.fabrics[1].get()};
  absl::StatusOr<std::vector<std::unique_ptr<Group>>> groups =
      form_groups_in_process(fabrics, *topology, GroupOptions{});
  if (!groups.ok()) return groups.status();
  out.groups = *std::move(groups);
  std::vector<absl::Status> said(2);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] { said[r] = out.groups[r]->barrier(); });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : said) {
    if (!s.ok()) return s;
  }
  return out;
}

inline ConstBytes const_bytes_of(const std::vector<float>& v) {
  return std::as_bytes(std::span(v));
}

inline Bytes bytes_of(std::vector<float>& v) {
  return std::as_writable_bytes(std::span(v));
}

}  // namespace weft::tcp::testing

#endif  // WEFT_TESTS_TCP_TCP_TWO_RANKS_H_
