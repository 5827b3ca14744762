//===- Kernel.h - A compiled kernel as the bindings see it ------*- C++ -*-===//
#ifndef TESSEL_PYTHON_KERNEL_H
#define TESSEL_PYTHON_KERNEL_H

#include "tessel/Builder/DType.h"
#include "tessel/Runtime/KernelCache.h"
#include "tessel/Runtime/ObjectLoader.h"
#include "tessel/Runtime/ThreadPool.h"

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::python {

namespace py = pybind11;

class BackendError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class CacheError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Raises the error (if any) as a Python exception of type E.
template <typename E = BackendError> void check(llvm::Error err) {
  if (err)
    throw E(llvm::toString(std::move(err)));
}

/// A compiled CPU kernel, loaded and ready to launch.
struct Kernel {
  runtime::CacheEntry parts;
  std::vector<DType> signature;
  runtime::CPUEntry entry = nullptr;

  /// Loads the binary of `parts` into the process, unless `load` is false
  /// (code for another CPU, compiled ahead of time: it may not run here).
  explicit Kernel(runtime::CacheEntry entryParts, bool load = true)
      : parts(std::move(entryParts)) {
    for (const std::string &t : parts.signature) {
      auto dtype = DType::parse(t);
      if (!dtype)
        throw BackendError("kernel " + parts.name + ": bad argument type '" + t + "'");
      signature.push_back(*dtype);
    }
    if (!load)
      return;
    std::string error;
    entry = runtime::loadCPUObject(parts.object, parts.entryName, error);
    if (!entry)
      throw BackendError("loading kernel " + parts.name + " failed: " + error);
  }

  py::dict asmText() const {
    py::dict d;
    for (const auto &[stage, text] : parts.stages)
      d[py::str(stage)] = text;
    return d;
  }

  /// Runs the grid (checked by the caller) with argv[i] pointing to the
  /// value of runtime argument i. Releases the GIL while programs run.
  void launch(int64_t gx, int64_t gy, int64_t gz, void **argv) const {
    if (!entry)
      throw BackendError("kernel " + parts.name + " was compiled for another "
                         "CPU and is not loaded in this process");
    int64_t total = gx * gy * gz;
    if (total == 0)
      return;
    py::gil_scoped_release release;
    runtime::CPUEntry fn = entry;
    runtime::ThreadPool::global().parallelFor(
        total, [&](int64_t begin, int64_t end) {
          fn(argv, begin, end, int32_t(gx), int32_t(gy), int32_t(gz));
        });
  }
};

} // namespace tessel::python

#endif // TESSEL_PYTHON_KERNEL_H
