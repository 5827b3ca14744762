//===- Runner.cpp - Running the grid: CTAs, warps, barriers ----------------===//
//
// CTAs run on a pool of threads (each CTA independent, counters summed, the
// lowest failing CTA's error reported); inside a CTA the warps run round-robin, each
// until it reaches bar.sync or finishes. When every warp that has not
// finished waits at the barrier, the barrier completes (exited threads count
// as arrived) and the race-check epoch advances. A warp instruction is
// fetched from the top of the warp's reconvergence stack; its guard predicate
// narrows the active mask; its handler runs the lanes together. Meanwhile the
// launching thread watches the wall-clock limit and asks the caller whether
// to stop (Ctrl-C); the workers look at its flag every 1024 instructions.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

#include "tessel/GPUSim/Launch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace tessel::gpusim {

uint64_t ExecContext::sreg(Sreg s, int lane) const {
  switch (s) {
  case Sreg::TidX: return tid(lane, 0);
  case Sreg::TidY: return tid(lane, 1);
  case Sreg::TidZ: return tid(lane, 2);
  case Sreg::NtidX: return block[0];
  case Sreg::NtidY: return block[1];
  case Sreg::NtidZ: return block[2];
  case Sreg::CtaidX: return cta.ctaid[0];
  case Sreg::CtaidY: return cta.ctaid[1];
  case Sreg::CtaidZ: return cta.ctaid[2];
  case Sreg::NctaidX: return grid[0];
  case Sreg::NctaidY: return grid[1];
  case Sreg::NctaidZ: return grid[2];
  case Sreg::LaneId: return uint64_t(lane);
  case Sreg::WarpId: return warp->index;
  case Sreg::NWarpId: return numWarps;
  case Sreg::SmId: return 0;
  case Sreg::NSmId: return 1;
  case Sreg::GridId: return 0;
  case Sreg::LanemaskEq: return 1u << lane;
  case Sreg::LanemaskLt: return (1u << lane) - 1;
  case Sreg::LanemaskLe: return lane == 31 ? ~0u : (2u << lane) - 1;
  case Sreg::LanemaskGt: return lane == 31 ? 0u : ~((2u << lane) - 1);
  case Sreg::LanemaskGe: return ~((1u << lane) - 1);
  case Sreg::Clock: case Sreg::Clock64: case Sreg::GlobalTimer:
    return counters.warpInstructions;
  case Sreg::DynamicSmemSize: return dynamicShared;
  case Sreg::TotalSmemSize: return cta.shared.size();
  case Sreg::ClusterCtaidX: return cta.ctaid[0] % kernel.cluster[0];
  case Sreg::ClusterCtaidY: return cta.ctaid[1] % kernel.cluster[1];
  case Sreg::ClusterCtaidZ: return cta.ctaid[2] % kernel.cluster[2];
  case Sreg::ClusterNctaidX: return kernel.cluster[0];
  case Sreg::ClusterNctaidY: return kernel.cluster[1];
  case Sreg::ClusterNctaidZ: return kernel.cluster[2];
  case Sreg::ClusterIdX: return cta.ctaid[0] / kernel.cluster[0];
  case Sreg::ClusterIdY: return cta.ctaid[1] / kernel.cluster[1];
  case Sreg::ClusterIdZ: return cta.ctaid[2] / kernel.cluster[2];
  case Sreg::NclusterIdX: return grid[0] / kernel.cluster[0];
  case Sreg::NclusterIdY: return grid[1] / kernel.cluster[1];
  case Sreg::NclusterIdZ: return grid[2] / kernel.cluster[2];
  case Sreg::ClusterCtaRank:
    return cta.ctaid[0] % kernel.cluster[0] +
           kernel.cluster[0] * (cta.ctaid[1] % kernel.cluster[1] +
                           kernel.cluster[1] * (cta.ctaid[2] % kernel.cluster[2]));
  case Sreg::ClusterNctaRank:
    return kernel.cluster[0] * kernel.cluster[1] * kernel.cluster[2];
  }
  return 0;
}

