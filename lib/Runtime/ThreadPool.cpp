//===- ThreadPool.cpp - Runs a kernel's grid on all cores -----------------===//
#include "tessel/Runtime/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include <pthread.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TESSEL_PAUSE() _mm_pause()
#else
#define TESSEL_PAUSE() std::this_thread::yield()
#endif

using namespace tessel::runtime;

namespace {
/// Set in a child process after fork(): the pool's threads did not survive,
/// and its locks may have been held by them. The child runs grids inline.
std::atomic<bool> forkedChild{false};
void markForkedChild() { forkedChild.store(true); }
} // namespace

ThreadPool::ThreadPool(unsigned numThreads)
    : numThreads(std::max(1u, numThreads)) {
  // The caller works too: numThreads - 1 workers.
  for (unsigned i = 1; i < this->numThreads; ++i)
    workers.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
    generation.fetch_add(1, std::memory_order_release);
  }
  wake.notify_all();
  for (std::thread &t : workers)
    t.join();
}

ThreadPool &ThreadPool::global() {
  static const int registered = ::pthread_atfork(nullptr, nullptr, markForkedChild);
  (void)registered;
  static ThreadPool pool([] {
    if (const char *env = std::getenv("TESSEL_NUM_THREADS")) {
      int n = std::atoi(env);
      if (n > 0)
        return unsigned(n);
    }
    return std::max(1u, std::thread::hardware_concurrency());
  }());
  return pool;
}

void ThreadPool::runChunks() {
  while (true) {
    int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
    if (begin >= total)
      return;
    (*body)(begin, std::min(total, begin + chunk));
  }
}

/// Spins, then sleeps, until the generation moves past `seen`. Returns false
/// when the pool is stopping.
bool ThreadPool::waitForJob(uint64_t seen) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::microseconds(kSpinMicros);
  for (unsigned i = 0;; ++i) {
    if (generation.load(std::memory_order_acquire) != seen)
      return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline)
      break;
    TESSEL_PAUSE();
  }
  std::unique_lock<std::mutex> lock(mutex);
  sleepers.fetch_add(1);
  wake.wait(lock, [&] {
    return generation.load(std::memory_order_acquire) != seen || stopping;
  });
  sleepers.fetch_sub(1);
  return true;
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  while (waitForJob(seen)) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (stopping)
        return;
      seen = generation.load(std::memory_order_acquire);
      // The job may already be over (body cleared): nothing to join.
      if (!body)
        continue;
      busy.fetch_add(1, std::memory_order_acquire);
    }
    runChunks();
    busy.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::parallelFor(int64_t n, const Body &fn) {
  if (n <= 0)
    return;
  if (n == 1 || workers.empty() || forkedChild.load(std::memory_order_relaxed)) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call(callMutex);
  {
    std::lock_guard<std::mutex> lock(mutex);
    body = &fn;
    total = n;
    // Several chunks per thread balance uneven programs; not so many that
    // claiming a chunk costs more than running it.
    chunk = std::max<int64_t>(1, n / (int64_t(numThreads) * 4));
    next.store(0, std::memory_order_relaxed);
    generation.fetch_add(1, std::memory_order_release);
  }
  if (sleepers.load() != 0)
    wake.notify_all();
  runChunks();
  // Wait for the workers that joined; then end the job under the mutex so
  // that no worker joins it afterwards.
  while (true) {
    while (busy.load(std::memory_order_acquire) != 0)
      TESSEL_PAUSE();
    std::lock_guard<std::mutex> lock(mutex);
    if (busy.load(std::memory_order_acquire) == 0) {
      body = nullptr;
      total = 0;
      return;
    }
  }
}
