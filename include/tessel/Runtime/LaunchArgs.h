//===- LaunchArgs.h - The runtime arguments of one launch -------*- C++ -*-===//
//
// What the launch path decides about a kernel's runtime arguments once it has
// read them from the caller: how they specialize the kernel (ints equal to 1
// compiled in, multiples of 16 marked, arrays that overlap no other marked
// ":noalias"), the type tags of the cache key, the checks made before a
// launch (read-only arrays, the grid), and the 64-bit slots the kernel reads
// its arguments from. Nothing here knows where the values came from: the
// Python binding reads them from Python objects.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_LAUNCHARGS_H
#define TESSEL_RUNTIME_LAUNCHARGS_H

#include "tessel/Runtime/CacheEntry.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel::runtime {

/// One runtime argument of a launch.
struct LaunchArg {
  std::string type;     ///< "*fp32", "i32", "fp32", "i1", ... (no marks)
  llvm::StringRef name; ///< the parameter's, for error messages
  uint64_t bits = 0;    ///< address, integer value or bool
  double real = 0;      ///< float value
  bool mark16 = false;     ///< a multiple of 16 (bytes for pointers): ":16"
  bool isConstOne = false; ///< an int equal to 1, compiled in: "=1"
  /// Pointers: the bytes [lo, hi) the array spans (known unless
  /// `extentKnown` is false), whether it is read-only, and whether it
  /// overlaps no other pointer argument's array (":noalias").
  uint64_t lo = 0, hi = 0;
  bool extentKnown = false;
  bool readonly = false;
  bool noalias = false;

  bool isPointer() const { return !type.empty() && type[0] == '*'; }

  static LaunchArg boolean(bool value);
  /// "i32" when the value fits in 32 bits, else "i64".
  static LaunchArg integer(int64_t value);
  /// A Python float: "fp32".
  static LaunchArg floating(double value);
  /// An array of `elementType` ("fp32", ...) at `address`, extent unknown.
  static LaunchArg pointer(llvm::StringRef elementType, uint64_t address);
};

/// Specializes an int or pointer argument: an int equal to 1 becomes a
/// constant when `byValue`; otherwise a multiple of 16 is marked when
/// `byAlignment`. Bools and floats are never specialized.
void specialize(LaunchArg &arg, bool byValue, bool byAlignment);

/// Sets the bytes the array at `arg.bits` spans, from its shape and its
/// strides in bytes (either sign; an empty array spans no bytes).
void setExtent(LaunchArg &arg, llvm::ArrayRef<int64_t> shape,
               llvm::ArrayRef<int64_t> strides, int64_t itemSize);

/// Whether two arrays of known extent share a byte (an empty one shares none).
bool overlap(const LaunchArg &a, const LaunchArg &b);

/// Marks the pointer arguments whose arrays overlap no other pointer
/// argument's. A lone pointer is always marked. With two or more,
/// `readExtent` is asked for the extent of each pointer not known yet (it may
/// leave it unknown); an array of unknown extent may overlap everything,
/// except a null pointer, which stands for an array of its own.
void markNoalias(llvm::MutableArrayRef<LaunchArg> args,
                 llvm::function_ref<void(size_t index, LaunchArg &arg)> readExtent);

/// The argument's entry in the cache key: "=1", or its type with its marks
/// ("*fp32:16:noalias", "i32:16", "fp32").
std::string typeTag(const LaunchArg &arg);
/// The tag of an int compiled in as 1.
inline constexpr llvm::StringLiteral kConstOneTag = "=1";

/// A host-side tensor descriptor argument (tessel.tools.tensor_descriptor's
/// TensorDescriptor, or Triton's): the array at `base`, the shape and strides
/// (in elements) of the view it describes, the block its loads and stores
/// move, and whether out-of-bounds elements read as NaN instead of zero.
struct TensorDescriptorArg {
  LaunchArg base;
  unsigned elementBytes = 1;
  llvm::SmallVector<int64_t, 5> shape, strides, block;
  bool nanPadding = false;
};

/// Checks a descriptor as Triton does (1 to 5 dimensions, a 16-byte aligned
/// base, 16-byte multiples for every stride but the last, which is 1, a
/// positive shape within int32, power-of-two blocks spanning at least 16
/// bytes along the last dimension, and, where the base array's extent is
/// known, every element it names inside that array) and appends the runtime
/// arguments it is passed as: the base, the shape ("i32" each), the strides
/// but the last ("i64" each; the last is compiled in as 1), each specialized
/// by alignment when `byAlignment`. Errors name the argument
/// (`desc.base.name`).
llvm::Error expandDescriptor(const TensorDescriptorArg &desc, bool byAlignment,
                             std::vector<LaunchArg> &out);

/// The cache-key tag of a descriptor passed as `parts` (what expandDescriptor
/// appended, after markNoalias): its element type and block, ",nan" for NaN
/// padding, then the tags of its parts, with the alignment the checks imply
/// (the base ":16", a stride not marked the elements in 16 bytes), e.g.
/// "tensordesc<fp16[64,64]>(*fp16:16:noalias,i32:16,i32,i64:8)".
std::string descriptorTag(const TensorDescriptorArg &desc,
                          llvm::ArrayRef<LaunchArg> parts);

/// Refuses a read-only array passed for an argument the kernel may store
/// through (`writes`: indices into `args`). `function` names the kernel in the
/// message.
llvm::Error checkWritable(llvm::ArrayRef<LaunchArg> args,
                          llvm::ArrayRef<unsigned> writes,
                          llvm::StringRef function);

/// Refuses arguments that break the kernel's launch checks (rules the
/// compiler left to the launcher, e.g. a tensor descriptor's 16-byte
/// strides): the message names the rule, its kernel line, the argument and
/// its value. `function` names the kernel.
llvm::Error checkLaunchChecks(llvm::ArrayRef<LaunchArg> args,
                              llvm::ArrayRef<LaunchCheck> checks,
                              llvm::StringRef function);

/// The grid, as text for error messages; asked only when there is an error.
using DescribeGrid = llvm::function_ref<std::string()>;

/// Checks that a grid has 1 to 3 dimensions.
llvm::Error checkGridRank(size_t rank, DescribeGrid describe);

/// The three grid dimensions (missing ones are 1), each >= 0 and within int32.
llvm::Expected<std::array<int64_t, 3>> gridDims(llvm::ArrayRef<int64_t> dims,
                                                DescribeGrid describe);

/// Writes each argument into its 64-bit slot as the kernel's signature says:
/// a float for "fp32", a double for "fp64", one byte for "i1", the bits
/// otherwise (narrower ints in the low bytes). The number of arguments must
/// match the signature; `kernel` names it in the message.
llvm::Error packArgs(llvm::ArrayRef<LaunchArg> args,
                     llvm::ArrayRef<std::string> signature,
                     llvm::StringRef kernel,
                     llvm::MutableArrayRef<uint64_t> slots);

} // namespace tessel::runtime

#endif // TESSEL_RUNTIME_LAUNCHARGS_H
