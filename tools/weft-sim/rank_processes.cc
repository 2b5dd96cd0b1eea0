#include "tools/weft-sim/rank_processes.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"

namespace weft::tools::weft_sim {

namespace {

// Why `path` cannot be executed ("" when it can).
std::string not_executable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a file";
  if (::access(path.c_str(), X_OK) != 0) return std::strerror(errno);
  return "";
}

}  // namespace

absl::Status check_runnable(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    const std::string why = not_executable(program);
    if (why.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot run '%s': %s; give the path of an executable program", program,
        why));
  }
  // execvp's search, with its default when PATH is unset.
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/bin:/usr/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (not_executable(candidate).empty()) return absl::OkStatus();
    start = end + 1;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "cannot run '%s': no executable of that name on PATH; give its path "
      "or a program on PATH",
      program));
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) {
    return absl::StrFormat("exited %d", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return absl::StrFormat("killed by signal %d", WTERMSIG(status));
  }
  return "ended";
}

bool exited_ok(int status) {
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

RankProcesses::~RankProcesses() { kill_all(); }

absl::Status RankProcesses::start(uint32_t rank,
                                  const std::vector<std::string>& program,
                                  const std::vector<EnvSetting>& env) {
  // What the rank prints must follow what the launcher printed before it.
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "cannot start rank %u: fork failed: %s", rank, std::strerror(errno)));
  }
  if (pid > 0) {
    ranks_.push_back({rank, pid, std::nullopt});
    return absl::OkStatus();
  }
  for (const EnvSetting& e : env) {
    if (e.value) {
      ::setenv(e.name.c_str(), e.value->c_str(), e.keep_existing ? 0 : 1);
    } else {
      ::unsetenv(e.name.c_str());
    }
  }
  std::vector<char*> argv;
  for (const std::string& a : program) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "weft-sim launch: cannot run '%s' as rank %u: %s\n",
               argv[0], rank, std::strerror(errno));
  std::_Exit(127);
}

void RankProcesses::reap() {
  for (RankProcess& r : ranks_) {
    if (r.status) continue;
    int status = 0;
    if (::waitpid(r.pid, &status, WNOHANG) == r.pid) r.status = status;
  }
}

bool RankProcesses::wait_until(Clock::time_point deadline,
                               const std::function<bool()>& stop) {
  for (;;) {
    reap();
    if (all_exited()) return true;
    if ((stop && stop()) || Clock::now() >= deadline) return false;
    // Polling for exits: waitpid has no deadline of its own, and no
    // ordering depends on how soon an exit is seen.
    ::usleep(10'000);
  }
}

void RankProcesses::kill_all() {
  for (RankProcess& r : ranks_) {
    if (r.status) continue;
    ::kill(r.pid, SIGKILL);
    int status = 0;
    if (::waitpid(r.pid, &status, 0) == r.pid) r.status = status;
  }
}

void RankProcesses::end(int signal, Clock::duration grace) {
  reap();
  for (const RankProcess& r : ranks_) {
    if (!r.status) ::kill(r.pid, signal);
  }
  wait_until(Clock::now() + grace);
  kill_all();
}

bool RankProcesses::all_exited() const {
  for (const RankProcess& r : ranks_) {
    if (!r.status) return false;
  }
  return true;
}

const RankProcess* RankProcesses::first_failure() const {
  for (const RankProcess& r : ranks_) {
    if (r.status && !exited_ok(*r.status)) return &r;
  }
  return nullptr;
}

std::string RankProcesses::running_list() const {
  std::string out;
  for (const RankProcess& r : ranks_) {
    if (r.status) continue;
    out += absl::StrFormat("%s%u", out.empty() ? "" : ", ", r.rank);
  }
  return out;
}

bool RankProcesses::print_exits() const {
  bool ok = true;
  for (const RankProcess& r : ranks_) {
    const std::string what =
        r.status ? describe_status(*r.status) : std::string("still running");
    std::printf("rank %u (pid %d): %s\n", r.rank, static_cast<int>(r.pid),
                what.c_str());
    ok = ok && r.status && exited_ok(*r.status);
  }
  std::fflush(stdout);
  return ok;
}

}  // namespace weft::tools::weft_sim
