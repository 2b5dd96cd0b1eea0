#include "tests/tcp_processes/rank_processes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/support/ports.h"

extern char** environ;

namespace weft::tcp_processes {
namespace {

// Longest single poll(2): how soon a process's end is noticed once its
// pipes are closed.
constexpr int kPumpSliceMs = 10;

// Variables of this process that would change what a rank is told.
bool inherited_config(std::string_view entry) {
  for (std::string_view prefix :
       {"WEFT_", "MLX_", "JACCL_", "OMPI_COMM_WORLD_RANK=", "SLURM_PROCID="}) {
    if (entry.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, FD_CLOEXEC); }

}  // namespace

Layout Layout::of(std::vector<std::string> addresses, const std::string& dir) {
  Layout l;
  l.addresses = std::move(addresses);
  std::vector<std::string> rows;
  for (const std::string& a : l.addresses) rows.push_back("[\"" + a + "\"]");
  l.hostfile = dir + "/hostfile.json";
  std::ofstream(l.hostfile) << "[" << absl::StrJoin(rows, ",") << "]\n";
  return l;
}

Layout Layout::loopback(int ranks, const std::string& dir) {
  // One call, so the ranks' ports and the coordinator's are distinct.
  const std::vector<uint16_t> ports =
      weft::testing::free_ports("127.0.0.1", static_cast<size_t>(ranks) + 1);
  if (ports.size() != static_cast<size_t>(ranks) + 1) {
    ADD_FAILURE() << "no free loopback ports";
    return of({}, dir);
  }
  std::vector<std::string> addresses;
  for (int r = 0; r < ranks; ++r) {
    addresses.push_back(absl::StrCat("127.0.0.1:", ports[r]));
  }
  Layout l = of(std::move(addresses), dir);
  l.coordinator = absl::StrCat("127.0.0.1:", ports.back());
  return l;
}

uint16_t Layout::port_of(const std::string& address) {
  uint32_t port = 0;
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
    ADD_FAILURE() << "no port in " << address;
  }
  return static_cast<uint16_t>(port);
}

RankProcesses::~RankProcesses() {
  for (Proc& p : procs_) {
    if (!p.reaped && p.pid > 0) {
      ::kill(p.pid, SIGCONT);
      ::kill(p.pid, SIGKILL);
      ::waitpid(p.pid, &p.status, 0);
    }
    for (int fd : {p.in_fd, p.out_fd, p.err_fd}) {
      if (fd >= 0) ::close(fd);
    }
  }
}

int RankProcesses::start(const Layout& layout, int rank,
                         const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!inherited_config(*e)) env.push_back(*e);
  }
  std::map<std::string, std::string> vars = {
      {"WEFT_HOSTFILE", layout.hostfile},
      {"WEFT_RANK", std::to_string(rank)},
      {"WEFT_TIMEOUT_S", "3"},
      {"WEFT_CONNECT_TIMEOUT_S", "10"}};
  if (!layout.coordinator.empty())
    vars["WEFT_COORDINATOR"] = layout.coordinator;
  for (const auto& [k, v] : extra) vars[k] = v;
  for (const auto& [k, v] : vars) env.push_back(k + "=" + v);

  std::vector<std::string> argv = {WEFT_TCP_RANK};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_argv, c_env;
  for (std::string& a : argv) c_argv.push_back(a.data());
  for (std::string& e : env) c_env.push_back(e.data());
  c_argv.push_back(nullptr);
  c_env.push_back(nullptr);

  int in[2], out[2], err[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0 || ::pipe(err) != 0) {
    ADD_FAILURE() << "pipe: " << errno;
    return -1;
  }
  for (int fd : {in[1], out[0], err[0]}) set_cloexec(fd);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  Proc p;
  const int spawned = ::posix_spawn(&p.pid, c_argv[0], &actions, nullptr,
                                    c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  for (int fd : {in[0], out[1], err[1]}) ::close(fd);
  p.in_fd = in[1];
  p.out_fd = out[0];
  p.err_fd = err[0];
  // A rank that dies does not take the test with it (SIGPIPE on write).
  ::signal(SIGPIPE, SIG_IGN);
  if (spawned != 0) {
    ADD_FAILURE() << "posix_spawn " << c_argv[0] << ": " << spawned;
    p.pid = -1;
    p.reaped = true;
  }
  procs_.push_back(std::move(p));
  return static_cast<int>(procs_.size()) - 1;
}

void RankProcesses::pump(int wait_ms) {
  std::vector<pollfd> fds;
  std::vector<std::pair<int*, std::string*>> owners;
  for (Proc& p : procs_) {
    for (auto [fd, text] :
         {std::pair{&p.out_fd, &p.out}, std::pair{&p.err_fd, &p.err}}) {
      if (*fd < 0) continue;
      fds.push_back(pollfd{*fd, POLLIN, 0});
      owners.emplace_back(fd, text);
    }
  }
  if (::poll(fds.data(), fds.size(), wait_ms) > 0) {
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        owners[i].second->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(*owners[i].first);
        *owners[i].first = -1;
      }
    }
  }
  for (Proc& p : procs_) {
    if (!p.reaped && ::waitpid(p.pid, &p.status, WNOHANG) == p.pid) {
      p.reaped = true;
    }
  }
}

bool RankProcesses::wait_for(int index, std::string_view text, Seconds wait) {
  const auto end = std::chrono::steady_clock::now() + wait;
  while (procs_[index].out.find(text) == std::string::npos) {
    const bool ended = procs_[index].reaped && procs_[index].out_fd < 0;
    if (ended || std::chrono::steady_clock::now() >= end) return false;
    pump(kPumpSliceMs);
  }
  return true;
}

bool RankProcesses::wait_exit(int index, Seconds wait) {
  const auto end = std::chrono::steady_clock::now() + wait;
  while (!procs_[index].reaped || procs_[index].out_fd >= 0 ||
         procs_[index].err_fd >= 0) {
    if (std::chrono::steady_clock::now() >= end) return false;
    pump(kPumpSliceMs);
  }
  return true;
}

bool RankProcesses::wait_all_exited(Seconds wait) {
  const auto end = std::chrono::steady_clock::now() + wait;
  for (size_t i = 0; i < procs_.size(); ++i) {
    const Seconds left = end - std::chrono::steady_clock::now();
    if (!wait_exit(static_cast<int>(i), left)) return false;
  }
  return true;
}

void RankProcesses::signal(int index, int sig) {
  if (!procs_[index].reaped) ::kill(procs_[index].pid, sig);
}

void RankProcesses::write_stdin(int index, std::string_view text) {
  if (procs_[index].in_fd >= 0) {
    [[maybe_unused]] const ssize_t n =
        ::write(procs_[index].in_fd, text.data(), text.size());
  }
}

void RankProcesses::close_stdin(int index) {
  if (procs_[index].in_fd >= 0) ::close(procs_[index].in_fd);
  procs_[index].in_fd = -1;
}

int RankProcesses::exit_code(int index) const {
  const Proc& p = procs_[index];
  return p.reaped && WIFEXITED(p.status) ? WEXITSTATUS(p.status) : -1;
}

int RankProcesses::killed_by(int index) const {
  const Proc& p = procs_[index];
  return p.reaped && WIFSIGNALED(p.status) ? WTERMSIG(p.status) : 0;
}

std::string RankProcesses::report(int index) const {
  return absl::StrCat("process ", index, " exit ", exit_code(index), " signal ",
                      killed_by(index), "\nstdout:\n", procs_[index].out,
                      "stderr:\n", procs_[index].err);
}

}  // namespace weft::tcp_processes
