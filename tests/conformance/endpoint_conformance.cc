// The conformance suite of Endpoint: the fabric contract's cases, written
// once and run on every fabric (fabric_under_test.h says how a fabric takes
// part). Rank 0 sends, rank 1 receives, unless a case says otherwise.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/errors.h"
#include "fabric/slab.h"
#include "fabric/wc_status.h"
#include "fabric/work_id.h"
#include "gtest/gtest.h"
#include "tests/conformance/fabric_under_test.h"

namespace weft::testing {

bool ConformancePair::connect() {
  for (int r = 0; r < 2; ++r) {
    absl::StatusOr<Destination> d = side[1 - r].endpoint->destination();
    EXPECT_TRUE(d.ok()) << d.status();
    if (!d.ok()) return false;
    const absl::Status s = side[r].endpoint->connect(*d);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return false;
  }
  return true;
}

void ConformancePair::poll_once() {
  for (ConformanceSide& s : side) {
    if (s.endpoint == nullptr) continue;
    std::vector<Completion> batch(Endpoint::kMaxPollBatch);
    absl::StatusOr<size_t> n = s.endpoint->poll(batch);
    ASSERT_TRUE(n.ok()) << n.status();
    s.completions.insert(s.completions.end(), batch.begin(),
                         batch.begin() + static_cast<std::ptrdiff_t>(*n));
  }
}

bool ConformancePair::poll_until(const std::function<bool()>& done) {
  for (int round = 0;; ++round) {
    poll_once();
    if (done()) return true;
    if (!advance(round)) return false;
  }
}

namespace {

WorkId send_id(uint32_t peer, uint32_t slot) {
  return {WorkKind::kSend, peer, slot};
}
WorkId recv_id(uint32_t peer, uint32_t slot) {
  return {WorkKind::kRecv, peer, slot};
}

// Bytes that depend on `seed` and the position.
void fill(const Frame& frame, uint32_t seed) {
  for (uint32_t i = 0; i < frame.bytes(); ++i) {
    frame.data()[i] = static_cast<std::byte>((i * 131u + seed * 7u) & 0xff);
  }
}

std::byte pattern(size_t i) {
  return static_cast<std::byte>((i * 37 + 11) & 0xff);
}

// `s` is the contract's refusal: its code and cause, and its message is
// the endpoint's place followed by `text`, word for word on every fabric.
void expect_refusal(const absl::Status& s, absl::StatusCode code,
                    ErrorCause cause, const Endpoint& ep,
                    const std::string& text) {
  EXPECT_EQ(s.code(), code) << s;
  const std::optional<ErrorPlace> place = error_place(s);
  ASSERT_TRUE(place.has_value()) << s;
  EXPECT_EQ(place->rank, ep.info().rank);
  EXPECT_EQ(place->peer, ep.info().peer);
  EXPECT_EQ(place->device, ep.info().device);
  EXPECT_EQ(place->cause, cause) << error_cause_name(place->cause);
  EXPECT_EQ(std::string(s.message()),
            absl::StrFormat("rank %u, peer %u, device %s: %s", ep.info().rank,
                            ep.info().peer, ep.info().device, text));
}

TEST_P(EndpointConformance, ASendCompletesWithItsLengthAndArrivesWithItsImmediate) {
  const Frame in = side(1).frame(0, 4096);
  const Frame out = side(0).frame(0, 4096);
  fill(out, 1);
  // A receive may be posted before connect(), as verbs allows in INIT.
  ASSERT_TRUE(endpoint(1).post_recv(recv_id(0, 7), in).ok());
  ASSERT_TRUE(pair().connect());
  ASSERT_TRUE(endpoint(0).post_send(send_id(1, 3), out, 4000, 0xabcd1234).ok());
  ASSERT_TRUE(pair().poll_until([&] {
    return side(0).count(WorkKind::kSend) == 1 &&
           side(1).count(WorkKind::kRecv) == 1;
  }));
  const Completion& sent = side(0).completions[0];
  EXPECT_EQ(sent.id, send_id(1, 3));
  EXPECT_TRUE(sent.ok()) << sent.to_string();
  EXPECT_EQ(sent.byte_len, 4000u);
  EXPECT_FALSE(sent.has_immediate);
  const Completion& got = side(1).completions[0];
  EXPECT_EQ(got.id, recv_id(0, 7));
  EXPECT_TRUE(got.ok()) << got.to_string();
  EXPECT_EQ(got.status_name, "success");
  EXPECT_EQ(got.byte_len, 4000u);
  EXPECT_TRUE(got.has_immediate);
  EXPECT_EQ(got.immediate, 0xabcd1234u);
  EXPECT_EQ(std::memcmp(in.data(), out.data(), 4000), 0);
  EXPECT_EQ(in.data()[4000], std::byte{0});  // nothing past the message
}

TEST_P(EndpointConformance, ReceivesAreConsumedInPostingOrder) {
  ASSERT_TRUE(pair().connect());
  const std::vector<uint32_t> lengths = {100, 0, 4096, 1, 4000};
  const std::vector<uint32_t> immediates = {0, 1, 0x8000'0000u, 0xffff'ffffu,
                                            77};
  constexpr uint32_t kBytes = 4096;
  const auto n = static_cast<uint32_t>(lengths.size());
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_TRUE(
        endpoint(1).post_recv(recv_id(0, i), side(1).frame(i * kBytes, kBytes))
            .ok());
  }
  for (uint32_t i = 0; i < n; ++i) {
    const Frame f = side(0).frame(i * kBytes, kBytes);
    fill(f, i + 1);
    ASSERT_TRUE(
        endpoint(0).post_send(send_id(1, i), f, lengths[i], immediates[i]).ok());
  }
  ASSERT_TRUE(pair().poll_until([&] {
    return side(1).count(WorkKind::kRecv) == n &&
           side(0).count(WorkKind::kSend) == n;
  }));
  for (uint32_t i = 0; i < n; ++i) {
    const Completion& r = side(1).completions[i];
    EXPECT_TRUE(r.ok()) << r.to_string();
    EXPECT_EQ(r.id, recv_id(0, i));
    EXPECT_EQ(r.byte_len, lengths[i]);
    EXPECT_TRUE(r.has_immediate);
    EXPECT_EQ(r.immediate, immediates[i]);
    EXPECT_EQ(std::memcmp(side(1).frame(i * kBytes, kBytes).data(),
                          side(0).frame(i * kBytes, kBytes).data(), lengths[i]),
              0)
        << "message " << i;
    const Completion& s = side(0).completions[i];
    EXPECT_EQ(s.id, send_id(1, i));
    EXPECT_EQ(s.byte_len, lengths[i]);
  }
}

TEST_P(EndpointConformance, AMessageWithoutAPostedReceiveIsDropped) {
  ASSERT_TRUE(pair().connect());
  for (uint32_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(
        endpoint(0).post_send(send_id(1, i), side(0).frame(0, 64), 64, 1 + i)
            .ok());
  }
  // UC: a send completes when it left; the sender never learns.
  ASSERT_TRUE(
      pair().poll_until([&] { return side(0).count(WorkKind::kSend) == 2; }));
  EXPECT_TRUE(side(0).completions[0].ok());
  EXPECT_TRUE(side(0).completions[1].ok());
  pair().settle();
  EXPECT_TRUE(side(1).completions.empty());
  // A receive posted afterwards gets the next message, not a dropped one.
  ASSERT_TRUE(endpoint(1).post_recv(recv_id(0, 0), side(1).frame(0, 64)).ok());
  ASSERT_TRUE(
      endpoint(0).post_send(send_id(1, 2), side(0).frame(0, 64), 64, 3).ok());
  ASSERT_TRUE(
      pair().poll_until([&] { return side(1).count(WorkKind::kRecv) == 1; }));
  EXPECT_TRUE(side(1).completions[0].ok());
  EXPECT_EQ(side(1).completions[0].immediate, 3u);
}

TEST_P(EndpointConformance, ATooLongMessageIsLocLenErrAndLaterWorkFlushes) {
  ASSERT_TRUE(pair().connect());
  ASSERT_TRUE(endpoint(1).post_recv(recv_id(0, 0), side(1).frame(0, 16)).ok());
  ASSERT_TRUE(
      endpoint(1).post_recv(recv_id(0, 1), side(1).frame(4096, 4096)).ok());
  ASSERT_TRUE(
      endpoint(0).post_send(send_id(1, 0), side(0).frame(0, 100), 100, 5).ok());
  ASSERT_TRUE(
      pair().poll_until([&] { return side(1).count(WorkKind::kRecv) == 2; }));
  const std::vector<Completion>& got = side(1).completions;
  EXPECT_EQ(got[0].id, recv_id(0, 0));
  EXPECT_EQ(got[0].status, WcStatus::kLocLenErr);
  EXPECT_EQ(got[0].status_name, "local length error");
  EXPECT_EQ(got[1].id, recv_id(0, 1));
  EXPECT_EQ(got[1].status, WcStatus::kWrFlushErr);
  // In the error state every later request flushes, sends included.
  ASSERT_TRUE(endpoint(1).post_recv(recv_id(0, 2), side(1).frame(0, 16)).ok());
  ASSERT_TRUE(
      endpoint(1).post_send(send_id(0, 9), side(1).frame(0, 16), 16, 0).ok());
  ASSERT_TRUE(pair().poll_until([&] { return got.size() == 4; }));
  EXPECT_EQ(got[2].id, recv_id(0, 2));
  EXPECT_EQ(got[2].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(got[3].id, send_id(0, 9));
  EXPECT_EQ(got[3].status, WcStatus::kWrFlushErr);
}

TEST_P(EndpointConformance, MoveToErrorFlushesPostedAndLaterWork) {
  ASSERT_TRUE(pair().connect());
  if (!offers().move_to_error) {
    EXPECT_EQ(endpoint(0).move_to_error().code(),
              absl::StatusCode::kUnimplemented);
    return;
  }
  for (uint32_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        endpoint(0).post_recv(recv_id(1, i), side(0).frame(i * 64, 64)).ok());
  }
  ASSERT_TRUE(endpoint(0).move_to_error().ok());
  ASSERT_TRUE(
      endpoint(0).post_send(send_id(1, 9), side(0).frame(0, 64), 64, 1).ok());
  const std::vector<Completion>& got = side(0).completions;
  ASSERT_TRUE(pair().poll_until([&] { return got.size() == 4; }));
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].id, recv_id(1, i));
    EXPECT_EQ(got[i].status, WcStatus::kWrFlushErr);
  }
  EXPECT_EQ(got[3].id, send_id(1, 9));
  EXPECT_EQ(got[3].status, WcStatus::kWrFlushErr);
  // Once in the error state, it stays there.
  EXPECT_TRUE(endpoint(0).move_to_error().ok());
}

