//===- DType.h - Frontend element types with signedness ---------*- C++ -*-===//
//
// MLIR integers are signless; the language's types are not. A DType is the
// language-level element type of a value ("i32", "u8", "fp16", "*fp32" ...).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BUILDER_DTYPE_H
#define TESSEL_BUILDER_DTYPE_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace tessel {

enum class ScalarKind : uint8_t {
  I1, I8, I16, I32, I64, U8, U16, U32, U64, F8E4M3, F8E5M2,
  F8E4M3B15, F8E4M3FNUZ, F8E5M2FNUZ, F16, BF16, F32, F64
};

struct DType {
  ScalarKind kind = ScalarKind::I32;
  /// A pointer to elements of `kind`.
  bool isPointer = false;
  /// A pointer the kernel may only read through (a `tl.const` parameter's,
  /// "*k" in type strings): stores and atomics through it are errors.
  bool isConst = false;

  static std::optional<DType> parse(llvm::StringRef text);
  std::string str() const;

  bool isFloat() const;
  /// The 8-bit floats: fp8e4nv (e4m3, no infinities, 448 at most), fp8e5
  /// (e5m2, IEEE-like), fp8e4b15 (e4m3 with bias 15: 1.875 at most, no
  /// infinities or NaN), and the "fnuz" formats fp8e4b8 (e4m3, bias 8) and
  /// fp8e5b16 (e5m2, bias 16): no infinities, no negative zero, NaN 0x80.
  bool isFP8() const {
    return !isPointer &&
           (kind == ScalarKind::F8E4M3 || kind == ScalarKind::F8E5M2 ||
            kind == ScalarKind::F8E4M3B15 || kind == ScalarKind::F8E4M3FNUZ ||
            kind == ScalarKind::F8E5M2FNUZ);
  }
  bool isInt() const;     ///< Integers, bool included.
  bool isBool() const { return !isPointer && kind == ScalarKind::I1; }
  bool isUnsigned() const;
  unsigned bitwidth() const;
  DType pointee() const { return DType{kind, false}; }

  /// The MLIR type of one element: a signless integer, a float or a
  /// `!tile.ptr` for pointers.
  mlir::Type toMLIR(mlir::MLIRContext *ctx) const;

  bool operator==(const DType &o) const {
    return kind == o.kind && isPointer == o.isPointer && isConst == o.isConst;
  }
  bool operator!=(const DType &o) const { return !(*this == o); }
};

/// What the language knows of each element type, in one table.
struct ScalarInfo {
  ScalarKind kind;
  const char *name;        ///< the type string: "fp32", "i32", "u8", "i1"
  const char *tritonName;  ///< Triton's dtype name: "fp32", "int32", ...
  unsigned bits;
  const char *numpyTypestr; ///< __array_interface__ typestr without byte order ("" if none)
  const char *cType;       ///< the C type of a value in memory
  const char *aliases;     ///< other names of it (numpy's, torch's), space-separated
};

/// Every element type, bool first.
llvm::ArrayRef<ScalarInfo> scalarTypes();

} // namespace tessel

#endif // TESSEL_BUILDER_DTYPE_H
