// CallProgram: the simulator's rank program for one rank of a run. It
// starts a rank's operations one after another (a list of starters, the
// whole list `iterations` times), drives each with progress() until it
// ends, and records every status. It never blocks: the world's scheduler
// steps it and jumps virtual time while it waits.
#ifndef WEFT_HARNESS_CALL_PROGRAM_H_
#define WEFT_HARNESS_CALL_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "collectives/group.h"
#include "harness/rank_call.h"
#include "sim/world.h"

namespace weft::harness {

class CallProgram final : public sim::RankProgram {
 public:
  // REQUIRES: `group` outlives the program.
  CallProgram(Group& group, std::vector<Starter> starters, uint32_t iterations);

  Progress step() override;
  // Keeps the group answering peers that are still finishing (a lost
  // acknowledgement of this rank's last operation is resent on request).
  Progress serve() override { return group_.progress(); }
  std::string outstanding() const override;

  // True once every operation has ended.
  bool finished() const { return statuses_.size() == total_; }
  // The first error, or OK when every operation ended OK.
  absl::Status first_error() const;

 private:
  Group& group_;
  std::vector<Starter> starters_;
  uint64_t total_;  // operations to run: starters x iterations
  bool running_ = false;
  Operation current_;
  std::vector<absl::Status> statuses_;
};

}  // namespace weft::harness

#endif  // WEFT_HARNESS_CALL_PROGRAM_H_