TEST_P(EndpointConformance, ASendWithoutImmediateArrivesWithoutOne) {
  ASSERT_TRUE(pair().connect());
  const Frame out = side(0).frame(0, 64);
  fill(out, 9);
  if (!offers().send_without_immediate) {
    EXPECT_EQ(
        endpoint(0).post_send_without_immediate(send_id(1, 0), out, 8).code(),
        absl::StatusCode::kUnimplemented);
    return;
  }
  ASSERT_TRUE(endpoint(1).post_recv(recv_id(0, 0), side(1).frame(0, 64)).ok());
  ASSERT_TRUE(endpoint(1).post_recv(recv_id(0, 1), side(1).frame(64, 64)).ok());
  ASSERT_TRUE(endpoint(0).post_send_without_immediate(send_id(1, 0), out, 8).ok());
  ASSERT_TRUE(endpoint(0).post_send(send_id(1, 1), out, 16, 9).ok());
  const std::vector<Completion>& got = side(1).completions;
  ASSERT_TRUE(pair().poll_until([&] { return got.size() == 2; }));
  EXPECT_TRUE(got[0].ok()) << got[0].to_string();
  EXPECT_FALSE(got[0].has_immediate);
  EXPECT_EQ(got[0].byte_len, 8u);
  EXPECT_EQ(std::memcmp(side(1).frame(0, 8).data(), out.data(), 8), 0);
  // The next one, with an immediate, still has it.
  EXPECT_TRUE(got[1].has_immediate);
  EXPECT_EQ(got[1].immediate, 9u);
}

