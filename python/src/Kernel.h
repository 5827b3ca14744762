//===- Kernel.h - A compiled kernel as the bindings see it ------*- C++ -*-===//
#ifndef TESSEL_PYTHON_KERNEL_H
#define TESSEL_PYTHON_KERNEL_H

#include "tessel/Builder/DType.h"
#include "tessel/Runtime/CacheEntry.h"
#include "tessel/Target/Target.h"

#include <pybind11/pybind11.h>

#include <memory>
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

/// A compiled kernel: its cache entry and, when its target can run in this
/// process, the loaded code.
struct Kernel {
  runtime::CacheEntry parts;
  std::vector<DType> signature;
  std::unique_ptr<target::LoadedKernel> loaded;

  /// Loads the binary of `parts` through its target, unless `load` is false
  /// (code compiled ahead of time for another machine).
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
    auto target = target::getTarget(parts.target);
    if (!target)
      throw BackendError("kernel " + parts.name + ": " +
                         llvm::toString(target.takeError()));
    auto code = (*target)->load(parts);
    if (!code)
      throw BackendError(llvm::toString(code.takeError()));
    loaded = std::move(*code);
  }

  py::dict asmText() const {
    py::dict d;
    for (const auto &[stage, text] : parts.stages)
      d[py::str(stage)] = text;
    return d;
  }

  /// Runs the grid (checked by the caller) with argv[i] pointing to the
  /// value of runtime argument i, on `stream` (device targets). Releases the
  /// GIL while programs run.
  void launch(int64_t gx, int64_t gy, int64_t gz, void **argv,
              llvm::ArrayRef<runtime::LaunchArg> args, void *stream) const {
    if (!loaded) {
      // Why: what loading it here says (no driver, another machine's code).
      std::string why = "it cannot run in this process";
      if (auto target = target::getTarget(parts.target)) {
        auto code = (*target)->load(parts);
        if (!code)
          why = llvm::toString(code.takeError());
      } else {
        why = llvm::toString(target.takeError());
      }
      throw BackendError("kernel " + parts.name + " was compiled for " +
                         parts.target + " (" + parts.options + "): " + why);
    }
    // What Python printed before the kernel's lines comes first.
    if (loaded->printsOutput())
      py::module_::import("sys").attr("stdout").attr("flush")();
    py::gil_scoped_release release;
    loaded->launch(gx, gy, gz, argv, args, stream);
  }
};

} // namespace tessel::python

#endif // TESSEL_PYTHON_KERNEL_H
