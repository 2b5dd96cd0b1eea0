// Files and directories a test writes for one run (a device JSON, a
// hostfile, a layout), under GoogleTest's temporary directory and removed
// when the object goes: named by process and test, since CTest runs the
// tests of one binary in parallel processes.
#ifndef WEFT_TESTS_SUPPORT_SCRATCH_H_
#define WEFT_TESTS_SUPPORT_SCRATCH_H_

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "gtest/gtest.h"

namespace weft::testing {

// A file holding `text`, at a path unique to this process, test and `name`.
class ScratchFile {
 public:
  ScratchFile(const std::string& name, const std::string& text)
      : path_(::testing::TempDir() + "/weft_" + std::to_string(getpid()) + "_" +
              test_name() + "_" + name) {
    std::ofstream(path_) << text;
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  // "Suite_Test", '/' of parameterized names made '_'; "" outside a test.
  static std::string test_name() {
    const ::testing::TestInfo* test =
        ::testing::UnitTest::GetInstance()->current_test_info();
    if (test == nullptr) return "";
    std::string name =
        std::string(test->test_suite_name()) + "_" + test->name();
    std::replace(name.begin(), name.end(), '/', '_');
    return name;
  }

  std::string path_;
};

// A fresh directory, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() : path_(::testing::TempDir() + "/weft_XXXXXX") {
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

}  // namespace weft::testing

#endif  // WEFT_TESTS_SUPPORT_SCRATCH_H_
