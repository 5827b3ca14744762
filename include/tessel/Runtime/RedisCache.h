//===- RedisCache.h - A kernel cache shared through Redis -------*- C++ -*-===//
//
// A team's machines share compiled kernels through a Redis server: entries
// are packed blobs (see CacheEntry.h) under "tessel:<key>", written once
// (SET NX: the first writer wins). Whoever can write to the server could
// store any code under any key, so every value carries an HMAC-SHA256 over
// its key and content made with a secret the team shares; a value without a
// valid MAC is never loaded. The server is not trusted either: replies are
// capped in size and every request has a deadline, connecting included (the
// host name's lookup too). Speaks RESP over one TCP connection (no TLS); no
// client library is needed.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_REDISCACHE_H
#define TESSEL_RUNTIME_REDISCACHE_H

#include "tessel/Runtime/CacheEntry.h"
#include "tessel/Runtime/Hmac.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

struct addrinfo;

namespace tessel::runtime {

struct RedisCacheOptions {
  /// The key that authenticates entries (required, shared by the team).
  std::string secret;
  /// Values (and so replies) larger than this are neither stored nor read.
  uint64_t maxEntryBytes = uint64_t(256) << 20;
  /// The most a request (connecting included) may take, all reads together.
  std::chrono::milliseconds timeout{5000};
  /// Looks up the server's host name with getaddrinfo's contract (the list
  /// is freed with freeaddrinfo); getaddrinfo itself when empty. Tests put a
  /// slow one here: a lookup that outlasts the deadline is left to finish on
  /// its own thread, so it must not use what connect()'s caller may free.
  std::function<int(const char *host, const char *port,
                    const addrinfo *hints, addrinfo **result)>
      resolve;
};

class RedisCache {
public:
  /// Connects to "redis://[[user]:password@]host[:port][/db]" (sending AUTH
  /// when a password is given).
  static llvm::Expected<std::unique_ptr<RedisCache>>
  connect(llvm::StringRef url, RedisCacheOptions options);
  ~RedisCache();
  RedisCache(const RedisCache &) = delete;
  RedisCache &operator=(const RedisCache &) = delete;

  /// The secret in `path`, a file that must be private to this user (owned
  /// by it, no access for group or others); a final newline is dropped.
  static llvm::Expected<std::string> readSecretFile(llvm::StringRef path);

  /// The entry for `key`, or nullopt on a miss. A value that is not
  /// authenticated or is damaged is never loaded: it is deleted (out of the
  /// way of a good entry) and reported as a miss.
  llvm::Expected<std::optional<CacheEntry>> load(llvm::StringRef key);
  /// Stores the entry unless another is there first or it is larger than
  /// `maxEntryBytes`.
  llvm::Error store(llvm::StringRef key, const CacheEntry &entry);

private:
  struct Reply {
    enum Kind { Status, Error, Integer, Bulk, Nil } kind = Nil;
    std::string text;
  };
  using Clock = std::chrono::steady_clock;

  RedisCache(int fd, RedisCacheOptions options)
      : fd(fd), options(std::move(options)) {}
  llvm::Expected<Reply> command(llvm::ArrayRef<llvm::StringRef> args);
  llvm::Expected<Reply> exchange(llvm::ArrayRef<llvm::StringRef> args,
                                 Clock::time_point deadline);
  llvm::Error sendAll(llvm::StringRef data, Clock::time_point deadline);
  llvm::Error receiveMore(Clock::time_point deadline);
  llvm::Expected<std::string> readLine(Clock::time_point deadline);
  llvm::Expected<std::string> readBytes(size_t n, Clock::time_point deadline);

  /// HMAC-SHA256 with the secret over the key and the packed entry.
  HmacSha256::Mac mac(llvm::StringRef key, llvm::StringRef blob) const;
  /// The stored value of an entry: the MAC, then the packed blob.
  std::string seal(llvm::StringRef key, llvm::StringRef blob) const;
  /// The blob of a stored value, if its MAC is right.
  std::optional<llvm::StringRef> unseal(llvm::StringRef key,
                                        llvm::StringRef value) const;

  int fd;
  RedisCacheOptions options;
  std::string buffer;
  /// Set after a failed request: the connection's state is unknown.
  std::string broken;
  std::mutex mutex; // one command at a time on the connection
};

} // namespace tessel::runtime

#endif // TESSEL_RUNTIME_REDISCACHE_H
