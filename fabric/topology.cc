#include "fabric/topology.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "base/text_file.h"
#include "nlohmann/json.hpp"

namespace weft {
namespace {

absl::Status bad(std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("device JSON: ", base::to_absl(what),
                   "; expected a square list of lists whose cell [i][j] is "
                   "null, a device name or a list of device names, with null "
                   "on the diagonal"));
}

absl::Status parse_cell(const nlohmann::json& cell, uint32_t i, uint32_t j,
                        std::vector<std::string>* out) {
  if (cell.is_null()) return absl::OkStatus();
  if (i == j) {
    return bad(
        absl::StrFormat("cell [%u][%u] names a device on the diagonal "
                        "(a rank cannot be cabled to itself)",
                        i, j));
  }
  if (cell.is_string()) {
    out->push_back(cell.get<std::string>());
  } else if (cell.is_array()) {
    if (cell.size() > Topology::kMaxCables) {
      return bad(absl::StrFormat("cell [%u][%u] lists %u devices, more than %u",
                                 i, j, cell.size(), Topology::kMaxCables));
    }
    for (const auto& name : cell) {
      if (!name.is_string()) {
        return bad(absl::StrFormat(
            "cell [%u][%u] holds a list with a %s in it, not a device name", i,
            j, name.type_name()));
      }
      out->push_back(name.get<std::string>());
    }
  } else {
    return bad(
        absl::StrFormat("cell [%u][%u] is a %s", i, j, cell.type_name()));
  }
  for (const auto& name : *out) {
    if (name.empty()) {
      return bad(
          absl::StrFormat("cell [%u][%u] has an empty device name", i, j));
    }
  }
  if (out->empty()) {
    return bad(
        absl::StrFormat("cell [%u][%u] is an empty list (use null)", i, j));
  }
  return absl::OkStatus();
}

std::vector<std::string> cable_names(uint32_t i, uint32_t j, uint32_t cables) {
  std::vector<std::string> names;
  for (uint32_t c = 0; c < cables; ++c) {
    names.push_back(absl::StrFormat("sim_%u_%u_%u", i, j, c));
  }
  return names;
}

absl::Status check_generated(uint32_t ranks, uint32_t cables) {
  if (ranks == 0 || ranks > Topology::kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rank count %u is outside 1..%u", ranks, Topology::kMaxRanks));
  }
  if (cables == 0 || cables > Topology::kMaxCables) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cable count %u is outside 1..%u", cables, Topology::kMaxCables));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Topology> Topology::parse_json(std::string_view text) {
  nlohmann::json doc =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return bad("not valid JSON");
  if (!doc.is_array() || doc.empty())
    return bad("the top level is not a non-empty list");
  if (doc.size() > kMaxRanks) {
    return bad(
        absl::StrFormat("%u ranks, more than %u", doc.size(), kMaxRanks));
  }
  const auto ranks = static_cast<uint32_t>(doc.size());
  Topology topo(ranks);
  for (uint32_t i = 0; i < ranks; ++i) {
    const auto& row = doc[i];
    if (!row.is_array())
      return bad(
          absl::StrFormat("row %u is a %s, not a list", i, row.type_name()));
    if (row.size() != ranks) {
      return bad(absl::StrFormat(
          "row %u has %u cells but there are %u rows (not square)", i,
          row.size(), ranks));
    }
    for (uint32_t j = 0; j < ranks; ++j) {
      std::vector<std::string> names;
      absl::Status s = parse_cell(row[j], i, j, &names);
      if (!s.ok()) return s;
      if (!names.empty()) topo.join(i, j, std::move(names));
    }
  }
  return topo;
}

absl::StatusOr<Topology> Topology::load_json_file(const std::string& path) {
  absl::StatusOr<std::string> text =
      base::read_text_file(path, kMaxJsonFileBytes, "device JSON");
  if (!text.ok()) return text.status();
  absl::StatusOr<Topology> topo = parse_json(*text);
  if (!topo.ok()) {
    return absl::Status(topo.status().code(),
                        absl::StrCat(path, ": ", topo.status().message()));
  }
  return topo;
}

absl::StatusOr<Topology> Topology::mesh(uint32_t ranks, uint32_t cables) {
  if (absl::Status s = check_generated(ranks, cables); !s.ok()) return s;
  Topology topo(ranks);
  for (uint32_t i = 0; i < ranks; ++i) {
    for (uint32_t j = 0; j < ranks; ++j) {
      if (i != j) topo.join(i, j, cable_names(i, j, cables));
    }
  }
  return topo;
}

absl::StatusOr<Topology> Topology::ring(uint32_t ranks, uint32_t cables) {
  if (absl::Status s = check_generated(ranks, cables); !s.ok()) return s;
  Topology topo(ranks);
  for (uint32_t i = 0; i < ranks && ranks > 1; ++i) {
    for (uint32_t j : {(i + 1) % ranks, (i + ranks - 1) % ranks}) {
      if (topo.connected(i, j)) continue;  // two ranks: both are one
      topo.join(i, j, cable_names(i, j, cables));
    }
  }
  return topo;
}

absl::StatusOr<Topology> Topology::unjoined(uint32_t ranks) {
  if (absl::Status s = check_generated(ranks, 1); !s.ok()) return s;
  return Topology(ranks);
}

absl::Status Topology::add_device(uint32_t i, uint32_t j, std::string device) {
  if (i >= ranks_ || j >= ranks_ || i == j) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot cable rank %u to rank %u: the topology has ranks 0..%u and "
        "a rank is not cabled to itself",
        i, j, ranks_ - 1));
  }
  if (device.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %u's device toward rank %u has no name", i, j));
  }
  const std::vector<std::string> names = device_names(i);
  if (std::find(names.begin(), names.end(), device) != names.end()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rank %u already has a device named %s; a device is one port, the "
        "end of one cable",
        i, device));
  }
  if (devices(i, j).size() >= kMaxCables) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %u already has %u devices toward rank %u, the "
                        "most a pair may have",
                        i, kMaxCables, j));
  }
  join(i, j, {std::move(device)});
  return absl::OkStatus();
}

