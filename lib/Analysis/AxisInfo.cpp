//===- AxisInfo.cpp - Divisibility, contiguity, constancy per dimension ---===//
//
// See include/tessel/Analysis/AxisInfo.h for what the facts mean. All three
// are powers of 2, so the greatest common divisor of two of them is the
// smaller one.
//
//===----------------------------------------------------------------------===//
#include "tessel/Analysis/AxisInfo.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Analysis/DataFlow/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace mlir;
using namespace tessel;

namespace {

/// The largest power of 2 dividing `v` (kMaxDivisibility for zero).
int64_t pow2Divisor(int64_t v) {
  if (v == 0)
    return kMaxDivisibility;
  uint64_t u = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  return std::min<int64_t>(kMaxDivisibility, int64_t(1)
                                                 << llvm::countr_zero(u));
}

int64_t mulCapped(int64_t a, int64_t b) {
  return int64_t(std::min<uint64_t>(
      kMaxDivisibility, llvm::SaturatingMultiply(uint64_t(a), uint64_t(b))));
}

/// The shape the analysis gives a value: a scalar is a block of one element.
SmallVector<int64_t, 4> shapeOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return SmallVector<int64_t, 4>(tensor.getShape());
  return {1};
}

/// The integer a scalar or splat constant attribute holds.
std::optional<int64_t> constantInt(Attribute attr) {
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(attr))
    attr = splat.getSplatValue<Attribute>();
  auto intAttr = dyn_cast_if_present<IntegerAttr>(attr);
  if (!intAttr || !intAttr.getType().isIntOrIndex())
    return std::nullopt;
  const APInt &v = intAttr.getValue();
  if (v.getBitWidth() > 64)
    return std::nullopt;
  return v.getBitWidth() == 1 ? int64_t(v.getZExtValue()) : v.getSExtValue();
}

/// The constant `v` holds in every element, from the analysis or the IR.
std::optional<int64_t> constantOf(const AxisInfo &info) {
  return info.getConstantValue();
}

/// A power of 2 that `v` holds in every element, if it is one.
std::optional<int64_t> pow2Constant(const AxisInfo &info) {
  auto c = constantOf(info);
  if (!c || *c <= 0 || !llvm::isPowerOf2_64(*c) || *c > kMaxDivisibility)
    return std::nullopt;
  return *c;
}

/// Every fact stated by an assumption `tile.assume((v % 2^k) == 0)` about
/// `v`: the largest such 2^k (1 when there is none).
int64_t assumedDivisibility(Value v) {
  int64_t best = 1;
  for (Operation *user : v.getUsers()) {
    if (!isa<arith::RemSIOp, arith::RemUIOp>(user) ||
        user->getOperand(0) != v)
      continue;
    APInt divisor;
    if (!matchPattern(user->getOperand(1), m_ConstantInt(&divisor)) ||
        divisor.getBitWidth() > 64 || !divisor.isStrictlyPositive() ||
        !divisor.isPowerOf2())
      continue;
    for (Operation *cmpUser : user->getResult(0).getUsers()) {
      auto cmp = dyn_cast<arith::CmpIOp>(cmpUser);
      if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq ||
          !(matchPattern(cmp.getLhs(), m_Zero()) ||
            matchPattern(cmp.getRhs(), m_Zero())))
        continue;
      if (llvm::any_of(cmp->getUsers(),
                       [](Operation *u) { return isa<tessel::tile::AssumeOp>(u); }))
        best = std::max(best, std::min<int64_t>(kMaxDivisibility,
                                                divisor.getZExtValue()));
    }
  }
  return best;
}

