//===- CPUCompiler.cpp - Tile IR to a native object for the host ----------===//
//
// tile IR -> (canonicalize, CSE) -> convert-tile-to-loops -> approximate math
// -> SCF to CF -> convert-to-llvm -> LLVM IR -> O3 -> ELF object for the host
// CPU with its real features. No external tool runs.
//
//===----------------------------------------------------------------------===//
#include "tessel/Target/CPU/CPUCompiler.h"

#include "tessel/Analysis/PointerRoots.h"
#include "tessel/Support/FatalErrorGuard.h"

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

#include <mutex>

using namespace mlir;

namespace tessel::cpu {

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
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLoopInvariantCodeMotionPass());
  pm.addNestedPass<func::FuncOp>(tile::createTileCarriedPointersToOffsets());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createConvertTileToLoops());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void buildLoopsToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createApproximateMath());
  pm.addPass(createSCFToControlFlowPass());
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

/// The host's target machine, created once per process.
llvm::TargetMachine *hostTargetMachine(std::string &error) {
  static std::once_flag once;
  static std::unique_ptr<llvm::TargetMachine> machine;
  static std::string initError;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::Triple triple(llvm::sys::getProcessTriple());
    std::string lookupError;
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(triple, lookupError);
    if (!target) {
      initError = "no LLVM target for " + triple.str() + ": " + lookupError;
      return;
    }
    llvm::SubtargetFeatures features;
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.first(), feature.second);
    llvm::TargetOptions options;
    machine.reset(target->createTargetMachine(
        triple, llvm::sys::getHostCPUName(), features.getString(), options,
        llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
    if (!machine)
      initError = "cannot create a target machine for " + triple.str();
  });
  error = initError;
  return machine.get();
}

/// A target machine for another CPU model of the host's architecture.
std::unique_ptr<llvm::TargetMachine>
namedTargetMachine(const CPUTarget &target, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string lookupError;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!llvmTarget) {
    error = "no LLVM target for " + triple.str() + ": " + lookupError;
    return nullptr;
  }
  // LLVM only warns about an unknown CPU name: check it first.
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      llvmTarget->createMCSubtargetInfo(triple, target.cpu, ""));
  if (!info || !info->isCPUStringValid(target.cpu)) {
    error = "unknown CPU '" + target.cpu + "' for " + triple.str();
    return nullptr;
  }
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(llvmTarget->createTargetMachine(
      triple, target.cpu, target.features, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
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

std::string hostTargetDescription() {
  std::string error;
  llvm::TargetMachine *machine = hostTargetMachine(error);
  if (!machine)
    return "unavailable: " + error;
  return machine->getTargetTriple().str() + ";" +
         machine->getTargetCPU().str() + ";" +
         machine->getTargetFeatureString().str();
}

LogicalResult compileModule(ModuleOp module, CompileResult &result,
                            std::string &error, const CPUTarget &target) {
  MLIRContext *ctx = module.getContext();
  DialectRegistry registry;
  registerCPUCompilerDialects(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadAllAvailableDialects();

  // Kernel authors read these messages: their source location and the
  // message, without MLIR's dump of the failing operation.
  ctx->printOpOnDiagnostic(false);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return success();
    llvm::raw_string_ostream os(diagnostics);
    if (auto fileLoc = dyn_cast<FileLineColLoc>(diag.getLocation()))
      os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine()
         << ":" << fileLoc.getColumn() << ": ";
    else
      os << diag.getLocation() << ": ";
    os << diag << "\n";
    for (Diagnostic &note : diag.getNotes())
      os << "  note: " << note << "\n";
    return success();
  });
  auto fail = [&](const std::string &what) {
    error = what + (diagnostics.empty() ? "" : ":\n" + diagnostics);
    return failure();
  };

  func::FuncOp kernel;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->hasAttr("tile.kernel"))
      kernel = fn;
  if (!kernel)
    return fail("the module has no kernel function");
  result.kernelName = kernel.getName().str();
  result.entryName = cpuEntryName(kernel.getName());
  for (unsigned i : writtenArguments(kernel))
    result.writes.push_back(i);
  result.stages.push_back({"ttir", print(module)});

  PassManager toLoops(ctx);
  buildTileToLoopsPipeline(toLoops);
  if (failed(toLoops.run(module)))
    return fail("lowering tile IR to loops failed");
  result.stages.push_back({"loops", print(module)});

  PassManager toLLVM(ctx);
  buildLoopsToLLVMPipeline(toLLVM);
  if (failed(toLLVM.run(module)))
    return fail("lowering to the LLVM dialect failed");
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

  std::unique_ptr<llvm::TargetMachine> named;
  llvm::TargetMachine *machine;
  if (target.cpu.empty() && target.features.empty()) {
    machine = hostTargetMachine(error);
  } else {
    named = namedTargetMachine(
        {target.cpu.empty() ? "generic" : target.cpu, target.features}, error);
    machine = named.get();
  }
  if (!machine)
    return failure();
  // LLVM's vectorizers have produced IR its code generators abort on (odd
  // vector widths of bf16, seen with LLVM 22): such a kernel is compiled
  // again without them rather than ending the process.
  std::string llvmError, llvmText;
  llvm::SmallString<0> object;
  bool translated = true;
  for (bool vectorize : {true, false}) {
    object.clear();
    bool ok = runGuarded(
        [&] {
          llvm::LLVMContext llvmContext;
          std::unique_ptr<llvm::Module> llvmModule =
              translateModuleToLLVMIR(module, llvmContext, result.kernelName);
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
      return fail("LLVM could not compile this kernel (" + llvmError + ")");
  }
  if (!translated)
    return fail("translation to LLVM IR or object code failed");
  result.stages.push_back({"llvmir", std::move(llvmText)});
  result.object = std::string(object.str());
  result.targetTriple = machine->getTargetTriple().str();
  result.targetCPU = machine->getTargetCPU().str();
  result.targetFeatures = machine->getTargetFeatureString().str();
  return success();
}

} // namespace tessel::cpu
