// One line of `weft-devices doctor`: what was checked, what was found, and
// the command or setting that fixes it.
#ifndef WEFT_TOOLS_WEFT_DEVICES_FINDING_H_
#define WEFT_TOOLS_WEFT_DEVICES_FINDING_H_

#include <string>
#include <string_view>

namespace weft::tools::weft_devices {

// kOk: checked and fine. kNote: not checked here, or nothing to decide
// (the line says what to run and what to look for). kWarning: worth fixing,
// but a first run can go ahead (a spare port without a cable). kBlocking: a
// first run fails until it is fixed; the doctor exits 1.
enum class Severity { kOk, kNote, kWarning, kBlocking };

struct Finding {
  Severity severity = Severity::kNote;
  std::string subject;  // "rdma_en2", "macOS", "RDMA", "bridge0", ...
  std::string text;     // what was found
  std::string fix;      // what to run or change; "" when nothing is to do
};

// "ok", "note", "warn", "BLOCKS": the text form's first column and the
// JSON's "severity".
std::string_view severity_name(Severity severity);

}  // namespace weft::tools::weft_devices

#endif  // WEFT_TOOLS_WEFT_DEVICES_FINDING_H_