TEST_P(EndpointConformance, OutstandingWorkIsLimitedUntilPolled) {
  ASSERT_TRUE(pair().connect());
  for (uint32_t i = 0; i < Endpoint::kMaxRecvs; ++i) {
    ASSERT_TRUE(
        endpoint(1).post_recv(recv_id(0, i), side(1).frame(i * 64, 64)).ok())
        << i;
  }
  expect_refusal(endpoint(1).post_recv(recv_id(0, 99), side(1).frame(0, 64)),
                 absl::StatusCode::kResourceExhausted, ErrorCause::kResource,
                 endpoint(1),
                 "32 receives are outstanding, the most a queue pair allows "
                 "(Endpoint::kMaxRecvs); poll for completions before posting "
                 "more");
  for (uint32_t i = 0; i < Endpoint::kMaxSends; ++i) {
    ASSERT_TRUE(
        endpoint(0).post_send(send_id(1, i), side(0).frame(i * 64, 64), 64, i)
            .ok())
        << i;
  }
  // Sent or not, a send counts until its completion is polled.
  expect_refusal(
      endpoint(0).post_send(send_id(1, 99), side(0).frame(0, 64), 64, 0),
      absl::StatusCode::kResourceExhausted, ErrorCause::kResource, endpoint(0),
      "32 sends are outstanding, the most a queue pair allows "
      "(Endpoint::kMaxSends); poll for completions before posting more");
  ASSERT_TRUE(pair().poll_until([&] {
    return side(0).count(WorkKind::kSend) == Endpoint::kMaxSends &&
           side(1).count(WorkKind::kRecv) == Endpoint::kMaxRecvs;
  }));
  EXPECT_TRUE(
      endpoint(0).post_send(send_id(1, 99), side(0).frame(0, 64), 64, 0).ok());
  EXPECT_TRUE(endpoint(1).post_recv(recv_id(0, 99), side(1).frame(0, 64)).ok());
}

