// ThreadCensus: whether every thread of this process is blocked waiting on
// another thread of it, at one instant, as the kernel tells
// (/proc/self/task). A rank's process (the simulated verbs provider in
// client mode) asks it before it tells the simulation server that the rank
// waits: a rank is a process with any number of threads, and it waits only
// when none of them can make progress. A thread inside a verbs wait is
// known to the provider and exempt; every other thread must be blocked in
// a futex wait (a lock, a condition variable, a future, a join: it waits
// for a thread of its own process, all of which wait). A thread that runs,
// or is blocked in any other system call (a socket, a pipe, a file, a
// sleep), can still make progress on its own, so the rank does not wait.
//
// One look is not enough: while the census reads thread A asleep, thread
// B may wake it and fall asleep itself before B is read. So the census
// reads every thread twice, and each time also how often the kernel has
// put it on a CPU; a thread seen blocked both times, never scheduled in
// between, was blocked throughout, and so at the instant between the two
// rounds every thread was. A thread the last census that succeeded proved
// blocked needs one look (blocked, never scheduled since): a thread pool's
// idle workers, or a thread that waits for the others on a future while
// they wait at the server again and again. Each look at a thread reads two
// files of /proc/self/task/<tid>, kept open. Linux only (procfs).
#ifndef WEFT_SIM_SERVER_THREAD_CENSUS_H_
#define WEFT_SIM_SERVER_THREAD_CENSUS_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace weft::sim_server {

// What the kernel says a thread is doing.
enum class ThreadActivity {
  kRuns,              // on a CPU or ready for one (or unreadable: assumed)
  kWaitsOnThread,     // blocked in a futex wait
  kBlockedElsewhere,  // blocked in another system call
};

struct CensusResult {
  // Every thread but the exempt ones was blocked in a futex wait at one
  // instant.
  bool all_wait = false;
  size_t threads = 0;  // threads of the process seen (exempt included)
  size_t checked = 0;  // of them, not exempt
  // When not all wait: a thread that did not, what it did, and (blocked
  // elsewhere) the system call it was in; for messages.
  pid_t thread = 0;
  ThreadActivity activity = ThreadActivity::kRuns;
  long syscall = -1;
};

class ThreadCensus {
 public:
  ThreadCensus() = default;
  ~ThreadCensus();
  ThreadCensus(const ThreadCensus&) = delete;
  ThreadCensus& operator=(const ThreadCensus&) = delete;

  // Takes the census of this process's threads but `exempt`.
  // REQUIRES: `exempt` is sorted.
  CensusResult take(std::span<const pid_t> exempt);

  // The calling thread's id (gettid).
  static pid_t current_thread();
  // Thread `tid` of this process's name (its comm), or "?".
  static std::string thread_name(pid_t tid);
  // "runs", "waits on a thread of its process", "is blocked in system
  // call N (read)", for messages.
  static std::string describe(ThreadActivity activity, long syscall);

 private:
  struct Files {
    int syscall_fd = -1;  // /proc/self/task/<tid>/syscall
    int runs_fd = -1;     // .../schedstat, or .../status without it
    bool runs_from_status = false;
  };
  struct Sample {
    ThreadActivity activity = ThreadActivity::kRuns;
    long syscall = -1;
    uint64_t runs = 0;  // times put on a CPU (or switched off one)
    bool gone = false;  // the thread has exited
  };
  enum class Order { kRunsFirst, kActivityFirst };
  enum class Look { kAllWait, kNotWaiting, kUnknown };

  // This process's threads, sorted.
  bool list_threads(std::vector<pid_t>* out);
  Files* files_of(pid_t tid);
  Sample sample(pid_t tid, Order order);
  void close_gone(const std::vector<pid_t>& live);
  void forget(pid_t tid);
  void not_waiting(pid_t tid, const Sample& s, CensusResult* r);
  // One look at `checked`, each proven blocked by the last census.
  Look look_again(const std::vector<pid_t>& checked, CensusResult* r);
  bool two_rounds(const std::vector<pid_t>& threads,
                  const std::vector<pid_t>& checked, CensusResult* r);

  int task_dir_fd_ = -1;
  // Kept open, so that reading a thread again costs one pread each; by
  // thread id.
  std::map<pid_t, Files> files_;
  // The threads the last census that succeeded checked, and how often
  // each had been put on a CPU then.
  std::map<pid_t, uint64_t> proven_;
};

}  // namespace weft::sim_server

#endif  // WEFT_SIM_SERVER_THREAD_CENSUS_H_
