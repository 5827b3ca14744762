//===- SharedAccess.cpp - Registers to and from shared memory -----------------===//
//
// Addresses in the program's shared array, tensors written and read there
// element by element or in vectors through linear maps, and the slots of
// pipeline buffers.
//
//===----------------------------------------------------------------------===//
#include "SharedAccess.h"
#include "tessel/Conversion/TileGPUToLLVM/NvidiaTargetHooks.h"

#include "OffsetBits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <array>
#include <optional>

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace tessel::gpu::lowering {

/// Shared memory: a byte address in the program's dynamic shared array.
Value sharedAddress(OpBuilder &b, Location loc, unsigned addrSpace,
                    Value byteOffset) {
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext(), addrSpace);
  Value base = b.create<LLVM::AddressOfOp>(loc, ptrTy, kSharedName);
  return b.create<LLVM::GEPOp>(loc, ptrTy, b.getI8Type(), base,
                               ValueRange{byteOffset});
}

/// The address of element `index` (of `bytes` each) of a shared-memory
/// region starting at byte `base`.
Value sharedElement(OpBuilder &b, Location loc, unsigned addrSpace,
                    int64_t base, Value index, unsigned bytes) {
  Value off = b.create<arith::AddIOp>(
      loc, i32Const(b, loc, base),
      b.create<arith::MulIOp>(loc, index, i32Const(b, loc, bytes)));
  return sharedAddress(b, loc, addrSpace, off);
}

/// region at byte `base` (elements of their memory type's size).
void storeShared(OpBuilder &b, Location loc, unsigned addrSpace, Value v,
                 int64_t base, Value index) {
  unsigned bytes = storageBytes(memoryType(v.getType()));
  Value addr = sharedElement(b, loc, addrSpace, base, index, bytes);
  b.create<LLVM::StoreOp>(loc, toMemory(b, loc, v), addr, bytes);
}

Value loadShared(OpBuilder &b, Location loc, unsigned addrSpace, Type t,
                 int64_t base, Value index) {
  Type mem = memoryType(t);
  unsigned bytes = storageBytes(mem);
  Value addr = sharedElement(b, loc, addrSpace, base, index, bytes);
  return fromMemory(b, loc, b.create<LLVM::LoadOp>(loc, mem, addr, bytes), t);
}

Value paddedIndex(OpBuilder &b, Location loc, Value row, Value col,
                  int32_t rowElems, RowPadding padding) {
  // Padding after every row is a longer row.
  int32_t stride = rowElems + (padding.rows == 1 ? padding.elems : 0);
  Value start = b.create<arith::MulIOp>(loc, row, i32Const(b, loc, stride));
  if (padding.rows > 1) {
    Value groups =
        b.create<arith::DivUIOp>(loc, row, i32Const(b, loc, padding.rows));
    start = b.create<arith::AddIOp>(
        loc, start,
        b.create<arith::MulIOp>(loc, groups, i32Const(b, loc, padding.elems)));
  }
  return b.create<arith::AddIOp>(loc, start, col);
}

/// Writes every owned element of a tensor to shared memory at its row-major
/// index (elements of their memory size, from byte `base`); `transposed` writes a
/// 2-D block column-major instead; `padding` spaces its stored rows.
void writeTensorToShared(OpBuilder &b, Location loc,
                         const gpu::GPUTargetInfo &target,
                         const LinearLayout &layout, ArrayRef<int32_t> shape,
                         ValueRange values, int64_t base,
                         bool transposed, RowPadding padding) {
  ThreadIds ids = threadIds(b, loc, target);
  auto coords = elementCoords(b, loc, layout, ids);
  Value own = isOwner(b, loc, layout, ids);
  SmallVector<int32_t> stored(shape.begin(), shape.end());
  if (transposed)
    std::swap(stored[0], stored[1]);
  for (size_t r = 0; r < values.size(); ++r) {
    if (isCopyRegister(layout, r))
      continue;
    SmallVector<Value> at(coords[r].begin(), coords[r].end());
    if (transposed)
      std::swap(at[0], at[1]);
    Value flat = padding.rows
                     ? paddedIndex(b, loc, at[0], at[1], stored[1], padding)
                     : flatIndex(b, loc, at, stored);
    ifThen(b, loc, own, [&](OpBuilder &ib) {
      storeShared(ib, loc, target.sharedAddressSpace(), values[r], base, flat);
    });
  }
}

Value paddedSlotIndex(OpBuilder &b, Location loc,
                      tilegpu::SharedBufferType type, Value row, Value col) {
  if (type.getTransposed())
    std::swap(row, col);
  return paddedIndex(b, loc, row, col, type.getRowElements(),
                     {type.getPaddedRows(), type.getPadElements()});
}

