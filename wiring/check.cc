#include "wiring/check.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "fabric/assert.h"
#include "fabric/topology_check.h"

namespace weft::wiring {
namespace {

bool listed(const Topology& t, const Port& p) {
  for (uint32_t j = 0; j < t.ranks(); ++j) {
    const std::vector<std::string>& d = t.devices(p.rank, j);
    if (std::find(d.begin(), d.end(), p.device) != d.end()) return true;
  }
  return false;
}

const Port& far_end(const Cable& c, const Port& near) {
  return c.a == near ? c.b : c.a;
}

class Checker {
 public:
  Checker(const Topology& declared, const Wiring& wiring,
          std::string_view source)
      : file_(declared), wiring_(wiring), source_(source) {}

  std::vector<Finding> run() {
    shape();
    for (uint32_t i = 0; i < file_.ranks(); ++i) {
      for (uint32_t j = 0; j < file_.ranks(); ++j) {
        const std::vector<std::string>& there = file_.devices(i, j);
        for (size_t c = 0; c < there.size(); ++c) entry(i, j, c);
      }
    }
    undeclared();
    return std::move(out_);
  }

 private:
  void add(Problem problem, uint32_t rank, uint32_t peer, std::string device,
           std::string text) {
    out_.push_back({problem, rank, peer, std::move(device), std::move(text)});
  }

  void shape() {
    TopologyWording wording;
    wording.source = source_;
    const TopologyReport r =
        find_topology_problems(file_, TopologyNeeds::kLinks, wording);
    for (const TopologyFinding& f : r.findings) {
      add(Problem::kShape, f.rank, f.peer, "", f.text);
    }
  }

  bool has_device(const Port& p) const {
    const std::vector<std::string>& d = wiring_.devices(p.rank);
    return std::find(d.begin(), d.end(), p.device) != d.end();
  }

  // Entry c of cell [i][j]: rank i's device toward rank j, paired with
  // entry c of cell [j][i] when the file has one.
  void entry(uint32_t i, uint32_t j, size_t c) {
    const Port near{i, file_.devices(i, j)[c]};
    const std::vector<std::string>& back = file_.devices(j, i);
    const bool paired = c < back.size();
    const Port partner{j, paired ? back[c] : ""};
    if (!has_device(near)) {
      add(Problem::kNoSuchDevice, i, j, near.device,
          absl::StrFormat("%s: rank %u has no device %s (cell [%u][%u]); its "
                          "devices: %s",
                          source_, i, near.device, i, j,
                          absl::StrJoin(wiring_.devices(i), ", ")));
      return;
    }
    const Cable* cable = wiring_.cable_at(near);
    if (cable == nullptr) {
      // One line per declared cable whose two ends are both silent.
      const bool partner_silent =
          paired && has_device(partner) && wiring_.cable_at(partner) == nullptr;
      if (partner_silent && i > j) return;
      add(Problem::kNoCable, i, j, near.device,
          absl::StrFormat(
              "%s: rank %u -> rank %u is declared but no cable answers (cell "
              "[%u][%u] names rank %u's %s%s); check that cable, or remove the "
              "entry",
              source_, i, j, i, j, i, near.device,
              partner_silent ? absl::StrFormat(", cell [%u][%u] rank %u's %s",
                                               j, i, j, partner.device)
                             : ""));
      return;
    }
    const Port& far = far_end(*cable, near);
    if (far.rank != j) {
      add(Problem::kCrossed, i, j, near.device,
          absl::StrFormat("%s: rank %u's %s reaches rank %u, not rank %u as "
                          "%s says (cell [%u][%u]; its other end is rank "
                          "%u's %s)",
                          source_, i, near.device, far.rank, j, source_, i, j,
                          far.rank, far.device));
      return;
    }
    if (paired && far.device != partner.device) {
      // The partner's own line explains it when the partner's cable
      // reaches another rank; two ends that each reach the other's rank at
      // another place get one line.
      const Cable* theirs =
          has_device(partner) ? wiring_.cable_at(partner) : nullptr;
      const Port* theirs_far =
          theirs == nullptr ? nullptr : &far_end(*theirs, partner);
      if (theirs_far != nullptr && theirs_far->rank != i) return;
      if (theirs_far != nullptr && i > j) return;
      add(Problem::kWrongEnd, i, j, near.device,
          absl::StrFormat("%s: rank %u's %s reaches rank %u's %s, but %s "
                          "pairs it with rank %u's %s (entry %u of cells "
                          "[%u][%u] and [%u][%u]); list the two ends of a "
                          "cable at the same place in both cells",
                          source_, i, near.device, j, far.device, source_, j,
                          partner.device, c, i, j, j, i));
      return;
    }
    if (!cable->two_way() && i < j) {
      const Port& from = cable->a_to_b ? cable->a : cable->b;
      const Port& to = cable->a_to_b ? cable->b : cable->a;
      add(Problem::kOneWay, i, j, near.device,
          absl::StrFormat(
              "%s: rank %u's %s and rank %u's %s are cabled but frames cross "
              "from rank %u to rank %u only (cells [%u][%u] and [%u][%u]); "
              "reseat or replace that cable",
              source_, i, near.device, j, far.device, from.rank, to.rank, i, j,
              j, i));
    }
  }

  void undeclared() {
    for (const Cable& c : wiring_.cables()) {
      if (listed(file_, c.a) || listed(file_, c.b)) continue;
      add(Problem::kUndeclared, c.a.rank, c.b.rank, c.a.device,
          absl::StrFormat("%s: rank %u's %s reaches rank %u's %s%s, which %s "
                          "does not list; add them to cells [%u][%u] and "
                          "[%u][%u] to use that cable",
                          source_, c.a.rank, c.a.device, c.b.rank, c.b.device,
                          c.two_way() ? "" : " (one way only)", source_,
                          c.a.rank, c.b.rank, c.b.rank, c.a.rank));
    }
  }

  const Topology& file_;
  const Wiring& wiring_;
  std::string_view source_;
  std::vector<Finding> out_;
};

}  // namespace

CheckReport check_wiring(const Topology& declared, const Wiring& wiring,
                         std::string_view source) {
  WEFT_ASSERT(declared.ranks() == wiring.ranks(),
              "a file is checked against a wiring of as many ranks");
  return CheckReport{Checker(declared, wiring, source).run(),
                     wiring.topology()};
}

absl::Status report_status(const CheckReport& report, std::string_view source) {
  if (report.ok()) return absl::OkStatus();
  std::string text = report.findings.front().text;
  if (report.findings.size() > 1) {
    absl::StrAppendFormat(&text, " (and %u more)", report.findings.size() - 1);
  }
  absl::StrAppendFormat(&text,
                        "; run weft-devices check --devices=%s for every "
                        "finding and the corrected file, or set the device "
                        "variable to auto",
                        source);
  return absl::FailedPreconditionError(text);
}

}  // namespace weft::wiring
