//===- Launcher.cpp - The launch path of a @jit function ------------------===//
#include "Launcher.h"

#include "Kernel.h"

#include <pybind11/stl.h>

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

namespace py = pybind11;
using namespace tessel;
using namespace tessel::python;

namespace {

/// A runtime argument after classification.
struct Arg {
  std::string type; ///< "*fp32", "i32", "fp32", "i1", ... (no mark)
  uint64_t bits = 0; ///< address or integer value
  double real = 0;   ///< float value
  bool mark16 = false;
  bool isConstOne = false;
  /// Pointers: the bytes [lo, hi) the array spans (known unless
  /// `extentKnown` is false), whether it is read-only, and whether it
  /// overlaps no other pointer argument's array (the ":noalias" mark).
  uint64_t lo = 0, hi = 0;
  bool extentKnown = false;
  bool readonly = false;
  bool noalias = false;
  /// A tensor whose extent is read only when it matters (two or more
  /// pointer arguments).
  PyObject *tensor = nullptr;
};

/// The bytes an array with this layout spans from `address`.
void setExtent(Arg &arg, uint64_t address, int ndim, const Py_ssize_t *shape,
               const Py_ssize_t *strides, Py_ssize_t itemsize) {
  int64_t low = 0, high = itemsize;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 0) {
      low = high = 0;
      break;
    }
    int64_t span = int64_t(strides[d]) * (shape[d] - 1);
    (span < 0 ? low : high) += span;
  }
  arg.lo = address + low;
  arg.hi = address + high;
  arg.extentKnown = true;
}

bool overlap(const Arg &a, const Arg &b) {
  if (a.lo == a.hi || b.lo == b.hi)
    return false;
  return a.lo < b.hi && b.lo < a.hi;
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
           py::object globalValues, std::vector<std::string> launchOptions)
      : name(std::move(name)), names(std::move(names)),
        isConstexpr(std::move(constexprs)),
        defaults(std::move(defaults)),
        specializeValue(std::move(specializeValue)),
        specializeAlignment(std::move(specializeAlignment)),
        cache(std::move(cache)), compile(std::move(compile)),
        slowArg(std::move(slowArg)), globalValues(std::move(globalValues)),
        launchOptions(std::move(launchOptions)) {
    for (size_t i = 0; i < this->names.size(); ++i)
      pyNames.push_back(py::str(this->names[i]));
  }

  py::object launch(py::handle grid, bool warmup, py::args args,
                    py::kwargs kwargs);

private:
  std::vector<PyObject *> bind(const py::args &args, const py::kwargs &kwargs,
                               py::dict &options);
  Arg classify(size_t index, PyObject *value);
  void specialize(size_t index, Arg &arg) const;
  void markNoalias(std::vector<Arg> &args);
  py::str typeTag(const std::string &tag);
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
  std::unordered_map<std::string, py::str> tags;
  /// Pointer type tags of tensor dtype objects (torch dtypes are singletons).
  std::unordered_map<PyObject *, std::string> dtypeTags;
  std::vector<py::object> dtypeObjects;
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

void Launcher::specialize(size_t index, Arg &arg) const {
  if (arg.type == "i1" || arg.type.rfind("fp", 0) == 0)
    return;
  bool isPointer = arg.type[0] == '*';
  if (specializeValue[index] && !isPointer && arg.bits == 1) {
    arg.isConstOne = true;
    return;
  }
  arg.mark16 = specializeAlignment[index] && arg.bits % 16 == 0;
}

