//===- LLVMErrors.cpp - Errors LLVM reports through its context ----------===//
#include "tessel/Support/LLVMErrors.h"

#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace tessel;

LLVMErrorCollector::LLVMErrorCollector(llvm::LLVMContext &context) {
  context.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo *info, void *out) {
        if (info->getSeverity() != llvm::DS_Error)
          return;
        std::string &text = *static_cast<std::string *>(out);
        llvm::raw_string_ostream os(text);
        if (!text.empty())
          os << "\n";
        llvm::DiagnosticPrinterRawOStream printer(os);
        info->print(printer);
      },
      &text);
}
