// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4" -convert-tilegpu-to-nvvm | FileCheck %s

// A @jit(noinline=True) function stays a function: internal and never
// inlined, each tensor passed as the registers a thread holds (pointers
// of a 64x64 block on 128 threads; one f32 of the replicated row maxima).
// Its conversion's scratch is the program's shared memory; the call claims
// it, after a barrier. Calls are convergent: every thread makes each one
// (LLVM must not sink one into a branch that only some threads take).

// CHECK: module attributes {tilegpu.shared = 256 : i32
// CHECK-LABEL: llvm.func @kernel
// (The kernel's own four conversions start with theirs.)
// CHECK-COUNT-5: nvvm.barrier0
// CHECK-NEXT: llvm.call @row_max_0(%{{[0-9]+}}, {{.*}}) {convergent} : ({{(!llvm.ptr<1>, )+}}!llvm.ptr<1>) -> f32
// CHECK: llvm.func internal @row_max_0({{.*}}) -> f32 attributes {convergent, no_inline
func.func @kernel(%in: !tile.ptr<f16>, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %c64 = arith.constant dense<64> : tensor<64xi32>
  %rows = arith.muli %r, %c64 : tensor<64xi32>
  %re = tile.expand_dims %rows {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %ce = tile.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rb = tile.broadcast %re : tensor<64x1xi32> -> tensor<64x64xi32>
  %cb = tile.broadcast %ce : tensor<1x64xi32> -> tensor<64x64xi32>
  %offs = arith.addi %rb, %cb : tensor<64x64xi32>
  %base = tile.splat %in : tensor<64x64x!tile.ptr<f16>>
  %ptrs = tile.addptr %base, %offs : tensor<64x64x!tile.ptr<f16>>, tensor<64x64xi32>
  %m = call @row_max_0(%ptrs) : (tensor<64x64x!tile.ptr<f16>>) -> tensor<64xf32>
  %obase = tile.splat %out : tensor<64x!tile.ptr<f32>>
  %optrs = tile.addptr %obase, %r : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  tile.store %optrs, %m : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  return
}

func.func private @row_max_0(%p: tensor<64x64x!tile.ptr<f16>>) -> tensor<64xf32> {
  %x = tile.load %p : tensor<64x64x!tile.ptr<f16>> -> tensor<64x64xf16>
  %w = arith.extf %x : tensor<64x64xf16> to tensor<64x64xf32>
  %m = tile.reduce %w {axis = 1 : i32} : tensor<64x64xf32> -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    %t = arith.maximumf %a, %b : f32
    tile.reduce.return %t : f32
  }
  return %m : tensor<64xf32>
}
