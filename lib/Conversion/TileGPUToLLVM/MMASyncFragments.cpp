//===- MMASyncFragments.cpp - tf32 and 8-bit dots on mma.sync ------------===//
//
// A dot of fp32 inputs rounded to tf32, or of int8 or 8-bit float inputs,
// runs on mma.sync m16n8k8 / m16n8k32; tf32x3 splits each fp32 input x into
// hi = tf32(x) and lo = tf32(x - hi) and sums hi * lo, lo * hi and hi * hi
// (the small terms first) on three tf32 instructions, dropping only lo * lo
// (about 2^-22 of the product). Both operands are staged in shared memory
// (the bytes dotSharedBytes counts), A as [M, K] and B as [N, K] with K
// contiguous, so that the elements one fragment register holds (consecutive
// along K, mmaOperandLayout) are one aligned 4-byte word, in 16-byte chunks
// swizzled against bank conflicts. Each warp then loads, per
// K step, the fragments of its rows of A and columns of B (with ldmatrix
// where K runs contiguously, else a word or, gathered, a byte at a time),
// and issues one instruction per accumulator tile.
//
//===----------------------------------------------------------------------===//
#include "DotOpToLLVM.h"
#include "tessel/Conversion/TileGPUToLLVM/NvidiaTargetHooks.h"
#include "OffsetBits.h"
#include "SharedAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

