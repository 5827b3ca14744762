//===- NVIDIATarget.cpp - The cuda and sim backends ----------------------===//
//
// Both compile tile IR the same way: layouts (convert-tile-to-tilegpu), the
// per-thread lowering to NVVM, LLVM's NVPTX backend, then ptxas for a cubin
// and the resources a program needs. `cuda:<arch>` kernels run on a GPU
// through the CUDA driver (CudaKernel); `sim:sm_<arch>` kernels run their
// PTX in Tessel's simulator, arrays copied in and out.
//
//===----------------------------------------------------------------------===//
#include "tessel/NVIDIA/NVIDIATarget.h"

#include "tessel/Analysis/LaunchChecks.h"
#include "tessel/Analysis/PointerRoots.h"
#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/Transforms/Passes.h"
#include "tessel/Dialect/TileGPU/Transforms/TensorMapArguments.h"
#include "tessel/GPUSim/Error.h"
#include "tessel/GPUSim/Launch.h"
#include "tessel/GPUSim/Program.h"
#include "tessel/GPUSim/TensorMap.h"
#include "tessel/Target/SimArguments.h"
#include "tessel/NVIDIA/CudaKernel.h"
#include "tessel/NVIDIA/PTXCompiler.h"
#include "tessel/NVIDIA/Passes.h"
#include "tessel/NVIDIA/TensorMapSpec.h"
#include "tessel/Target/Diagnostics.h"
#include "tessel/Target/Target.h"
#include "tessel/Target/TilePipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <stdexcept>

using namespace mlir;
using namespace tessel;
using namespace tessel::target;

