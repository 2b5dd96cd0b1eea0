// A fresh directory under the test's temporary directory, removed with
// everything in it when the test is done: for a group's hostfile.
#ifndef WEFT_TESTS_TCP_PROCESSES_SCRATCH_DIR_H_
#define WEFT_TESTS_TCP_PROCESSES_SCRATCH_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace weft::tcp_processes {

class ScratchDir {
 public:
  ScratchDir() : path_(::testing::TempDir() + "/weft_tcp_XXXXXX") {
    if (::mkdtemp(path_.data()) == nullptr) ADD_FAILURE() << "mkdtemp";
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace weft::tcp_processes

#endif  // WEFT_TESTS_TCP_PROCESSES_SCRATCH_DIR_H_
