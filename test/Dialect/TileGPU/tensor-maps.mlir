// RUN: tessel-opt %s -split-input-file -tile-lower-descriptors="tensor-maps=1 num-stages=3" -convert-tile-to-tilegpu="num-warps=4 compute-capability=90" -tilegpu-tensor-maps | FileCheck %s

// A host-made descriptor's loads and stores (tensor_map: its base is
// argument 0) go through one tensor map appended to the kernel's arguments
// (128 bytes by value), which says what it describes: the block, the loads'
// NaN fill, and the swizzle its block has in shared memory (rows of 128
// bytes: the 128-byte swizzle of a k_major slot, one box).
// CHECK-LABEL: func.func @copy
// CHECK-SAME: %[[MAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, tilegpu.tensor_map = {arg = 0 : i32, box = array<i64: 16, 64>, element = f16, nan = true, swizzle = 128 : i32}})
// CHECK: %[[X:.*]] = tilegpu.tma_load %[[MAP]][%{{.*}}, %{{.*}}] {swizzle = 128 : i32} : !llvm.ptr -> tensor<16x64xf16, #
// CHECK: %[[Y:.*]] = tilegpu.tma_load %[[MAP]][%{{.*}}, %{{.*}}] {swizzle = 128 : i32} : !llvm.ptr -> tensor<16x64xf16, #
// CHECK-NOT: tile.descriptor_load
// CHECK: tilegpu.tma_store %[[MAP]][%{{.*}}, %{{.*}}], %{{.*}} {swizzle = 128 : i32} : !llvm.ptr, tensor<16x64xf16, #
// CHECK-NOT: tile.store
func.func @copy(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %m: i32, %n: i32, %s: i64, %o: i32) attributes {tile.kernel} {
  %a = tile.descriptor_load %x[%o, %o] shape [%m, %n] strides [%s] nan_padding {tensor_map = 0 : i32} : !tile.ptr<f16> -> tensor<16x64xf16>
  %b = tile.descriptor_load %x[%o, %n] shape [%m, %n] strides [%s] nan_padding {tensor_map = 0 : i32} : !tile.ptr<f16> -> tensor<16x64xf16>
  %c = arith.addf %a, %b : tensor<16x64xf16>
  tile.descriptor_store %x[%o, %o], %c shape [%m, %n] strides [%s] {tensor_map = 0 : i32} : !tile.ptr<f16>, tensor<16x64xf16>
  return
}

// -----

// Loads that stay pointer loads: a descriptor made in the kernel (no
// tensor_map), a block dimension over TMA's 256, and (num-stages > 1) a dot
// operand in a loop, which the cp.async pipeline prefetches; stores of
// descriptors made in the kernel stay pointer stores.
// CHECK-LABEL: func.func @pointer_loads
// CHECK-NOT: !llvm.ptr
// CHECK-NOT: tilegpu.tma_load
func.func @pointer_loads(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %m: i32, %n: i32, %s: i64, %o: i32) attributes {tile.kernel} {
  %a = tile.descriptor_load %x[%o, %o] shape [%m, %n] strides [%s] : !tile.ptr<f16> -> tensor<16x16xf16>
  %w = tile.descriptor_load %x[%o, %o] shape [%m, %n] strides [%s] {tensor_map = 0 : i32} : !tile.ptr<f16> -> tensor<16x512xf16>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<16x16xf32>) : i32 {
    %opa = tile.descriptor_load %x[%o, %i] shape [%m, %n] strides [%s] {tensor_map = 0 : i32} : !tile.ptr<f16> -> tensor<16x16xf16>
    %opb = tile.descriptor_load %x[%i, %o] shape [%m, %n] strides [%s] {tensor_map = 0 : i32} : !tile.ptr<f16> -> tensor<16x16xf16>
    %d = tile.dot %opa, %opb, %acc : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  tile.descriptor_store %x[%o, %o], %a shape [%m, %n] strides [%s] : !tile.ptr<f16>, tensor<16x16xf16>
  tile.descriptor_store %x[%o, %o], %w shape [%m, %n] strides [%s] : !tile.ptr<f16>, tensor<16x512xf16>
  tile.descriptor_store %y[%o, %o], %r shape [%m, %n] strides [%s] : !tile.ptr<f32>, tensor<16x16xf32>
  return
}

// -----

// A loop's own stages (tl.range(num_stages=1)) in place of the kernel's 3:
// that loop is not pipelined, so its dot operands go through the tensor map.
// CHECK-LABEL: func.func @unpipelined_loop
// CHECK: scf.for
// CHECK-COUNT-2: tilegpu.tma_load
// CHECK-NOT: tile.descriptor_load
func.func @unpipelined_loop(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %m: i32, %n: i32, %s: i64, %o: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<16x16xf32>) : i32 {
    %opa = tile.descriptor_load %x[%o, %i] shape [%m, %n] strides [%s] {tensor_map = 0 : i32} : !tile.ptr<f16> -> tensor<16x16xf16>
    %opb = tile.descriptor_load %x[%i, %o] shape [%m, %n] strides [%s] {tensor_map = 0 : i32} : !tile.ptr<f16> -> tensor<16x16xf16>
    %d = tile.dot %opa, %opb, %acc : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  } {tile.num_stages = 1 : i32}
  tile.descriptor_store %y[%o, %o], %r shape [%m, %n] strides [%s] : !tile.ptr<f32>, tensor<16x16xf32>
  return
}
