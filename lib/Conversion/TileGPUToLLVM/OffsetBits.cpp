//===- OffsetBits.cpp - Constants folded into thread offsets ------------------===//
#include "OffsetBits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tessel::gpu::lowering;

namespace {

std::optional<uint32_t> constantOf(Value v) {
  APInt c;
  if (!matchPattern(v, m_ConstantInt(&c)) || c.getBitWidth() > 32)
    return std::nullopt;
  return uint32_t(c.getZExtValue());
}

/// Bits below and at the highest bit of `x`.
uint32_t upTo(uint64_t x) {
  return x >= (1ull << 32) ? ~0u : uint32_t(llvm::maskTrailingOnes<uint64_t>(
                                        llvm::bit_width(x)));
}

} // namespace

uint32_t tessel::gpu::lowering::possibleBits(Value v) {
  if (auto c = constantOf(v))
    return *c;
  Operation *op = v.getDefiningOp();
  if (!op || op->getNumOperands() != 2)
    return ~0u;
  Value x = op->getOperand(0), y = op->getOperand(1);
  std::optional<uint32_t> k = constantOf(y);
  if (isa<arith::AndIOp>(op))
    return possibleBits(x) & possibleBits(y);
  if (isa<arith::OrIOp, arith::XOrIOp>(op))
    return possibleBits(x) | possibleBits(y);
  if (isa<arith::AddIOp>(op)) {
    uint32_t px = possibleBits(x), py = possibleBits(y);
    return (px & py) == 0 ? px | py : upTo(uint64_t(px) + py);
  }
  if (isa<arith::ShLIOp>(op) && k && *k < 32)
    return possibleBits(x) << *k;
  if (isa<arith::ShRUIOp>(op) && k && *k < 32)
    return possibleBits(x) >> *k;
  if (isa<arith::MulIOp>(op) && k) {
    // A value of one possible bit times a constant: the constant shifted.
    uint32_t px = possibleBits(x);
    if (llvm::has_single_bit(px))
      return *k << llvm::countr_zero(px);
    return upTo(uint64_t(px) * *k);
  }
  return ~0u;
}

Value tessel::gpu::lowering::xorElementAddress(OpBuilder &b, Location loc,
                                               Value base, Value thread,
                                               int32_t c, int32_t size) {
  uint32_t mine = possibleBits(thread);
  uint32_t xored = uint32_t(c) & mine, added = uint32_t(c) & ~mine;
  auto constant = [&](int64_t x) {
    return b.create<arith::ConstantIntOp>(loc, b.getI32Type(), x);
  };
  if (xored)
    thread = b.create<arith::XOrIOp>(loc, thread, constant(xored));
  Type i8 = b.getI8Type();
  Value addr = b.create<LLVM::GEPOp>(
      loc, base.getType(), i8, base,
      ValueRange{b.create<arith::MulIOp>(loc, thread, constant(size))});
  if (added)
    addr = b.create<LLVM::GEPOp>(loc, base.getType(), i8, addr,
                                 ArrayRef<LLVM::GEPArg>{int32_t(added) * size});
  return addr;
}
