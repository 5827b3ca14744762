// RUN: not tessel-opt %s -convert-tile-to-tilegpu 2>&1 | FileCheck %s
// Layouts are linear maps over GF(2): block shapes must be powers of two.
// CHECK: error: 'tile.make_range' op GPU layouts need power-of-two block shapes
func.func @odd(%x: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 12 : i32} : tensor<12xi32>
  return
}
