//===- SharedAccess.h - Registers to and from shared memory ----*- C++ -*-===//
//
// Addresses in the program's shared array; tensors written and read there
// element by element (row-major) or in vectors through a linear map from
// offsets to coordinates; the slots of pipeline buffers.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_SHAREDACCESS_H
#define TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_SHAREDACCESS_H

#include "Utility.h"

namespace tessel::gpu::lowering {

using mlir::ValueRange;

/// A byte address in the program's dynamic shared array.
Value sharedAddress(OpBuilder &b, Location loc, unsigned addrSpace,
                    Value byteOffset);

/// The address of element `index` (of `bytes` each) of a shared-memory
/// region starting at byte `base`.
Value sharedElement(OpBuilder &b, Location loc, unsigned addrSpace,
                    int64_t base, Value index, unsigned bytes);

/// A register value stored as, or loaded from, element `index` of a shared
/// region at byte `base` (elements of their memory type's size).
void storeShared(OpBuilder &b, Location loc, unsigned addrSpace, Value v,
                 int64_t base, Value index);
Value loadShared(OpBuilder &b, Location loc, unsigned addrSpace, Type t,
                 int64_t base, Value index);

/// Padding between the stored rows of a 2-D block: `elems` elements after
/// every `rows` rows (none when `rows` is 0).
struct RowPadding {
  int32_t rows = 0, elems = 0;
};

/// The element index (i32) of (`row`, `col`) in rows of `rowElems` elements
/// spaced by `padding`.
Value paddedIndex(OpBuilder &b, Location loc, Value row, Value col,
                  int32_t rowElems, RowPadding padding);

/// Writes every owned element of a tensor to shared memory at its row-major
/// index (elements of their memory size, from byte `base`); `transposed`
/// writes a 2-D block column-major instead; `padding` spaces its stored rows.
void writeTensorToShared(OpBuilder &b, Location loc,
                         const GPUTargetInfo &target,
                         const LinearLayout &layout, ArrayRef<int32_t> shape,
                         ValueRange values, int64_t base,
                         bool transposed = false, RowPadding padding = {});

/// The element index (i32) of (`row`, `col`) of the tile in a `padded` slot
/// of `type` (its stored rows, transposed or not, and their padding).
Value paddedSlotIndex(OpBuilder &b, Location loc,
                      tessel::tilegpu::SharedBufferType type, Value row,
                      Value col);
/// A tensor held as `layout`, written to (each owned element once) or read
/// back from the `padded` slot of `type` at `slot` (a shared-memory
/// pointer).
void writeTensorToPaddedSlot(OpBuilder &b, Location loc,
                             const GPUTargetInfo &target,
                             const LinearLayout &layout, ValueRange values,
                             Value slot, tessel::tilegpu::SharedBufferType type);
SmallVector<Value> readTensorFromPaddedSlot(OpBuilder &b, Location loc,
                                            const GPUTargetInfo &target,
                                            const LinearLayout &layout,
                                            Type elt, Value slot,
                                            tessel::tilegpu::SharedBufferType type);

/// Every register of a tensor in `layout`, read back from its row-major
/// index.
SmallVector<Value> readTensorFromShared(OpBuilder &b, Location loc,
                                        const GPUTargetInfo &target,
                                        const LinearLayout &layout,
                                        ArrayRef<int32_t> shape, Type elt,
                                        int64_t base);

/// Writes a tensor held in registers as `layout` to shared memory from byte
/// `base` (or from `basePtr` where given) as `shared` (offset -> coordinates)
/// places it, in vectors of up to 16 bytes.
void writeOperandToShared(OpBuilder &b, Location loc,
                          const GPUTargetInfo &target,
                          const LinearLayout &layout,
                          const LinearLayout &shared, ValueRange values,
                          int64_t base, Value basePtr = {});

/// Reads a tensor into registers as `layout` from shared memory at
/// `basePtr`, where `shared` (offset -> coordinates) places it, in vectors
/// of up to 16 bytes.
SmallVector<Value> readOperandFromShared(OpBuilder &b, Location loc,
                                         const GPUTargetInfo &target,
                                         const LinearLayout &layout,
                                         const LinearLayout &shared, Type elt,
                                         Value basePtr);

/// The local_load that operand `i` (0: A, 1: B) of `dot` reads in place,
/// or null where the operand goes through registers.
tessel::tilegpu::LocalLoadOp inPlaceOperand(tessel::tile::DotOp dot,
                                            unsigned i);

/// The address of slot `slot` (i32) of the buffer at `buffer`.
Value slotAddress(OpBuilder &b, Location loc, Value buffer, Value slot,
                  tessel::tilegpu::SharedBufferType type);

/// The element offset in a slot of (row, column) (i32 each), from the
/// inverse of its layout (one XOR per set bit).
Value slotOffset(OpBuilder &b, Location loc, const LinearLayout &inverse,
                 Value row, Value col);

/// The widest run of registers (at most 16 bytes, at most `limit`) a thread
/// moves to or from consecutive offsets of a slot through `toOffset`.
int32_t slotVectorWidth(const LinearLayout &toOffset, int32_t size,
                        int32_t limit);

} // namespace tessel::gpu::lowering

#endif // TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_SHAREDACCESS_H
