//===- Launcher.h - The launch path of a @jit function ----------*- C++ -*-===//
//
// `kernel[grid](*args, **kwargs)` in C++: binds the arguments to the
// parameters, classifies and specializes them (dtypes; ints equal to 1 compiled
// in; ints and pointers divisible by 16 marked), looks the specialization up in
// the function's cache and launches. Python is called only on a miss (to
// compile), for argument kinds the fast path does not know (torch tensors,
// dtype-only arrays), for constexpr globals and for grid callables.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PYTHON_LAUNCHER_H
#define TESSEL_PYTHON_LAUNCHER_H

#include <pybind11/pybind11.h>

namespace tessel::python {

void bindLauncher(pybind11::module_ &m);

} // namespace tessel::python

#endif // TESSEL_PYTHON_LAUNCHER_H
