#ifndef TESSEL_TILEGPU_OPS
#define TESSEL_TILEGPU_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
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
  let extraClassDeclaration = [{
    void registerAttributes();
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

class TileGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<TileGPU_Dialect, mnemonic, traits>;

def TileGPU_ConvertLayoutOp : TileGPU_Op<"convert_layout", [Pure]> {
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

#endif // TESSEL_TILEGPU_OPS
