//===- RedisCache.h - A kernel cache shared through Redis -------*- C++ -*-===//
//
// A team's machines share compiled kernels through a Redis server: entries
// are packed blobs (see CacheEntry.h) under "tessel:<key>", written once
// (SET NX: the first writer wins) and verified by checksum on every load, so
// a damaged or foreign value is never loaded. Speaks RESP over one TCP
// connection; no client library is needed.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_REDISCACHE_H
#define TESSEL_RUNTIME_REDISCACHE_H

#include "tessel/Runtime/CacheEntry.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace tessel::runtime {

class RedisCache {
public:
  /// Connects to "redis://host[:port][/db]".
  static llvm::Expected<std::unique_ptr<RedisCache>> connect(llvm::StringRef url);
  ~RedisCache();
  RedisCache(const RedisCache &) = delete;
  RedisCache &operator=(const RedisCache &) = delete;

  /// The entry for `key`, or nullopt on a miss. A damaged value is deleted
  /// and reported as a miss.
  llvm::Expected<std::optional<CacheEntry>> load(llvm::StringRef key);
  llvm::Error store(llvm::StringRef key, const CacheEntry &entry);

private:
  struct Reply {
    enum Kind { Status, Error, Integer, Bulk, Nil } kind = Nil;
    std::string text;
  };
  explicit RedisCache(int fd) : fd(fd) {}
  llvm::Expected<Reply> command(llvm::ArrayRef<llvm::StringRef> args);
  llvm::Expected<std::string> readLine();
  llvm::Expected<std::string> readBytes(size_t n);

  int fd;
  std::string buffer;
  std::mutex mutex; // one command at a time on the connection
};

} // namespace tessel::runtime

#endif // TESSEL_RUNTIME_REDISCACHE_H
