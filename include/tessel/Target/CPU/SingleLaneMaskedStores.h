//===- SingleLaneMaskedStores.h - A workaround for x86 code generation -*- C++ -*-===//
#ifndef TESSEL_TARGET_CPU_SINGLELANEMASKEDSTORES_H
#define TESSEL_TARGET_CPU_SINGLELANEMASKEDSTORES_H

namespace llvm {
class Module;
} // namespace llvm

namespace tessel::cpu {

/// Rewrites every llvm.masked.store whose constant mask has exactly one lane
/// set as a store of that one element (see the .cpp for the LLVM bug this
/// avoids). Returns how many it rewrote.
unsigned splitSingleLaneMaskedStores(llvm::Module &module);

} // namespace tessel::cpu

#endif // TESSEL_TARGET_CPU_SINGLELANEMASKEDSTORES_H
