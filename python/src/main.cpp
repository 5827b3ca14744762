//===- main.cpp - Python bindings of the Tessel compiler ------------------===//
//
// Thin by design: argument conversion and exception mapping only. The
// contract is documented in python/src/README.md.
//
//===----------------------------------------------------------------------===//
#include "tessel/Builder/TileBuilder.h"
#include "tessel/Runtime/KernelCache.h"
#include "tessel/Runtime/ObjectLoader.h"
#include "tessel/Runtime/ThreadPool.h"
#include "tessel/Target/CPU/CPUCompiler.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>

namespace py = pybind11;
using namespace tessel;

namespace {

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

  /// Loads the binary of `parts` into the process.
  explicit Kernel(runtime::CacheEntry entryParts) : parts(std::move(entryParts)) {
    for (const std::string &t : parts.signature) {
      auto dtype = DType::parse(t);
      if (!dtype)
        throw BackendError("kernel " + parts.name + ": bad argument type '" + t + "'");
      signature.push_back(*dtype);
    }
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

  void run(std::tuple<int64_t, int64_t, int64_t> grid, const py::list &args) {
    auto [gx, gy, gz] = grid;
    if (gx < 0 || gy < 0 || gz < 0)
      throw py::value_error("grid dimensions must be non-negative");
    if (gx > INT32_MAX || gy > INT32_MAX || gz > INT32_MAX)
      throw py::value_error("grid dimensions must fit in int32");
    if (args.size() != signature.size())
      throw py::value_error(parts.name + " takes " + std::to_string(signature.size()) +
                            " runtime arguments, got " +
                            std::to_string(args.size()));
    std::vector<uint64_t> slots(signature.size());
    std::vector<void *> argv(signature.size());
    for (size_t i = 0; i < signature.size(); ++i) {
      DType t = signature[i];
      py::handle arg = args[i];
      void *slot = &slots[i];
      argv[i] = slot;
      if (t.isPointer) {
        *static_cast<uint64_t *>(slot) = arg.cast<uint64_t>();
      } else if (t.kind == ScalarKind::F32) {
        *static_cast<float *>(slot) = arg.cast<float>();
      } else if (t.kind == ScalarKind::F64) {
        *static_cast<double *>(slot) = arg.cast<double>();
      } else if (t.isFloat()) {
        throw py::type_error("scalar arguments of type " + t.str() +
                             " are not supported");
      } else if (t.isBool()) {
        *static_cast<uint8_t *>(slot) = arg.cast<bool>() ? 1 : 0;
      } else if (t.isUnsigned()) {
        *static_cast<uint64_t *>(slot) = arg.cast<uint64_t>();
      } else {
        // Little-endian: the low bytes of the 64-bit slot hold narrower ints.
        *static_cast<int64_t *>(slot) = arg.cast<int64_t>();
      }
    }
    int64_t total = gx * gy * gz;
    if (total == 0)
      return;
    py::gil_scoped_release release;
    runtime::CPUEntry fn = entry;
    void **argvp = argv.data();
    runtime::ThreadPool::global().parallelFor(
        total, [&](int64_t begin, int64_t end) {
          fn(argvp, begin, end, int32_t(gx), int32_t(gy), int32_t(gz));
        });
  }
};

std::unique_ptr<Kernel> compileKernel(TileBuilder &builder,
                                      const py::dict &options) {
  (void)options;
  mlir::OwningOpRef<mlir::ModuleOp> module = builder.takeModule();
  if (!module)
    throw BackendError("the builder's module was already compiled");
  cpu::CompileResult result;
  std::string error;
  if (mlir::failed(cpu::compileModule(*module, result, error)))
    throw BackendError(error);
  runtime::CacheEntry parts;
  parts.name = result.kernelName;
  parts.entryName = result.entryName;
  for (const DType &t : builder.getSignature())
    parts.signature.push_back(t.str());
  parts.stages = std::move(result.stages);
  parts.object = std::move(result.object);
  return std::make_unique<Kernel>(std::move(parts));
}

} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "Tessel compiler core: tile IR builder, CPU compiler, launcher";

  py::register_exception<CompileError>(m, "CompileError");
  py::register_exception<BackendError>(m, "BackendError");
  py::register_exception<CacheError>(m, "CacheError");

  py::class_<TValue>(m, "Tensor")
      .def_property_readonly("dtype",
                             [](const TValue &v) { return v.dtype.str(); })
      .def_property_readonly("shape",
                             [](const TValue &v) {
                               return std::vector<int64_t>(v.shape().begin(),
                                                           v.shape().end());
                             })
      .def_property_readonly("is_block", &TValue::isBlock)
      .def("__repr__",
           [](const TValue &v) { return "<Tensor " + v.describe() + ">"; });

  using B = TileBuilder;
  py::class_<B>(m, "Builder")
      .def(py::init<>())
      .def("set_loc", &B::setLoc)
      .def("create_function", &B::createFunction)
      .def("finish_function", &B::finishFunction)
      .def("module_str", &B::moduleString)
      .def("constant", &B::constant)
      .def("program_id", &B::programId)
      .def("num_programs", &B::numPrograms)
      .def("arange", &B::arange)
      .def("full", &B::full)
      .def("binary", &B::binary)
      .def("unary", &B::unary)
      .def("where", &B::where)
      .def("math", &B::math)
      .def("cast", &B::cast, py::arg("x"), py::arg("dtype"),
           py::arg("bitcast") = false)
      .def("broadcast_to", &B::broadcastTo)
      .def("expand_dims", &B::expandDims)
      .def("reshape", &B::reshape)
      .def("permute", &B::permute)
      .def("load", &B::load, py::arg("ptr"), py::arg("mask") = py::none(),
           py::arg("other") = py::none())
      .def("store", &B::store, py::arg("ptr"), py::arg("value"),
           py::arg("mask") = py::none())
      .def("begin_reduce", &B::beginReduce)
      .def("end_reduce", &B::endReduce)
      .def("dot", &B::dot, py::arg("a"), py::arg("b"),
           py::arg("acc") = py::none(), py::arg("out_dtype") = py::none())
      .def("begin_for", &B::beginFor)
      .def("end_for", &B::endFor)
      .def("begin_while", &B::beginWhile)
      .def("while_condition", &B::whileCondition)
      .def("end_while", &B::endWhile)
      .def("begin_if", &B::beginIf)
      .def("begin_else", &B::beginElse)
      .def("end_if", &B::endIf);

  py::class_<Kernel>(m, "Kernel")
      .def_property_readonly("name", [](const Kernel &k) { return k.parts.name; })
      .def_property_readonly("signature",
                             [](const Kernel &k) { return k.parts.signature; })
      .def_property_readonly("asm", &Kernel::asmText)
      .def_property_readonly(
          "object", [](const Kernel &k) { return py::bytes(k.parts.object); })
      .def("run", &Kernel::run);

  py::class_<runtime::KernelCache>(m, "KernelCache")
      .def(py::init<std::string>())
      .def_property_readonly("directory", &runtime::KernelCache::directory)
      .def("check", [](const runtime::KernelCache &c) {
        check<CacheError>(c.checkDirectory());
      })
      .def("load",
           [](const runtime::KernelCache &c,
              const std::string &key) -> std::unique_ptr<Kernel> {
             check<CacheError>(c.checkDirectory());
             auto entry = c.load(key);
             if (!entry)
               throw CacheError(llvm::toString(entry.takeError()));
             if (!*entry)
               return nullptr;
             return std::make_unique<Kernel>(std::move(**entry));
           })
      .def("store",
           [](const runtime::KernelCache &c, const std::string &key,
              const Kernel &k) { check<CacheError>(c.store(key, k.parts)); })
      .def("entries",
           [](const runtime::KernelCache &c) {
             py::list out;
             for (const runtime::CacheEntryInfo &e : c.entries()) {
               py::dict d;
               d["key"] = e.key;
               d["name"] = e.name;
               d["bytes"] = e.bytes;
               d["last_use"] = e.lastUse;
               out.append(d);
             }
             return out;
           })
      .def("evict_to_size",
           [](const runtime::KernelCache &c, uint64_t maxBytes) {
             check<CacheError>(c.evictToSize(maxBytes));
           })
      .def("clear", [](const runtime::KernelCache &c) {
        check<CacheError>(c.clear());
      });

  m.def("cache_key",
        [](std::vector<std::string> parts) {
          parts.insert(parts.begin(), runtime::compilerBuildId());
          return runtime::hashKey(parts);
        },
        "SHA-256 of the compiler's build id and the parts");
  m.def("build_id", &runtime::compilerBuildId);
  m.def("host_target", &cpu::hostTargetDescription);

  m.def(
      "compile",
      [](TileBuilder &builder, const py::dict &options) {
        return compileKernel(builder, options);
      },
      py::arg("builder"), py::arg("options") = py::dict());
  m.def("num_threads", [] { return runtime::ThreadPool::global().size(); });
}
