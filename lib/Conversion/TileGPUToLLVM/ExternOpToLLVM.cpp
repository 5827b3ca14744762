//===- ExternOpToLLVM.cpp - Inline assembly and external calls ------------===//
//
// tile.elementwise_inline_asm runs its assembly once per `packed_element`
// registers of the thread, as Triton does: operands and results narrower
// than 32 bits travel as vectors that fill 32-bit registers (up to
// `packed_element` elements each), the registers past the last element of a
// thread padded with undefined values. tile.extern_elementwise calls its
// function once per register (the target links the library: libdevice's
// functions on NVIDIA).
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "Utility.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;

namespace {

/// Registers of this thread a value of `type` takes (1 for a scalar).
int registersOf(Type type) {
  return hasLayout(type) ? layoutOf(type).inSize(gpu::kRegister) : 1;
}

/// The type of one asm register holding `per` elements of `elt`: narrow
/// integers packed as an i32 (AMD's register constraints take no i8 or i16
/// vectors), 16-bit floats as their vector.
Type registerType(Type elt, int per) {
  if (per == 1)
    return elt;
  if (isa<IntegerType>(elt))
    return IntegerType::get(elt.getContext(), 32);
  return VectorType::get({per}, elt);
}

/// Elements of `elt` one 32-bit register holds, at most `pack`.
int perRegister(Type elt, int pack) {
  unsigned bits = elt.isIntOrFloat() ? elt.getIntOrFloatBitWidth() : 64;
  return std::min<int>(std::max(32u / std::max(bits, 1u), 1u), pack);
}

struct InlineAsmLowering : TileGPUPattern<tile::ElementwiseInlineAsmOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::ElementwiseInlineAsmOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    const TypeConverter *tc = getTypeConverter();
    int pack = int(op.getPackedElement());
    int n = registersOf(op.getResult(0).getType());
    int padded = (n + pack - 1) / pack * pack;
    // Each operand's registers, padded to whole instances.
    SmallVector<SmallVector<Value>> operands;
    for (auto [value, regs] : llvm::zip(op.getArgs(), adaptor.getArgs())) {
      SmallVector<Value> x(regs.begin(), regs.end());
      if (x.size() == 1 && n > 1)
        x.assign(n, x[0]);
      while (int(x.size()) < padded)
        x.push_back(rw.create<LLVM::UndefOp>(loc, x[0].getType()));
      operands.push_back(std::move(x));
    }
    SmallVector<Type> results;
    for (Value r : op.getResults())
      results.push_back(tc->convertType(getElementTypeOrSelf(r.getType())));
    // What one instance returns: per result, pack / perRegister registers.
    SmallVector<Type> asmTypes;
    for (Type elt : results) {
      int per = perRegister(elt, pack);
      if (pack % per)
        return op.emitError("inline_asm_elementwise: pack=")
               << pack << " is not a multiple of the " << per << " "
               << elt << " elements a 32-bit register holds";
      asmTypes.append(pack / per, registerType(elt, per));
    }
    Type asmType = asmTypes.size() > 1
                       ? Type(LLVM::LLVMStructType::getLiteral(rw.getContext(),
                                                               asmTypes))
                       : asmTypes[0];
    SmallVector<SmallVector<Value>> values(op.getNumResults());
    for (int start = 0; start < padded; start += pack) {
      SmallVector<Value> packed;
      for (SmallVector<Value> &x : operands) {
        Type elt = x[0].getType();
        int per = perRegister(elt, pack);
        for (int j = 0; j < pack; j += per) {
          if (per == 1) {
            packed.push_back(x[start + j]);
            continue;
          }
          Value v = rw.create<LLVM::UndefOp>(loc, VectorType::get({per}, elt));
          for (int k = 0; k < per && j + k < pack; ++k)
            v = rw.create<LLVM::InsertElementOp>(loc, v, x[start + j + k],
                                                 i32Const(rw, loc, k));
          Type reg = registerType(elt, per);
          if (reg != v.getType())
            v = rw.create<LLVM::BitcastOp>(loc, reg, v);
          packed.push_back(v);
        }
      }
      Value out =
          rw.create<LLVM::InlineAsmOp>(
                loc, asmType, packed, op.getAsmString(), op.getConstraints(),
                /*has_side_effects=*/!op.getPure(), /*is_align_stack=*/false,
                LLVM::tailcallkind::TailCallKind::None,
                LLVM::AsmDialectAttr::get(rw.getContext(),
                                          LLVM::AsmDialect::AD_ATT),
                /*operand_attrs=*/ArrayAttr())
              .getRes();
      int field = 0;
      for (auto [r, elt] : llvm::enumerate(results)) {
        int per = perRegister(elt, pack);
        for (int j = 0; j < pack; j += per) {
          Value v = asmTypes.size() > 1
                        ? rw.create<LLVM::ExtractValueOp>(loc, out, field)
                              .getResult()
                        : out;
          ++field;
          if (per == 1) {
            values[r].push_back(v);
            continue;
          }
          if (isa<IntegerType>(v.getType()))
            v = rw.create<LLVM::BitcastOp>(loc, VectorType::get({per}, elt), v);
          for (int k = 0; k < per; ++k)
            values[r].push_back(rw.create<LLVM::ExtractElementOp>(
                loc, v, i32Const(rw, loc, k)));
        }
      }
    }
    SmallVector<SmallVector<Value>> replacements;
    for (SmallVector<Value> &v : values) {
      v.resize(n);
      replacements.push_back(std::move(v));
    }
    SmallVector<ValueRange> ranges(replacements.begin(), replacements.end());
    rw.replaceOpWithMultiple(op, ranges);
    return success();
  }
};

struct ExternCallLowering : TileGPUPattern<tile::ExternElementwiseOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::ExternElementwiseOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    const TypeConverter *tc = getTypeConverter();
    Type result = tc->convertType(getElementTypeOrSelf(op.getType()));
    SmallVector<Type> args;
    for (Value a : op.getArgs())
      args.push_back(tc->convertType(getElementTypeOrSelf(a.getType())));
    auto fnType = LLVM::LLVMFunctionType::get(result, args);
    auto module = op->getParentOfType<ModuleOp>();
    auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(op.getSymbol());
    if (!fn) {
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(module.getBody());
      fn = rw.create<LLVM::LLVMFuncOp>(loc, op.getSymbol(), fnType);
    } else if (fn.getFunctionType() != fnType) {
      return op.emitError("extern_elementwise: ")
             << op.getSymbol() << " is called with two different types: "
             << fn.getFunctionType() << " and " << fnType;
    }
    int n = registersOf(op.getType());
    SmallVector<Value> values;
    for (int i = 0; i < n; ++i) {
      SmallVector<Value> callArgs;
      for (ValueRange regs : adaptor.getArgs())
        callArgs.push_back(regs.size() == 1 ? regs[0] : regs[i]);
      values.push_back(rw.create<LLVM::CallOp>(loc, fn, callArgs).getResult());
    }
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

} // namespace

void gpu::lowering::populateExternOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<InlineAsmLowering, ExternCallLowering>(
      tc, patterns.getContext(), target);
}
