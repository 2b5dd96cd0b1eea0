// The rule Perfetto's JSON importer holds a trace to: on one track
// (pid, tid), complete slices (ph "X") and begin/end pairs (ph "B"/"E")
// must nest; a slice that starts inside an open one and ends after it is
// put on an overflow track with an import error (older versions drop it).
// nesting_violations() lists every such slice of a Chrome trace JSON
// document, for tests of every trace weft writes.
#ifndef WEFT_TESTS_SUPPORT_TRACE_NESTING_H_
#define WEFT_TESTS_SUPPORT_TRACE_NESTING_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"

namespace weft::testing {

// "pid P tid T: "<name>" [a, b] overlaps "<name>" [c, d] without nesting",
// one per slice that breaks the rule, in nanoseconds: the importer turns
// each ts and dur (microseconds) into whole nanoseconds, so a slice ending
// where the next begins touches it rather than overlapping.
inline std::vector<std::string> nesting_violations(const nlohmann::json& doc) {
  struct Slice {
    int64_t begin = 0;
    int64_t end = 0;
    std::string name;
  };
  const auto ns = [](double us) { return std::llround(us * 1000.0); };
  using Track = std::pair<int64_t, int64_t>;
  std::map<Track, std::vector<Slice>> tracks;
  std::map<Track, std::vector<Slice>> open_b;  // B events awaiting their E
  for (const nlohmann::json& e : doc.value("traceEvents", nlohmann::json())) {
    const std::string ph = e.value("ph", "");
    const Track t{e.value("pid", int64_t{0}), e.value("tid", int64_t{0})};
    const int64_t ts = ns(e.value("ts", 0.0));
    if (ph == "X") {
      tracks[t].push_back(
          {ts, ts + ns(e.value("dur", 0.0)), e.value("name", "")});
    } else if (ph == "B") {
      open_b[t].push_back({ts, ts, e.value("name", "")});
    } else if (ph == "E" && !open_b[t].empty()) {
      Slice s = open_b[t].back();
      open_b[t].pop_back();
      s.end = ts;
      tracks[t].push_back(std::move(s));
    }
  }
  std::vector<std::string> out;
  for (auto& [track, slices] : tracks) {
    // Outer slices first where two begin together.
    std::stable_sort(slices.begin(), slices.end(),
                     [](const Slice& a, const Slice& b) {
                       return std::tie(a.begin, b.end) <
                              std::tie(b.begin, a.end);
                     });
    std::vector<const Slice*> stack;
    for (const Slice& s : slices) {
      while (!stack.empty() && stack.back()->end <= s.begin) stack.pop_back();
      if (!stack.empty() && s.end > stack.back()->end) {
        const Slice& o = *stack.back();
        out.push_back("pid " + std::to_string(track.first) + " tid " +
                      std::to_string(track.second) + ": \"" + s.name + "\" [" +
                      std::to_string(s.begin) + ", " + std::to_string(s.end) +
                      "] overlaps \"" + o.name + "\" [" +
                      std::to_string(o.begin) + ", " + std::to_string(o.end) +
                      "] without nesting");
        continue;
      }
      stack.push_back(&s);
    }
  }
  return out;
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_SUPPORT_TRACE_NESTING_H_
