#ifndef TESSEL_TILEGPU_OPS
#define TESSEL_TILEGPU_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferIntRangeInterface.td"
include "mlir/IR/TensorEncoding.td"

def TileGPU_Dialect : Dialect {
  let name = "tilegpu";
  let cppNamespace = "::tessel::tilegpu";
  let summary = "Tile IR distributed over the threads of a GPU program";
  let description = [{
    The GPU backends' view of tile IR: every tensor carries a layout, the
    encoding of its type, that says which register of which lane of which
    warp holds each element. Layouts are linear maps over GF(2)
    (`tessel::gpu::LinearLayout`); `#tilegpu.linear` spells one out by the
    basis vector of every register, lane, warp and block bit.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  // Folded layout conversions of constants become arith.constant.
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

class TileGPU_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<TileGPU_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def TileGPU_LinearEncodingAttr : TileGPU_Attr<"LinearEncoding", "linear",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "A register layout as a linear map over GF(2)";
  let description = [{
    `#tilegpu.linear<register = [[0, 1], [8, 0]], lane = [...], warp = [...],
    block = []>`: bit b of each hardware index maps to the b-th basis vector
    (one coordinate per tensor dimension); an index maps to the XOR of the
    bases of its set bits. An all-zero basis means the values along that bit
    are copies.
  }];
  let parameters = (ins
    "unsigned":$rank,
    ArrayRefParameter<"int32_t">:$registerBases,
    ArrayRefParameter<"int32_t">:$laneBases,
    ArrayRefParameter<"int32_t">:$warpBases,
    ArrayRefParameter<"int32_t">:$blockBases);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The layout of a tensor of `shape` (the shape the bases address).
    ::tessel::gpu::LinearLayout toLinearLayout(::llvm::ArrayRef<int64_t> shape) const;
    static LinearEncodingAttr get(::mlir::MLIRContext *ctx,
                                  const ::tessel::gpu::LinearLayout &layout);
    unsigned getNumRegisters() const { return 1u << (getRegisterBases().size() / std::max(1u, getRank())); }
    unsigned getNumLanes() const { return 1u << (getLaneBases().size() / std::max(1u, getRank())); }
    unsigned getNumWarps() const { return 1u << (getWarpBases().size() / std::max(1u, getRank())); }
  }];
}

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

def TileGPU_SharedOrder : I32EnumAttr<"SharedOrder",
    "How a shared-memory slot arranges its swizzle atoms", [
      I32EnumAttrCase<"KMajor", 0, "k_major">,
      I32EnumAttrCase<"MNMajor", 1, "mn_major">,
      I32EnumAttrCase<"Gather", 2, "gather">,
      I32EnumAttrCase<"Padded", 3, "padded">]> {
  let cppNamespace = "::tessel::tilegpu";
  let genSpecializedAttr = 0;
}