/// Raises the facts of `info` by the hint attributes of `op` (each a fact the
/// user states, rounded down to a power of 2 and to the dimension's size) and
/// by assumptions about `result`.
AxisInfo withHints(const AxisInfo &info, Operation *op, Value result) {
  auto shape = shapeOf(result.getType());
  AxisInfo::Dims div(info.getDivisibility()), contig(info.getContiguity()),
      cst(info.getConstancy());
  auto raise = [&](StringRef name, AxisInfo::Dims &dims, bool bySize) {
    auto hint = op ? op->getAttrOfType<DenseI32ArrayAttr>(name) : nullptr;
    if (!hint || hint.size() != (int64_t)dims.size())
      return;
    for (auto [d, h] : llvm::enumerate(hint.asArrayRef())) {
      if (h < 1)
        continue;
      int64_t v = pow2Divisor(h);
      if (bySize)
        v = std::min(v, pow2Divisor(shape[d]));
      dims[d] = std::max(dims[d], v);
    }
  };
  raise(tessel::tile::kDivisibilityAttr, div, /*bySize=*/false);
  raise(tessel::tile::kContiguityAttr, contig, /*bySize=*/true);
  raise(tessel::tile::kConstancyAttr, cst, /*bySize=*/true);
  if (int64_t assumed = assumedDivisibility(result); assumed > 1)
    for (int64_t &d : div)
      d = std::max(d, assumed);
  return AxisInfo(div, contig, cst, info.getConstantValue());
}

/// The facts of an element-wise op that only keeps groups of equal inputs
/// equal (comparisons, bitwise ops, casts, math, loads).
AxisInfo elementwise(ArrayRef<int64_t> shape,
                     ArrayRef<const AxisInfo *> operands) {
  AxisInfo result = AxisInfo::unknown(shape);
  AxisInfo::Dims cst(shape.begin(), shape.end());
  for (int64_t &c : cst)
    c = pow2Divisor(c);
  for (const AxisInfo *operand : operands) {
    if (!operand || operand->getRank() != cst.size())
      return result;
    for (unsigned d = 0; d < cst.size(); ++d)
      cst[d] = std::min(cst[d], operand->getConstancy(d));
  }
  return AxisInfo(AxisInfo::Dims(result.getDivisibility()),
                  AxisInfo::Dims(result.getContiguity()), cst);
}

bool isOrdering(arith::CmpIPredicate p) {
  return p != arith::CmpIPredicate::eq && p != arith::CmpIPredicate::ne;
}

/// x < y (and the other orderings) of a contiguous block against a block
/// constant over as many elements: in an aligned group of g consecutive
/// values starting at a multiple of g, compared with a multiple of g, the
/// result can only change at a group's start, so it is constant over groups
/// of g (`offs < n` with n a multiple of 16 is constant over 16 lanes).
AxisInfo orderingCompare(ArrayRef<int64_t> shape, const AxisInfo &lhs,
                         const AxisInfo &rhs) {
  AxisInfo result = elementwise(shape, {&lhs, &rhs});
  AxisInfo::Dims cst(result.getConstancy());
  for (unsigned d = 0; d < shape.size(); ++d)
    for (auto [x, bound] : {std::pair(&lhs, &rhs), std::pair(&rhs, &lhs)}) {
      int64_t g = std::min(x->getContiguity(d), bound->getConstancy(d));
      while (g > cst[d] && (x->divisibilityAt(d, g) % g != 0 ||
                            bound->elementDivisibility(1) % g != 0))
        g /= 2;
      cst[d] = std::max(cst[d], g);
    }
  return AxisInfo(AxisInfo::Dims(result.getDivisibility()),
                  AxisInfo::Dims(result.getContiguity()), cst);
}

/// x + y, x - y and ptr + offset (an offset of `scale`-byte elements).
AxisInfo addLike(const AxisInfo &lhs, const AxisInfo &rhs, bool isSub,
                 int64_t lhsStep, int64_t scale) {
  unsigned rank = lhs.getRank();
  AxisInfo::Dims div(rank), contig(rank), cst(rank);
  for (unsigned d = 0; d < rank; ++d) {
    int64_t c = std::min(lhs.getContiguity(d), rhs.getConstancy(d));
    if (!isSub)
      c = std::max(c, std::min(lhs.getConstancy(d), rhs.getContiguity(d)));
    contig[d] = c;
    cst[d] = std::min(lhs.getConstancy(d), rhs.getConstancy(d));
    div[d] = std::min(lhs.divisibilityAt(d, c, lhsStep),
                      mulCapped(rhs.divisibilityAt(d, c), scale));
  }
  std::optional<int64_t> constant;
  if (scale == 1 && lhs.getConstantValue() && rhs.getConstantValue()) {
    int64_t l = *lhs.getConstantValue(), r = *rhs.getConstantValue(), v;
    bool overflow = isSub ? llvm::SubOverflow(l, r, v)
                          : llvm::AddOverflow(l, r, v);
    if (!overflow && std::abs(v) <= INT32_MAX)
      constant = v;
  }
  return AxisInfo(div, contig, cst, constant);
}

