//===- AMDTarget.cpp - The hip backend -----------------------------------===//
//
// Tile IR for AMD's CDNA GPUs: layouts for wave64 (convert-tile-to-tilegpu
// with 64 threads per warp), the per-thread lowering to ROCDL, LLVM's AMDGPU
// backend with the ROCm device libraries, and an hsaco linked by LLD in this
// process. Kernels compile on any machine; they run where a HIP runtime and
// a GPU are (HipKernel).
//
//===----------------------------------------------------------------------===//
#include "tessel/AMD/AMDTarget.h"
#include "tessel/AMD/AMDTargetInfo.h"

#include "tessel/AMD/HSACOCompiler.h"
#include "tessel/AMD/HipDriver.h"
#include "tessel/AMD/HipKernel.h"
#include "tessel/AMD/Passes.h"
#include "tessel/Analysis/LaunchChecks.h"
#include "tessel/Analysis/PointerRoots.h"
#include "tessel/Conversion/Passes.h"
#include "tessel/Conversion/TileToLoops/ExternFunctions.h"
#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/Transforms/Passes.h"
#include "tessel/GPUSim/AMDGCN.h"
#include "tessel/GPUSim/Error.h"
#include "tessel/Target/Diagnostics.h"
#include "tessel/Target/SimArguments.h"
#include "tessel/Target/Target.h"
#include "tessel/Target/TilePipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <mutex>

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

/// LDS one workgroup may use: 64 KiB on CDNA2/3, 160 KiB on CDNA4.
int64_t ldsLimit(llvm::StringRef chip) {
  return chip == "gfx950" ? 160 * 1024 : 64 * 1024;
}

/// Whether OCML (the ROCm device libraries) defines `symbol`.
bool ocmlHas(const std::string &symbol) {
  static std::mutex mutex;
  static std::map<std::string, bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(symbol); it != known.end())
    return it->second;
  auto file = amd::deviceLibrary("ocml.bc");
  if (!file) {
    llvm::consumeError(file.takeError());
    return false;
  }
  llvm::LLVMContext context;
  auto lib = llvm::getLazyBitcodeModule(*file, context);
  bool has = false;
  if (lib)
    has = (*lib)->getFunction(symbol) != nullptr;
  else
    llvm::consumeError(lib.takeError());
  return known[symbol] = has;
}

/// `op` (a libdevice function OCML lacks) computed as the CPU computes it
/// (loops::emitExternFunction: integer bit functions, high products,
/// conversions with a rounding mode, ...), element by element in a
/// map_elementwise for blocks.
void expandExternCall(tile::ExternElementwiseOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  Value result;
  if (!isa<RankedTensorType>(op.getType())) {
    result = loops::emitExternFunction(b, module, op, op.getArgs());
  } else {
    auto map = tile::MapElementwiseOp::create(b, loc, TypeRange{op.getType()},
                                              op.getArgs(), /*pack=*/1);
    Block *body = new Block();
    map.getBody().push_back(body);
    for (Value arg : op.getArgs())
      body->addArgument(getElementTypeOrSelf(arg.getType()), loc);
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    Value v = loops::emitExternFunction(inner, module, op,
                                        body->getArguments());
    tile::MapElementwiseReturnOp::create(inner, loc, ValueRange{v});
    result = map.getResult(0);
  }
  op.replaceAllUsesWith(result);
  op.erase();
}

