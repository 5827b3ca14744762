//===- WriteFile.cpp - Files written with every error returned ------------===//
#include "tessel/Support/WriteFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

llvm::Error tessel::writeNewFile(const std::string &path, llvm::StringRef data) {
  auto fail = [&](int err) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot write " + path + ": " +
                                       std::strerror(err));
  };
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return fail(errno);
  const char *p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      return fail(err);
    }
    p += n;
    left -= size_t(n);
  }
  if (::close(fd) != 0)
    return fail(errno);
  return llvm::Error::success();
}
