//===- main.cpp - Python bindings of the Tessel compiler ------------------===//
//
// Thin by design: argument conversion and exception mapping only. The
// contract is documented in python/src/README.md.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "Launcher.h"

#include "tessel/Builder/TileBuilder.h"
#include "tessel/Runtime/KernelCache.h"
#include "tessel/Runtime/RedisCache.h"
#include "tessel/Runtime/ThreadPool.h"
#include "tessel/Target/Registration.h"
#include "tessel/Target/Target.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>

namespace py = pybind11;
namespace tessel::python {
void bindGPUSim(py::module_ &m);
void bindCuda(py::module_ &m);
} // namespace tessel::python
using namespace tessel;
using namespace tessel::python;

namespace {

const target::Target &getTarget(const std::string &name) {
  target::registerBuiltinBackends();
  auto t = target::getTarget(name);
  if (!t)
    throw BackendError(llvm::toString(t.takeError()));
  return **t;
}

/// The options as given, `target`'s defaults for the others (where given).
target::CompileOptions toCompileOptions(const py::dict &options,
                                        const target::Target *target) {
  target::CompileOptions compileOptions;
  for (auto [key, value] : options) {
    if (value.is_none())
      continue; // as if not given: the default
    std::string text = PyBool_Check(value.ptr())
                           ? (value.ptr() == Py_True ? "true" : "false")
                           : std::string(py::str(value));
    check(compileOptions.set(std::string(py::str(key)), text));
  }
  if (target && !compileOptions.numStagesSet)
    compileOptions.numStages = target->defaultNumStages();
  return compileOptions;
}

/// Compiles the builder's kernel for `targetName`. Options are Triton's
/// (num_warps, num_stages, num_ctas, maxnreg, debug, enable_fp_fusion) and
/// the target's own; the kernel is loaded when it can run here.
std::unique_ptr<Kernel> compileKernel(TileBuilder &builder,
                                      const std::string &targetName,
                                      const py::dict &options) {
  const target::Target &t = getTarget(targetName);
  target::CompileOptions compileOptions = toCompileOptions(options, &t);
  mlir::OwningOpRef<mlir::ModuleOp> module = builder.takeModule();
  if (!module)
    throw BackendError("the builder's module was already compiled");
  llvm::Expected<runtime::CacheEntry> parts = t.compile(*module, compileOptions);
  if (!parts)
    throw BackendError(llvm::toString(parts.takeError()));
  for (const DType &type : builder.getSignature())
    parts->signature.push_back(type.str());
  // Code for another machine is compiled ahead of time, not loaded.
  bool load = t.canRun(*parts);
  return std::make_unique<Kernel>(std::move(*parts), load);
}

/// A cache lookup as the bindings return it: a loaded kernel, or None.
std::unique_ptr<Kernel>
loadedKernel(llvm::Expected<std::optional<runtime::CacheEntry>> entry) {
  if (!entry)
    throw CacheError(llvm::toString(entry.takeError()));
  if (!*entry)
    return nullptr;
  // Code for a target that cannot run here (ahead of time) is not loaded.
  auto t = target::getTarget((*entry)->target);
  bool load = t && (*t)->canRun(**entry);
  if (!t)
    llvm::consumeError(t.takeError());
  return std::make_unique<Kernel>(std::move(**entry), load);
}

/// tessel.DeviceAssertionError (an AssertionError): a device assertion failed
/// in a launch. Its attributes say where: kernel, file, line, message, pid
/// (a tuple, -1 where unknown), index (a tuple, or None where the target does
/// not know the element), thread (GPU targets, else None).
void bindDeviceAssertionError(py::module_ &m) {
  // Kept for the life of the process (the translator uses it).
  static PyObject *type = PyErr_NewExceptionWithDoc(
      "tessel.DeviceAssertionError",
      "A device assertion (tl.device_assert, or assert on a tensor in a "
      "kernel compiled with debug) failed while the kernel ran.",
      PyExc_AssertionError, nullptr);
  if (!type)
    throw py::error_already_set();
  m.attr("DeviceAssertionError") = py::handle(type);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const target::DeviceAssertError &e) {
      const target::DeviceAssertError::Info &info = e.info();
      py::object error = py::handle(type)(e.what());
      error.attr("kernel") = info.kernel;
      error.attr("file") = info.file;
      error.attr("line") = info.line;
      error.attr("message") = info.message;
      error.attr("pid") =
          py::make_tuple(info.pid[0], info.pid[1], info.pid[2]);
      error.attr("index") =
          info.indexKnown ? py::object(py::tuple(py::cast(info.index)))
                          : py::object(py::none());
      error.attr("thread") = info.thread.empty()
                                 ? py::object(py::none())
                                 : py::object(py::str(info.thread));
      PyErr_SetObject(type, error.ptr());
    }
  });
}

} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "Tessel compiler core: tile IR builder, targets, launcher";

  py::register_exception<CompileError>(m, "CompileError");
  py::register_exception<BackendError>(m, "BackendError");
  py::register_exception<CacheError>(m, "CacheError");
  bindDeviceAssertionError(m);

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
      .def("begin_callee", &B::beginCallee)
      .def("finish_callee", &B::finishCallee)
      .def("call", &B::call)
      .def("inside_element_region", &B::insideElementRegion)
      .def("module_str", &B::moduleString)
      .def("constant", &B::constant)
      .def("program_id", &B::programId)
      .def("num_programs", &B::numPrograms)
      .def("arange", &B::arange)
      .def("full", &B::full)
      .def("binary", &B::binary, py::arg("op"), py::arg("lhs"), py::arg("rhs"),
           py::arg("sanitize_overflow") = true)
      .def("unary", &B::unary)
      .def("where", &B::where)
      .def("promoted_type", &B::promotedType)
      .def("math", &B::math)
      .def("cast", &B::cast, py::arg("x"), py::arg("dtype"),
           py::arg("bitcast") = false, py::arg("rounding") = "")
      .def("broadcast_to", &B::broadcastTo)
      .def("expand_dims", &B::expandDims)
      .def("reshape", &B::reshape)
      .def("permute", &B::permute)
      .def("load", &B::load, py::arg("ptr"), py::arg("mask") = py::none(),
           py::arg("other") = py::none(), py::arg("cache_modifier") = "",
           py::arg("eviction_policy") = "", py::arg("volatile") = false)
      .def("store", &B::store, py::arg("ptr"), py::arg("value"),
           py::arg("mask") = py::none(), py::arg("cache_modifier") = "",
           py::arg("eviction_policy") = "")
      .def("atomic_rmw", &B::atomicRMW, py::arg("op"), py::arg("ptr"),
           py::arg("value"), py::arg("mask") = py::none(),
           py::arg("sem") = "", py::arg("scope") = "")
      .def("atomic_cas", &B::atomicCAS, py::arg("ptr"), py::arg("cmp"),
           py::arg("value"), py::arg("sem") = "", py::arg("scope") = "")
      .def("check_descriptor_alignment", &B::checkDescriptorAlignment,
           py::arg("base"), py::arg("strides"))
      .def("descriptor_load", &B::descriptorLoad, py::arg("base"),
           py::arg("shape"), py::arg("strides"), py::arg("offsets"),
           py::arg("block"), py::arg("nan_padding"),
           py::arg("tensor_map") = py::none())
      .def("descriptor_store", &B::descriptorStore, py::arg("base"),
           py::arg("shape"), py::arg("strides"), py::arg("offsets"),
           py::arg("value"), py::arg("block"),
           py::arg("tensor_map") = py::none())
      .def("hint", &B::hint, py::arg("x"), py::arg("kind"), py::arg("values"))
      .def("assume", &B::assume, py::arg("cond"))
      .def("begin_reduce", &B::beginReduce)
      .def("end_reduce", &B::endReduce)
      .def("fma", &B::fma, py::arg("x"), py::arg("y"), py::arg("z"))
      .def("debug_barrier", &B::debugBarrier)
      .def("gather", &B::gather, py::arg("src"), py::arg("indices"),
           py::arg("axis"))
      .def("begin_map_elementwise", &B::beginMapElementwise,
           py::arg("inputs"), py::arg("pack"))
      .def("end_map_elementwise", &B::endMapElementwise)
      .def("begin_scan", &B::beginScan, py::arg("inputs"), py::arg("axis"),
           py::arg("reverse"))
      .def("end_scan", &B::endScan)
      .def("dot", &B::dot, py::arg("a"), py::arg("b"),
           py::arg("acc") = py::none(), py::arg("out_dtype") = py::none(),
           py::arg("input_precision") = py::none(),
           py::arg("max_num_imprecise_acc") = py::none())
      .def("begin_for", &B::beginFor, py::arg("lb"), py::arg("ub"),
           py::arg("step"), py::arg("inits"),
           py::arg("num_stages") = py::none())
      .def("end_for", &B::endFor)
      .def("begin_while", &B::beginWhile)
      .def("while_condition", &B::whileCondition)
      .def("end_while", &B::endWhile)
      .def("begin_if", &B::beginIf)
      .def("begin_else", &B::beginElse)
      .def("end_if", &B::endIf)
      .def("set_debug", &B::setDebug)
      .def_property_readonly("debug", &B::getDebug)
      .def("print", &B::print, py::arg("prefix"), py::arg("args"),
           py::arg("hex") = false)
      .def("device_assert", &B::deviceAssert, py::arg("cond"),
           py::arg("message"), py::arg("mask") = py::none())
      .def("inline_asm", &B::inlineAsm, py::arg("asm"),
           py::arg("constraints"), py::arg("args"), py::arg("dtypes"),
           py::arg("is_pure"), py::arg("pack"))
      .def("extern_elementwise", &B::externElementwise, py::arg("lib_name"),
           py::arg("lib_path"), py::arg("symbol"), py::arg("args"),
           py::arg("arg_types"), py::arg("result_type"), py::arg("is_pure"));

  py::class_<Kernel>(m, "Kernel")
      .def_property_readonly("name", [](const Kernel &k) { return k.parts.name; })
      .def_property_readonly("signature",
                             [](const Kernel &k) { return k.parts.signature; })
      .def_property_readonly("writes",
                             [](const Kernel &k) { return k.parts.writes; })
      .def_property_readonly("target",
                             [](const Kernel &k) { return k.parts.target; })
      .def_property_readonly("options",
                             [](const Kernel &k) { return k.parts.options; })
      .def_property_readonly("asm", &Kernel::asmText)
      .def_property_readonly(
          "object", [](const Kernel &k) { return py::bytes(k.parts.object); });

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
             return loadedKernel(c.load(key));
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

  py::class_<runtime::RedisCache>(m, "RedisCache")
      .def(py::init([](const std::string &url, const std::string &key,
                       const std::string &keyFile, uint64_t maxBytes,
                       double timeout) {
             if (!key.empty() && !keyFile.empty())
               throw CacheError("redis kernel cache: give a key or a key "
                                "file, not both");
             if (maxBytes == 0 || !(timeout > 0))
               throw CacheError("redis kernel cache: max_bytes and timeout "
                                "must be positive");
             runtime::RedisCacheOptions options;
             options.secret = key;
             if (!keyFile.empty()) {
               auto secret = runtime::RedisCache::readSecretFile(keyFile);
               if (!secret)
                 throw CacheError(llvm::toString(secret.takeError()));
               options.secret = std::move(*secret);
             }
             options.maxEntryBytes = maxBytes;
             options.timeout =
                 std::chrono::milliseconds(int64_t(timeout * 1000.0));
             // Network requests run without the GIL (up to `timeout` each).
             llvm::Expected<std::unique_ptr<runtime::RedisCache>> cache =
                 nullptr;
             {
               py::gil_scoped_release release;
               cache = runtime::RedisCache::connect(url, std::move(options));
             }
             if (!cache)
               throw CacheError(llvm::toString(cache.takeError()));
             return std::move(*cache);
           }),
           py::arg("url"), py::kw_only(), py::arg("key") = "",
           py::arg("key_file") = "",
           py::arg("max_bytes") = runtime::RedisCacheOptions().maxEntryBytes,
           py::arg("timeout") = 5.0)
      .def("load",
           [](runtime::RedisCache &c,
              const std::string &key) -> std::unique_ptr<Kernel> {
             llvm::Expected<std::optional<runtime::CacheEntry>> entry =
                 std::nullopt;
             {
               py::gil_scoped_release release;
               entry = c.load(key);
             }
             return loadedKernel(std::move(entry));
           })
      .def("store",
           [](runtime::RedisCache &c, const std::string &key, const Kernel &k) {
             check<CacheError>(c.store(key, k.parts));
           },
           py::call_guard<py::gil_scoped_release>());

  m.def("cache_key",
        [](std::vector<std::string> parts) {
          parts.insert(parts.begin(), runtime::compilerBuildId());
          return runtime::hashKey(parts);
        },
        "SHA-256 of the compiler's build id and the parts");
  m.def("build_id", &runtime::compilerBuildId);
  m.def(
      "literal_type",
      [](std::variant<bool, int64_t, uint64_t, double> value) {
        return std::visit([](auto v) { return literalType(Operand(v)).str(); },
                          value);
      },
      "The type a Python literal takes inside a kernel (Triton's rule)");
  m.def(
      "scalar_types",
      [] {
        py::list types;
        for (const ScalarInfo &info : scalarTypes()) {
          py::dict d;
          d["name"] = info.name;
          d["triton_name"] = info.tritonName;
          d["bits"] = info.bits;
          d["numpy_typestr"] = info.numpyTypestr;
          d["c_type"] = info.cType;
          d["aliases"] = py::str(info.aliases).attr("split")();
          d["is_float"] = DType{info.kind, false}.isFloat();
          d["is_unsigned"] = DType{info.kind, false}.isUnsigned();
          types.append(d);
        }
        return types;
      },
      "The language's element types, from the C++ table every list is made "
      "of");
  m.def(
      "target_description",
      [](const std::string &name) { return getTarget(name).description(); },
      "Everything about a target that changes its code (for cache keys)");
  m.def(
      "parse_target",
      [](const std::string &name) { return getTarget(name).spec().str(); },
      "The canonical name of a target of this build; BackendError otherwise");
  m.def(
      "target_can_run",
      [](const std::string &name) { return getTarget(name).canRun(); },
      "Whether kernels compiled for the target run in this process");
  m.def(
      "compile_options",
      [](const py::dict &options, std::optional<std::string> targetName) {
        return toCompileOptions(options,
                                targetName ? &getTarget(*targetName) : nullptr)
            .str();
      },
      py::arg("options"), py::arg("target") = py::none(),
      "The options, validated, with every default (the target's, where "
      "given), canonically (for cache keys)");
  m.def("available_backends", [] {
    target::registerBuiltinBackends();
    return target::availableBackends();
  });

  m.def(
      "compile",
      [](TileBuilder &builder, const std::string &target,
         const py::dict &options) {
        return compileKernel(builder, target, options);
      },
      py::arg("builder"), py::arg("target"),
      py::arg("options") = py::dict());
  m.def("num_threads", [] { return runtime::ThreadPool::global().size(); });
  bindLauncher(m);
  bindGPUSim(m); // PTX simulator (GPUSim.cpp)
  bindCuda(m);   // the CUDA driver's device properties (Cuda.cpp)
}
