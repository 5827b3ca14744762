//===- Diagnostics.h - Compiler diagnostics as kernel authors read them -*- C++ -*-===//
//
// While alive, collects the error diagnostics of an MLIR context as
// "file:line:col: message" lines (no dump of the failing operation), the
// form every target reports compile errors in.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TARGET_DIAGNOSTICS_H
#define TESSEL_TARGET_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tessel::target {

class DiagnosticCapture {
public:
  explicit DiagnosticCapture(mlir::MLIRContext *context);

  /// An error: `what`, then the diagnostics collected so far.
  llvm::Error fail(const llvm::Twine &what) const;

private:
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace tessel::target

#endif // TESSEL_TARGET_DIAGNOSTICS_H
