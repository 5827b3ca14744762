//===- ThreadPool.h - Runs a kernel's grid on all cores ---------*- C++ -*-===//
#ifndef TESSEL_RUNTIME_THREADPOOL_H
#define TESSEL_RUNTIME_THREADPOOL_H

#include <atomic>
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
///
/// Launches are often microseconds long, so the hot path avoids sleeping:
/// chunks are claimed with an atomic counter, the caller spins until the
/// workers that joined are done, and idle workers spin for a short while
/// (`kSpinMicros`) before sleeping on a condition variable.
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
  static constexpr int kSpinMicros = 200;

  void workerLoop();
  void runChunks();
  bool waitForJob(uint64_t seen);

  unsigned numThreads;
  std::vector<std::thread> workers;
  std::mutex callMutex; // one parallelFor at a time
  // Guards joining a job (reading body/total/chunk, incrementing busy) and
  // ending it, so that a late worker never sees a half-written job.
  std::mutex mutex;
  std::condition_variable wake;
  const Body *body = nullptr;
  int64_t total = 0, chunk = 1;
  std::atomic<int64_t> next{0};
  std::atomic<unsigned> busy{0};
  std::atomic<uint64_t> generation{0};
  std::atomic<unsigned> sleepers{0};
  bool stopping = false;
};

} // namespace tessel::runtime

#endif // TESSEL_RUNTIME_THREADPOOL_H
