// The rank processes `weft-sim launch` starts, whichever fabric they use
// (the simulation server's or TCP): each started with its own environment,
// reaped without blocking, given a deadline, and never left running after
// the launcher ends. POSIX only (fork, execvp, waitpid), so it builds on
// Linux and macOS alike.
#ifndef WEFT_TOOLS_WEFT_SIM_RANK_PROCESSES_H_
#define WEFT_TOOLS_WEFT_SIM_RANK_PROCESSES_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace weft::tools::weft_sim {

// One variable of a rank's environment: set to `value` (over a value the
// launcher's own environment has unless `keep_existing`), or removed when
// `value` is nullopt.
// How long the other ranks are given to exit on their own once the run is
// over (the server ended, or a rank failed) before they are killed.
inline constexpr std::chrono::seconds kExitGrace{10};

struct EnvSetting {
  std::string name;
  std::optional<std::string> value;
  bool keep_existing = false;
};

struct RankProcess {
  uint32_t rank = 0;
  pid_t pid = 0;
  std::optional<int> status;  // waitpid's, once reaped
};

// OK when `program` can be started as execvp() would start it: a path
// (holding a '/') to an executable file, or a name found as one in a
// directory of PATH. InvalidArgument naming it and saying why otherwise,
// so that launch refuses before any rank starts.
absl::Status check_runnable(const std::string& program);

// "exited 3", "killed by signal 9".
std::string describe_status(int status);
// True for a status of a process that exited 0.
bool exited_ok(int status);

class RankProcesses {
 public:
  using Clock = std::chrono::steady_clock;

  RankProcesses() = default;
  RankProcesses(const RankProcesses&) = delete;
  RankProcesses& operator=(const RankProcesses&) = delete;
  // Kills and reaps every rank still running.
  ~RankProcesses();

  // Starts `program` (argv, looked up in PATH) as `rank`, its environment
  // the launcher's with `env` applied. Its stdout and stderr are the
  // launcher's. A program that cannot be run exits 127 after saying why.
  absl::Status start(uint32_t rank, const std::vector<std::string>& program,
                     const std::vector<EnvSetting>& env);

  // Reaps the ranks that have exited, without blocking.
  void reap();
  // Reaps (polling) until every rank has exited, `stop` returns true (it is
  // asked after each reap), or `deadline` passes. True when every rank has
  // exited.
  bool wait_until(Clock::time_point deadline,
                  const std::function<bool()>& stop = {});
  // SIGKILL to every rank still running; reaps them all.
  void kill_all();
  // `signal` to every rank still running, then up to `grace` for them to
  // exit, then kill_all().
  void end(int signal, Clock::duration grace);

  const std::vector<RankProcess>& ranks() const { return ranks_; }
  bool all_exited() const;
  // The first rank (in rank order) that has exited with a status other
  // than 0, if any.
  const RankProcess* first_failure() const;
  // The ranks not yet reaped, as "1, 3".
  std::string running_list() const;

  // "rank 0 (pid 123): exited 0", one line per rank, on stdout (every rank
  // reaped first: call kill_all() or wait_until() before). True when every
  // rank exited 0.
  bool print_exits() const;

 private:
  std::vector<RankProcess> ranks_;
};

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_RANK_PROCESSES_H_