// Every refusal of fabric/uc_contract.h, with its code, cause and words,
// the same on every fabric; a refused post leaves no trace.
TEST_P(EndpointConformance, RefusalsSayWhatWasWrongTheSameWayOnEveryFabric) {
  Endpoint& tx = endpoint(0);
  Endpoint& rx = endpoint(1);
  const Frame out = side(0).frame(0, 64);
  const Frame in = side(1).frame(0, 64);
  expect_refusal(tx.post_send(send_id(1, 0), out, 8, 0),
                 absl::StatusCode::kFailedPrecondition, ErrorCause::kBadInput,
                 tx,
                 "a send before connect(): the queue pair is not ready to "
                 "send; connect() it first");
  ASSERT_TRUE(pair().connect());
  expect_refusal(tx.connect(*rx.destination()),
                 absl::StatusCode::kFailedPrecondition, ErrorCause::kBadInput,
                 tx,
                 "connect() on a queue pair in RTS; an endpoint connects "
                 "once, right after open()");
  const std::string kinds =
      "; post sends with send ids (WorkKind::kSend) and receives with "
      "receive ids (WorkKind::kRecv)";
  expect_refusal(rx.post_recv(send_id(0, 1), in),
                 absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, rx,
                 "work id send peer 0 slot 1 posted as a receive" + kinds);
  expect_refusal(tx.post_send(recv_id(1, 2), out, 8, 0),
                 absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, tx,
                 "work id recv peer 1 slot 2 posted as a send" + kinds);
  const std::string elsewhere =
      " does not lie in a slab of rank 1's fabric (create_slab) or in memory "
      "registered with it (register_memory); register the memory first";
  expect_refusal(rx.post_recv(recv_id(0, 0), out),  // the other rank's
                 absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, rx,
                 "the receive frame" + elsewhere);
  expect_refusal(rx.post_recv(recv_id(0, 0), Frame()),
                 absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, rx,
                 "the receive frame" + elsewhere);
  expect_refusal(rx.post_send(send_id(0, 0), out, 8, 0),
                 absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, rx,
                 "the send frame" + elsewhere);
  const Frame foreign_parts[] = {in, out};
  const uint32_t lengths[] = {8, 8};
  expect_refusal(rx.post_send_parts(send_id(0, 0), foreign_parts, lengths, 0),
                 absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, rx,
                 "send part 1" + elsewhere);
  expect_refusal(rx.post_recv_parts(recv_id(0, 0), foreign_parts),
                 absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, rx,
                 "receive part 1" + elsewhere);
  expect_refusal(tx.post_send(send_id(1, 0), out, 65, 0),
                 absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, tx,
                 "the send frame: 65 bytes from a 64-byte frame; send at most "
                 "the frame's bytes");
  const Frame two[] = {out, side(0).frame(64, 64)};
  const uint32_t too_long[] = {64, 65};
  expect_refusal(tx.post_send_parts(send_id(1, 0), two, too_long, 0),
                 absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, tx,
                 "send part 1: 65 bytes from a 64-byte frame; send at most "
                 "the frame's bytes");
  expect_refusal(
      tx.post_send_parts(send_id(1, 0), two, std::span(lengths).first(1), 0),
      absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, tx,
      "a send of 2 parts and 1 lengths; give 1 to 2 parts, each with its "
      "length");
  expect_refusal(tx.post_send_parts(send_id(1, 0), {}, {}, 0),
                 absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, tx,
                 "a send of 0 parts and 0 lengths; give 1 to 2 parts, each "
                 "with its length");
  const Frame three[] = {in, in, in};
  expect_refusal(rx.post_recv_parts(recv_id(0, 0), three),
                 absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput, rx,
                 "a receive of 3 parts; give 1 to 2 parts");
  // None of that was posted: one good send and receive make one
  // completion each.
  ASSERT_TRUE(rx.post_recv(recv_id(0, 5), in).ok());
  ASSERT_TRUE(tx.post_send(send_id(1, 5), out, 8, 42).ok());
  ASSERT_TRUE(pair().poll_until([&] {
    return side(0).completions.size() == 1 && side(1).completions.size() == 1;
  }));
  pair().settle();
  pair().poll_once();
  ASSERT_EQ(side(0).completions.size(), 1u);
  ASSERT_EQ(side(1).completions.size(), 1u);
  EXPECT_EQ(side(0).completions[0].id, send_id(1, 5));
  EXPECT_EQ(side(1).completions[0].id, recv_id(0, 5));
  EXPECT_EQ(side(1).completions[0].immediate, 42u);
}

