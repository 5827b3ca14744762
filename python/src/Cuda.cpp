//===- Cuda.cpp - What the Python side asks of the CUDA driver -----------===//
//
// _C.cuda_device_properties(device): the properties Triton's
// driver.active.utils.get_device_properties gives, from the driver (a
// BackendError where there is none).
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include "tessel/NVIDIA/CudaDriver.h"

#include <pybind11/stl.h>

namespace py = pybind11;
using namespace tessel;

namespace tessel::python {

void bindCuda(py::module_ &m) {
  m.def(
      "cuda_device_properties",
      [](int device) {
        auto driver = nvidia::CudaDriver::get();
        if (!driver)
          throw BackendError(llvm::toString(driver.takeError()));
        auto properties = driver->deviceProperties(device);
        if (!properties)
          throw BackendError(llvm::toString(properties.takeError()));
        return *properties;
      },
      py::arg("device") = 0,
      "The properties of CUDA GPU `device`, read from the driver");
}

} // namespace tessel::python
