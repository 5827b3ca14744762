//===- Diagnostics.cpp - Compiler diagnostics as kernel authors read them -===//
#include "tessel/Target/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tessel::target;

DiagnosticCapture::DiagnosticCapture(MLIRContext *context)
    : handler(context, [this](Diagnostic &diag) {
        if (diag.getSeverity() != DiagnosticSeverity::Error)
          return success();
        llvm::raw_string_ostream os(text);
        if (auto fileLoc = dyn_cast<FileLineColLoc>(diag.getLocation()))
          os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine()
             << ":" << fileLoc.getColumn() << ": ";
        else
          os << diag.getLocation() << ": ";
        os << diag << "\n";
        for (Diagnostic &note : diag.getNotes())
          os << "  note: " << note << "\n";
        return success();
      }) {
  // Kernel authors read these messages: their location and the message.
  context->printOpOnDiagnostic(false);
}

llvm::Error DiagnosticCapture::fail(const llvm::Twine &what) const {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 what + (text.empty() ? "" : ":\n" + text));
}