/// Calls of libdevice's functions in the module (tl.extern_elementwise of
/// `__nv_*`, which Triton's math library makes) become calls of OCML's
/// counterparts: __nv_<f>f is __ocml_<f>_f32, __nv_<f> is __ocml_<f>_f64;
/// those OCML lacks are computed as the CPU computes them. Calls of OCML
/// itself stay. Other libraries are not linked for AMD: an error at each
/// such call.
LogicalResult mapExternCalls(ModuleOp module) {
  bool ok = true;
  SmallVector<tile::ExternElementwiseOp> expand;
  module.walk([&](tile::ExternElementwiseOp op) {
    std::string symbol = op.getSymbol().str();
    llvm::StringRef name(symbol);
    std::string mapped = symbol;
    if (name.consume_front("__nv_")) {
      Type t = getElementTypeOrSelf(op.getType());
      if (t.isF32() && name.consume_back("f"))
        mapped = "__ocml_" + name.str() + "_f32";
      else if (t.isF64())
        mapped = "__ocml_" + name.str() + "_f64";
      else
        mapped.clear();
    } else if (!name.starts_with("__ocml_")) {
      op.emitError("extern_elementwise: ")
          << symbol << " is neither a libdevice (__nv_*) nor an OCML "
          << "(__ocml_*) function; the hip targets link no other library";
      ok = false;
      return;
    }
    if ((mapped.empty() || !ocmlHas(mapped)) &&
        llvm::StringRef(symbol).starts_with("__nv_") &&
        loops::hasExternFunction(op)) {
      expand.push_back(op);
      return;
    }
    if (mapped.empty() || !ocmlHas(mapped)) {
      if (amd::deviceLibsPath().empty())
        op.emitError("extern_elementwise: ")
            << symbol << " needs the ROCm device libraries, which are not "
            << "installed (Debian's rocm-device-libs, or "
            << "TESSEL_ROCM_DEVICE_LIBS)";
      else if (Type t = getElementTypeOrSelf(op.getType());
               t.isF32() && llvm::StringRef(symbol).starts_with("__nv_") &&
               ocmlHas("__ocml_" + llvm::StringRef(symbol).drop_front(5).str() +
                       "_f64"))
        op.emitError("extern_elementwise: ")
            << symbol << " is libdevice's fp64 (double) function, called "
            << "with fp32";
      else
        op.emitError("extern_elementwise: the hip targets have no function '")
            << symbol << "' for " << op.getType()
            << (mapped.empty() || mapped == symbol
                    ? std::string()
                    : " (ROCm's device library has no " + mapped + ")");
      ok = false;
      return;
    }
    op.setSymbol(mapped);
  });
  for (tile::ExternElementwiseOp op : expand)
    expandExternCall(op);
  // The CPU's way calls the C library for some functions (declared, not
  // defined: the module defines only the kernel and its noinline functions).
  module.walk([&](func::CallOp call) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    if (callee && !callee.isExternal())
      return;
    call.emitError("extern_elementwise: ")
        << call.getCallee() << " of the C library has no counterpart on "
        << "the hip targets";
    ok = false;
  });
  return success(ok);
}

