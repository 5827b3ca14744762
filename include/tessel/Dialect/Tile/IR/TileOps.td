#ifndef TESSEL_TILE_OPS
#define TESSEL_TILE_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferIntRangeInterface.td"
include "tessel/Dialect/Tile/IR/TileDialect.td"
include "tessel/Dialect/Tile/IR/TileTypes.td"

// Written only by tile.assume: keeps assumptions alive without ordering them
// against memory accesses.
def Tile_AssumptionResource : Resource<"::tessel::tile::AssumptionResource">;

// Written by tile.print and tile.assert: keeps them alive and in program
// order among themselves without ordering them against memory accesses.
def Tile_DebugOutputResource : Resource<"::tessel::tile::DebugOutputResource">;

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Attributes GPUs need and the CPU ignores
//===----------------------------------------------------------------------===//

// The cache operator of a memory access (PTX's `ld`/`st` qualifiers, as
// Triton 3.6 accepts them). Loads take ca, cg, cv; stores take wb, cg, cs,
// wt; an access without the attribute uses the target's default.
def Tile_CacheModifier : I32EnumAttr<"CacheModifier",
    "cache operator of a load or store", [
      I32EnumAttrCase<"ca", 1>,  // load: cache at all levels
      I32EnumAttrCase<"cg", 2>,  // load/store: cache in L2, not L1
      I32EnumAttrCase<"cv", 3>,  // load: do not cache, fetch again
      I32EnumAttrCase<"wb", 4>,  // store: write back
      I32EnumAttrCase<"cs", 5>,  // store: streaming, likely accessed once
      I32EnumAttrCase<"wt", 6>,  // store: write through
    ]> {
  let cppNamespace = "::tessel::tile";
}

// The eviction priority of the lines a memory access touches. Without the
// attribute: evict_normal.
def Tile_EvictionPolicy : I32EnumAttr<"EvictionPolicy",
    "eviction priority of a load or store", [
      I32EnumAttrCase<"evict_normal", 0>,
      I32EnumAttrCase<"evict_first", 1>,
      I32EnumAttrCase<"evict_last", 2>,
    ]> {
  let cppNamespace = "::tessel::tile";
}

// How a dot may use tensor cores for fp32 inputs (Triton 3.6: NVIDIA accepts
// tf32, tf32x3, ieee, bf16x3, bf16x6; AMD ieee, bf16x3, bf16x6 and tf32 on
// CDNA3). Without the attribute the target picks its default.
def Tile_InputPrecision : I32EnumAttr<"InputPrecision",
    "precision of the products of a dot", [
      I32EnumAttrCase<"tf32", 0>,
      I32EnumAttrCase<"tf32x3", 1>,
      I32EnumAttrCase<"ieee", 2>,
      I32EnumAttrCase<"bf16x3", 3>,
      I32EnumAttrCase<"bf16x6", 4>,
    ]> {
  let cppNamespace = "::tessel::tile";
}

// Atomic read-modify-write operations (tl.atomic_*). Integers are
// signless in tile IR, so signed and unsigned max/min are distinct kinds;
// `fmax`/`fmin` order floats by their sign and magnitude bits (see
// tile.atomic_rmw).
def Tile_AtomicRMWKind : I32EnumAttr<"AtomicRMWKind",
    "operation of an atomic read-modify-write", [
      I32EnumAttrCase<"add", 0>,   // integers, wrapping
      I32EnumAttrCase<"fadd", 1>,  // fp16, bf16, fp32, fp64
      // Bits of 32- or 64-bit elements (C++ reserves `and`, `or`, `xor`).
      I32EnumAttrCase<"bit_and", 2, "and">,
      I32EnumAttrCase<"bit_or", 3, "or">,
      I32EnumAttrCase<"bit_xor", 4, "xor">,
      I32EnumAttrCase<"xchg", 5>,  // any 32- or 64-bit element
      I32EnumAttrCase<"max", 6>,   // signed integers
      I32EnumAttrCase<"umax", 7>,  // unsigned integers
      I32EnumAttrCase<"min", 8>,
      I32EnumAttrCase<"umin", 9>,
      I32EnumAttrCase<"fmax", 10>, // fp32, fp64
      I32EnumAttrCase<"fmin", 11>,
    ]> {
  let cppNamespace = "::tessel::tile";
}

