// jaccl/jaccl.h: MLX JACCL's entry points (mlx/distributed/jaccl/lib/jaccl/
// jaccl.h in ml-explore/mlx): a Config and its builder, is_available(), and
// init() from the environment or from a Config, returning a jaccl::Group
// that runs on weft (the verbs fabric: librdma.dylib on macOS,
// libibverbs.so.1 on Linux, or weft's simulated provider where
// WEFT_VERBS_LIBRARY names it). docs/jaccl.md lists every difference from
// JACCL; the main ones:
//  - calls never hang: a lost frame is resent, a dead or silent peer ends
//    the call with std::runtime_error naming the rank, the peer and the
//    cause within the deadline (WEFT_TIMEOUT_S, default 600 s);
//  - bad arguments (a size that is not whole elements, an unknown dtype, a
//    rank out of range) throw instead of being truncated or ignored;
//  - the mesh has no 8-rank limit and uses every cable the device JSON
//    names.
#ifndef WEFT_JACCL_JACCL_H_
#define WEFT_JACCL_JACCL_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jaccl/group.h"
#include "jaccl/rdma.h"

namespace jaccl {

class Config {
 public:
  Config();

  // A rank given as text (an environment variable's value) is checked when
  // the group starts: init() says what is wrong with it. nullptr (a
  // variable that is not set) means no rank: init() returns nullptr, or
  // with strict throws, where JACCL would start the process as rank 0.
  Config& set_rank(const char* rank_str);
  Config& set_rank(int rank);
  Config& set_coordinator(const char* coordinator);
  Config& set_coordinator(std::string coordinator);
  // Reads the device JSON (JACCL's format: devices[i][j] is null, a device
  // name or a list of names joining rank i to rank j). Throws
  // std::runtime_error naming the file and what is wrong with it.
  Config& set_devices_from_file(const char* dev_file);
  // Throws std::invalid_argument when the matrix is not square.
  Config& set_devices(
      std::vector<std::vector<std::vector<std::string>>> devices);
  Config& prefer_ring(bool prefer = true);
  // The side channel: the ranks exchange connection details through `agf`
  // instead of TCP through the coordinator (which is then not needed).
  // weft cannot bound a function it did not write: forming the group waits
  // as long as `agf` blocks, and a peer that dies is not seen through it
  // (the group's operations still end at their deadline). An exception
  // from `agf` ends init() with std::runtime_error carrying its message.
  Config& set_all_gather(AllGatherFn agf);
  // As set_all_gather, made when the group starts from (rank, size).
  Config& set_all_gather_factory(std::function<AllGatherFn(int, int)> factory);

  // Every pair of ranks is joined (rank i to itself by nothing), 2+ ranks.
  bool is_valid_mesh() const;
  // Every rank is joined to both neighbours by the same number of cables,
  // 2+ ranks.
  bool is_valid_ring() const;
  bool is_valid() const;

  int get_rank() const { return rank_; }
  int get_size() const { return size_; }
  std::string get_coordinator() const { return coordinator_; }
  bool get_prefer_ring() const { return prefer_ring_; }

  // JACCL_RANK / MLX_RANK, JACCL_IBV_DEVICES / MLX_IBV_DEVICES,
  // JACCL_COORDINATOR / MLX_JACCL_COORDINATOR, JACCL_RING / MLX_JACCL_RING
  // (set to anything: prefer the ring, as in JACCL); the JACCL_ name wins
  // when both are set (one warning line on stderr when they differ). A
  // variable that is not set leaves its field unset (the Config is then not
  // valid). Throws std::runtime_error when the device file cannot be read
  // or parsed, or gives a pair a different number of cables each way (which
  // JACCL's mesh would run over the first cable alone and weft cannot): one
  // line naming the file and the cells, as every weft reader of a device
  // file says it. A cable named one way only or a rank joined to no rank
  // makes the Config not valid, as in JACCL: init says which.
  static Config from_env();

  friend std::shared_ptr<Group> init(const Config& cfg, bool strict);

 private:
  int rank_;
  int size_;
  std::optional<std::string> rank_text_;  // set_rank(const char*), unparsed
  bool rank_missing_ = false;             // set_rank(nullptr): no rank given
  std::string coordinator_;
  std::vector<std::vector<std::vector<std::string>>> devices_;
  // Where devices_ came from, for messages: the device file's path.
  std::string devices_source_ = "the devices";
  bool prefer_ring_;
  AllGatherFn all_gather_fn_;
  std::function<AllGatherFn(int, int)> all_gather_factory_;
};

// Whether the verbs library loads (librdma.dylib on macOS, libibverbs.so.1
// on Linux, or WEFT_VERBS_LIBRARY); true without it when WEFT_FABRIC asks
// for TCP (below).
bool is_available();

// A group from the environment (Config::from_env()). nullptr when a
// variable is missing or the devices form neither a mesh nor a ring (one
// rank included), as in JACCL; with strict, std::runtime_error saying what
// to set instead. Failures past that point (a coordinator that cannot be
// reached, a rank out of range, no verbs library) always throw.
// weft's addition: with WEFT_FABRIC=tcp (`weft-sim launch --fabric=tcp`
// sets it) the group runs over weft's TCP fabric, formed from MLX's ring
// hostfile (MLX_HOSTFILE, MLX_RANK, WEFT_COORDINATOR) as
// weft::ProcessGroup::from_environment forms it; a missing or bad variable
// then always throws, and so does a WEFT_FABRIC other than tcp or verbs.
std::shared_ptr<Group> init(bool strict = false);

// As init(strict), with the side channel made by `factory` (rank, size).
std::shared_ptr<Group> init(bool strict,
                            std::function<AllGatherFn(int, int)> factory);

// A group from an explicit Config; nullptr (or, strict, an exception) as
// above.
std::shared_ptr<Group> init(const Config& cfg, bool strict = false);

}  // namespace jaccl

#endif  // WEFT_JACCL_JACCL_H_