std::string ExecContext::where(int lane) const {
  std::ostringstream os;
  os << "CTA (" << cta.ctaid[0] << "," << cta.ctaid[1] << "," << cta.ctaid[2]
     << ")";
  if (lane >= 0)
    os << ", thread (" << tid(lane, 0) << "," << tid(lane, 1) << ","
       << tid(lane, 2) << ") [warp " << warp->index << ", lane " << lane
       << "]";
  else if (warp)
    os << ", warp " << warp->index;
  if (inst) {
    size_t idx = size_t(inst - kernel.insts.data());
    os << ", PTX line " << inst->line;
    if (inst->locLine)
      os << " (source line " << inst->locLine << ")";
    os << ": '" << kernel.text[idx] << "'";
  }
  return os.str();
}

namespace {

/// What stops a launch, shared by the worker threads: the instruction limit,
/// of which each takes chunks from the pool as it runs out, and a flag the
/// launching thread raises (wall-clock limit, interrupt) with the message
/// the workers then fail with.
struct Limits {
  uint64_t instructionLimit;
  std::atomic<uint64_t> pool;
  std::atomic<bool> stop{false};
  std::string stopMessage; // written before stop is raised
};

struct Budget {
  Limits *limits;
  uint64_t left = 0;
  bool refill() {
    std::atomic<uint64_t> &pool = limits->pool;
    uint64_t have = pool.load(std::memory_order_relaxed);
    while (have) {
      uint64_t take = std::min<uint64_t>(have, 1u << 20);
      if (pool.compare_exchange_weak(have, have - take,
                                     std::memory_order_relaxed)) {
        left = take;
        return true;
      }
    }
    return false;
  }
};

[[noreturn]] void failAt(ExecContext &c, int lane, const std::string &msg) {
  throw SimError(msg + "\n  at " + c.where(lane));
}

/// Runs one warp until it finishes, waits at a barrier or blocks in a wait
/// (mbarrier.try_wait); false when it blocked without doing anything else.
bool runWarp(ExecContext &c, Budget &budget) {
  Warp &w = *c.warp;
  c.r = w.regs.data();
  const Inst *insts = c.kernel.insts.data();
  const uint32_t n = uint32_t(c.kernel.insts.size());
  Counters &k = c.counters;
  const uint64_t started = k.warpInstructions;
  while (w.settle()) {
    StackEntry &top = w.stack.back();
    if (top.pc >= n) { // ran off the end: as ret
      w.retire(top.mask);
      continue;
    }
    const Inst &I = insts[top.pc];
    c.inst = &I;
    uint32_t active = top.mask;
    c.activeMask = active;
    uint32_t mask = active;
    if (I.hasGuard) {
      uint32_t g = 0;
      const uint64_t *p = c.r + size_t(I.guard) * 32;
      for (uint32_t m = active; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        g |= uint32_t((p[l] != 0) != I.guardNeg) << l;
      }
      mask = g;
    }
    ++k.warpInstructions;
    ++k.byClass[size_t(I.cls)];
    k.threadInstructions += __builtin_popcount(mask);
    if (budget.left == 0 && !budget.refill())
      failAt(c, -1, "the simulation reached its instruction limit of " +
                        std::to_string(budget.limits->instructionLimit) +
                        " warp instructions (instruction_limit; an endless "
                        "loop?)");
    --budget.left;
    // Stopped by the launching thread (wall-clock limit, Ctrl-C)? Looked at
    // every 1024 instructions: a few microseconds apart.
    if ((k.warpInstructions & 1023) == 0 &&
        budget.limits->stop.load(std::memory_order_acquire))
      failAt(c, -1, budget.limits->stopMessage);
    switch (I.op) {
    case Op::Generic:
      if (mask) {
        try {
          I.exec(c, I, mask);
        } catch (LaneError &e) {
          failAt(c, e.lane, e.what());
        }
        if (c.blocked) { // retried when the warp runs again
          c.blocked = false;
          return k.warpInstructions - started > 1;
        }
      }
      ++top.pc;
      break;
    case Op::Bra:
      w.branch(mask, I.target, top.pc + 1, I.reconverge);
      break;
    case Op::Ret:
    case Op::Exit:
      w.retire(mask); // lanes whose guard was false go on
      ++top.pc;
      break;
    case Op::WarpSync: {
      if (mask) {
        uint32_t members = uint32_t(readOp(c, I.ops[0], __builtin_ctz(mask)));
        uint32_t live = members & w.valid & ~w.exited;
        if ((live & active) != live)
          failAt(c, __builtin_ctz(mask), "bar.warp.sync: member lanes are not converged");
      }
      ++top.pc;
      break;
    }
    case Op::BarSync: {
      if (mask == 0) {
        ++top.pc;
        break;
      }
      uint32_t live = w.valid & ~w.exited;
      // The other side of a divergent branch, not run yet, may never come
      // here (it traps, fails an assertion or returns): it runs first.
      if (mask != live && mask == active && w.stack.size() >= 2) {
        StackEntry &other = w.stack[w.stack.size() - 2];
        if (other.mask && other.reconverge == top.reconverge &&
            other.pc < n && insts[other.pc].op != Op::BarSync) {
          std::swap(top, other);
          // Not executed yet: counted when it is.
          --k.warpInstructions;
          --k.byClass[size_t(I.cls)];
          k.threadInstructions -= __builtin_popcount(mask);
          ++budget.left;
          continue;
        }
      }
      if (mask != live)
        failAt(c, __builtin_ctz(mask),
               "bar.sync in divergent code (not every thread of the warp "
               "reached it together): not simulated");
      uint32_t id = uint32_t(readOp(c, I.ops[0], __builtin_ctz(mask)));
      if (id > 15)
        failAt(c, __builtin_ctz(mask), "barrier number out of range");
      if (I.nops == 2) {
        uint32_t count = uint32_t(readOp(c, I.ops[1], __builtin_ctz(mask)));
        if (count != c.numWarps * 32 && count != c.block[0] * c.block[1] * c.block[2])
          failAt(c, __builtin_ctz(mask),
                 "bar.sync with a thread count that is not the whole CTA is "
                 "not simulated");
      }
      ++top.pc;
      w.atBarrier = true;
      return true;
    }
    }
  }
  return true;
}

void runCTA(ExecContext &c, std::vector<Warp> &warps, Budget &budget) {
  uint32_t threads = c.block[0] * c.block[1] * c.block[2];
  for (uint32_t i = 0; i < warps.size(); ++i) {
    warps[i].index = i;
    uint32_t lanes = std::min(32u, threads - 32 * i);
    warps[i].start(uint32_t(c.kernel.regs.size()), lanes);
    for (const auto &[reg, bits] : c.kernel.constants)
      std::fill_n(warps[i].regs.begin() + size_t(reg) * 32, 32, bits);
  }
  c.counters.warps += warps.size();
  ++c.counters.ctas;
  c.cta.async.reset();
  c.stalled = false;
  while (true) {
    bool anyRunnable = false, progress = false;
    for (Warp &w : warps) {
      if (w.done || w.atBarrier)
        continue;
      anyRunnable = true;
      c.warp = &w;
      c.inst = nullptr;
      progress |= runWarp(c, budget);
    }
    bool waiting = false, allDone = true, allWaiting = true;
    for (Warp &w : warps) {
      waiting |= w.atBarrier;
      allDone &= w.done;
      allWaiting &= w.done || w.atBarrier;
    }
    if (allDone)
      return;
    // Warps blocked in mbarrier waits while nothing else moves: their waits
    // may time out in the next round (and report a deadlock if that repeats).
    c.stalled = anyRunnable && !progress;
    if (waiting && !allWaiting)
      continue;
    if (waiting) {
      // Every unfinished warp is at the barrier: release it.
      for (Warp &w : warps)
        w.atBarrier = false;
      ++c.counters.barriers;
      c.cta.shared.barrier();
      continue;
    }
    if (!anyRunnable)
      throw SimError("internal: CTA made no progress");
  }
}

} // namespace

