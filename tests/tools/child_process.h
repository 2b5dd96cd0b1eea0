// A built tool started as a child process whose stdout the test reads
// through a pipe, line by line, with a deadline: so a test can wait for
// what the tool prints (never sleeping) and then signal it or close its
// stdout. Its stderr goes to a scratch file, read when it has exited.
#ifndef WEFT_TESTS_TOOLS_CHILD_PROCESS_H_
#define WEFT_TESTS_TOOLS_CHILD_PROCESS_H_

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tool_runner.h"

namespace weft::testing {

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts argv[0] (a path) with `argv`; stdout into a pipe, and stderr
  // too when `merge_stderr` (then err() stays empty).
  explicit ChildProcess(const std::vector<std::string>& argv,
                        bool merge_stderr = false)
      : err_path_(scratch_path("child_stderr.txt")) {
    int fds[2];
    if (::pipe(fds) != 0) {
      ADD_FAILURE() << "pipe";
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      const int err = merge_stderr ? fds[1]
                                   : ::open(err_path_.c_str(),
                                            O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(err, STDERR_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      std::vector<char*> args;
      for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      std::_Exit(127);
    }
    ::close(fds[1]);
    out_fd_ = fds[0];
  }

  ~ChildProcess() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    close_stdout();
  }

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The rest of the first line read that holds `prefix`, after it ("" when
  // none does).
  std::string after(const std::string& prefix) const {
    for (const std::string& line : lines_of(out_)) {
      const size_t at = line.find(prefix);
      if (at != std::string::npos) return line.substr(at + prefix.size());
    }
    return "";
  }

  // Reads stdout until a line holding `text` has been read (true), or it
  // ends, or `timeout` passes (false). Each call looks at the lines after
  // the one the last call found. Everything read is kept in out().
  bool wait_for_line(const std::string& text,
                     std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const Clock::time_point deadline = Clock::now() + timeout;
    for (;;) {
      for (size_t end;
           (end = out_.find('\n', scanned_)) != std::string::npos;) {
        const bool found = out_.substr(scanned_, end - scanned_).find(text) !=
                           std::string::npos;
        scanned_ = end + 1;
        if (found) return true;
      }
      if (!read_some(deadline)) return false;
    }
  }

  // The test's end of the pipe closed: the child's next write to stdout
  // raises SIGPIPE.
  void close_stdout() {
    if (out_fd_ >= 0) ::close(out_fd_);
    out_fd_ = -1;
  }

  // Waits for the child to exit (reading the rest of its stdout while the
  // pipe is open), within `timeout`; its exit code, or -signal when a
  // signal ended it, or -1000 when it was still running (then killed).
  int wait(std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const Clock::time_point deadline = Clock::now() + timeout;
    while (out_fd_ >= 0 && read_some(deadline)) {
    }
    for (;;) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        status_ = status;
        break;
      }
      if (Clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        status_ = status;
        return -1000;
      }
      // The pipe is closed or at its end: nothing to wait on but the exit.
      ::poll(nullptr, 0, 10);
    }
    err_ = read_text(err_path_);
    if (WIFEXITED(*status_)) return WEXITSTATUS(*status_);
    return -WTERMSIG(*status_);
  }

  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  // One read of stdout, waiting until `deadline`; false at its end, on a
  // closed pipe, or at the deadline.
  bool read_some(Clock::time_point deadline) {
    if (out_fd_ < 0) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{out_fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buffer[4096];
    const ssize_t n = ::read(out_fd_, buffer, sizeof(buffer));
    if (n <= 0) {
      close_stdout();
      return false;
    }
    out_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string err_path_;
  std::string out_;
  std::string err_;
  size_t scanned_ = 0;  // wait_for_line has looked at out_ up to here
  std::optional<int> status_;
};

}  // namespace weft::testing

#endif  // WEFT_TESTS_TOOLS_CHILD_PROCESS_H_
