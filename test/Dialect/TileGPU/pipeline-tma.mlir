// RUN: tessel-opt %s -split-input-file -tile-lower-descriptors="tensor-maps=1 num-stages=3 pipelined-tensor-maps=1" -convert-tile-to-tilegpu="num-warps=4 compute-capability=90" -canonicalize -tilegpu-pipeline="num-stages=3" -canonicalize | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tile-lower-descriptors="tensor-maps=1 num-stages=3 pipelined-tensor-maps=1" -convert-tile-to-tilegpu="num-warps=4 compute-capability=90" -canonicalize -tilegpu-remove-layout-conversions -canonicalize -tilegpu-pipeline="num-stages=3" -canonicalize | FileCheck %s --check-prefix=FLIGHT

// A K loop of a dot on warpgroup MMA whose A and B (N x K, transposed) are
// blocks of host-made descriptors: the copy engine fills the slots. One
// tensor map per operand, a swizzle atom (64 bytes of K: 32 fp16) wide with
// the slots' swizzle; one mbarrier per slot, each expecting both copies;
// the prologue copies iterations 0 and 1; each iteration refills the slot
// read last (if in range) and waits for its own slot's phase, whose parity
// flips as the read slot wraps; the barriers are invalidated after the loop.
// B's slot is read straight into the dot's operand layout.
// With the accumulator carried in the dot's layout (as the compiler's own
// pipeline has it, after tilegpu-remove-layout-conversions) the MMAs stay in
// flight: each iteration waits for its slot's phase, starts its MMAs, waits
// for all but them (those of the iteration before), then a barrier, and
// only then refills the slot those read. After the loop the last MMAs
// retire, their slots live until then, before the barriers go.
// FLIGHT-LABEL: func.func @matmul
// FLIGHT: scf.for
// FLIGHT-NOT: tilegpu.barrier
// FLIGHT: tilegpu.mbarrier_wait
// FLIGHT-NOT: tilegpu.barrier
// FLIGHT: tile.dot {{.*}} {tilegpu.in_flight, tilegpu.wgmma}
// FLIGHT-NEXT: tilegpu.warpgroup_mma_wait {pending = 1 : i32}
// FLIGHT-NEXT: tilegpu.barrier
// FLIGHT: tilegpu.async_tma_copy
// FLIGHT: tilegpu.async_tma_copy
// FLIGHT-NEXT: scf.yield
// FLIGHT-NEXT: }
// FLIGHT-NEXT: %[[SUM:.*]] = tilegpu.warpgroup_mma_wait %{{.*}}#0 : tensor<64x64xf32, {{.*}}> reads %{{.*}}, %{{.*}} : {{.*}} {pending = 0 : i32} -> tensor<64x64xf32
// FLIGHT-NEXT: tilegpu.mbarrier_inval
// FLIGHT: tilegpu.convert_layout %[[SUM]]
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: %[[MA:[^:]*]]: !llvm.ptr {{{.*}}tilegpu.tensor_map = {arg = 0 : i32, box = array<i64: 64, 32>, element = f16, nan = false, swizzle = 64 : i32}}
// CHECK-SAME: %[[MB:[^:]*]]: !llvm.ptr {{{.*}}tilegpu.tensor_map = {arg = 4 : i32, box = array<i64: 64, 32>, element = f16, nan = false, swizzle = 64 : i32}})
// CHECK-DAG: %[[A:.*]] = tilegpu.local_alloc : !tilegpu.shared<3x64x32xf16, k_major, swizzle = 64>
// CHECK-DAG: %[[B:.*]] = tilegpu.local_alloc : !tilegpu.shared<3x32x64xf16, k_major, transposed, swizzle = 64>
// CHECK: %[[BARS:.*]] = tilegpu.mbarrier_alloc {arrivals = 2 : i32} : !tilegpu.mbarriers<3>
// CHECK: tilegpu.async_tma_copy %[[MA]][%{{.*}}, %{{.*}}] to %[[A]][%{{.*}}], %[[BARS]] if
// CHECK: tilegpu.async_tma_copy %[[MB]][%{{.*}}, %{{.*}}] to %[[B]][%{{.*}}], %[[BARS]] if
// CHECK: tilegpu.async_tma_copy %[[MA]]
// CHECK: tilegpu.async_tma_copy %[[MB]]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[READ:.*]] = %c0_i32, %[[FILL:.*]] = %c2_i32, %[[PHASE:.*]] = %c0_i32)
// CHECK-NOT: async_wait
// CHECK: tilegpu.barrier
// CHECK: %[[IN:.*]] = arith.cmpi slt
// CHECK: tilegpu.async_tma_copy %[[MA]][%{{.*}}, %{{.*}}] to %[[A]][%[[FILL]]], %[[BARS]] if %[[IN]]
// CHECK: tilegpu.async_tma_copy %[[MB]][%{{.*}}, %{{.*}}] to %[[B]][%[[FILL]]], %[[BARS]] if %[[IN]]
// CHECK-NOT: async_commit
// CHECK: tilegpu.mbarrier_wait %[[BARS]][%[[READ]]], %[[PHASE]]
// CHECK-DAG: %[[OPA:.*]] = tilegpu.local_load %[[A]][%[[READ]]]
// CHECK-DAG: %[[OPB:.*]] = tilegpu.local_load %[[B]][%[[READ]]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[READ]], %c1_i32
// CHECK: %[[WRAP:.*]] = arith.cmpi eq, %[[NEXT]], %c3_i32
// CHECK: %[[FLIP:.*]] = arith.extui %[[WRAP]]
// CHECK: %[[PARITY:.*]] = arith.xori %[[PHASE]], %[[FLIP]]
// CHECK-NOT: convert_layout %[[OPB]]
// CHECK: tile.dot %[[OPA]], %[[OPB]], %{{.*}} {tilegpu.wgmma}
// CHECK: scf.yield {{.*}}, %[[PARITY]] :
// CHECK-NEXT: }
// CHECK-NEXT: tilegpu.mbarrier_inval %[[BARS]]
// CHECK-NOT: tile.descriptor_load
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

