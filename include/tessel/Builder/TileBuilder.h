//===- TileBuilder.h - Builds tile IR with the language's semantics -*- C++ -*-===//
//
// The one place where the language's rules live: type promotion, broadcasting,
// legality checks and their error text. The Python frontend walks the kernel's
// AST and calls these methods; every error is a CompileError whose message
// names the operation, the types and the shapes involved.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BUILDER_TILEBUILDER_H
#define TESSEL_BUILDER_TILEBUILDER_H

#include "tessel/Builder/DType.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <stdexcept>
#include <variant>
#include <vector>

namespace tessel {

/// The most elements a block may hold (Triton's TRITON_MAX_TENSOR_NUMEL).
/// Every builder method that makes a block shape checks it, so an oversized
/// block is a CompileError naming the operation, not a kernel that runs for
/// minutes.
inline constexpr int64_t kMaxBlockElements = int64_t(1) << 20;

/// A semantic error in a kernel (wrong types, shapes, arguments).
class CompileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// An IR value with its language-level element type.
struct TValue {
  mlir::Value value;
  DType dtype;

  llvm::ArrayRef<int64_t> shape() const;
  bool isBlock() const { return !shape().empty(); }
  /// e.g. "fp32[128, 64]" or "i32" for scalars: used in error messages.
  std::string describe() const;
};

/// A Python literal (bool, int or float) or an IR value. An int is an int64_t
/// unless only uint64 holds it (2^63 to 2^64 - 1, Triton's uint64 literals).
using Operand = std::variant<TValue, bool, int64_t, uint64_t, double>;

/// The type a Python literal takes inside a kernel (Triton's rule: an int is
/// i32 if it fits, else u32, else i64, else u64; a float fp32, or fp64 where
/// fp32 would flush it to 0 or overflow; a bool i1). Arguments follow another
/// rule (the driver's: i32, else i64, else u64; a float fp32).
DType literalType(const Operand &literal);

/// Registers every dialect a kernel module may hold.
void registerTesselDialects(mlir::DialectRegistry &registry);

class TileBuilder {
public:
  TileBuilder();
  ~TileBuilder();

  mlir::MLIRContext &getContext() { return *context; }
  mlir::ModuleOp getModule() { return *module; }
  /// Hands the module over (to the compiler); the builder is then empty.
  mlir::OwningOpRef<mlir::ModuleOp> takeModule();

  void setLoc(const std::string &file, int line, int col);

  std::vector<TValue> createFunction(const std::string &name,
                                     const std::vector<std::string> &argTypes);
  void finishFunction();
  /// A @jit(noinline=True) function: a private func.func `name` whose
  /// parameters have the types of `args` (blocks and scalars). The insertion
  /// point moves into its body until finishCallee; the caller's open regions
  /// wait. Returns the parameters.
  std::vector<TValue> beginCallee(const std::string &name,
                                  const std::vector<TValue> &args);
  /// Returns `results` from the callee being built and goes back to the
  /// caller, where the insertion point was.
  void finishCallee(const std::vector<TValue> &results);
  /// A call of a callee made by beginCallee, with arguments of its parameter
  /// types; returns its results.
  std::vector<TValue> call(const std::string &name,
                           const std::vector<TValue> &args);
  /// Whether the insertion point is inside a reduction's or scan's combine
  /// body or a map_elementwise body (code run per element).
  bool insideElementRegion() const;
  std::string moduleString();
  /// The kernel's parameter types, as given to createFunction.
  const std::vector<DType> &getSignature() const { return signature; }

  // Creation.
  TValue constant(Operand value, const std::string &dtype);
  TValue programId(int axis);
  TValue numPrograms(int axis);
  TValue arange(int64_t start, int64_t end);
  TValue full(const std::vector<int64_t> &shape, Operand value,
              const std::string &dtype);

