//===- HSACOCompiler.cpp - LLVM dialect to AMDGCN and hsaco --------------===//
#include "tessel/AMD/HSACOCompiler.h"
#include "tessel/AMD/WidenByteReductions.h"

#include "tessel/Support/FatalErrorGuard.h"
#include "tessel/Support/LLVMErrors.h"
#include "tessel/Support/LLVMOptions.h"
#include "tessel/Support/LinkBitcode.h"
#include "tessel/Support/WriteFile.h"

#include "lld/Common/Driver.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <map>
#include <mutex>

LLD_HAS_DRIVER(elf)

using namespace tessel;

namespace {

llvm::Error fail(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

void initAMDGPU() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser(); // inline assembly in kernels
  });
}

/// The ISA version OCML's control constant encodes (major * 1000 + minor *
/// 100 + stepping): gfx942 is 9402, gfx90a 9010.
int isaVersion(llvm::StringRef chip) {
  llvm::StringRef digits = chip.drop_front(3); // "gfx"
  if (digits.size() < 3)
    return 0;
  auto hex = [](char c) {
    return c >= 'a' ? c - 'a' + 10 : c - '0';
  };
  int major = 0;
  digits.drop_back(2).getAsInteger(10, major);
  return major * 1000 + hex(digits[digits.size() - 2]) * 100 +
         hex(digits.back());
}

/// Links OCML and OCKL where the module calls them, and defines the control
/// constants they read (what the oclc_*.bc files of the libraries would):
/// IEEE behaviour (no flushing of subnormals, no finite-only or unsafe math,
/// correctly rounded sqrt), wave64, the chip's ISA version, code object v5.
llvm::Error linkDeviceLibraries(llvm::Module &module, llvm::StringRef chip) {
  bool ocml = false, ockl = false;
  for (llvm::Function &f : module)
    if (f.isDeclaration()) {
      ocml |= f.getName().starts_with("__ocml_");
      ockl |= f.getName().starts_with("__ockl_");
    }
  // OCML calls OCKL; both first, so that each finds the other's functions.
  for (auto [needed, name] : {std::pair{ocml, "ocml.bc"}, {ocml || ockl, "ockl.bc"}}) {
    if (!needed)
      continue;
    auto bytes = amd::deviceLibrary(name);
    if (!bytes)
      return bytes.takeError();
    if (llvm::Error err = linkBitcode(module, *bytes, name))
      return err;
  }
  const std::pair<const char *, int> controls[] = {
      {"__oclc_ISA_version", isaVersion(chip)},
      {"__oclc_ABI_version", 500},
      {"__oclc_wavefrontsize64", 1},
      {"__oclc_daz_opt", 0},
      {"__oclc_finite_only_opt", 0},
      {"__oclc_unsafe_math_opt", 0},
      {"__oclc_correctly_rounded_sqrt32", 1},
  };
  for (auto [name, value] : controls) {
    llvm::GlobalVariable *gv = module.getGlobalVariable(name);
    if (!gv || !gv->isDeclaration())
      continue;
    auto *type = llvm::dyn_cast<llvm::IntegerType>(gv->getValueType());
    if (!type)
      return fail(llvm::Twine("the device libraries declare ") + name +
                  " with an unexpected type");
    gv->setInitializer(llvm::ConstantInt::get(type, value));
    gv->setConstant(true);
    gv->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  return llvm::Error::success();
}

/// The value of the field `key` of the kernel's metadata (the assembly's
/// amdgpu_metadata block: "    .vgpr_count:     25"); 0 when absent.
int metadataField(llvm::StringRef assembly, llvm::StringRef key) {
  std::string marker = (" ." + key + ":").str();
  size_t at = assembly.find(marker);
  if (at == llvm::StringRef::npos)
    return 0;
  llvm::StringRef rest = assembly.substr(at + marker.size()).ltrim(' ');
  int value = 0;
  rest.take_while([](char c) { return c >= '0' && c <= '9'; })
      .getAsInteger(10, value);
  return value;
}

/// LLD's ELF linker run in this process: the object as a shared object, the
/// code object a HIP runtime loads.
llvm::Expected<std::string> linkHsaco(llvm::StringRef object) {
  llvm::SmallString<128> dir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("tessel-hsaco", dir))
    return fail("cannot make a temporary directory: " + ec.message());
  llvm::SmallString<128> in(dir), out(dir);
  llvm::sys::path::append(in, "kernel.o");
  llvm::sys::path::append(out, "kernel.hsaco");
  auto cleanup = [&] {
    llvm::sys::fs::remove(in);
    llvm::sys::fs::remove(out);
    llvm::sys::fs::remove(dir);
  };
  // Every write error comes back (a full disk): raw_fd_ostream would end the
  // process on one.
  if (llvm::Error err = writeNewFile(in.str().str(), object)) {
    cleanup();
    return fail(llvm::toString(std::move(err)));
  }
  std::string log;
  llvm::raw_string_ostream logStream(log);
  const char *args[] = {"ld.lld", "-shared", "--no-undefined", in.c_str(), "-o",
                        out.c_str()};
  lld::Result result;
  {
    // LLD keeps global state: one link at a time. It also resets LLVM's
    // options, which a target machine being made elsewhere may be reading.
    auto lock = lockLLVMOptions();
    result = lld::lldMain(args, logStream, logStream,
                          {{lld::Gnu, &lld::elf::link}});
  }
  if (result.retCode != 0) {
    cleanup();
    return fail("LLD could not link the hsaco: " + log);
  }
  auto bytes = llvm::MemoryBuffer::getFile(out);
  if (!bytes) {
    cleanup();
    return fail("cannot read " + out + ": " + bytes.getError().message());
  }
  std::string hsaco = (*bytes)->getBuffer().str();
  cleanup();
  return hsaco;
}

