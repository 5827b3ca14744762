//===- RedisCache.cpp - A kernel cache shared through Redis ---------------===//
#include "tessel/Runtime/RedisCache.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <tuple>
#include <utility>

using namespace tessel::runtime;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "redis kernel cache: " + message);
}

std::string redisKey(llvm::StringRef key) { return ("tessel:" + key).str(); }

// A stored value: this prefix, the MAC in hex, a newline, the packed entry.
constexpr llvm::StringLiteral kSealPrefix = "tessel-hmac-sha256:";
// What the MAC covers besides the key and the entry: which use it is for.
constexpr llvm::StringLiteral kMacContext = "tessel kernel cache entry v1\n";

// Status and error lines are short; anything longer is not Redis talking.
constexpr size_t kMaxLineBytes = 64 * 1024;
constexpr size_t kMaxSecretFileBytes = 64 * 1024;

std::string seconds(std::chrono::milliseconds t) {
  return llvm::formatv("{0:f1} s", t.count() / 1000.0).str();
}

std::string percentDecode(llvm::StringRef text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned byte;
    if (text[i] == '%' && i + 2 < text.size() &&
        !text.substr(i + 1, 2).getAsInteger(16, byte)) {
      out += char(byte);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

struct RedisUrl {
  std::string host, port = "6379", db, user, password;
  bool auth = false;
  /// The URL without its password, for messages.
  std::string shown() const {
    std::string h = llvm::StringRef(host).contains(':') ? "[" + host + "]" : host;
    return "redis://" + std::string(auth ? "***@" : "") + h + ":" + port +
           (db.empty() ? "" : "/" + db);
  }
};

// redis://[[user]:password@]host[:port][/db]
llvm::Expected<RedisUrl> parseUrl(llvm::StringRef url) {
  llvm::StringRef rest = url;
  if (rest.starts_with("rediss://"))
    return fail("rediss:// (Redis over TLS) is not supported: Tessel speaks "
                "plain RESP and links no TLS library. Use redis:// on a "
                "trusted network or through a TLS tunnel (e.g. stunnel)");
  if (!rest.consume_front("redis://"))
    return fail("the URL must start with redis:// (got '" +
                url.take_until([](char c) { return c == ':' || c == '/'; }) +
                "...')");
  RedisUrl parsed;
  // The password may hold '/' and '@': the host starts after the last '@'.
  if (size_t at = rest.rfind('@'); at != llvm::StringRef::npos) {
    llvm::StringRef userInfo = rest.take_front(at);
    rest = rest.drop_front(at + 1);
    if (!userInfo.contains(':'))
      return fail("give the password as redis://:password@host (or "
                  "redis://user:password@host)");
    auto [user, password] = userInfo.split(':');
    parsed.user = percentDecode(user);
    parsed.password = percentDecode(password);
    parsed.auth = true;
  }
  auto [hostPort, db] = rest.split('/');
  llvm::StringRef host = hostPort, port;
  if (hostPort.starts_with("[")) { // [IPv6]:port
    size_t close = hostPort.find(']');
    if (close == llvm::StringRef::npos)
      return fail("missing ']' in the host of the URL");
    host = hostPort.slice(1, close);
    llvm::StringRef after = hostPort.drop_front(close + 1);
    if (!after.empty() && !after.consume_front(":"))
      return fail("bad host in the URL");
    port = after;
  } else if (hostPort.contains(':')) {
    std::tie(host, port) = hostPort.rsplit(':');
  }
  parsed.host = host.empty() ? "localhost" : host.str();
  unsigned portNumber, dbNumber;
  if (!port.empty()) {
    if (port.getAsInteger(10, portNumber) || portNumber == 0 || portNumber > 65535)
      return fail("bad port '" + port + "' in the URL");
    parsed.port = port.str();
  }
  if (!db.empty() && db.getAsInteger(10, dbNumber))
    return fail("bad database number '" + db + "' in the URL");
  parsed.db = db.str();
  return parsed;
}

// Milliseconds left until `deadline` (0 when it has passed).
int msLeft(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? int(std::min<int64_t>(left.count(), INT32_MAX)) : 0;
}

// Waits until `fd` is ready for `events`; false when the deadline passed.
llvm::Expected<bool> waitFor(int fd, short events,
                             std::chrono::steady_clock::time_point deadline) {
  while (true) {
    int ms = msLeft(deadline);
    if (ms == 0)
      return false;
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, ms);
    if (rc > 0)
      return true;
    if (rc == 0)
      return false;
    if (errno != EINTR)
      return fail("poll failed: " + llvm::Twine(std::strerror(errno)));
  }
}

using Addresses = std::unique_ptr<addrinfo, void (*)(addrinfo *)>;

// How many host-name lookups may be running at once. One whose connect()
// gave up at its deadline still holds its thread until the resolver answers
// or gives up itself (its own timeouts add up to minutes): past this many,
// connecting fails rather than pile up threads.
constexpr int kMaxLookups = 8;
std::atomic<int> lookupsRunning{0};

// A host-name lookup, shared by its thread and the connect() waiting for it:
// whichever lets go last frees it, with the addresses nobody took.
struct Lookup {
  std::string host, port;
  decltype(RedisCacheOptions::resolve) resolve;
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  int rc = 0;
  addrinfo *addresses = nullptr;
  ~Lookup() {
    if (addresses)
      ::freeaddrinfo(addresses);
  }
};

void *runLookup(void *arg) {
  // The thread's own reference to the lookup.
  std::unique_ptr<std::shared_ptr<Lookup>> owner(
      static_cast<std::shared_ptr<Lookup> *>(arg));
  Lookup &lookup = **owner;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *addresses = nullptr;
  int rc = lookup.resolve
               ? lookup.resolve(lookup.host.c_str(), lookup.port.c_str(),
                                &hints, &addresses)
               : ::getaddrinfo(lookup.host.c_str(), lookup.port.c_str(),
                               &hints, &addresses);
  {
    std::lock_guard<std::mutex> lock(lookup.mutex);
    lookup.rc = rc;
    lookup.addresses = rc == 0 ? addresses : nullptr;
    lookup.done = true;
  }
  lookup.finished.notify_one();
  lookupsRunning.fetch_sub(1);
  return nullptr;
}

// The addresses of host:port, looked up before `deadline`. getaddrinfo has
// no timeout, so it runs on a detached thread of its own, which is left to
// finish alone when the deadline comes first.
llvm::Expected<Addresses>
resolve(const RedisUrl &url, const RedisCacheOptions &options,
        std::chrono::steady_clock::time_point deadline) {
  if (lookupsRunning.fetch_add(1) >= kMaxLookups) {
    lookupsRunning.fetch_sub(1);
    return fail("cannot resolve " + url.host + ": " +
                llvm::Twine(kMaxLookups) +
                " earlier lookups are still waiting for an answer");
  }
  auto lookup = std::make_shared<Lookup>();
  lookup->host = url.host;
  lookup->port = url.port;
  lookup->resolve = options.resolve;
  auto *owner = new std::shared_ptr<Lookup>(lookup);
  // The thread blocks every signal (it inherits the mask it starts with):
  // they go to the application's threads, as if there were no lookup thread.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  int error = ::pthread_create(&thread, &attributes, runLookup, owner);
  pthread_attr_destroy(&attributes);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (error != 0) {
    delete owner;
    lookupsRunning.fetch_sub(1);
    return fail("cannot resolve " + url.host + ": no thread for the lookup: " +
                std::strerror(error));
  }
  std::unique_lock<std::mutex> lock(lookup->mutex);
  if (!lookup->finished.wait_until(lock, deadline,
                                   [&] { return lookup->done; }))
    return fail("cannot resolve " + url.host + ": no answer within " +
                seconds(options.timeout));
  if (lookup->rc != 0)
    return fail("cannot resolve " + url.host + ": " + gai_strerror(lookup->rc));
  return Addresses(std::exchange(lookup->addresses, nullptr), ::freeaddrinfo);
}

// A non-blocking TCP connection to host:port, made before `deadline`.
llvm::Expected<int> openConnection(const RedisUrl &url,
                                   std::chrono::steady_clock::time_point deadline,
                                   const RedisCacheOptions &options) {
  llvm::Expected<Addresses> addresses = resolve(url, options, deadline);
  if (!addresses)
    return addresses.takeError();
  std::string lastError = "no address";
  int fd = -1;
  for (addrinfo *a = addresses->get(); a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  a->ai_protocol);
    if (fd < 0) {
      lastError = std::strerror(errno);
      continue;
    }
    int error = 0;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      error = errno;
      if (error == EINPROGRESS) {
        llvm::Expected<bool> ready = waitFor(fd, POLLOUT, deadline);
        if (!ready) {
          ::close(fd);
          return ready.takeError();
        }
        socklen_t size = sizeof(error);
        if (!*ready)
          error = ETIMEDOUT;
        else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0)
          error = errno;
      }
    }
    if (error != 0) {
      lastError = error == ETIMEDOUT
                      ? "no answer within " + seconds(options.timeout)
                      : std::strerror(error);
      ::close(fd);
      fd = -1;
    }
  }
  if (fd < 0)
    return fail("cannot connect to " + url.shown() + ": " + lastError);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

} // namespace