  // Arithmetic.
  /// With debug, integer add, sub and mul narrower than 64 bits also assert
  /// that they do not overflow, unless `sanitizeOverflow` is false (Triton's
  /// sanitize_overflow).
  TValue binary(const std::string &op, Operand lhs, Operand rhs,
                bool sanitizeOverflow = true);
  TValue unary(const std::string &op, Operand x);
  TValue where(Operand cond, Operand x, Operand y);
  TValue math(const std::string &fn, Operand x);
  // tl.debug_barrier: every thread of the program waits for the others.
  void debugBarrier();
  // x * y + z rounded once (Triton's tl.fma / tl.math.fma).
  TValue fma(Operand x, Operand y, Operand z);
  /// `x` as `dtype` (bitcast: its bits); a narrowing float conversion rounds
  /// as `rounding` says: "" or "rtne" to nearest even, "rtz" toward zero.
  TValue cast(Operand x, const std::string &dtype, bool bitcast,
              const std::string &rounding = "");

  // Shape.
  TValue broadcastTo(Operand x, const std::vector<int64_t> &shape);
  TValue expandDims(const TValue &x, int axis);
  TValue reshape(const TValue &x, const std::vector<int64_t> &shape);
  TValue permute(const TValue &x, const std::vector<int> &order);

  // Memory. `cacheModifier` and `evictionPolicy` take Triton's strings ("" is
  // the default; loads ".ca" ".cg" ".cv", stores ".wb" ".cg" ".cs" ".wt";
  // "evict_first" "evict_last").
  TValue load(const TValue &ptr, std::optional<Operand> mask,
              std::optional<Operand> other,
              const std::string &cacheModifier = "",
              const std::string &evictionPolicy = "", bool isVolatile = false);
  void store(const TValue &ptr, Operand value, std::optional<Operand> mask,
             const std::string &cacheModifier = "",
             const std::string &evictionPolicy = "");

  // Atomics (tl.atomic_*): `op` is "add", "and", "or", "xor", "max", "min"
  // or "xchg"; `sem` "relaxed", "acquire", "release" or "acq_rel" ("" is
  // acq_rel), `scope` "gpu", "cta" or "sys" ("" is gpu). Both return the
  // values memory held before.
  TValue atomicRMW(const std::string &op, const TValue &ptr, Operand value,
                   std::optional<Operand> mask, const std::string &sem = "",
                   const std::string &scope = "");
  TValue atomicCAS(const TValue &ptr, Operand cmp, Operand value,
                   const std::string &sem = "", const std::string &scope = "");

  // Tensor descriptors: the block of shape `block` at `offsets` of the array
  // at `base` of `shape` elements, `strides` elements apart along every
  // dimension but the last (contiguous). Sizes and offsets are int32,
  // strides int64 (integer scalars or literals, converted). `tensorMap`:
  // the kernel argument a host-made descriptor came in (tile.descriptor_load).
  // The 16-byte rules of a descriptor made in the kernel, as the host's
  // TensorDescriptor has them: its base address and every stride but the
  // last, in bytes, are multiples of 16. A constant that breaks them is an
  // error at this line; a multiple of a runtime argument plus a constant is
  // recorded for the launcher to check (LaunchChecks.h); other values are
  // not checked.
  void checkDescriptorAlignment(const TValue &base,
                                const std::vector<Operand> &strides);
  TValue descriptorLoad(const TValue &base, const std::vector<Operand> &shape,
                        const std::vector<Operand> &strides,
                        const std::vector<Operand> &offsets,
                        const std::vector<int64_t> &block, bool nanPadding,
                        std::optional<int> tensorMap);
  void descriptorStore(const TValue &base, const std::vector<Operand> &shape,
                       const std::vector<Operand> &strides,
                       const std::vector<Operand> &offsets, Operand value,
                       const std::vector<int64_t> &block,
                       std::optional<int> tensorMap);

  // Facts about values. `hint` records tl.multiple_of ("multiple_of"),
  // tl.max_contiguous ("max_contiguous") or tl.max_constancy
  // ("max_constancy") on the op defining `x` (one value per dimension, one
  // for a scalar) and returns `x`; `assume` emits tile.assume (tl.assume).
  TValue hint(const TValue &x, const std::string &kind,
              const std::vector<int64_t> &values);
  void assume(Operand cond);

