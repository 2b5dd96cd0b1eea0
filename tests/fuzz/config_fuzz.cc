// Fuzzes the configuration read from outside (rendezvous/config.h):
// Config::from_environment with an environment and a device JSON taken from
// the input, and parse_host_port on every variable's value.
//
// Input: lines. Line i (0-based) gives the i-th variable of kVariables: "=v"
// sets it to v, anything else leaves it unset. Everything after the tenth
// line is the device JSON, which the fake loader serves (NotFound when it is
// empty, as for a missing file). Values stop at a NUL byte, as C strings do.
//
// Properties: every input gives a Config or an InvalidArgument/NotFound
// error with a message; a Config passes validate() and holds exactly what
// the variables and JSON say, picked by the documented precedence.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rendezvous/config.h"
#include "tests/fuzz/fuzz_check.h"

namespace weft {
namespace {

enum Variable : size_t {
  kJacclRank,
  kMlxRank,
  kOmpiRank,
  kSlurmProcId,
  kJacclDevices,
  kMlxDevices,
  kJacclCoordinator,
  kMlxCoordinator,
  kJacclRing,
  kMlxRing,
  kVariableCount,
};
constexpr std::array<const char*, kVariableCount> kVariables = {
    "JACCL_RANK",           "MLX_RANK",
    "OMPI_COMM_WORLD_RANK", "SLURM_PROCID",
    "JACCL_IBV_DEVICES",    "MLX_IBV_DEVICES",
    "JACCL_COORDINATOR",    "MLX_JACCL_COORDINATOR",
    "JACCL_RING",           "MLX_JACCL_RING"};
// Digits config.h reads at most in a rank or port.
constexpr size_t kMaxDigits = 9;
constexpr uint32_t kMaxPort = 65535;

struct Input {
  std::array<std::optional<std::string>, kVariableCount> values;
  std::string json;
};

Input split(std::string_view text) {
  Input in;
  for (size_t i = 0; i < kVariableCount; ++i) {
    const size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (line.empty() || line[0] != '=') continue;
    line.remove_prefix(1);
    in.values[i] = std::string(line.substr(0, line.find('\0')));
  }
  in.json = std::string(text);
  return in;
}

std::optional<uint32_t> decimal(std::string_view text) {
  if (text.empty() || text.size() > kMaxDigits) return std::nullopt;
  uint32_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + uint32_t(c - '0');
  }
  return v;
}

// A port as the socket module reads it: decimal digits only, any number of
// leading zeros, a value up to kMaxPort.
std::optional<uint32_t> port_value(std::string_view text) {
  if (text.empty()) return std::nullopt;
  uint32_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = std::min<uint32_t>(v * 10 + uint32_t(c - '0'), kMaxPort + 1);
  }
  if (v > kMaxPort) return std::nullopt;
  return v;
}

// The first set variable among `vars`, in order.
const std::optional<std::string>& first_set(
    const Input& in, std::initializer_list<Variable> vars) {
  static const std::optional<std::string> kUnset;
  for (Variable v : vars) {
    if (in.values[v].has_value()) return in.values[v];
  }
  return kUnset;
}

// "[ipv6]:port": when accepted, the host is what the brackets hold, an
// IPv6 address inet_pton(3) takes, and the port the digits after "]:".
void check_bracketed(std::string_view text,
                     const absl::StatusOr<HostPort>& hp) {
  if (!hp.ok()) {
    WEFT_FUZZ_CHECK(hp.status().code() == absl::StatusCode::kInvalidArgument);
    return;
  }
  const size_t close = text.find(']');
  WEFT_FUZZ_CHECK(close != std::string_view::npos &&
                  hp->host == text.substr(1, close - 1));
  in6_addr bytes{};
  WEFT_FUZZ_CHECK(inet_pton(AF_INET6, hp->host.c_str(), &bytes) == 1);
  WEFT_FUZZ_CHECK(text.substr(close + 1, 1) == ":" &&
                  port_value(text.substr(close + 2)) == hp->port);
}