// What a peer sent before it closed its endpoint arrives; then, where the
// fabric can tell (TCP's goodbye), peer_departed() says so, and elsewhere
// the peer is silent (UC). Either way later sends complete (and are
// dropped) and posted receives stay posted.
TEST_P(EndpointConformance, APeerThatClosedIsNoErrorAndSaysSoWhereItCan) {
  ASSERT_TRUE(pair().connect());
  ASSERT_TRUE(endpoint(0).post_recv(recv_id(1, 0), side(0).frame(0, 64)).ok());
  ASSERT_TRUE(endpoint(0).post_recv(recv_id(1, 1), side(0).frame(64, 64)).ok());
  ASSERT_TRUE(
      endpoint(1).post_send(send_id(0, 0), side(1).frame(0, 64), 64, 7).ok());
  ASSERT_TRUE(
      pair().poll_until([&] { return side(1).count(WorkKind::kSend) == 1; }));
  EXPECT_FALSE(endpoint(0).peer_departed());
  side(1).endpoint.reset();
  ASSERT_TRUE(
      pair().poll_until([&] { return side(0).count(WorkKind::kRecv) == 1; }));
  EXPECT_TRUE(side(0).completions[0].ok()) << side(0).completions[0].to_string();
  EXPECT_EQ(side(0).completions[0].immediate, 7u);
  if (offers().tells_departures) {
    EXPECT_TRUE(pair().poll_until([&] { return endpoint(0).peer_departed(); }));
  } else {
    pair().settle();
    EXPECT_FALSE(endpoint(0).peer_departed());
  }
  ASSERT_TRUE(
      endpoint(0).post_send(send_id(1, 0), side(0).frame(128, 8), 8, 1).ok());
  ASSERT_TRUE(
      pair().poll_until([&] { return side(0).count(WorkKind::kSend) == 1; }));
  EXPECT_TRUE(side(0).completions.back().ok())
      << side(0).completions.back().to_string();
  pair().settle();
  pair().poll_once();
  EXPECT_EQ(side(0).count(WorkKind::kRecv), 1u);  // the second stays posted
}

