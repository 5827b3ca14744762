// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 compute-capability=90" -canonicalize -tilegpu-remove-layout-conversions -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// On warpgroup MMA, the second of two chained dots takes its A (the first's
// result rounded to fp16, in the wgmma accumulator layout of the one
// warpgroup) from registers: only the first dot stages A, with the proxy
// fence, and its 4 K steps read A through descriptors; the second dot's 2 K
// steps are wgmma with A as four registers (pairs of fp16), B through its
// descriptor, and scale-d a true predicate. Only B is staged for it.
// CHECK-LABEL: llvm.func @chained
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {{.*}}$15}, $32, $33, p,
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.fptrunc
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-2: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}, $31}, {$64, $65, $66, $67}, $68, p, 1, 1, 1;\0A}", "=f,{{.*}},r,r,r,r,l"
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @chained(%s: f16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %q = tile.splat %s : tensor<64x64xf16>
  %k = tile.splat %s : tensor<64x32xf16>
  %v = tile.splat %s : tensor<32x64xf16>
  %z1 = arith.constant dense<0.0> : tensor<64x32xf32>
  %z2 = arith.constant dense<0.0> : tensor<64x64xf32>
  %qk = tile.dot %q, %k, %z1 : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
  %p = arith.truncf %qk : tensor<64x32xf32> to tensor<64x32xf16>
  %o = tile.dot %p, %v, %z2 : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %o : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}