llvm::Error compileAMD(ModuleOp module, const std::string &chip,
                       const CompileOptions &options,
                       runtime::CacheEntry &result) {
  for (const auto &[name, value] : options.extra)
    return failWith("unknown compile option '" + name +
                    "' for the AMD targets");
  // 64 threads per wave, at most 1024 per workgroup.
  if (options.numWarps < 1 || options.numWarps > 16 ||
      (options.numWarps & (options.numWarps - 1)))
    return failWith("num_warps must be a power of two from 1 to 16 on " +
                    chip + " (64 threads per wave), got " +
                    llvm::Twine(options.numWarps));
  if (options.numCtas != 1)
    return failWith("num_ctas=" + llvm::Twine(options.numCtas) +
                    " asks for thread block clusters, which " + chip +
                    " does not have: use num_ctas=1");
  MLIRContext *ctx = module.getContext();
  DialectRegistry registry;
  registry.insert<tilegpu::TileGPUDialect, LLVM::LLVMDialect,
                  ROCDL::ROCDLDialect, cf::ControlFlowDialect>();
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
  if (failed(mapExternCalls(module)))
    return diagnostics.fail("calling external functions failed");

  PassManager toGPU(ctx);
  TilePipelineOptions tileOptions; // 8-bit floats and int->bf16 in software
  tileOptions.numStages = options.numStages;
  // 8-bit float dots on the matrix cores: gfx942's fnuz formats, gfx950's
  // OCP ones (gfx90a has neither: fp16 dots of the widened values).
  tileOptions.mfmaFP8 = chip == "gfx942" ? "fnuz" : chip == "gfx950" ? "ocp" : "";
  buildTilePipeline(toGPU, tileOptions);
  amd::AMDTargetInfo chipInfo(chip);
  ConvertTileToTileGPUOptions layoutOptions;
  layoutOptions.numWarps = options.numWarps;
  layoutOptions.threadsPerWarp = 64;
  layoutOptions.computeCapability = 0; // no NVIDIA matrix layouts
  layoutOptions.mfma = true;
  layoutOptions.mfmaInt8KWidth =
      chipInfo.mfmaKWidth(gpu::MfmaInputs::I8);
  layoutOptions.mfmaFP8WideKWidth =
      chipInfo.mfmaWideKWidth(gpu::MfmaInputs::FP8_FP8);
  layoutOptions.mfmaHalfWideKWidth =
      chipInfo.mfmaWideKWidth(gpu::MfmaInputs::F16);
  layoutOptions.mfmaInt8WideKWidth =
      chipInfo.mfmaWideKWidth(gpu::MfmaInputs::I8);
  toGPU.addPass(createConvertTileToTileGPU(layoutOptions));
  toGPU.addPass(createCanonicalizerPass());
  toGPU.addNestedPass<func::FuncOp>(
      tilegpu::createTileGPURemoveLayoutConversions());
  toGPU.addPass(createCanonicalizerPass());
  toGPU.addPass(createCSEPass());
  toGPU.addPass(createLoopInvariantCodeMotionPass());
  {
    // MFMA operands of K loops prefetched into num_stages LDS slots (a
    // loop's own tl.range(num_stages=...) first) through registers: each
    // iteration loads the blocks of iteration i + stages - 1 and stores them
    // after its dot, which reads its slot in place.
    tilegpu::TileGPUPipelineOptions pipelineOptions;
    pipelineOptions.numStages = options.numStages;
    pipelineOptions.sharedLimit = ldsLimit(chip);
    pipelineOptions.registerCopies = true;
    pipelineOptions.transposedReads =
        chipInfo.hasTransposedLdsReads();
    toGPU.addNestedPass<func::FuncOp>(
        tilegpu::createTileGPUPipeline(pipelineOptions));
    toGPU.addPass(createCanonicalizerPass());
  }
  toGPU.addNestedPass<func::FuncOp>(tilegpu::createTileGPUMemoryBarriers());
  // After the barriers, which order tile.load and tile.store: accesses of
  // one scalar pointer plus offsets that provably fit as buffer accesses.
  toGPU.addPass(amd::createAmdBufferAccesses());
  if (failed(toGPU.run(module)))
    return diagnostics.fail("assigning GPU layouts failed");
  result.stages.push_back({"ttgir", print(module)});

  PassManager toLLVM(ctx);
  amd::ConvertTileGPUToROCDLOptions rocdlOptions;
  rocdlOptions.chip = chip;
  toLLVM.addPass(amd::createConvertTileGPUToROCDL(rocdlOptions));
  toLLVM.addPass(createCanonicalizerPass());
  toLLVM.addPass(createCSEPass());
  toLLVM.addPass(amd::createFenceHalfProducts());
  if (failed(toLLVM.run(module)))
    return diagnostics.fail("lowering to ROCDL failed");
  int64_t shared = 0;
  if (auto attr = module->getAttrOfType<IntegerAttr>("tilegpu.shared"))
    shared = attr.getInt();
  module->removeAttr("tilegpu.shared");
  // Functions other than a kernel reach dynamic LDS through an offset table
  // in the code object (LLVM's LDS lowering). A kernel with noinline
  // functions has static LDS instead, at one address they all use: the
  // code object's LDS size includes it and the launch adds none.
  bool calls = llvm::any_of(module.getOps<LLVM::LLVMFuncOp>(),
                            [&](LLVM::LLVMFuncOp fn) {
                              return !fn.isExternal() &&
                                     fn.getName() != result.name;
                            });
  if (calls && shared > 0)
    if (auto array = module.lookupSymbol<LLVM::GlobalOp>("tessel_shared")) {
      array.setGlobalType(
          LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), shared));
      array.setLinkage(LLVM::Linkage::Internal);
      array.setValueAttr(LLVM::UndefAttr::get(ctx));
      shared = 0;
    }
  result.stages.push_back({"llir", print(module)});

  auto compiled =
      amd::translateToHSACO(module, chip, options.enableFpFusion);
  if (!compiled)
    return compiled.takeError();
  int64_t lds = shared + compiled->ldsBytes;
  if (lds > ldsLimit(chip))
    return failWith("kernel " + result.name + " needs " + llvm::Twine(lds) +
                    " bytes of LDS (shared memory) per program; " + chip +
                    " has " + llvm::Twine(ldsLimit(chip)) +
                    ": use smaller blocks");
  if (options.maxnreg > 0 && compiled->vgprs > options.maxnreg)
    return failWith("kernel " + result.name + " needs " +
                    llvm::Twine(compiled->vgprs) + " VGPRs; maxnreg is " +
                    llvm::Twine(options.maxnreg));
  result.stages.push_back({"llvmir", std::move(compiled->llvmIR)});
  result.stages.push_back({"amdgcn", std::move(compiled->assembly)});
  result.stages.push_back(
      {"launch", "num_warps=" + std::to_string(options.numWarps) +
                     "\nwarp_size=64\nshared=" + std::to_string(shared) +
                     "\nstatic_shared=" + std::to_string(compiled->ldsBytes) +
                     "\nvgprs=" + std::to_string(compiled->vgprs) +
                     "\nagprs=" + std::to_string(compiled->agprs) +
                     "\nsgprs=" + std::to_string(compiled->sgprs) +
                     "\nscratch=" + std::to_string(compiled->scratchBytes) +
                     "\n"});
  result.object = std::move(compiled->hsaco);
  return llvm::Error::success();
}

