// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4 compute-capability=80" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// An fp32 dot (default precision: tf32) rounds each element a thread holds
// to tf32 (cvt.rna) before staging both operands in shared memory, K
// contiguous, then loads its fragments with ldmatrix (A's four words with
// .x4, B's two with .x2: 16-byte runs along K are 8x8 matrices of 16-bit
// pairs), no word at a time, and runs mma.sync m16n8k8 on tf32: 64x64 on
// 2 x 2 warps is 2 x 4 tiles of 16x8 per warp, 8 K steps. The same holds
// for the other inputs below.
// CHECK-LABEL: llvm.func @tf32
// CHECK: nvvm.convert.float.to.tf32 {{.*}}rnd = #nvvm.fp_rnd_mode<rna>
// CHECK: nvvm.barrier0
// CHECK-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.ldmatrix {{.*}}num = 4 : i32
// CHECK-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.ldmatrix {{.*}}num = 2 : i32
// CHECK-COUNT-64: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// CHECK-NOT: nvvm.mma.sync
func.func @tf32(%a: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %as = tile.splat %a : tensor<64x64x!tile.ptr<f32>>
  %aa = tile.addptr %as, %i : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  %x = tile.load %aa : tensor<64x64x!tile.ptr<f32>> -> tensor<64x64xf32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %x, %x, %zero : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %d : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}

// -----

// int8 into int32: a fragment register is four int8 consecutive along K,
// one 4-byte word; mma.sync m16n8k32 on s8 with wrapping sums: 8 tiles per
// warp, 2 K steps.
// CHECK-LABEL: llvm.func @int8
// CHECK-NOT: nvvm.convert.float.to.tf32
// CHECK: nvvm.barrier0
// CHECK-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.ldmatrix {{.*}}num = 4 : i32
// CHECK: nvvm.ldmatrix {{.*}}num = 2 : i32
// CHECK-COUNT-16: nvvm.mma.sync {{.*}}{intOverflowBehavior = #nvvm.mma_int_overflow<wrapped>, {{.*}}multiplicandAPtxType = #nvvm.mma_type<s8>, multiplicandBPtxType = #nvvm.mma_type<s8>, shape = #nvvm.shape<m = 16, n = 8, k = 32>}
// CHECK-NOT: nvvm.mma.sync
func.func @int8(%a: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %out: !tile.ptr<i32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %as = tile.splat %a : tensor<64x64x!tile.ptr<i8>>
  %aa = tile.addptr %as, %i : tensor<64x64x!tile.ptr<i8>>, tensor<64x64xi32>
  %x = tile.load %aa : tensor<64x64x!tile.ptr<i8>> -> tensor<64x64xi8>
  %zero = arith.constant dense<0> : tensor<64x64xi32>
  %d = tile.dot %x, %x, %zero : tensor<64x64xi8>, tensor<64x64xi8> -> tensor<64x64xi32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<i32>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<i32>>, tensor<64x64xi32>
  tile.store %oa, %d : tensor<64x64x!tile.ptr<i32>>, tensor<64x64xi32>
  return
}

// -----

// tf32x3: the fp32 inputs are staged whole; each fragment word read is split
// into hi = tf32(x) and lo = tf32(x - hi), and every tile and K step takes
// three tf32 instructions (hi * lo, lo * hi, then hi * hi): 3 x 64.
// CHECK-LABEL: llvm.func @tf32x3
// CHECK: nvvm.barrier0
// CHECK-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.ldmatrix {{.*}}num = 4 : i32
// CHECK: nvvm.ldmatrix {{.*}}num = 2 : i32
// CHECK: nvvm.convert.float.to.tf32 {{.*}}rnd = #nvvm.fp_rnd_mode<rna>
// CHECK: llvm.fsub
// CHECK: nvvm.convert.float.to.tf32 {{.*}}rnd = #nvvm.fp_rnd_mode<rna>
// CHECK-COUNT-192: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// CHECK-NOT: nvvm.mma.sync
func.func @tf32x3(%a: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %as = tile.splat %a : tensor<64x64x!tile.ptr<f32>>
  %aa = tile.addptr %as, %i : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  %x = tile.load %aa : tensor<64x64x!tile.ptr<f32>> -> tensor<64x64xf32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %x, %x, %zero input_precision = tf32x3 : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %d : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}

// -----

// 8-bit floats into fp32 (what tile-expand-fp8 leaves for sm_89 and newer):
// the int8 path's fragments, four elements per word, on the m16n8k32
// intrinsic named by each operand's kind (the nvvm op has no fp8 inputs):
// e4m3 x e5m2, 8 tiles per warp, 2 K steps.
// CHECK-LABEL: llvm.func @fp8
// CHECK: nvvm.barrier0
// CHECK-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.ldmatrix {{.*}}num = 4 : i32
// CHECK: nvvm.ldmatrix {{.*}}num = 2 : i32
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e5m2.f32"({{.*}}) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: llvm.call_intrinsic
// CHECK-NOT: nvvm.mma.sync
func.func @fp8(%a: !tile.ptr<f8E4M3FN> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f8E5M2> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %as = tile.splat %a : tensor<64x64x!tile.ptr<f8E4M3FN>>
  %aa = tile.addptr %as, %i : tensor<64x64x!tile.ptr<f8E4M3FN>>, tensor<64x64xi32>
  %x = tile.load %aa : tensor<64x64x!tile.ptr<f8E4M3FN>> -> tensor<64x64xf8E4M3FN>
  %bs = tile.splat %b : tensor<64x64x!tile.ptr<f8E5M2>>
  %ba = tile.addptr %bs, %i : tensor<64x64x!tile.ptr<f8E5M2>>, tensor<64x64xi32>
  %y = tile.load %ba : tensor<64x64x!tile.ptr<f8E5M2>> -> tensor<64x64xf8E5M2>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %x, %y, %zero : tensor<64x64xf8E4M3FN>, tensor<64x64xf8E5M2> -> tensor<64x64xf32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %d : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}
