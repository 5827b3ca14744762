// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4 compute-capability=90" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s --check-prefixes=CHECK,WG4
// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=8 compute-capability=90" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s --check-prefixes=CHECK,WG8

// A dot on warpgroup MMA (sm_90a). A (64 x 128) is stored K-major with the
// 128-byte swizzle, two atoms of 64 columns along K; B (128 x 16) starts at
// the next multiple of 1024 bytes (A's 16 KiB), so the program needs
// 16 KiB + 4 KiB and the shared array is 1024-byte aligned. Each thread's 4
// consecutive elements stay together under the swizzle (16-byte chunks
// move as a whole): vector stores. A proxy fence then a barrier publish the
// tiles to the tensor cores. A's descriptors: 128B swizzle (1 << 62),
// stride offset 1024 bytes (8 rows of 128 bytes; 64 << 32), leading offset
// unused (1 << 16).
// Four warps: one warpgroup, eight K steps of m64n16k16 on one accumulator.
// B is N-major as it comes (vector stores too) with the 32-byte swizzle of
// the instruction's 16 columns: 3 << 62, columns of atoms along N (all 128
// rows of K of 32 bytes) 4096 bytes apart (256 << 16), groups of 8 rows of
// K 256 bytes apart (16 << 32).
// Eight warps: 64 rows leave two warpgroups of 8 columns each, m64n8k16;
// 8 columns are too narrow for a swizzle, so B is K-major (transposed:
// element stores) with A's swizzle.
// One commit, one wait, and the accumulators pass through an empty asm
// after it.
// CHECK: module attributes {tilegpu.shared = 20480 : i32
// CHECK: llvm.mlir.global external @tessel_shared() {addr_space = 3 : i32, alignment = 1024 : i64}
// CHECK-LABEL: llvm.func @wgmma_f16(
// CHECK-DAG: llvm.mlir.constant(4611686293305360384 : i64) : i64
// WG4-DAG: llvm.mlir.constant(-4611685949691133952 : i64) : i64
// CHECK: nvvm.barrier0
// WG4-COUNT-20: llvm.store {{.*}} : vector<4xf16>, !llvm.ptr<3>
// WG8-COUNT-8: llvm.store {{.*}} : vector<4xf16>, !llvm.ptr<3>
// WG8: llvm.store {{.*}} : f16, !llvm.ptr<3>
// CHECK-NOT: nvvm.barrier0
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.wgmma.fence.aligned
// WG4-COUNT-8: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7}
// WG8-COUNT-8: wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WG4-NEXT: llvm.inline_asm has_side_effects "", "=f,=f,=f,=f,=f,=f,=f,=f,0,1,2,3,4,5,6,7"
// WG8-NEXT: llvm.inline_asm has_side_effects "", "=f,=f,=f,=f,0,1,2,3"
func.func @wgmma_f16(%s: f16, %t: f16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %s : tensor<64x128xf16>
  %b = tile.splat %t : tensor<128x16xf16>
  %zero = arith.constant dense<0.0> : tensor<64x16xf32>
  %d = tile.dot %a, %b, %zero : tensor<64x128xf16>, tensor<128x16xf16> -> tensor<64x16xf32>
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %i = tile.reshape %r : tensor<1024xi32> -> tensor<64x16xi32>
  %os = tile.splat %out : tensor<64x16x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<64x16x!tile.ptr<f32>>, tensor<64x16xi32>
  tile.store %oa, %d : tensor<64x16x!tile.ptr<f32>>, tensor<64x16xf32>
  return
}

// -----

