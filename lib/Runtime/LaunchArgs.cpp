//===- LaunchArgs.cpp - The runtime arguments of one launch ---------------===//
#include "tessel/Runtime/LaunchArgs.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstring>

using namespace tessel::runtime;

namespace {
llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
} // namespace

LaunchArg LaunchArg::boolean(bool value) {
  LaunchArg arg;
  arg.type = "i1";
  arg.bits = value;
  return arg;
}

LaunchArg LaunchArg::integer(int64_t value) {
  LaunchArg arg;
  arg.type = value >= INT32_MIN && value <= INT32_MAX ? "i32" : "i64";
  arg.bits = uint64_t(value);
  return arg;
}

LaunchArg LaunchArg::floating(double value) {
  LaunchArg arg;
  arg.type = "fp32";
  arg.real = value;
  return arg;
}

LaunchArg LaunchArg::pointer(llvm::StringRef elementType, uint64_t address) {
  LaunchArg arg;
  arg.type.reserve(elementType.size() + 1);
  arg.type += '*';
  arg.type += elementType;
  arg.bits = address;
  return arg;
}

void tessel::runtime::specialize(LaunchArg &arg, bool byValue,
                                 bool byAlignment) {
  llvm::StringRef type = arg.type;
  bool isInt = type != "i1" && (type[0] == 'i' || type[0] == 'u');
  if (!isInt && !arg.isPointer())
    return;
  if (byValue && isInt && arg.bits == 1) {
    arg.isConstOne = true;
    return;
  }
  arg.mark16 = byAlignment && arg.bits % 16 == 0;
}

void tessel::runtime::setExtent(LaunchArg &arg, llvm::ArrayRef<int64_t> shape,
                                llvm::ArrayRef<int64_t> strides,
                                int64_t itemSize) {
  // The first and one past the last byte, relative to the address: negative
  // strides reach below it.
  int64_t low = 0, high = itemSize;
  for (auto [size, stride] : llvm::zip(shape, strides)) {
    if (size == 0) {
      low = high = 0;
      break;
    }
    int64_t span = stride * (size - 1);
    (span < 0 ? low : high) += span;
  }
  arg.lo = arg.bits + uint64_t(low);
  arg.hi = arg.bits + uint64_t(high);
  arg.extentKnown = true;
}

bool tessel::runtime::overlap(const LaunchArg &a, const LaunchArg &b) {
  if (a.lo == a.hi || b.lo == b.hi)
    return false;
  return a.lo < b.hi && b.lo < a.hi;
}

void tessel::runtime::markNoalias(
    llvm::MutableArrayRef<LaunchArg> args,
    llvm::function_ref<void(size_t index, LaunchArg &arg)> readExtent) {
  llvm::SmallVector<LaunchArg *, 8> pointers;
  for (LaunchArg &a : args)
    if (a.isPointer())
      pointers.push_back(&a);
  if (pointers.size() == 1) {
    pointers[0]->noalias = true;
    return;
  }
  for (LaunchArg *a : pointers)
    if (!a->extentKnown)
      readExtent(a - args.data(), *a);
  auto isolated = [](const LaunchArg *a) {
    return a->extentKnown || a->bits == 0;
  };
  for (LaunchArg *a : pointers) {
    if (!isolated(a))
      continue;
    a->noalias = llvm::all_of(pointers, [&](const LaunchArg *b) {
      return a == b || (isolated(b) && !overlap(*a, *b));
    });
  }
}

std::string tessel::runtime::typeTag(const LaunchArg &arg) {
  if (arg.isConstOne)
    return kConstOneTag.str();
  std::string tag = arg.type;
  if (arg.mark16)
    tag += ":16";
  if (arg.noalias)
    tag += ":noalias";
  return tag;
}

llvm::Error tessel::runtime::checkWritable(llvm::ArrayRef<LaunchArg> args,
                                           llvm::ArrayRef<unsigned> writes,
                                           llvm::StringRef function) {
  for (unsigned w : writes)
    if (w < args.size() && args[w].readonly)
      return fail(function + ": argument '" + args[w].name +
                  "' is a read-only array, but the kernel may store to it "
                  "(pass a writeable array, e.g. a copy)");
  return llvm::Error::success();
}

llvm::Error tessel::runtime::checkGridRank(size_t rank, DescribeGrid describe) {
  if (rank < 1 || rank > 3)
    return fail("grid must have 1 to 3 dimensions, got " + describe());
  return llvm::Error::success();
}

llvm::Expected<std::array<int64_t, 3>>
tessel::runtime::gridDims(llvm::ArrayRef<int64_t> dims, DescribeGrid describe) {
  if (llvm::Error err = checkGridRank(dims.size(), describe))
    return std::move(err);
  std::array<int64_t, 3> grid{1, 1, 1};
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0)
      return fail("grid dimensions must be >= 0, got " + describe());
    if (d > INT32_MAX)
      return fail("grid dimensions must fit in int32, got " + describe());
    grid[i] = d;
  }
  return grid;
}

llvm::Error tessel::runtime::packArgs(llvm::ArrayRef<LaunchArg> args,
                                      llvm::ArrayRef<std::string> signature,
                                      llvm::StringRef kernel,
                                      llvm::MutableArrayRef<uint64_t> slots) {
  if (signature.size() != args.size())
    return fail(kernel + " takes " + llvm::Twine(signature.size()) +
                " runtime arguments, got " + llvm::Twine(args.size()));
  assert(slots.size() == args.size() && "one slot per argument");
  for (auto [arg, signatureType, slot] : llvm::zip(args, signature, slots)) {
    llvm::StringRef type = signatureType;
    slot = 0;
    // The kernel reads each value at its slot's address.
    if (type == "fp32") {
      float value = float(arg.real);
      std::memcpy(&slot, &value, sizeof value);
    } else if (type == "fp64") {
      std::memcpy(&slot, &arg.real, sizeof arg.real);
    } else if (type == "i1") {
      uint8_t value = arg.bits != 0;
      std::memcpy(&slot, &value, sizeof value);
    } else {
      // Little-endian: the low bytes of the slot hold narrower ints.
      slot = arg.bits;
    }
  }
  return llvm::Error::success();
}
