// Runs a built tool (weft-sim, weft-bench) as a child process and collects
// its exit code, stdout and stderr, or a shell script from a fresh
// directory; scratch files are named per process and test, since CTest runs
// tests in parallel.
#ifndef WEFT_TESTS_TOOLS_TOOL_RUNNER_H_
#define WEFT_TESTS_TOOLS_TOOL_RUNNER_H_

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/ports.h"

namespace weft::testing {

struct ToolResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string scratch_path(const std::string& name) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "/weft_tools_" + std::to_string(getpid()) +
         "_" + (test != nullptr ? test->name() : "none") + "_" + name;
}

inline std::string write_scratch(const std::string& name,
                                 const std::string& text) {
  const std::string path = scratch_path(name);
  std::ofstream(path) << text;
  return path;
}

// `env` (e.g. "JACCL_RANK=0 ") is put before the tool on the shell line.
inline ToolResult run_tool(const std::string& tool, const std::string& args,
                           const std::string& env = "") {
  const std::string err_path = scratch_path("stderr.txt");
  const std::string cmd = "cd " + ::testing::TempDir() + " && " + env + tool +
                          " " + args + " 2>" + err_path;
  ToolResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    r.out.append(buffer, n);
  }
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_text(err_path);
  return r;
}

// A loopback TCP port nothing listens on now (the kernel's choice for port
// 0), for a program under test to listen on.
inline uint16_t free_port() {
  const std::vector<uint16_t> port = free_ports("127.0.0.1", 1);
  if (port.empty()) {
    ADD_FAILURE() << "no free port on 127.0.0.1";
    return 0;
  }
  return port[0];
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

inline std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  for (std::string f; s >> f;) out.push_back(f);
  return out;
}

// Bad input: exit code 2 and one line on stderr, "<program>: ...what...".
inline void expect_bad_input(const std::string& tool,
                             const std::string& program,
                             const std::string& args, const std::string& what,
                             const std::string& env = "") {
  const ToolResult r = run_tool(tool, args, env);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
  EXPECT_THAT(r.err, ::testing::StartsWith(program + ": ")) << args;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr(what)) << args;
}

struct ScriptRun {
  int code = -1;    // the runner's exit code; -1 if it did not exit
  std::string out;  // what it printed
  std::string dir;  // the directory it ran in (removed since)
};

// Writes `script` to commands.sh in a new directory, after an export of
// LD_PRELOAD when Debian's tools need the ASan runtime to load an
// instrumented provider, runs the shell line `runner` (which runs
// commands.sh, under a deadline) there, and removes the directory.
inline ScriptRun run_script(const std::string& script,
                            const std::string& runner) {
  ScriptRun r;
  r.dir = ::testing::TempDir() + "/weft_script_XXXXXX";
  if (::mkdtemp(r.dir.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << r.dir;
    return r;
  }
  {
    std::ofstream file(r.dir + "/commands.sh");
    if (const std::string preload = WEFT_FOREIGN_PRELOAD; !preload.empty()) {
      file << "export LD_PRELOAD='" << preload << "'\n";
    }
    file << script;
  }
  const std::string line = "cd '" + r.dir + "' && " + runner;
  FILE* pipe = ::popen(line.c_str(), "r");
  if (pipe != nullptr) {
    char buffer[4096];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
      r.out.append(buffer, n);
    }
    const int status = ::pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::error_code ignored;
  std::filesystem::remove_all(r.dir, ignored);
  return r;
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_TOOLS_TOOL_RUNNER_H_
