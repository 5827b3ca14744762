// RUN: tessel-opt %s -tile-lower-descriptors="tensor-maps=1 num-stages=3 pipelined-tensor-maps=1" -convert-tile-to-tilegpu="num-warps=4 compute-capability=90" -canonicalize -tilegpu-remove-layout-conversions -canonicalize -tilegpu-pipeline="num-stages=3" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// A dot kept in flight (tilegpu.in_flight) commits its MMAs and does not
// wait for them: its accumulators go straight to the next iteration's MMAs
// (the loop's block arguments, no pass-through); in the loop a
// warpgroup_mma_wait {pending = 1} waits for all groups but the newest; after
// the loop one {pending = 0} waits for the rest, its accumulators passed
// through an empty asm so nothing reads them earlier.
// CHECK-LABEL: llvm.func @matmul
// CHECK: ^[[BODY:bb[0-9]+]](%{{.*}}: i32, %[[ACC0:[^:]*]]: f32,
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK-SAME: %[[ACC0]],
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK-NOT: llvm.inline_asm has_side_effects "", "=f
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: llvm.inline_asm has_side_effects "", "=f
// CHECK: llvm.br ^[[BODY]]
// CHECK-NEXT: ^{{.*}}:
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.inline_asm has_side_effects "", "=f,=f,
func.func @matmul(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %m: i32, %k: i32, %sa: i64,
                  %b: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32, %k2: i32, %sb: i64,
                  %c: !tile.ptr<f32>, %steps: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %r = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %off = arith.muli %i, %c32 : i32
    %opa = tile.descriptor_load %a[%c0, %off] shape [%m, %k] strides [%sa] {tensor_map = 0 : i32} : !tile.ptr<f16> -> tensor<64x32xf16>
    %opbt = tile.descriptor_load %b[%c0, %off] shape [%n, %k2] strides [%sb] {tensor_map = 4 : i32} : !tile.ptr<f16> -> tensor<64x32xf16>
    %opb = tile.trans %opbt {order = array<i32: 1, 0>} : tensor<64x32xf16> -> tensor<32x64xf16>
    %d = tile.dot %opa, %opb, %acc : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.descriptor_store %c[%c0, %c0], %r shape [%m, %n] strides [%sa] : !tile.ptr<f32>, tensor<64x64xf32>
  return
}
