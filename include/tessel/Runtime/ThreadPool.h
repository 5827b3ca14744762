//===- ThreadPool.h - Runs a kernel's grid on all cores ---------*- C++ -*-===//
#ifndef TESSEL_RUNTIME_THREADPOOL_H
#define TESSEL_RUNTIME_THREADPOOL_H

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessel::runtime {

/// A persistent pool of worker threads. `parallelFor` splits [0, n) into
/// chunks that the workers and the calling thread take in turn; it returns
/// when all are done. One parallelFor runs at a time (callers serialize).
class ThreadPool {
public:
  explicit ThreadPool(unsigned numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned size() const { return numThreads; }

  using Body = std::function<void(int64_t begin, int64_t end)>;
  void parallelFor(int64_t n, const Body &body);

  /// The process-wide pool: TESSEL_NUM_THREADS threads, else one per core.
  static ThreadPool &global();

private:
  void workerLoop();
  void runChunks();

  unsigned numThreads;
  std::vector<std::thread> workers;
  std::mutex callMutex; // one parallelFor at a time
  std::mutex mutex;
  std::condition_variable wake, done;
  const Body *body = nullptr;
  int64_t total = 0, chunk = 1, next = 0;
  unsigned busy = 0;
  uint64_t generation = 0;
  bool stopping = false;
};

} // namespace tessel::runtime

#endif // TESSEL_RUNTIME_THREADPOOL_H
