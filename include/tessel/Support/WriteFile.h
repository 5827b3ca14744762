//===- WriteFile.h - Files written with every error returned -----*- C++ -*-===//
//
// llvm::raw_fd_ostream ends the process when it is destroyed after a failed
// write (a full disk, a file size limit) unless its error is cleared; files
// Tessel writes go through plain POSIX writes instead, so that such a
// failure is an error the caller reports.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_WRITEFILE_H
#define TESSEL_SUPPORT_WRITEFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tessel {

/// Creates `path` (it must not exist; mode 0600) holding `data`. Any failure
/// comes back as "cannot write PATH: REASON".
llvm::Error writeNewFile(const std::string &path, llvm::StringRef data);

} // namespace tessel

#endif // TESSEL_SUPPORT_WRITEFILE_H
