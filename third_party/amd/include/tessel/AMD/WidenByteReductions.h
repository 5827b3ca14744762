//===- WidenByteReductions.h - Work around an AMDGPU selection crash -*- C++ -*-===//
//
// LLVM 22's AMDGPU instruction selection crashes (a null type in
// SelectionDAG::FoldConstantArithmetic, while legalizing types) on
// `llvm.vector.reduce.add` of a `mul` of byte vectors (4 lanes or more), on
// every chip. The SLP vectorizer makes that pattern from an 8-bit integer dot
// on the FMA path whose result is stored as 8 bits (InstCombine narrows the
// int32 sums to the bytes that are kept). The sum is the same computed in 32
// bits and truncated, which the backend selects.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_AMD_WIDENBYTEREDUCTIONS_H
#define TESSEL_AMD_WIDENBYTEREDUCTIONS_H

namespace llvm {
class Module;
} // namespace llvm

namespace tessel::amd {

/// Rewrites every `llvm.vector.reduce.add` of a vector of i8 in `module` as
/// the 32-bit reduction of its zero-extended lanes, truncated to i8.
void widenByteReductions(llvm::Module &module);

} // namespace tessel::amd

#endif
