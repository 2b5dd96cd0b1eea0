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
// Room for the task directory's entries of about 500 threads per call.
constexpr size_t kListBytes = 16 * 1024;

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
  if (task_dir_fd_ >= 0) ::close(task_dir_fd_);
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
  if (task_dir_fd_ < 0) {
    task_dir_fd_ =
        ::open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (task_dir_fd_ < 0) return false;
  }
  // procfs lists the threads afresh from the start; a buffer that one
  // entry more would not fit in may have more to come.
  if (::lseek(task_dir_fd_, 0, SEEK_SET) != 0) return false;
  alignas(dirent64) std::array<char, kListBytes> buffer;
  for (;;) {
    const long n =
        ::syscall(SYS_getdents64, task_dir_fd_, buffer.data(), buffer.size());
    if (n < 0) return false;
    for (long at = 0; at < n;) {
      const auto* e = reinterpret_cast<const dirent64*>(buffer.data() + at);
      pid_t tid = 0;
      if (leading_number(std::string_view(e->d_name), &tid) && tid > 0) {
        out->push_back(tid);
      }
      at += e->d_reclen;
    }
    if (n == 0 || static_cast<size_t>(n) + sizeof(dirent64) < buffer.size()) {
      break;
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
  std::vector<pid_t> gone;
  for (const auto& [tid, f] : files_) {
    if (!std::binary_search(live.begin(), live.end(), tid)) gone.push_back(tid);
  }
  for (pid_t tid : gone) forget(tid);
}

void ThreadCensus::forget(pid_t tid) {
  auto it = files_.find(tid);
  if (it != files_.end()) {
    ::close(it->second.syscall_fd);
    ::close(it->second.runs_fd);
    files_.erase(it);
  }
  proven_.erase(tid);
}

void ThreadCensus::not_waiting(pid_t tid, const Sample& s, CensusResult* r) {
  r->thread = tid;
  // Blocked on a futex but run since it was last read: it ran.
  r->activity = s.activity == ThreadActivity::kWaitsOnThread
                    ? ThreadActivity::kRuns
                    : s.activity;
  r->syscall = s.syscall;
  if (s.gone) forget(tid);
}

// Why one look can be enough: a thread the last census that succeeded read
// blocked (at its second reading of the thread's state, after which it read
// the count r), which is blocked now and has still run r times when read
// after that, was blocked all along in between: woken, it would have had to
// run to block again. So at this census's start every thread checked was
// blocked, and the exempt ones waited already.
ThreadCensus::Look ThreadCensus::look_again(const std::vector<pid_t>& checked,
                                            CensusResult* r) {
  for (pid_t tid : checked) {
    if (!proven_.contains(tid)) return Look::kUnknown;
  }
  for (pid_t tid : checked) {
    const Sample s = sample(tid, Order::kActivityFirst);
    if (s.gone || s.activity != ThreadActivity::kWaitsOnThread) {
      not_waiting(tid, s, r);
      return Look::kNotWaiting;
    }
    if (s.runs != proven_.at(tid)) return Look::kUnknown;
  }
  return Look::kAllWait;
}

// Round one reads each thread's count of runs before its state, round two
// after it: a thread blocked when round one read it that was woken before
// the instant between the rounds either is not blocked when round two
// reads it, or ran (and blocked again) in between, after round one read
// its count, which round two then sees grown.
bool ThreadCensus::two_rounds(const std::vector<pid_t>& threads,
                              const std::vector<pid_t>& checked,
                              CensusResult* r) {
  std::vector<uint64_t> runs;
  for (pid_t tid : checked) {
    const Sample s = sample(tid, Order::kRunsFirst);
    if (s.gone || s.activity != ThreadActivity::kWaitsOnThread) {
      not_waiting(tid, s, r);
      return false;
    }
    runs.push_back(s.runs);
  }
  std::vector<pid_t> again;
  if (!list_threads(&again) || again != threads) return false;
  for (size_t i = 0; i < checked.size(); ++i) {
    const Sample s = sample(checked[i], Order::kActivityFirst);
    if (s.gone || s.activity != ThreadActivity::kWaitsOnThread ||
        s.runs != runs[i]) {
      not_waiting(checked[i], s, r);
      return false;
    }
  }
  proven_.clear();
  for (size_t i = 0; i < checked.size(); ++i) proven_[checked[i]] = runs[i];
  return true;
}

CensusResult ThreadCensus::take(std::span<const pid_t> exempt) {
  CensusResult result;
  std::vector<pid_t> threads;
  if (!list_threads(&threads)) return result;
  close_gone(threads);
  result.threads = threads.size();
  std::vector<pid_t> checked;
  for (pid_t tid : threads) {
    if (!std::binary_search(exempt.begin(), exempt.end(), tid)) {
      checked.push_back(tid);
    }
  }
  result.checked = checked.size();
  // Only exempt threads (which start no thread while they wait): one look
  // at the list is enough.
  if (checked.empty()) {
    result.all_wait = true;
    return result;
  }
  switch (look_again(checked, &result)) {
    case Look::kAllWait:
      result.all_wait = true;
      return result;
    case Look::kNotWaiting:
      return result;
    case Look::kUnknown:
      break;
  }
  result.all_wait = two_rounds(threads, checked, &result);
  return result;
}

}  // namespace weft::sim_server
