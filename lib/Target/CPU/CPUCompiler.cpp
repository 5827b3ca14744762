//===- CPUCompiler.cpp - Tile IR to a native object for the host ----------===//
//
// tile IR -> (canonicalize, CSE) -> convert-tile-to-loops -> approximate math
// -> narrow floats (bf16 arithmetic in fp32, single roundings)
// -> SCF to CF -> program exits (failed assertions) -> convert-to-llvm
// -> LLVM IR -> O3 -> ELF object for the host
// CPU with its real features. No external tool runs.
//
//===----------------------------------------------------------------------===//
#include "tessel/Target/CPU/CPUCompiler.h"
#include "tessel/Target/CPU/SingleLaneMaskedStores.h"

#include "tessel/Analysis/LaunchChecks.h"
#include "tessel/Analysis/PointerRoots.h"
#include "tessel/Support/FatalErrorGuard.h"
#include "tessel/Target/Diagnostics.h"
#include "tessel/Target/TilePipeline.h"

#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/Tile/Transforms/Passes.h"
#include "tessel/Target/CPU/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <map>
#include <mutex>

using namespace mlir;

namespace tessel::cpu {

namespace {

/// Bytes of the buffers a program keeps on its thread's stack (the blocks
/// that live in memory): the fixed-size allocations of the kernel's
/// functions after optimization. The CPU's counterpart of the shared memory
/// of a GPU program, reported as the "launch" stage's `shared`.
uint64_t stackBufferBytes(const llvm::Module &module) {
  uint64_t bytes = 0;
  const llvm::DataLayout &layout = module.getDataLayout();
  for (const llvm::Function &fn : module)
    for (const llvm::Instruction &inst : llvm::instructions(fn))
      if (const auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst))
        if (std::optional<llvm::TypeSize> size =
                alloca->getAllocationSize(layout))
          if (!size->isScalable())
            bytes += size->getFixedValue();
  return bytes;
}

} // namespace

void registerCPUCompilerDialects(DialectRegistry &registry) {
  registry.insert<tile::TileDialect, arith::ArithDialect, math::MathDialect,
                  scf::SCFDialect, func::FuncDialect, memref::MemRefDialect,
                  LLVM::LLVMDialect, cf::ControlFlowDialect,
                  index::IndexDialect, ub::UBDialect, vector::VectorDialect>();
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

void buildTileToLoopsPipeline(OpPassManager &pm) {
  pm.addPass(createConvertTileToLoops());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void buildLoopsToLLVMPipeline(OpPassManager &pm, bool bf16DotProduct,
                              bool int8DotProduct, bool scalef) {
  DotMicroKernelsOptions dots;
  dots.bf16DotProduct = bf16DotProduct;
  dots.int8DotProduct = int8DotProduct;
  pm.addPass(createDotMicroKernels(dots));
  ApproximateMathOptions math;
  math.scalef = scalef;
  pm.addPass(createApproximateMath(math));
  pm.addPass(createNarrowFloats());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createProgramExit());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

namespace {

std::string print(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

std::string print(const llvm::Module &module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return text;
}

/// The LLVM target of this process's architecture.
const llvm::Target *nativeTarget(std::string &error) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target)
    error = "no LLVM target for " + triple.str() + ": " + lookupError;
  return target;
}

/// The model's CPU name and features, the host's where empty.
std::pair<std::string, std::string> resolve(const CPUModel &model) {
  if (!model.cpu.empty() || !model.features.empty())
    return {model.cpu.empty() ? "generic" : model.cpu, model.features};
  llvm::SubtargetFeatures features;
  for (auto &feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.first(), feature.second);
  return {llvm::sys::getHostCPUName().str(), features.getString()};
}

/// A target machine for `model` (created once per model and FP-fusion
/// setting, kept for the life of the process), or null with `error` set.
llvm::TargetMachine *targetMachine(const CPUModel &model, bool fuseFP,
                                   std::string &error) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines;
  std::lock_guard<std::mutex> lock(mutex);
  auto [cpu, features] = resolve(model);
  std::string key = cpu + ";" + features + ";" + (fuseFP ? "fuse" : "");
  if (auto it = machines.find(key); it != machines.end())
    return it->second.get();
  const llvm::Target *target = nativeTarget(error);
  if (!target)
    return nullptr;
  llvm::Triple triple(llvm::sys::getProcessTriple());
  // LLVM only warns about an unknown CPU name: check it first.
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, cpu, ""));
  if (!info || !info->isCPUStringValid(cpu)) {
    error = "unknown CPU '" + cpu + "' for " + triple.str();
    return nullptr;
  }
  // Two LLVM 22 X86 back-end bugs found by tessel.tools.fuzz on znver5 (llc
  // shows both), avoided by leaving out the features that reach them:
  // - GFNI: an arithmetic right shift of bytes by an amount proven zero only
  //   after legalization becomes a GF(2) affine transform whose matrix also
  //   XORs the sign bit into the seven bits below it (int8 -1 >> 0 gave
  //   -128). Without it the usual byte-shift sequences run.
  // - AVX512-VBMI: SelectionDAG legalization of some vectorized int8/int64
  //   conversions never ends (seed 638294612, kernel 566: llc runs for
  //   minutes with it, 40 ms without). Byte permutes take two instructions
  //   instead of one without it.
  if (triple.isX86())
    features += std::string(features.empty() ? "" : ",") + "-gfni,-avx512vbmi";
  llvm::TargetOptions options;
  // enable_fp_fusion: a * b + c may become one fused multiply-add.
  options.AllowFPOpFusion =
      fuseFP ? llvm::FPOpFusion::Fast : llvm::FPOpFusion::Standard;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine) {
    error = "cannot create a target machine for " + triple.str();
    return nullptr;
  }
  return (machines[key] = std::move(machine)).get();
}

