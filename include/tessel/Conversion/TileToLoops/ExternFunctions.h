//===- ExternFunctions.h - libdevice functions on the CPU -------*- C++ -*-===//
//
// tl.extern_elementwise calls NVIDIA's libdevice (`__nv_*`) in Triton's
// libraries. The CPU has no libdevice: the functions it knows are its own
// math (the ops it already lowers, arithmetic, or the C library's function
// of the same meaning); any other is refused at the call's line.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CONVERSION_TILETOLOOPS_EXTERNFUNCTIONS_H
#define TESSEL_CONVERSION_TILETOLOOPS_EXTERNFUNCTIONS_H

#include "tessel/Dialect/Tile/IR/Dialect.h"

namespace tessel::loops {

/// Whether the CPU provides the function `op` calls, with its types; emits
/// an error at `op` otherwise.
mlir::LogicalResult checkExternFunction(tile::ExternElementwiseOp op);

/// Whether the table has `op`'s function with `op`'s types (no diagnostic):
/// GPU targets whose vendor library lacks a libdevice function (AMD's OCML
/// has no __nv_popc, __nv_mulhi, ...) compute it the CPU's way.
bool hasExternFunction(tile::ExternElementwiseOp op);

/// The function `op` calls (checked) on scalar `args`, emitted at `b`; C
/// library functions are declared in `module`.
mlir::Value emitExternFunction(mlir::OpBuilder &b, mlir::ModuleOp module,
                               tile::ExternElementwiseOp op,
                               mlir::ValueRange args);

} // namespace tessel::loops

#endif // TESSEL_CONVERSION_TILETOLOOPS_EXTERNFUNCTIONS_H