def TileGPU_SharedBufferType : TypeDef<TileGPU_Dialect, "SharedBuffer"> {
  let mnemonic = "shared";
  let summary = "A multi-buffered tile in the program's shared memory";
  let description = [{
    `!tilegpu.shared<3x64x32xf16, k_major, swizzle = 64>`: `slots` copies
    (the first dimension) of a rows x columns tile (the other two), each in
    the swizzled layout a tensor-core operand is read from: the columns are
    contiguous in 16-byte chunks whose position in a row is XORed with the
    row (`swizzle` bytes: 32, 64 or 128). `k_major` lays the tile out as
    `gpu::wgmmaOperandLayout(rows, columns)` (swizzle atoms along the
    columns outermost: an A operand, M x K), `mn_major` as
    `gpu::wgmmaMNMajorOperandLayout(rows, columns)` (columns of swizzle
    atoms, each all the rows, outermost: a B operand as it comes, K x N).
    Both are free of bank
    conflicts for ldmatrix and are what wgmma descriptors read. `gather`
    (8-bit or 32-bit elements, `swizzle` the bytes of a row up to 128) is
    for the operands of mma.sync whose K is not contiguous, read a 32-bit
    fragment word at a time: rows of K as
    `gpu::gatherOperandLayout(rows, columns)`, so that the 4 rows of K a
    warp's reads reach fall on different banks.
    `transposed` stores the tile as its transpose, columns x rows in that
    layout, so that the rows are contiguous: B loaded K-contiguous
    (`k_major, transposed`: N x K as wgmmaOperandLayout) or A loaded
    M-contiguous (`mn_major, transposed` or `gather, transposed`: K x M).

    `padded` (`!tilegpu.shared<2x64x32xf16, padded, pad = 16>`) is the
    layout AMD's MFMA dots stage their operands in: the stored tile's rows
    one after another, with `pad` bytes (4, 8, 16 or 32; the `swizzle`
    parameter holds them) after every 128 bytes of rows, or after every row
    where rows are longer. Lanes reading down a column of rows, or writing
    along them, then fall on different banks, and an element's address is
    its row and column times constants (no XOR), which fold into the
    instructions' offsets. The slot layout is the unpadded row-major order;
    getRowPadding says where the padding goes.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::tessel::tilegpu::SharedOrder":$order,
                        "bool":$transposed,
                        "int32_t":$swizzle);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumSlots() const { return getShape()[0]; }
    int32_t getRows() const { return getShape()[1]; }
    int32_t getColumns() const { return getShape()[2]; }
    /// Bytes of one element.
    int32_t getElementBytes() const;
    /// Bytes of one slot, and the distance between slots (a multiple of
    /// 1024, where every swizzle pattern starts over; of 128 for `padded`).
    int64_t getSlotBytes() const;
    int64_t getSlotStride() const;
    /// "offset" (elements from the slot's start) -> [row, column]. For a
    /// `padded` slot, offsets before padding (row-major).
    ::tessel::gpu::LinearLayout getSlotLayout() const;
    /// A `padded` slot's stored rows: the elements of a row, how many rows
    /// precede each padding and the padding's elements.
    int32_t getRowElements() const;
    int32_t getPaddedRows() const;
    int32_t getPadElements() const;
  }];
}

def TileGPU_MBarriersType : TypeDef<TileGPU_Dialect, "MBarriers"> {
  let mnemonic = "mbarriers";
  let summary = "Transaction barriers in the program's shared memory";
  let description = [{
    `!tilegpu.mbarriers<3>`: that many mbarriers (8 bytes each), one per
    pipeline slot. The copy engine's copies into a slot complete the phase
    of the slot's barrier; threads wait on the phase's parity.
  }];
  let parameters = (ins "int64_t":$count);
  let assemblyFormat = "`<` $count `>`";
  let genVerifyDecl = 1;
}

class TileGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<TileGPU_Dialect, mnemonic, traits>;

