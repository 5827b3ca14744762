//===- Hmac.h - HMAC-SHA256 message authentication ---------------*- C++ -*-===//
//
// HMAC-SHA256 (RFC 2104 over SHA-256) authenticates what the shared kernel
// cache stores: only holders of the secret key can produce a MAC that a
// reader accepts. MACs are compared in constant time.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_HMAC_H
#define TESSEL_RUNTIME_HMAC_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

#include <array>
#include <cstdint>

namespace tessel::runtime {

class HmacSha256 {
public:
  static constexpr size_t kSize = 32;
  using Mac = std::array<uint8_t, kSize>;

  explicit HmacSha256(llvm::ArrayRef<uint8_t> key);
  explicit HmacSha256(llvm::StringRef key)
      : HmacSha256(llvm::arrayRefFromStringRef(key)) {}

  void update(llvm::ArrayRef<uint8_t> data) { inner.update(data); }
  void update(llvm::StringRef data) { inner.update(data); }
  /// The MAC of everything passed to update(); call once.
  Mac final();

  static Mac mac(llvm::StringRef key, llvm::StringRef message);

private:
  static constexpr size_t kBlockSize = 64;
  std::array<uint8_t, kBlockSize> outerPad;
  llvm::SHA256 inner;
};

/// Whether `a` and `b` are equal, in a time that depends only on their sizes.
bool constantTimeEqual(llvm::ArrayRef<uint8_t> a, llvm::ArrayRef<uint8_t> b);

} // namespace tessel::runtime

#endif // TESSEL_RUNTIME_HMAC_H