void check_host_port(std::string_view text) {
  absl::StatusOr<HostPort> hp = parse_host_port(text);
  if (!text.empty() && text.front() == '[') return check_bracketed(text, hp);
  // "host:port": the host is not empty and has no colon (an IPv6 address
  // needs brackets), the port is decimal within range.
  const size_t colon = text.rfind(':');
  std::optional<uint32_t> port;
  if (colon != std::string_view::npos) {
    port = port_value(text.substr(colon + 1));
  }
  const bool valid =
      colon != std::string_view::npos && colon > 0 &&
      text.substr(0, colon).find(':') == std::string_view::npos &&
      port.has_value() && *port <= kMaxPort;
  WEFT_FUZZ_CHECK(hp.ok() == valid);
  if (!hp.ok()) {
    WEFT_FUZZ_CHECK(hp.status().code() == absl::StatusCode::kInvalidArgument);
    return;
  }
  WEFT_FUZZ_CHECK(hp->host == text.substr(0, colon));
  WEFT_FUZZ_CHECK(hp->port == *port);
}

bool flag_value(const std::optional<std::string>& text) {
  if (!text.has_value()) return false;
  std::string lower = *text;
  for (char& c : lower) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  return lower == "1" || lower == "true";
}

// A Config that from_environment returned, against the input.
void check_config(const Input& in, const Config& c) {
  WEFT_FUZZ_CHECK(c.validate().ok());
  const bool named_rank = in.values[kJacclRank] || in.values[kMlxRank];
  const std::optional<std::string>& rank_text =
      named_rank ? first_set(in, {kJacclRank, kMlxRank})
                 : first_set(in, {kOmpiRank, kSlurmProcId});
  WEFT_FUZZ_CHECK(rank_text.has_value() && decimal(*rank_text) == c.rank);
  if (in.values[kJacclRank] && in.values[kMlxRank]) {
    WEFT_FUZZ_CHECK(decimal(*in.values[kMlxRank]) == c.rank);
  }
  absl::StatusOr<Topology> devices = Topology::parse_json(in.json);
  WEFT_FUZZ_CHECK(devices.ok() && devices->ranks() == c.size);
  WEFT_FUZZ_CHECK(c.devices.ranks() == c.size && c.rank < c.size);
  const std::optional<std::string>& coordinator =
      first_set(in, {kJacclCoordinator, kMlxCoordinator});
  WEFT_FUZZ_CHECK(c.coordinator == coordinator.value_or(""));
  if (c.size > 1) {
    absl::StatusOr<HostPort> hp = parse_host_port(c.coordinator);
    WEFT_FUZZ_CHECK(hp.ok() && hp->port != 0);
  }
  WEFT_FUZZ_CHECK(c.ring == flag_value(first_set(in, {kJacclRing, kMlxRing})));
}

}  // namespace
}  // namespace weft

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weft;
  const Input in =
      split(std::string_view(reinterpret_cast<const char*>(data), size));
  for (const std::optional<std::string>& value : in.values) {
    if (value.has_value()) check_host_port(*value);
  }
  auto getenv = [&](const char* name) -> const char* {
    for (size_t i = 0; i < kVariableCount; ++i) {
      if (std::string_view(name) == kVariables[i]) {
        return in.values[i] ? in.values[i]->c_str() : nullptr;
      }
    }
    return nullptr;
  };
  int loads = 0;
  std::string loaded_path;
  auto load = [&](const std::string& path) -> absl::StatusOr<Topology> {
    ++loads;
    loaded_path = path;
    if (in.json.empty()) return absl::NotFoundError("no such file");
    return Topology::parse_json(in.json);
  };
  absl::StatusOr<Config> config = Config::from_environment(getenv, load);
  WEFT_FUZZ_CHECK(loads <= 1);
  if (loads == 1) {
    WEFT_FUZZ_CHECK(loaded_path ==
                    first_set(in, {kJacclDevices, kMlxDevices}).value_or(""));
  }
  if (config.ok()) {
    check_config(in, *config);
    return 0;
  }
  const absl::StatusCode code = config.status().code();
  WEFT_FUZZ_CHECK(code == absl::StatusCode::kInvalidArgument ||
                  (code == absl::StatusCode::kNotFound && in.json.empty()));
  WEFT_FUZZ_CHECK(!config.status().message().empty());
  return 0;
}
