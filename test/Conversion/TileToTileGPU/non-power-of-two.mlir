// RUN: not tessel-opt %s -split-input-file -convert-tile-to-tilegpu 2>&1 | FileCheck %s
// Layouts are linear maps over GF(2): block shapes must be powers of two;
// and a thread holds at most 1024 elements of a block.
// CHECK: error: 'tile.make_range' op GPU layouts need power-of-two block shapes
func.func @odd(%x: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 12 : i32} : tensor<12xi32>
  return
}

// -----

// CHECK: error: 'tile.make_range' op a block of 262144 elements needs 2048 registers per thread on 4 warps; the GPU backends allow 1024: use smaller blocks or more warps (num_warps)
func.func @huge(%x: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 262144 : i32} : tensor<262144xi32>
  return
}