/// The address of element `index` (i32) of `type`'s elements from `slot`.
static Value slotElement(OpBuilder &b, Location loc, Value slot, Value index,
                         Type mem) {
  return b.create<LLVM::GEPOp>(loc, slot.getType(), mem, slot,
                               ValueRange{index});
}

void writeTensorToPaddedSlot(OpBuilder &b, Location loc,
                             const gpu::GPUTargetInfo &target,
                             const LinearLayout &layout, ValueRange values,
                             Value slot, tilegpu::SharedBufferType type) {
  ThreadIds ids = threadIds(b, loc, target);
  auto coords = elementCoords(b, loc, layout, ids);
  Value own = isOwner(b, loc, layout, ids);
  for (size_t r = 0; r < values.size(); ++r) {
    if (isCopyRegister(layout, r))
      continue;
    Value idx = paddedSlotIndex(b, loc, type, coords[r][0], coords[r][1]);
    ifThen(b, loc, own, [&](OpBuilder &ib) {
      Type mem = memoryType(values[r].getType());
      ib.create<LLVM::StoreOp>(loc, toMemory(ib, loc, values[r]),
                               slotElement(ib, loc, slot, idx, mem),
                               storageBytes(mem));
    });
  }
}

SmallVector<Value> readTensorFromPaddedSlot(OpBuilder &b, Location loc,
                                            const gpu::GPUTargetInfo &target,
                                            const LinearLayout &layout,
                                            Type elt, Value slot,
                                            tilegpu::SharedBufferType type) {
  ThreadIds ids = threadIds(b, loc, target);
  SmallVector<Value> values;
  Type mem = memoryType(elt);
  for (auto &c : elementCoords(b, loc, layout, ids)) {
    Value idx = paddedSlotIndex(b, loc, type, c[0], c[1]);
    values.push_back(fromMemory(
        b, loc,
        b.create<LLVM::LoadOp>(loc, mem, slotElement(b, loc, slot, idx, mem),
                               storageBytes(mem)),
        elt));
  }
  return values;
}

SmallVector<Value> readTensorFromShared(OpBuilder &b, Location loc,
                                        const gpu::GPUTargetInfo &target,
                                        const LinearLayout &layout,
                                        ArrayRef<int32_t> shape, Type elt,
                                        int64_t base) {
  ThreadIds ids = threadIds(b, loc, target);
  auto coords = elementCoords(b, loc, layout, ids);
  SmallVector<Value> values;
  for (auto &c : coords) {
    Value flat = flatIndex(b, loc, c, shape);
    values.push_back(
        loadShared(b, loc, target.sharedAddressSpace(), elt, base, flat));
  }
  return values;
}

/// The local_load that operand `i` (0: A, 1: B) of `dot` reads in place:
/// a local_load (possibly through a convert_layout) of a buffer in the
/// encoding the dot's instruction reads (dotOperandSharedEncoding, the
/// tile transposed or not). Null otherwise, and the operand goes through
/// registers.
tilegpu::LocalLoadOp inPlaceOperand(tile::DotOp dot, unsigned i) {
  Value v = dot->getOperand(i);
  if (auto cvt = v.getDefiningOp<tilegpu::ConvertLayoutOp>())
    v = cvt.getSrc();
  auto load = v.getDefiningOp<tilegpu::LocalLoadOp>();
  if (!load)
    return {};
  auto type = load.getBuffer().getType();
  std::optional<tilegpu::SharedEncoding> enc =
      tilegpu::dotOperandSharedEncoding(dot, i, type.getTransposed());
  if (!enc || enc->order != type.getOrder() ||
      (enc->order != tilegpu::SharedOrder::Padded &&
       enc->swizzle != type.getSwizzle()))
    return {};
  return load;
}

/// The address of slot `slot` (i32) of the buffer at `buffer`.
Value slotAddress(OpBuilder &b, Location loc, Value buffer, Value slot,
                  tilegpu::SharedBufferType type) {
  Value off = b.create<arith::MulIOp>(loc, slot,
                                      i32Const(b, loc, type.getSlotStride()));
  return b.create<LLVM::GEPOp>(loc, buffer.getType(), b.getI8Type(), buffer,
                               ValueRange{off});
}

/// The element offset in a slot of (row, column) (i32 each), from the
/// inverse of its layout (one XOR per set bit).
Value slotOffset(OpBuilder &b, Location loc, const LinearLayout &inverse,
                 Value row, Value col) {
  SmallVector<Value> acc{i32Const(b, loc, 0)};
  std::string d0 = gpu::dimName(0), d1 = gpu::dimName(1);
  if (row)
    acc = hardwarePart(b, loc, inverse, d0.c_str(), row, acc);
  if (col)
    acc = hardwarePart(b, loc, inverse, d1.c_str(), col, acc);
  return acc[0];
}