LaunchResult launch(const Module &module, const std::string &name,
                    const LaunchConfig &cfg, std::vector<LaunchArg> &args) {
  auto t0 = std::chrono::steady_clock::now();
  const Kernel *kp = module.find(name);
  if (!kp) {
    std::string names;
    for (const Kernel &k : module.kernels)
      names += (names.empty() ? "" : ", ") + k.name;
    throw SimError("no kernel named '" + name + "' in the PTX (kernels: " +
                   (names.empty() ? "none" : names) + ")");
  }
  const Kernel &k = *kp;
  uint32_t threads = cfg.block[0] * cfg.block[1] * cfg.block[2];
  if (threads == 0 || threads > 1024)
    throw SimError("a CTA has 1 to 1024 threads, not " + std::to_string(threads));
  for (int i = 0; i < 3; ++i)
    if (cfg.grid[i] == 0)
      throw SimError("grid dimensions must be positive");
  if (k.reqntid[0] && k.reqntid[0] * k.reqntid[1] * k.reqntid[2] != threads)
    throw SimError("kernel " + name + " requires " +
                   std::to_string(k.reqntid[0] * k.reqntid[1] * k.reqntid[2]) +
                   " threads per CTA (.reqntid), launched with " +
                   std::to_string(threads));
  for (int i = 0; i < 3; ++i)
    if (k.cluster[i] == 0 || cfg.grid[i] % k.cluster[i] != 0)
      throw SimError("kernel " + name + " runs in clusters of " +
                     std::to_string(k.cluster[0]) + " x " +
                     std::to_string(k.cluster[1]) + " x " +
                     std::to_string(k.cluster[2]) +
                     " CTAs (.reqnctapercluster), which do not divide the "
                     "grid (" + std::to_string(cfg.grid[0]) + ", " +
                     std::to_string(cfg.grid[1]) + ", " +
                     std::to_string(cfg.grid[2]) + ")");
  if (k.cluster[0] * k.cluster[1] * k.cluster[2] > 16)
    throw SimError("kernel " + name + ": a cluster has at most 16 CTAs");
  if (args.size() != k.params.size())
    throw SimError("kernel " + name + " takes " + std::to_string(k.params.size()) +
                   " parameters, got " + std::to_string(args.size()) + " arguments");
  // Parameters and global allocations.
  GlobalMemory global;
  for (const GlobalVar &g : module.globals)
    global.allocateAt(g.address, g.init, "variable " + g.name);
  std::vector<uint8_t> params(k.paramBytes, 0);
  std::vector<uint64_t> bases(args.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    const Param &p = k.params[i];
    LaunchArg &a = args[i];
    std::string what = "argument " + std::to_string(i) + " (" + p.name + ", ." +
                       typeName(p.type) + ")";
    uint64_t bits = 0;
    switch (a.kind) {
    case LaunchArg::Buffer: {
      if (bitWidth(p.type) != 64 || !isInteger(p.type))
        throw SimError(what + ": an array needs a 64-bit pointer parameter");
      if (a.shareWith >= 0) { // a view into an earlier argument's array
        if (size_t(a.shareWith) >= i || !bases[a.shareWith])
          throw SimError(what + ": shares the array of a later argument or "
                                "of one that is not an array");
        bits = bases[a.shareWith] + a.offset;
        break;
      }
      uint64_t base = global.allocate(a.bytes, a.name.empty() ? "argument " + std::to_string(i) : a.name);
      if (a.bytes)
        std::memcpy(global.allocation(base).data.data(), a.host, a.bytes);
      bases[i] = base;
      bits = base + a.offset;
      break;
    }
    case LaunchArg::Bytes: {
      if (p.type != PType::B8 || p.size != a.value.size())
        throw SimError(what + ": " + std::to_string(a.value.size()) +
                       " bytes need a .b8 array parameter of that size");
      std::vector<uint8_t> v = a.value;
      if (a.host) {
        uint64_t base = 0;
        for (size_t j = 0; j < i && !base; ++j)
          if ((args[j].kind == LaunchArg::Buffer || args[j].kind == LaunchArg::Bytes) &&
              args[j].host == a.host && args[j].bytes == a.bytes)
            base = bases[j];
        if (!base) {
          base = global.allocate(a.bytes, a.name.empty() ? "argument " + std::to_string(i) : a.name);
          if (a.bytes)
            std::memcpy(global.allocation(base).data.data(), a.host, a.bytes);
          bases[i] = base;
        }
        if (a.addressAt + 8 > v.size())
          throw SimError(what + ": the address field lies past the bytes");
        uint64_t addr;
        std::memcpy(&addr, v.data() + a.addressAt, 8);
        addr += base;
        std::memcpy(v.data() + a.addressAt, &addr, 8);
      }
      std::memcpy(params.data() + p.offset, v.data(), v.size());
      continue;
    }
    case LaunchArg::Null:
      if (bitWidth(p.type) != 64 || !isInteger(p.type))
        throw SimError(what + ": None needs a 64-bit pointer parameter");
      bits = 0;
      break;
    case LaunchArg::Int: {
      if (!isInteger(p.type) || p.size != byteWidth(p.type))
        throw SimError(what + ": an integer argument needs an integer parameter");
      unsigned w = bitWidth(p.type);
      bool fits;
      if (a.isUnsigned)
        fits = w == 64 && !isSigned(p.type);
      else if (isSigned(p.type))
        fits = w == 64 || (a.i >= -(int64_t(1) << (w - 1)) && a.i < (int64_t(1) << (w - 1)));
      else if (isBits(p.type))
        fits = w == 64 || (a.i >= -(int64_t(1) << (w - 1)) && a.i < (int64_t(1) << w));
      else
        fits = a.i >= 0 && (w == 64 || a.i < (int64_t(1) << w));
      if (!fits)
        throw SimError(what + ": " + std::to_string(a.i) + " does not fit");
      bits = truncBits(uint64_t(a.i), w);
      break;
    }
    case LaunchArg::Float:
      if (p.type == PType::F32)
        bits = bitsF32(float(a.f));
      else if (p.type == PType::F64)
        bits = bitsF64(a.f);
      else
        throw SimError(what + ": a float argument needs an .f32 or .f64 parameter");
      break;
    }
    std::memcpy(params.data() + p.offset, &bits, byteWidth(p.type));
  }
  uint64_t sharedBytes = k.staticSharedBytes;
  if (cfg.dynamicSharedBytes &&
      __builtin_add_overflow(k.dynamicSharedOffset, cfg.dynamicSharedBytes,
                             &sharedBytes))
    sharedBytes = UINT64_MAX;
  if (sharedBytes > 228 * 1024)
    throw SimError("the kernel needs " + std::to_string(sharedBytes) +
                   " bytes of shared memory per CTA, more than 228 KiB");
  // ptxas's limit; the simulator keeps the local memory of every thread of
  // the CTAs it runs at once.
  if (k.localBytes > 512 * 1024)
    throw SimError("the kernel needs " + std::to_string(k.localBytes) +
                   " bytes of local memory per thread, more than 512 KiB");

  LaunchResult result;
  const uint32_t numWarps = (threads + 31) / 32;
  const uint64_t numCTAs = uint64_t(cfg.grid[0]) * cfg.grid[1] * cfg.grid[2];
  Limits limits;
  limits.instructionLimit = cfg.instructionLimit;
  limits.pool = cfg.instructionLimit;
  // CTAs are independent: workers take them in order from a shared counter.
  // After a failure, CTAs past the lowest failing one are skipped; every CTA
  // before it still runs, so the error reported (the lowest failing CTA's) is
  // the same whatever the number of threads.
  std::atomic<uint64_t> nextCTA{0};
  std::mutex errorMutex;
  uint64_t failedCTA = UINT64_MAX;
  std::string failure;
  std::exception_ptr failureException; // rethrown as is (DeviceAssertion)
  // What each CTA printed, written out in CTA order at the end.
  std::mutex outputMutex;
  std::map<uint64_t, std::string> outputs;
  std::atomic<uint64_t> firstFailed{UINT64_MAX};
  // One cache line apart: each worker increments its counters on every
  // instruction.
  struct alignas(64) WorkerCounters {
    Counters c;
  };
  std::vector<WorkerCounters> counters;
  auto worker = [&](Counters &counts, CTAState &cta) {
    ExecContext c{k, global, params, counts, cta,
                  {cfg.grid[0], cfg.grid[1], cfg.grid[2]},
                  {cfg.block[0], cfg.block[1], cfg.block[2]},
                  numWarps, cfg.dynamicSharedBytes};
    std::vector<Warp> warps(numWarps);
    Budget budget{&limits};
    while (!limits.stop.load(std::memory_order_relaxed)) {
      uint64_t id = nextCTA.fetch_add(1);
      if (id >= numCTAs || id > firstFailed.load())
        return;
      cta.ctaid[0] = uint32_t(id % cfg.grid[0]);
      cta.ctaid[1] = uint32_t(id / cfg.grid[0] % cfg.grid[1]);
      cta.ctaid[2] = uint32_t(id / (uint64_t(cfg.grid[0]) * cfg.grid[1]));
      try {
        cta.shared.reset(uint32_t(sharedBytes), cfg.raceCheck);
        std::fill(cta.local.begin(), cta.local.end(), 0);
        cta.output.clear();
        c.warp = nullptr;
        c.inst = nullptr;
        runCTA(c, warps, budget);
      } catch (const std::exception &e) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (id < failedCTA) {
          failedCTA = id;
          failure = e.what();
          failureException = std::current_exception();
          firstFailed.store(id);
        }
      }
      if (!cta.output.empty()) {
        std::lock_guard<std::mutex> lock(outputMutex);
        outputs[id] = std::move(cta.output);
        cta.output.clear();
      }
    }
  };
  unsigned workers = cfg.threads ? cfg.threads : std::thread::hardware_concurrency();
  workers = unsigned(std::max<uint64_t>(1, std::min<uint64_t>(workers ? workers : 1, numCTAs)));
  // Each worker keeps the registers and local memory of one CTA: up to
  // 1.5 GiB (131072 registers and 512 KiB of local memory in each of 1024
  // threads). Fewer workers keep a launch under 2 GiB of them; the results
  // do not depend on the number.
  const uint64_t perWorker =
      (k.localBytes + uint64_t(k.regs.size()) * 8) * numWarps * 32;
  if (perWorker)
    workers = unsigned(std::min<uint64_t>(
        workers, std::max<uint64_t>(1, (uint64_t(2) << 30) / perWorker)));
  counters.resize(workers);
  // Each worker's local memory, allocated here so that running out of
  // memory is an exception of this thread.
  std::vector<CTAState> ctas(workers);
  for (CTAState &cta : ctas)
    cta.local.assign(size_t(k.localBytes) * threads, 0);
  // The workers run on threads of their own (one included) while this
  // thread watches the clock and asks `cfg.interrupt` whether to stop.
  std::mutex doneMutex;
  std::condition_variable doneCond;
  unsigned running = workers;
  std::vector<std::thread> pool;
  auto stopWorkers = [&](std::string message) {
    if (limits.stop.load(std::memory_order_relaxed))
      return; // the workers may be reading the first message
    limits.stopMessage = std::move(message);
    limits.stop.store(true, std::memory_order_release);
  };
  auto joinWorkers = [&] {
    for (std::thread &t : pool)
      t.join();
  };
  bool interrupted = false;
  try {
    for (unsigned i = 0; i < workers; ++i)
      pool.emplace_back([&, i] {
        worker(counters[i].c, ctas[i]);
        std::lock_guard<std::mutex> lock(doneMutex);
        if (--running == 0)
          doneCond.notify_one();
      });
    while (true) {
      {
        std::unique_lock<std::mutex> lock(doneMutex);
        if (doneCond.wait_for(lock, std::chrono::milliseconds(20),
                              [&] { return running == 0; }))
          break;
      }
      if (limits.stop.load(std::memory_order_relaxed))
        continue; // waiting for the workers to notice
      if (cfg.interrupt && cfg.interrupt()) {
        interrupted = true;
        stopWorkers("interrupted");
      } else if (cfg.timeLimit > 0 &&
                 std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - t0)
                         .count() >= cfg.timeLimit) {
        std::ostringstream os;
        os << "the simulation ran past its wall-clock limit of "
           << cfg.timeLimit << " s (time_limit; an endless loop?)";
        stopWorkers(os.str());
      }
    }
  } catch (...) {
    // A thread that did not start or an interrupt callback that threw: the
    // running workers must stop before their state goes away.
    stopWorkers("interrupted");
    joinWorkers();
    throw;
  }
  joinWorkers();
  // What the CTAs printed, in CTA order (up to the failing CTA: later ones
  // may not have run).
  if (!outputs.empty()) {
    std::string text;
    for (auto &[id, lines] : outputs)
      if (id <= failedCTA)
        text += lines;
    if (cfg.output) {
      cfg.output(text);
    } else {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    }
  }
  if (interrupted)
    throw Interrupted();
  if (failedCTA != UINT64_MAX) {
    if (failureException)
      std::rethrow_exception(failureException);
    throw SimError(failure);
  }
  // Stopped between two CTAs, with none of them failing.
  if (limits.stop.load(std::memory_order_relaxed) && nextCTA.load() < numCTAs)
    throw SimError(limits.stopMessage);
  for (const WorkerCounters &w : counters)
    result.counters.add(w.c);
  // Copy the arrays back.
  for (size_t i = 0; i < args.size(); ++i)
    if ((args[i].kind == LaunchArg::Buffer || args[i].kind == LaunchArg::Bytes) &&
        bases[i] && args[i].writeBack && args[i].bytes)
      std::memcpy(args[i].host, global.allocation(bases[i]).data.data(), args[i].bytes);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

} // namespace tessel::gpusim
