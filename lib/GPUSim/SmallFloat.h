//===- SmallFloat.h - Narrow float formats in the simulators ----*- C++ -*-===//
//
// f16, bf16 and the 8-bit floats as both simulators compute them: each value
// widened to double, the result rounded once to the narrow format.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_GPUSIM_SMALLFLOAT_H
#define TESSEL_GPUSIM_SMALLFLOAT_H

#include "tessel/GPUSim/Program.h"

#include <cstdint>

namespace tessel::gpusim {

/// Rounds `v` to a binary format with `ebits` exponent and `mbits` mantissa
/// bits (IEEE-like, with infinities) under `mode`; returns the bits.
uint32_t roundToSmallFloat(double v, int ebits, int mbits, Rounding mode,
                           bool satfinite);
double smallFloatValue(uint32_t bits, int ebits, int mbits);
inline double halfToDouble(uint16_t h) { return smallFloatValue(h, 5, 10); }
inline double bf16ToDouble(uint16_t h) { return smallFloatValue(h, 8, 7); }
/// An 8-bit float's value from its low 8 bits: e4m3 (`e5m2` false) or
/// e5m2; OCP (e4m3fn: bias 7, no infinities, S.1111.111 NaN; e5m2 IEEE-like)
/// or, with `fnuz`, AMD CDNA3's (biases 8 and 16, 0x80 the only NaN, no
/// infinities).
double fp8Value(uint32_t bits, bool e5m2, bool fnuz = false);

} // namespace tessel::gpusim

#endif // TESSEL_GPUSIM_SMALLFLOAT_H