AxisInfo mul(const AxisInfo &lhs, const AxisInfo &rhs) {
  if (lhs.getConstantValue() == 1)
    return rhs;
  if (rhs.getConstantValue() == 1)
    return lhs;
  unsigned rank = lhs.getRank();
  AxisInfo::Dims div(rank), contig(rank, 1), cst(rank);
  for (unsigned d = 0; d < rank; ++d) {
    cst[d] = std::min(lhs.getConstancy(d), rhs.getConstancy(d));
    div[d] = mulCapped(lhs.divisibilityAt(d, 1), rhs.divisibilityAt(d, 1));
  }
  return AxisInfo(div, contig, cst);
}

/// x / 2^k rounded down (unsigned division, arithmetic or logical shift
/// right): aligned groups of up to 2^k consecutive values give one quotient.
AxisInfo floorDivByPow2(const AxisInfo &lhs, int64_t p) {
  unsigned rank = lhs.getRank();
  AxisInfo::Dims div(rank), contig(rank, 1), cst(rank);
  for (unsigned d = 0; d < rank; ++d) {
    int64_t c = std::min(lhs.getContiguity(d), p);
    cst[d] = lhs.getConstancy(d);
    if (lhs.divisibilityAt(d, c) >= c)
      cst[d] = std::max(cst[d], c);
    int64_t e = lhs.divisibilityAt(d, 1);
    div[d] = e >= p ? e / p : 1;
  }
  return AxisInfo(div, contig, cst);
}

/// Exact facts of x / y rounded toward zero: only divisibility and the
/// constancy both share.
AxisInfo truncDiv(const AxisInfo &lhs, const AxisInfo &rhs) {
  unsigned rank = lhs.getRank();
  AxisInfo::Dims div(rank, 1), contig(rank, 1), cst(rank);
  auto p = pow2Constant(rhs);
  for (unsigned d = 0; d < rank; ++d) {
    cst[d] = std::min(lhs.getConstancy(d), rhs.getConstancy(d));
    int64_t e = lhs.divisibilityAt(d, 1);
    if (p && e >= *p)
      div[d] = e / *p;
  }
  return AxisInfo(div, contig, cst);
}

/// x % y: a multiple of what both are multiples of. Where x runs through
/// consecutive values and y stays the same, a group of g elements whose first
/// value and y are multiples of g holds no multiple of y after its first
/// element, so the group stays consecutive ((pid * BLOCK + arange) % N, the
/// offsets of Triton's matmul tutorial, with N a multiple of 16). For a signed
/// remainder this takes x >= 0, as offsets into memory are and as Triton's
/// own analysis does: a negative group that starts at a multiple of y wraps
/// at its first element (-32 % 32 is 0, -31 % 32 is -31).
AxisInfo rem(const AxisInfo &lhs, const AxisInfo &rhs) {
  unsigned rank = lhs.getRank();
  AxisInfo::Dims div(rank), contig(rank, 1), cst(rank);
  for (unsigned d = 0; d < rank; ++d) {
    cst[d] = std::min(lhs.getConstancy(d), rhs.getConstancy(d));
    div[d] = std::min(lhs.divisibilityAt(d, 1), rhs.divisibilityAt(d, 1));
    int64_t y = rhs.divisibilityAt(d, 1);
    int64_t g = std::gcd(std::gcd(lhs.getContiguity(d), lhs.getDivisibility(d)),
                         std::gcd(y, rhs.getConstancy(d)));
    if (g > 1) {
      contig[d] = g;
      div[d] = std::min(lhs.divisibilityAt(d, g), y);
    }
  }
  return AxisInfo(div, contig, cst);
}