void optimize(llvm::Module &module, llvm::TargetMachine *machine,
              bool vectorize) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = vectorize;
  tuning.SLPVectorization = vectorize;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder pb(machine, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

} // namespace

std::string describeModel(const CPUModel &model) {
  std::string error;
  llvm::TargetMachine *machine = targetMachine(model, true, error);
  if (!machine)
    return "unavailable: " + error;
  return machine->getTargetTriple().str() + ";" +
         machine->getTargetCPU().str() + ";" +
         machine->getTargetFeatureString().str();
}

bool runsOnHost(const CPUModel &model) {
  if (model.cpu.empty() && model.features.empty())
    return true;
  std::string error;
  const llvm::Target *target = nativeTarget(error);
  if (!target)
    return false;
  llvm::Triple triple(llvm::sys::getProcessTriple());
  auto [cpu, features] = resolve(model);
  auto [hostCpu, hostFeatures] = resolve({});
  std::unique_ptr<llvm::MCSubtargetInfo> wanted(
      target->createMCSubtargetInfo(triple, cpu, features));
  if (!wanted || !wanted->isCPUStringValid(cpu))
    return false;
  // The host's instruction-set features (tuning flags are not among them):
  // every one the model has, the host must have.
  for (const auto &[name, hostHas] : llvm::sys::getHostCPUFeatures())
    if (!hostHas && wanted->checkFeatures(("+" + name).str()))
      return false;
  return true;
}