llvm::Expected<std::unique_ptr<RedisCache>>
RedisCache::connect(llvm::StringRef url, RedisCacheOptions options) {
  llvm::Expected<RedisUrl> parsed = parseUrl(url);
  if (!parsed)
    return parsed.takeError();
  if (options.secret.empty())
    return fail("a shared kernel cache needs a secret key to authenticate "
                "its entries");
  auto deadline = Clock::now() + options.timeout;
  llvm::Expected<int> fd = openConnection(*parsed, deadline, options);
  if (!fd)
    return fd.takeError();
  std::unique_ptr<RedisCache> cache(new RedisCache(*fd, std::move(options)));
  if (parsed->auth) {
    std::vector<llvm::StringRef> auth = {"AUTH"};
    if (!parsed->user.empty())
      auth.push_back(parsed->user);
    auth.push_back(parsed->password);
    auto reply = cache->command(auth);
    if (!reply)
      return reply.takeError();
    if (reply->kind != Reply::Status)
      return fail("AUTH on " + parsed->shown() + " failed: " + reply->text);
  }
  if (!parsed->db.empty()) {
    auto reply = cache->command({"SELECT", parsed->db});
    if (!reply)
      return reply.takeError();
    if (reply->kind != Reply::Status)
      return fail("SELECT " + parsed->db + ": " + reply->text);
  }
  return cache;
}