// The memory ordering of an atomic (Triton's `sem=`; acq_rel by default).
def Tile_MemSemantic : I32EnumAttr<"MemSemantic",
    "memory ordering of an atomic", [
      I32EnumAttrCase<"relaxed", 0>,
      I32EnumAttrCase<"acquire", 1>,
      I32EnumAttrCase<"release", 2>,
      I32EnumAttrCase<"acq_rel", 3>,
    ]> {
  let cppNamespace = "::tessel::tile";
}

// The threads an atomic synchronizes with (Triton's `scope=`; gpu by
// default): those of its CTA, of the device, or of the whole system.
def Tile_MemSyncScope : I32EnumAttr<"MemSyncScope",
    "threads an atomic synchronizes with", [
      I32EnumAttrCase<"gpu", 0>,
      I32EnumAttrCase<"cta", 1>,
      I32EnumAttrCase<"sys", 2>,
    ]> {
  let cppNamespace = "::tessel::tile";
}

//===----------------------------------------------------------------------===//
// Program model
//===----------------------------------------------------------------------===//

def Tile_GetProgramIdOp : Tile_Op<"get_program_id", [Pure,
    DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>]> {
  let summary = "Index of this program in the launch grid along an axis";
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
}

def Tile_GetNumProgramsOp : Tile_Op<"get_num_programs", [Pure,
    DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>]> {
  let summary = "Number of programs in the launch grid along an axis";
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
}

