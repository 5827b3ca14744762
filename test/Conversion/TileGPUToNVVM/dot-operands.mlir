// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 compute-capability=80" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// mma.sync operands held in registers are staged in the swizzled layouts a
// pipeline's slots use (A K-major, B N-major), in vector stores, and read
// with ldmatrix (A .x4, B .trans), as in-place operands are; no 4-byte pair
// loads from shared memory.
// CHECK-LABEL: llvm.func @register_operands
// CHECK: nvvm.barrier0
// CHECK-COUNT-8: llvm.store {{.*}} : vector<4xf16>, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}}!llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-NOT: llvm.load {{.*}}!llvm.ptr<3> -> i32
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4
// CHECK-NOT: llvm.load {{.*}}!llvm.ptr<3> -> i32
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>
// CHECK-NOT: llvm.load {{.*}}!llvm.ptr<3> -> i32
// CHECK: nvvm.mma.sync
func.func @register_operands(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
  %ia = tile.reshape %r : tensor<2048xi32> -> tensor<64x32xi32>
  %ib = tile.reshape %r : tensor<2048xi32> -> tensor<32x64xi32>
  %as = tile.splat %a : tensor<64x32x!tile.ptr<f16>>
  %aa = tile.addptr %as, %ia : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  %bs = tile.splat %b : tensor<32x64x!tile.ptr<f16>>
  %ba = tile.addptr %bs, %ib : tensor<32x64x!tile.ptr<f16>>, tensor<32x64xi32>
  %x = tile.load %aa : tensor<64x32x!tile.ptr<f16>> -> tensor<64x32xf16>
  %y = tile.load %ba : tensor<32x64x!tile.ptr<f16>> -> tensor<32x64xf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %x, %y, %zero : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %r2 = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i2 = tile.reshape %r2 : tensor<4096xi32> -> tensor<64x64xi32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i2 : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %d : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}
