// RUN: tessel-opt %s -int-range-optimizations | FileCheck %s

// Tile ops tell MLIR's integer range analysis what they hold: program ids in
// [0, 2^31 - 1], program counts from 1, a range's block [start, end - 1], and
// splats, broadcasts, reshapes and transposes their source's values. The
// comparisons that follow are then decided (folded to constants).
// CHECK-LABEL: func.func @ranges
// CHECK-DAG: %[[T:.*]] = arith.constant dense<true> : tensor<4x8xi1>
// CHECK-DAG: %[[TS:.*]] = arith.constant true
// CHECK: return %[[T]], %[[T]], %[[TS]], %[[TS]]
func.func @ranges(%n: i32) -> (tensor<4x8xi1>, tensor<4x8xi1>, i1, i1) {
  %r = tile.make_range {start = 3 : i32, end = 11 : i32} : tensor<8xi32>
  %e = tile.expand_dims %r {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
  %b = tile.broadcast %e : tensor<1x8xi32> -> tensor<4x8xi32>
  %c3 = arith.constant dense<3> : tensor<4x8xi32>
  %c10 = arith.constant dense<10> : tensor<4x8xi32>
  %ge = arith.cmpi sge, %b, %c3 : tensor<4x8xi32>
  %le = arith.cmpi sle, %b, %c10 : tensor<4x8xi32>
  %pid = tile.get_program_id 0
  %np = tile.get_num_programs 1
  %c0 = arith.constant 0 : i32
  %nonneg = arith.cmpi sge, %pid, %c0 : i32
  %pos = arith.cmpi sgt, %np, %c0 : i32
  return %ge, %le, %nonneg, %pos : tensor<4x8xi1>, tensor<4x8xi1>, i1, i1
}

// The same bound survives a reshape: not decided where it could
// fail (x < 10 for x in [3, 10]).
// CHECK-LABEL: func.func @undecided
// CHECK: arith.cmpi slt
func.func @undecided() -> tensor<2x4xi1> {
  %r = tile.make_range {start = 3 : i32, end = 11 : i32} : tensor<8xi32>
  %s = tile.reshape %r : tensor<8xi32> -> tensor<2x4xi32>
  %c10 = arith.constant dense<10> : tensor<2x4xi32>
  %lt = arith.cmpi slt, %s, %c10 : tensor<2x4xi32>
  return %lt : tensor<2x4xi1>
}
