//===- LaunchChecks.cpp - Rules the launcher checks on arguments ----------===//
#include "tessel/Analysis/LaunchChecks.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace tessel {
namespace {

constexpr llvm::StringLiteral kLaunchChecks = "tile.launch_checks";

std::optional<ArgumentAffine> sum(std::optional<ArgumentAffine> a,
                                  std::optional<ArgumentAffine> b,
                                  bool subtract) {
  if (!a || !b)
    return std::nullopt;
  if (a->argument && b->argument && a->argument != b->argument)
    return std::nullopt;
  ArgumentAffine r;
  r.argument = a->argument ? a->argument : b->argument;
  r.scale = subtract ? a->scale - b->scale : a->scale + b->scale;
  r.offset = subtract ? a->offset - b->offset : a->offset + b->offset;
  return r;
}

std::optional<ArgumentAffine> scaled(std::optional<ArgumentAffine> a,
                                     uint64_t factor) {
  if (!a)
    return std::nullopt;
  a->scale *= factor;
  a->offset *= factor;
  return a;
}

std::optional<uint64_t> constantOf(Value v) {
  APInt value;
  if (!matchPattern(v, m_ConstantInt(&value)))
    return std::nullopt;
  return value.getSExtValue();
}

} // namespace

std::optional<ArgumentAffine> argumentAffine(Value v) {
  if (std::optional<uint64_t> c = constantOf(v))
    return ArgumentAffine{std::nullopt, 0, *c};
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!fn || arg.getOwner() != &fn.getBody().front() ||
        !fn->hasAttr("tile.kernel"))
      return std::nullopt;
    return ArgumentAffine{arg.getArgNumber(), 1, 0};
  }
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  // Casts keep the low bits, all that the rules modulo 2^k look at.
  if (isa<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp, arith::IndexCastOp>(
          op))
    return argumentAffine(op->getOperand(0));
  if (isa<arith::AddIOp, arith::SubIOp>(op))
    return sum(argumentAffine(op->getOperand(0)),
               argumentAffine(op->getOperand(1)), isa<arith::SubIOp>(op));
  if (isa<arith::MulIOp>(op)) {
    for (int i : {0, 1})
      if (std::optional<uint64_t> c = constantOf(op->getOperand(i)))
        return scaled(argumentAffine(op->getOperand(1 - i)), *c);
    return std::nullopt;
  }
  if (auto shl = dyn_cast<arith::ShLIOp>(op)) {
    std::optional<uint64_t> c = constantOf(shl.getRhs());
    if (!c || *c >= 64)
      return std::nullopt;
    return scaled(argumentAffine(shl.getLhs()), uint64_t(1) << *c);
  }
  if (auto addptr = dyn_cast<tile::AddPtrOp>(op)) {
    auto ptrType = dyn_cast<tile::PointerType>(addptr.getType());
    if (!ptrType || !ptrType.getPointeeType().isIntOrFloat())
      return std::nullopt;
    uint64_t bytes =
        std::max(1u, ptrType.getPointeeType().getIntOrFloatBitWidth() / 8);
    return sum(argumentAffine(addptr.getPtr()),
               scaled(argumentAffine(addptr.getOffset()), bytes), false);
  }
  return std::nullopt;
}

void addLaunchCheck(func::FuncOp kernel, const runtime::LaunchCheck &check) {
  Builder b(kernel.getContext());
  // Wide values as decimal strings: attributes hold signed 64-bit integers.
  auto number = [&](uint64_t v) { return b.getStringAttr(std::to_string(v)); };
  SmallVector<Attribute> checks;
  if (auto old = kernel->getAttrOfType<ArrayAttr>(kLaunchChecks))
    checks.assign(old.begin(), old.end());
  checks.push_back(b.getDictionaryAttr(
      {b.getNamedAttr("argument", b.getI32IntegerAttr(check.argument)),
       b.getNamedAttr("scale", number(check.scale)),
       b.getNamedAttr("offset", number(check.offset)),
       b.getNamedAttr("multiple", number(check.multiple)),
       b.getNamedAttr("message", b.getStringAttr(check.message))}));
  kernel->setAttr(kLaunchChecks, b.getArrayAttr(checks));
}

std::vector<runtime::LaunchCheck> launchChecks(func::FuncOp kernel) {
  std::vector<runtime::LaunchCheck> checks;
  auto attr = kernel->getAttrOfType<ArrayAttr>(kLaunchChecks);
  if (!attr)
    return checks;
  for (Attribute a : attr) {
    auto d = dyn_cast<DictionaryAttr>(a);
    auto argument = d ? d.getAs<IntegerAttr>("argument") : IntegerAttr();
    auto number = [&](StringRef field) -> uint64_t {
      auto text = d.getAs<StringAttr>(field);
      uint64_t v = 0;
      if (!text || text.getValue().getAsInteger(10, v))
        return 0;
      return v;
    };
    auto message = d ? d.getAs<StringAttr>("message") : StringAttr();
    if (!argument || !message)
      continue;
    checks.push_back({unsigned(argument.getInt()), number("scale"),
                      number("offset"), number("multiple"),
                      message.getValue().str()});
  }
  return checks;
}

} // namespace tessel
