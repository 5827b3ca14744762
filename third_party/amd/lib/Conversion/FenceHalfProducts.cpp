//===- FenceHalfProducts.cpp - fp32 products rounded to fp16 --------------===//
//
// See the pass description in third_party/amd/include/tessel/AMD/Passes.td.
//
//   %p = llvm.fmul %x, %c : f32          %p = llvm.fmul %x, %c : f32
//   %h = llvm.fptrunc %p : f32 to f16 => %f = llvm.inline_asm "", "=v,0" %p
//                                         %h = llvm.fptrunc %f : f32 to f16
//
//===----------------------------------------------------------------------===//
#include "tessel/AMD/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace tessel::amd {
#define GEN_PASS_DEF_FENCEHALFPRODUCTS
#include "tessel/AMD/Passes.h.inc"
} // namespace tessel::amd

using namespace mlir;

namespace {

/// `operand` taken through a fence when an fp32 multiply makes it.
void fenceProduct(OpOperand &operand) {
  auto mul = operand.get().getDefiningOp<LLVM::FMulOp>();
  if (!mul || !getElementTypeOrSelf(mul.getType()).isF32())
    return;
  // An empty asm statement that takes and gives the value in one VGPR: LLVM
  // cannot look through it, and it is right for uniform values too (an
  // llvm.arithmetic.fence of a uniform product fails LLVM 22's instruction
  // selection with "illegal VGPR to SGPR copy").
  OpBuilder b(operand.getOwner());
  auto fence = LLVM::InlineAsmOp::create(
      b, mul.getLoc(), mul.getType(), ValueRange{mul}, /*asm_string=*/"",
      /*constraints=*/"=v,0", /*has_side_effects=*/false,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  operand.set(fence.getRes());
}

struct FenceHalfProducts
    : public tessel::amd::impl::FenceHalfProductsBase<FenceHalfProducts> {
  void runOnOperation() override {
    getOperation().walk([](LLVM::FPTruncOp trunc) {
      if (!getElementTypeOrSelf(trunc.getType()).isF16())
        return;
      fenceProduct(trunc->getOpOperand(0));
      // The elements of a vector rounded at once (two per register).
      for (auto insert = trunc.getArg().getDefiningOp<LLVM::InsertElementOp>();
           insert;
           insert = insert.getVector().getDefiningOp<LLVM::InsertElementOp>())
        fenceProduct(insert->getOpOperand(1));
    });
  }
};

} // namespace
