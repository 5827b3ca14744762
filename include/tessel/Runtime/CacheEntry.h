//===- CacheEntry.h - A compiled kernel as cache files ----------*- C++ -*-===//
//
// The format both kernel caches (the local directory and the remote one)
// share: named files (the binary, each stage's text) plus a metadata JSON that
// records each file's size and SHA-256, so that a damaged entry is detected
// wherever it was stored.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_CACHEENTRY_H
#define TESSEL_RUNTIME_CACHEENTRY_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessel::runtime {

/// A rule on a runtime argument that the compiler could not decide and the
/// launcher checks before each launch: scale * value + offset (wrapping
/// 64-bit arithmetic on the argument's bits, an address or an integer) is a
/// multiple of `multiple` (a power of two). `message` names the rule and the
/// kernel line that made it.
struct LaunchCheck {
  unsigned argument = 0;
  uint64_t scale = 1, offset = 0, multiple = 16;
  std::string message;

  bool holds(uint64_t value) const {
    return ((scale * value + offset) & (multiple - 1)) == 0;
  }
};

struct CacheEntry {
  std::string name;      ///< the kernel's name
  std::string entryName; ///< the symbol launches call
  std::string target;    ///< the target it was compiled for ("cpu", ...)
  std::string options;   ///< its compile options, canonically
  std::vector<std::string> signature;
  /// The runtime arguments (indices into `signature`) the kernel may store
  /// through: the launcher refuses read-only arrays for them.
  std::vector<unsigned> writes;
  /// What the launcher checks on the runtime arguments.
  std::vector<LaunchCheck> checks;
  /// Every stage's text, in pipeline order.
  std::vector<std::pair<std::string, std::string>> stages;
  std::string object; ///< the binary
};

/// The files of an entry: (file name, contents).
std::vector<std::pair<std::string, llvm::StringRef>>
entryFiles(const CacheEntry &entry);

/// The metadata JSON of `entry` under `key`, with each file's checksum.
std::string entryMetadata(llvm::StringRef key, const CacheEntry &entry);

/// Rebuilds the entry stored under `key` from its metadata and a way to read
/// its files; nullopt if anything is missing, truncated or altered.
std::optional<CacheEntry> entryFromFiles(
    llvm::StringRef key, llvm::StringRef metadata,
    llvm::function_ref<std::optional<std::string>(llvm::StringRef)> readFile);

/// One blob holding metadata and files (for stores of key -> bytes).
std::string packEntry(llvm::StringRef key, const CacheEntry &entry);
std::optional<CacheEntry> unpackEntry(llvm::StringRef key, llvm::StringRef blob);

} // namespace tessel::runtime

#endif // TESSEL_RUNTIME_CACHEENTRY_H
