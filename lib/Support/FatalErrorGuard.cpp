//===- FatalErrorGuard.cpp - Survive LLVM's fatal errors ------------------===//
#include "tessel/Support/FatalErrorGuard.h"

#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"

#include <mutex>

namespace {

/// The message of the fatal error being handled on this thread.
thread_local std::string *pendingMessage = nullptr;

void recordFatalError(void *, const char *reason, bool) {
  if (pendingMessage)
    *pendingMessage = reason;
  // Returning lets LLVM abort(), which the recovery context catches.
}

} // namespace

bool tessel::runGuarded(llvm::function_ref<void()> work, std::string &error) {
  // One guarded compilation at a time: the handlers are process-wide.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::string message;
  pendingMessage = &message;
  llvm::install_fatal_error_handler(recordFatalError, nullptr);
  llvm::CrashRecoveryContext::Enable();
  bool ok;
  {
    llvm::CrashRecoveryContext context;
    ok = context.RunSafely(work);
  }
  llvm::CrashRecoveryContext::Disable();
  llvm::remove_fatal_error_handler();
  pendingMessage = nullptr;
  if (!ok)
    error = message.empty() ? "LLVM crashed" : "LLVM error: " + message;
  return ok;
}
