// ScriptProgram: one rank's script of operations, run one after another
// and each driven to its end by the harness's CallProgram
// (harness/call_program.h), recording every operation's status.
// The simulator's scheduler steps it, or a test's own loop does (verbs).
#ifndef WEFT_HARNESS_SCRIPT_PROGRAM_H_
#define WEFT_HARNESS_SCRIPT_PROGRAM_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "collectives/group.h"
#include "harness/call_program.h"
#include "harness/rank_call.h"
#include "sim/world.h"

namespace weft::harness {

class ScriptProgram final : public sim::RankProgram {
 public:
  // REQUIRES: `group` outlives the program.
  ScriptProgram(Group& group, std::vector<Starter> steps)
      : group_(group), steps_(std::move(steps)) {}

  Progress step() override {
    for (;;) {
      if (call_ == nullptr) {
        if (results_.size() == steps_.size()) return Progress::done();
        call_ = std::make_unique<CallProgram>(
            group_, std::vector<Starter>{steps_[results_.size()]}, 1);
      }
      const Progress p = call_->step();
      if (!call_->finished()) return p;
      results_.push_back(call_->first_error());  // its one operation's
      call_.reset();
    }
  }
  // Keeps answering peers that are still finishing.
  Progress serve() override { return group_.progress(); }
  std::string outstanding() const override {
    return absl::StrFormat("rank %u: step %u of %u", group_.rank(),
                           results_.size() + 1, steps_.size());
  }
  const std::vector<absl::Status>& results() const { return results_; }

 private:
  Group& group_;
  std::vector<Starter> steps_;
  std::unique_ptr<CallProgram> call_;  // the running step
  std::vector<absl::Status> results_;
};

}  // namespace weft::harness

#endif  // WEFT_HARNESS_SCRIPT_PROGRAM_H_
