#include "sim_server/thread_census.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"

namespace weft::sim_server {
namespace {

// Big enough for any line of a task's syscall or schedstat file; status
// is read whole (about 1.5 KiB).
constexpr size_t kLineBytes = 256;
constexpr size_t kStatusBytes = 4096;

// The system calls that block a thread until another thread (of this
// process, all of which are accounted for) wakes it.
bool is_futex_wait(long nr) {
  if (nr == SYS_futex) return true;
#ifdef SYS_futex_waitv
  if (nr == SYS_futex_waitv) return true;
#endif
#ifdef SYS_futex_wait
  if (nr == SYS_futex_wait) return true;
#endif
  return false;
}

// Reads the file at `fd` from its start (procfs regenerates it); the
// bytes read, or empty when the thread has gone.
std::string_view read_at_start(int fd, char* buffer, size_t bytes) {
  const ssize_t n = ::pread(fd, buffer, bytes - 1, 0);
  if (n <= 0) return {};
  buffer[n] = '\0';
  return std::string_view(buffer, static_cast<size_t>(n));
}

// The whole number at the start of `text`, after blanks; false when there
// is none.
template <typename T>
bool leading_number(std::string_view text, T* out) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr != text.data();
}

// The value of `key` ("voluntary_ctxt_switches:") in a status file.
uint64_t status_field(std::string_view status, std::string_view key) {
  const size_t at = status.find(key);
  uint64_t value = 0;
  if (at == std::string_view::npos ||
      !leading_number(status.substr(at + key.size()), &value)) {
    return 0;
  }
  return value;
}

std::string task_path(pid_t tid, const char* file) {
  return absl::StrFormat("/proc/self/task/%d/%s", tid, file);
}

}  // namespace

ThreadCensus::~ThreadCensus() {
  for (auto& [tid, f] : files_) {
    ::close(f.syscall_fd);
    ::close(f.runs_fd);
  }
  if (task_dir_ != nullptr) ::closedir(task_dir_);
}

pid_t ThreadCensus::current_thread() {
  return static_cast<pid_t>(::syscall(SYS_gettid));
}

std::string ThreadCensus::thread_name(pid_t tid) {
  std::string name = "?";
  if (FILE* f = std::fopen(task_path(tid, "comm").c_str(), "r")) {
    std::array<char, kLineBytes> line{};
    if (std::fgets(line.data(), line.size(), f) != nullptr) {
      name = line.data();
      while (!name.empty() && name.back() == '\n') name.pop_back();
    }
    std::fclose(f);
  }
  return name;
}

std::string ThreadCensus::describe(ThreadActivity activity, long syscall) {
  switch (activity) {
    case ThreadActivity::kRuns:
      return "runs";
    case ThreadActivity::kWaitsOnThread:
      return "waits on a thread of its process";
    case ThreadActivity::kBlockedElsewhere:
      return absl::StrFormat(
          "is blocked in system call %d, not on a thread of its process",
          syscall);
  }
  return "?";
}

bool ThreadCensus::list_threads(std::vector<pid_t>* out) {
  out->clear();
  if (task_dir_ == nullptr) {
    task_dir_ = ::opendir("/proc/self/task");
    if (task_dir_ == nullptr) return false;
  } else {
    ::rewinddir(task_dir_);
  }
  while (const dirent* e = ::readdir(task_dir_)) {
    pid_t tid = 0;
    if (leading_number(std::string_view(e->d_name), &tid) && tid > 0) {
      out->push_back(tid);
    }
  }
  std::sort(out->begin(), out->end());
  return true;
}

ThreadCensus::Files* ThreadCensus::files_of(pid_t tid) {
  auto it = files_.find(tid);
  if (it != files_.end()) return &it->second;
  Files f;
  f.syscall_fd =
      ::open(task_path(tid, "syscall").c_str(), O_RDONLY | O_CLOEXEC);
  f.runs_fd = ::open(task_path(tid, "schedstat").c_str(), O_RDONLY | O_CLOEXEC);
  if (f.runs_fd < 0) {
    // A kernel without scheduler statistics: count context switches.
    f.runs_fd = ::open(task_path(tid, "status").c_str(), O_RDONLY | O_CLOEXEC);
    f.runs_from_status = true;
  }
  if (f.syscall_fd < 0 || f.runs_fd < 0) {
    if (f.syscall_fd >= 0) ::close(f.syscall_fd);
    if (f.runs_fd >= 0) ::close(f.runs_fd);
    return nullptr;
  }
  return &files_.emplace(tid, f).first->second;
}

