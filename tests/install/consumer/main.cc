// Uses installed weft headers and libraries: parses a device JSON, checks a
// sequence, and instantiates the installed gMock fabric mocks.
#include <cstdio>

#include "fabric/sequence.h"
#include "fabric/testing/mock_fabric.h"
#include "fabric/topology.h"

int main() {
  auto topo = weft::Topology::parse_json(R"([[null, "a"], ["b", null]])");
  if (!topo.ok() || topo->ranks() != 2 || topo->devices(1, 0)[0] != "b") {
    std::puts("consumer: topology parse failed");
    return 1;
  }
  weft::ReceiveChecker checker;
  if (checker.check(0).kind != weft::SequenceClass::kExpected ||
      checker.check(2).kind != weft::SequenceClass::kGap) {
    std::puts("consumer: sequence check failed");
    return 1;
  }
  weft::testing::MockEndpoint endpoint;  // the mocks are installed too
  (void)endpoint;
  std::puts("consumer: ok");
  return 0;
}