namespace {

std::string print(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

llvm::Error failWith(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

/// Shared memory one program may use (bytes, with the opt-in to more than
/// 48 KiB): sm_75 64 KiB, sm_80/87 163 KiB, sm_86/89/120 99 KiB, sm_90/100
/// 227 KiB.
int64_t sharedLimit(int sm) {
  if (sm == 75)
    return 64 * 1024;
  if (sm == 80 || sm == 87)
    return 163 * 1024;
  if (sm == 90 || sm == 100)
    return 227 * 1024;
  return 99 * 1024;
}

/// "launch" stage: what a launcher needs besides the binary.
std::string launchStage(int numWarps, int numCtas, int64_t shared,
                        int registers,
                        llvm::ArrayRef<nvidia::TensorMapSpec> maps) {
  std::string text = "num_warps=" + std::to_string(numWarps) +
                     "\nnum_ctas=" + std::to_string(numCtas) +
                     "\nshared=" + std::to_string(shared) +
                     "\nregisters=" + std::to_string(registers) + "\n";
  for (const nvidia::TensorMapSpec &map : maps)
    text += map.str() + "\n";
  return text;
}

/// The tensor maps a kernel takes: its parameters marked
/// `tilegpu.tensor_map` (tilegpu-tensor-maps, tilegpu-pipeline), in order.
std::vector<nvidia::TensorMapSpec> tensorMapsOf(func::FuncOp kernel) {
  std::vector<nvidia::TensorMapSpec> maps;
  SmallVector<DictionaryAttr> list;
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
    if (DictionaryAttr map = tilegpu::tensorMapOf(kernel, i))
      list.push_back(map);
  for (DictionaryAttr entry : list) {
    nvidia::TensorMapSpec map;
    map.arg = unsigned(cast<IntegerAttr>(entry.get("arg")).getInt());
    auto box = cast<DenseI64ArrayAttr>(entry.get("box")).asArrayRef();
    map.box.assign(box.begin(), box.end());
    map.nan = cast<BoolAttr>(entry.get("nan")).getValue();
    map.swizzle = int32_t(cast<IntegerAttr>(entry.get("swizzle")).getInt());
    Type t = cast<TypeAttr>(entry.get("element")).getValue();
    using E = nvidia::TensorMapElement;
    if (t.isF16())
      map.element = E::F16;
    else if (t.isBF16())
      map.element = E::BF16;
    else if (t.isF32())
      map.element = E::F32;
    else if (t.isF64())
      map.element = E::F64;
    else if (t.getIntOrFloatBitWidth() <= 8)
      map.element = E::U8; // i1, i8, 8-bit floats: moved as bytes
    else if (t.getIntOrFloatBitWidth() == 16)
      map.element = E::U16;
    else if (t.getIntOrFloatBitWidth() == 32)
      map.element = E::S32;
    else
      map.element = E::S64;
    maps.push_back(std::move(map));
  }
  return maps;
}

/// The tensor maps of a compiled kernel's launch stage.
std::vector<nvidia::TensorMapSpec> tensorMapsOf(const runtime::CacheEntry &entry) {
  std::vector<nvidia::TensorMapSpec> maps;
  for (const auto &[stage, text] : entry.stages)
    if (stage == "launch")
      for (llvm::StringRef line : llvm::split(llvm::StringRef(text), '\n'))
        if (auto map = nvidia::TensorMapSpec::parse(line))
          maps.push_back(std::move(*map));
  return maps;
}

int64_t launchValue(const runtime::CacheEntry &entry, llvm::StringRef key) {
  for (const auto &[stage, text] : entry.stages)
    if (stage == "launch")
      for (llvm::StringRef line : llvm::split(llvm::StringRef(text), '\n')) {
        auto [k, v] = line.split('=');
        int64_t value;
        if (k == key && !v.getAsInteger(10, value))
          return value;
      }
  return -1;
}

llvm::StringRef stageText(const runtime::CacheEntry &entry,
                          llvm::StringRef name) {
  for (const auto &[stage, text] : entry.stages)
    if (stage == name)
      return text;
  return {};
}

/// How LLVM writes the type of an element of `t` after the lowering.
std::string llvmTypeName(Type t) {
  t = getElementTypeOrSelf(t);
  if (isa<tile::PointerType>(t))
    return "ptr addrspace(1)";
  if (t.isF16())
    return "half";
  if (t.isBF16())
    return "bfloat";
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (tile::isFP8Type(t))
    return "i8";
  return "i" + std::to_string(t.getIntOrFloatBitWidth());
}

/// Checks that each function the kernel calls (tl.extern_elementwise) can be
/// linked with the types it is called with: libdevice's (`__nv_*`), or one of
/// the LLVM bitcode library at the call's path. An error at each call that
/// cannot; the other libraries to link are added to `libraries`.
LogicalResult checkExternCalls(ModuleOp module,
                               std::vector<std::string> &libraries) {
  bool ok = true;
  module.walk([&](tile::ExternElementwiseOp op) {
    std::string symbol = op.getSymbol().str();
    bool libdevice = llvm::StringRef(symbol).starts_with("__nv_");
    std::string path = libdevice ? "" : op.getLibpath().str();
    std::string library =
        libdevice ? "libdevice"
                  : (op.getLibname().empty() ? path : op.getLibname().str());
    if (!libdevice && path.empty()) {
      op.emitError("extern_elementwise: ")
          << symbol << " is not a libdevice function (__nv_*), and no "
          << "library path (lib_path) says where it is";
      ok = false;
      return;
    }
    auto type = nvidia::libraryFunctionType(path, symbol);
    if (!type) {
      op.emitError("extern_elementwise: ") << llvm::toString(type.takeError());
      ok = false;
      return;
    }
    std::string called = llvmTypeName(op.getType()) + " (";
    for (auto [i, arg] : llvm::enumerate(op.getArgs()))
      called += (i ? ", " : "") + llvmTypeName(arg.getType());
    called += ")";
    if (!*type) {
      op.emitError("extern_elementwise: ")
          << library << " has no function '" << symbol << "'";
      ok = false;
    } else if (**type != called) {
      op.emitError("extern_elementwise: ")
          << symbol << " of " << library << " is " << **type
          << ", called as " << called;
      ok = false;
    } else if (!libdevice && !llvm::is_contained(libraries, path)) {
      libraries.push_back(path);
    }
  });
  return success(ok);
}

/// Compiles the kernel of `module` to PTX for sm_<sm>[a].
llvm::Error compileNVIDIA(ModuleOp module, int sm, bool archSpecific,
                          const CompileOptions &options,
                          runtime::CacheEntry &result) {
  for (const auto &[name, value] : options.extra)
    return failWith("unknown compile option '" + name +
                    "' for the NVIDIA targets");
  if (options.numWarps < 1 || options.numWarps > 32 ||
      (options.numWarps & (options.numWarps - 1)))
    return failWith("num_warps must be a power of two from 1 to 32, got " +
                    llvm::Twine(options.numWarps));
  std::string arch = "sm_" + std::to_string(sm) + (archSpecific ? "a" : "");
  // A program's CTAs form a thread block cluster: at most 8 (the portable
  // cluster size), on sm_90 and newer.
  if (options.numCtas < 1 || options.numCtas > 8 ||
      (options.numCtas & (options.numCtas - 1)))
    return failWith("num_ctas must be 1, 2, 4 or 8, got " +
                    llvm::Twine(options.numCtas));
  if (options.numCtas > 1 && sm < 90)
    return failWith("num_ctas=" + llvm::Twine(options.numCtas) +
                    " runs a program on a thread block cluster, which " + arch +
                    " does not have (sm_90 and newer do): use num_ctas=1");
  MLIRContext *ctx = module.getContext();
  DialectRegistry registry;
  registry.insert<tilegpu::TileGPUDialect, LLVM::LLVMDialect, NVVM::NVVMDialect,
                  cf::ControlFlowDialect>();
  ctx->appendDialectRegistry(registry);
  ctx->loadAllAvailableDialects();
  DiagnosticCapture diagnostics(ctx);

  func::FuncOp kernel;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->hasAttr("tile.kernel"))
      kernel = fn;
  if (!kernel)
    return diagnostics.fail("the module has no kernel function");
  result.name = kernel.getName().str();
  result.entryName = result.name;
  for (unsigned i : writtenArguments(kernel))
    result.writes.push_back(i);
  result.checks = launchChecks(kernel);
  result.stages.push_back({"ttir", print(module)});
  std::vector<std::string> libraries;
  if (failed(checkExternCalls(module, libraries)))
    return diagnostics.fail("calling external functions failed");

  PassManager toGPU(ctx);
  TilePipelineOptions tileOptions;
  tileOptions.nativeFP8 = sm >= 89;
  tileOptions.nativeIntToBF16 = sm >= 90; // cvt.rn.bf16.s32 / .s64
  tileOptions.tensorMaps = sm >= 90; // TMA
  // Warpgroup MMA's pipeline slots filled by TMA.
  tileOptions.pipelinedTensorMaps =
      sm == 90 && archSpecific && options.numWarps % 4 == 0;
  tileOptions.numStages = options.numStages;
  tileOptions.numCtas = options.numCtas;
  buildTilePipeline(toGPU, tileOptions);
  ConvertTileToTileGPUOptions layoutOptions;
  layoutOptions.numWarps = options.numWarps;
  layoutOptions.computeCapability = sm;
  layoutOptions.archSpecific = archSpecific; // wgmma needs sm_90a
  toGPU.addPass(createConvertTileToTileGPU(layoutOptions));
  toGPU.addPass(createCanonicalizerPass());
  toGPU.addNestedPass<func::FuncOp>(tilegpu::createTileGPURemoveLayoutConversions());
  toGPU.addPass(createCanonicalizerPass());
  toGPU.addPass(createCSEPass());
  toGPU.addPass(createLoopInvariantCodeMotionPass());
  {
    // Dot operands of K loops prefetched into num_stages slots (a loop's own
    // tl.range(num_stages=...) first): cp.async, or the copy engine for
    // host-made descriptors' blocks (sm_90a).
    tilegpu::TileGPUPipelineOptions pipelineOptions;
    pipelineOptions.numStages = options.numStages;
    pipelineOptions.sharedLimit = sharedLimit(sm);
    toGPU.addNestedPass<func::FuncOp>(
        tilegpu::createTileGPUPipeline(pipelineOptions));
    toGPU.addPass(createCanonicalizerPass());
  }
  // Host-made descriptors' other loads and stores left for TMA go through
  // tensor maps of their own.
  toGPU.addPass(tilegpu::createTileGPUTensorMaps());
  // Loop-invariant dot operands (attention's Q) staged in shared memory once.
  tilegpu::TileGPUHoistDotOperandsOptions hoistOptions;
  hoistOptions.sharedLimit = sharedLimit(sm);
  toGPU.addNestedPass<func::FuncOp>(
      tilegpu::createTileGPUHoistDotOperands(hoistOptions));
  toGPU.addNestedPass<func::FuncOp>(tilegpu::createTileGPUMemoryBarriers());
  if (failed(toGPU.run(module)))
    return diagnostics.fail("assigning GPU layouts failed");
  result.stages.push_back({"ttgir", print(module)});
  std::vector<nvidia::TensorMapSpec> tensorMaps = tensorMapsOf(kernel);

  PassManager toLLVM(ctx);
  nvidia::ConvertTileGPUToNVVMOptions nvvmOptions;
  nvvmOptions.numCtas = options.numCtas;
  nvvmOptions.computeCapability = sm;
  toLLVM.addPass(nvidia::createConvertTileGPUToNVVM(nvvmOptions));
  toLLVM.addPass(createCanonicalizerPass());
  toLLVM.addPass(createCSEPass());
  if (failed(toLLVM.run(module)))
    return diagnostics.fail("lowering to NVVM failed");
  // maxnreg bounds the kernel's registers (.maxnreg on the .entry, as
  // Triton writes it; ptxas gets --maxrregcount too), not its functions'.
  if (options.maxnreg > 0)
    if (auto entry = module.lookupSymbol<LLVM::LLVMFuncOp>(result.name))
      entry->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                     IntegerAttr::get(IntegerType::get(ctx, 32),
                                      options.maxnreg));
  int64_t shared = 0;
  if (auto attr = module->getAttrOfType<IntegerAttr>("tilegpu.shared"))
    shared = attr.getInt();
  module->removeAttr("tilegpu.shared");
  result.stages.push_back({"llir", print(module)});
  if (shared > sharedLimit(sm))
    return failWith("kernel " + result.name + " needs " + llvm::Twine(shared) +
                    " bytes of shared memory per program; " + arch +
                    " has " + llvm::Twine(sharedLimit(sm)) +
                    ": use smaller blocks");

  std::string llvmIR, ptx;
  if (llvm::Error err =
          nvidia::translateToPTX(module, arch, options.enableFpFusion, llvmIR,
                                 ptx, libraries))
    return err;
  result.stages.push_back({"llvmir", std::move(llvmIR)});
  result.stages.push_back({"ptx", ptx});
  int registers = 0;
  std::string ptxas = nvidia::ptxasPath();
  if (!ptxas.empty()) {
    auto assembled = nvidia::runPtxas(ptxas, ptx, arch, options.maxnreg);
    if (!assembled)
      return assembled.takeError();
    registers = assembled->registers;
    if (assembled->staticSharedBytes + shared > sharedLimit(sm))
      return failWith("kernel " + result.name + " needs " +
                      llvm::Twine(assembled->staticSharedBytes + shared) +
                      " bytes of shared memory per program; " + arch +
                      " has " + llvm::Twine(sharedLimit(sm)));
    // The report without its timing line: the same kernel gives the same
    // cache entry, byte for byte.
    std::string report;
    for (llvm::StringRef line : llvm::split(llvm::StringRef(assembled->log), '\n'))
      if (!line.contains("Compile time"))
        report += line.str() + "\n";
    result.stages.push_back({"ptxas", report});
    result.object = std::move(assembled->cubin);
  } else {
    result.object = ptx; // the driver compiles PTX itself
  }
  result.stages.push_back(
      {"launch", launchStage(options.numWarps, options.numCtas, shared,
                             registers, tensorMaps)});
  result.entryName = result.name;
  return llvm::Error::success();
}

/// "80" / "90a" / "sm_90a" -> (80, false) / (90, true).
std::pair<int, bool> parseArch(llvm::StringRef arch) {
  arch.consume_front("sm_");
  bool specific = arch.consume_back("a");
  int sm = 0;
  arch.getAsInteger(10, sm);
  return {sm, specific};
}

class CudaTarget : public Target {
public:
  explicit CudaTarget(const TargetSpec &spec) : Target(spec) {
    std::tie(sm, archSpecific) = parseArch(spec.arch);
  }
  std::string description() const override {
    return "cuda:sm_" + std::to_string(sm) + (archSpecific ? "a" : "");
  }
  llvm::Expected<runtime::CacheEntry>
  compile(ModuleOp module, const CompileOptions &options) const override {
    runtime::CacheEntry entry;
    entry.target = spec().str();
    if (llvm::Error err = compileNVIDIA(module, sm, archSpecific, options, entry))
      return std::move(err);
    entry.options = options.str();
    return entry;
  }
  bool canRun() const override {
    static const bool available = nvidia::cudaDriverAvailable();
    return available;
  }
  llvm::Expected<std::unique_ptr<LoadedKernel>>
  load(const runtime::CacheEntry &kernel) const override {
    nvidia::CudaLaunchData data;
    data.sm = sm;
    data.archSpecific = archSpecific;
    data.numWarps = int(launchValue(kernel, "num_warps"));
    data.numCtas = int(launchValue(kernel, "num_ctas"));
    data.sharedBytes = launchValue(kernel, "shared");
    data.tensorMaps = tensorMapsOf(kernel);
    llvm::StringRef ptx = stageText(kernel, "ptx");
    data.waits = ptx.contains(" vprintf") || ptx.contains(" __assertfail");
    if (data.numWarps < 1 || data.numCtas < 1 || data.sharedBytes < 0)
      return failWith("kernel " + kernel.name + " has no launch data");
    return nvidia::loadCudaKernel(kernel, data);
  }

private:
  int sm = 80;
  bool archSpecific = false;
};

/// A kernel's PTX run in the simulator.
class SimKernel : public LoadedKernel {
public:
  SimKernel(gpusim::Module module, std::string name, int numWarps,
            int numCtas, int64_t shared,
            std::vector<nvidia::TensorMapSpec> tensorMaps)
      : module(std::move(module)), name(std::move(name)), numWarps(numWarps),
        numCtas(numCtas), shared(shared), tensorMaps(std::move(tensorMaps)) {}