AxisInfo shiftLeft(const AxisInfo &lhs, int64_t k) {
  if (k == 0)
    return lhs;
  unsigned rank = lhs.getRank();
  AxisInfo::Dims div(rank), contig(rank, 1), cst(AxisInfo::Dims(lhs.getConstancy()));
  for (unsigned d = 0; d < rank; ++d)
    div[d] = mulCapped(lhs.divisibilityAt(d, 1), int64_t(1) << k);
  return AxisInfo(div, contig, cst);
}

/// Facts that survive a cast to `bits` bits keeping the low bits: aligned
/// runs of at most 2^bits values never wrap.
AxisInfo truncate(const AxisInfo &x, unsigned bits) {
  int64_t cap = bits >= 30 ? kMaxDivisibility : int64_t(1) << bits;
  AxisInfo::Dims div(x.getDivisibility()), contig(x.getContiguity()),
      cst(x.getConstancy());
  for (int64_t &v : div)
    v = std::min(v, cap);
  for (int64_t &v : contig)
    v = std::min(v, cap);
  return AxisInfo(div, contig, cst);
}

} // namespace

//===----------------------------------------------------------------------===//
// AxisInfo
//===----------------------------------------------------------------------===//

AxisInfo::AxisInfo(Dims divisibility, Dims contiguity, Dims constancy,
                   std::optional<int64_t> constant)
    : divisibility(std::move(divisibility)), contiguity(std::move(contiguity)),
      constancy(std::move(constancy)), constant(constant) {}

AxisInfo AxisInfo::unknown(ArrayRef<int64_t> shape, int64_t divisibility) {
  size_t rank = std::max<size_t>(1, shape.size());
  return AxisInfo(Dims(rank, divisibility), Dims(rank, 1), Dims(rank, 1));
}

int64_t AxisInfo::elementDivisibility(int64_t step) const {
  int64_t best = step;
  for (unsigned d = 0; d < getRank(); ++d)
    if (contiguity[d] == 1)
      best = std::max(best, divisibility[d]);
  return best;
}

int64_t AxisInfo::divisibilityAt(unsigned dim, int64_t groupSize,
                                 int64_t step) const {
  int64_t atDim = groupSize >= contiguity[dim]
                      ? divisibility[dim]
                      : std::min(divisibility[dim], mulCapped(groupSize, step));
  // A fact about every element holds at any index.
  return std::max(atDim, elementDivisibility(1));
}

AxisInfo AxisInfo::join(const AxisInfo &lhs, const AxisInfo &rhs) {
  if (lhs.isUninitialized())
    return rhs;
  if (rhs.isUninitialized())
    return lhs;
  if (lhs.getRank() != rhs.getRank())
    return unknown(Dims(lhs.getRank(), 1));
  unsigned rank = lhs.getRank();
  Dims div(rank), contig(rank), cst(rank);
  for (unsigned d = 0; d < rank; ++d) {
    contig[d] = std::min(lhs.contiguity[d], rhs.contiguity[d]);
    cst[d] = std::min(lhs.constancy[d], rhs.constancy[d]);
    div[d] = std::min(lhs.divisibilityAt(d, contig[d]),
                      rhs.divisibilityAt(d, contig[d]));
  }
  std::optional<int64_t> constant;
  if (lhs.constant == rhs.constant)
    constant = lhs.constant;
  return AxisInfo(div, contig, cst, constant);
}

void AxisInfo::print(raw_ostream &os) const {
  if (isUninitialized()) {
    os << "<uninitialized>";
    return;
  }
  auto list = [&](ArrayRef<int64_t> dims) {
    os << "[";
    llvm::interleaveComma(dims, os);
    os << "]";
  };
  os << "divisibility = ";
  list(divisibility);
  os << ", contiguity = ";
  list(contiguity);
  os << ", constancy = ";
  list(constancy);
  os << ", constant = ";
  if (constant)
    os << *constant;
  else
    os << "?";
}

//===----------------------------------------------------------------------===//
// AxisInfoAnalysis
//===----------------------------------------------------------------------===//