std::vector<std::string> Topology::device_names(uint32_t i) const {
  std::vector<std::string> names;
  for (const Link& link : links_[i]) {
    for (const std::string& name : link.devices) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(name);
      }
    }
  }
  return names;
}

Topology Topology::with_neutral_names(uint64_t seed) const {
  Topology renamed = *this;
  for (uint32_t i = 0; i < ranks_; ++i) {
    const std::vector<std::string> old = device_names(i);
    // Numbers 2.. in an order drawn by a Fisher-Yates shuffle on splitmix64
    // of (seed, rank): the same seed names the same ports everywhere.
    std::vector<uint32_t> number(old.size());
    for (uint32_t k = 0; k < number.size(); ++k) number[k] = k + 2;
    uint64_t state = seed ^ (uint64_t{i} * 0x9e3779b97f4a7c15ULL);
    auto next = [&state] {
      uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      return z ^ (z >> 31);
    };
    for (size_t k = number.size(); k > 1; --k) {
      std::swap(number[k - 1], number[next() % k]);
    }
    for (Link& link : renamed.links_[i]) {
      for (std::string& name : link.devices) {
        const size_t at = static_cast<size_t>(
            std::find(old.begin(), old.end(), name) - old.begin());
        name = absl::StrCat("rdma_en", number[at]);
      }
    }
  }
  return renamed;
}

const std::vector<std::string>& Topology::devices(uint32_t i,
                                                  uint32_t j) const {
  static const std::vector<std::string> kNone;
  const std::vector<Link>& row = links_[i];
  auto it = std::lower_bound(
      row.begin(), row.end(), j,
      [](const Link& link, uint32_t peer) { return link.peer < peer; });
  return it != row.end() && it->peer == j ? it->devices : kNone;
}

uint64_t Topology::devices_of(uint32_t i) const {
  uint64_t n = 0;
  for (const Link& link : links_[i]) n += link.devices.size();
  return n;
}

void Topology::join(uint32_t i, uint32_t j, std::vector<std::string> devices) {
  std::vector<Link>& row = links_[i];
  auto it = std::lower_bound(
      row.begin(), row.end(), j,
      [](const Link& link, uint32_t peer) { return link.peer < peer; });
  if (it != row.end() && it->peer == j) {
    for (std::string& name : devices) it->devices.push_back(std::move(name));
  } else {
    row.insert(it, Link{j, std::move(devices)});
  }
}

bool Topology::is_full_mesh() const {
  // Links are never empty and never to the rank itself.
  for (const std::vector<Link>& row : links_) {
    if (row.size() != ranks_ - 1) return false;
  }
  return true;
}

bool Topology::has_ring() const {
  if (ranks_ < 2) return true;
  for (uint32_t i = 0; i < ranks_; ++i) {
    if (!connected(i, (i + 1) % ranks_) || !connected((i + 1) % ranks_, i))
      return false;
  }
  return true;
}

std::string Topology::to_json() const {
  nlohmann::json doc = nlohmann::json::array();
  for (uint32_t i = 0; i < ranks_; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (uint32_t j = 0; j < ranks_; ++j) {
      const auto& names = devices(i, j);
      if (names.empty()) {
        row.push_back(nullptr);
      } else if (names.size() == 1) {
        row.push_back(names[0]);
      } else {
        row.push_back(names);
      }
    }
    doc.push_back(std::move(row));
  }
  return doc.dump();
}

}  // namespace weft
