//===- LinkBitcode.cpp - Link what a module calls from a library ---------===//
#include "tessel/Support/LinkBitcode.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Transforms/IPO/Internalize.h"

namespace {
llvm::Error fail(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}
} // namespace

llvm::Error tessel::linkBitcode(llvm::Module &module,
                                llvm::MemoryBufferRef bytes,
                                const llvm::Twine &what) {
  auto lib = llvm::getLazyBitcodeModule(bytes, module.getContext());
  if (!lib)
    return fail("cannot read " + what + ": " +
                llvm::toString(lib.takeError()));
  (*lib)->setTargetTriple(module.getTargetTriple());
  (*lib)->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(
          module, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded,
          [](llvm::Module &m, const llvm::StringSet<> &gvs) {
            llvm::internalizeModule(m, [&](const llvm::GlobalValue &gv) {
              return !gv.hasName() || !gvs.count(gv.getName());
            });
          }))
    return fail("linking " + what + " failed");
  return llvm::Error::success();
}

