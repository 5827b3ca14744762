//===- RedisCacheTest.cpp - Connecting to a shared kernel cache -----------===//
//
// The host name's lookup counts against the request's deadline. glibc's
// getaddrinfo has no timeout of its own (and no way to point it at a DNS
// server that never answers), so these tests give the client a resolver of
// their own that answers when the test says so.
//
//===----------------------------------------------------------------------===//
#include "tessel/Runtime/RedisCache.h"

#include <gtest/gtest.h>

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

using namespace tessel::runtime;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// A resolver that answers with 127.0.0.1 once the test opens its gate, or
// after 3 s (so that a client that waits for it still ends). Shared with the
// lookups, which may outlive the test's call.
struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  int calls = 0, inside = 0;
  std::string host, port; // of the last lookup

  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    open = true;
    changed.notify_all();
  }
  // Waits until no lookup is in the resolver.
  bool waitIdle() {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, 10s, [&] { return inside == 0; });
  }
};

decltype(RedisCacheOptions::resolve) resolver(std::shared_ptr<Gate> gate) {
  return [gate](const char *host, const char *port, const addrinfo *hints,
                addrinfo **result) {
    std::unique_lock<std::mutex> lock(gate->mutex);
    ++gate->calls;
    ++gate->inside;
    gate->host = host;
    gate->port = port;
    gate->changed.wait_for(lock, 3s, [&] { return gate->open; });
    lock.unlock();
    int rc = ::getaddrinfo("127.0.0.1", port, hints, result);
    lock.lock();
    --gate->inside;
    gate->changed.notify_all();
    return rc;
  };
}

RedisCacheOptions options(std::shared_ptr<Gate> gate,
                          std::chrono::milliseconds timeout) {
  RedisCacheOptions options;
  options.secret = "the team's secret";
  options.timeout = timeout;
  options.resolve = resolver(std::move(gate));
  return options;
}

// A TCP socket listening on loopback: connections wait in its backlog.
struct Listener {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::string port;
  Listener() {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(address);
    if (::bind(fd, reinterpret_cast<sockaddr *>(&address), size) == 0 &&
        ::listen(fd, 8) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &size) == 0)
      port = std::to_string(ntohs(address.sin_port));
  }
  ~Listener() { ::close(fd); }
};

TEST(RedisCacheConnect, AHostNameLookupEndsAtTheDeadline) {
  auto gate = std::make_shared<Gate>();
  auto start = Clock::now();
  auto cache = RedisCache::connect("redis://cache.invalid:6379",
                                   options(gate, 200ms));
  auto elapsed = Clock::now() - start;
  ASSERT_FALSE(cache);
  EXPECT_EQ(llvm::toString(cache.takeError()),
            "redis kernel cache: cannot resolve cache.invalid: no answer "
            "within 0.2 s");
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed)
                .count(),
            1500);
  // The lookup goes on without the client, and ends when it is answered.
  gate->release();
  ASSERT_TRUE(gate->waitIdle());
  EXPECT_EQ(gate->calls, 1);
  EXPECT_EQ(gate->host, "cache.invalid");
  EXPECT_EQ(gate->port, "6379");
}

TEST(RedisCacheConnect, ConnectsToTheAddressTheLookupFound) {
  Listener listener;
  ASSERT_FALSE(listener.port.empty());
  auto gate = std::make_shared<Gate>();
  gate->release();
  auto cache = RedisCache::connect("redis://cache.test:" + listener.port,
                                   options(gate, 5s));
  ASSERT_TRUE(bool(cache)) << llvm::toString(cache.takeError());
  EXPECT_EQ(gate->host, "cache.test");
  EXPECT_EQ(gate->port, listener.port);
}

TEST(RedisCacheConnect, AFailedLookupIsReported) {
  RedisCacheOptions failing = options(nullptr, 5s);
  failing.resolve = [](const char *, const char *, const addrinfo *,
                       addrinfo **) { return EAI_NONAME; };
  auto cache = RedisCache::connect("redis://nowhere.test", failing);
  ASSERT_FALSE(cache);
  EXPECT_EQ(llvm::toString(cache.takeError()),
            std::string("redis kernel cache: cannot resolve nowhere.test: ") +
                gai_strerror(EAI_NONAME));
}

TEST(RedisCacheConnect, LookupsLeftWaitingAreCapped) {
  // Each lookup that outlasts its deadline keeps a thread until it is
  // answered: past a few, connecting fails without starting another.
  auto gate = std::make_shared<Gate>();
  int refusedAt = -1;
  for (int i = 0; i < 64 && refusedAt < 0; ++i) {
    auto cache =
        RedisCache::connect("redis://stuck.test:6379", options(gate, 20ms));
    ASSERT_FALSE(cache);
    std::string message = llvm::toString(cache.takeError());
    if (message.find("earlier lookups are still waiting") != std::string::npos)
      refusedAt = i;
    else
      EXPECT_NE(message.find("no answer within"), std::string::npos) << message;
  }
  EXPECT_GE(refusedAt, 1);
  EXPECT_LE(refusedAt, 8);
  {
    std::lock_guard<std::mutex> lock(gate->mutex);
    EXPECT_EQ(gate->calls, refusedAt); // the refused ones looked nothing up
  }
  gate->release();
  ASSERT_TRUE(gate->waitIdle());
  // Once they are answered, lookups start again (their threads end just
  // after the resolver returns).
  Listener listener;
  bool connected = false;
  for (auto end = Clock::now() + 5s; !connected && Clock::now() < end;
       std::this_thread::sleep_for(10ms)) {
    auto cache = RedisCache::connect("redis://stuck.test:" + listener.port,
                                     options(gate, 5s));
    connected = bool(cache);
    if (!cache)
      llvm::consumeError(cache.takeError());
  }
  EXPECT_TRUE(connected);
}

} // namespace
