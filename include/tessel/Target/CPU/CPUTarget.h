//===- CPUTarget.h - The CPU backend behind the target seam -----*- C++ -*-===//
#ifndef TESSEL_TARGET_CPU_CPUTARGET_H
#define TESSEL_TARGET_CPU_CPUTARGET_H

namespace tessel::cpu {

/// Registers the "cpu" backend: "cpu" is the host CPU, "cpu:<model>" another
/// model of the host's architecture (ahead of time; it runs here only when
/// the host has every feature of the model). Kernels run their grid on the
/// process's thread pool.
void registerCPUBackend();

} // namespace tessel::cpu

#endif // TESSEL_TARGET_CPU_CPUTARGET_H
