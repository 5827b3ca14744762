//===- CPUTarget.cpp - The CPU backend behind the target seam -------------===//
#include "tessel/Target/CPU/CPUTarget.h"

#include "tessel/Conversion/TileToLoops/CPURuntime.h"
#include "tessel/Runtime/ThreadPool.h"
#include "tessel/Target/CPU/DebugRuntime.h"
#include "tessel/Target/CPU/CPUCompiler.h"
#include "tessel/Target/CPU/ObjectLoader.h"
#include "tessel/Target/Target.h"

using namespace tessel;
using namespace tessel::target;

namespace {

/// A CPU kernel linked into this process: programs run on the thread pool.
class CPUKernel : public LoadedKernel {
public:
  CPUKernel(cpu::CPUEntry entry, bool prints, bool asserts)
      : entry(entry), prints(prints), asserts(asserts) {}

  void launch(int64_t gx, int64_t gy, int64_t gz, void **argv,
              llvm::ArrayRef<runtime::LaunchArg>, void *) const override {
    int64_t total = gx * gy * gz;
    if (total == 0)
      return;
    cpu::CPUEntry fn = entry;
    if (!asserts) {
      runtime::ThreadPool::global().parallelFor(
          total, [&](int64_t begin, int64_t end) {
            fn(argv, begin, end, int32_t(gx), int32_t(gy), int32_t(gz));
          });
      return;
    }
    // Programs whose assertion fails report it and return; the launch
    // raises the lowest program's failure once every program has run.
    cpu::AssertionRecord record;
    runtime::ThreadPool::global().parallelFor(
        total, [&](int64_t begin, int64_t end) {
          cpu::AssertionScope scope(&record);
          fn(argv, begin, end, int32_t(gx), int32_t(gy), int32_t(gz));
        });
    if (auto failure = record.failure())
      throw DeviceAssertError(std::move(*failure));
  }

  bool printsOutput() const override { return prints; }

private:
  cpu::CPUEntry entry;
  bool prints, asserts;
};

class CPUTarget : public Target {
public:
  explicit CPUTarget(const TargetSpec &spec)
      : Target(spec), model{spec.arch, ""} {}

  std::string description() const override {
    return cpu::describeModel(model);
  }

  llvm::Expected<runtime::CacheEntry>
  compile(mlir::ModuleOp module, const CompileOptions &options) const override {
    // "features" (an LLVM feature string) refines the model: ahead of time.
    cpu::CPUModel withFeatures = model;
    CompileOptions rest = options;
    if (auto it = rest.extra.find("features"); it != rest.extra.end()) {
      withFeatures.features = it->second;
      if (withFeatures.cpu.empty())
        withFeatures.cpu = "generic";
      rest.extra.erase(it);
    }
    runtime::CacheEntry entry;
    entry.target = spec().str();
    if (llvm::Error err = cpu::compileModule(module, withFeatures, rest, entry))
      return std::move(err);
    entry.options = options.str();
    return entry;
  }

  bool canRun() const override { return cpu::runsOnHost(model); }

  bool canRun(const runtime::CacheEntry &kernel) const override {
    // Explicit features are for another machine, compiled ahead of time.
    return canRun() && kernel.options.find(",features=") == std::string::npos;
  }

  llvm::Expected<std::unique_ptr<LoadedKernel>>
  load(const runtime::CacheEntry &kernel) const override {
    if (!canRun(kernel))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "kernel " + kernel.name + " was compiled for another CPU (" +
              kernel.target + ") and cannot run on this one");
    std::string error;
    cpu::CPUEntry entry =
        cpu::loadCPUObject(kernel.object, kernel.entryName, error);
    if (!entry)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "loading kernel " + kernel.name +
                                         " failed: " + error);
    return std::make_unique<CPUKernel>(
        entry, cpu::objectCalls(kernel.object, kCPUPrintFunction),
        cpu::objectCalls(kernel.object, kCPUAssertFunction));
  }

private:
  cpu::CPUModel model;
};

} // namespace

void tessel::cpu::registerCPUBackend() {
  registerBackend("cpu", [](const TargetSpec &spec)
                             -> llvm::Expected<std::unique_ptr<Target>> {
    return std::make_unique<CPUTarget>(spec);
  });
}
