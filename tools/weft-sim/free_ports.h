// Free TCP ports for the ranks `weft-sim launch` starts: ports nothing on
// this machine is bound to now, found by binding port 0 (the kernel's
// choice) and releasing. Another program may take one before the rank
// binds it; the rank then reports the address it could not bind.
#ifndef WEFT_TOOLS_WEFT_SIM_FREE_PORTS_H_
#define WEFT_TOOLS_WEFT_SIM_FREE_PORTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace weft::tools::weft_sim {

// `count` distinct free ports on `host` (a numeric IPv4 or IPv6 address of
// this machine). InvalidArgument for text that is not such an address,
// FailedPrecondition when it cannot be bound (not this machine's).
absl::StatusOr<std::vector<uint16_t>> free_ports(std::string_view host,
                                                 size_t count);

// "127.0.0.1:5000", "[::1]:5000": the form hostfiles and weft's TCP
// options take.
std::string address_text(std::string_view host, uint16_t port);

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_FREE_PORTS_H_