Arg Launcher::classify(size_t index, PyObject *value) {
  Arg arg;
  if (PyBool_Check(value)) {
    arg.type = "i1";
    arg.bits = value == Py_True;
    return arg;
  }
  if (PyLong_CheckExact(value)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (!overflow) {
      arg.bits = uint64_t(v);
      arg.type = (v >= INT32_MIN && v <= INT32_MAX) ? "i32" : "i64";
      specialize(index, arg);
      return arg;
    }
  } else if (PyFloat_CheckExact(value)) {
    arg.type = "fp32";
    arg.real = PyFloat_AS_DOUBLE(value);
    return arg;
  } else if (PyObject_CheckBuffer(value) && !PyBytes_Check(value)) {
    // Arrays (numpy and anything else with the buffer protocol) with a
    // native-endian element type: the address and dtype without Python calls.
    Py_buffer view;
    if (PyObject_GetBuffer(value, &view, PyBUF_RECORDS_RO) == 0) {
      const char *elt = view.ndim > 0 ? bufferElementType(view.format, view.itemsize)
                                      : nullptr;
      uint64_t address = reinterpret_cast<uintptr_t>(view.buf);
      if (elt) {
        if (view.strides)
          setExtent(arg, address, view.ndim, view.shape, view.strides,
                    view.itemsize);
        else
          setExtent(arg, address, 1, &view.len, &view.itemsize, 1);
        arg.readonly = view.readonly;
      }
      PyBuffer_Release(&view);
      if (elt) {
        arg.type = std::string("*") + elt;
        arg.bits = address;
        specialize(index, arg);
        return arg;
      }
    } else {
      PyErr_Clear();
    }
  }
  // Tensors in host memory with data_ptr() and a dtype object (torch): the
  // dtype's type tag is learned from the driver once.
  if (PyObject_HasAttrString(value, "data_ptr")) {
    PyObject *isCpu = PyObject_GetAttrString(value, "is_cpu");
    PyObject *dtype = isCpu == Py_True ? PyObject_GetAttrString(value, "dtype") : nullptr;
    Py_XDECREF(isCpu);
    if (!dtype)
      PyErr_Clear();
    auto known = dtype ? dtypeTags.find(dtype) : dtypeTags.end();
    if (known != dtypeTags.end()) {
      Py_DECREF(dtype);
      py::object ptr = py::reinterpret_borrow<py::object>(value).attr("data_ptr")();
      arg.type = known->second;
      arg.bits = ptr.cast<uint64_t>();
      arg.tensor = value;
      specialize(index, arg);
      return arg;
    }
    Py_XDECREF(dtype);
  }
  // Everything else (big ints, numpy scalars, device arrays, dtype-only
  // warmup arrays, a tensor dtype seen for the first time): the Python driver
  // decides, and raises the errors users see.
  py::tuple result = slowArg(pyNames[index], py::handle(value));
  arg.type = result[0].cast<std::string>();
  if (arg.type[0] == '*' && PyObject_HasAttrString(value, "data_ptr") &&
      py::getattr(py::handle(value), "is_cpu", py::bool_(false)).ptr() == Py_True) {
    py::object dtype = py::handle(value).attr("dtype");
    dtypeTags.emplace(dtype.ptr(), arg.type);
    dtypeObjects.push_back(std::move(dtype)); // keeps the key alive
  }
  py::handle v = result[1];
  if (arg.type[0] == '*' && PyObject_HasAttrString(value, "data_ptr") &&
      PyObject_HasAttrString(value, "stride"))
    arg.tensor = value;
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
  specialize(index, arg);
  return arg;
}

/// Marks the pointer arguments whose arrays overlap no other pointer
/// argument's: the compiler may then assume their loads and stores are
/// independent of the others'. Anything whose extent is not known (an array
/// passed by address only) may overlap everything.
void Launcher::markNoalias(std::vector<Arg> &args) {
  std::vector<Arg *> pointers;
  for (Arg &a : args)
    if (a.type[0] == '*')
      pointers.push_back(&a);
  if (pointers.size() == 1) {
    pointers[0]->noalias = true;
    return;
  }
  for (Arg *a : pointers) {
    if (a->extentKnown || !a->tensor)
      continue;
    // A tensor (torch): its layout through Python, only now that it matters.
    py::handle t(a->tensor);
    auto shape = t.attr("shape").cast<std::vector<Py_ssize_t>>();
    auto strides = t.attr("stride")().cast<std::vector<Py_ssize_t>>();
    Py_ssize_t itemsize = pointeeBytes(a->type);
    for (Py_ssize_t &st : strides)
      st *= itemsize;
    if (shape.size() == strides.size())
      setExtent(*a, a->bits, int(shape.size()), shape.data(), strides.data(),
                itemsize);
  }
  for (Arg *a : pointers) {
    // A null pointer (a dtype-only array given to warmup) stands for an
    // array of its own.
    if (!a->extentKnown && a->bits != 0)
      continue;
    a->noalias = llvm::all_of(pointers, [&](Arg *b) {
      return a == b || ((b->extentKnown || b->bits == 0) && !overlap(*a, *b));
    });
  }
}