def Tile_GetCtaRankOp : Tile_Op<"get_cta_rank", [Pure]> {
  let summary = "Index of this CTA among the CTAs that run one program";
  let description = [{
    A program launched with `num_ctas` > 1 runs on that many cooperating
    CTAs (a thread block cluster on NVIDIA), which `tile-split-program`
    gives a part of each block; the result is this CTA's index among them,
    from 0 to num_ctas - 1.
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Creation and shape
//===----------------------------------------------------------------------===//

def Tile_MakeRangeOp : Tile_Op<"make_range", [Pure,
    DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>]> {
  let summary = "The 1-D block [start, end) of i32";
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_SplatOp : Tile_Op<"splat", [Pure,
    DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>,
    TypesMatchWith<"element type of the result is the source type",
                   "result", "src", "::mlir::cast<::mlir::RankedTensorType>($_self).getElementType()">]> {
  let summary = "A block whose every element is the scalar source";
  let arguments = (ins Tile_Scalar:$src);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>]> {
  let summary = "Repeats a block along its dimensions of size 1";
  let arguments = (ins Tile_Tensor:$src);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_ExpandDimsOp : Tile_Op<"expand_dims", [Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>]> {
  let summary = "Inserts a dimension of size 1 at `axis`";
  let arguments = (ins Tile_Tensor:$src, I32Attr:$axis);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ReshapeOp : Tile_Op<"reshape", [Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>]> {
  let summary = "Reinterprets a block with another shape of the same size (row-major order)";
  let arguments = (ins Tile_Tensor:$src);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_TransOp : Tile_Op<"trans", [Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>]> {
  let summary = "Permutes the dimensions of a block";
  let description = [{
    Result dimension `i` is source dimension `order[i]`.

    A splat transposes to itself (folded). Canonicalization reads a
    transposed load that is a dot's operand directly (a load of the
    transposed pointers, mask and `other`) where the load has no other use
    and its types no layout: a dot's `b.T` is then a load, which pipelines
    prefetch.
  }];
  let arguments = (ins Tile_Tensor:$src, DenseI32ArrayAttr:$order);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def Tile_AddPtrOp : Tile_Op<"addptr", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "Advances pointers by a number of elements";
  let arguments = (ins Tile_PtrLike:$ptr, Tile_IntLike:$offset);
  let results = (outs Tile_PtrLike:$result);
  let assemblyFormat = "$ptr `,` $offset attr-dict `:` type($ptr) `,` type($offset)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_IntToPtrOp : Tile_Op<"int_to_ptr", [Pure, Elementwise,
    SameOperandsAndResultShape]> {
  let summary = "Addresses (64-bit integers) as pointers";
  let description = [{
    `x.to(tl.pointer_type(T))` on an int64 block: each element is the byte
    address of a `T` (addresses loaded from memory, or computed from a
    pointer's `ptr_to_int`).
  }];
  let arguments = (ins Tile_I64Like:$src);
  let results = (outs Tile_PtrLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
}

def Tile_PtrToIntOp : Tile_Op<"ptr_to_int", [Pure, Elementwise,
    SameOperandsAndResultShape]> {
  let summary = "Pointers as their byte addresses (64-bit integers)";
  let arguments = (ins Tile_PtrLike:$src);
  let results = (outs Tile_I64Like:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
}

def Tile_PtrCastOp : Tile_Op<"ptr_cast", [Pure, Elementwise,
    SameOperandsAndResultShape]> {
  let summary = "Pointers as pointers to another element type";
  let description = [{
    The same addresses, read as another element type:
    `p.to(tl.pointer_type(tl.uint8))`.
  }];
  let arguments = (ins Tile_PtrLike:$src);
  let results = (outs Tile_PtrLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasFolder = 1;
}

def Tile_LoadOp : Tile_Op<"load", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Reads the elements that pointers point to, where the mask is set";
  let description = [{
    Lanes whose mask is false do not access memory and produce `other`
    (undefined when `other` is absent; lowerings give zero).

    `cache` (ca, cg, cv) and `evict` are hints for GPU caches; a `volatile`
    load is never removed, merged or reordered with other volatile accesses
    (the CPU keeps it volatile and ignores the hints).
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Optional<Tile_BoolLike>:$mask,
                       Optional<Tile_Value>:$other,
                       OptionalAttr<Tile_CacheModifier>:$cache,
                       OptionalAttr<Tile_EvictionPolicy>:$evict,
                       UnitAttr:$isVolatile);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = [{
    $ptr (`mask` $mask^ `:` type($mask))? (`other` $other^ `:` type($other))?
    (`cache` `=` $cache^)? (`evict` `=` $evict^)? (`volatile` $isVolatile^)?
    attr-dict `:` type($ptr) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Writes values to the elements that pointers point to, where the mask is set";
  let description = [{
    `cache` (wb, cg, cs, wt) and `evict` are hints for GPU caches (the CPU
    ignores them).
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Tile_Value:$value, Optional<Tile_BoolLike>:$mask,
                       OptionalAttr<Tile_CacheModifier>:$cache,
                       OptionalAttr<Tile_EvictionPolicy>:$evict);
  let assemblyFormat = [{
    $ptr `,` $value (`mask` $mask^ `:` type($mask))?
    (`cache` `=` $cache^)? (`evict` `=` $evict^)?
    attr-dict `:` type($ptr) `,` type($value)
  }];
  let hasVerifier = 1;
}

def Tile_DescriptorLoadOp : Tile_Op<"descriptor_load", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead]>]> {
  let summary = "Reads the block of a tensor descriptor at `offsets`";
  let description = [{
    A tensor descriptor is the array of `shape` elements at `base` whose
    dimensions are `strides` elements apart (every dimension but the last;
    the last is contiguous). The result is the block of its shape that
    starts at `offsets` (element indices, negative ones too): the array's
    elements inside it, zero (NaN with `nan_padding`) for the rest.
    `tensor_map` is the index of the kernel argument the descriptor came in
    (its base; its shape and strides follow), set for descriptors made on
    the host, which a target may read with its copy engine (TMA); others are
    pointer arithmetic. `tile-lower-descriptors` turns the op into a masked
    `tile.load`.
  }];
  let arguments = (ins Tile_Ptr:$base, Variadic<I32>:$shape,
                       Variadic<I64>:$strides, Variadic<I32>:$offsets,
                       UnitAttr:$nan_padding,
                       OptionalAttr<I32Attr>:$tensor_map);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = [{
    $base `[` $offsets `]` `shape` `[` $shape `]` `strides` `[` $strides `]`
    (`nan_padding` $nan_padding^)? attr-dict `:` type($base) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_DescriptorStoreOp : Tile_Op<"descriptor_store", [AttrSizedOperandSegments,
    MemoryEffects<[MemWrite]>]> {
  let summary = "Writes the block of a tensor descriptor at `offsets`";
  let description = [{
    Writes `value` to the block of the descriptor (see
    `tile.descriptor_load`) that starts at `offsets`: the elements inside
    the array are written, the others are not.
  }];
  let arguments = (ins Tile_Ptr:$base, Variadic<I32>:$shape,
                       Variadic<I64>:$strides, Variadic<I32>:$offsets,
                       Tile_Tensor:$value, OptionalAttr<I32Attr>:$tensor_map);
  let assemblyFormat = [{
    $base `[` $offsets `]` `,` $value `shape` `[` $shape `]` `strides` `[` $strides `]`
    attr-dict `:` type($base) `,` type($value)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicRMWOp : Tile_Op<"atomic_rmw", [
    MemoryEffects<[MemRead, MemWrite]>,
    AllTypesMatch<["val", "result"]>]> {
  let summary = "Atomically combines values with memory; returns the old values";
  let description = [{
    For each element where `mask` is set, atomically replaces the element
    `ptr` points to by `kind(old, val)` and returns `old`; masked-off
    elements touch no memory and return zero. The elements of a block are
    separate atomics, in no particular order between them: two elements
    that point to the same address both apply (each sees the other's
    result or not).

    `fmax`/`fmin` are Triton's: the operation is a signed integer max (min)
    of the bits where `val`'s sign bit is clear and an unsigned integer min
    (max) where it is set, which orders floats by sign and magnitude:
    -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN (NaNs by payload).

    `sem` orders the program's other memory accesses around the atomic,
    `scope` says which threads that ordering is for. Memory written through
    the pointers is read and written (`MemRead`, `MemWrite`): an atomic is
    never removed, merged or reordered with other accesses.
  }];
  let arguments = (ins Tile_AtomicRMWKind:$kind, Tile_PtrLike:$ptr,
                       Tile_Value:$val, Optional<Tile_BoolLike>:$mask,
                       Tile_MemSemantic:$sem, Tile_MemSyncScope:$scope);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = [{
    $kind `,` $sem `,` $scope `,` $ptr `,` $val (`mask` $mask^ `:` type($mask))?
    attr-dict `:` type($ptr) `,` type($val)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicCASOp : Tile_Op<"atomic_cas", [
    MemoryEffects<[MemRead, MemWrite]>,
    AllTypesMatch<["cmp", "val", "result"]>]> {
  let summary = "Atomic compare-and-swap; returns the old values";
  let description = [{
    For each element, atomically: reads `old` where `ptr` points, writes
    `val` there if the bits of `old` equal those of `cmp` (floats compare
    as bits: -0.0 is not 0.0, a NaN equals the same NaN), and returns
    `old`. Elements are 16, 32 or 64 bits wide. `sem` and `scope` as for
    tile.atomic_rmw.
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Tile_Value:$cmp, Tile_Value:$val,
                       Tile_MemSemantic:$sem, Tile_MemSyncScope:$scope);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = [{
    $sem `,` $scope `,` $ptr `,` $cmp `,` $val attr-dict `:` type($ptr) `,`
    type($val)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Facts the compiler may assume
//===----------------------------------------------------------------------===//

def Tile_AssumeOp : Tile_Op<"assume",
    [MemoryEffects<[MemWrite<Tile_AssumptionResource>]>]> {
  let summary = "Lets the compiler assume that a condition holds";
  let description = [{
    The program is undefined if `cond` is false when the op executes
    (`tl.assume`). The op writes an abstract resource of its own, so it is
    never erased as dead and orders no memory access. Analyses read simple
    forms (`x % 2^k == 0`); the CPU lowers it to `llvm.intr.assume`.
  }];
  let arguments = (ins I1:$cond);
  let assemblyFormat = "$cond attr-dict";
}

def Tile_DebugBarrierOp : Tile_Op<"debug_barrier",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Waits for every thread of the program (tl.debug_barrier)";
  let description = [{
    Every memory access of the program before it completes before any after
    it starts, for every thread of the program: a GPU barrier. A program on
    the CPU runs on one thread, so there it is nothing; its effects keep
    accesses from moving across it.
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Reductions and linear algebra
//===----------------------------------------------------------------------===//

def Tile_ReduceOp : Tile_Op<"reduce", [RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"ReduceReturnOp">]> {
  let summary = "Reduces blocks along an axis with a combine region";
  let description = [{
    All sources have the same shape. The region takes 2N scalars (the N
    accumulated values, then the N new values) and returns N scalars with
    `tile.reduce.return`. The combine function is treated as associative and
    commutative: the lowering may reorder it. Results drop `axis`; reducing a
    1-D block gives scalars.
  }];
  let arguments = (ins Variadic<Tile_Tensor>:$srcs, I32Attr:$axis);
  let results = (outs Variadic<Tile_Value>:$results);
  let regions = (region SizedRegion<1>:$combineOp);
  let assemblyFormat = "$srcs attr-dict `:` type($srcs) `->` type($results) $combineOp";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Tile_ReduceReturnOp : Tile_Op<"reduce.return",
    [HasParent<"ReduceOp">, Pure, Terminator, ReturnLike]> {
  let summary = "Returns the combined values from a reduce region";
  let arguments = (ins Variadic<Tile_Scalar>:$results);
  let assemblyFormat = "$results attr-dict `:` type($results)";
  let builders = [OpBuilder<(ins), [{ /* empty: for the implicit terminator */ }]>];
}

def Tile_ScanOp : Tile_Op<"scan", [RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"ScanReturnOp">]> {
  let summary = "Inclusive scan of blocks along an axis with a combine region";
  let description = [{
    All sources have the same shape, and each result has its source's type:
    element i along `axis` is the combination of elements 0..i (i..n-1 when
    `reverse`), in that order. The region takes 2N scalars (the N values
    accumulated so far, then the N values of the next element) and returns N
    scalars with `tile.scan.return`. The combine function is treated as
    associative, not commutative: a lowering may regroup it, never swap its
    operands.
  }];
  let arguments = (ins Variadic<Tile_Tensor>:$srcs, I32Attr:$axis,
                       UnitAttr:$reverse);
  let results = (outs Variadic<Tile_Tensor>:$results);
  let regions = (region SizedRegion<1>:$combineOp);
  let assemblyFormat = "$srcs attr-dict `:` type($srcs) `->` type($results) $combineOp";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Tile_ScanReturnOp : Tile_Op<"scan.return",
    [HasParent<"ScanOp">, Pure, Terminator, ReturnLike]> {
  let summary = "Returns the combined values from a scan region";
  let arguments = (ins Variadic<Tile_Scalar>:$results);
  let assemblyFormat = "$results attr-dict `:` type($results)";
  let builders = [OpBuilder<(ins), [{ /* empty: for the implicit terminator */ }]>];
}

def Tile_MapElementwiseOp : Tile_Op<"map_elementwise", [RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"MapElementwiseReturnOp">]> {
  let summary = "A scalar function applied to every element of blocks";
  let description = [{
    All sources and results have one shape. The region is applied to groups
    of `pack` elements: it takes `pack` scalars of each source (source 0's,
    then source 1's, ...) and returns `pack` scalars of each result, in the
    same order, with `tile.map_elementwise.return`. Which elements form a
    group is the lowering's choice (the function must treat them alike);
    pack divides the number of elements. The region may hold control flow
    (an `if` that runs only one branch per element).
  }];
  let arguments = (ins Variadic<Tile_Tensor>:$srcs,
                       DefaultValuedAttr<I32Attr, "1">:$pack);
  let results = (outs Variadic<Tile_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$srcs attr-dict `:` type($srcs) `->` type($results) $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Tile_MapElementwiseReturnOp : Tile_Op<"map_elementwise.return",
    [HasParent<"MapElementwiseOp">, Pure, Terminator, ReturnLike]> {
  let summary = "Returns the values of a map_elementwise region";
  let arguments = (ins Variadic<Tile_Scalar>:$results);
  let assemblyFormat = "$results attr-dict `:` type($results)";
  let builders = [OpBuilder<(ins), [{ /* empty: for the implicit terminator */ }]>];
}

def Tile_GatherOp : Tile_Op<"gather", [Pure]> {
  let summary = "Elements of a block picked along an axis by a block of indices";
  let description = [{
    The result has the indices' shape and the source's element type:
    result[i_0, ..., i_r] is src at the same position but along `axis`, where
    it is indices[i_0, ..., i_r]. Source and indices have one rank and agree
    on every dimension but `axis`. An index outside [0, src's size along
    `axis`) gives some element of the source (it never reads outside it).
  }];
  let arguments = (ins Tile_Tensor:$src, Tile_Tensor:$indices, I32Attr:$axis);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$src `[` $indices `]` attr-dict `:` type($src) `,` type($indices) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_DotOp : Tile_Op<"dot", [Pure, AllTypesMatch<["c", "d"]>]> {
  let summary = "Block matrix product with accumulation: d = a * b + c";
  let description = [{
    `a` is [M, K], `b` is [K, N], `c` and `d` are [M, N]. Inputs are converted
    to the accumulator's element type before multiplying. `a` and `b` have one
    element type, except 8-bit floats, whose two kinds (e4m3, e5m2) mix.

    `input_precision` says how GPUs may use tensor cores for fp32 inputs
    (absent: the target's default); `max_num_imprecise_acc` bounds how many
    products an fp8 dot may add in reduced precision before accumulating in
    full (absent: the target's default). The CPU computes every dot as ieee.

    Canonicalization accumulates a sum into the dot, as Triton does:
    `dot(a, b, 0) + d` becomes `dot(a, b, d)` (`acc += tl.dot(a, b)` is
    `acc = tl.dot(a, b, acc)`).
  }];
  let arguments = (ins Tile_Tensor:$a, Tile_Tensor:$b, Tile_Tensor:$c,
                       OptionalAttr<Tile_InputPrecision>:$inputPrecision,
                       OptionalAttr<ConfinedAttr<I32Attr, [IntNonNegative]>>:$maxNumImpreciseAcc);
  let results = (outs Tile_Tensor:$d);
  let assemblyFormat = [{
    $a `,` $b `,` $c (`input_precision` `=` $inputPrecision^)?
    (`max_num_imprecise_acc` `=` $maxNumImpreciseAcc^)?
    attr-dict `:` type($a) `,` type($b) `->` type($d)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Debugging
//===----------------------------------------------------------------------===//

def Tile_PrintOp : Tile_Op<"print",
    [MemoryEffects<[MemWrite<Tile_DebugOutputResource>]>]> {
  let summary = "Prints values at run time, one line per element";
  let description = [{
    `tl.device_print` and `print()` in a kernel. Each element of each operand
    is printed once per program, on its own line, as Triton prints on GPUs:
    `pid (x, y, z) idx (i, j)<prefix>(operand k) <value>`, where the index
    has as many digits as the largest index of its dimension, `(operand k) `
    appears only when there are several operands, and a scalar prints
    `idx ()`. Without operands the line is `pid (x, y, z)<prefix>`.
    Integers print in decimal, signed where `isSigned` says so (one entry per
    operand), floats as `%f`, pointers as `%p`; with `hex`, every value
    prints as its bits in hexadecimal, zero-padded to its width. The order of
    the lines of different programs is unspecified.
  }];
  let arguments = (ins StrAttr:$prefix, UnitAttr:$hex,
                       DenseI32ArrayAttr:$isSigned,
                       Variadic<Tile_Value>:$args);
  let assemblyFormat = [{
    $prefix (`hex` $hex^)? `signed` $isSigned ($args^ `:` type($args))?
    attr-dict
  }];
  let hasVerifier = 1;
}

def Tile_AssertOp : Tile_Op<"assert",
    [MemoryEffects<[MemWrite<Tile_DebugOutputResource>]>]> {
  let summary = "Stops the program when a condition is false";
  let description = [{
    `tl.device_assert` and `assert` on a tensor in a kernel compiled with
    `debug`. Where an element of `condition` is false the program stops
    there and the launch fails, reporting `message`, where the assertion is
    (`file`, `line`, `function`: the kernel) and, where the target knows
    them, the program and the element.
  }];
  let arguments = (ins Tile_BoolLike:$condition, StrAttr:$message,
                       StrAttr:$file, I32Attr:$line, StrAttr:$function);
  let assemblyFormat = [{
    $condition `,` $message `at` $file `:` $line `in` $function attr-dict
    `:` type($condition)
  }];
}

//===----------------------------------------------------------------------===//
// Extension: inline assembly and external functions
//===----------------------------------------------------------------------===//

def Tile_ElementwiseInlineAsmOp : Tile_Op<"elementwise_inline_asm", [
    Elementwise,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Runs inline assembly on each group of elements";
  let description = [{
    `tl.inline_asm_elementwise`: a map whose function is the target's
    assembly (`asm`, with LLVM's `constraints`). All operands and results
    have the same shape (or are all scalars). One instance of the assembly
    handles `packed_element` consecutive elements of a thread; operands and
    results narrower than 32 bits are packed into 32-bit registers, as many
    as fit (up to `packed_element`). Without `pure` the assembly may have
    side effects and is never removed or reordered.
  }];
  let arguments = (ins Variadic<Tile_Value>:$args, StrAttr:$asm_string,
                       StrAttr:$constraints, BoolAttr:$pure,
                       ConfinedAttr<I32Attr, [IntPositive]>:$packed_element);
  let results = (outs Variadic<Tile_Value>:$results);
  let assemblyFormat = [{
    $asm_string `,` $constraints ($args^ `:` type($args))? attr-dict
    `->` type($results)
  }];
  let hasVerifier = 1;
}

def Tile_ExternElementwiseOp : Tile_Op<"extern_elementwise", [
    Elementwise,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Calls an external function on each element";
  let description = [{
    `tl.extern_elementwise`: `symbol` of the library `libname` (its file
    `libpath`, possibly empty) applied to the operands element by element
    (all of one shape, or all scalars). NVIDIA's libdevice functions
    (`__nv_*`) are linked on the NVIDIA targets; other targets map the ones
    they know to their own math, and refuse the rest.
  }];
  let arguments = (ins Variadic<Tile_Value>:$args, StrAttr:$libname,
                       StrAttr:$libpath, StrAttr:$symbol, BoolAttr:$pure);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = [{
    $symbol `(` $args `)` attr-dict `:` functional-type($args, $result)
  }];
  let hasVerifier = 1;
}

#endif // TESSEL_TILE_OPS