llvm::Error emitAMDGCN(mlir::ModuleOp module, const std::string &chip,
                       bool enableFpFusion, amd::HsacoResult &result) {
  llvm::LLVMContext context;
  LLVMErrorCollector errors(context);
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context, "tessel");
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  // Ask for the kernel's arguments in user SGPRs (kernarg preloading, CDNA3
  // on): the backend preloads what fits and loads the rest. The kernel then
  // starts without waiting on its argument loads, and its code starts with
  // the loads for firmware that does not preload.
  for (llvm::Function &function : *llvmModule)
    if (function.getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL)
      for (llvm::Argument &argument : function.args())
        argument.addAttr(llvm::Attribute::InReg);
  llvm::Triple triple("amdgcn-amd-amdhsa");
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return fail("no AMDGPU target in this LLVM: " + error);
  llvm::TargetOptions options;
  options.AllowFPOpFusion =
      enableFpFusion ? llvm::FPOpFusion::Fast : llvm::FPOpFusion::Strict;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, chip, "", options, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return fail("cannot create an AMDGPU target machine for " + chip);
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  if (llvm::Error err = linkDeviceLibraries(*llvmModule, chip))
    return err;
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    // As clang's -O3: vectorizers on. The SLP vectorizer pairs fp32 lanes
    // into the packed v_pk_*_f32 instructions CDNA has.
    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    llvm::PassBuilder pb(machine.get(), tuning);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
        .run(*llvmModule, mam);
  }
  amd::widenByteReductions(*llvmModule);
  llvm::raw_string_ostream irOs(result.llvmIR);
  llvmModule->print(irOs, nullptr);

  auto emit = [&](llvm::Module &m, llvm::CodeGenFileType kind,
                  std::string &out) -> llvm::Error {
    llvm::SmallString<0> bytes;
    llvm::raw_svector_ostream os(bytes);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr, kind))
      return fail("the AMDGPU backend cannot emit code for " + chip);
    codegen.run(m);
    if (!errors.errors().empty())
      return fail("LLVM's AMDGPU backend cannot compile this kernel for " +
                  chip + ": " + errors.errors());
    out = std::string(bytes.str());
    return llvm::Error::success();
  };
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*llvmModule);
  if (llvm::Error err =
          emit(*copy, llvm::CodeGenFileType::AssemblyFile, result.assembly))
    return err;
  std::string object;
  if (llvm::Error err =
          emit(*llvmModule, llvm::CodeGenFileType::ObjectFile, object))
    return err;
  result.vgprs = metadataField(result.assembly, "vgpr_count");
  result.agprs = metadataField(result.assembly, "agpr_count");
  result.sgprs = metadataField(result.assembly, "sgpr_count");
  result.scratchBytes =
      metadataField(result.assembly, "private_segment_fixed_size");
  result.ldsBytes = metadataField(result.assembly, "group_segment_fixed_size");
  auto hsaco = linkHsaco(object);
  if (!hsaco)
    return hsaco.takeError();
  result.hsaco = std::move(*hsaco);
  return llvm::Error::success();
}

} // namespace

std::string amd::deviceLibsPath() {
  for (const char *dir : {(const char *)std::getenv("TESSEL_ROCM_DEVICE_LIBS"),
                          "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode",
                          "/opt/rocm/amdgcn/bitcode"}) {
    if (!dir)
      continue;
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, "ocml.bc");
    if (llvm::sys::fs::exists(path))
      return dir;
  }
  return "";
}

llvm::Expected<llvm::MemoryBufferRef>
amd::deviceLibrary(const std::string &name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<llvm::MemoryBuffer>> files;
  std::lock_guard<std::mutex> lock(mutex);
  auto &file = files[name];
  if (!file) {
    std::string dir = amd::deviceLibsPath();
    if (dir.empty())
      return fail("the ROCm device libraries (" + name +
                  ") are not installed: install Debian's rocm-device-libs or "
                  "set TESSEL_ROCM_DEVICE_LIBS to their folder");
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return fail("cannot read " + path + ": " + buffer.getError().message());
    file = std::move(*buffer);
  }
  return file->getMemBufferRef();
}

llvm::Expected<amd::HsacoResult>
amd::translateToHSACO(mlir::ModuleOp module, const std::string &chip,
                      bool enableFpFusion) {
  initAMDGPU();
  mlir::DialectRegistry registry;
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerROCDLDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);
  // LLVM's code generators end the process on some inputs they cannot
  // handle: run them guarded, and report such an error as a compile error.
  HsacoResult result;
  std::string problem, fatal;
  bool returned = runGuarded(
      [&] {
        if (llvm::Error err = emitAMDGCN(module, chip, enableFpFusion, result))
          problem = llvm::toString(std::move(err));
      },
      fatal);
  if (!returned)
    return fail("LLVM's AMDGPU backend failed on this kernel for " + chip +
                ": " + fatal);
  if (!problem.empty())
    return fail(problem);
  return result;
}
