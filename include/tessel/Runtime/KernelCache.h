//===- KernelCache.h - The on-disk cache of compiled kernels ----*- C++ -*-===//
//
// One directory per key under the cache directory, holding the kernel's
// binary, every stage's text and a metadata JSON with a checksum per file.
// Entries are written to a temporary directory and renamed into place, so
// processes racing on one key leave one good entry; a truncated or altered
// entry (or one without its metadata) fails its checksums, is removed and is
// rebuilt by the caller. Entries are removed by renaming them away first, so
// a process that dies while removing one leaves only a temporary directory.
// Every failure, a full disk included, is an llvm::Error. A cache holds code:
// directories that other users can write to are refused.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_KERNELCACHE_H
#define TESSEL_RUNTIME_KERNELCACHE_H

#include "tessel/Runtime/CacheEntry.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessel::runtime {

struct CacheEntryInfo {
  std::string key, name;
  uint64_t bytes = 0;
  int64_t lastUse = 0; ///< nanoseconds since the epoch
};

class KernelCache {
public:
  explicit KernelCache(std::string directory);

  const std::string &directory() const { return dir; }

  /// Creates the directory (mode 0700) if needed and checks that it is a
  /// directory, owned by this user, that no other user can write to.
  llvm::Error checkDirectory() const;

  /// The entry for `key`, or nullopt on a miss. A damaged entry is removed
  /// and reported as a miss.
  llvm::Expected<std::optional<CacheEntry>> load(llvm::StringRef key) const;

  /// Adds an entry atomically. If another process stored `key` first, its
  /// entry is kept.
  llvm::Error store(llvm::StringRef key, const CacheEntry &entry) const;

  std::vector<CacheEntryInfo> entries() const;

  /// Removes least recently used entries until the cache holds at most
  /// `maxBytes`, and temporary directories that dead processes left.
  llvm::Error evictToSize(uint64_t maxBytes) const;

  llvm::Error clear() const;

private:
  std::string entryPath(llvm::StringRef key) const;
  std::string dir;
};

/// SHA-256 (hex) of the parts, each length-prefixed so that boundaries count.
std::string hashKey(llvm::ArrayRef<std::string> parts);

/// Identifies this build of the compiler: the GNU build id of the binary
/// that holds this code (or its size and time when it has none).
std::string compilerBuildId();

} // namespace tessel::runtime

#endif // TESSEL_RUNTIME_KERNELCACHE_H