/// Writes an operand of a warpgroup MMA, held in registers as `layout` over
/// For 16-bit elements stored through `toOffset` (register, lane, warp ->
/// element offset) as 8x8 matrices (stmatrix .x4), the offsets of the rows
/// lane l addresses: lane bits 0-2 pick the row of a matrix, bits 3-4 the
/// matrix. That takes each lane's registers 0 and 1 at consecutive offsets,
/// its lane bits 0 and 1 on the next 4 and 8 bytes (the 4 lanes of a 16-byte
/// row), lane bits 2-4 and register bits 1-2 (the matrices) on whole 16-byte
/// rows, no element held twice, and a matrix's 8 rows in distinct bank
/// groups (no conflicts).
static std::optional<std::array<int32_t, 5>>
matrixStoreRows(const LinearLayout &layout, const LinearLayout &toOffset,
                int32_t size) {
  using gpu::kLane, gpu::kRegister, gpu::kWarp;
  if (size != 2 || toOffset.inLog2(kLane) != 5 ||
      toOffset.inLog2(kRegister) < 3 || layout.freeBits(kRegister) ||
      layout.freeBits(kLane) || layout.freeBits(kWarp))
    return std::nullopt;
  auto at = [&](const char *in, int bit) {
    return toOffset.apply({{in, 1 << bit}})[0];
  };
  if (at(kRegister, 0) != 1 || at(kLane, 0) != 2 || at(kLane, 1) != 4)
    return std::nullopt;
  std::array<int32_t, 5> rows = {at(kLane, 2), at(kLane, 3), at(kLane, 4),
                                 at(kRegister, 1), at(kRegister, 2)};
  if (llvm::any_of(rows, [](int32_t r) { return r % 8 != 0; }))
    return std::nullopt;
  uint32_t groups = 0; // bank groups of 16 bytes reached by one matrix
  for (int32_t row = 0; row < 8; ++row) {
    int32_t offset = 0;
    for (int bit = 0; bit < 3; ++bit)
      if (row & (1 << bit))
        offset ^= rows[bit];
    groups |= 1u << ((offset * size / 16) % 8);
  }
  if (groups != 0xff)
    return std::nullopt;
  return rows;
}

/// Writes a tensor held as `layout` (register, lane, warp -> coordinates),
/// [row, k], to shared memory from byte `base` as `shared` (offset -> [row,
/// k]) places it. Both maps are linear, so a register's offset is the
/// thread's part (from its lane and warp) XOR a constant per register; runs
/// of registers at consecutive offsets are stored as one vector of up to 16
/// bytes, or, for 16-bit elements held as the 8x8 matrices of MMA
/// accumulators, four matrices at a time where the target stores matrices
/// (stmatrix): 16 bytes of a lane's registers per instruction.
void writeOperandToShared(OpBuilder &b, Location loc,
                          const gpu::GPUTargetInfo &target,
                          const LinearLayout &layout,
                          const LinearLayout &shared, ValueRange values,
                          int64_t base, Value basePtr) {
  LinearLayout toOffset = layout.invertAndCompose(shared);
  Type elt = values[0].getType();
  int32_t size = storageBytes(elt);
  ThreadIds ids = threadIds(b, loc, target);
  Value start = basePtr ? basePtr
                        : sharedAddress(b, loc, target.sharedAddressSpace(),
                                        i32Const(b, loc, base));
  std::optional<std::array<int32_t, 5>> rows;
  if ((target.nvidia() && target.nvidia()->hasStoreMatrix()))
    rows = matrixStoreRows(layout, toOffset, size);
  if (rows) {
    // Lane l addresses row l % 8 of matrix l / 8, its warp's part added.
    std::vector<LinearLayout::InDim> ins{{gpu::kLane, {}}};
    for (int32_t r : *rows)
      ins[0].bases.push_back({r});
    if (int w = toOffset.inIndex(gpu::kWarp); w >= 0)
      ins.push_back(toOffset.ins()[w]);
    LinearLayout rowOf(ins, toOffset.outs());
    SmallVector<Value> hw{i32Const(b, loc, 0)};
    hw = hardwarePart(b, loc, rowOf, gpu::kLane, ids.lane, hw);
    hw = hardwarePart(b, loc, rowOf, gpu::kWarp, ids.warp, hw);
    auto pairTy = VectorType::get({2}, elt);
    for (int32_t r = 0; r < int32_t(values.size()); r += 8) {
      SmallVector<Value> words;
      for (int32_t m = 0; m < 4; ++m) {
        Value pair = b.create<LLVM::PoisonOp>(loc, pairTy);
        for (int32_t i = 0; i < 2; ++i)
          pair = b.create<LLVM::InsertElementOp>(
              loc, pair, values[r + 2 * m + i], i32Const(b, loc, i));
        words.push_back(b.create<LLVM::BitcastOp>(loc, b.getI32Type(), pair));
      }
      int32_t c = toOffset.apply({{gpu::kRegister, r}})[0];
      Value addr = xorElementAddress(b, loc, start, hw[0], c, size);
      target.nvidia()->storeMatrix(b, loc, addr, words);
    }
    return;
  }
  SmallVector<Value> hw{i32Const(b, loc, 0)};
  hw = hardwarePart(b, loc, toOffset, gpu::kLane, ids.lane, hw);
  hw = hardwarePart(b, loc, toOffset, gpu::kWarp, ids.warp, hw);
  int32_t vec = slotVectorWidth(toOffset, size, 16);
  Value own = isOwner(b, loc, layout, ids);
  auto vecTy = VectorType::get({vec}, elt);
  for (int32_t r = 0; r < int32_t(values.size()); r += vec) {
    if (isCopyRegister(layout, r))
      continue;
    int32_t c = toOffset.apply({{gpu::kRegister, r}})[0];
    Value addr = xorElementAddress(b, loc, start, hw[0], c, size);
    Value v = values[r];
    if (vec > 1) {
      v = b.create<LLVM::PoisonOp>(loc, vecTy);
      for (int32_t i = 0; i < vec; ++i)
        v = b.create<LLVM::InsertElementOp>(loc, v, values[r + i],
                                            i32Const(b, loc, i));
    }
    ifThen(b, loc, own, [&](OpBuilder &ib) {
      ib.create<LLVM::StoreOp>(loc, v, addr, vec * size);
    });
  }
}