// -----

// Operands contiguous along M or N: B as it is loaded (K x N) and A loaded
// K x M and transposed fill mn_major slots (A's transposed), their columns
// of 128-byte atoms (64 fp16 of N or M, all 32 rows of K) one box each.
// CHECK-LABEL: func.func @mn_major
// CHECK-SAME: tilegpu.tensor_map = {arg = 0 : i32, box = array<i64: 32, 64>, element = f16, nan = false, swizzle = 128 : i32}
// CHECK-SAME: tilegpu.tensor_map = {arg = 4 : i32, box = array<i64: 32, 64>, element = f16, nan = false, swizzle = 128 : i32}
// CHECK-DAG: tilegpu.local_alloc : !tilegpu.shared<3x64x32xf16, mn_major, transposed, swizzle = 128>
// CHECK-DAG: tilegpu.local_alloc : !tilegpu.shared<3x32x64xf16, mn_major, swizzle = 128>
// CHECK: tilegpu.mbarrier_alloc {arrivals = 2 : i32}
// CHECK: scf.for
// CHECK-NOT: async_wait
// CHECK: tilegpu.async_tma_copy
// CHECK: tilegpu.async_tma_copy
// CHECK: tilegpu.mbarrier_wait
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tilegpu.mbarrier_inval
func.func @mn_major(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %k: i32, %m: i32, %sa: i64,
                    %b: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %k2: i32, %n: i32, %sb: i64,
                    %c: !tile.ptr<f32>, %steps: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %r = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %off = arith.muli %i, %c32 : i32
    %opat = tile.descriptor_load %a[%off, %c0] shape [%k, %m] strides [%sa] {tensor_map = 0 : i32} : !tile.ptr<f16> -> tensor<32x64xf16>
    %opa = tile.trans %opat {order = array<i32: 1, 0>} : tensor<32x64xf16> -> tensor<64x32xf16>
    %opb = tile.descriptor_load %b[%off, %c0] shape [%k2, %n] strides [%sb] {tensor_map = 4 : i32} : !tile.ptr<f16> -> tensor<32x64xf16>
    %d = tile.dot %opa, %opb, %acc : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.descriptor_store %c[%c0, %c0], %r shape [%m, %n] strides [%sa] : !tile.ptr<f32>, tensor<64x64xf32>
  return
}

