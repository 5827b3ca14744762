//===- PTXCompiler.cpp - LLVM dialect to PTX and cubin -------------------===//
#include "tessel/NVIDIA/PTXCompiler.h"

#include "tessel/Support/FatalErrorGuard.h"
#include "tessel/Support/LLVMErrors.h"
#include "tessel/Support/LLVMOptions.h"
#include "tessel/Support/LinkBitcode.h"
#include "tessel/Support/WriteFile.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELFTypes.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/Internalize.h"
#include "llvm/ADT/ScopeExit.h"

#include <mutex>
#include <regex>

using namespace tessel;

namespace {

llvm::Error fail(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

void initNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::string libdevicePath() {
  if (const char *p = std::getenv("TESSEL_LIBDEVICE_PATH"))
    return p;
  return "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
}

/// The bytes of libdevice, read once per process.
llvm::Expected<llvm::MemoryBufferRef> libdeviceFile() {
  static std::mutex mutex;
  static std::unique_ptr<llvm::MemoryBuffer> file;
  std::lock_guard<std::mutex> lock(mutex);
  if (!file) {
    auto buffer = llvm::MemoryBuffer::getFile(libdevicePath());
    if (!buffer)
      return fail("libdevice not found at " + libdevicePath() +
                  " (set TESSEL_LIBDEVICE_PATH)");
    file = std::move(*buffer);
  }
  return file->getMemBufferRef();
}

/// Links the libdevice functions `module` calls, internalized.
llvm::Error linkLibdevice(llvm::Module &module) {
  bool needed = false;
  for (llvm::Function &f : module)
    if (f.isDeclaration() && f.getName().starts_with("__nv_"))
      needed = true;
  if (!needed)
    return llvm::Error::success();
  // The file is read once per process; its functions are materialized
  // lazily, so linking reads only those the kernel calls.
  auto file = libdeviceFile();
  if (!file)
    return file.takeError();
  return linkBitcode(module, *file, "libdevice");
}

/// The LLVM part of translateToPTX: LLVM IR, libraries, O3, NVPTX.
llvm::Error emitPTX(mlir::ModuleOp module, const std::string &arch,
                    bool enableFpFusion, std::string &llvmIR, std::string &ptx,
                    const std::vector<std::string> &libraries) {
  llvm::LLVMContext context;
  LLVMErrorCollector errors(context);
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context, "tessel");
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return fail("no NVPTX target in this LLVM: " + error);
  llvm::TargetOptions options;
  options.AllowFPOpFusion =
      enableFpFusion ? llvm::FPOpFusion::Fast : llvm::FPOpFusion::Strict;
  // PTX 8.4 (CUDA 12.4) at least: mma.sync takes 8-bit floats from it on;
  // sm_100 needs 8.6 and sm_120 8.7. The simulator and ptxas read PTX 8.x.
  llvm::StringRef smName(arch);
  const char *ptxVersion = smName.starts_with("sm_12")   ? "+ptx87"
                           : smName.starts_with("sm_10") ? "+ptx86"
                                                         : "+ptx84";
  std::unique_ptr<llvm::TargetMachine> machine;
  {
    // 32-bit pointers to shared (and const, local) memory, whose addresses
    // fit: half the registers and 32-bit arithmetic for every shared address.
    // LLVM's option, read when the machine is made, is set each time: an LLD
    // link in this process (the AMD backend's) resets it.
    auto lock = lockLLVMOptions();
    if (!setLLVMOption("nvptx-short-ptr", true))
      return fail("this LLVM has no option nvptx-short-ptr");
    machine.reset(target->createTargetMachine(
        triple, arch, ptxVersion, options, std::nullopt, std::nullopt,
        llvm::CodeGenOptLevel::Aggressive));
  }
  if (!machine)
    return fail("cannot create an NVPTX target machine for " + arch);
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz",
                            uint32_t(0));
  if (llvm::Error err = linkLibdevice(*llvmModule))
    return err;
  for (const std::string &path : libraries) {
    auto bytes = llvm::MemoryBuffer::getFile(path);
    if (!bytes)
      return fail("cannot read the library " + path + ": " +
                  bytes.getError().message());
    if (llvm::Error err = linkBitcode(*llvmModule, (*bytes)->getMemBufferRef(),
                                      "the library " + path))
      return err;
  }

  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(machine.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
        .run(*llvmModule, mam);
  }
  llvm::raw_string_ostream irOs(llvmIR);
  llvmModule->print(irOs, nullptr);

  llvm::SmallString<0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::AssemblyFile))
    return fail("the NVPTX backend cannot emit PTX");
  codegen.run(*llvmModule);
  if (!errors.errors().empty())
    return fail("LLVM's NVPTX backend cannot compile this kernel for " + arch +
                ": " + errors.errors());
  ptx = std::string(text.str());
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::optional<std::string>>
nvidia::libraryFunctionType(const std::string &path,
                            const std::string &symbol) {
  std::unique_ptr<llvm::MemoryBuffer> owned;
  llvm::MemoryBufferRef bytes;
  if (path.empty()) {
    auto file = libdeviceFile();
    if (!file)
      return file.takeError();
    bytes = *file;
  } else {
    auto file = llvm::MemoryBuffer::getFile(path);
    if (!file)
      return fail("cannot read the library " + path + ": " +
                  file.getError().message());
    owned = std::move(*file);
    bytes = owned->getMemBufferRef();
  }
  llvm::LLVMContext context;
  auto lib = llvm::getLazyBitcodeModule(bytes, context);
  if (!lib)
    return fail("cannot read " +
                (path.empty() ? std::string("libdevice") : path) +
                " as LLVM bitcode: " + llvm::toString(lib.takeError()));
  llvm::Function *fn = (*lib)->getFunction(symbol);
  if (!fn)
    return std::nullopt;
  std::string type;
  llvm::raw_string_ostream os(type);
  fn->getFunctionType()->print(os);
  return type;
}

