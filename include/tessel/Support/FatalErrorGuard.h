//===- FatalErrorGuard.h - Survive LLVM's fatal errors -----------*- C++ -*-===//
//
// LLVM ends the process (report_fatal_error, then abort) on some inputs its
// code generators cannot handle: a bug of LLVM's that a user's kernel can
// reach. No user input may end the process, so backends run LLVM's
// optimizer and code generators through this guard and turn such an error
// into a compile error (or retry with other settings).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_FATALERRORGUARD_H
#define TESSEL_SUPPORT_FATALERRORGUARD_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace tessel {

/// Runs `work`; returns false with LLVM's message in `error` if it ended in
/// a fatal error (or a crash) instead of returning. What `work` allocated is
/// then leaked: use it for whole compilations, whose state it owns.
bool runGuarded(llvm::function_ref<void()> work, std::string &error);

} // namespace tessel

#endif // TESSEL_SUPPORT_FATALERRORGUARD_H