// --- scatter and gather, registered user memory ---

// Header from rank 0's slab + payload from registered user memory,
// received into a header frame of rank 1's slab + registered user memory
// there: every byte in its place, one completion with the whole length and
// the immediate.
TEST_P(EndpointConformance, PartsGoOutAndLandInOrder) {
  ASSERT_TRUE(pair().connect());
  ASSERT_GE(endpoint(0).max_parts(), 1u);
  ASSERT_LE(endpoint(0).max_parts(), Endpoint::kMaxParts);
  std::vector<std::byte> out(3000), in(4000, std::byte{0});
  for (size_t i = 0; i < out.size(); ++i) out[i] = pattern(i);
  auto out_slab = side(0).fabric->register_memory(out);
  auto in_slab = side(1).fabric->register_memory(in);
  ASSERT_TRUE(out_slab.ok()) << out_slab.status();
  ASSERT_TRUE(in_slab.ok()) << in_slab.status();
  const Frame head_out = side(0).frame(0, 64);
  for (uint32_t i = 0; i < 64; ++i) head_out.data()[i] = std::byte{0xee};
  const Frame send_parts[] = {head_out, *(*out_slab)->frame(100, 2000)};
  const uint32_t lengths[] = {64, 2000};
  const Frame recv_parts[] = {side(1).frame(0, 64), *(*in_slab)->frame(0, 4000)};
  if (endpoint(0).max_parts() < 2) {
    EXPECT_EQ(endpoint(0)
                  .post_send_parts(send_id(1, 2), send_parts, lengths, 77)
                  .code(),
              absl::StatusCode::kUnimplemented);
    return;
  }
  ASSERT_TRUE(endpoint(1).post_recv_parts(recv_id(0, 1), recv_parts).ok());
  ASSERT_TRUE(
      endpoint(0).post_send_parts(send_id(1, 2), send_parts, lengths, 77).ok());
  ASSERT_TRUE(pair().poll_until([&] {
    return side(0).completions.size() == 1 && side(1).completions.size() == 1;
  }));
  EXPECT_TRUE(side(0).completions[0].ok());
  EXPECT_EQ(side(0).completions[0].byte_len, 2064u);
  const Completion& got = side(1).completions[0];
  ASSERT_TRUE(got.ok()) << got.to_string();
  EXPECT_EQ(got.byte_len, 2064u);
  EXPECT_EQ(got.immediate, 77u);
  EXPECT_EQ(side(1).slab->data()[63], std::byte{0xee});
  for (size_t i = 0; i < 2000; ++i) {
    ASSERT_EQ(in[i], pattern(100 + i)) << "payload byte " << i;
  }
  EXPECT_EQ(in[2000], std::byte{0});  // nothing past the message
  EXPECT_TRUE(side(0).fabric->release_memory(*out_slab).ok());
  EXPECT_TRUE(side(1).fabric->release_memory(*in_slab).ok());
}

