//===- Launcher.cpp - The launch path of a @jit function ------------------===//
#include "Launcher.h"

#include "Kernel.h"

#include "tessel/Runtime/LaunchArgs.h"

#include <pybind11/stl.h>

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

namespace py = pybind11;
using namespace tessel;
using namespace tessel::python;
using tessel::runtime::LaunchArg;

namespace {

/// The bytes the array at `arg.bits` spans, from a layout in Py_ssize_t.
void setExtent(LaunchArg &arg, int ndim, const Py_ssize_t *shape,
               const Py_ssize_t *strides, Py_ssize_t itemSize) {
  llvm::SmallVector<int64_t, 4> shape64(shape, shape + ndim),
      strides64(strides, strides + ndim);
  runtime::setExtent(arg, shape64, strides64, itemSize);
}

/// Bytes per element of a pointer type string ("*fp32" -> 4, "*i1" -> 1).
Py_ssize_t pointeeBytes(const std::string &type) {
  auto dtype = DType::parse(llvm::StringRef(type).drop_front());
  return dtype ? std::max(1u, dtype->bitwidth() / 8) : 1;
}

/// Element types of the buffer protocol's struct format characters.
const char *bufferElementType(const char *format, Py_ssize_t itemsize) {
  if (!format)
    return "u8";
  if (*format == '@' || *format == '=' || *format == '<')
    ++format;
  if (format[0] == 0 || format[1] != 0)
    return nullptr;
  switch (format[0]) {
  case 'f': return "fp32";
  case 'd': return "fp64";
  case 'e': return "fp16";
  case '?': return "i1";
  case 'b': return "i8";
  case 'B': return "u8";
  case 'h': return "i16";
  case 'H': return "u16";
  case 'i': return itemsize == 4 ? "i32" : nullptr;
  case 'I': return itemsize == 4 ? "u32" : nullptr;
  case 'l': case 'q': return itemsize == 8 ? "i64" : nullptr;
  case 'L': case 'Q': return itemsize == 8 ? "u64" : nullptr;
  default: return nullptr;
  }
}

class Launcher {
public:
  Launcher(std::string name, std::vector<std::string> names,
           std::vector<bool> constexprs,
           py::dict defaults, std::vector<bool> specializeValue,
           std::vector<bool> specializeAlignment, py::dict cache,
           py::function compile, py::function slowArg,
           py::object globalValues, std::vector<std::string> launchOptions,
           bool deviceMemory, py::object currentStream, py::object splitTuple,
           py::object compileTimeTypes)
      : name(std::move(name)), names(std::move(names)),
        isConstexpr(std::move(constexprs)),
        defaults(std::move(defaults)),
        specializeValue(std::move(specializeValue)),
        specializeAlignment(std::move(specializeAlignment)),
        cache(std::move(cache)), compile(std::move(compile)),
        slowArg(std::move(slowArg)), globalValues(std::move(globalValues)),
        launchOptions(std::move(launchOptions)), deviceMemory(deviceMemory),
        currentStream(std::move(currentStream)),
        splitTuple(std::move(splitTuple)),
        compileTimeTypes(std::move(compileTimeTypes)) {
    for (size_t i = 0; i < this->names.size(); ++i)
      pyNames.push_back(py::str(this->names[i]));
  }

  py::object launch(py::handle grid, bool warmup, py::args args,
                    py::kwargs kwargs);

private:
  std::vector<PyObject *> bind(const py::args &args, const py::kwargs &kwargs,
                               py::dict &options);
  /// Reads runtime argument `index` and specializes it. `tensor` is set to a
  /// tensor whose extent can be read later through Python.
  /// `leafName` names a leaf of a tuple argument in errors.
  LaunchArg classify(size_t index, PyObject *value, PyObject *&tensor,
                     PyObject *leafName = nullptr);
  /// The value, type and (for arrays) extent of one argument.
  LaunchArg readArg(PyObject *value, size_t index, PyObject *&tensor,
                    PyObject *leafName = nullptr);
  void specialize(size_t index, LaunchArg &arg) const {
    runtime::specialize(arg, specializeValue[index], specializeAlignment[index]);
  }
  /// Whether `value` is a host-side tensor descriptor (it has `base`,
  /// `shape`, `strides`, `block_shape`), decided once per type.
  bool isTensorDescriptor(PyObject *value);
  /// Whether `value` is None or of one of compileTimeTypes.
  bool isCompileTime(PyObject *value);
  /// Reads a tensor descriptor argument; its base's tensor (torch) goes to
  /// `tensor`, as readArg's.
  runtime::TensorDescriptorArg readDescriptor(size_t index, PyObject *value,
                                              PyObject *&tensor);
  py::str keyTag(const std::string &tag);
  std::array<int64_t, 3> gridDims(py::handle grid,
                                  const std::vector<PyObject *> &values);