// bf16, K = 32: A's rows of 64 bytes take the 64-byte swizzle (2 << 62,
// stride offset 512 bytes); B's instructions are 64 columns (128 bytes)
// wide: the 128-byte swizzle, N-major, 8-row groups 1024 bytes apart
// (64 << 32), columns of atoms 4096 bytes (256 << 16). 128 rows: four warps repeat their warpgroup's m64n64k16 twice
// along M; eight warps are two warpgroups along M.
// CHECK-LABEL: llvm.func @wgmma_bf16(
// CHECK-DAG: llvm.mlir.constant(-9223371899415756800 : i64) : i64
// CHECK-DAG: llvm.mlir.constant(4611686293322072064 : i64) : i64
// CHECK: nvvm.wgmma.fence.aligned
// WG4-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// WG8-COUNT-2: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @wgmma_bf16(%s: bf16, %t: bf16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %s : tensor<128x32xbf16>
  %b = tile.splat %t : tensor<32x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %d = tile.dot %a, %b, %zero : tensor<128x32xbf16>, tensor<32x64xbf16> -> tensor<128x64xf32>
  %r = tile.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
  %i = tile.reshape %r : tensor<8192xi32> -> tensor<128x64xi32>
  %os = tile.splat %out : tensor<128x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<128x64x!tile.ptr<f32>>, tensor<128x64xi32>
  tile.store %oa, %d : tensor<128x64x!tile.ptr<f32>>, tensor<128x64xf32>
  return
}

// -----

// int8 into int32, K = 64: m64nNk32, K steps of 32 bytes. Both operands are
// K-major (8-bit wgmma has no transpose): A's rows of 64 bytes take the
// 64-byte swizzle (2 << 62, 8-row groups 512 bytes apart), and so does B,
// staged as N x K: its elements go one byte at a time, as B's registers run
// along N. Four warps: m64n32k32 twice; eight: two warpgroups of 16
// columns. The accumulators are i32 through the wait ("=r").
// CHECK: module attributes {tilegpu.shared = 8192 : i32
// CHECK-LABEL: llvm.func @wgmma_int8(
// CHECK: llvm.mlir.constant(-9223371899415756800 : i64) : i64
// CHECK: nvvm.barrier0
// CHECK: llvm.store {{.*}} : vector<4xi8>, !llvm.ptr<3>
// CHECK: llvm.store {{.*}} : i8, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// WG4-COUNT-2: wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.s8 {$0, {{.*}}, $15}, $32, $33, p;
// WG8-COUNT-2: wgmma.mma_async.sync.aligned.m64n16k32.s32.s8.s8 {$0, {{.*}}, $7}, $16, $17, p;
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// WG4-NEXT: llvm.inline_asm has_side_effects "", "=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,0,
// WG8-NEXT: llvm.inline_asm has_side_effects "", "=r,=r,=r,=r,=r,=r,=r,=r,0,
func.func @wgmma_int8(%s: i8, %t: i8, %out: !tile.ptr<i32>) attributes {tile.kernel} {
  %a = tile.splat %s : tensor<64x64xi8>
  %b = tile.splat %t : tensor<64x32xi8>
  %zero = arith.constant dense<0> : tensor<64x32xi32>
  %d = tile.dot %a, %b, %zero : tensor<64x64xi8>, tensor<64x32xi8> -> tensor<64x32xi32>
  %r = tile.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
  %i = tile.reshape %r : tensor<2048xi32> -> tensor<64x32xi32>
  %os = tile.splat %out : tensor<64x32x!tile.ptr<i32>>
  %oa = tile.addptr %os, %i : tensor<64x32x!tile.ptr<i32>>, tensor<64x32xi32>
  tile.store %oa, %d : tensor<64x32x!tile.ptr<i32>>, tensor<64x32xi32>
  return
}

// -----

// e4m3 x e5m2 into fp32, K = 32: one K step of m64nNk32 with the two kinds
// mixed; rows of 32 bytes: the 32-byte swizzle (3 << 62, groups 256 bytes
// apart) for both.
// CHECK-LABEL: llvm.func @wgmma_fp8(
// CHECK: llvm.mlir.constant(-4611685949707845632 : i64) : i64
// CHECK: nvvm.fence.proxy
// WG4: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2
// WG8: wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e5m2
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.inline_asm has_side_effects "", "=f,
func.func @wgmma_fp8(%s: f8E4M3FN, %t: f8E5M2, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %s : tensor<64x32xf8E4M3FN>
  %b = tile.splat %t : tensor<32x64xf8E5M2>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %a, %b, %zero : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E5M2> -> tensor<64x64xf32>
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %d : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}
