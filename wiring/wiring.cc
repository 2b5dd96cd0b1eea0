#include "wiring/wiring.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "fabric/assert.h"

namespace weft::wiring {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The run of digits at `s[*at]`, its leading zeros skipped; advances *at.
std::string_view digit_run(std::string_view s, size_t* at) {
  size_t start = *at;
  while (*at < s.size() && is_digit(s[*at])) ++*at;
  while (start + 1 < *at && s[start] == '0') ++start;
  return s.substr(start, *at - start);
}

bool cable_less(const Cable& x, const Cable& y) {
  if (x.a.rank != y.a.rank) return x.a.rank < y.a.rank;
  if (x.b.rank != y.b.rank) return x.b.rank < y.b.rank;
  return device_name_less(x.a.device, y.a.device);
}

absl::Status bad_cable(const Cable& c, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("cable rank %u %s - rank %u %s: %s", c.a.rank, c.a.device,
                      c.b.rank, c.b.device, what));
}

std::string pad(std::string_view s, size_t width) {
  std::string out(s);
  out.resize(std::max(width, s.size()), ' ');
  return out;
}

}  // namespace

bool device_name_less(std::string_view x, std::string_view y) {
  size_t i = 0;
  size_t j = 0;
  while (i < x.size() && j < y.size()) {
    if (is_digit(x[i]) && is_digit(y[j])) {
      const std::string_view dx = digit_run(x, &i);
      const std::string_view dy = digit_run(y, &j);
      if (dx.size() != dy.size()) return dx.size() < dy.size();
      if (dx != dy) return dx < dy;
      continue;
    }
    if (x[i] != y[j]) return x[i] < y[j];
    ++i;
    ++j;
  }
  if (x.size() - i != y.size() - j) return x.size() - i < y.size() - j;
  return x < y;  // equal by value ("en02" and "en2"): any fixed order
}

absl::StatusOr<Wiring> Wiring::create(
    std::vector<std::vector<std::string>> devices, std::vector<Cable> cables) {
  for (auto& list : devices) {
    std::sort(list.begin(), list.end(), [](const auto& x, const auto& y) {
      return device_name_less(x, y);
    });
  }
  const auto ranks = static_cast<uint32_t>(devices.size());
  std::vector<std::vector<bool>> used(ranks);
  for (uint32_t r = 0; r < ranks; ++r) used[r].resize(devices[r].size());
  for (Cable& c : cables) {
    if (c.a.rank > c.b.rank) {
      std::swap(c.a, c.b);
      std::swap(c.a_to_b, c.b_to_a);
    }
    if (c.b.rank >= ranks) return bad_cable(c, "a rank out of range");
    if (c.a.rank == c.b.rank) return bad_cable(c, "both ends on one rank");
    if (!c.a_to_b && !c.b_to_a) return bad_cable(c, "works in no direction");
    for (const Port* p : {&c.a, &c.b}) {
      const std::vector<std::string>& list = devices[p->rank];
      auto it = std::find(list.begin(), list.end(), p->device);
      if (it == list.end()) {
        return bad_cable(
            c, absl::StrCat("rank ", p->rank, " lists no device ", p->device));
      }
      auto&& mark = used[p->rank][it - list.begin()];
      if (mark) {
        return bad_cable(c, absl::StrCat("rank ", p->rank, "'s ", p->device,
                                         " is at the end of another cable"));
      }
      mark = true;
    }
  }
  std::sort(cables.begin(), cables.end(), cable_less);
  return Wiring(std::move(devices), std::move(cables));
}

const Cable* Wiring::cable_at(const Port& port) const {
  for (const Cable& c : cables_) {
    if (c.a == port || c.b == port) return &c;
  }
  return nullptr;
}

Topology Wiring::topology() const {
  absl::StatusOr<Topology> t =
      Topology::unjoined(std::max<uint32_t>(ranks(), 1));
  WEFT_ASSERT(t.ok(), "a wiring has a valid number of ranks");
  for (const Cable& c : cables_) {
    if (!c.two_way()) continue;
    const absl::Status there = t->add_device(c.a.rank, c.b.rank, c.a.device);
    const absl::Status back = t->add_device(c.b.rank, c.a.rank, c.b.device);
    WEFT_ASSERT(there.ok() && back.ok(),
                "a checked wiring's cables make a valid topology");
  }
  return *std::move(t);
}

std::string Wiring::table() const {
  const uint32_t n = ranks();
  std::vector<std::vector<std::string>> cell(n, std::vector<std::string>(n));
  size_t one_way = 0;
  for (const Cable& c : cables_) {
    if (!c.two_way()) {
      ++one_way;
      continue;
    }
    std::string& ab = cell[c.a.rank][c.b.rank];
    std::string& ba = cell[c.b.rank][c.a.rank];
    absl::StrAppend(&ab, ab.empty() ? "" : ",", c.a.device);
    absl::StrAppend(&ba, ba.empty() ? "" : ",", c.b.device);
  }
  std::vector<size_t> width(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    width[0] = std::max(width[0], absl::StrCat("rank ", i).size());
    for (uint32_t j = 0; j < n; ++j) {
      if (i == j) cell[i][j] = std::string(1, '-');
      width[j + 1] = std::max(
          {width[j + 1], cell[i][j].size(), absl::StrCat("rank ", j).size()});
    }
  }
  std::string out = absl::StrFormat(
      "%u ranks, %u cables (%u working one way only); row i, column j: rank "
      "i's devices toward rank j\n",
      n, cables_.size(), one_way);
  std::vector<std::string> line{pad("", width[0])};
  for (uint32_t j = 0; j < n; ++j) {
    line.push_back(pad(absl::StrCat("rank ", j), width[j + 1]));
  }
  absl::StrAppend(&out,
                  absl::StripTrailingAsciiWhitespace(absl::StrJoin(line, "  ")),
                  "\n");
  for (uint32_t i = 0; i < n; ++i) {
    line = {pad(absl::StrCat("rank ", i), width[0])};
    for (uint32_t j = 0; j < n; ++j)
      line.push_back(pad(cell[i][j], width[j + 1]));
    absl::StrAppend(
        &out, absl::StripTrailingAsciiWhitespace(absl::StrJoin(line, "  ")),
        "\n");
  }
  for (const Cable& c : cables_) {
    if (c.two_way()) {
      absl::StrAppendFormat(&out, "cable: rank %u %s <-> rank %u %s\n",
                            c.a.rank, c.a.device, c.b.rank, c.b.device);
      continue;
    }
    const Port& from = c.a_to_b ? c.a : c.b;
    const Port& to = c.a_to_b ? c.b : c.a;
    absl::StrAppendFormat(
        &out,
        "cable: rank %u %s -> rank %u %s, one way only (nothing rank %u sends "
        "on it arrives; reseat or replace it)\n",
        from.rank, from.device, to.rank, to.device, to.rank);
  }
  for (uint32_t r = 0; r < n; ++r) {
    for (const std::string& d : devices_[r]) {
      if (cable_at(Port{r, d}) == nullptr) {
        absl::StrAppendFormat(&out, "unused: rank %u %s reaches no rank\n", r,
                              d);
      }
    }
  }
  return out;
}

}  // namespace weft::wiring
