//===- Reconvergence.h - Where divergent lanes meet again -------*- C++ -*-===//
#ifndef TESSEL_LIB_GPUSIM_RECONVERGENCE_H
#define TESSEL_LIB_GPUSIM_RECONVERGENCE_H

#include "tessel/GPUSim/Program.h"

namespace tessel::gpusim {

/// Sets Inst::reconverge of every branch to the first instruction of the
/// immediate post-dominator of its basic block (insts.size() when the lanes
/// only meet again at the kernel's exit).
void computeReconvergence(Kernel &k);

} // namespace tessel::gpusim

#endif