class HipTarget : public Target {
public:
  explicit HipTarget(const TargetSpec &spec) : Target(spec) {}
  std::string description() const override { return "hip:" + spec().arch; }
  int defaultNumStages() const override { return 2; }
  llvm::Expected<runtime::CacheEntry>
  compile(ModuleOp module, const CompileOptions &options) const override {
    runtime::CacheEntry entry;
    entry.target = spec().str();
    if (llvm::Error err = compileAMD(module, spec().arch, options, entry))
      return std::move(err);
    entry.options = options.str();
    return entry;
  }
  bool canRun() const override {
    static const bool available = amd::hipRuntimeAvailable();
    return available;
  }
  llvm::Expected<std::unique_ptr<LoadedKernel>>
  load(const runtime::CacheEntry &kernel) const override {
    auto driver = amd::HipDriver::get();
    if (!driver)
      return driver.takeError();
    int devices = 0;
    if (llvm::Error err = driver->check(driver->getDeviceCount(&devices),
                                        "hipGetDeviceCount"))
      return std::move(err);
    if (devices == 0)
      return failWith("the HIP runtime sees no AMD GPU");
    amd::HipLaunchData data;
    bool found = false;
    for (const auto &[stage, text] : kernel.stages) {
      if (stage == "llir") // before OCKL is linked in
        data.waits = llvm::StringRef(text).contains("@__ockl_printf_begin") ||
                     llvm::StringRef(text).contains("llvm.intr.trap");
      if (stage != "launch")
        continue;
      for (llvm::StringRef line : llvm::split(llvm::StringRef(text), '\n')) {
        auto [key, value] = line.split('=');
        int64_t v;
        if (value.getAsInteger(10, v))
          continue;
        if (key == "num_warps")
          data.numWarps = int(v), found = true;
        else if (key == "shared")
          data.sharedBytes = v;
      }
    }
    if (!found || data.numWarps < 1 || data.sharedBytes < 0)
      return failWith("kernel " + kernel.name + " has no launch data");
    return amd::loadHipKernel(kernel, data);
  }
};

/// A kernel's AMDGCN run in the simulator (sim:gfx*): workgroups of
/// num_warps waves of 64 lanes, the arrays copied in and out.
class HipSimKernel : public LoadedKernel {
public:
  HipSimKernel(gpusim::amdgcn::Module module, std::string name, int numWarps,
               int64_t shared)
      : module(std::move(module)), name(std::move(name)), numWarps(numWarps),
        shared(shared) {}

  bool needsExtents() const override { return true; }

  void launch(int64_t gx, int64_t gy, int64_t gz, void ** /*argv*/,
              llvm::ArrayRef<runtime::LaunchArg> args,
              void * /*stream*/) const override {
    gpusim::LaunchConfig config;
    config.grid[0] = uint32_t(gx);
    config.grid[1] = uint32_t(gy);
    config.grid[2] = uint32_t(gz);
    config.block[0] = uint32_t(64 * numWarps);
    config.dynamicSharedBytes = uint32_t(shared);
    llvm::Expected<SimArguments> converted = simArguments(name, args);
    if (!converted)
      throw std::runtime_error(llvm::toString(converted.takeError()));
    SimArguments &sim = *converted;
    try {
      gpusim::amdgcn::launch(module, name, config, sim.args);
    } catch (const gpusim::DeviceAssertion &e) {
      // A wave that reported a failed assertion and trapped (s_trap).
      DeviceAssertError::Info info;
      info.kernel = name;
      info.message = e.message;
      info.file = e.file;
      info.line = int(e.line);
      info.function = e.function;
      info.pid = {int64_t(e.ctaid[0]), int64_t(e.ctaid[1]),
                  int64_t(e.ctaid[2])};
      info.thread = "thread (" + std::to_string(e.tid[0]) + ", " +
                    std::to_string(e.tid[1]) + ", " + std::to_string(e.tid[2]) +
                    ")";
      throw DeviceAssertError(std::move(info));
    } catch (const gpusim::SimError &e) {
      throw std::runtime_error("kernel " + name + " (simulated): " + e.what());
    }
  }

