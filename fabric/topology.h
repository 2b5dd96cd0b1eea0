// Topology: which device (cable) joins rank i to rank j. Parsed from the
// device JSON MLX's JACCL uses on hardware (`devices[i][j]` is null, a device
// name, or a list of names for several cables), or generated for N ranks.
// The simulator and the verbs fabric read the same file.
#ifndef WEFT_FABRIC_TOPOLOGY_H_
#define WEFT_FABRIC_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace weft {

class Topology {
 public:
  // Most ranks a topology may name (bounded so bad input is an error).
  static constexpr uint32_t kMaxRanks = 4096;
  // Most cables between one pair.
  static constexpr uint32_t kMaxCables = 8;

  // Parses JACCL's device JSON. InvalidArgument names the row and column of
  // what is wrong: not square, a device on the diagonal, a cell that is not
  // null/string/list of strings, an empty name.
  static absl::StatusOr<Topology> parse_json(std::string_view text);
  // parse_json() of a file of at most kMaxJsonFileBytes.
  static constexpr size_t kMaxJsonFileBytes = size_t{512} << 20;
  static absl::StatusOr<Topology> load_json_file(const std::string& path);

  // Every pair joined by `cables` cables named "sim_<i>_<j>_<c>".
  static absl::StatusOr<Topology> mesh(uint32_t ranks, uint32_t cables = 1);
  // Rank i joined to i-1 and i+1 (mod ranks) only.
  static absl::StatusOr<Topology> ring(uint32_t ranks, uint32_t cables = 1);
  // `ranks` ranks and no cable yet; add_device() joins them.
  static absl::StatusOr<Topology> unjoined(uint32_t ranks);

  // Adds `device` to rank i's side of its link to j, after those there.
  // InvalidArgument (nothing added): a rank outside the topology, i == j,
  // an empty name, a name rank i already has, or kMaxCables there already.
  absl::Status add_device(uint32_t i, uint32_t j, std::string device);

  // This topology with each rank's devices renamed as a Mac names its
  // ports, rdma_en2, rdma_en3, ..., in an order drawn from `seed` and the
  // rank, so that a name says nothing of the peer or cable behind it (a
  // device named twice on a rank keeps one new name). Cable k of a pair
  // is still devices(i, j)[k] and devices(j, i)[k].
  Topology with_neutral_names(uint64_t seed) const;

  uint32_t ranks() const { return ranks_; }
  // Devices on rank i's side of the link to rank j; empty when not joined.
  const std::vector<std::string>& devices(uint32_t i, uint32_t j) const;
  bool connected(uint32_t i, uint32_t j) const {
    return !devices(i, j).empty();
  }
  // Devices on rank i's side of all its links: the endpoints it opens.
  // O(its links), not O(ranks).
  uint64_t devices_of(uint32_t i) const;
  // Rank i's distinct device names, in link order (by peer, then cable).
  std::vector<std::string> device_names(uint32_t i) const;
  // True when every pair of distinct ranks is joined.
  bool is_full_mesh() const;
  // True when each rank is joined to its ring neighbours (i +- 1 mod n).
  bool has_ring() const;

  // Back to JACCL's JSON (one string per single cable, lists for several).
  std::string to_json() const;

 private:
  // Rank i's side of its link to `peer`: never empty.
  struct Link {
    uint32_t peer;
    std::vector<std::string> devices;
  };

  explicit Topology(uint32_t ranks) : ranks_(ranks), links_(ranks) {}
  // Joins i to j over `devices` (not empty), or adds them to the link.
  void join(uint32_t i, uint32_t j, std::vector<std::string> devices);

  uint32_t ranks_;
  // Per rank, its links ordered by peer. Only joined pairs are held, so a
  // ring of 4096 ranks holds 8,192 links, not 16.8 million empty cells
  // (384 MiB per copy of the topology).
  std::vector<std::vector<Link>> links_;
};

}  // namespace weft

#endif  // WEFT_FABRIC_TOPOLOGY_H_