def TileGPU_ConvertLayoutOp : TileGPU_Op<"convert_layout", [Pure,
    DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>]> {
  let summary = "Moves a tensor's elements to another layout";
  let description = [{
    The same tensor, held by the threads as its result type's layout says.
    Lowered to register moves, warp shuffles or a round trip through shared
    memory, whichever the two layouts need.
  }];
  let arguments = (ins AnyRankedTensor:$src);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TileGPU_BarrierOp : TileGPU_Op<"barrier"> {
  let summary = "Orders the memory accesses of a program's threads";
  let description = [{
    Every thread of the program reaches it before any goes on, and global and
    shared memory accesses before it are visible to every thread after it.
    Tile IR's control flow is uniform across a program's threads, so a
    barrier anywhere in it is reached by all of them.
  }];
  let assemblyFormat = "attr-dict";
}

def TileGPU_LocalAllocOp : TileGPU_Op<"local_alloc",
    [MemoryEffects<[MemAlloc]>]> {
  let summary = "A shared-memory buffer for the whole function";
  let description = [{
    Reserves the buffer's slots in the program's shared memory, apart from
    the scratch that layout conversions, reductions and dots reuse. Offsets
    are assigned when the function is lowered.
  }];
  let results = (outs TileGPU_SharedBufferType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def TileGPU_AsyncCopyOp : TileGPU_Op<"async_copy",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Starts copying a block from global memory into a slot";
  let description = [{
    Each thread starts copying the elements it holds (the pointers' layout)
    from global memory into slot `slot` of `buffer`, without going through
    registers (cp.async); elements whose mask is false become zero. The copy
    is pending until an `async_commit` closes its group and an `async_wait`
    has seen the group complete; then a barrier publishes every thread's
    copies.
  }];
  let arguments = (ins TileGPU_SharedBufferType:$buffer, I32:$slot,
                       AnyRankedTensor:$ptr, Optional<AnyRankedTensor>:$mask);
  let assemblyFormat = [{
    $ptr `to` $buffer `[` $slot `]` (`mask` $mask^ `:` type($mask))?
    attr-dict `:` type($ptr) `,` qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

def TileGPU_AsyncCommitOp : TileGPU_Op<"async_commit",
    [MemoryEffects<[MemWrite]>]> {
  let summary = "Closes the group of the thread's pending async copies";
  let assemblyFormat = "attr-dict";
}

def TileGPU_AsyncWaitOp : TileGPU_Op<"async_wait",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Waits until at most `pending` groups of copies are in flight";
  let description = [{
    The thread's groups of async copies, all but the last `pending`, are
    complete after it: their data is in shared memory for this thread. A
    barrier after it makes every thread's copies visible to all.
    `async_proxy` also makes them visible to the asynchronous proxy
    (wgmma's operand reads).
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntNonNegative]>:$pending,
                       UnitAttr:$async_proxy);
  let assemblyFormat = "attr-dict";
}

def TileGPU_LocalLoadOp : TileGPU_Op<"local_load",
    [MemoryEffects<[MemRead]>]> {
  let summary = "Reads a slot of a shared-memory buffer into registers";
  let description = [{
    The tile in slot `slot` of `buffer`, in the result's layout. A
    `tile.dot` whose operand is a `local_load` (possibly through a
    `convert_layout`) of a buffer in the layout the dot's instruction reads
    takes its fragments straight from the slot (ldmatrix, or wgmma
    descriptors) instead of going through registers.
  }];
  let arguments = (ins TileGPU_SharedBufferType:$buffer, I32:$slot);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $buffer `[` $slot `]` attr-dict `:` qualified(type($buffer)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGPU_LocalStoreOp : TileGPU_Op<"local_store",
    [MemoryEffects<[MemWrite]>]> {
  let summary = "Writes a tile from registers into a slot of a shared-memory buffer";
  let description = [{
    Each thread writes the elements it holds (`value`'s layout; one copy of
    each) into slot `slot` of `buffer`, in the buffer's swizzled layout. A
    barrier must follow before other threads read the slot. With
    `async_proxy` the writes are also fenced for the async proxy, so that
    wgmma descriptors may read the slot.
  }];
  let arguments = (ins AnyRankedTensor:$value, TileGPU_SharedBufferType:$buffer,
                       I32:$slot, UnitAttr:$async_proxy);
  let assemblyFormat = [{
    $value `,` $buffer `[` $slot `]` attr-dict `:` type($value) `,` qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

def TileGPU_TmaLoadOp : TileGPU_Op<"tma_load", [MemoryEffects<[MemRead]>]> {
  let summary = "Reads a tensor descriptor's block with the copy engine (TMA)";
  let description = [{
    The block of the result's shape at `offsets` (element indices, outermost
    first) of the array the tensor map `map` describes: the elements inside
    it, and the fill the map says (zero or NaN) for the rest. `map` is a
    kernel argument (a 128-byte tensor map passed by value); one thread
    starts the copy into shared memory, every thread waits for it on an
    mbarrier, then reads its elements in the result's layout. The shared
    memory is the op's own scratch, as a layout conversion's: the op only
    reads memory. `swizzle` as for `tma_store`: the block lands as a
    `k_major` slot holds it, one copy per atom column.
  }];
  let arguments = (ins AnyType:$map, Variadic<I32>:$offsets,
                       DefaultValuedAttr<I32Attr, "0">:$swizzle);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $map `[` $offsets `]` attr-dict `:` type($map) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGPU_TmaStoreOp : TileGPU_Op<"tma_store", [MemoryEffects<[MemWrite]>]> {
  let summary = "Writes a tensor descriptor's block with the copy engine (TMA)";
  let description = [{
    Writes `value` (in any layout) to the block at `offsets` of the array
    the tensor map `map` describes; elements outside the array are not
    written. Every thread writes its elements into the op's shared-memory
    scratch, then one thread has the copy engine store the block and waits
    for it to complete. With `swizzle` (32, 64 or 128 bytes; 2-d blocks of
    whole 8-row groups whose rows span it) the scratch holds the block as a
    `k_major` slot does, swizzle atoms along the rows, and the map's box is
    one atom wide (one copy per atom); 0: row-major, the map's box the block.
  }];
  let arguments = (ins AnyType:$map, Variadic<I32>:$offsets,
                       AnyRankedTensor:$value,
                       DefaultValuedAttr<I32Attr, "0">:$swizzle);
  let assemblyFormat = [{
    $map `[` $offsets `]` `,` $value attr-dict `:` type($map) `,` type($value)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}


def TileGPU_MBarrierAllocOp : TileGPU_Op<"mbarrier_alloc",
    [MemoryEffects<[MemAlloc, MemWrite]>]> {
  let summary = "Shared-memory mbarriers, initialized";
  let description = [{
    Reserves the barriers in the program's shared memory (offsets assigned
    when the function is lowered, as for `local_alloc`) and has one thread
    initialize each for `arrivals` arrivals per phase; a barrier then makes
    them initialized for every thread. `mbarrier_inval` ends their life.
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntPositive]>:$arrivals);
  let results = (outs TileGPU_MBarriersType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def TileGPU_AsyncTmaCopyOp : TileGPU_Op<"async_tma_copy",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Starts the copy engine's copy of a block into a slot";
  let description = [{
    Where `pred` holds, one thread has the copy engine (TMA) copy the block
    at `offsets` (outermost first) of the array the tensor map `map`
    describes into slot `slot` of `buffer`, whose tile the block is as
    stored (the transpose of the slot's tile for a `transposed` slot). The
    slot is `k_major` or `mn_major`: columns of swizzle atoms along the
    contiguous dimension, each all the stored rows. The map's box is one
    such column, its swizzle the slot's, and the block takes one copy per
    column (`tmaSlotBox`, `tmaSlotBoxes`). Each copy arrives on barrier
    `slot` of `barriers` expecting its bytes; elements outside the array
    land as the map's fill. Every thread may read the slot once it has waited for the
    barrier's phase (`mbarrier_wait`).
  }];
  let arguments = (ins AnyType:$map, Variadic<I32>:$offsets,
                       TileGPU_SharedBufferType:$buffer, I32:$slot,
                       TileGPU_MBarriersType:$barriers, I1:$pred);
  let assemblyFormat = [{
    $map `[` $offsets `]` `to` $buffer `[` $slot `]` `,` $barriers `if` $pred
    attr-dict `:` type($map) `,` qualified(type($buffer)) `,`
    qualified(type($barriers))
  }];
  let hasVerifier = 1;
}

def TileGPU_MBarrierWaitOp : TileGPU_Op<"mbarrier_wait",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Waits for a phase of one of the mbarriers";
  let description = [{
    Every thread waits until the phase of parity `phase` (0 or 1) of barrier
    `index` completed: the copies it tracked have landed and are visible to
    the thread.
  }];
  let arguments = (ins TileGPU_MBarriersType:$barriers, I32:$index,
                       I32:$phase);
  let assemblyFormat = [{
    $barriers `[` $index `]` `,` $phase attr-dict `:` qualified(type($barriers))
  }];
}

def TileGPU_MBarrierInvalOp : TileGPU_Op<"mbarrier_inval",
    [MemoryEffects<[MemWrite]>]> {
  let summary = "Ends the life of mbarriers";
  let description = [{
    Once every thread reached it (a barrier first), one thread invalidates
    each barrier, so that their bytes may be used for anything else. No copy
    may be in flight on them.
  }];
  let arguments = (ins TileGPU_MBarriersType:$barriers);
  let assemblyFormat = "$barriers attr-dict `:` qualified(type($barriers))";
}

def TileGPU_WarpgroupMmaWaitOp : TileGPU_Op<"warpgroup_mma_wait",
    [AttrSizedOperandSegments, MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Waits until at most `pending` groups of warpgroup MMAs are "
                "in flight";
  let description = [{
    The dots marked `tilegpu.in_flight` commit their MMAs without waiting
    for them. Here each warp waits until at most `pending` of its committed
    groups are in flight. The results are `values`, accumulators of the
    groups retired, as they are once complete; `buffers` are the shared
    memory those MMAs read, live until here.
  }];
  let arguments = (ins Variadic<AnyType>:$values,
                       Variadic<TileGPU_SharedBufferType>:$buffers,
                       ConfinedAttr<I32Attr, [IntNonNegative]>:$pending);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    ($values^ `:` type($values))? (`reads` $buffers^ `:` qualified(type($buffers)))?
    attr-dict (`->` type($results)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// AMD buffer accesses
//===----------------------------------------------------------------------===//

def TileGPU_BufferLoadOp : TileGPU_Op<"buffer_load",
    [AttrSizedOperandSegments, MemoryEffects<[MemRead]>]> {
  let summary = "Reads base[offsets] through a buffer resource (AMD)";
  let description = [{
    The elements at `offsets` (i32 element offsets, the layout of the
    result) from the one pointer `base` of the whole program: a buffer
    resource (V#) made of `base` in scalar registers, and one 32-bit byte
    offset per access in a vector register, where a global load takes a
    64-bit address. Where `mask` is false the access is given an offset
    past the resource's range, which the hardware's range check answers
    with zeros without reading memory; `other` then replaces them (zeros
    without `other`). `amd-buffer-accesses` makes these only where it proved
    every offset non-negative and every byte offset of an access below
    the range (2^31 - 2 bytes). `tilegpu.vector` sets the access width as
    on `tile.load`.
  }];
  let arguments = (ins AnyType:$base, AnyRankedTensor:$offsets,
                       Optional<AnyRankedTensor>:$mask,
                       Optional<AnyRankedTensor>:$other);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $base `[` $offsets `]` (`mask` $mask^ `:` type($mask))?
    (`other` $other^ `:` type($other))?
    attr-dict `:` type($base) `,` type($offsets) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGPU_BufferStoreOp : TileGPU_Op<"buffer_store",
    [MemoryEffects<[MemWrite]>]> {
  let summary = "Writes base[offsets] through a buffer resource (AMD)";
  let description = [{
    Writes `value` to the elements at `offsets` of `base`, as
    `buffer_load` reads them: one copy of each element, and lanes whose
    `mask` is false (or that hold a copy) write at an offset past the
    resource's range, which the hardware drops: no branch.
  }];
  let arguments = (ins AnyType:$base, AnyRankedTensor:$offsets,
                       AnyRankedTensor:$value, Optional<AnyRankedTensor>:$mask);
  let assemblyFormat = [{
    $value `,` $base `[` $offsets `]` (`mask` $mask^ `:` type($mask))?
    attr-dict `:` type($value) `,` type($base) `,` type($offsets)
  }];
  let hasVerifier = 1;
}

#endif // TESSEL_TILEGPU_OPS
