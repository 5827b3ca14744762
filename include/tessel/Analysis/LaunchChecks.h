//===- LaunchChecks.h - Rules the launcher checks on arguments --*- C++ -*-===//
//
// Some rules on a kernel's values (a tensor descriptor's 16-byte alignment)
// are decided at compile time when a value is a constant, and checked by the
// launcher when it is a multiple of one runtime argument plus a constant: the
// launcher knows that argument's value. The builder records such checks on
// the kernel function (tile.launch_checks); each target copies them into the
// kernel's cache entry.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_ANALYSIS_LAUNCHCHECKS_H
#define TESSEL_ANALYSIS_LAUNCHCHECKS_H

#include "tessel/Runtime/CacheEntry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"

#include <vector>

#include <cstdint>
#include <optional>

namespace tessel {

/// A scalar integer or pointer as scale * argument + offset, in wrapping
/// 64-bit arithmetic (exact modulo any power of two up to 2^64; a narrower
/// integer's value is exact modulo 2^width). Pointers count bytes. Without
/// an argument the value is the constant `offset`.
struct ArgumentAffine {
  std::optional<unsigned> argument; ///< an argument of the kernel function
  uint64_t scale = 0;
  uint64_t offset = 0;
};

/// `v` as an ArgumentAffine, through constants, the kernel function's
/// arguments (a function marked tile.kernel), integer casts, +, -, * and <<
/// by constants, and tile.addptr; nullopt for anything else.
std::optional<ArgumentAffine> argumentAffine(mlir::Value v);

/// Records `check` on `kernel` (its argument indexes the kernel's arguments).
void addLaunchCheck(mlir::func::FuncOp kernel,
                    const runtime::LaunchCheck &check);

/// The checks recorded on `kernel`.
std::vector<runtime::LaunchCheck> launchChecks(mlir::func::FuncOp kernel);

} // namespace tessel

#endif // TESSEL_ANALYSIS_LAUNCHCHECKS_H
