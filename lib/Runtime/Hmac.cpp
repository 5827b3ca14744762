//===- Hmac.cpp - HMAC-SHA256 message authentication ----------------------===//
#include "tessel/Runtime/Hmac.h"

using namespace tessel::runtime;

// HMAC(K, m) = H((K' ^ opad) || H((K' ^ ipad) || m)), where K' is the key
// zero-padded to the block size (hashed first if longer than a block).
HmacSha256::HmacSha256(llvm::ArrayRef<uint8_t> key) {
  std::array<uint8_t, kBlockSize> block{};
  if (key.size() > kBlockSize) {
    std::array<uint8_t, 32> digest = llvm::SHA256::hash(key);
    std::copy(digest.begin(), digest.end(), block.begin());
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::array<uint8_t, kBlockSize> innerPad;
  for (size_t i = 0; i < kBlockSize; ++i) {
    innerPad[i] = block[i] ^ 0x36;
    outerPad[i] = block[i] ^ 0x5c;
  }
  inner.update(innerPad);
}

HmacSha256::Mac HmacSha256::final() {
  std::array<uint8_t, 32> innerDigest = inner.final();
  llvm::SHA256 outer;
  outer.update(outerPad);
  outer.update(innerDigest);
  return outer.final();
}

HmacSha256::Mac HmacSha256::mac(llvm::StringRef key, llvm::StringRef message) {
  HmacSha256 hmac(key);
  hmac.update(message);
  return hmac.final();
}

bool tessel::runtime::constantTimeEqual(llvm::ArrayRef<uint8_t> a,
                                        llvm::ArrayRef<uint8_t> b) {
  if (a.size() != b.size())
    return false;
  // Every byte is looked at whatever the first difference; volatile keeps the
  // compiler from turning the loop into an early exit.
  volatile uint8_t difference = 0;
  for (size_t i = 0; i < a.size(); ++i)
    difference = difference | (a[i] ^ b[i]);
  return difference == 0;
}