llvm::Error compileModule(ModuleOp module, const CPUModel &model,
                          const target::CompileOptions &options,
                          runtime::CacheEntry &result) {
  for (const auto &[name, value] : options.extra)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown compile option '" + name +
                                       "' for the cpu target");
  MLIRContext *ctx = module.getContext();
  DialectRegistry registry;
  registerCPUCompilerDialects(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadAllAvailableDialects();
  target::DiagnosticCapture diagnostics(ctx);

  func::FuncOp kernel;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->hasAttr("tile.kernel"))
      kernel = fn;
  if (!kernel)
    return diagnostics.fail("the module has no kernel function");
  result.name = kernel.getName().str();
  result.entryName = cpuEntryName(kernel.getName());
  for (unsigned i : writtenArguments(kernel))
    result.writes.push_back(i);
  result.checks = launchChecks(kernel);
  result.stages.push_back({"ttir", print(module)});

  PassManager toLoops(ctx);
  target::TilePipelineOptions tileOptions;
  tileOptions.constantPointerSteps = true;
  target::buildTilePipeline(toLoops, tileOptions);
  buildTileToLoopsPipeline(toLoops);
  if (failed(toLoops.run(module)))
    return diagnostics.fail("lowering tile IR to loops failed");
  // `/` may use a reciprocal (arcp) on the GPUs, whose fp32 division is full
  // range. On the CPU LLVM turns x / y with y loop-invariant into x * (1 / y),
  // which is inf for |y| < 2^-128 (and 0 or a subnormal for |y| > 2^126):
  // a finite quotient became inf (found by tessel.tools.fuzz). The CPU
  // divides, rounding once.
  module.walk([](arith::DivFOp div) {
    div.setFastmath(arith::FastMathFlags::none);
  });
  result.stages.push_back({"loops", print(module)});

  std::string error;
  llvm::TargetMachine *machine =
      targetMachine(model, options.enableFpFusion, error);
  if (!machine)
    return diagnostics.fail(error);
  const llvm::MCSubtargetInfo *subtarget = machine->getMCSubtargetInfo();
  PassManager toLLVM(ctx);
  buildLoopsToLLVMPipeline(toLLVM, subtarget->checkFeatures("+avx512bf16"),
                           subtarget->checkFeatures("+avx512vnni"),
                           subtarget->checkFeatures("+avx512f"));
  if (failed(toLLVM.run(module)))
    return diagnostics.fail("lowering to the LLVM dialect failed");
  // A noinline function's mark (tile-to-loops') becomes LLVM's noinline:
  // the function stays one, called.
  module.walk([](LLVM::LLVMFuncOp fn) {
    if (fn->removeDiscardableAttr("llvm.no_inline"))
      fn.setNoInline(true);
  });
  // SCF-to-CF leaves a loop's annotation on its latch branch as a plain
  // attribute: make it the branch's loop metadata, which LLVM IR keeps.
  module.walk([](LLVM::BrOp br) {
    StringRef name = "llvm.loop_annotation";
    if (auto a = br->getDiscardableAttr(name)) {
      br.setLoopAnnotationAttr(cast<LLVM::LoopAnnotationAttr>(a));
      br->removeDiscardableAttr(name);
    }
  });
  result.stages.push_back({"llir", print(module)});

  // LLVM's vectorizers have produced IR its code generators abort on (odd
  // vector widths of bf16, seen with LLVM 22): such a kernel is compiled
  // again without them rather than ending the process.
  std::string llvmError, llvmText;
  llvm::SmallString<0> object;
  uint64_t stackBytes = 0;
  bool translated = true;
  for (bool vectorize : {true, false}) {
    object.clear();
    bool ok = runGuarded(
        [&] {
          llvm::LLVMContext llvmContext;
          std::unique_ptr<llvm::Module> llvmModule =
              translateModuleToLLVMIR(module, llvmContext, result.name);
          if (!llvmModule) {
            translated = false;
            return;
          }
          llvmModule->setTargetTriple(machine->getTargetTriple());
          llvmModule->setDataLayout(machine->createDataLayout());
          for (llvm::Function &fn : *llvmModule) {
            if (fn.isDeclaration())
              continue;
            fn.addFnAttr("target-cpu", machine->getTargetCPU());
            fn.addFnAttr("target-features", machine->getTargetFeatureString());
          }
          optimize(*llvmModule, machine, vectorize);
          splitSingleLaneMaskedStores(*llvmModule);
          stackBytes = stackBufferBytes(*llvmModule);
          llvmText = print(*llvmModule);
          llvm::raw_svector_ostream os(object);
          llvm::legacy::PassManager codegen;
          if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                           llvm::CodeGenFileType::ObjectFile)) {
            translated = false;
            return;
          }
          codegen.run(*llvmModule);
        },
        llvmError);
    if (ok)
      break;
    if (!vectorize)
      return diagnostics.fail("LLVM could not compile this kernel (" +
                              llvmError + ")");
  }
  if (!translated)
    return diagnostics.fail("translation to LLVM IR or object code failed");
  result.stages.push_back({"llvmir", std::move(llvmText)});
  // What a launcher (and Triton's `kernel.metadata.shared`) reads.
  result.stages.push_back(
      {"launch", "shared=" + std::to_string(stackBytes) + "\n"});
  result.object = std::string(object.str());
  return llvm::Error::success();
}

} // namespace tessel::cpu
