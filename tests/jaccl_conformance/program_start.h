// What the conformance programs share, written against JACCL's public
// headers and the standard library only (as a JACCL user's program is):
// "--name=value" arguments, and the two ways a JACCL program starts its
// group: jaccl::init() from the environment, or a jaccl::Config built in
// code from a rank, a coordinator and a device layout the caller passes.
//
// A layout file is one line per rank; a line holds one cell per rank,
// separated by spaces: "-" where two ranks are not joined, else the device
// names joined by commas (several cables).
#ifndef WEFT_TESTS_JACCL_CONFORMANCE_PROGRAM_START_H_
#define WEFT_TESTS_JACCL_CONFORMANCE_PROGRAM_START_H_

#include <jaccl/jaccl.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace conformance {

// "--name=value" and "--name" (value "1"); anything else is refused.
class Args {
 public:
  Args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg.rfind("--", 0) != 0) {
        throw std::invalid_argument("unexpected argument '" + arg +
                                    "': arguments are --name=value");
      }
      const size_t eq = arg.find('=');
      if (eq == std::string::npos) {
        values_[arg.substr(2)] = "1";
      } else {
        values_[arg.substr(2, eq - 2)] = arg.substr(eq + 1);
      }
    }
  }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback) const {
    const auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }
  long get_int(const std::string& name, long fallback) const {
    return has(name) ? std::stol(get(name, "")) : fallback;
  }

 private:
  std::map<std::string, std::string> values_;
};

using Devices = std::vector<std::vector<std::vector<std::string>>>;

inline Devices read_layout(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open layout file " + path);
  Devices devices;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    std::vector<std::vector<std::string>> row;
    std::istringstream cells(line);
    for (std::string cell; cells >> cell;) {
      std::vector<std::string> names;
      if (cell != "-") {
        std::istringstream parts(cell);
        for (std::string name; std::getline(parts, name, ',');) {
          names.push_back(name);
        }
      }
      row.push_back(names);
    }
    devices.push_back(row);
  }
  return devices;
}

// --start=config: a Config from --rank (or the environment variable
// --rank_env names, as text), --coordinator and --layout, preferring the
// ring with --ring. Prints whether the layout is a valid mesh and ring.
inline jaccl::Config config_from_args(const Args& args) {
  jaccl::Config cfg;
  if (args.has("rank")) {
    cfg.set_rank(static_cast<int>(args.get_int("rank", 0)));
  } else {
    const std::string var = args.get("rank_env", "JACCL_RANK");
    cfg.set_rank(std::getenv(var.c_str()));
  }
  cfg.set_coordinator(args.get("coordinator", ""));
  cfg.set_devices(read_layout(args.get("layout", "")));
  cfg.prefer_ring(args.has("ring"));
  return cfg;
}

// The group, started as --start says (env: jaccl::init(strict); config:
// jaccl::init(Config, strict)). Throws when there is none.
inline std::shared_ptr<jaccl::Group> start_group(const Args& args) {
  const std::string start = args.get("start", "env");
  std::shared_ptr<jaccl::Group> group;
  if (start == "env") {
    group = jaccl::init(/*strict=*/true);
  } else if (start == "config") {
    const jaccl::Config cfg = config_from_args(args);
    std::cout << "config rank " << cfg.get_rank() << ": valid mesh "
              << (cfg.is_valid_mesh() ? "yes" : "no") << ", valid ring "
              << (cfg.is_valid_ring() ? "yes" : "no") << std::endl;
    group = jaccl::init(cfg, /*strict=*/true);
  } else {
    throw std::invalid_argument("--start is env or config, not '" + start +
                                "'");
  }
  if (!group) throw std::runtime_error("jaccl::init returned no group");
  return group;
}

// Runs body(); an exception ends the program with exit code 3 and one line
// on stderr, "<program> rank <JACCL_RANK>: error: <what>", so a test can
// tell an error from a wrong value (exit code 1) and whose error it is.
template <typename Body>
int run_main(const char* program, Body body) {
  try {
    return body();
  } catch (const std::exception& e) {
    // One write, so the ranks' lines do not interleave on a shared stderr.
    const char* rank = std::getenv("JACCL_RANK");
    const std::string line = std::string(program) + " rank " +
                             (rank != nullptr ? rank : "?") +
                             ": error: " + e.what() + "\n";
    std::fputs(line.c_str(), stderr);
    return 3;
  }
}

}  // namespace conformance

#endif  // WEFT_TESTS_JACCL_CONFORMANCE_PROGRAM_START_H_
