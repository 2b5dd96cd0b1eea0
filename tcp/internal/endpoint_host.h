// EndpointHost: everything a TcpEndpoint asks of the TcpFabric that opened
// it, and all it may: the fabric implements it privately and hands it to
// each endpoint at construction, so an endpoint never reaches into the
// fabric's own state (its poller, counters, slabs or pending connections).
#ifndef WEFT_TCP_INTERNAL_ENDPOINT_HOST_H_
#define WEFT_TCP_INTERNAL_ENDPOINT_HOST_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "fabric/slab.h"
#include "net/socket.h"

namespace weft::tcp::internal {

class TcpEndpoint;

class EndpointHost {
 public:
  // Whether `frame` lies in a slab of the fabric or in memory registered
  // with it (what the UC contract asks before a post: fabric/uc_contract.h).
  virtual bool owns(const Frame& frame) const = 0;
  // Accepts waiting connections and hands each to the endpoint its hello
  // names: an endpoint waiting for its peer's connection asks when polled.
  virtual void accept_connections() = 0;
  // The socket `fd` is about to close: the fabric stops waiting on it.
  virtual void stop_watching(int fd) = 0;
  // Takes the socket of an endpoint that closes on purpose: writes `out`
  // (the rest of a message, the goodbye), then ends the connection
  // without a reset (closing.h).
  virtual void close_gently(net::Socket socket, std::vector<uint8_t> out) = 0;
  // `endpoint` is being destroyed.
  virtual void closed(const TcpEndpoint& endpoint) = 0;
  // What the fabric counts and reports over all its endpoints: a SEND
  // whose last byte left, a message read and dropped for want of a
  // receive, and why an endpoint entered the error state.
  virtual void message_sent() = 0;
  virtual void message_dropped() = 0;
  virtual void endpoint_failed(const absl::Status& why) = 0;

 protected:
  ~EndpointHost() = default;
};

}  // namespace weft::tcp::internal

#endif  // WEFT_TCP_INTERNAL_ENDPOINT_HOST_H_
