// Uses the installed collectives without GoogleTest: a group of two needs a
// coordinator address, and Config::validate says so.
#include <cstdio>

#include "absl/status/status.h"
#include "collectives/config.h"  // the forwarding header
#include "fabric/topology.h"

int main() {
  weft::Config config;
  config.size = 2;
  config.devices = *weft::Topology::mesh(2);
  const absl::Status status = config.validate();
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    std::puts("without_gtest: a group of two without a coordinator passed");
    return 1;
  }
  std::puts("without_gtest: ok");
  return 0;
}