RedisCache::~RedisCache() { ::close(fd); }

llvm::Expected<std::string> RedisCache::readSecretFile(llvm::StringRef path) {
  std::string p = path.str();
  int file = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (file < 0)
    return fail("cannot read the key file " + p + ": " + std::strerror(errno));
  llvm::scope_exit closeFile([&] { ::close(file); });
  // Checked on the open file: what is read is what was checked.
  struct stat st;
  if (::fstat(file, &st) != 0)
    return fail("cannot read the key file " + p + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail("the key file " + p + " is not a regular file");
  if (st.st_uid != ::getuid())
    return fail("refusing the key file " + p +
                ": it is owned by another user, and whoever can change it "
                "decides what code this process runs");
  if (st.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH)) {
    char mode[8];
    snprintf(mode, sizeof(mode), "%04o", unsigned(st.st_mode & 07777));
    return fail("refusing the key file " + p + ": other users can read or "
                "write it (mode " + mode + "). Make it private (chmod 600).");
  }
  if (st.st_size > off_t(kMaxSecretFileBytes))
    return fail("the key file " + p + " is larger than " +
                llvm::Twine(kMaxSecretFileBytes) + " bytes");
  std::string secret(size_t(st.st_size), '\0');
  size_t got = 0;
  while (got < secret.size()) {
    ssize_t n = ::read(file, secret.data() + got, secret.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return fail("cannot read the key file " + p + ": " +
                  (n < 0 ? std::strerror(errno) : "it got shorter"));
    got += size_t(n);
  }
  llvm::StringRef text(secret);
  if (text.consume_back("\n"))
    text.consume_back("\r");
  if (text.empty())
    return fail("the key file " + p + " is empty");
  return text.str();
}

llvm::Error RedisCache::sendAll(llvm::StringRef data, Clock::time_point deadline) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data = data.drop_front(size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      llvm::Expected<bool> ready = waitFor(fd, POLLOUT, deadline);
      if (!ready)
        return ready.takeError();
      if (!*ready)
        return fail("could not send the request within " +
                    seconds(options.timeout));
      continue;
    }
    return fail("send failed: " + llvm::Twine(std::strerror(errno)));
  }
  return llvm::Error::success();
}

llvm::Error RedisCache::receiveMore(Clock::time_point deadline) {
  while (true) {
    llvm::Expected<bool> ready = waitFor(fd, POLLIN, deadline);
    if (!ready)
      return ready.takeError();
    if (!*ready)
      return fail("no complete reply within " + seconds(options.timeout));
    char chunk[65536];
    ssize_t n = ::recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n > 0) {
      buffer.append(chunk, size_t(n));
      return llvm::Error::success();
    }
    if (n == 0)
      return fail("the server closed the connection");
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
      return fail("receive failed: " + llvm::Twine(std::strerror(errno)));
  }
}

llvm::Expected<std::string> RedisCache::readLine(Clock::time_point deadline) {
  while (true) {
    size_t end = buffer.find("\r\n");
    if (end != std::string::npos) {
      std::string line = buffer.substr(0, end);
      buffer.erase(0, end + 2);
      return line;
    }
    if (buffer.size() > kMaxLineBytes)
      return fail("a reply line is longer than " + llvm::Twine(kMaxLineBytes) +
                  " bytes");
    if (llvm::Error err = receiveMore(deadline))
      return std::move(err);
  }
}

llvm::Expected<std::string> RedisCache::readBytes(size_t n,
                                                  Clock::time_point deadline) {
  while (buffer.size() < n + 2)
    if (llvm::Error err = receiveMore(deadline))
      return std::move(err);
  if (buffer.compare(n, 2, "\r\n") != 0)
    return fail("a bulk reply does not end where its length says");
  std::string data = buffer.substr(0, n);
  buffer.erase(0, n + 2);
  return data;
}

