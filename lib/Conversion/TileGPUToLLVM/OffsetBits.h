//===- OffsetBits.h - Constants folded into thread offsets ------*- C++ -*-===//
//
// Offsets into swizzled shared memory are a thread's part (from its lane
// and warp) XOR a constant per register, tile or K step. Where the constant
// has bits the thread's part can never have, those bits become a constant
// offset of the address, which the code generator folds into the
// instruction (ld/st/ldmatrix/cp.async [reg + imm]): one register serves
// every such constant instead of one register per constant, kept live
// across loops.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_OFFSETBITS_H
#define TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_OFFSETBITS_H

#include "mlir/IR/Builders.h"

namespace tessel::gpu::lowering {

/// The bits an i32 value built by arith ops from constants and thread ids
/// may have set (all bits where the ops do not say).
uint32_t possibleBits(mlir::Value v);

/// The address of element `thread ^ c` (elements of `size` bytes) from the
/// pointer `base`: the bits of `c` that `thread` may have by XOR, the others
/// as a constant offset of the address.
mlir::Value xorElementAddress(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value base, mlir::Value thread, int32_t c,
                              int32_t size);

} // namespace tessel::gpu::lowering

#endif // TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_OFFSETBITS_H
