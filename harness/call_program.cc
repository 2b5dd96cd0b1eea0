#include "harness/call_program.h"

#include <utility>

#include "absl/strings/str_format.h"

namespace weft::harness {

CallProgram::CallProgram(Group& group, std::vector<Starter> starters,
                         uint32_t iterations)
    : group_(group),
      starters_(std::move(starters)),
      total_(starters_.size() * uint64_t{iterations}) {}

Progress CallProgram::step() {
  for (;;) {
    if (!running_) {
      if (finished()) return Progress::done();
      current_ = starters_[statuses_.size() % starters_.size()](group_);
      running_ = true;
    }
    const Progress p = current_.progress();
    if (!current_.done()) return p;
    statuses_.push_back(current_.status());
    running_ = false;
  }
}

std::string CallProgram::outstanding() const {
  return absl::StrFormat("rank %u: operation %u of %u still running",
                         group_.rank(), statuses_.size() + 1, total_);
}

absl::Status CallProgram::first_error() const {
  for (const absl::Status& s : statuses_) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace weft::harness
