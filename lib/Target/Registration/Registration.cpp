//===- Registration.cpp - The backends built into this build --------------===//
#include "tessel/Target/Registration.h"

#include "tessel/AMD/AMDTarget.h"
#include "tessel/NVIDIA/NVIDIATarget.h"
#include "tessel/Target/CPU/CPUTarget.h"

#include <mutex>

void tessel::target::registerBuiltinBackends() {
  static std::once_flag once;
  std::call_once(once, [] {
    cpu::registerCPUBackend();
    nvidia::registerNVIDIABackends();
    amd::registerAMDBackend();
  });
}
