//===- DebugOps.cpp - Printing, assertions and extension ops --------------===//
#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace tessel::tile;

//===----------------------------------------------------------------------===//
// PrintOp
//===----------------------------------------------------------------------===//

LogicalResult PrintOp::verify() {
  if (getIsSigned().size() != getArgs().size())
    return emitOpError("has ") << getArgs().size() << " operands but "
                               << getIsSigned().size()
                               << " entries of isSigned";
  for (Value arg : getArgs())
    if (isFP8Type(arg.getType()))
      return emitOpError("cannot print 8-bit floats (convert them first)");
  return success();
}

/// The conversion of a printed value of element type `t` (pointers are
/// printed as their address).
static std::string valueFormat(Type t, bool isSigned, bool hex) {
  if (isa<PointerType>(t))
    return "%p";
  unsigned bits = t.getIntOrFloatBitWidth();
  if (hex)
    return "0x%0" + std::to_string(std::max(1u, bits / 4)) +
           (bits > 32 ? "llx" : "x");
  if (isa<FloatType>(t))
    return "%f";
  if (bits > 32)
    return isSigned ? "%lli" : "%llu";
  return isSigned ? "%i" : "%u";
}

std::string tessel::tile::printFormat(PrintOp op, unsigned operand) {
  std::string prefix;
  for (char c : op.getPrefix()) {
    prefix += c;
    if (c == '%')
      prefix += '%';
  }
  std::string format;
  llvm::raw_string_ostream os(format);
  os << "pid (%u, %u, %u)";
  if (op.getArgs().empty()) {
    os << prefix << "\n";
    return format;
  }
  Value arg = op.getArgs()[operand];
  os << " idx (";
  // Each dimension's index as wide as its largest (Triton's widths).
  for (auto [i, dim] : llvm::enumerate(getShapeOrEmpty(arg.getType()))) {
    int width = dim > 0 ? int(std::ceil(std::log10(double(dim)))) : 0;
    os << (i ? ", " : "") << "%" << width << "u";
  }
  os << ")" << prefix;
  if (op.getArgs().size() > 1)
    os << "(operand " << operand << ") ";
  os << valueFormat(getElementTypeOrSelf(arg.getType()),
                    op.getIsSigned()[operand] != 0, op.getHex())
     << "\n";
  return format;
}

Value tessel::tile::printfArgument(OpBuilder &b, Location loc, Value v,
                                   bool isSigned, bool hex) {
  Type t = v.getType();
  if (!t.isIntOrFloat())
    return v; // a pointer's address, made an integer by the caller
  unsigned bits = t.getIntOrFloatBitWidth();
  if (isa<FloatType>(t)) {
    if (hex) {
      v = arith::BitcastOp::create(b, loc, b.getIntegerType(bits), v);
      isSigned = false;
    } else {
      if (bits < 32)
        v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
      return t.isF64() ? v : arith::ExtFOp::create(b, loc, b.getF64Type(), v);
    }
  }
  if (bits >= 32)
    return v;
  Type i32 = b.getI32Type();
  if (isSigned && !hex)
    return arith::ExtSIOp::create(b, loc, i32, v);
  return arith::ExtUIOp::create(b, loc, i32, v);
}

//===----------------------------------------------------------------------===//
// ElementwiseInlineAsmOp, ExternElementwiseOp
//===----------------------------------------------------------------------===//

/// Operands and results all of one shape, or all scalars.
static LogicalResult verifySameShape(Operation *op) {
  std::optional<ArrayRef<int64_t>> shape;
  bool anyScalar = false;
  for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                   op->getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor) {
      anyScalar = true;
      continue;
    }
    if (shape && *shape != tensor.getShape())
      return op->emitOpError("operands and results must have one shape");
    shape = tensor.getShape();
  }
  if (shape && anyScalar)
    return op->emitOpError(
        "operands and results must be all blocks or all scalars");
  return success();
}

/// What code that is not pure may do: read and write any memory.
static void impureEffects(
    bool pure,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (pure)
    return;
  effects.emplace_back(MemoryEffects::Write::get(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Read::get(),
                       SideEffects::DefaultResource::get());
}

LogicalResult ElementwiseInlineAsmOp::verify() {
  if (getResults().empty())
    return emitOpError("must have at least one result");
  return verifySameShape(*this);
}

void ElementwiseInlineAsmOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  impureEffects(getPure(), effects);
}

LogicalResult ExternElementwiseOp::verify() {
  if (getSymbol().empty())
    return emitOpError("needs a symbol");
  return verifySameShape(*this);
}

void ExternElementwiseOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  impureEffects(getPure(), effects);
}
