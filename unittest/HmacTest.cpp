//===- HmacTest.cpp - HMAC-SHA256 against the RFC 4231 test vectors -------===//
#include "tessel/Runtime/Hmac.h"

#include "llvm/ADT/StringExtras.h"

#include <gtest/gtest.h>

using namespace tessel::runtime;

namespace {

std::string hex(const HmacSha256::Mac &mac) {
  return llvm::toHex(mac, /*LowerCase=*/true);
}

std::string bytes(size_t n, char c) { return std::string(n, c); }

struct Vector {
  std::string key, message, mac;
};

// RFC 4231, section 4 (test case 5, a truncated MAC, is left out).
std::vector<Vector> rfc4231() {
  std::string key4;
  for (char c = 1; c <= 25; ++c)
    key4 += c;
  return {
      {bytes(20, '\x0b'), "Hi There",
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {"Jefe", "what do ya want for nothing?",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {bytes(20, '\xaa'), bytes(50, '\xdd'),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {key4, bytes(50, '\xcd'),
       "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {bytes(131, '\xaa'),
       "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {bytes(131, '\xaa'),
       "This is a test using a larger than block-size key and a larger than "
       "block-size data. The key needs to be hashed before being used by the "
       "HMAC algorithm.",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
}

TEST(Hmac, Rfc4231Vectors) {
  for (const Vector &v : rfc4231())
    EXPECT_EQ(hex(HmacSha256::mac(v.key, v.message)), v.mac) << v.message;
}

TEST(Hmac, PiecewiseUpdatesMatchOneMessage) {
  for (const Vector &v : rfc4231()) {
    HmacSha256 hmac(v.key);
    llvm::StringRef rest = v.message;
    for (size_t piece = 1; !rest.empty(); ++piece) {
      hmac.update(rest.take_front(piece));
      rest = rest.drop_front(piece);
    }
    EXPECT_EQ(hex(hmac.final()), v.mac) << v.message;
  }
}

TEST(Hmac, KeyAndMessageBothCount) {
  EXPECT_NE(HmacSha256::mac("key", "message"), HmacSha256::mac("kez", "message"));
  EXPECT_NE(HmacSha256::mac("key", "message"), HmacSha256::mac("key", "messagf"));
  // Keys shorter than a block are zero-padded (RFC 2104): trailing zero bytes
  // do not change the MAC.
  EXPECT_EQ(HmacSha256::mac("key", "m"),
            HmacSha256::mac(llvm::StringRef("key\0", 4), "m"));
}

TEST(Hmac, ConstantTimeEqual) {
  HmacSha256::Mac a = HmacSha256::mac("k", "a"), b = a;
  EXPECT_TRUE(constantTimeEqual(a, b));
  for (size_t i = 0; i < a.size(); ++i) {
    b = a;
    b[i] ^= 0x01;
    EXPECT_FALSE(constantTimeEqual(a, b)) << i;
  }
  EXPECT_FALSE(constantTimeEqual(a, llvm::ArrayRef<uint8_t>(a).drop_back()));
  EXPECT_TRUE(constantTimeEqual({}, {}));
}

} // namespace
