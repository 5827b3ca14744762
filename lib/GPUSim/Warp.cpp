//===- Warp.cpp - Active masks and the reconvergence stack ----------------===//
#include "tessel/GPUSim/Warp.h"

namespace tessel::gpusim {

void Warp::start(uint32_t numRegs, uint32_t lanes) {
  valid = lanes >= 32 ? ~0u : ((1u << lanes) - 1);
  exited = 0;
  atBarrier = false;
  done = false;
  carry = 0;
  stack.assign(1, {0, ~0u, valid});
  regs.assign(size_t(numRegs) * 32, 0);
  asyncCopies.clear();
}

bool Warp::settle() {
  while (!stack.empty()) {
    StackEntry &top = stack.back();
    if (top.mask == 0 || top.pc == top.reconverge)
      stack.pop_back();
    else
      return true;
  }
  done = true;
  return false;
}

void Warp::retire(uint32_t lanes) {
  exited |= lanes;
  for (StackEntry &e : stack)
    e.mask &= ~lanes;
}

void Warp::branch(uint32_t taken, uint32_t target, uint32_t fallthrough,
                  uint32_t reconverge) {
  StackEntry &top = stack.back();
  uint32_t notTaken = top.mask & ~taken;
  if (notTaken == 0) {
    top.pc = target;
    return;
  }
  if (taken == 0) {
    top.pc = fallthrough;
    return;
  }
  top.pc = reconverge;
  uint32_t outer = top.reconverge;
  (void)outer;
  StackEntry fall{fallthrough, reconverge, notTaken};
  StackEntry jump{target, reconverge, taken};
  stack.push_back(fall);
  stack.push_back(jump);
}

} // namespace tessel::gpusim
