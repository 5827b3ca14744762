//===- LaunchArgs.cpp - The runtime arguments of one launch ---------------===//
#include "tessel/Runtime/LaunchArgs.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
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

llvm::Error tessel::runtime::expandDescriptor(const TensorDescriptorArg &desc,
                                              bool byAlignment,
                                              std::vector<LaunchArg> &out) {
  llvm::StringRef name = desc.base.name;
  auto bad = [&](const llvm::Twine &what) {
    return fail("tensor descriptor '" + name + "': " + what);
  };
  size_t rank = desc.shape.size();
  if (rank < 1 || rank > 5)
    return bad("a descriptor has 1 to 5 dimensions, got " + llvm::Twine(rank));
  if (desc.strides.size() != rank || desc.block.size() != rank)
    return bad(llvm::Twine(rank) + " dimensions in shape, but " +
               llvm::Twine(desc.strides.size()) + " strides and " +
               llvm::Twine(desc.block.size()) + " block dimensions");
  if (!desc.base.isPointer())
    return bad("the base must be an array, got " + desc.base.type);
  if (desc.base.bits % 16)
    return bad("the base array's address must be a multiple of 16 bytes");
  llvm::StringRef element = llvm::StringRef(desc.base.type).drop_front();
  if (desc.nanPadding && !element.starts_with("fp") && !element.starts_with("bf"))
    return bad("padding 'nan' needs a floating-point array, got " + element);
  int64_t bytes = desc.elementBytes;
  for (size_t d = 0; d < rank; ++d) {
    int64_t size = desc.shape[d], stride = desc.strides[d], box = desc.block[d];
    if (size < 1 || size > INT32_MAX)
      return bad("shape[" + llvm::Twine(d) + "] must be in [1, 2^31), got " +
                 llvm::Twine(size));
    if (d + 1 == rank ? stride != 1 : (stride * bytes) % 16 != 0)
      return bad(d + 1 == rank
                     ? "the last dimension must be contiguous (stride 1), got " +
                           llvm::Twine(stride)
                     : "strides[" + llvm::Twine(d) +
                           "] must be a multiple of 16 bytes, got " +
                           llvm::Twine(stride) + " elements of " +
                           llvm::Twine(bytes) + " bytes");
    if (box < 1 || (box & (box - 1)))
      return bad("block dimension " + llvm::Twine(d) +
                 " must be a power of 2, got " + llvm::Twine(box));
  }
  if (desc.block.back() * bytes < 16)
    return bad("the block's last dimension must span at least 16 bytes, got " +
               llvm::Twine(desc.block.back()) + " x " + llvm::Twine(bytes));
  // Where the array's extent is known, every element the shape and strides
  // name must lie in it: the targets trust the descriptor (a larger one made
  // the CPU write past its array). 128-bit: strides are any int64.
  if (desc.base.extentKnown) {
    __int128 low = 0, high = bytes;
    for (size_t d = 0; d < rank; ++d) {
      __int128 span = __int128(desc.shape[d] - 1) * desc.strides[d] * bytes;
      (span < 0 ? low : high) += span;
    }
    __int128 first = __int128(desc.base.lo) - __int128(desc.base.bits);
    __int128 end = __int128(desc.base.hi) - __int128(desc.base.bits);
    if (low < first || high > end) {
      auto list = [](llvm::ArrayRef<int64_t> values) {
        std::string text;
        for (int64_t v : values)
          text += (text.empty() ? "" : ", ") + std::to_string(v);
        return "[" + text + "]";
      };
      auto number = [](__int128 v) {
        return v < INT64_MIN || v > INT64_MAX ? std::string("over 2^63")
                                              : std::to_string(int64_t(v));
      };
      return bad("its shape " + list(desc.shape) + " and strides " +
                 list(desc.strides) + " reach bytes [" + number(low) + ", " +
                 number(high) + ") from its base, but its array holds bytes [" +
                 number(first) + ", " + number(end) + ")");
    }
  }
  auto part = [&](LaunchArg arg) {
    arg.name = name;
    specialize(arg, /*byValue=*/false, byAlignment);
    out.push_back(std::move(arg));
  };
  part(desc.base);
  for (int64_t size : desc.shape) {
    LaunchArg arg = LaunchArg::integer(size);
    part(arg);
  }
  for (int64_t stride : llvm::ArrayRef(desc.strides).drop_back()) {
    LaunchArg arg = LaunchArg::integer(stride);
    arg.type = "i64";
    part(arg);
  }
  return llvm::Error::success();
}

std::string tessel::runtime::descriptorTag(const TensorDescriptorArg &desc,
                                           llvm::ArrayRef<LaunchArg> parts) {
  std::string tag = "tensordesc<" + desc.base.type.substr(1) + "[";
  for (auto [d, size] : llvm::enumerate(desc.block))
    tag += (d ? "," : "") + std::to_string(size);
  tag += desc.nanPadding ? "],nan>(" : "]>(";
  // What expandDescriptor checked holds whatever the specialization: the
  // base is 16-byte aligned, the strides 16-byte multiples.
  size_t firstStride = 1 + desc.shape.size();
  for (auto [i, part] : llvm::enumerate(parts)) {
    LaunchArg marked = part;
    marked.mark16 |= i == 0;
    tag += (i ? "," : "") + typeTag(marked);
    if (i >= firstStride && !marked.mark16 && desc.elementBytes < 16)
      tag += ":" + std::to_string(16 / desc.elementBytes);
  }
  return tag + ")";
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

llvm::Error tessel::runtime::checkLaunchChecks(
    llvm::ArrayRef<LaunchArg> args, llvm::ArrayRef<LaunchCheck> checks,
    llvm::StringRef function) {
  for (const LaunchCheck &check : checks) {
    if (check.argument >= args.size())
      return fail(function + ": a launch check names argument " +
                  llvm::Twine(check.argument) + " of " +
                  llvm::Twine(args.size()));
    const LaunchArg &arg = args[check.argument];
    if (check.holds(arg.bits))
      continue;
    std::string value = arg.isPointer()
                            ? "address 0x" + llvm::utohexstr(arg.bits)
                            : std::to_string(int64_t(arg.bits));
    return fail(function + ": " + check.message + " (argument '" + arg.name +
                "' is " + value + ")");
  }
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