llvm::Error nvidia::translateToPTX(mlir::ModuleOp module,
                                   const std::string &arch,
                                   bool enableFpFusion, std::string &llvmIR,
                                   std::string &ptx,
                                   const std::vector<std::string> &libraries) {
  initNVPTX();
  mlir::DialectRegistry registry;
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  // LLVM's code generators end the process on some inputs they cannot
  // handle: run them guarded, and report such an error as a compile error.
  std::string problem, fatal;
  bool returned = runGuarded(
      [&] {
        if (llvm::Error err =
                emitPTX(module, arch, enableFpFusion, llvmIR, ptx, libraries))
          problem = llvm::toString(std::move(err));
      },
      fatal);
  if (!returned)
    return fail("LLVM's NVPTX backend failed on this kernel for " + arch +
                ": " + fatal);
  if (!problem.empty())
    return fail(problem);
  return llvm::Error::success();
}

/// The bytes a 64-bit little-endian ELF file spans by its header: up to
/// the end of its section and program header tables; nothing when `data`
/// does not start with such a header.
static std::optional<uint64_t> elfFileSize(llvm::StringRef data) {
  using Header = llvm::object::ELF64LE::Ehdr;
  if (data.size() < sizeof(Header))
    return std::nullopt;
  const auto *h = reinterpret_cast<const Header *>(data.data());
  if (!h->checkMagic() || h->getFileClass() != llvm::ELF::ELFCLASS64 ||
      h->getDataEncoding() != llvm::ELF::ELFDATA2LSB)
    return std::nullopt;
  return std::max<uint64_t>(h->e_shoff + uint64_t(h->e_shentsize) * h->e_shnum,
                            h->e_phoff + uint64_t(h->e_phentsize) * h->e_phnum);
}

std::string nvidia::ptxasPath() {
  if (const char *p = std::getenv("TESSEL_PTXAS_PATH"))
    return llvm::sys::fs::can_execute(p) ? p : "";
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  return "";
}

llvm::Expected<nvidia::PtxasResult>
nvidia::runPtxas(const std::string &ptxas, const std::string &ptx,
                 const std::string &arch, int maxnreg) {
  llvm::SmallString<128> dir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("tessel-ptxas", dir))
    return fail("cannot make a temporary directory: " + ec.message());
  auto path = [&](const char *name) {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p.str());
  };
  std::string in = path("kernel.ptx"), out = path("kernel.cubin"),
              log = path("ptxas.log");
  auto cleanup = llvm::make_scope_exit([&] {
    for (const std::string &f : {in, out, log})
      llvm::sys::fs::remove(f);
    llvm::sys::fs::remove(dir);
  });
  if (llvm::Error err = writeNewFile(in, ptx))
    return err;
  std::vector<std::string> argv = {ptxas, "-arch=" + arch, "-v", "-o", out};
  if (maxnreg > 0)
    argv.push_back("--maxrregcount=" + std::to_string(maxnreg));
  argv.push_back(in);
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/120, 0, &execError);
  PtxasResult result;
  if (auto text = llvm::MemoryBuffer::getFile(log))
    result.log = (*text)->getBuffer().str();
  if (rc != 0)
    return fail("ptxas failed (" + arch + "): " +
                (execError.empty() ? result.log : execError));
  auto cubin = llvm::MemoryBuffer::getFile(out, /*IsText=*/false);
  if (!cubin)
    return fail("ptxas wrote no cubin");
  result.cubin = (*cubin)->getBuffer().str();
  // ptxas exits with success when it could not write all of the cubin (a
  // full disk, a file size limit).
  if (std::optional<uint64_t> want = elfFileSize(result.cubin);
      !want || *want > result.cubin.size())
    return fail("ptxas wrote an incomplete cubin (" +
                llvm::Twine(result.cubin.size()) + " bytes" +
                (want ? " of " + llvm::Twine(*want) : llvm::Twine()) +
                "): is the disk full?");
  std::smatch m;
  if (std::regex_search(result.log, m, std::regex("Used (\\d+) registers")))
    result.registers = std::stoi(m[1]);
  if (std::regex_search(result.log, m,
                        std::regex("(\\d+) bytes spill stores, (\\d+) bytes spill loads"))) {
    result.spillStoreBytes = std::stoi(m[1]);
    result.spillLoadBytes = std::stoi(m[2]);
  }
  if (std::regex_search(result.log, m, std::regex("(\\d+) bytes smem")))
    result.staticSharedBytes = std::stoi(m[1]);
  return result;
}
