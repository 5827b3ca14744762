//===- Runner.cpp - A grid of workgroups of wavefronts --------------------===//
//
// The kernel argument segment is built from the metadata (explicit
// arguments from the launch, hidden ones from the grid), each wave starts
// with the SGPRs and VGPRs its kernel descriptor enables (AMDGPU's code
// object v5 ABI), and the waves of a workgroup run in turn, each until it
// reaches s_barrier or s_endpgm; a barrier opens when every wave of the
// workgroup has reached it or ended. Workgroups run one after another in
// the grid's order. Arrays are padded to whole dwords. Scratch is each
// lane's own bytes (scratch_* instructions, and gfx90a's buffer accesses
// through the private segment buffer). Device functions follow the kernel's
// code; calls jump by code address (Wave.h's codeAddress). Kernels with a
// hidden_hostcall_buffer argument get a hostcall buffer (Hostcall.h): what
// they print is written out when the launch ends, workgroup by workgroup,
// up to the failing one when it fails, as the PTX path writes it.
//
//===----------------------------------------------------------------------===//
#include "Hostcall.h"
#include "Wave.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

namespace tessel::gpusim::amdgcn {
namespace {

void put(std::vector<uint8_t> &seg, uint32_t offset, const void *p, size_t n, const std::string &kernel) {
  if (offset + n > seg.size())
    throw SimError("kernel " + kernel + ": an argument lies past its " + std::to_string(seg.size()) +
                   "-byte argument segment");
  std::memcpy(seg.data() + offset, p, n);
}

/// The bits of an explicit argument of `size` bytes.
uint64_t argumentBits(const LaunchArg &a, const KernelArg &ka, const std::string &what,
                      GlobalMemory &global, std::vector<uint64_t> &bases, size_t index) {
  switch (a.kind) {
  case LaunchArg::Buffer: {
    if (ka.kind != "global_buffer" || ka.size != 8)
      throw SimError(what + ": an array needs a pointer argument");
    if (a.shareWith >= 0) {
      if (size_t(a.shareWith) >= index || !bases[size_t(a.shareWith)])
        throw SimError(what + ": shares the array of a later argument or of one that is not an array");
      return bases[size_t(a.shareWith)] + a.offset;
    }
    // Whole dwords: LLVM makes an atomic on a 16-bit word a dword CAS loop on
    // the dword that holds it, as the hardware's allocations allow.
    uint64_t base = global.allocate((a.bytes + 3) / 4 * 4, a.name.empty() ? what : a.name);
    if (a.bytes)
      std::memcpy(global.allocation(base).data.data(), a.host, a.bytes);
    bases[index] = base;
    return base + a.offset;
  }
  case LaunchArg::Null:
    if (ka.size != 8)
      throw SimError(what + ": None needs a pointer argument");
    return 0;
  case LaunchArg::Int: {
    if (ka.kind == "global_buffer")
      throw SimError(what + ": an integer where the kernel takes a pointer");
    bool fits = ka.size == 8 || (ka.size == 4 && !a.isUnsigned && a.i >= INT32_MIN && a.i <= int64_t(UINT32_MAX)) ||
                (ka.size == 2 && a.i >= INT16_MIN && a.i <= UINT16_MAX) ||
                (ka.size == 1 && a.i >= INT8_MIN && a.i <= UINT8_MAX);
    if (!fits)
      throw SimError(what + ": " + std::to_string(a.i) + " does not fit its " + std::to_string(ka.size) +
                     "-byte argument");
    return uint64_t(a.i);
  }
  case LaunchArg::Float:
    if (ka.size == 4) {
      float f = float(a.f);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    if (ka.size == 8) {
      uint64_t b;
      std::memcpy(&b, &a.f, 8);
      return b;
    }
    throw SimError(what + ": a float needs a 4- or 8-byte argument");
  case LaunchArg::Bytes:
    break;
  }
  throw SimError(what + ": by-value byte arrays are not AMD kernel arguments");
}

struct Limits {
  const LaunchConfig &cfg;
  std::chrono::steady_clock::time_point start;
  uint64_t executed = 0;
  void check() {
    if (executed > cfg.instructionLimit)
      throw SimError("the simulation ran past its limit of " + std::to_string(cfg.instructionLimit) +
                     " wave instructions (an endless loop?)");
    if ((executed & 0xffff) != 0)
      return;
    if (cfg.interrupt && cfg.interrupt())
      throw Interrupted();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (cfg.timeLimit > 0 && seconds >= cfg.timeLimit) {
      std::ostringstream os;
      os << "the simulation ran past its wall-clock limit of " << cfg.timeLimit << " s (time_limit; an endless loop?)";
      throw SimError(os.str());
    }
  }
};

/// Runs `w` until it ends or reaches a barrier.
void runWave(Wave &w, Limits &limits) {
  const std::vector<Inst> &code = w.kernel->code;
  while (!w.done && !w.atBarrier) {
    if (w.pc >= code.size()) {
      w.inst = nullptr;
      w.fail("the wave ran past the end of " + w.kernel->name + " without s_endpgm");
    }
    const Inst &I = code[w.pc];
    w.inst = &I;
    w.pc += 1;
    ++limits.executed;
    ++w.counters->warpInstructions;
    w.counters->threadInstructions += uint64_t(__builtin_popcountll(w.exec));
    ++w.counters->byClass[size_t(I.cls)];
    I.run(w, I);
    limits.check();
  }
}

} // namespace

LaunchResult launch(const Module &module, const std::string &name, const LaunchConfig &cfg,
                    std::vector<LaunchArg> &args) {
  auto t0 = std::chrono::steady_clock::now();
  const Kernel *kp = module.find(name);
  if (!kp) {
    std::string names;
    for (const Kernel &k : module.kernels)
      names += (names.empty() ? "" : ", ") + k.name;
    throw SimError("no kernel named '" + name + "' in the AMDGCN (kernels: " + (names.empty() ? "none" : names) + ")");
  }
  const Kernel &k = *kp;
  uint32_t threads = cfg.block[0] * cfg.block[1] * cfg.block[2];
  if (threads == 0 || threads > k.maxWorkgroupSize)
    throw SimError("kernel " + name + " runs workgroups of 1 to " + std::to_string(k.maxWorkgroupSize) +
                   " work-items, not " + std::to_string(threads));
  for (int i = 0; i < 3; ++i)
    if (cfg.grid[i] == 0)
      throw SimError("grid dimensions must be positive");
  if (k.privateBytes > 128 * 1024)
    throw SimError("kernel " + name + " uses " + std::to_string(k.privateBytes) +
                   " bytes of scratch per lane, more than the simulator keeps (128 KiB)");
  uint64_t ldsLimit = k.target == "gfx950" ? 160 * 1024 : 64 * 1024;
  uint64_t ldsBytes = uint64_t(k.ldsBytes) + cfg.dynamicSharedBytes;
  if (ldsBytes > ldsLimit)
    throw SimError("kernel " + name + " needs " + std::to_string(ldsBytes) + " bytes of LDS per workgroup, more than " +
                   std::to_string(ldsLimit));
  GlobalMemory global;
  for (const DataObject &d : module.data)
    if (!d.bytes.empty())
      global.allocateAt(d.address, d.bytes, d.name);
  // The argument segment: explicit arguments in order, then hidden ones.
  std::vector<uint8_t> segment(std::max<uint32_t>(k.kernargBytes, 8), 0);
  std::vector<uint64_t> bases(args.size(), 0);
  size_t next = 0;
  const uint32_t numWaves = (threads + kLanes - 1) / kLanes;
  std::unique_ptr<Hostcall> host;
  for (const KernelArg &ka : k.args) {
    uint64_t bits = 0;
    if (ka.kind.compare(0, 7, "hidden_") == 0) {
      const std::string h = ka.kind.substr(7);
      if (h == "block_count_x" || h == "block_count_y" || h == "block_count_z")
        bits = cfg.grid[h.back() - 'x'];
      else if (h == "group_size_x" || h == "group_size_y" || h == "group_size_z")
        bits = cfg.block[h.back() - 'x'];
      else if (h == "grid_dims")
        bits = cfg.grid[2] > 1 || cfg.block[2] > 1 ? 3 : cfg.grid[1] > 1 || cfg.block[1] > 1 ? 2 : 1;
      else if (h == "dynamic_lds_size")
        bits = cfg.dynamicSharedBytes;
      else if (h == "hostcall_buffer") {
        host = std::make_unique<Hostcall>(global, numWaves);
        bits = host->buffer();
      }
      // The rest (offsets, remainders of uniform grids, queue and heap
      // pointers) are 0: the simulator has no queue or heap.
      put(segment, ka.offset, &bits, std::min<uint32_t>(ka.size, 8), name);
      continue;
    }
    if (next >= args.size())
      throw SimError("kernel " + name + " takes more arguments than the " + std::to_string(args.size()) + " given");
    std::string what = "argument " + std::to_string(next);
    bits = argumentBits(args[next], ka, what, global, bases, next);
    put(segment, ka.offset, &bits, std::min<uint32_t>(ka.size, 8), name);
    ++next;
  }
  if (next != args.size())
    throw SimError("kernel " + name + " takes " + std::to_string(next) + " arguments, got " +
                   std::to_string(args.size()));
  // Scalar loads read the segment in aligned blocks of up to 64 bytes, past
  // its end; the runtime's allocation covers them (the padding reads 0).
  uint64_t kernarg = global.allocate((segment.size() + 63) / 64 * 64 + 64, "the kernel argument segment");
  std::memcpy(global.allocation(kernarg).data.data(), segment.data(), segment.size());
  // The dispatch packet (hsa_kernel_dispatch_packet_t), for kernels that ask for it.
  uint64_t packet = 0;
  if (k.dispatchPtr) {
    std::vector<uint8_t> p(64, 0);
    for (int i = 0; i < 3; ++i) {
      uint16_t size = uint16_t(cfg.block[i]);
      uint32_t grid = cfg.grid[i] * cfg.block[i];
      std::memcpy(p.data() + 4 + 2 * i, &size, 2);
      std::memcpy(p.data() + 12 + 4 * i, &grid, 4);
    }
    uint32_t group = uint32_t(ldsBytes);
    std::memcpy(p.data() + 28, &group, 4);
    std::memcpy(p.data() + 40, &kernarg, 8);
    packet = global.allocate(64, "the dispatch packet");
    std::memcpy(global.allocation(packet).data.data(), p.data(), 64);
  }

  LaunchResult result;
  Limits limits{cfg, t0};
  std::vector<Wave> waves(numWaves);
  Workgroup group;
  for (int i = 0; i < 3; ++i)
    group.size[i] = cfg.block[i];
  // What the kernel printed, written when the launch ends or fails.
  auto writeOutput = [&] {
    std::string text = host ? host->output() : std::string();
    if (text.empty())
      return;
    if (cfg.output) {
      cfg.output(text);
    } else {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    }
  };
  try {
    for (uint32_t gz = 0; gz < cfg.grid[2]; ++gz)
      for (uint32_t gy = 0; gy < cfg.grid[1]; ++gy)
        for (uint32_t gx = 0; gx < cfg.grid[0]; ++gx) {
          group.id[0] = gx;
          group.id[1] = gy;
          group.id[2] = gz;
          group.lds.assign(ldsBytes, 0);
          if (host)
            host->startWorkgroup();
          for (uint32_t wi = 0; wi < numWaves; ++wi) {
            Wave &w = waves[wi];
            w = Wave();
            w.kernel = &k;
            w.group = &group;
            w.global = &global;
            w.counters = &result.counters;
            w.host = host.get();
            w.id = wi;
            w.scratch.assign(size_t(k.privateBytes) * kLanes, 0);
            unsigned s = 0;
            auto pair = [&](uint64_t v) {
              w.s[s++] = uint32_t(v);
              w.s[s++] = uint32_t(v >> 32);
            };
            // Scratch: the private segment buffer is a resource the memory
            // ops map to the lane's private bytes (flat scratch, its
            // init and the wave offset hold 0: each wave's scratch is its
            // own); the simulator has no queue.
            if (k.privateSegmentBuffer) {
              pair(kPrivateBase | uint64_t(0) << 48);
              w.s[s++] = 0xffffffffu; // num_records: the bounds are the lane's
              w.s[s++] = 0;
            }
            if (k.dispatchPtr)
              pair(packet);
            if (k.queuePtr)
              pair(0);
            if (k.kernargSegmentPtr)
              pair(kernarg);
            if (k.dispatchId)
              pair(0);
            if (k.flatScratchInit)
              pair(0);
            if (k.privateSegmentSize)
              w.s[s++] = 0;
            for (uint32_t i = 0; i < k.kernargPreloadLength; ++i) {
              uint32_t at = (k.kernargPreloadOffset + i) * 4, v = 0;
              if (at + 4 <= segment.size())
                std::memcpy(&v, segment.data() + at, 4);
              w.s[s++] = v;
            }
            if (s != k.userSgprCount)
              throw SimError("kernel " + name + ": its descriptor enables " + std::to_string(s) +
                             " user SGPRs but says .amdhsa_user_sgpr_count " + std::to_string(k.userSgprCount));
            for (int i = 0; i < 3; ++i)
              if (k.workgroupId[i])
                w.s[s++] = group.id[i];
            if (k.workgroupInfo)
              w.s[s++] = 0;
            if (k.privateSegmentWaveOffset)
              w.s[s++] = 0; // each wave's scratch is its own

            for (int lane = 0; lane < kLanes; ++lane) {
              uint32_t item = wi * kLanes + uint32_t(lane);
              if (item >= threads)
                continue;
              w.exec |= uint64_t(1) << lane;
              uint32_t x = item % cfg.block[0], y = item / cfg.block[0] % cfg.block[1],
                       z = item / (cfg.block[0] * cfg.block[1]);
              w.v[0][lane] = x | (k.workitemIdMode >= 1 ? y << 10 : 0) | (k.workitemIdMode >= 2 ? z << 20 : 0);
            }
          }
          ++result.counters.ctas;
          result.counters.warps += numWaves;
          // Each wave runs to its next barrier; the barrier opens when every
          // wave has reached it or ended.
          while (true) {
            bool progress = false, allDone = true;
            for (Wave &w : waves) {
              if (w.done || w.atBarrier)
                continue;
              runWave(w, limits);
              progress = true;
            }
            for (Wave &w : waves)
              allDone = allDone && w.done;
            if (allDone)
              break;
            bool allArrived = true;
            for (Wave &w : waves)
              allArrived = allArrived && (w.done || w.atBarrier);
            if (allArrived) {
              for (Wave &w : waves)
                w.atBarrier = false;
              ++result.counters.barriers;
            } else if (!progress) {
              throw SimError("the waves of workgroup (" + std::to_string(gx) + "," + std::to_string(gy) + "," +
                             std::to_string(gz) + ") cannot make progress");
            }
          }
        }
  } catch (...) {
    writeOutput();
    throw;
  }
  writeOutput();
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == LaunchArg::Buffer && bases[i] && args[i].writeBack && args[i].bytes)
      std::memcpy(args[i].host, global.allocation(bases[i]).data.data(), args[i].bytes);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

} // namespace tessel::gpusim::amdgcn
