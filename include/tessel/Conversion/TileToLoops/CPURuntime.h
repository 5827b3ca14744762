//===- CPURuntime.h - Functions CPU kernels call ----------------*- C++ -*-===//
//
// The CPU lowering of tile.print and tile.assert calls functions of Tessel's
// runtime, which the object loader resolves to their definitions in this
// process (lib/Target/CPU/DebugRuntime.cpp):
//
//   void tessel_cpu_print(const char *format, ...);
//     one line, printf's format (tile::printFormat), written to stdout at
//     once and flushed;
//   void tessel_cpu_assert_fail(const char *message, const char *file,
//                               int32_t line, const char *function,
//                               int32_t pidX, int32_t pidY, int32_t pidZ,
//                               int32_t gridX, int32_t gridY, int32_t rank,
//                               ...);
//     a failed assertion of the program (pidX, pidY, pidZ) at the element
//     whose `rank` indices (int32) follow; the launch reports the failure of
//     the lowest program.
//
// After reporting a failure, the program returns: the lowering calls the
// marker kCPUExitProgram, which tessel-cpu-program-exit turns into a return
// from the kernel function once its control flow is a CFG.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CONVERSION_TILETOLOOPS_CPURUNTIME_H
#define TESSEL_CONVERSION_TILETOLOOPS_CPURUNTIME_H

namespace tessel {

inline constexpr const char *kCPUPrintFunction = "tessel_cpu_print";
inline constexpr const char *kCPUAssertFunction = "tessel_cpu_assert_fail";
/// A private function without a body: a call to it marks where the program
/// returns (never left in the object code).
inline constexpr const char *kCPUExitProgram = "tessel.exit_program";

} // namespace tessel

#endif // TESSEL_CONVERSION_TILETOLOOPS_CPURUNTIME_H
