//===- Registration.h - The backends built into this build ------*- C++ -*-===//
#ifndef TESSEL_TARGET_REGISTRATION_H
#define TESSEL_TARGET_REGISTRATION_H

namespace tessel::target {

/// Registers every backend of this build with the target registry (once;
/// later calls do nothing). Adding a backend adds one line here.
void registerBuiltinBackends();

} // namespace tessel::target

#endif // TESSEL_TARGET_REGISTRATION_H
