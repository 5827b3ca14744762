// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4" | FileCheck %s

// A @jit(noinline=True) function keeps its calls on NVIDIA: every tensor
// crosses a call in its shape's default layout. The row maximum's natural
// layout (lanes holding copies) converts to the default before the return,
// and the function's signature is the one its call has.

// CHECK-LABEL: func.func @kernel
// CHECK: %[[R:.*]] = call @row_max_0(%{{.*}}) : (tensor<64x64x!tile.ptr<f16>, #[[P:linear[0-9]*]]>) -> tensor<64xf32, #[[D:linear[0-9]*]]>
// CHECK: tile.store %{{.*}}, %[[R]] : tensor<64x!tile.ptr<f32>, #[[D]]>, tensor<64xf32, #[[D]]>
// CHECK-LABEL: func.func private @row_max_0
// CHECK-SAME: (%{{.*}}: tensor<64x64x!tile.ptr<f16>, #[[P]]>) -> tensor<64xf32, #[[D]]>
// CHECK: tile.reduce
// CHECK: %[[C:.*]] = tilegpu.convert_layout %{{.*}} -> tensor<64xf32, #[[D]]>
// CHECK-NEXT: return %[[C]]
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