int64_t tessel::pointeeBytes(Type ptrLike) {
  auto ptr = dyn_cast<tile::PointerType>(getElementTypeOrSelf(ptrLike));
  if (!ptr)
    return 1;
  unsigned bits = ptr.getPointeeType().getIntOrFloatBitWidth();
  return std::max<int64_t>(1, llvm::PowerOf2Ceil(bits) / 8);
}

void AxisInfoAnalysis::setToEntryState(AxisInfoLattice *lattice) {
  Value value = lattice->getAnchor();
  int64_t div = isa<tile::PointerType>(value.getType())
                    ? pointeeBytes(value.getType())
                    : 1;
  // A kernel argument the launcher found divisible (or a hint on it).
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *parent = arg.getOwner()->getParentOp();
    if (auto fn = dyn_cast_if_present<FunctionOpInterface>(parent);
        fn && arg.getOwner()->isEntryBlock())
      if (auto attr = fn.getArgAttrOfType<IntegerAttr>(
              arg.getArgNumber(), tile::kDivisibilityAttr))
        div = std::max(div, pow2Divisor(attr.getInt()));
  }
  AxisInfo info = withHints(
      AxisInfo::unknown(shapeOf(value.getType()), div), nullptr, value);
  propagateIfChanged(lattice, lattice->join(info));
}

void AxisInfoAnalysis::visitNonControlFlowArguments(
    Operation *op, const RegionSuccessor &successor,
    ArrayRef<AxisInfoLattice *> argLattices, unsigned firstIndex) {
  // The induction variable of lb + i * step is a multiple of what both are.
  // The body's arguments are the induction variable, then the iter_args (the
  // successor inputs, from firstIndex; a loop without iter_args has none and
  // firstIndex 0).
  unsigned inputs = successor.getSuccessorInputs().size();
  unsigned begin = inputs ? firstIndex : argLattices.size();
  if (auto forOp = dyn_cast<scf::ForOp>(op);
      forOp && successor.getSuccessor() == &forOp.getRegion() &&
      !argLattices.empty() && begin >= 1) {
    const AxisInfoLattice *lb = getLatticeElementFor(
        getProgramPointAfter(op), forOp.getLowerBound());
    const AxisInfoLattice *step =
        getLatticeElementFor(getProgramPointAfter(op), forOp.getStep());
    if (!lb->getValue().isUninitialized() &&
        !step->getValue().isUninitialized()) {
      int64_t div = std::min(lb->getValue().elementDivisibility(),
                             step->getValue().elementDivisibility());
      Value iv = forOp.getInductionVar();
      AxisInfo info = withHints(AxisInfo::unknown({}, div), nullptr, iv);
      propagateIfChanged(argLattices[0], argLattices[0]->join(info));
    }
    setAllToEntryStates(argLattices.slice(1, begin - 1));
    setAllToEntryStates(argLattices.drop_front(begin + inputs));
    return;
  }
  SparseForwardDataFlowAnalysis::visitNonControlFlowArguments(
      op, successor, argLattices, firstIndex);
}