SmallVector<Value> gpu::lowering::lowerMmaSyncFragmentsDot(
    OpBuilder &b, Location loc, const GPUTargetInfo &target, tile::DotOp op,
    tilegpu::MmaInputs inputs, const std::vector<int32_t> &warps,
    ValueRange a, ValueRange bv, ValueRange c, ArrayRef<Value> slots,
    ArrayRef<LinearLayout> slotLayouts) {
  auto aTy = op.getA().getType(), bTy = op.getB().getType();
  int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1), N = bTy.getDimSize(1);
  int32_t bits = tilegpu::mmaInputBits(inputs);
  int32_t instrK = tilegpu::mmaSyncK(inputs), kSteps = K / instrK;
  int32_t perWord = 32 / bits;
  unsigned space = target.sharedAddressSpace();

  // tf32: each thread rounds the elements it holds, once, before sharing
  // (tf32x3 shares them whole and splits what it reads); operands read in
  // place are rounded as they are read.
  SmallVector<Value> aValues(a.begin(), a.end()), bValues(bv.begin(), bv.end());
  if (inputs == tilegpu::MmaInputs::TF32)
    for (SmallVector<Value> *values : {&aValues, &bValues})
      for (Value &v : *values)
        v = target.nvidia()->roundToTF32(b, loc, v);
  // Each operand's layout in shared memory maps offsets to (rows, K) (the
  // scratch: A as [M, K], B as [N, K]) or, `kFirst`, to (K, rows): a
  // pipeline slot maps offsets to its operand's own coordinates however it
  // is stored (SharedBufferType::getSlotLayout), B's [K, N].
  bool kFirst[2] = {false, false};
  // A as [M, K] and B as [N, K], K contiguous, their 16-byte chunks XOR
  // swizzled so that the 8 rows a fragment read touches (one chunk each)
  // fall on different banks: rows of L bytes, the chunk column XORed with
  // (row / max(1, 128 / L)) % min(8, L / 16).
  int64_t bBase;
  dotSharedBytes(op, bBase);
  int32_t bytes = bits / 8, chunk = 16 / bytes, rowBytes = K * bytes;
  auto swizzled = [&](int32_t rows) {
    return gpu::swizzledSharedLayout(rows, K, chunk,
                                     std::max(1, 128 / rowBytes),
                                     std::min(8, rowBytes / 16));
  };
  LinearLayout shared[2] = {swizzled(M), swizzled(N)};
  for (int i = 0; i < 2; ++i)
    if (slots[i]) {
      shared[i] = slotLayouts[i];
      kFirst[i] = i == 1;
    }
  if (!slots[0] || !slots[1]) {
    target.barrier(b, loc); // earlier readers of the scratch are done
    if (!slots[0])
      writeOperandToShared(b, loc, target, layoutOf(aTy), shared[0], aValues,
                           0);
    if (!slots[1])
      writeOperandToShared(b, loc, target,
                           gpu::transposeLayout(layoutOf(bTy), {1, 0}),
                           shared[1], bValues, bBase);
    target.barrier(b, loc);
  }

  // An operand's fragment word `reg` (a multiple of perWord) starts at the
  // element at the thread's part of the layout XOR the register's; both
  // maps are linear, so its offset is the thread's offset XOR the
  // register's. kDim is K's output dimension.
  LinearLayout layouts[2] = {gpu::mmaOperandLayout(0, {M, K}, warps, bits),
                             gpu::mmaOperandLayout(1, {K, N}, warps, bits)};
  const unsigned kDims[2] = {1, 0};
  const int64_t bases[2] = {0, bBase};
  ThreadIds ids = threadIds(b, loc, target);
  LinearLayout inverse[2] = {shared[0].invert(), shared[1].invert()};
  // Whether a word's elements (consecutive along K) are consecutive in
  // operand i's layout: always in the scratch and in K-major slots; a
  // `gather` slot of 8-bit elements (B read in place from row-major
  // memory, A from column-major) has them a row apart, and the word is
  // gathered a byte at a time.
  bool gathered[2];
  for (int i = 0; i < 2; ++i) {
    gathered[i] = false;
    for (int32_t j = 1; j < perWord; j <<= 1) {
      std::string kName = gpu::dimName(kFirst[i] ? 0 : 1);
      gathered[i] |= inverse[i].apply({{kName, j}})[0] != j;
    }
  }
  Value threadOffset[2];
  for (int i = 0; i < 2; ++i) {
    SmallVector<Value> hw{i32Const(b, loc, 0), i32Const(b, loc, 0)};
    hw = hardwarePart(b, loc, layouts[i], gpu::kLane, ids.lane, hw);
    hw = hardwarePart(b, loc, layouts[i], gpu::kWarp, ids.warp, hw);
    unsigned kDim = kDims[i];
    threadOffset[i] =
        kFirst[i] ? slotOffset(b, loc, inverse[i], hw[kDim], hw[1 - kDim])
                  : slotOffset(b, loc, inverse[i], hw[1 - kDim], hw[kDim]);
  }
  Type i32 = b.getI32Type();
  // Where each operand starts: its slot, or its part of the scratch.
  Value start[2];
  for (int i = 0; i < 2; ++i)
    start[i] = slots[i] ? slots[i]
                        : sharedAddress(b, loc, space, i32Const(b, loc, bases[i]));
  // The slot offset of operand i's fragment register `reg`.
  auto registerOffset = [&](int i, int32_t reg) {
    std::vector<int32_t> at = layouts[i].apply({{gpu::kRegister, reg}});
    unsigned kDim = kDims[i];
    int32_t mn = at[1 - kDim], k = at[kDim];
    return inverse[i].apply({{gpu::dimName(0), kFirst[i] ? k : mn},
                             {gpu::dimName(1), kFirst[i] ? mn : k}})[0];
  };
  auto fragmentWord = [&](int i, int32_t reg) -> Value {
    // An element's address: the thread's offset XOR the register's, the
    // constant's bits the thread's part cannot have as an immediate of the
    // address (OffsetBits).
    auto address = [&](int32_t r) {
      return xorElementAddress(b, loc, start[i], threadOffset[i],
                               registerOffset(i, r), bits / 8);
    };
    Value v;
    if (!gathered[i]) {
      v = b.create<LLVM::LoadOp>(loc, i32, address(reg), 4);
    } else {
      Type elt = b.getIntegerType(bits);
      v = b.create<LLVM::PoisonOp>(loc, VectorType::get({perWord}, elt));
      for (int32_t j = 0; j < perWord; ++j)
        v = b.create<LLVM::InsertElementOp>(
            loc, v, b.create<LLVM::LoadOp>(loc, elt, address(reg + j), 1),
            i32Const(b, loc, j));
      v = b.create<LLVM::BitcastOp>(loc, i32, v);
    }
    return v;
  };
  // A word read in place from a slot: tf32 rounds it there (the scratch
  // holds words rounded before they were shared).
  auto finishWord = [&](int i, Value v) -> Value {
    if (!slots[i] || inputs != tilegpu::MmaInputs::TF32)
      return v;
    return target.nvidia()->roundToTF32(b, loc,
                              b.create<LLVM::BitcastOp>(loc, b.getF32Type(), v));
  };

  // ldmatrix: where an operand's 16-byte runs along K are contiguous in its
  // layout (the scratch, K-major slots) and its fragment registers are as
  // ldmatrix hands 8x8 matrices of 16-bit pairs out (lane l: row l / 4,
  // the pair 4 (l % 4) bytes into it; PTX ISA, m16n8k8 .tf32 and m16n8k32
  // .s8/.e4m3 fragments), one instruction loads a fragment: .x4 A's four
  // words (matrix j: rows 8 (j % 2), bytes 16 (j / 2) along K), .x2 B's
  // two (matrix j: bytes 16 j along K). Lane l gives the address of row
  // l % 16 (A) or l % 8 (B) at 16 (l / 16) (A) or 16 (l / 8 % 2) (B)
  // bytes along K, XORed with the warp's part and the fragment's origin.
  const int32_t run = 16 / bytes; // elements in 16 bytes
  const int32_t wordsPerFragment[2] = {4, 2};
  bool byMatrix[2];
  Value matrixOffset[2];
  for (int i = 0; i < 2; ++i) {
    unsigned kDim = kDims[i];
    std::string kName = gpu::dimName(kFirst[i] ? 0 : 1);
    byMatrix[i] = true;
    for (int32_t j = 1; j < run; j <<= 1)
      byMatrix[i] &= inverse[i].apply({{kName, j}})[0] == j;
    // Every fragment's words where ldmatrix puts them.
    int32_t fragments = layouts[i].inSize(gpu::kRegister) /
                        (wordsPerFragment[i] * perWord);
    for (int32_t f = 0; byMatrix[i] && f < fragments; ++f) {
      int32_t first = f * wordsPerFragment[i] * perWord;
      std::vector<int32_t> origin =
          layouts[i].apply({{gpu::kRegister, first}});
      for (int32_t lane = 0; byMatrix[i] && lane < 32; ++lane)
        for (int32_t w = 0; w < wordsPerFragment[i]; ++w) {
          std::vector<int32_t> at = layouts[i].apply(
              {{gpu::kRegister, first + w * perWord}, {gpu::kLane, lane}});
          int32_t row = lane / 4 + (i == 0 ? 8 * (w % 2) : 0);
          int32_t k = (lane % 4) * perWord + run * (i == 0 ? w / 2 : w);
          if (at[1 - kDim] != (origin[1 - kDim] ^ row) ||
              at[kDim] != (origin[kDim] ^ k)) {
            byMatrix[i] = false;
            break;
          }
        }
    }
    if (!byMatrix[i])
      continue;
    Value lane = ids.lane;
    // (lane >> shift) & mask, shifted up by `up`.
    auto bitsOf = [&](int32_t shift, int32_t mask, int32_t up) -> Value {
      Value v = b.create<arith::AndIOp>(
          loc, b.create<arith::ShRUIOp>(loc, lane, i32Const(b, loc, shift)),
          i32Const(b, loc, mask));
      return b.create<arith::ShLIOp>(loc, v, i32Const(b, loc, up));
    };
    SmallVector<Value> hw{i32Const(b, loc, 0), i32Const(b, loc, 0)};
    hw[1 - kDim] = bitsOf(0, i == 0 ? 15 : 7, 0);
    hw[kDim] = bitsOf(i == 0 ? 4 : 3, 1, llvm::Log2_32(run));
    hw = hardwarePart(b, loc, layouts[i], gpu::kWarp, ids.warp, hw);
    matrixOffset[i] =
        kFirst[i] ? slotOffset(b, loc, inverse[i], hw[kDim], hw[1 - kDim])
                  : slotOffset(b, loc, inverse[i], hw[1 - kDim], hw[kDim]);
  }
  // tf32x3: a fragment word x becomes hi = tf32(x) and lo = tf32(x - hi).
  bool split = inputs == tilegpu::MmaInputs::TF32x3;
  auto splitWord = [&](Value word, Value &hi, Value &lo) {
    Type f32 = b.getF32Type();
    Value x = b.create<LLVM::BitcastOp>(loc, f32, word);
    hi = target.nvidia()->roundToTF32(b, loc, x);
    Value rest = b.create<arith::SubFOp>(
        loc, x, b.create<LLVM::BitcastOp>(loc, f32, hi));
    lo = target.nvidia()->roundToTF32(b, loc, rest);
  };
  tilegpu::MmaInputs instruction = split ? tilegpu::MmaInputs::TF32 : inputs;
  Type fp8Types[2] = {aTy.getElementType(), bTy.getElementType()};
  auto mma = [&](ArrayRef<Value> x, ArrayRef<Value> y, ArrayRef<Value> acc) {
    if (instruction == tilegpu::MmaInputs::FP8)
      return target.nvidia()->mmaSync(b, loc, instruction, x, y, acc, fp8Types);
    return target.nvidia()->mmaSync(b, loc, instruction, x, y, acc);
  };
  // One instruction's fragment of operand i: elements per lane.
  const int32_t perInstr[2] = {16 * instrK / 32, 8 * instrK / 32};

  // K steps outermost: a step's fragments are loaded once per row (A) or
  // column (B) of tiles and are dead after it.
  LinearLayout dLayout = layoutOf(op.getD().getType());
  // The accumulator tiles (their first registers / 4) in the order they
  // are multiplied: as they are held, or with B gathered, column after
  // column, so that each gathered fragment is used as soon as it is built.
  SmallVector<int32_t> tileOrder;
  for (int32_t tile = 0; tile * 4 < int32_t(c.size()); ++tile)
    if (!isCopyRegister(dLayout, tile * 4))
      tileOrder.push_back(tile);
  if (gathered[1])
    llvm::stable_sort(tileOrder, [&](int32_t x, int32_t y) {
      return dLayout.apply({{gpu::kRegister, x * 4}})[1] <
             dLayout.apply({{gpu::kRegister, y * 4}})[1];
    });
  SmallVector<Value> d(c.begin(), c.end());
  for (int32_t step = 0; step < kSteps; ++step) {
    // By the accumulator tile's repetition along M (A) or N (B): the words
    // read, or with tf32x3 their high parts, and the low parts.
    std::map<int32_t, SmallVector<Value>> fragments[2], lows[2];
    auto load = [&](int i, int32_t rep) {
      SmallVector<Value> &f = fragments[i][rep];
      int32_t first = (rep * kSteps + step) * perInstr[i];
      if (!f.empty())
        return;
      SmallVector<Value> words;
      if (byMatrix[i]) {
        Value addr = xorElementAddress(b, loc, start[i], matrixOffset[i],
                                       registerOffset(i, first), bytes);
        words = target.nvidia()->loadMatrix(b, loc, addr, wordsPerFragment[i],
                                  /*transpose=*/false);
      } else {
        for (int32_t e = 0; e < perInstr[i]; e += perWord)
          words.push_back(fragmentWord(i, first + e));
      }
      for (Value word : words) {
        word = finishWord(i, word);
        if (!split) {
          f.push_back(word);
          continue;
        }
        Value hi, lo;
        splitWord(word, hi, lo);
        f.push_back(hi);
        lows[i][rep].push_back(lo);
      }
    };
    for (int32_t tile : tileOrder) {
      // The tile's first element in warp 0, lane 0.
      std::vector<int32_t> origin = dLayout.apply({{gpu::kRegister, tile * 4}});
      int32_t reps[2] = {origin[0] / (16 * warps[0]),
                         origin[1] / (8 * warps[1])};
      load(0, reps[0]);
      load(1, reps[1]);
      ArrayRef<Value> aHigh = fragments[0][reps[0]],
                      bHigh = fragments[1][reps[1]];
      SmallVector<Value> acc(d.begin() + tile * 4, d.begin() + tile * 4 + 4);
      if (split) {
        acc = mma(aHigh, lows[1][reps[1]], acc);
        acc = mma(lows[0][reps[0]], bHigh, acc);
      }
      acc = mma(aHigh, bHigh, acc);
      std::copy(acc.begin(), acc.end(), d.begin() + tile * 4);
    }
  }
  // Registers holding copies take their first copy's value.
  for (size_t r = 0; r < d.size(); ++r)
    if (isCopyRegister(dLayout, r))
      d[r] = d[r & ~dLayout.freeBits(gpu::kRegister)];
  return d;
}
