#include "fabric/topology_check.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/absl_compat.h"

namespace weft {
namespace {

// Collects findings up to the limit and counts them all.
class Findings {
 public:
  Findings(const TopologyWording& wording, size_t limit)
      : source_(wording.source), limit_(limit) {}

  bool full() const { return report_.findings.size() >= limit_; }

  // Adds a finding whose line is "<source>: <text>".
  void add(TopologyProblem problem, uint32_t rank, uint32_t peer,
           std::string_view text) {
    ++report_.total;
    if (full()) return;
    report_.findings.push_back(
        {problem, rank, peer,
         absl::StrCat(base::to_absl(source_), ": ", base::to_absl(text))});
  }
  uint64_t total() const { return report_.total; }
  // Counts `n` findings not listed.
  void count_unlisted(uint64_t n) { report_.total += n; }

  TopologyReport take() { return std::move(report_); }

 private:
  std::string_view source_;
  size_t limit_;
  TopologyReport report_;
};

// Per rank, the ranks it names a device toward, ascending.
using Peers = std::vector<std::vector<uint32_t>>;

// O(ranks^2) lookups: Topology does not hand out its links, and a file is
// checked once.
Peers peers_of(const Topology& t) {
  Peers peers(t.ranks());
  for (uint32_t i = 0; i < t.ranks(); ++i) {
    if (t.devices_of(i) == 0) continue;
    for (uint32_t j = 0; j < t.ranks(); ++j) {
      if (t.connected(i, j)) peers[i].push_back(j);
    }
  }
  return peers;
}

std::string cables_in_words(size_t n) {
  static constexpr const char* kWords[] = {
      "no", "one", "two", "three", "four", "five", "six", "seven", "eight"};
  return n < std::size(kWords) ? kWords[n] : absl::StrCat(n);
}

std::string device_list(const std::vector<std::string>& names) {
  return absl::StrCat(names.size() == 1 ? "device " : "devices ",
                      absl::StrJoin(names, ", "));
}

// One-way cables and different cable counts, by row then column.
void check_symmetry(const Topology& t, const Peers& peers, Findings* out) {
  for (uint32_t i = 0; i < t.ranks(); ++i) {
    for (uint32_t j : peers[i]) {
      const std::vector<std::string>& there = t.devices(i, j);
      const std::vector<std::string>& back = t.devices(j, i);
      if (back.empty()) {
        out->add(
            TopologyProblem::kOneWay, i, j,
            absl::StrFormat(
                "rank %u names %s toward rank %u (cell [%u][%u]) but "
                "rank %u names none toward rank %u (cell [%u][%u] is "
                "null); name rank %u's device toward rank %u in cell "
                "[%u][%u], or set cell [%u][%u] to null",
                i, device_list(there), j, i, j, j, i, j, i, j, i, j, i, i, j));
      } else if (i < j && back.size() != there.size()) {
        out->add(
            TopologyProblem::kCableCounts, i, j,
            absl::StrFormat(
                "rank %u gives rank %u %s cable%s (cell [%u][%u]: %s) "
                "but rank %u gives rank %u %s (cell [%u][%u]: %s); "
                "list one device per cable on each side, as many each "
                "way",
                i, j, cables_in_words(there.size()),
                there.size() == 1 ? "" : "s", i, j, absl::StrJoin(there, ", "),
                j, i, cables_in_words(back.size()), j, i,
                absl::StrJoin(back, ", ")));
      }
    }
  }
}

// Ranks joined to no rank (neither their row nor their column names a
// device), by rank.
void check_isolated(const Topology& t, const Peers& peers, Findings* out) {
  const uint32_t n = t.ranks();
  if (n < 2) return;
  std::vector<bool> named(n, false);  // some rank names a device toward it
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j : peers[i]) named[j] = true;
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (!peers[i].empty() || named[i]) continue;
    const std::string give =
        n == 2 ? absl::StrFormat("give it a cable to rank %u", 1 - i)
               : absl::StrFormat(
                     "give it cables to ranks %u and %u (its ring "
                     "neighbours; to every rank for the mesh)",
                     (i + n - 1) % n, (i + 1) % n);
    out->add(TopologyProblem::kIsolated, i, i,
             absl::StrFormat("rank %u is joined to no rank (row %u and column "
                             "%u are all null); %s, or run with fewer ranks "
                             "(remove row %u and column %u)",
                             i, i, i, give, i, i));
  }
}