  bool needsExtents() const override { return true; }

  void launch(int64_t gx, int64_t gy, int64_t gz, void **argv,
              llvm::ArrayRef<runtime::LaunchArg> args,
              void * /*stream*/) const override {
    gpusim::LaunchConfig config;
    config.grid[0] = uint32_t(gx * numCtas); // programs are clusters along x
    config.grid[1] = uint32_t(gy);
    config.grid[2] = uint32_t(gz);
    config.block[0] = uint32_t(32 * numWarps);
    config.dynamicSharedBytes = uint32_t(shared);
    llvm::Expected<SimArguments> converted = simArguments(name, args);
    if (!converted)
      throw std::runtime_error(llvm::toString(converted.takeError()));
    SimArguments &sim = *converted;
    std::vector<gpusim::LaunchArg> &simArgs = sim.args;
    const std::vector<size_t> &owner = sim.owner;
    const std::vector<uint64_t> &lo = sim.lo;
    // Tensor maps follow the runtime arguments: the simulator's encoding,
    // the base's address relative to its array's allocation.
    for (const nvidia::TensorMapSpec &spec : tensorMaps) {
      auto view = nvidia::tensorMapView(spec, args);
      if (!view)
        throw std::runtime_error("kernel " + name + ": " +
                                 llvm::toString(view.takeError()));
      size_t o = owner[spec.arg];
      gpusim::LaunchArg map;
      map.kind = gpusim::LaunchArg::Bytes;
      map.name = "tensor map of '" + args[spec.arg].name.str() + "'";
      map.value.resize(gpusim::kTensorMapBytes);
      gpusim::encodeTensorMap(map.value.data(), view->address - lo[o],
                              simElementType(spec.element),
                              nvidia::swizzleMode(spec.swizzle),
                              spec.nan, view->dims, view->strides, view->box);
      map.host = reinterpret_cast<void *>(lo[o]);
      map.bytes = simArgs[o].bytes;
      map.addressAt = gpusim::tensormap::Address;
      simArgs.push_back(std::move(map));
    }
    try {
      gpusim::launch(module, name, config, simArgs);
    } catch (const gpusim::DeviceAssertion &e) {
      // The program is the CTA's cluster (programs are clusters along x).
      DeviceAssertError::Info info;
      info.kernel = name;
      info.message = e.message;
      info.file = e.file;
      info.line = int(e.line);
      info.function = e.function;
      info.pid = {int64_t(e.ctaid[0] / uint32_t(numCtas)), int64_t(e.ctaid[1]),
                  int64_t(e.ctaid[2])};
      info.thread = "thread (" + std::to_string(e.tid[0]) + ", " +
                    std::to_string(e.tid[1]) + ", " + std::to_string(e.tid[2]) +
                    ")";
      if (numCtas > 1)
        info.thread += " of CTA " + std::to_string(e.ctaid[0] % numCtas);
      throw DeviceAssertError(std::move(info));
    } catch (const gpusim::SimError &e) {
      throw std::runtime_error("kernel " + name + " (simulated): " + e.what());
    }
  }

