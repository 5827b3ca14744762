//===- SharedMemoryAllocation.cpp - The program's shared memory ---------------===//
//
// One dynamic shared array per program: the scratch that conversions,
// reductions and dots reuse between barriers, then each pipeline buffer
// at its own offset.
//
//===----------------------------------------------------------------------===//
#include "DotOpToLLVM.h"
#include "PatternTileGPUToLLVM.h"
#include "SharedAccess.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

/// Bytes of shared memory the conversions and reductions of `module` need
/// (each reuses the same scratch between barriers).
int64_t scratchBytes(ModuleOp module) {
  int64_t most = 0;
  module.walk([&](Operation *op) {
    if (auto cvt = dyn_cast<tilegpu::ConvertLayoutOp>(op)) {
      auto t = cvt.getType();
      most = std::max(most, t.getNumElements() *
                                int64_t(storageBytes(t.getElementType())));
    } else if (auto dot = dyn_cast<tile::DotOp>(op)) {
      int64_t bOffset;
      if (!inPlaceOperand(dot, 0) || !inPlaceOperand(dot, 1))
        most = std::max(most, dotSharedBytes(dot, bOffset));
    } else if (auto red = dyn_cast<tile::ReduceOp>(op)) {
      auto layout = tilegpu::getLayout(red.getSrcs()[0].getType());
      if (!layout)
        return;
      int64_t numel = 1;
      for (auto &o : layout->outs())
        numel *= o.size;
      int64_t bytes = 0;
      int64_t warps = layout->inSize(gpu::kWarp);
      for (Value s : red.getSrcs())
        bytes += (numel / layout->outSize(gpu::dimName(red.getAxis())) * warps *
                      storageBytes(getElementTypeOrSelf(s.getType())) +
                  15) /
                 16 * 16;
      most = std::max(most, bytes);
    }
  });
  return most;
}

} // namespace

int64_t gpu::lowering::allocateSharedMemory(ModuleOp module,
                                            const GPUTargetInfo &target) {
  MLIRContext *ctx = module.getContext();
  int64_t shared = scratchBytes(module);
  // Buffers live across loops: each gets its own slots after the scratch,
  // from multiples of 1024 bytes (where the swizzle patterns start over).
  bool buffers = false;
  module.walk([&](tilegpu::LocalAllocOp alloc) {
    shared = (shared + 1023) / 1024 * 1024;
    alloc->setAttr("tilegpu.offset",
                   IntegerAttr::get(IntegerType::get(ctx, 32), shared));
    auto type = alloc.getType();
    shared += type.getNumSlots() * type.getSlotStride();
    buffers = true;
  });
  // Swizzled wgmma operands start at multiples of 1024 bytes of the shared
  // array (the swizzle reads address bits up to 9).
  bool wgmma = false;
  module.walk(
      [&](tile::DotOp dot) { wgmma |= tilegpu::wgmmaWarps(dot).has_value(); });
  OpBuilder b(module.getBodyRegion());
  auto arrayTy = LLVM::LLVMArrayType::get(b.getI8Type(), 0);
  b.create<LLVM::GlobalOp>(module.getLoc(), arrayTy, /*isConstant=*/false,
                           LLVM::Linkage::External, kSharedName, Attribute(),
                           /*alignment=*/wgmma || buffers ? 1024 : 16,
                           target.sharedAddressSpace());
  module->setAttr("tilegpu.shared",
                  IntegerAttr::get(IntegerType::get(ctx, 32), shared));
  return shared;
}