ThreadCensus::Sample ThreadCensus::sample(pid_t tid, Order order) {
  Sample s;
  Files* f = files_of(tid);
  if (f == nullptr) {
    s.gone = true;
    return s;
  }
  auto read_runs = [&] {
    if (f->runs_from_status) {
      std::array<char, kStatusBytes> buffer;
      const std::string_view status =
          read_at_start(f->runs_fd, buffer.data(), buffer.size());
      s.gone = s.gone || status.empty();
      s.runs = status_field(status, "voluntary_ctxt_switches:") +
               status_field(status, "nonvoluntary_ctxt_switches:");
      return;
    }
    // "<ns on a CPU> <ns waiting for one> <times put on a CPU>".
    std::array<char, kLineBytes> buffer;
    std::string_view line =
        read_at_start(f->runs_fd, buffer.data(), buffer.size());
    s.gone = s.gone || line.empty();
    for (int field = 0; field < 2; ++field) {
      const size_t blank = line.find(' ');
      line = blank == std::string_view::npos ? std::string_view()
                                             : line.substr(blank + 1);
    }
    if (!leading_number(line, &s.runs)) s.runs = 0;
  };
  auto read_activity = [&] {
    // "running", or the system call the thread is blocked in and its
    // arguments ("-1 ..." when blocked outside one).
    std::array<char, kLineBytes> buffer;
    const std::string_view line =
        read_at_start(f->syscall_fd, buffer.data(), buffer.size());
    s.gone = s.gone || line.empty();
    long nr = -1;
    if (line.empty() || line.starts_with("running") ||
        !leading_number(line, &nr)) {
      s.activity = ThreadActivity::kRuns;
      return;
    }
    s.syscall = nr;
    s.activity = is_futex_wait(nr) ? ThreadActivity::kWaitsOnThread
                                   : ThreadActivity::kBlockedElsewhere;
  };
  if (order == Order::kRunsFirst) {
    read_runs();
    read_activity();
  } else {
    read_activity();
    read_runs();
  }
  return s;
}

void ThreadCensus::close_gone(const std::vector<pid_t>& live) {
  for (auto it = files_.begin(); it != files_.end();) {
    if (std::binary_search(live.begin(), live.end(), it->first)) {
      ++it;
      continue;
    }
    ::close(it->second.syscall_fd);
    ::close(it->second.runs_fd);
    it = files_.erase(it);
  }
}

// Round one reads each thread's count of runs before its state, round two
// after it: a thread blocked when round one read it that was woken before
// the instant between the rounds either is not blocked when round two
// reads it, or ran (and blocked again) in between, after round one read
// its count, which round two then sees grown.
CensusResult ThreadCensus::take(std::span<const pid_t> exempt) {
  CensusResult result;
  std::vector<pid_t> threads;
  if (!list_threads(&threads)) return result;
  close_gone(threads);
  result.threads = threads.size();
  auto is_exempt = [&](pid_t tid) {
    return std::binary_search(exempt.begin(), exempt.end(), tid);
  };
  std::vector<std::pair<pid_t, uint64_t>> first;
  for (pid_t tid : threads) {
    if (is_exempt(tid)) continue;
    const Sample s = sample(tid, Order::kRunsFirst);
    if (s.gone) return result;  // it exited: look again
    if (s.activity != ThreadActivity::kWaitsOnThread) {
      result.thread = tid;
      result.activity = s.activity;
      result.syscall = s.syscall;
      return result;
    }
    first.emplace_back(tid, s.runs);
  }
  result.checked = first.size();
  std::vector<pid_t> again;
  if (!list_threads(&again) || again != threads) return result;
  for (const auto& [tid, runs] : first) {
    const Sample s = sample(tid, Order::kActivityFirst);
    if (s.gone || s.activity != ThreadActivity::kWaitsOnThread ||
        s.runs != runs) {
      result.thread = tid;
      result.activity = s.activity == ThreadActivity::kWaitsOnThread
                            ? ThreadActivity::kRuns
                            : s.activity;
      result.syscall = s.syscall;
      return result;
    }
  }
  result.all_wait = true;
  return result;
}

}  // namespace weft::sim_server