// A message of one frame scattered over two receive frames, split where
// the first part ends.
TEST_P(EndpointConformance, OneMessageScattersIntoTwoFrames) {
  ASSERT_TRUE(pair().connect());
  if (endpoint(1).max_parts() < 2) GTEST_SKIP() << "receives one part";
  const Frame out = side(0).frame(4096, 300);
  for (uint32_t i = 0; i < 300; ++i) out.data()[i] = pattern(i);
  const Frame parts[] = {side(1).frame(8192, 100), side(1).frame(16384, 400)};
  ASSERT_TRUE(endpoint(1).post_recv_parts(recv_id(0, 3), parts).ok());
  ASSERT_TRUE(endpoint(0).post_send(send_id(1, 3), out, 300, 5).ok());
  ASSERT_TRUE(
      pair().poll_until([&] { return side(1).completions.size() == 1; }));
  const Completion& got = side(1).completions[0];
  ASSERT_TRUE(got.ok()) << got.to_string();
  EXPECT_EQ(got.byte_len, 300u);
  for (uint32_t i = 0; i < 100; ++i) ASSERT_EQ(parts[0].data()[i], pattern(i));
  for (uint32_t i = 0; i < 200; ++i) {
    ASSERT_EQ(parts[1].data()[i], pattern(100 + i));
  }
}

// One byte more than all parts hold: LOC_LEN_ERR.
TEST_P(EndpointConformance, AMessageLongerThanAllPartsIsLocLenErr) {
  ASSERT_TRUE(pair().connect());
  if (endpoint(1).max_parts() < 2) GTEST_SKIP() << "receives one part";
  const Frame parts[] = {side(1).frame(0, 64), side(1).frame(1024, 64)};
  ASSERT_TRUE(endpoint(1).post_recv_parts(recv_id(0, 4), parts).ok());
  ASSERT_TRUE(
      endpoint(0).post_send(send_id(1, 4), side(0).frame(0, 129), 129, 0).ok());
  ASSERT_TRUE(
      pair().poll_until([&] { return side(1).completions.size() == 1; }));
  EXPECT_EQ(side(1).completions[0].status, WcStatus::kLocLenErr);
}

// Registration rules: no release with a receive outstanding on it (then
// yes), no overlap, no empty memory, no release of what is not registered,
// and a borrowed slab nobody registered is no memory of the fabric.
TEST_P(EndpointConformance, RegisteredMemoryRules) {
  ASSERT_TRUE(pair().connect());
  Fabric& fabric = *side(1).fabric;
  std::vector<std::byte> buf(8192);
  auto slab = fabric.register_memory(buf);
  ASSERT_TRUE(slab.ok()) << slab.status();
  EXPECT_EQ(
      fabric.register_memory(std::span<std::byte>(buf).subspan(100, 10))
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fabric.register_memory({}).status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(
      endpoint(1).post_recv(recv_id(0, 5), *(*slab)->frame(0, 512)).ok());
  const absl::Status busy = fabric.release_memory(*slab);
  EXPECT_EQ(busy.code(), absl::StatusCode::kFailedPrecondition) << busy;
  fabric.hold_memory(*slab);
  ASSERT_TRUE(
      endpoint(0).post_send(send_id(1, 5), side(0).frame(0, 16), 16, 0).ok());
  ASSERT_TRUE(
      pair().poll_until([&] { return side(1).completions.size() == 1; }));
  // Received, but still held.
  EXPECT_EQ(fabric.release_memory(*slab).code(),
            absl::StatusCode::kFailedPrecondition);
  fabric.unhold_memory(*slab);
  EXPECT_TRUE(fabric.release_memory(*slab).ok());
  EXPECT_EQ(fabric.release_memory(*slab).code(),
            absl::StatusCode::kInvalidArgument);
  std::unique_ptr<Slab> stranger = Slab::borrow(buf.data(), buf.size());
  EXPECT_EQ(
      endpoint(1).post_recv(recv_id(0, 6), *stranger->frame(0, 64)).code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace weft::testing
