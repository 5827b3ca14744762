//===- LinkBitcode.h - Link what a module calls from a library -*- C++ -*-===//
#ifndef TESSEL_SUPPORT_LINKBITCODE_H
#define TESSEL_SUPPORT_LINKBITCODE_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

namespace llvm {
class Module;
} // namespace llvm

namespace tessel {

/// Links the functions of the LLVM bitcode `bytes` (a device library:
/// libdevice, OCML) that `module` calls, internalized; the library is read
/// lazily, so only those are materialized. `what` names it in errors.
llvm::Error linkBitcode(llvm::Module &module, llvm::MemoryBufferRef bytes,
                        const llvm::Twine &what);

} // namespace tessel

#endif // TESSEL_SUPPORT_LINKBITCODE_H
