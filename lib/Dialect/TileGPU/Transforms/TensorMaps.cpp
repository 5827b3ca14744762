//===- TensorMaps.cpp - Descriptor loads through tensor maps --------------===//
//
// See the pass description in include/tessel/Dialect/TileGPU/Transforms/
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/Transforms/Passes.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/Dialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace tessel::tilegpu {
#define GEN_PASS_DEF_TILEGPUTENSORMAPS
#include "tessel/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tessel::tilegpu

using namespace mlir;
using namespace tessel;
using namespace tessel::tilegpu;

namespace {

struct TileGPUTensorMaps
    : public tilegpu::impl::TileGPUTensorMapsBase<TileGPUTensorMaps> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    Builder b(ctx);
    SmallVector<Attribute> maps;
    for (auto func : module.getOps<func::FuncOp>()) {
      SmallVector<tile::DescriptorLoadOp> loads;
      func.walk([&](tile::DescriptorLoadOp load) {
        if (load.getTensorMap())
          loads.push_back(load);
      });
      // One map per descriptor argument: its loads share the block shape.
      llvm::DenseMap<int32_t, BlockArgument> mapArgs;
      for (tile::DescriptorLoadOp load : loads) {
        int32_t arg = int32_t(*load.getTensorMap());
        auto type = cast<RankedTensorType>(load.getType());
        BlockArgument &map = mapArgs[arg];
        if (!map) {
          unsigned index = func.getNumArguments();
          auto attrs = b.getDictionaryAttr(
              {b.getNamedAttr(LLVM::LLVMDialect::getByValAttrName(),
                              TypeAttr::get(LLVM::LLVMArrayType::get(
                                  b.getI8Type(), 128))),
               b.getNamedAttr(LLVM::LLVMDialect::getAlignAttrName(),
                              b.getI64IntegerAttr(64))});
          if (failed(func.insertArgument(index, LLVM::LLVMPointerType::get(ctx),
                                         attrs, func.getLoc())))
            return signalPassFailure();
          map = func.getArgument(index);
          maps.push_back(b.getDictionaryAttr(
              {b.getNamedAttr("arg", b.getI32IntegerAttr(arg)),
               b.getNamedAttr("box", b.getDenseI64ArrayAttr(type.getShape())),
               b.getNamedAttr("element", TypeAttr::get(type.getElementType())),
               b.getNamedAttr("nan", b.getBoolAttr(load.getNanPadding()))}));
        }
        OpBuilder builder(load);
        auto tma = TmaLoadOp::create(builder, load.getLoc(), type, map,
                                     load.getOffsets());
        load.replaceAllUsesWith(tma.getResult());
        load.erase();
      }
    }
    if (!maps.empty())
      module->setAttr("tilegpu.tensor_maps", b.getArrayAttr(maps));
  }
};

} // namespace
