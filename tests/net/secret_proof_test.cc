// SHA-256 and HMAC-SHA-256 against the published vectors (FIPS 180-2
// appendix B; RFC 4231 section 4), and the shared-secret proof's
// properties: a proof holds only for its own secret, nonces, ranks and
// prover.
#include "net/secret_proof.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "net/hmac_sha256.h"

namespace weft {
namespace {

std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

std::string hex(const net::Sha256Digest& digest) {
  return absl::BytesToHexString(
      {reinterpret_cast<const char*>(digest.data()), digest.size()});
}

TEST(Sha256, MatchesFips180Vectors) {
  // FIPS 180-2 appendix B.1 and B.2.
  EXPECT_EQ(hex(net::sha256(bytes_of("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(net::sha256(bytes_of(
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

struct HmacCase {
  const char* name;
  std::vector<uint8_t> key;
  std::string data;
  const char* expected;
};

TEST(HmacSha256, MatchesRfc4231Vectors) {
  std::vector<uint8_t> counting_key;  // 0x01..0x19
  for (uint8_t b = 1; b <= 25; ++b) counting_key.push_back(b);
  const HmacCase cases[] = {
      {"1", std::vector<uint8_t>(20, 0x0b), "Hi There",
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {"2",
       {'J', 'e', 'f', 'e'},
       "what do ya want for nothing?",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {"3", std::vector<uint8_t>(20, 0xaa), std::string(50, '\xdd'),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {"4", counting_key, std::string(50, '\xcd'),
       "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {"6", std::vector<uint8_t>(131, 0xaa),
       "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {"7", std::vector<uint8_t>(131, 0xaa),
       "This is a test using a larger than block-size key and a larger than "
       "block-size data. The key needs to be hashed before being used by the "
       "HMAC algorithm.",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  for (const HmacCase& c : cases) {
    EXPECT_EQ(hex(net::hmac_sha256(c.key, bytes_of(c.data))), c.expected)
        << "RFC 4231 test case " << c.name;
  }
}

TEST(EqualInConstantTime, ComparesEveryByteAndTheLength) {
  const std::vector<uint8_t> a = {1, 2, 3, 4};
  EXPECT_TRUE(net::equal_in_constant_time(a, std::vector<uint8_t>{1, 2, 3, 4}));
  EXPECT_FALSE(
      net::equal_in_constant_time(a, std::vector<uint8_t>{0, 2, 3, 4}));
  EXPECT_FALSE(
      net::equal_in_constant_time(a, std::vector<uint8_t>{1, 2, 3, 5}));
  EXPECT_FALSE(net::equal_in_constant_time(a, std::vector<uint8_t>{1, 2, 3}));
}

TEST(FreshNonce, DiffersEachTime) {
  absl::StatusOr<net::SecretNonce> a = net::fresh_nonce();
  absl::StatusOr<net::SecretNonce> b = net::fresh_nonce();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(*a, *b);
}

net::ProofTranscript sample_transcript() {
  net::ProofTranscript t;
  t.context = "weft test";
  t.initiator_rank = 3;
  t.responder_rank = 1;
  for (size_t i = 0; i < net::kSecretNonceBytes; ++i) {
    t.initiator_nonce[i] = static_cast<uint8_t>(i);
    t.responder_nonce[i] = static_cast<uint8_t>(100 + i);
  }
  return t;
}

TEST(SecretProof, HoldsOnlyForItsSecretTranscriptAndProver) {
  const net::ProofTranscript t = sample_transcript();
  const net::SecretProof proof =
      net::prove("correct horse", t, net::Prover::kInitiator);
  EXPECT_TRUE(
      net::proof_holds("correct horse", t, net::Prover::kInitiator, proof));
  EXPECT_FALSE(
      net::proof_holds("correct horsf", t, net::Prover::kInitiator, proof));
  // Reflected: the responder's check of the initiator's proof.
  EXPECT_FALSE(
      net::proof_holds("correct horse", t, net::Prover::kResponder, proof));
  net::ProofTranscript other_nonce = t;
  other_nonce.responder_nonce[31] ^= 1;  // a replay into a new connection
  EXPECT_FALSE(net::proof_holds("correct horse", other_nonce,
                                net::Prover::kInitiator, proof));
  net::ProofTranscript other_rank = t;
  other_rank.initiator_rank = 2;
  EXPECT_FALSE(net::proof_holds("correct horse", other_rank,
                                net::Prover::kInitiator, proof));
  net::ProofTranscript other_context = t;
  other_context.context = "weft other";
  EXPECT_FALSE(net::proof_holds("correct horse", other_context,
                                net::Prover::kInitiator, proof));
}

TEST(SecretProof, IsTheHmacOfTheDocumentedTranscript) {
  // The layout docs/tcp.md gives, built here by hand: context length and
  // text, initiator and responder rank (big-endian), both nonces, prover.
  const net::ProofTranscript t = sample_transcript();
  std::string message = absl::StrCat(std::string(1, char(9)), "weft test",
                                     std::string("\0\0\0\3\0\0\0\1", 8));
  message.append(t.initiator_nonce.begin(), t.initiator_nonce.end());
  message.append(t.responder_nonce.begin(), t.responder_nonce.end());
  message.push_back(2);
  EXPECT_EQ(net::prove("k", t, net::Prover::kResponder),
            net::hmac_sha256(bytes_of("k"), bytes_of(message)));
}

TEST(SecretMismatchText, NamesThePeerAndTheRemedyNeverTheSecret) {
  for (net::SecretMismatch m :
       {net::SecretMismatch::kPeerHasNone, net::SecretMismatch::kOnlyPeerHasOne,
        net::SecretMismatch::kWrongProof,
        net::SecretMismatch::kClosedBeforeProof}) {
    const std::string text =
        net::secret_mismatch_text(m, "rank 2 at 10.0.0.2:5");
    EXPECT_NE(text.find("rank 2 at 10.0.0.2:5"), std::string::npos) << text;
    EXPECT_NE(text.find("set the same WEFT_SECRET on every rank"),
              std::string::npos)
        << text;
  }
}

}  // namespace
}  // namespace weft