llvm::Expected<RedisCache::Reply>
RedisCache::exchange(llvm::ArrayRef<llvm::StringRef> args,
                     Clock::time_point deadline) {
  std::string request = "*" + std::to_string(args.size()) + "\r\n";
  for (llvm::StringRef arg : args)
    request += "$" + std::to_string(arg.size()) + "\r\n" + arg.str() + "\r\n";
  if (llvm::Error err = sendAll(request, deadline))
    return std::move(err);
  auto line = readLine(deadline);
  if (!line)
    return line.takeError();
  if (line->empty())
    return fail("empty reply");
  Reply reply;
  llvm::StringRef body = llvm::StringRef(*line).drop_front();
  switch ((*line)[0]) {
  case '+': reply.kind = Reply::Status; reply.text = body.str(); break;
  case '-': reply.kind = Reply::Error; reply.text = body.str(); break;
  case ':': reply.kind = Reply::Integer; reply.text = body.str(); break;
  case '$': {
    int64_t length;
    if (body.getAsInteger(10, length) || length < -1)
      return fail("bad bulk reply '" + line->substr(0, 40) + "'");
    if (length == -1)
      break; // nil
    if (uint64_t(length) > options.maxEntryBytes)
      return fail("a reply of " + llvm::Twine(length) +
                  " bytes is larger than the limit of " +
                  llvm::Twine(options.maxEntryBytes) +
                  " bytes (TESSEL_CACHE_REMOTE_MAX_BYTES)");
    auto data = readBytes(size_t(length), deadline);
    if (!data)
      return data.takeError();
    reply.kind = Reply::Bulk;
    reply.text = std::move(*data);
    break;
  }
  default:
    return fail("unexpected reply '" + line->substr(0, 40) + "'");
  }
  // One request, one reply: more is not Redis talking.
  if (!buffer.empty())
    return fail("unexpected data after a reply");
  return reply;
}

llvm::Expected<RedisCache::Reply>
RedisCache::command(llvm::ArrayRef<llvm::StringRef> args) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!broken.empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "redis kernel cache: not used since an earlier failure (" + broken + ")");
  // One deadline for the whole request: a server that trickles bytes cannot
  // stretch it.
  llvm::Expected<Reply> reply = exchange(args, Clock::now() + options.timeout);
  if (!reply) {
    // The connection is somewhere in a reply: unusable from now on.
    broken = llvm::toString(reply.takeError());
    buffer.clear();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), broken);
  }
  return reply;
}

HmacSha256::Mac RedisCache::mac(llvm::StringRef key,
                                llvm::StringRef blob) const {
  HmacSha256 hmac(options.secret);
  hmac.update(kMacContext);
  hmac.update(std::to_string(key.size()) + ":");
  hmac.update(key);
  hmac.update(blob);
  return hmac.final();
}

std::string RedisCache::seal(llvm::StringRef key, llvm::StringRef blob) const {
  return (kSealPrefix + llvm::toHex(mac(key, blob), /*LowerCase=*/true) + "\n" +
          blob)
      .str();
}

std::optional<llvm::StringRef>
RedisCache::unseal(llvm::StringRef key, llvm::StringRef value) const {
  constexpr size_t kHexSize = 2 * HmacSha256::kSize;
  std::string stored;
  if (!value.consume_front(kSealPrefix) || value.size() <= kHexSize ||
      !llvm::tryGetFromHex(value.take_front(kHexSize), stored))
    return std::nullopt;
  llvm::StringRef blob = value.drop_front(kHexSize);
  if (!blob.consume_front("\n"))
    return std::nullopt;
  if (!constantTimeEqual(llvm::arrayRefFromStringRef(stored), mac(key, blob)))
    return std::nullopt;
  return blob;
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
  std::optional<CacheEntry> entry;
  if (std::optional<llvm::StringRef> blob = unseal(key, reply->text))
    entry = unpackEntry(key, *blob);
  if (!entry) {
    // Not authenticated, or damaged: never loaded, and out of the way of a
    // good entry.
    auto del = command({"DEL", k});
    if (!del)
      return del.takeError();
    return std::nullopt;
  }
  return entry;
}

llvm::Error RedisCache::store(llvm::StringRef key, const CacheEntry &entry) {
  std::string value = seal(key, packEntry(key, entry));
  if (value.size() > options.maxEntryBytes)
    return llvm::Error::success(); // too large to share; it stays local
  auto reply = command({"SET", redisKey(key), value, "NX"});
  if (!reply)
    return reply.takeError();
  if (reply->kind == Reply::Error)
    return fail("SET: " + reply->text);
  return llvm::Error::success();
}
