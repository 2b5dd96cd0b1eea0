// How weft-sim's long-running commands (sweep, serve, launch) end on a
// signal: SIGINT and SIGTERM end the command cleanly (what it has so far
// printed, its temporary directory removed, its ranks ended) with exit
// code 128 + the signal (130, 143), and SIGPIPE (its stdout closed, as by
// `weft-sim launch ... | head -1`) ends it the same way but quietly, with
// 141. The handler only records the first signal and writes a byte to a
// self-pipe, so a poll loop waits on fd() and wakes at once; the command
// checks received() where it can stop. A second SIGINT or SIGTERM takes
// effect as usual (the handler resets itself), for a command that does
// not stop soon enough.
#ifndef WEFT_TOOLS_WEFT_SIM_STOP_SIGNALS_H_
#define WEFT_TOOLS_WEFT_SIM_STOP_SIGNALS_H_

namespace weft::tools::weft_sim {

class StopSignals {
 public:
  // Installs the handlers. At most one StopSignals lives at a time.
  StopSignals();
  // Restores the handlers there were before.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Readable from the first signal on (for poll); never read by anyone.
  int fd() const { return read_fd_; }
  // The first signal received (SIGINT, SIGTERM, SIGPIPE), 0 before one.
  static int received();
  // 128 + received(): what a shell reports for a command a signal ended.
  static int exit_code();
  // True when the signal says stdout is gone: print nothing more.
  static bool quiet();
  // "SIGINT", "SIGTERM", "SIGPIPE".
  static const char* name(int signal);

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
};

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_STOP_SIGNALS_H_
