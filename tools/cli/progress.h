// Progress of a long command on stderr (weft-sim's study rows, sweep
// seeds): "sweep: 120/2000 seeds, correct 97 ...", at most once a second
// of wall time and once at the end. On a terminal it is a bar on the last
// line, taken away (clear()) before the command prints a line of its own
// and drawn again after; elsewhere nothing, unless --progress asks for it
// (then plain lines), so piped stdout and stderr stay exactly the same
// from run to run. The FlagSet kProgressFlags holds --progress.
#ifndef WEFT_TOOLS_CLI_PROGRESS_H_
#define WEFT_TOOLS_CLI_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "tools/cli/flag_scope.h"

namespace weft::tools::cli {

// --progress.
extern const FlagSet kProgressFlags;

class Progress {
 public:
  // `what` heads each line ("sweep"), `unit` names what is counted
  // ("seeds"). Shown when stderr is a terminal or --progress is given.
  Progress(std::string_view what, std::string_view unit, uint64_t total);

  // `done` of the total so far, and a few words of tally (may be empty);
  // printed when a second has passed since the last line.
  // On a terminal the bar is drawn again at once after a clear().
  void update(uint64_t done, const std::string& detail);
  // Takes the bar off the terminal, so the next line printed starts on a
  // clean line; nothing elsewhere.
  void clear();
  // The last line, "done/total", always (when shown at all).
  void finish(uint64_t done, const std::string& detail);

  bool shown() const { return shown_; }

 private:
  void print(uint64_t done, const std::string& detail);

  std::string what_;
  std::string unit_;
  uint64_t total_;
  bool shown_;
  bool tty_;
  bool drawn_ = false;  // the bar is on the terminal now
  std::chrono::steady_clock::time_point last_;
};

}  // namespace weft::tools::cli

#endif  // WEFT_TOOLS_CLI_PROGRESS_H_
