//===- GPUSim.cpp - Python bindings of the PTX simulator -------------------===//
//
// _C.gpusim_launch(ptx, kernel, grid, block, shared_bytes, args, race_check,
// instruction_limit, threads, time_limit, amdgcn) runs a kernel of the PTX
// text (of the AMDGCN assembly with amdgcn=True);
// arrays (C-contiguous numpy arrays) are copied into their own simulated
// allocations and back after the launch (when writeable); returns the
// counters as a dict. Every simulator error is a GPUSimError (a
// RuntimeError); Ctrl-C during a launch raises KeyboardInterrupt within
// about 20 ms. tessel/gpusim.py is the public face.
//
//===----------------------------------------------------------------------===//
#include "tessel/GPUSim/AMDGCN.h"
#include "tessel/GPUSim/Error.h"
#include "tessel/GPUSim/Launch.h"
#include "tessel/GPUSim/Program.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>

namespace py = pybind11;
using namespace tessel::gpusim;

namespace tessel::python {

void bindGPUSim(py::module_ &m) {
  static py::exception<SimError> simError(m, "GPUSimError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const SimError &e) {
      py::set_error(simError, e.what());
    }
  });
  m.def(
      "gpusim_launch",
      [](const std::string &ptx, const std::string &kernel,
         std::vector<uint32_t> grid, std::vector<uint32_t> block,
         uint32_t sharedBytes, py::list pyArgs, bool raceCheck,
         uint64_t instructionLimit, unsigned threads, double timeLimit,
         bool isAmdgcn) {
        if (grid.empty() || grid.size() > 3 || block.empty() || block.size() > 3)
          throw SimError("grid and block have 1 to 3 dimensions");
        LaunchConfig cfg;
        for (size_t i = 0; i < grid.size(); ++i)
          cfg.grid[i] = grid[i];
        for (size_t i = 0; i < block.size(); ++i)
          cfg.block[i] = block[i];
        cfg.dynamicSharedBytes = sharedBytes;
        cfg.raceCheck = raceCheck;
        cfg.instructionLimit = instructionLimit;
        cfg.threads = threads;
        if (!(timeLimit >= 0))
          throw SimError("time_limit must be a non-negative number of "
                         "seconds (0: none)");
        cfg.timeLimit = timeLimit;
        // The launch runs without the GIL; the signal handlers (Ctrl-C's
        // KeyboardInterrupt) run when it is asked whether to stop.
        cfg.interrupt = [] {
          py::gil_scoped_acquire gil;
          return PyErr_CheckSignals() != 0;
        };
        std::vector<LaunchArg> args(pyArgs.size());
        std::vector<py::buffer_info> keep;
        keep.reserve(pyArgs.size());
        for (size_t i = 0; i < pyArgs.size(); ++i) {
          py::handle h = pyArgs[i];
          LaunchArg &a = args[i];
          a.name = "argument " + std::to_string(i);
          if (h.is_none()) {
            a.kind = LaunchArg::Null;
          } else if (py::isinstance<py::bool_>(h)) {
            a.kind = LaunchArg::Int;
            a.i = h.cast<bool>();
          } else if (py::isinstance<py::int_>(h)) {
            a.kind = LaunchArg::Int;
            py::int_ v = py::reinterpret_borrow<py::int_>(h);
            if (v < py::int_(0)) {
              if (v < py::int_(INT64_MIN))
                throw SimError(a.name + ": integer out of range");
              a.i = v.cast<int64_t>();
            } else {
              if (v > py::int_(UINT64_MAX))
                throw SimError(a.name + ": integer out of range");
              uint64_t u = v.cast<uint64_t>();
              a.i = int64_t(u);
              a.isUnsigned = u > uint64_t(INT64_MAX);
            }
          } else if (py::isinstance<py::float_>(h)) {
            a.kind = LaunchArg::Float;
            a.f = h.cast<double>();
          } else if (py::isinstance<py::array>(h)) {
            py::array arr = py::reinterpret_borrow<py::array>(h);
            if (!(arr.flags() & py::array::c_style))
              throw SimError(a.name + ": arrays must be C-contiguous");
            a.kind = LaunchArg::Buffer;
            a.host = const_cast<void *>(arr.data());
            a.bytes = uint64_t(arr.nbytes());
            a.writeBack = arr.writeable();
          } else if (py::isinstance<py::tuple>(h) && py::len(h) == 3 &&
                     py::isinstance<py::bytes>(py::reinterpret_borrow<py::tuple>(h)[0])) {
            // (bytes, array or None, address offset): a by-value .b8 array
            // parameter such as a tensor map (tessel.gpusim.TensorMap).
            py::tuple t = py::reinterpret_borrow<py::tuple>(h);
            std::string raw = t[0].cast<std::string>();
            a.kind = LaunchArg::Bytes;
            a.value.assign(raw.begin(), raw.end());
            a.addressAt = t[2].cast<uint32_t>();
            if (!t[1].is_none()) {
              py::array arr = py::reinterpret_borrow<py::array>(t[1]);
              if (!(arr.flags() & py::array::c_style))
                throw SimError(a.name + ": arrays must be C-contiguous");
              a.host = const_cast<void *>(arr.data());
              a.bytes = uint64_t(arr.nbytes());
              a.writeBack = arr.writeable();
            }
          } else {
            throw SimError(a.name + ": expected a numpy array, int, float, "
                                    "bool or None, got " +
                           std::string(py::str(h.get_type())));
          }
        }
        LaunchResult r;
        try {
          if (isAmdgcn) {
            amdgcn::Module module = amdgcn::parse(ptx);
            py::gil_scoped_release release;
            r = amdgcn::launch(module, kernel, cfg, args);
          } else {
            Module module = parsePTX(ptx);
            py::gil_scoped_release release;
            r = launch(module, kernel, cfg, args);
          }
        } catch (const Interrupted &) {
          // The exception a signal handler raised is pending: raise it.
          if (!PyErr_Occurred())
            PyErr_SetNone(PyExc_KeyboardInterrupt);
          throw py::error_already_set();
        }
        py::dict out;
        for (auto &[k, v] : r.counters.toMap())
          out[py::str(k)] = v;
        out["seconds"] = r.seconds;
        return out;
      },
      py::arg("ptx"), py::arg("kernel"), py::arg("grid"), py::arg("block"),
      py::arg("shared_bytes"), py::arg("args"), py::arg("race_check") = true,
      py::arg("instruction_limit") = LaunchConfig().instructionLimit,
      py::arg("threads") = 0u,
      py::arg("time_limit") = LaunchConfig().timeLimit,
      py::arg("amdgcn") = false);
}

} // namespace tessel::python
