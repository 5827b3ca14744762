//===- TensorMapSpec.cpp - The tensor maps a kernel takes -----------------===//
#include "tessel/NVIDIA/TensorMapSpec.h"

#include "llvm/ADT/StringExtras.h"

using namespace tessel;
using namespace tessel::nvidia;

namespace {
const char *const kElementNames[] = {"u8", "u16", "s32", "s64",
                                     "f16", "bf16", "f32", "f64"};
const unsigned kElementBytes[] = {1, 2, 4, 8, 2, 2, 4, 8};

llvm::Error failWith(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}
} // namespace

unsigned TensorMapSpec::elementBytes() const {
  return kElementBytes[unsigned(element)];
}

std::string TensorMapSpec::str() const {
  std::string line = "tensor_map=" + std::to_string(arg) + " " +
                     kElementNames[unsigned(element)] + " " +
                     (nan ? "1" : "0") + " ";
  for (size_t d = 0; d < box.size(); ++d)
    line += (d ? "x" : "") + std::to_string(box[d]);
  return line + " " + std::to_string(swizzle);
}

std::optional<TensorMapSpec> TensorMapSpec::parse(llvm::StringRef line) {
  if (!line.consume_front("tensor_map="))
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef, 4> fields;
  line.split(fields, ' ');
  TensorMapSpec spec;
  if (fields.size() != 5 || fields[0].getAsInteger(10, spec.arg) ||
      (fields[2] != "0" && fields[2] != "1") ||
      fields[4].getAsInteger(10, spec.swizzle) ||
      (spec.swizzle != 0 && spec.swizzle != 32 && spec.swizzle != 64 &&
       spec.swizzle != 128))
    return std::nullopt;
  auto name = llvm::find(kElementNames, fields[1]);
  if (name == std::end(kElementNames))
    return std::nullopt;
  spec.element = TensorMapElement(name - std::begin(kElementNames));
  spec.nan = fields[2] == "1";
  llvm::SmallVector<llvm::StringRef, 5> sizes;
  fields[3].split(sizes, 'x');
  for (llvm::StringRef s : sizes) {
    int64_t size;
    if (s.getAsInteger(10, size) || size < 1 || size > 256)
      return std::nullopt;
    spec.box.push_back(size);
  }
  if (spec.box.empty() || spec.box.size() > 5)
    return std::nullopt;
  return spec;
}

unsigned nvidia::swizzleMode(int32_t bytes) {
  switch (bytes) {
  case 32:
    return 1;
  case 64:
    return 2;
  case 128:
    return 3;
  default:
    return 0;
  }
}

llvm::Expected<TensorMapView>
nvidia::tensorMapView(const TensorMapSpec &spec,
                      llvm::ArrayRef<runtime::LaunchArg> args) {
  size_t rank = spec.box.size();
  if (spec.arg + 2 * rank > args.size())
    return failWith("a tensor map's descriptor is missing from the arguments");
  const runtime::LaunchArg &base = args[spec.arg];
  auto bad = [&](const llvm::Twine &why) {
    return failWith("tensor descriptor '" + base.name + "': " + why);
  };
  TensorMapView view;
  view.address = base.bits;
  if (view.address % 16)
    return bad("the copy engine needs a 16-byte aligned base");
  for (size_t d = rank; d-- > 0;) {
    view.dims.push_back(args[spec.arg + 1 + d].bits);
    view.box.push_back(uint32_t(spec.box[d]));
  }
  for (size_t d = rank - 1; d-- > 0;) {
    int64_t stride = int64_t(args[spec.arg + 1 + rank + d].bits);
    int64_t bytes = stride * int64_t(spec.elementBytes());
    // The copy engine takes positive strides below 2^40 bytes, multiples of
    // 16 (the last check the launcher's too).
    if (stride <= 0 || bytes >= (int64_t(1) << 40) || bytes % 16)
      return bad("the copy engine needs strides[" + llvm::Twine(d) +
                 "] in (0, 2^40) bytes, a multiple of 16, got " +
                 llvm::Twine(stride) + " elements");
    view.strides.push_back(uint64_t(bytes));
  }
  return view;
}
