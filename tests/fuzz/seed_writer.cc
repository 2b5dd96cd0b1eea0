// weft-fuzz-seeds <corpus dir>: writes the binary seeds of the wire and
// frame_header fuzz targets by encoding real values with weft's own
// encoders, so the seeds stay valid when a format changes: rerun it then
// (`cmake --build --preset fuzz --target weft-fuzz-seeds`, then
// `build/fuzz/bin/weft-fuzz-seeds tests/fuzz/corpus`).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "collectives/dtype.h"
#include "collectives/engine/frame_header.h"
#include "collectives/group_options.h"
#include "collectives/internal/op_kind.h"
#include "rendezvous/internal/wire.h"

namespace weft {
namespace {

bool write(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out)
    std::fprintf(stderr, "weft-fuzz-seeds: cannot write %s\n", path.c_str());
  return static_cast<bool>(out);
}

bool write_wire(const std::string& dir) {
  // A destination-sized blob, as the exchange carries.
  const std::vector<uint8_t> blob = {0, 1, 0,    0,    0,    9,    0, 0, 0,
                                     7, 0, 0,    0,    0,    0,    0, 0, 0,
                                     0, 0, 0xff, 0xff, 0xa9, 0xfe, 0, 1};
  const std::vector<std::vector<uint8_t>> blobs = {blob, {}, {1, 2, 3}};
  bool ok = write(dir + "/hello.bin",
                  rendezvous::internal::encode_hello({.rank = 1, .size = 4}));
  ok &= write(dir + "/welcome.bin", rendezvous::internal::encode_welcome());
  ok &= write(dir + "/contribute.bin",
              rendezvous::internal::encode_contribution(3, blob));
  ok &= write(dir + "/gathered.bin",
              *rendezvous::internal::encode_gathered(3, blobs));
  net::SecretNonce nonce;
  net::SecretProof proof;
  for (uint8_t i = 0; i < 32; ++i) {
    nonce[i] = i;
    proof[i] = static_cast<uint8_t>(100 + i);
  }
  ok &= write(dir + "/secret_hello.bin",
              rendezvous::internal::encode_secret_hello(
                  {.rank = 1, .size = 4, .nonce = nonce}));
  ok &= write(dir + "/challenge.bin", rendezvous::internal::encode_challenge(
                                          {.nonce = nonce, .proof = proof}));
  ok &= write(dir + "/proof.bin", rendezvous::internal::encode_proof(proof));
  ok &= write(dir + "/abort.bin",
              rendezvous::internal::encode_abort(
                  {.code = absl::StatusCode::kDeadlineExceeded,
                   .culprit = 2,
                   .reason = "rank 2 did not answer within 30 s"}));
  return ok;
}

// The header followed by `payload_bytes` bytes of payload.
std::vector<uint8_t> frame(const collectives::internal::FrameHeader& h) {
  std::vector<uint8_t> bytes(
      collectives::internal::kHeaderBytes + h.payload_bytes, 0x5a);
  std::span<std::byte> out(reinterpret_cast<std::byte*>(bytes.data()),
                           bytes.size());
  h.encode(out.first<collectives::internal::kHeaderBytes>());
  return bytes;
}

bool write_frame_header(const std::string& dir) {
  using collectives::internal::FrameHeader;
  using collectives::internal::FrameType;
  FrameHeader data;
  data.type = FrameType::kData;
  data.op = {
      .kind = static_cast<uint8_t>(collectives::internal::OpKind::kAllReduce),
      .dtype = static_cast<uint8_t>(DType::kFloat32),
      .reduce_op = static_cast<uint8_t>(ReduceOp::kSum),
      .algorithm = static_cast<uint8_t>(Algorithm::kRing),
      .group_id = 0x1234abcd,
      .op_seq = 7,
      .root = 0,
      .total_bytes = 4096,
      .chunk_bytes = 1024};
  data.item = 1;
  data.frame = 2;
  data.payload_bytes = 16;
  data.seq = 4;
  data.received = 5;
  data.consumed = 3;
  FrameHeader credit = data;
  credit.type = FrameType::kAck;
  credit.suspect = 1;
  credit.heard = 9;
  credit.flags = collectives::internal::kFlagReportNow;
  credit.payload_bytes = 0;
  FrameHeader abort = credit;
  abort.type = FrameType::kAbort;
  abort.flags = 0;
  abort.cause = 2;
  abort.origin = 3;
  abort.blamed = 1;
  abort.payload_bytes = 12;
  // A data frame on its way to a relay, for rank 3 (lane.h, "Relaying").
  FrameHeader relayed = data;
  relayed.flags = collectives::internal::kFlagRelayTo;
  relayed.relay_rank = 3;
  bool ok = write(dir + "/data.bin", frame(data));
  ok &= write(dir + "/relayed.bin", frame(relayed));
  ok &= write(dir + "/credit.bin", frame(credit));
  ok &= write(dir + "/abort.bin", frame(abort));
  return ok;
}

}  // namespace
}  // namespace weft

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: weft-fuzz-seeds <corpus dir>\n");
    return 2;
  }
  const std::string dir = argv[1];
  const bool ok = weft::write_wire(dir + "/wire") &&
                  weft::write_frame_header(dir + "/frame_header");
  return ok ? 0 : 1;
}