  // Reductions and linear algebra.
  std::vector<TValue> beginReduce(const std::vector<TValue> &inputs, int axis);
  std::vector<TValue> endReduce(const std::vector<TValue> &combined);
  // src's elements picked along `axis` by `indices` (Triton's gather).
  TValue gather(const TValue &src, const TValue &indices, int axis);
  // tl.map_elementwise: the scalar function's region, applied to groups of
  // `pack` elements of the inputs (broadcast together); begin returns its
  // scalar arguments (pack of each input, input by input), end takes its
  // results (pack of each) and returns the blocks.
  std::vector<TValue> beginMapElementwise(const std::vector<Operand> &inputs,
                                          int pack);
  std::vector<TValue> endMapElementwise(const std::vector<TValue> &results);
  // An inclusive scan along `axis` (reverse: from the end), with a combine
  // region as reduce's; results have the inputs' shapes.
  std::vector<TValue> beginScan(const std::vector<TValue> &inputs, int axis,
                                bool reverse);
  std::vector<TValue> endScan(const std::vector<TValue> &combined);
  /// `inputPrecision`: "tf32" "tf32x3" "ieee" "bf16x3" "bf16x6" (any case)
  /// or none (the target's default); `maxNumImpreciseAcc` >= 0 or none.
  TValue dot(const TValue &a, const TValue &b, std::optional<TValue> acc,
             std::optional<std::string> outDType,
             std::optional<std::string> inputPrecision = std::nullopt,
             std::optional<int64_t> maxNumImpreciseAcc = std::nullopt);

  // Structured control flow.
  std::pair<TValue, std::vector<TValue>>
  beginFor(Operand lb, Operand ub, Operand step,
           const std::vector<TValue> &inits,
           std::optional<int64_t> numStages = std::nullopt);
  std::vector<TValue> endFor(const std::vector<TValue> &yields);
  /// A while loop: beginWhile puts the insertion point in the loop header
  /// (returning the carried values there), whileCondition ends the header
  /// with the loop condition and enters the body (returning the carried
  /// values there), endWhile ends the body.
  std::vector<TValue> beginWhile(const std::vector<TValue> &inits);
  std::vector<TValue> whileCondition(Operand cond);
  std::vector<TValue> endWhile(const std::vector<TValue> &yields);
  void beginIf(Operand cond);
  void beginElse();
  std::vector<TValue> endIf(const std::vector<TValue> &thenValues,
                            const std::vector<TValue> &elseValues);

  // Debugging and extension (lib/Builder/DebugOps.cpp).
  /// Whether the kernel is compiled with `debug` (Triton's option): only
  /// then do device assertions exist.
  void setDebug(bool on) { debug = on; }
  bool getDebug() const { return debug; }
  /// tl.device_print / print(): every element of each of `args` (tensors or
  /// literals) printed at run time after `prefix` (made to read " prefix: "
  /// as Triton makes it); `hex` prints the values' bits in hexadecimal.
  void print(const std::string &prefix, const std::vector<Operand> &args,
             bool hex);
  /// tl.device_assert / assert on a tensor: with debug, the program stops
  /// where an element of `cond` (a boolean or an integer) is false while
  /// `mask` is set (every element without one), reporting `message` and
  /// this location; without debug, nothing.
  void deviceAssert(Operand cond, const std::string &message,
                    std::optional<Operand> mask);
  /// tl.inline_asm_elementwise: `asmText` on groups of `pack` elements of the
  /// broadcast `args`, returning one value per type of `dtypes` (of the
  /// broadcast shape, scalars when every arg is one).
  std::vector<TValue> inlineAsm(const std::string &asmText,
                                const std::string &constraints,
                                const std::vector<Operand> &args,
                                const std::vector<std::string> &dtypes,
                                bool isPure, int64_t pack);
  /// tl.extern_elementwise, once the symbol is chosen: `symbol` of the
  /// library `libName` (`libPath`) on the broadcast `args`, each of type
  /// `argTypes[i]` (literals are made so), returning `resultType`.
  TValue externElementwise(const std::string &libName,
                           const std::string &libPath,
                           const std::string &symbol,
                           const std::vector<Operand> &args,
                           const std::vector<std::string> &argTypes,
                           const std::string &resultType, bool isPure);
  /// The type arithmetic on `a` and `b` computes in (Triton's promotion),
  /// as its type string: extern_elementwise's fallback when a library has
  /// no function for the arguments' own types.
  std::string promotedType(const Operand &a, const Operand &b,
                           const std::string &op);

private:
  struct OpenRegion;
  /// The checked, non-negative axis of a reduce or scan (`what`).
  int combineAxis(const char *what, const std::vector<TValue> &inputs,
                  int axis);
  /// Opens `op`'s combine region (2N scalar arguments) and returns them.
  std::vector<TValue> openCombineRegion(mlir::Operation *op,
                                        mlir::Region &region,
                                        const std::vector<TValue> &inputs);
  /// Closes the open combine region of a CombineOp with `combined`.
  template <class CombineOp, class ReturnOp>
  std::vector<TValue> closeCombineRegion(const char *what,
                                         const std::vector<TValue> &combined);