  std::string name; ///< the function's, for error messages
  std::vector<std::string> names;
  std::vector<py::str> pyNames;
  std::vector<bool> isConstexpr;
  py::dict defaults;
  std::vector<bool> specializeValue, specializeAlignment;
  py::dict cache;
  py::function compile, slowArg;
  py::object globalValues; ///< None when the kernel reads no constexpr global
  /// Keywords accepted and ignored (GPU launch options).
  std::vector<std::string> launchOptions;
  /// Whether the target's arrays live in device memory (cuda): the tensors
  /// read without calling Python are then those with is_cuda, not is_cpu.
  bool deviceMemory;
  /// () -> the stream to launch on (an int), for device targets; else None.
  py::object currentStream;
  /// (name, tuple) -> (template, [(leaf name, value)...]): a tuple argument
  /// split into its compile-time and run-time leaves (runtime/tuple_args.py).
  py::object splitTuple;
  /// Types whose values are compile-time arguments wherever they are passed
  /// (@jit functions, as in Triton), and which of the types seen are.
  py::object compileTimeTypes;
  std::unordered_map<PyObject *, bool> compileTimeByType;
  std::unordered_map<std::string, py::str> tags;
  /// Pointer type tags of tensor dtype objects (torch dtypes are singletons).
  std::unordered_map<PyObject *, std::string> dtypeTags;
  std::vector<py::object> dtypeObjects;
  /// Types seen, whether they are tensor descriptors (kept alive).
  std::unordered_map<PyObject *, bool> descriptorTypes;
  std::vector<py::object> typeObjects;
};

std::vector<PyObject *> Launcher::bind(const py::args &args,
                                       const py::kwargs &kwargs,
                                       py::dict &options) {
  size_t n = names.size();
  if (args.size() > n)
    throw py::type_error(name + "() takes " + std::to_string(n) + " arguments but " +
                         std::to_string(args.size()) + " were given");
  std::vector<PyObject *> values(n, nullptr);
  for (size_t i = 0; i < args.size(); ++i)
    values[i] = args[i].ptr();
  for (auto [key, value] : kwargs) {
    // Compared as Python strings: no conversion on the launch path.
    size_t i = 0;
    while (i < n && PyUnicode_Compare(key.ptr(), pyNames[i].ptr()) != 0)
      ++i;
    if (i == n) {
      std::string name = py::str(key);
      if (llvm::is_contained(launchOptions, name)) {
        options[key] = value;
        continue;
      }
      throw py::type_error(this->name + "() got an unexpected keyword argument '" +
                           name + "'");
    }
    if (values[i])
      throw py::type_error(this->name + "() got multiple values for argument '" +
                           names[i] + "'");
    values[i] = value.ptr();
  }
  for (size_t i = 0; i < n; ++i) {
    if (values[i])
      continue;
    PyObject *def = PyDict_GetItem(defaults.ptr(), pyNames[i].ptr());
    if (!def)
      throw py::type_error(name + "() missing required argument '" + names[i] +
                           "'");
    values[i] = def;
  }
  return values;
}

LaunchArg Launcher::classify(size_t index, PyObject *value,
                            PyObject *&tensor, PyObject *leafName) {
  LaunchArg arg = readArg(value, index, tensor, leafName);
  arg.name = names[index];
  specialize(index, arg);
  return arg;
}

LaunchArg Launcher::readArg(PyObject *value, size_t index, PyObject *&tensor,
                            PyObject *leafName) {
  if (PyBool_Check(value))
    return LaunchArg::boolean(value == Py_True);
  if (PyLong_CheckExact(value)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (!overflow)
      return LaunchArg::integer(v);
  } else if (PyFloat_CheckExact(value)) {
    return LaunchArg::floating(PyFloat_AS_DOUBLE(value));
  } else if (PyObject_CheckBuffer(value) && !PyBytes_Check(value)) {
    // Arrays (numpy and anything else with the buffer protocol) with a
    // native-endian element type: the address and dtype without Python calls.
    Py_buffer view;
    if (PyObject_GetBuffer(value, &view, PyBUF_RECORDS_RO) == 0) {
      const char *elt = view.ndim > 0 ? bufferElementType(view.format, view.itemsize)
                                      : nullptr;
      LaunchArg arg;
      if (elt) {
        arg = LaunchArg::pointer(elt, reinterpret_cast<uintptr_t>(view.buf));
        if (view.strides)
          setExtent(arg, view.ndim, view.shape, view.strides, view.itemsize);
        else // contiguous: view.len bytes
          runtime::setExtent(arg, {int64_t(view.len)}, {1}, 1);
        arg.readonly = view.readonly;
      }
      PyBuffer_Release(&view);
      if (elt)
        return arg;
    } else {
      PyErr_Clear();
    }
  }
  // Tensors in the target's memory with data_ptr() and a dtype object
  // (torch): the dtype's type tag is learned from the driver once.
  const char *inTargetMemory = deviceMemory ? "is_cuda" : "is_cpu";
  if (PyObject_HasAttrString(value, "data_ptr")) {
    PyObject *isCpu = PyObject_GetAttrString(value, inTargetMemory);
    PyObject *dtype = isCpu == Py_True ? PyObject_GetAttrString(value, "dtype") : nullptr;
    Py_XDECREF(isCpu);
    if (!dtype)
      PyErr_Clear();
    auto known = dtype ? dtypeTags.find(dtype) : dtypeTags.end();
    if (known != dtypeTags.end()) {
      Py_DECREF(dtype);
      py::object ptr = py::reinterpret_borrow<py::object>(value).attr("data_ptr")();
      LaunchArg arg;
      arg.type = known->second;
      arg.bits = ptr.cast<uint64_t>();
      tensor = value;
      return arg;
    }
    Py_XDECREF(dtype);
  }
  // Everything else (big ints, numpy scalars, device arrays, dtype-only
  // warmup arrays, a tensor dtype seen for the first time): the Python driver
  // decides, and raises the errors users see.
  py::tuple result = slowArg(leafName ? py::handle(leafName) : py::handle(pyNames[index]),
                             py::handle(value));
  LaunchArg arg;
  arg.type = result[0].cast<std::string>();
  if (arg.type[0] == '*' && PyObject_HasAttrString(value, "data_ptr") &&
      py::getattr(py::handle(value), inTargetMemory, py::bool_(false)).ptr() == Py_True) {
    py::object dtype = py::handle(value).attr("dtype");
    dtypeTags.emplace(dtype.ptr(), arg.type);
    dtypeObjects.push_back(std::move(dtype)); // keeps the key alive
  }
  py::handle v = result[1];
  if (arg.type[0] == '*' && PyObject_HasAttrString(value, "data_ptr") &&
      PyObject_HasAttrString(value, "stride"))
    tensor = value;
  if (arg.type[0] == '*' || arg.type[0] == 'i' || arg.type[0] == 'u') {
    if (PyBool_Check(v.ptr()))
      arg.bits = v.ptr() == Py_True;
    else if (arg.type[0] == 'u')
      arg.bits = v.cast<uint64_t>();
    else
      arg.bits = uint64_t(v.cast<int64_t>());
  } else {
    arg.real = v.cast<double>();
  }
  return arg;
}

bool Launcher::isCompileTime(PyObject *value) {
  if (value == Py_None)
    return true;
  if (PyLong_CheckExact(value) || PyFloat_CheckExact(value) || PyBool_Check(value))
    return false;
  PyObject *type = reinterpret_cast<PyObject *>(Py_TYPE(value));
  auto known = compileTimeByType.find(type);
  if (known != compileTimeByType.end())
    return known->second;
  int is = PyObject_IsSubclass(type, compileTimeTypes.ptr());
  if (is < 0)
    throw py::error_already_set();
  typeObjects.push_back(py::reinterpret_borrow<py::object>(type));
  return compileTimeByType.emplace(type, is == 1).first->second;
}

bool Launcher::isTensorDescriptor(PyObject *value) {
  if (PyLong_CheckExact(value) || PyFloat_CheckExact(value) || PyBool_Check(value))
    return false;
  PyObject *type = reinterpret_cast<PyObject *>(Py_TYPE(value));
  auto known = descriptorTypes.find(type);
  if (known != descriptorTypes.end())
    return known->second;
  bool is = true;
  for (const char *field : {"base", "shape", "strides", "block_shape"})
    is = is && PyObject_HasAttrString(type, field) != 0;
  // Dataclass fields without defaults are instance attributes only.
  if (!is && PyObject_HasAttrString(type, "__dataclass_fields__")) {
    py::object fields = py::handle(type).attr("__dataclass_fields__");
    is = fields.contains("base") && fields.contains("shape") &&
         fields.contains("strides") && fields.contains("block_shape");
  }
  typeObjects.push_back(py::reinterpret_borrow<py::object>(type));
  descriptorTypes.emplace(type, is);
  return is;
}

runtime::TensorDescriptorArg
Launcher::readDescriptor(size_t index, PyObject *value, PyObject *&tensor) {
  py::handle d(value);
  runtime::TensorDescriptorArg desc;
  desc.base = readArg(d.attr("base").ptr(), index, tensor);
  desc.base.name = names[index];
  if (!desc.base.isPointer())
    throw py::type_error(name + ": argument '" + names[index] +
                         "' is a tensor descriptor whose base is not an array (" +
                         std::string(py::repr(d.attr("base"))) + ")");
  desc.elementBytes = unsigned(pointeeBytes(desc.base.type));
  auto ints = [&](const char *field) {
    llvm::SmallVector<int64_t, 5> out;
    for (py::handle v : py::iterable(d.attr(field))) {
      py::object integer = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
      if (!integer) {
        PyErr_Clear();
        throw py::type_error(name + ": argument '" + names[index] +
                             "' is a tensor descriptor whose " + field +
                             " holds a non-integer, " + std::string(py::repr(v)));
      }
      out.push_back(integer.cast<int64_t>());
    }
    return out;
  };
  desc.shape = ints("shape");
  desc.strides = ints("strides");
  desc.block = ints("block_shape");
  py::object padding = py::getattr(d, "padding", py::str("zero"));
  std::string mode = py::str(padding);
  if (mode != "zero" && mode != "nan")
    throw py::value_error(name + ": argument '" + names[index] +
                          "': a tensor descriptor's padding is 'zero' or 'nan', got " +
                          std::string(py::repr(padding)));
  desc.nanPadding = mode == "nan";
  return desc;
}

/// A tensor's (torch) extent, read through Python only when it matters.
void readTensorExtent(PyObject *tensor, LaunchArg &arg) {
  py::handle t(tensor);
  auto shape = t.attr("shape").cast<std::vector<int64_t>>();
  auto strides = t.attr("stride")().cast<std::vector<int64_t>>();
  int64_t itemSize = pointeeBytes(arg.type);
  for (int64_t &stride : strides)
    stride *= itemSize;
  if (shape.size() == strides.size())
    runtime::setExtent(arg, shape, strides, itemSize);
}

py::str Launcher::keyTag(const std::string &tag) {
  auto it = tags.find(tag);
  if (it != tags.end())
    return it->second;
  return tags.emplace(tag, py::str(tag)).first->second;
}

std::array<int64_t, 3> Launcher::gridDims(py::handle grid,
                                          const std::vector<PyObject *> &values) {
  py::object g = py::reinterpret_borrow<py::object>(grid);
  if (PyCallable_Check(grid.ptr())) {
    py::dict meta;
    for (size_t i = 0; i < names.size(); ++i)
      meta[pyNames[i]] = py::handle(values[i]);
    g = g(meta);
  }
  auto describe = [&] { return std::string(py::repr(g)); };
  auto dim = [&](py::handle d) -> int64_t {
    // Python ints, numpy ints (anything with __index__) and constexpr
    // wrappers of those; not floats or strings, which would be truncated or
    // parsed silently.
    if (!PyLong_Check(d.ptr()) && !PyIndex_Check(d.ptr()) &&
        py::hasattr(d, "value"))
      d = d.attr("value");
    if (!PyLong_Check(d.ptr()) && !PyIndex_Check(d.ptr()))
      throw py::type_error(name + ": grid dimensions must be integers, got " +
                           std::string(py::repr(d)) + " (" +
                           Py_TYPE(d.ptr())->tp_name + ") in grid " +
                           std::string(py::repr(g)));
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(d.ptr()));
    if (!index)
      throw py::error_already_set();
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow) // past int64: out of range like any dimension past int32
      throw py::value_error(name + ": grid dimensions must fit in int32, got " +
                            std::string(py::repr(g)));
    return value;
  };
  llvm::SmallVector<int64_t, 3> dims;
  if (PyTuple_Check(g.ptr()) || PyList_Check(g.ptr())) {
    py::sequence seq = g;
    check<py::value_error>(runtime::checkGridRank(seq.size(), describe));
    for (size_t i = 0; i < seq.size(); ++i)
      dims.push_back(dim(seq[i]));
  } else {
    dims.push_back(dim(g));
  }
  auto checked = runtime::gridDims(dims, describe);
  check<py::value_error>(checked.takeError());
  return *checked;
}

