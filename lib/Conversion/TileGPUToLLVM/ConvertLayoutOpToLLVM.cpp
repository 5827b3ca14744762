//===- ConvertLayoutOpToLLVM.cpp - Layout conversions -------------------------===//
//
// convert_layout: registers that already hold the element stay; otherwise
// through shared memory, in vectors through the XOR swizzle a cost model
// of bank-conflict wavefronts chooses.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "OffsetBits.h"
#include "SharedAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <limits>
#include <set>

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

/// The offset `toOffset` (register, lane, warp -> offset) gives register
/// `reg` of lane `lane` in warp 0.
int32_t offsetOf(const LinearLayout &toOffset, int32_t reg, int32_t lane) {
  int32_t off = 0;
  for (auto [in, index] : {std::pair<const char *, int32_t>{gpu::kRegister, reg},
                           {gpu::kLane, lane}})
    if (int i = toOffset.inIndex(in); i >= 0) {
      const auto &bases = toOffset.ins()[i].bases;
      for (size_t bit = 0; bit < bases.size(); ++bit)
        if (index >> bit & 1)
          off ^= bases[bit][0];
    }
  return off;
}

/// What a layout costs a conversion: instructions plus wavefronts, and the
/// wavefronts of those beyond one per phase (bank conflicts).
struct SharedCost {
  int64_t total = 0, conflicts = 0;
  SharedCost &operator+=(const SharedCost &o) {
    total += o.total;
    conflicts += o.conflicts;
    return *this;
  }
};

/// Bank-conflict wavefronts of one warp's shared-memory access of `bytes`
/// per lane at byte addresses `addrs` (one per lane): the distinct 4-byte
/// words of the busiest bank, per phase (8-byte accesses go in two phases
/// of 16 lanes, 16-byte ones in four of 8).
SharedCost sharedWavefronts(ArrayRef<int64_t> addrs, int32_t bytes) {
  int32_t perPhase = bytes <= 4 ? 32 : 128 / bytes;
  SharedCost total;
  for (size_t first = 0; first < addrs.size(); first += perPhase) {
    std::array<llvm::SmallVector<int64_t, 4>, 32> words;
    size_t worst = 1;
    for (size_t i = first; i < std::min(addrs.size(), first + perPhase); ++i)
      for (int64_t w = addrs[i] / 4; w <= (addrs[i] + bytes - 1) / 4; ++w) {
        auto &bank = words[w % 32];
        if (!llvm::is_contained(bank, w))
          bank.push_back(w);
        worst = std::max(worst, bank.size());
      }
    total += {int64_t(worst), int64_t(worst) - 1};
  }
  return total;
}

/// What moving a tensor held in `regs` to (`store`) or from shared memory
/// laid out as `shared` costs one warp: its instructions (vectors as wide as
/// the layouts allow, up to 16 bytes) plus their wavefronts.
SharedCost sharedAccessCost(const LinearLayout &regs, const LinearLayout &shared,
                            int32_t bytes, bool store) {
  LinearLayout toOffset = regs.invertAndCompose(shared);
  int32_t vec = slotVectorWidth(toOffset, bytes, 16 / bytes);
  int32_t lanes = std::min(32, regs.inSize(gpu::kLane));
  SharedCost cost;
  SmallVector<int64_t> addrs(lanes);
  for (int32_t r = 0; r < regs.inSize(gpu::kRegister); r += vec) {
    if (store && isCopyRegister(regs, r))
      continue;
    for (int32_t lane = 0; lane < lanes; ++lane)
      addrs[lane] = int64_t(offsetOf(toOffset, r, lane)) * bytes;
    cost += {1, 0};
    cost += sharedWavefronts(addrs, vec * bytes);
  }
  return cost;
}

/// `shared`, a layout of a `rows` x `cols` buffer as rows of `cols / k`,
/// seen as the `rows / k` x `cols * k` tensor it holds row-major.
LinearLayout widenRows(const LinearLayout &shared, int32_t rows, int32_t cols) {
  std::string d0 = gpu::dimName(0), d1 = gpu::dimName(1);
  return shared.transposeOuts({d1, d0})
      .flattenOuts("flat")
      .reshapeOuts({{d1, cols}, {d0, rows}})
      .transposeOuts({d0, d1});
}

