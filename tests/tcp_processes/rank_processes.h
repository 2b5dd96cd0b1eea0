// Test harness: a weft group over TCP as real processes, one tcp_rank per
// rank, started by the test with the environment a launcher gives (a
// hostfile of 127.0.0.1 addresses on ports found free, WEFT_RANK,
// WEFT_COORDINATOR, the deadlines), their stdin, stdout and stderr on
// pipes so a test can wait for a line, signal a rank (SIGKILL, SIGSTOP),
// and close its stdin. Every wait has a deadline; whatever is still
// running when the harness goes is killed and reaped.
#ifndef WEFT_TESTS_TCP_PROCESSES_RANK_PROCESSES_H_
#define WEFT_TESTS_TCP_PROCESSES_RANK_PROCESSES_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace weft::tcp_processes {

using Seconds = std::chrono::duration<double>;

// What a group's ranks are told: a hostfile with one "ip:port" per rank
// (one cable), and where the side channel's coordinator listens.
struct Layout {
  std::vector<std::string> addresses;  // rank r listens on addresses[r]
  std::string coordinator;             // "127.0.0.1:port"; "" to derive
  std::string hostfile;                // path of the JSON file

  // `ranks` ranks on 127.0.0.1, ports that are free now, the hostfile
  // written under `dir`.
  static Layout loopback(int ranks, const std::string& dir);
  // The hostfile for `addresses` as given, under `dir`.
  static Layout of(std::vector<std::string> addresses, const std::string& dir);
  // "127.0.0.1:41000" -> 41000.
  static uint16_t port_of(const std::string& address);
};

class RankProcesses {
 public:
  // Every wait of a test is shorter than this: a bug is a failed
  // assertion, never a hung test.
  static constexpr Seconds kMaxWait{60};

  RankProcesses() = default;
  RankProcesses(const RankProcesses&) = delete;
  RankProcesses& operator=(const RankProcesses&) = delete;
  // Kills (SIGCONT, SIGKILL) and reaps every process not yet reaped.
  ~RankProcesses();

  // Starts tcp_rank `args` as rank `rank` of `layout`, with the deadlines
  // and `extra` variables on top of this process's environment (minus any
  // weft, MLX, JACCL or launcher rank variables). Returns its index here.
  int start(const Layout& layout, int rank,
            const std::vector<std::string>& args,
            const std::map<std::string, std::string>& extra = {});

  // Reads every process's output until process `index`'s stdout holds
  // `text` or `wait` passes (or the process ended without it).
  bool wait_for(int index, std::string_view text, Seconds wait = kMaxWait);
  // Reads output until process `index` has ended, or `wait` passes.
  bool wait_exit(int index, Seconds wait = kMaxWait);
  bool wait_all_exited(Seconds wait = kMaxWait);

  void signal(int index, int sig);
  void write_stdin(int index, std::string_view text);
  void close_stdin(int index);

  // The exit code, -1 while running or when killed by a signal.
  int exit_code(int index) const;
  // The signal that ended it, 0 when it exited.
  int killed_by(int index) const;
  const std::string& out(int index) const { return procs_[index].out; }
  const std::string& err(int index) const { return procs_[index].err; }
  // stdout and stderr, for failure messages.
  std::string report(int index) const;

 private:
  struct Proc {
    pid_t pid = -1;
    int in_fd = -1, out_fd = -1, err_fd = -1;
    std::string out, err;
    bool reaped = false;
    int status = 0;
  };
  // One round: reads what is ready within `wait_ms`, reaps what ended.
  void pump(int wait_ms);

  std::vector<Proc> procs_;
};

}  // namespace weft::tcp_processes

#endif  // WEFT_TESTS_TCP_PROCESSES_RANK_PROCESSES_H_
