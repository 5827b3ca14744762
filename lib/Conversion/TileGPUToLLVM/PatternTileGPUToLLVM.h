//===- PatternTileGPUToLLVM.h - The lowering's pattern sets ----*- C++ -*-===//
//
// One populate function per file of patterns, and the shared-memory
// allocation that runs before them.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_PATTERNTILEGPUTOLLVM_H
#define TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_PATTERNTILEGPUTOLLVM_H

#include "Utility.h"

namespace tessel::gpu::lowering {

#define TESSEL_POPULATE(name)                                                  \
  void populate##name##ToLLVMPatterns(mlir::TypeConverter &tc,                 \
                                      mlir::RewritePatternSet &patterns,       \
                                      const GPUTargetInfo &target);
TESSEL_POPULATE(ProgramOp)
TESSEL_POPULATE(ViewOp)
TESSEL_POPULATE(ElementwiseOp)
TESSEL_POPULATE(LoadStoreOp)
TESSEL_POPULATE(DotOp)
TESSEL_POPULATE(BufferOp)
TESSEL_POPULATE(ConvertLayoutOp)
TESSEL_POPULATE(ReduceOp)
#undef TESSEL_POPULATE

/// Lays out the program's shared memory: the scratch that conversions,
/// reductions and dots reuse between barriers from offset 0, then each
/// pipeline buffer (its `tilegpu.offset`); declares the shared array and
/// records the bytes in the module's `tilegpu.shared`. Returns the bytes.
int64_t allocateSharedMemory(mlir::ModuleOp module,
                             const GPUTargetInfo &target);

} // namespace tessel::gpu::lowering

#endif // TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_PATTERNTILEGPUTOLLVM_H