  DType parseDType(const std::string &text) const;
  TValue toValue(const Operand &x, std::optional<DType> like = std::nullopt);
  TValue castTo(const TValue &x, DType to);
  TValue splatTo(const TValue &x, llvm::ArrayRef<int64_t> shape);
  TValue broadcastValue(const TValue &x, llvm::ArrayRef<int64_t> shape,
                        const char *what);
  std::vector<int64_t> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                       llvm::ArrayRef<int64_t> b,
                                       const std::string &what);
  DType computationType(const Operand &a, const Operand &b, bool divOrMod,
                        const std::string &op);
  std::pair<TValue, TValue> promoteAndBroadcast(const Operand &a,
                                                const Operand &b, DType type,
                                                const std::string &op);
  TValue toBool(const TValue &x);
  /// Descriptor sizes, strides and offsets as the scalars the descriptor ops
  /// take: `what` names the access in errors.
  mlir::Value descriptorIndex(const Operand &x, DType type,
                              const std::string &what);
  /// The operands of a descriptor access, checked and converted.
  struct DescriptorOperands {
    llvm::SmallVector<mlir::Value> shape, strides, offsets;
  };
  DescriptorOperands descriptorOperands(const std::string &what,
                                        const TValue &base,
                                        const std::vector<Operand> &shape,
                                        const std::vector<Operand> &strides,
                                        const std::vector<Operand> &offsets,
                                        const std::vector<int64_t> &block);
  /// Ends the innermost open loop body with `yields`, checking them against
  /// the loop's `inits`; returns `results` with their language types.
  std::vector<TValue> closeLoop(const std::vector<TValue> &yields,
                                mlir::ValueRange inits,
                                mlir::ValueRange results);
  TValue make(mlir::Value v, DType dtype) { return TValue{v, dtype}; }
  mlir::Value constantScalar(const Operand &literal, DType dtype);
  /// With debug, a device assertion that the integer `op` (add, sub, mul) of
  /// `a` and `b` (of one type narrower than 64 bits) does not overflow it,
  /// computed in 64 bits (Triton's sanitize_overflow, on in debug kernels).
  void checkIntegerOverflow(const std::string &op, const TValue &a,
                            const TValue &b);
  mlir::Type typeFor(DType dtype, llvm::ArrayRef<int64_t> shape);

  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::OpBuilder builder;
  mlir::Location loc;
  mlir::Operation *function = nullptr;
  std::vector<OpenRegion> openRegions;
  struct PendingMap;
  /// map_elementwise regions being built (their op is made at the end, when
  /// the function's result types are known).
  std::vector<std::unique_ptr<PendingMap>> pendingMaps;
  std::vector<DType> signature;
  /// The callees being built, innermost last, with what their caller had
  /// open; and every callee's result types.
  struct CalleeFrame;
  std::vector<std::unique_ptr<CalleeFrame>> callees;
  llvm::StringMap<std::vector<DType>> calleeResults;
  bool debug = false;
};

} // namespace tessel

#endif // TESSEL_BUILDER_TILEBUILDER_H
