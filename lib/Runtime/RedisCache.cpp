//===- RedisCache.cpp - A kernel cache shared through Redis ---------------===//
#include "tessel/Runtime/RedisCache.h"

#include "llvm/ADT/StringExtras.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

using namespace tessel::runtime;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "redis kernel cache: " + message);
}

constexpr int kTimeoutSeconds = 5;

std::string redisKey(llvm::StringRef key) { return ("tessel:" + key).str(); }

} // namespace

llvm::Expected<std::unique_ptr<RedisCache>>
RedisCache::connect(llvm::StringRef url) {
  llvm::StringRef rest = url;
  if (!rest.consume_front("redis://"))
    return fail("the URL must start with redis:// (got '" + url + "')");
  auto [hostPort, db] = rest.split('/');
  auto [host, portText] = hostPort.rsplit(':');
  if (host.empty())
    host = "localhost";
  unsigned port = 6379;
  if (hostPort.contains(':') && portText.getAsInteger(10, port))
    return fail("bad port in '" + url + "'");

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *addresses = nullptr;
  std::string hostStr = host.str(), portStr = std::to_string(port);
  if (int rc = ::getaddrinfo(hostStr.c_str(), portStr.c_str(), &hints, &addresses))
    return fail("cannot resolve " + hostStr + ": " + gai_strerror(rc));
  int fd = -1;
  std::string lastError = "no address";
  for (addrinfo *a = addresses; a; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0)
      continue;
    timeval timeout{kTimeoutSeconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0)
      break;
    lastError = std::strerror(errno);
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(addresses);
  if (fd < 0)
    return fail("cannot connect to " + hostStr + ":" + portStr + ": " + lastError);
  std::unique_ptr<RedisCache> cache(new RedisCache(fd));
  if (!db.empty()) {
    auto reply = cache->command({"SELECT", db});
    if (!reply)
      return reply.takeError();
    if (reply->kind == Reply::Error)
      return fail("SELECT " + db + ": " + reply->text);
  }
  return cache;
}

RedisCache::~RedisCache() { ::close(fd); }

llvm::Expected<std::string> RedisCache::readLine() {
  while (true) {
    size_t end = buffer.find("\r\n");
    if (end != std::string::npos) {
      std::string line = buffer.substr(0, end);
      buffer.erase(0, end + 2);
      return line;
    }
    char chunk[65536];
    ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0)
      return fail(n == 0 ? "the server closed the connection"
                         : "receive failed: " + llvm::Twine(std::strerror(errno)));
    buffer.append(chunk, n);
  }
}

llvm::Expected<std::string> RedisCache::readBytes(size_t n) {
  while (buffer.size() < n + 2) {
    char chunk[65536];
    ssize_t got = ::recv(fd, chunk, sizeof(chunk), 0);
    if (got <= 0)
      return fail(got == 0 ? "the server closed the connection"
                           : "receive failed: " + llvm::Twine(std::strerror(errno)));
    buffer.append(chunk, got);
  }
  std::string data = buffer.substr(0, n);
  buffer.erase(0, n + 2); // and the trailing CRLF
  return data;
}

llvm::Expected<RedisCache::Reply>
RedisCache::command(llvm::ArrayRef<llvm::StringRef> args) {
  std::lock_guard<std::mutex> lock(mutex);
  std::string request = "*" + std::to_string(args.size()) + "\r\n";
  for (llvm::StringRef arg : args)
    request += "$" + std::to_string(arg.size()) + "\r\n" + arg.str() + "\r\n";
  for (size_t sent = 0; sent < request.size();) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      return fail("send failed: " + llvm::Twine(std::strerror(errno)));
    sent += n;
  }
  auto line = readLine();
  if (!line)
    return line.takeError();
  if (line->empty())
    return fail("empty reply");
  Reply reply;
  llvm::StringRef body = llvm::StringRef(*line).drop_front();
  switch ((*line)[0]) {
  case '+': reply.kind = Reply::Status; reply.text = body.str(); return reply;
  case '-': reply.kind = Reply::Error; reply.text = body.str(); return reply;
  case ':': reply.kind = Reply::Integer; reply.text = body.str(); return reply;
  case '$': {
    long long length;
    if (body.getAsInteger(10, length))
      return fail("bad bulk reply '" + *line + "'");
    if (length < 0)
      return reply; // nil
    auto data = readBytes(size_t(length));
    if (!data)
      return data.takeError();
    reply.kind = Reply::Bulk;
    reply.text = std::move(*data);
    return reply;
  }
  default:
    return fail("unexpected reply '" + *line + "'");
  }
}

llvm::Expected<std::optional<CacheEntry>> RedisCache::load(llvm::StringRef key) {
  std::string k = redisKey(key);
  auto reply = command({"GET", k});
  if (!reply)
    return reply.takeError();
  if (reply->kind == Reply::Error)
    return fail("GET: " + reply->text);
  if (reply->kind != Reply::Bulk)
    return std::nullopt;
  std::optional<CacheEntry> entry = unpackEntry(key, reply->text);
  if (!entry) {
    // Damaged or not ours: never loaded, and out of the way of a good entry.
    auto del = command({"DEL", k});
    if (!del)
      return del.takeError();
    return std::nullopt;
  }
  return entry;
}

llvm::Error RedisCache::store(llvm::StringRef key, const CacheEntry &entry) {
  std::string blob = packEntry(key, entry);
  auto reply = command({"SET", redisKey(key), blob, "NX"});
  if (!reply)
    return reply.takeError();
  if (reply->kind == Reply::Error)
    return fail("SET: " + reply->text);
  return llvm::Error::success();
}
