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
TESSEL_POPULATE(AtomicOp)
TESSEL_POPULATE(DotOp)
TESSEL_POPULATE(BufferOp)
TESSEL_POPULATE(BufferAccessOp)
TESSEL_POPULATE(ConvertLayoutOp)
TESSEL_POPULATE(ReduceOp)
TESSEL_POPULATE(ScanOp)
TESSEL_POPULATE(GatherOp)
TESSEL_POPULATE(MapElementwiseOp)
TESSEL_POPULATE(TmaOps)
TESSEL_POPULATE(DebugOp)
TESSEL_POPULATE(ExternOp)
#undef TESSEL_POPULATE

/// For each register of `dst`, the register of `src` that holds its element
/// in the same thread, where every one has one (a conversion that only
/// renames registers); nothing otherwise.
std::optional<llvm::SmallVector<int32_t>>
registerRenaming(const LinearLayout &src, const LinearLayout &dst);

/// The bytes of the block a tma_load or tma_store moves through its scratch
/// (an 8-byte mbarrier follows a load's there).
int64_t tmaBlockBytes(mlir::RankedTensorType type);

/// Lays out the program's shared memory by liveness: the scratch of each
/// conversion, reduction and dot that stages through shared memory (from
/// offset 0; the op gets `tilegpu.scratch`, its bytes) and each pipeline
/// buffer (its `tilegpu.offset`), bytes shared between claims never live at
/// the same time, with a barrier before a buffer's first access where it
/// reuses bytes; declares the shared array and records the bytes in the
/// module's `tilegpu.shared`. Returns the bytes.
int64_t allocateSharedMemory(mlir::ModuleOp module,
                             const GPUTargetInfo &target);

} // namespace tessel::gpu::lowering

#endif // TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_PATTERNTILEGPUTOLLVM_H