py::str Launcher::typeTag(const std::string &tag) {
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
  std::array<int64_t, 3> dims{1, 1, 1};
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
    return index.cast<int64_t>();
  };
  if (PyTuple_Check(g.ptr()) || PyList_Check(g.ptr())) {
    py::sequence seq = g;
    if (seq.size() < 1 || seq.size() > 3)
      throw py::value_error("grid must have 1 to 3 dimensions, got " +
                            std::string(py::repr(g)));
    for (size_t i = 0; i < seq.size(); ++i)
      dims[i] = dim(seq[i]);
  } else {
    dims[0] = dim(g);
  }
  for (int64_t d : dims) {
    if (d < 0)
      throw py::value_error("grid dimensions must be >= 0, got " +
                            std::string(py::repr(g)));
    if (d > INT32_MAX)
      throw py::value_error("grid dimensions must fit in int32, got " +
                            std::string(py::repr(g)));
  }
  return dims;
}

py::object Launcher::launch(py::handle grid, bool warmup, py::args args,
                            py::kwargs kwargs) {
  py::dict options; // launch options given (num_warps=...): compiled in
  std::vector<PyObject *> values = bind(args, kwargs, options);
  size_t n = names.size();
  std::vector<Arg> runtimeArgs;
  runtimeArgs.reserve(n);
  // The key: one entry per parameter (a type tag, or the constexpr's type
  // and value, so that 1, 1.0 and True differ), then the constexpr globals.
  std::vector<size_t> runtimeParams; ///< the parameter of each runtime arg
  py::tuple key(n + 2);
  for (size_t i = 0; i < n; ++i) {
    PyObject *value = values[i];
    if (isConstexpr[i] || value == Py_None) {
      key[i] = py::make_tuple(py::handle(reinterpret_cast<PyObject *>(Py_TYPE(value))),
                              py::handle(value));
      continue;
    }
    Arg arg = classify(i, value);
    if (arg.isConstOne) {
      key[i] = typeTag("=1");
      continue;
    }
    runtimeArgs.push_back(std::move(arg));
    runtimeParams.push_back(i);
  }
  markNoalias(runtimeArgs);
  for (size_t r = 0; r < runtimeArgs.size(); ++r) {
    const Arg &a = runtimeArgs[r];
    key[runtimeParams[r]] = typeTag(a.type + (a.mark16 ? ":16" : "") +
                                    (a.noalias ? ":noalias" : ""));
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
      if (isConstexpr[i] || values[i] == Py_None) {
        constexprs[pyNames[i]] = py::handle(values[i]);
      } else if (py::str(key[i]).cast<std::string>() == "=1") {
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
  if (kernel.signature.size() != runtimeArgs.size())
    throw py::value_error(kernel.parts.name + " takes " +
                          std::to_string(kernel.signature.size()) +
                          " runtime arguments, got " +
                          std::to_string(runtimeArgs.size()));
  for (unsigned w : kernel.parts.writes)
    if (w < runtimeArgs.size() && runtimeArgs[w].readonly)
      throw py::value_error(
          name + ": argument '" + names[runtimeParams[w]] +
          "' is a read-only array, but the kernel may store to it (pass a "
          "writeable array, e.g. a copy)");
  std::vector<uint64_t> slots(runtimeArgs.size());
  std::vector<void *> argv(runtimeArgs.size());
  for (size_t i = 0; i < runtimeArgs.size(); ++i) {
    const DType &t = kernel.signature[i];
    const Arg &a = runtimeArgs[i];
    void *slot = &slots[i];
    argv[i] = slot;
    if (t.kind == ScalarKind::F32 && !t.isPointer)
      *static_cast<float *>(slot) = float(a.real);
    else if (t.kind == ScalarKind::F64 && !t.isPointer)
      *static_cast<double *>(slot) = a.real;
    else if (t.isBool())
      *static_cast<uint8_t *>(slot) = a.bits != 0;
    else
      // Little-endian: the low bytes of the 64-bit slot hold narrower ints.
      slots[i] = a.bits;
  }
  kernel.launch(dims[0], dims[1], dims[2], argv.data());
  return kernelObject;
}

} // namespace

void tessel::python::bindLauncher(py::module_ &m) {
  py::class_<Launcher>(m, "Launcher")
      .def(py::init<std::string, std::vector<std::string>, std::vector<bool>, py::dict,
                    std::vector<bool>, std::vector<bool>, py::dict,
                    py::function, py::function, py::object,
                    std::vector<std::string>>(),
           py::arg("name"), py::arg("names"), py::arg("constexprs"), py::arg("defaults"),
           py::arg("specialize_value"), py::arg("specialize_alignment"),
           py::arg("cache"), py::arg("compile"), py::arg("slow_arg"),
           py::arg("global_values"), py::arg("launch_options"))
      // launch(grid, warmup, *args, **kwargs)
      .def("launch", &Launcher::launch);
}
