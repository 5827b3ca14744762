// RUN: not tessel-opt %s -convert-tile-to-loops 2>&1 | FileCheck %s
// Blocks too large for a program's stack are a compile-time error, not a
// stack overflow at run time.
// CHECK: error: 'func.func' op needs 8192 KiB of block buffers per program; the CPU backend allows 4096 KiB: use smaller blocks
func.func @too_big(%p: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 1048576 : i32} : tensor<1048576xi32>
  %ps = tile.splat %p : tensor<1048576x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<1048576x!tile.ptr<f32>>, tensor<1048576xi32>
  %x = tile.load %pa : tensor<1048576x!tile.ptr<f32>> -> tensor<1048576xf32>
  %y = arith.addf %x, %x : tensor<1048576xf32>
  %z = arith.mulf %y, %y : tensor<1048576xf32>
  tile.store %pa, %z : tensor<1048576x!tile.ptr<f32>>, tensor<1048576xf32>
  return
}