py::object Launcher::launch(py::handle grid, bool warmup, py::args args,
                            py::kwargs kwargs) {
  py::dict options; // launch options given (num_warps=...): compiled in
  std::vector<PyObject *> values = bind(args, kwargs, options);
  size_t n = names.size();
  std::vector<LaunchArg> runtimeArgs;
  llvm::SmallVector<PyObject *, 8> tensors; ///< of each runtime arg, or null
  runtimeArgs.reserve(n);
  // The key: one entry per parameter (a type tag, or the constexpr's type
  // and value, so that 1, 1.0 and True differ), then the constexpr globals.
  std::vector<size_t> runtimeParams; ///< the parameter of each runtime arg
  /// Tensor descriptor parameters: the descriptor, its first runtime arg.
  llvm::SmallVector<std::pair<runtime::TensorDescriptorArg, size_t>, 2> descriptors;
  /// Tuple parameters: the parameter, its template and, per run-time leaf,
  /// its runtime arg (-1 where the leaf was specialized to 1).
  struct TupleParam {
    size_t param;
    py::tuple split;
    llvm::SmallVector<int, 4> leaves;
  };
  llvm::SmallVector<TupleParam, 1> tuples;
  py::tuple key(n + 2);
  for (size_t i = 0; i < n; ++i) {
    PyObject *value = values[i];
    if (isConstexpr[i] || isCompileTime(value)) {
      key[i] = py::make_tuple(py::handle(reinterpret_cast<PyObject *>(Py_TYPE(value))),
                              py::handle(value));
      continue;
    }
    PyObject *tensor = nullptr;
    if (PyTuple_Check(value)) {
      TupleParam tuple{i, splitTuple(pyNames[i], py::handle(value)), {}};
      for (py::handle leaf : py::list(tuple.split[1])) {
        // (name, value) pairs, alive as long as tuple.split.
        PyObject *leafPyName = PyTuple_GET_ITEM(leaf.ptr(), 0);
        std::string leafName = py::str(leafPyName);
        PyObject *leafValue = PyTuple_GET_ITEM(leaf.ptr(), 1);
        if (isTensorDescriptor(leafValue))
          throw py::type_error(name + ": argument '" + leafName +
                               "' is a tensor descriptor inside a tuple: pass "
                               "tensor descriptors as parameters of their own");
        PyObject *leafTensor = nullptr;
        LaunchArg arg = classify(i, leafValue, leafTensor, leafPyName);
        arg.name = leafName;
        if (arg.isConstOne) {
          tuple.leaves.push_back(-1);
          continue;
        }
        tuple.leaves.push_back(int(runtimeArgs.size()));
        runtimeArgs.push_back(std::move(arg));
        tensors.push_back(leafTensor);
        runtimeParams.push_back(i);
      }
      tuples.push_back(std::move(tuple));
      continue;
    }
    if (isTensorDescriptor(value)) {
      // Passed as its base, shape and strides (runtime::expandDescriptor).
      runtime::TensorDescriptorArg desc = readDescriptor(i, value, tensor);
      if (tensor && !desc.base.extentKnown) // checked against the descriptor
        readTensorExtent(tensor, desc.base);
      size_t first = runtimeArgs.size();
      check<py::value_error>(runtime::expandDescriptor(
          desc, specializeAlignment[i], runtimeArgs));
      for (size_t r = first; r < runtimeArgs.size(); ++r) {
        tensors.push_back(r == first ? tensor : nullptr);
        runtimeParams.push_back(i);
      }
      descriptors.emplace_back(std::move(desc), first);
      continue;
    }
    LaunchArg arg = classify(i, value, tensor);
    if (arg.isConstOne) {
      key[i] = keyTag(runtime::typeTag(arg));
      continue;
    }
    runtimeArgs.push_back(std::move(arg));
    tensors.push_back(tensor);
    runtimeParams.push_back(i);
  }
  runtime::markNoalias(runtimeArgs, [&](size_t r, LaunchArg &arg) {
    if (tensors[r])
      readTensorExtent(tensors[r], arg);
  });
  for (size_t r = 0; r < runtimeArgs.size(); ++r)
    key[runtimeParams[r]] = keyTag(runtime::typeTag(runtimeArgs[r]));
  for (auto &[desc, first] : descriptors) {
    size_t parts = 1 + desc.shape.size() + desc.strides.size() - 1;
    key[runtimeParams[first]] = keyTag(runtime::descriptorTag(
        desc, llvm::ArrayRef(runtimeArgs).slice(first, parts)));
  }
  for (TupleParam &tuple : tuples) {
    py::tuple tags(tuple.leaves.size());
    for (size_t l = 0; l < tuple.leaves.size(); ++l)
      tags[l] = tuple.leaves[l] < 0
                    ? keyTag(runtime::kConstOneTag.str())
                    : keyTag(runtime::typeTag(runtimeArgs[tuple.leaves[l]]));
    key[tuple.param] = py::make_tuple(tuple.split[0], tags);
  }
  key[n] = globalValues.is_none() ? py::object(py::none()) : globalValues();
  // The launch options given, in a fixed order (they change the code).
  if (options.empty()) {
    key[n + 1] = py::none();
  } else {
    py::list given;
    for (const std::string &option : launchOptions)
      if (options.contains(option.c_str()))
        given.append(py::make_tuple(option, options[option.c_str()]));
    key[n + 1] = py::tuple(given);
  }

  PyObject *found = PyDict_GetItem(cache.ptr(), key.ptr());
  py::object kernelObject;
  if (found) {
    kernelObject = py::reinterpret_borrow<py::object>(found);
  } else {
    py::list argTypes;
    py::dict constexprs;
    for (size_t i = 0; i < n; ++i) {
      if (isConstexpr[i] || isCompileTime(values[i])) {
        constexprs[pyNames[i]] = py::handle(values[i]);
      } else if (PyUnicode_Check(key[i].ptr()) &&
                 py::str(key[i]).cast<std::string>() == runtime::kConstOneTag) {
        constexprs[pyNames[i]] = py::int_(1);
      } else {
        argTypes.append(key[i]);
      }
    }
    kernelObject = compile(argTypes, constexprs, options);
    PyDict_SetItem(cache.ptr(), key.ptr(), kernelObject.ptr());
  }
  if (warmup)
    return kernelObject;

  std::array<int64_t, 3> dims = gridDims(grid, values);
  const Kernel &kernel = kernelObject.cast<const Kernel &>();
  std::vector<uint64_t> slots(runtimeArgs.size());
  check<py::value_error>(runtime::packArgs(runtimeArgs, kernel.parts.signature,
                                           kernel.parts.name, slots));
  check<py::value_error>(
      runtime::checkWritable(runtimeArgs, kernel.parts.writes, name));
  check<py::value_error>(
      runtime::checkLaunchChecks(runtimeArgs, kernel.parts.checks, name));
  std::vector<void *> argv(runtimeArgs.size());
  for (size_t i = 0; i < runtimeArgs.size(); ++i)
    argv[i] = &slots[i];
  if (kernel.loaded && kernel.loaded->needsExtents())
    for (size_t r = 0; r < runtimeArgs.size(); ++r)
      if (runtimeArgs[r].isPointer() && !runtimeArgs[r].extentKnown && tensors[r])
        readTensorExtent(tensors[r], runtimeArgs[r]);
  void *stream = nullptr;
  if (!currentStream.is_none())
    stream = reinterpret_cast<void *>(currentStream().cast<uintptr_t>());
  kernel.launch(dims[0], dims[1], dims[2], argv.data(), runtimeArgs, stream);
  return kernelObject;
}

} // namespace

void tessel::python::bindLauncher(py::module_ &m) {
  py::class_<Launcher>(m, "Launcher")
      .def(py::init<std::string, std::vector<std::string>, std::vector<bool>, py::dict,
                    std::vector<bool>, std::vector<bool>, py::dict,
                    py::function, py::function, py::object,
                    std::vector<std::string>, bool, py::object, py::object,
                    py::object>(),
           py::arg("name"), py::arg("names"), py::arg("constexprs"), py::arg("defaults"),
           py::arg("specialize_value"), py::arg("specialize_alignment"),
           py::arg("cache"), py::arg("compile"), py::arg("slow_arg"),
           py::arg("global_values"), py::arg("launch_options"),
           py::arg("device_memory"), py::arg("current_stream"),
           py::arg("split_tuple"), py::arg("compile_time_types"))
      // launch(grid, warmup, *args, **kwargs)
      .def("launch", &Launcher::launch);
}