// The ring's pairs of neighbours (i, i + 1 mod n) not joined. Only the ring
// can be named here: a mesh joins them too.
void check_ring(const Topology& t, Findings* out) {
  const uint32_t n = t.ranks();
  const uint32_t pairs = n == 2 ? 1 : n;  // two ranks: one pair
  for (uint32_t i = 0; i < pairs && n > 1; ++i) {
    const uint32_t j = (i + 1) % n;
    if (t.connected(i, j)) continue;
    out->add(TopologyProblem::kRingPair, i, j,
             absl::StrFormat(
                 "ranks %u and %u are not joined (cells [%u][%u] and "
                 "[%u][%u] are null), so neither the ring (each rank joined "
                 "to the next) nor the mesh (every pair joined) runs on these "
                 "cables; join ranks %u and %u for the ring, or every pair for "
                 "the mesh",
                 i, j, i, j, j, i, i, j));
  }
}

// The pairs not joined, on a file the ring runs on.
void check_mesh(const Topology& t, const Peers& peers,
                const TopologyWording& wording, Findings* out) {
  const uint32_t n = t.ranks();
  uint64_t joined = 0;  // pairs, each counted from both sides
  for (uint32_t i = 0; i < n; ++i) joined += peers[i].size();
  const uint64_t missing = uint64_t{n} * (n - 1) / 2 - joined / 2;
  uint64_t listed = 0;
  for (uint32_t i = 0; i < n && !out->full(); ++i) {
    for (uint32_t j = i + 1; j < n && !out->full(); ++j) {
      if (t.connected(i, j)) continue;
      ++listed;
      out->add(
          TopologyProblem::kMeshPair, i, j,
          absl::StrFormat(
              "ranks %u and %u are not joined (cells [%u][%u] and [%u][%u] "
              "are null), which the mesh needs (every pair joined); the ring "
              "runs on these cables (each rank is joined to the next): %s, or "
              "join every pair for the mesh",
              i, j, i, j, j, i, base::to_absl(wording.use_ring)));
    }
  }
  out->count_unlisted(missing - listed);
}

}  // namespace

TopologyReport find_topology_problems(const Topology& topology,
                                      TopologyNeeds needs,
                                      const TopologyWording& wording,
                                      size_t limit) {
  Findings out(wording, limit);
  const Peers peers = peers_of(topology);
  check_symmetry(topology, peers, &out);
  check_isolated(topology, peers, &out);
  // The algorithm's needs are judged on sound links only: until then which
  // algorithm runs is not known, and the advice would differ by algorithm.
  if (out.total() > 0 || needs == TopologyNeeds::kLinks) return out.take();
  if (!topology.has_ring()) {
    check_ring(topology, &out);
  } else if (needs == TopologyNeeds::kMesh && !topology.is_full_mesh()) {
    check_mesh(topology, peers, wording, &out);
  }
  return out.take();
}

absl::Status check_topology(const Topology& topology, TopologyNeeds needs,
                            const TopologyWording& wording) {
  const TopologyReport report =
      find_topology_problems(topology, needs, wording, 1);
  if (report.ok()) return absl::OkStatus();
  std::string line = report.findings.front().text;
  if (report.total > 1) {
    absl::StrAppendFormat(&line, " (and %u more problem%s)", report.total - 1,
                          report.total == 2 ? "" : "s");
  }
  return absl::InvalidArgumentError(line);
}

}  // namespace weft
