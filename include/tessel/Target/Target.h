//===- Target.h - The seam every backend plugs into -------------*- C++ -*-===//
//
// A target is named by one string ("cpu", "cpu:x86-64-v3", "cuda:90a",
// "hip:gfx942", "sim:sm_90a"). It compiles a tile-IR module with options into
// a CompiledKernel (the binary, every stage's text, the metadata a launcher
// needs) and loads such a kernel for launching, when it can run in this
// process. The JIT, the kernel cache, the autotuner and the AOT tool only talk
// to this interface; each backend's code lives in its own folder and is
// registered once (lib/Target/Registration.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TARGET_TARGET_H
#define TESSEL_TARGET_TARGET_H

#include "tessel/Runtime/CacheEntry.h"
#include "tessel/Runtime/LaunchArgs.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::target {

/// A parsed target name: backend and architecture ("" for the host's).
struct TargetSpec {
  std::string backend; ///< cpu, cuda, hip, sim
  std::string arch;    ///< x86-64-v3, 80, 90a, gfx942, sm_90a, or ""

  /// Parses and validates the syntax of a target name; whether the backend
  /// is built in is the registry's question.
  static llvm::Expected<TargetSpec> parse(llvm::StringRef text);
  std::string str() const { return arch.empty() ? backend : backend + ":" + arch; }
};

/// The options of one compilation. The first six are Triton's launch and
/// compile options, accepted by every target (a backend ignores those it has
/// no use for, as the CPU does num_warps); `extra` holds a backend's own,
/// which the backend validates.
struct CompileOptions {
  int numWarps = 4;
  int numStages = 3; ///< the target's default where not set (toCompileOptions)
  bool numStagesSet = false;
  int numCtas = 1;
  int maxnreg = 0; ///< 0: no limit
  bool debug = false;
  bool enableFpFusion = true;
  std::map<std::string, std::string> extra;

  /// Sets one option from its name and textual value ("num_warps", "4").
  llvm::Error set(llvm::StringRef name, llvm::StringRef value);
  /// Every option, canonically ("num_warps=4,num_stages=3,..."): part of
  /// cache keys and of each compiled kernel's metadata.
  std::string str() const;
};

/// A device assertion (tl.device_assert) that failed while a kernel ran:
/// what LoadedKernel::launch throws then. The message reads
/// "FILE:LINE: FUNCTION: pid (x, y, z) idx (i, j): Assertion `MESSAGE`
/// failed (device-side assertion)", the index where the target knows the
/// element (the CPU), the thread on GPU targets.
class DeviceAssertError : public std::runtime_error {
public:
  struct Info {
    std::string kernel, message, file, function;
    int line = 0;
    /// The program; -1 where unknown.
    std::array<int64_t, 3> pid = {-1, -1, -1};
    /// The element's index (empty for a scalar, or where unknown).
    std::vector<int64_t> index;
    bool indexKnown = false;
    /// The thread that failed on GPU targets ("thread (t, 0, 0)"), else "".
    std::string thread;
  };
  explicit DeviceAssertError(Info info);
  const Info &info() const { return details; }

private:
  Info details;
};

/// A kernel compiled for a target and loaded into this process.
class LoadedKernel {
public:
  virtual ~LoadedKernel();
  /// Runs a gx * gy * gz grid; argv[i] points to runtime argument i, which
  /// args[i] describes (its type and value; for arrays, the bytes they span
  /// when needsExtents()). `stream` is the device queue to launch on (a
  /// CUstream for cuda targets; null: the default one); targets that run in
  /// this process finish before returning and ignore it. Errors are thrown
  /// as std::runtime_error naming the kernel.
  virtual void launch(int64_t gx, int64_t gy, int64_t gz, void **argv,
                      llvm::ArrayRef<runtime::LaunchArg> args,
                      void *stream) const = 0;
  /// Whether launch needs every array's extent (the simulator copies arrays
  /// into its own memory).
  virtual bool needsExtents() const { return false; }
  /// Whether the kernel writes to the process's standard output (tl.print):
  /// the caller flushes its own buffered output first, so lines keep their
  /// order.
  virtual bool printsOutput() const { return false; }
};

class Target {
public:
  explicit Target(TargetSpec spec) : targetSpec(std::move(spec)) {}
  virtual ~Target();

  const TargetSpec &spec() const { return targetSpec; }
  /// Everything about the target that changes the code it generates (for
  /// the CPU: triple, model and features), for cache keys.
  virtual std::string description() const = 0;
  /// Compiles the one kernel of `module` (tile IR; consumed). Errors carry
  /// the kernel author's source locations.
  virtual llvm::Expected<runtime::CacheEntry>
  compile(mlir::ModuleOp module, const CompileOptions &options) const = 0;
  /// `num_stages` where a kernel does not say: 3, as Triton's NVIDIA
  /// backend; AMD's targets say 2, as Triton's HIP backend.
  virtual int defaultNumStages() const { return 3; }
  /// Whether kernels compiled for this target can run in this process.
  virtual bool canRun() const = 0;
  /// Whether this compiled kernel can run in this process (its options may
  /// ask for code that does not: the CPU's explicit "features").
  virtual bool canRun(const runtime::CacheEntry &kernel) const {
    return canRun();
  }
  /// Makes a compiled kernel launchable (only where canRun(kernel)).
  virtual llvm::Expected<std::unique_ptr<LoadedKernel>>
  load(const runtime::CacheEntry &kernel) const = 0;

private:
  TargetSpec targetSpec;
};

using TargetFactory =
    std::function<llvm::Expected<std::unique_ptr<Target>>(const TargetSpec &)>;

/// Adds a backend to the registry (once, at start-up): `backend`, or
/// "backend:family" for the architectures of `backend` whose names start
/// with the letters `family` ("sim:sm", "sim:gfx").
void registerBackend(llvm::StringRef backend, TargetFactory factory);
/// The names of the backends built into this build, sorted.
std::vector<std::string> availableBackends();
/// The target named `text`, shared and kept for the life of the process. A
/// known backend that is not built in gives "not available in this build";
/// an unknown name lists the valid forms.
llvm::Expected<const Target *> getTarget(llvm::StringRef text);

} // namespace tessel::target

#endif // TESSEL_TARGET_TARGET_H
