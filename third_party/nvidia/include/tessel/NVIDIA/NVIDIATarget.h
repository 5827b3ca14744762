//===- NVIDIATarget.h - The cuda and sim backends ---------------*- C++ -*-===//
#ifndef TESSEL_NVIDIA_NVIDIATARGET_H
#define TESSEL_NVIDIA_NVIDIATARGET_H

namespace tessel::nvidia {

/// Registers "cuda" (cuda:80, cuda:90a, ...: PTX and, where ptxas is found,
/// a cubin) and "sim" (sim:sm_80, sim:sm_90a: the same PTX, run by Tessel's
/// PTX simulator on the CPU).
void registerNVIDIABackends();

} // namespace tessel::nvidia

#endif // TESSEL_NVIDIA_NVIDIATARGET_H