// -----

// Blocks the copy engine does not fill warpgroup MMA's slots with stay
// pointer loads: fp32 operands (tf32 runs on mma.sync), prefetched with
// cp.async, and int8 B as it is loaded (N contiguous: wgmma reads 8-bit
// operands K-major only; A, K-major, is copied by the copy engine).
// CHECK-LABEL: func.func @pointer_operands
// CHECK-SAME: tilegpu.tensor_map = {arg = 0 : i32, box = array<i64: 64, 32>, element = i8, nan = false, swizzle = 32 : i32}
// CHECK-NOT: tilegpu.tensor_map
// CHECK-DAG: tilegpu.local_alloc : !tilegpu.shared<3x64x32xi8, k_major, swizzle = 32>
// CHECK-DAG: tilegpu.local_alloc : !tilegpu.shared<3x64x32xf32, k_major, swizzle = 128>
// CHECK-DAG: tilegpu.local_alloc : !tilegpu.shared<3x32x64xf32, gather, swizzle = 128>
// CHECK: scf.for
// CHECK: tilegpu.async_tma_copy
// CHECK: tilegpu.async_copy
// CHECK: tilegpu.async_copy
// CHECK: tilegpu.mbarrier_wait
// CHECK: tile.load {{.*}} -> tensor<32x64xi8
func.func @pointer_operands(%a: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %m: i32 {tile.divisibility = 16 : i32}, %k: i32, %sa: i64 {tile.divisibility = 16 : i32},
                            %f: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %sf: i64 {tile.divisibility = 16 : i32},
                            %ci: !tile.ptr<i32>, %c: !tile.ptr<f32>, %steps: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %izero = arith.constant dense<0> : tensor<64x64xi32>
  %r:2 = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %izero, %acc2 = %zero) -> (tensor<64x64xi32>, tensor<64x64xf32>) : i32 {
    %off = arith.muli %i, %c32 : i32
    %opa = tile.descriptor_load %a[%c0, %off] shape [%m, %k] strides [%sa] {tensor_map = 0 : i32} : !tile.ptr<i8> -> tensor<64x32xi8>
    %opb = tile.descriptor_load %a[%off, %c0] shape [%k, %m] strides [%sa] {tensor_map = 0 : i32} : !tile.ptr<i8> -> tensor<32x64xi8>
    %d = tile.dot %opa, %opb, %acc : tensor<64x32xi8>, tensor<32x64xi8> -> tensor<64x64xi32>
    %fa = tile.descriptor_load %f[%c0, %off] shape [%m, %k] strides [%sf] {tensor_map = 4 : i32} : !tile.ptr<f32> -> tensor<64x32xf32>
    %fb = tile.descriptor_load %f[%off, %c0] shape [%k, %m] strides [%sf] {tensor_map = 4 : i32} : !tile.ptr<f32> -> tensor<32x64xf32>
    %d2 = tile.dot %fa, %fb, %acc2 : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
    scf.yield %d, %d2 : tensor<64x64xi32>, tensor<64x64xf32>
  }
  tile.descriptor_store %ci[%c0, %c0], %r#0 shape [%m, %m] strides [%sa] : !tile.ptr<i32>, tensor<64x64xi32>
  tile.descriptor_store %c[%c0, %c0], %r#1 shape [%m, %m] strides [%sa] : !tile.ptr<f32>, tensor<64x64xf32>
  return
}