  bool printsOutput() const override {
    const gpusim::Kernel *kernel = module.find(name);
    return kernel && kernel->prints;
  }

private:
  /// tensormap.replace's .elemtype numbering (TensorMap.h).
  static unsigned simElementType(nvidia::TensorMapElement e) {
    using E = nvidia::TensorMapElement;
    switch (e) {
    case E::U8: return 0;
    case E::U16: return 1;
    case E::S32: return 3;
    case E::S64: return 5;
    case E::F16: return 6;
    case E::F32: return 7;
    case E::F64: return 9;
    case E::BF16: return 10;
    }
    return 0;
  }

  gpusim::Module module;
  std::string name;
  int numWarps;
  int numCtas;
  int64_t shared;
  std::vector<nvidia::TensorMapSpec> tensorMaps;
};

class SimTarget : public Target {
public:
  explicit SimTarget(const TargetSpec &spec) : Target(spec) {
    std::tie(sm, archSpecific) = parseArch(spec.arch);
  }
  std::string description() const override {
    return "sim:sm_" + std::to_string(sm) + (archSpecific ? "a" : "");
  }
  llvm::Expected<runtime::CacheEntry>
  compile(ModuleOp module, const CompileOptions &options) const override {
    runtime::CacheEntry entry;
    entry.target = spec().str();
    if (llvm::Error err = compileNVIDIA(module, sm, archSpecific, options, entry))
      return std::move(err);
    entry.options = options.str();
    return entry;
  }
  bool canRun() const override { return true; }
  llvm::Expected<std::unique_ptr<LoadedKernel>>
  load(const runtime::CacheEntry &kernel) const override {
    llvm::StringRef ptx = stageText(kernel, "ptx");
    int64_t warps = launchValue(kernel, "num_warps");
    int64_t ctas = launchValue(kernel, "num_ctas");
    int64_t shared = launchValue(kernel, "shared");
    if (ptx.empty() || warps < 1 || ctas < 1 || shared < 0)
      return failWith("kernel " + kernel.name + " has no PTX or launch data");
    try {
      gpusim::Module module = gpusim::parsePTX(ptx.str());
      return std::make_unique<SimKernel>(std::move(module), kernel.entryName,
                                         int(warps), int(ctas), shared,
                                         tensorMapsOf(kernel));
    } catch (const gpusim::SimError &e) {
      return failWith("kernel " + kernel.name +
                      ": the simulator cannot run its PTX: " + e.what());
    }
  }

private:
  int sm = 80;
  bool archSpecific = false;
};

/// The architectures Tessel compiles for: those ptxas 13 assembles (Turing
/// and newer), "a" only where the architecture has arch-specific features.
llvm::Error checkArch(const TargetSpec &spec) {
  auto [sm, specific] = parseArch(spec.arch);
  static const int kSupported[] = {75, 80, 86, 87, 89, 90, 100, 120};
  bool known = llvm::is_contained(kSupported, sm);
  if (known && (!specific || sm >= 90))
    return llvm::Error::success();
  std::string prefix = spec.backend == "sim" ? "sim:sm_" : "cuda:";
  return failWith("target '" + spec.str() +
                  "' is not an architecture Tessel compiles for: use " +
                  prefix + "75, " + prefix + "80, " + prefix + "86, " +
                  prefix + "87, " + prefix + "89, " + prefix + "90a, " +
                  prefix + "100a or " + prefix + "120a (or 90, 100, 120 "
                  "without the arch-specific features)");
}

} // namespace

void nvidia::registerNVIDIABackends() {
  registerBackend("cuda", [](const TargetSpec &spec)
                              -> llvm::Expected<std::unique_ptr<Target>> {
    if (llvm::Error err = checkArch(spec))
      return std::move(err);
    return std::make_unique<CudaTarget>(spec);
  });
  registerBackend("sim:sm", [](const TargetSpec &spec)
                             -> llvm::Expected<std::unique_ptr<Target>> {
    if (llvm::Error err = checkArch(spec))
      return std::move(err);
    return std::make_unique<SimTarget>(spec);
  });
}
