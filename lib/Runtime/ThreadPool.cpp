//===- ThreadPool.cpp - Runs a kernel's grid on all cores -----------------===//
#include "tessel/Runtime/ThreadPool.h"

#include <algorithm>
#include <cstdlib>
#include <string>

using namespace tessel::runtime;

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
  }
  wake.notify_all();
  for (std::thread &t : workers)
    t.join();
}

ThreadPool &ThreadPool::global() {
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
    int64_t begin;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (next >= total)
        return;
      begin = next;
      next += chunk;
    }
    (*body)(begin, std::min(total, begin + chunk));
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
      ++busy;
    }
    runChunks();
    {
      std::lock_guard<std::mutex> lock(mutex);
      --busy;
    }
    done.notify_all();
  }
}

void ThreadPool::parallelFor(int64_t n, const Body &fn) {
  if (n <= 0)
    return;
  if (n == 1 || workers.empty()) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call(callMutex);
  {
    std::lock_guard<std::mutex> lock(mutex);
    body = &fn;
    total = n;
    next = 0;
    // Several chunks per thread balance uneven programs; not so many that
    // taking a chunk costs more than running it.
    chunk = std::max<int64_t>(1, n / (int64_t(numThreads) * 4));
    ++generation;
  }
  wake.notify_all();
  runChunks();
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return busy == 0 && next >= total; });
  body = nullptr;
}
