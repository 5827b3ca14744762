// RUN: tessel-opt %s -inline | FileCheck %s

// A @jit(noinline=True) function as the front end makes it: private, called
// twice. The tile pipeline inlines it (tile ops and their combine regions are
// legal to inline) and drops the function once no call is left.

// CHECK-NOT: func.func private @row_sum_0
// CHECK-LABEL: func.func @kernel
// CHECK-NOT: call
// CHECK: tile.load
// CHECK: tile.reduce
// CHECK: tile.reduce.return
// CHECK: tile.reduce
// CHECK: tile.reduce.return
// CHECK: tile.store
// CHECK-NOT: call
func.func private @row_sum_0(%p: tensor<64x!tile.ptr<f32>>) -> f32 {
  %x = tile.load %p : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  %s = tile.reduce %x {axis = 0 : i32} : tensor<64xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tile.reduce.return %t : f32
  }
  return %s : f32
}

func.func @kernel(%in: tensor<64x!tile.ptr<f32>>, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = call @row_sum_0(%in) : (tensor<64x!tile.ptr<f32>>) -> f32
  %b = call @row_sum_0(%in) : (tensor<64x!tile.ptr<f32>>) -> f32
  %c = arith.addf %a, %b : f32
  tile.store %out, %c : !tile.ptr<f32>, f32
  return
}
