//===- FatalErrorGuardTest.cpp - LLVM's fatal errors become errors --------===//
#include "tessel/Support/FatalErrorGuard.h"

#include "llvm/Support/ErrorHandling.h"

#include <gtest/gtest.h>

using namespace tessel;

TEST(FatalErrorGuard, ReturnsNormally) {
  std::string error;
  int ran = 0;
  EXPECT_TRUE(runGuarded([&] { ++ran; }, error));
  EXPECT_EQ(ran, 1);
  EXPECT_TRUE(error.empty());
}

TEST(FatalErrorGuard, FatalErrorIsReportedNotFatal) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string error;
    bool ok = runGuarded(
        [] { llvm::report_fatal_error("cannot select this instruction"); },
        error);
    EXPECT_FALSE(ok);
    EXPECT_EQ(error, "LLVM error: cannot select this instruction");
  }
  // The process and the guard still work afterwards.
  std::string error;
  EXPECT_TRUE(runGuarded([] {}, error));
}