/// Reads a tensor into registers as `layout` from shared memory at
/// `basePtr`, where `shared` (offset -> coordinates) places it: the same
/// per-thread offsets, in vectors of up to 16 bytes.
SmallVector<Value> readOperandFromShared(OpBuilder &b, Location loc,
                                         const gpu::GPUTargetInfo &target,
                                         const LinearLayout &layout,
                                         const LinearLayout &shared, Type elt,
                                         Value basePtr) {
  LinearLayout toOffset = layout.invertAndCompose(shared);
  int32_t size = storageBytes(elt);
  int32_t vec = slotVectorWidth(toOffset, size, 16);
  ThreadIds ids = threadIds(b, loc, target);
  SmallVector<Value> hw{i32Const(b, loc, 0)};
  hw = hardwarePart(b, loc, toOffset, gpu::kLane, ids.lane, hw);
  hw = hardwarePart(b, loc, toOffset, gpu::kWarp, ids.warp, hw);
  auto vecTy = VectorType::get({vec}, elt);
  SmallVector<Value> values;
  for (int32_t r = 0; r < layout.inSize(gpu::kRegister); r += vec) {
    int32_t c = toOffset.apply({{gpu::kRegister, r}})[0];
    Value addr = xorElementAddress(b, loc, basePtr, hw[0], c, size);
    if (vec == 1) {
      values.push_back(b.create<LLVM::LoadOp>(loc, elt, addr, size));
      continue;
    }
    Value v = b.create<LLVM::LoadOp>(loc, vecTy, addr, vec * size);
    for (int32_t j = 0; j < vec; ++j)
      values.push_back(
          b.create<LLVM::ExtractElementOp>(loc, v, i32Const(b, loc, j)));
  }
  return values;
}

/// The widest run of registers (at most 16 bytes) a thread moves to or from
/// consecutive offsets of a slot through `toOffset` (register, lane, warp ->
/// offset), starting at a multiple of its width in every thread.
int32_t slotVectorWidth(const LinearLayout &toOffset, int32_t size,
                        int32_t limit) {
  int32_t vec = std::min<int32_t>(
      {toOffset.contiguousRun(gpu::kRegister, gpu::kOffset), 16 / size, limit});
  for (const char *in : {gpu::kLane, gpu::kWarp})
    if (int i = toOffset.inIndex(in); i >= 0)
      for (const auto &basis : toOffset.ins()[i].bases)
        while (vec > 1 && basis[0] % vec)
          vec /= 2;
  // The registers past a vector start the next one: aligned too (a swizzle
  // may XOR a register's offset by less than a vector). One pass: the bits
  // below a narrowed vector are the contiguous run's, multiples of it.
  if (int i = toOffset.inIndex(gpu::kRegister); i >= 0) {
    const auto &bases = toOffset.ins()[i].bases;
    for (size_t b = 0; b < bases.size(); ++b)
      while (vec > 1 && (int32_t(1) << b) >= vec && bases[b][0] % vec)
        vec /= 2;
  }
  return std::max(vec, 1);
}

} // namespace tessel::gpu::lowering
