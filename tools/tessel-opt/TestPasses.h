//===- TestPasses.h - Passes that expose analyses to lit tests -*- C++ -*-===//
#ifndef TESSEL_OPT_TESTPASSES_H
#define TESSEL_OPT_TESTPASSES_H

#include "mlir/Pass/Pass.h"

namespace tessel::test {
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "TestPasses.h.inc"

void registerTestPasses();
} // namespace tessel::test

#endif // TESSEL_OPT_TESTPASSES_H