/// The shared-memory layout (offset -> tensor coordinates) through which a
/// conversion from `src` to `dst` moves a 1- or 2-D tensor of `bytes`
/// elements: rows of the last dimension with the XOR swizzle that costs the
/// writes and reads fewest instructions and bank-conflict wavefronts. The
/// candidates: none; the classic swizzles of chunks of up to 128 bytes
/// (swizzledSharedLayout); and, where none of those reaches the bound (the
/// widest vectors without bank conflicts), per chunk of 4 to 16 bytes a
/// swizzle built one row bit at a time, each bit taking the chunk XOR that
/// costs least given the bits below it (an mma accumulator written in pairs
/// of columns and read in 16-byte vectors of 8 elements needs row bit 0 to
/// flip two chunk bits at once). Rows wider than the 128 bytes of the banks
/// are also swizzled as rows of 128 bytes, so that the pieces of one row
/// land in different banks (a warp reading one 256-byte row of an fp32
/// accumulator in 16-byte vectors). Nothing for other ranks.
std::optional<LinearLayout> conversionSharedLayout(const LinearLayout &src,
                                                   const LinearLayout &dst,
                                                   ArrayRef<int32_t> shape,
                                                   int32_t bytes) {
  if (shape.size() == 1)
    return LinearLayout::identity1D(shape[0], gpu::kOffset, gpu::dimName(0));
  if (shape.size() != 2)
    return std::nullopt;
  int32_t rows = shape[0], cols = shape[1];
  auto cost = [&](const LinearLayout &shared) {
    SharedCost c = sharedAccessCost(src, shared, bytes, /*store=*/true);
    c += sharedAccessCost(dst, shared, bytes, /*store=*/false);
    return c;
  };
  LinearLayout best = gpu::swizzledSharedLayout(rows, cols, 1, 1, 1);
  SharedCost bestCost = cost(best);
  // No swizzle does better than row-major's vectors (the widest) at one
  // wavefront per phase.
  int64_t bound = bestCost.total - bestCost.conflicts;
  auto consider = [&](LinearLayout shared, int32_t width) {
    if (width != cols)
      shared = widenRows(shared, rows, cols);
    SharedCost c = cost(shared);
    if (c.total < bestCost.total) {
      bestCost = c;
      best = std::move(shared);
    }
    return c.total;
  };
  // Rows of the tensor, or (when wider than the 128 bytes of the banks)
  // rows of the buffer down to 128 bytes.
  SmallVector<int32_t> widths;
  for (int32_t width = cols; width == cols || width * bytes >= 128; width /= 2) {
    widths.push_back(width);
    if (width == 1)
      break;
  }
  for (int32_t width : widths) {
    int32_t bufferRows = rows * (cols / width);
    // Rows shorter than the 128 bytes of the banks share a phase.
    int32_t perPhase = std::max<int32_t>(1, 128 / (width * bytes));
    // Chunks wider than an access XOR whole groups of accesses: rows of 256
    // bytes whose 8-byte pieces a phase writes stay apart.
    for (int32_t vec = 1; vec * bytes <= 128 && vec < width; vec *= 2)
      for (int32_t maxPhase = 2; vec * maxPhase <= width &&
                                 perPhase * maxPhase <= bufferRows;
           maxPhase *= 2)
        consider(gpu::swizzledSharedLayout(bufferRows, width, vec, perPhase,
                                           maxPhase),
                 width);
  }
  if (bestCost.total == bound)
    return best;
  // Greedy linear swizzles of chunks of the access widths, 4 to 16 bytes.
  for (int32_t width : widths) {
    int32_t bufferRows = rows * (cols / width);
    for (int32_t vec = std::max(1, 4 / bytes); vec * bytes <= 16 && vec < width;
         vec *= 2) {
      // XORs past the 128 bytes of the banks change no bank.
      int32_t chunks = std::min(width / vec, 128 / (vec * bytes));
      std::vector<int32_t> colXor;
      for (int32_t r = 1; r < bufferRows; r <<= 1) {
        int32_t pick = 0;
        int64_t pickCost = std::numeric_limits<int64_t>::max();
        for (int32_t x = 0; x < chunks; ++x) {
          colXor.push_back(x * vec);
          int64_t c =
              consider(gpu::xorSwizzledLayout(bufferRows, width, colXor), width);
          colXor.pop_back();
          if (c < pickCost) {
            pickCost = c;
            pick = x * vec;
          }
        }
        colXor.push_back(pick);
      }
    }
  }
  return best;
}

} // namespace

std::optional<SmallVector<int32_t>>
gpu::lowering::registerRenaming(const LinearLayout &src,
                                const LinearLayout &dst) {
  // dst's lanes and warps must hold what src's do.
  if (src.sublayout({gpu::kLane, gpu::kWarp}) !=
      dst.sublayout({gpu::kLane, gpu::kWarp}))
    return std::nullopt;
  SmallVector<int32_t> from;
  for (int32_t r = 0; r < dst.inSize(gpu::kRegister); ++r) {
    std::vector<int32_t> want = dst.apply({{gpu::kRegister, r}});
    int32_t s = 0, n = src.inSize(gpu::kRegister);
    while (s < n && src.apply({{gpu::kRegister, s}}) != want)
      ++s;
    if (s == n)
      return std::nullopt;
    from.push_back(s);
  }
  return from;
}

namespace {

struct ConvertLayoutLowering : TileGPUPattern<tilegpu::ConvertLayoutOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::ConvertLayoutOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    LinearLayout src = layoutOf(op.getSrc().getType());
    LinearLayout dst = layoutOf(op.getType());
    ValueRange in = adaptor.getSrc();
    Type elt = getTypeConverter()->convertType(
        getElementTypeOrSelf(op.getType()));
    if (auto renaming = registerRenaming(src, dst)) {
      SmallVector<Value> values;
      for (int32_t s : *renaming)
        values.push_back(in[s]);
      rw.replaceOpWithMultiple(op, {values});
      return success();
    }
    std::vector<int32_t> shape = shapeOf(op.getType());
    // Plain numbers move through a swizzled buffer in vectors; bools and
    // pointers element by element, row-major.
    if (elt.isIntOrFloat() && elt.getIntOrFloatBitWidth() >= 8)
      if (auto shared = conversionSharedLayout(src, dst, shape,
                                               storageBytes(elt))) {
        target.barrier(rw, loc);
        writeOperandToShared(rw, loc, target, src, *shared, in, 0);
        target.barrier(rw, loc);
        rw.replaceOpWithMultiple(
            op, {readOperandFromShared(
                    rw, loc, target, dst, *shared, elt,
                    sharedAddress(rw, loc, target.sharedAddressSpace(),
                                  i32Const(rw, loc, 0)))});
        return success();
      }
    target.barrier(rw, loc);
    writeTensorToShared(rw, loc, target, src, shape, in, 0);
    target.barrier(rw, loc);
    SmallVector<Value> values =
        readTensorFromShared(rw, loc, target, dst, shape, elt, 0);
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

} // namespace

void gpu::lowering::populateConvertLayoutOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<ConvertLayoutLowering>(tc, patterns.getContext(), target);
}
