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

} // namespace tessel::gpusim

#endif // TESSEL_GPUSIM_SMALLFLOAT_H