  /// Kernels that print (through the hostcall buffer): Python's own output
  /// is flushed before the launch writes theirs.
  bool printsOutput() const override {
    const gpusim::amdgcn::Kernel *kernel = module.find(name);
    return kernel && kernel->prints;
  }

private:
  gpusim::amdgcn::Module module;
  std::string name;
  int numWarps;
  int64_t shared;
};

/// The launch stage's `key=value` of a compiled kernel; -1 when absent.
int64_t launchValue(const runtime::CacheEntry &kernel, llvm::StringRef key) {
  for (const auto &[stage, text] : kernel.stages) {
    if (stage != "launch")
      continue;
    for (llvm::StringRef line : llvm::split(llvm::StringRef(text), '\n')) {
      auto [k, value] = line.split('=');
      int64_t v;
      if (k == key && !value.getAsInteger(10, v))
        return v;
    }
  }
  return -1;
}

/// sim:gfx90a, sim:gfx942, sim:gfx950: the hip target's code, run by the
/// simulator's AMDGCN front end.
class HipSimTarget : public Target {
public:
  explicit HipSimTarget(const TargetSpec &spec) : Target(spec) {}
  std::string description() const override { return "sim:" + spec().arch; }
  int defaultNumStages() const override { return 2; }
  llvm::Expected<runtime::CacheEntry>
  compile(ModuleOp module, const CompileOptions &options) const override {
    runtime::CacheEntry entry;
    entry.target = spec().str();
    if (llvm::Error err = compileAMD(module, spec().arch, options, entry))
      return std::move(err);
    entry.options = options.str();
    return entry;
  }
  bool canRun() const override { return true; }
  llvm::Expected<std::unique_ptr<LoadedKernel>>
  load(const runtime::CacheEntry &kernel) const override {
    llvm::StringRef amdgcn;
    for (const auto &[stage, text] : kernel.stages)
      if (stage == "amdgcn")
        amdgcn = text;
    int64_t warps = launchValue(kernel, "num_warps");
    int64_t shared = launchValue(kernel, "shared");
    if (amdgcn.empty() || warps < 1 || shared < 0)
      return failWith("kernel " + kernel.name + " has no AMDGCN or launch data");
    try {
      gpusim::amdgcn::Module module = gpusim::amdgcn::parse(amdgcn.str());
      return std::make_unique<HipSimKernel>(std::move(module), kernel.entryName,
                                            int(warps), shared);
    } catch (const gpusim::SimError &e) {
      return failWith("kernel " + kernel.name +
                      ": the simulator cannot run its AMDGCN: " + e.what());
    }
  }
};

const char *kSupportedChips[] = {"gfx90a", "gfx942", "gfx950"};

} // namespace

void amd::registerAMDBackend() {
  registerBackend("sim:gfx", [](const TargetSpec &spec)
                                 -> llvm::Expected<std::unique_ptr<Target>> {
    if (!llvm::is_contained(kSupportedChips, spec.arch))
      return failWith("target '" + spec.str() +
                      "' is not a GPU Tessel simulates: use sim:gfx90a, "
                      "sim:gfx942 or sim:gfx950");
    return std::make_unique<HipSimTarget>(spec);
  });
  registerBackend("hip", [](const TargetSpec &spec)
                             -> llvm::Expected<std::unique_ptr<Target>> {
    if (!llvm::is_contained(kSupportedChips, spec.arch))
      return failWith("target '" + spec.str() +
                      "' is not a GPU Tessel compiles for: use hip:gfx90a, "
                      "hip:gfx942 or hip:gfx950");
    return std::make_unique<HipTarget>(spec);
  });
}