LogicalResult
AxisInfoAnalysis::visitOperation(Operation *op,
                                 ArrayRef<const AxisInfoLattice *> operands,
                                 ArrayRef<AxisInfoLattice *> results) {
  if (results.size() != 1) {
    setAllToEntryStates(results);
    return success();
  }
  // Wait until every operand is known (the optimistic start).
  SmallVector<const AxisInfo *, 4> in;
  for (const AxisInfoLattice *operand : operands) {
    if (operand->getValue().isUninitialized())
      return success();
    in.push_back(&operand->getValue());
  }
  Value result = op->getResult(0);
  auto shape = shapeOf(result.getType());
  unsigned rank = shape.size();
  auto sameRank = [&] {
    return llvm::all_of(in, [&](const AxisInfo *i) { return i->getRank() == rank; });
  };
  auto full = [&] {
    AxisInfo::Dims dims;
    for (int64_t s : shape)
      dims.push_back(pow2Divisor(s));
    return dims;
  };

  std::optional<AxisInfo> info;
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    if (auto v = constantInt(c.getValue()))
      info = AxisInfo(AxisInfo::Dims(rank, pow2Divisor(*v)),
                      AxisInfo::Dims(rank, 1), full(), *v);
    else if (isa<SplatElementsAttr>(c.getValue()))
      info = AxisInfo(AxisInfo::Dims(rank, 1), AxisInfo::Dims(rank, 1),
                      full());
  } else if (auto range = dyn_cast<tile::MakeRangeOp>(op)) {
    info = AxisInfo({pow2Divisor(range.getStart())}, {pow2Divisor(shape[0])},
                    {1});
  } else if (isa<tile::SplatOp>(op)) {
    const AxisInfo &src = *in[0];
    info = AxisInfo(AxisInfo::Dims(rank, src.getDivisibility(0)),
                    AxisInfo::Dims(rank, 1), full(), src.getConstantValue());
  } else if (auto bc = dyn_cast<tile::BroadcastOp>(op)) {
    const AxisInfo &src = *in[0];
    AxisInfo::Dims div(src.getDivisibility()), contig(src.getContiguity()),
        cst(src.getConstancy());
    for (auto [d, s] : llvm::enumerate(bc.getSrc().getType().getShape()))
      if (s == 1 && shape[d] != 1) {
        contig[d] = 1;
        cst[d] = pow2Divisor(shape[d]);
      }
    info = AxisInfo(div, contig, cst, src.getConstantValue());
  } else if (auto ed = dyn_cast<tile::ExpandDimsOp>(op)) {
    const AxisInfo &src = *in[0];
    AxisInfo::Dims div(src.getDivisibility()), contig(src.getContiguity()),
        cst(src.getConstancy());
    unsigned axis = ed.getAxis();
    int64_t step = pointeeBytes(result.getType());
    bool isPtr = isa<tile::PointerType>(getElementTypeOrSelf(result.getType()));
    // The new dimension has one element: what every element is a multiple of.
    div.insert(div.begin() + axis,
               src.elementDivisibility(isPtr ? step : 1));
    contig.insert(contig.begin() + axis, 1);
    cst.insert(cst.begin() + axis, 1);
    info = AxisInfo(div, contig, cst, src.getConstantValue());
  } else if (auto tr = dyn_cast<tile::TransOp>(op)) {
    const AxisInfo &src = *in[0];
    AxisInfo::Dims div, contig, cst;
    for (int32_t o : tr.getOrder()) {
      div.push_back(src.getDivisibility(o));
      contig.push_back(src.getContiguity(o));
      cst.push_back(src.getConstancy(o));
    }
    info = AxisInfo(div, contig, cst, src.getConstantValue());
  } else if (isa<tile::ReshapeOp>(op)) {
    const AxisInfo &src = *in[0];
    bool isPtr = isa<tile::PointerType>(getElementTypeOrSelf(result.getType()));
    AxisInfo r = AxisInfo::unknown(
        shape, src.elementDivisibility(isPtr ? pointeeBytes(result.getType()) : 1));
    info = AxisInfo(AxisInfo::Dims(r.getDivisibility()),
                    AxisInfo::Dims(r.getContiguity()),
                    src.getConstantValue() ? full()
                                           : AxisInfo::Dims(r.getConstancy()),
                    src.getConstantValue());
  } else if (isa<tile::AddPtrOp>(op) && sameRank()) {
    int64_t bytes = pointeeBytes(result.getType());
    info = addLike(*in[0], *in[1], /*isSub=*/false, bytes, bytes);
  } else if (isa<arith::AddIOp>(op) && sameRank()) {
    info = addLike(*in[0], *in[1], /*isSub=*/false, 1, 1);
  } else if (isa<arith::SubIOp>(op) && sameRank()) {
    info = addLike(*in[0], *in[1], /*isSub=*/true, 1, 1);
  } else if (isa<arith::MulIOp>(op) && sameRank()) {
    info = mul(*in[0], *in[1]);
  } else if (isa<arith::DivUIOp>(op) && sameRank() && pow2Constant(*in[1])) {
    info = floorDivByPow2(*in[0], *pow2Constant(*in[1]));
  } else if (isa<arith::DivUIOp, arith::DivSIOp>(op) && sameRank()) {
    info = truncDiv(*in[0], *in[1]);
  } else if (isa<arith::RemUIOp, arith::RemSIOp>(op) && sameRank()) {
    info = rem(*in[0], *in[1]);
  } else if (isa<arith::ShLIOp>(op) && sameRank() && in[1]->getConstantValue() &&
             *in[1]->getConstantValue() >= 0 &&
             *in[1]->getConstantValue() < 30) {
    info = shiftLeft(*in[0], *in[1]->getConstantValue());
  } else if (isa<arith::ShRUIOp, arith::ShRSIOp>(op) && sameRank() &&
             in[1]->getConstantValue() && *in[1]->getConstantValue() >= 0 &&
             *in[1]->getConstantValue() < 30) {
    info = floorDivByPow2(*in[0], int64_t(1) << *in[1]->getConstantValue());
  } else if (isa<arith::ExtSIOp, arith::ExtUIOp, arith::IndexCastOp>(op) &&
             sameRank()) {
    info = *in[0];
  } else if (auto trunc = dyn_cast<arith::TruncIOp>(op); trunc && sameRank()) {
    info = truncate(*in[0], getElementTypeOrSelf(result.getType())
                                .getIntOrFloatBitWidth());
  } else if (auto cmp = dyn_cast<arith::CmpIOp>(op);
             cmp && sameRank() && isOrdering(cmp.getPredicate())) {
    info = orderingCompare(shape, *in[0], *in[1]);
  } else if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    const AxisInfo &a = *in[1], &b = *in[2];
    if (a.getRank() == rank && b.getRank() == rank) {
      // A scalar condition picks the whole block.
      bool scalarCond = !isa<RankedTensorType>(sel.getCondition().getType());
      AxisInfo::Dims div(rank), contig(rank), cst(rank);
      for (unsigned d = 0; d < rank; ++d) {
        int64_t condCst = scalarCond ? pow2Divisor(shape[d])
                                     : in[0]->getConstancy(d);
        contig[d] = std::min({a.getContiguity(d), b.getContiguity(d), condCst});
        cst[d] = std::min({a.getConstancy(d), b.getConstancy(d), condCst});
        div[d] = std::min(a.divisibilityAt(d, contig[d]),
                          b.divisibilityAt(d, contig[d]));
      }
      std::optional<int64_t> constant;
      if (a.getConstantValue() == b.getConstantValue())
        constant = a.getConstantValue();
      info = AxisInfo(div, contig, cst, constant);
    }
  } else if ((op->hasTrait<OpTrait::Elementwise>() &&
              isMemoryEffectFree(op)) ||
             isa<tile::LoadOp>(op) ||
             isa<arith::ArithDialect, math::MathDialect>(op->getDialect())) {
    // Equal inputs give equal outputs (a load reads all lanes at once).
    info = elementwise(shape, in);
  }
  if (!info) {
    int64_t div = isa<tile::PointerType>(getElementTypeOrSelf(result.getType()))
                      ? pointeeBytes(result.getType())
                      : 1;
    info = AxisInfo::unknown(shape, div);
  }
  propagateIfChanged(results[0],
                     results[0]->join(withHints(*info, op, result)));
  return success();
}

//===----------------------------------------------------------------------===//
// AxisInfoResult
//===----------------------------------------------------------------------===//

AxisInfoResult::AxisInfoResult(Operation *root)
    : solver(std::make_unique<DataFlowSolver>()) {
  dataflow::loadBaselineAnalyses(*solver);
  solver->load<AxisInfoAnalysis>();
  if (failed(solver->initializeAndRun(root)))
    solver.reset();
}

AxisInfoResult::~AxisInfoResult() = default;

const AxisInfo *AxisInfoResult::lookup(Value value) const {
  if (!solver)
    return nullptr;
  auto *lattice = solver->lookupState<AxisInfoLattice>(value);
  if (!lattice || lattice->getValue().isUninitialized())
    return nullptr;
  return &lattice->getValue();
}

uint64_t AxisInfoResult::elementAlignment(Value ptr) const {
  int64_t bytes = pointeeBytes(ptr.getType());
  const AxisInfo *info = lookup(ptr);
  if (!info)
    return bytes;
  // Alignments beyond a page say nothing more to LLVM.
  return std::min<int64_t>(4096, info->elementDivisibility(bytes));
}
