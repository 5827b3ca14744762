//===- AMDTarget.h - The hip backend ----------------------------*- C++ -*-===//
#ifndef TESSEL_AMD_AMDTARGET_H
#define TESSEL_AMD_AMDTARGET_H

namespace tessel::amd {

/// Registers "hip" (hip:gfx90a, hip:gfx942, hip:gfx950: AMDGCN and an hsaco
/// linked in process).
void registerAMDBackend();

} // namespace tessel::amd

#endif // TESSEL_AMD_AMDTARGET_H
