// RUN: tessel-opt %s -split-input-file -verify-diagnostics

func.func @range_size(%n: i32) {
  // expected-error @+1 {{result has 64 elements, expected 128}}
  %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<64xi32>
  return
}

// -----

func.func @range_order() {
  // expected-error @+1 {{end (0) must be greater than start (8)}}
  %r = tile.make_range {start = 8 : i32, end = 0 : i32} : tensor<8xi32>
  return
}

// -----

func.func @broadcast_bad(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{cannot broadcast [4, 2] to [4, 8]}}
  %b = tile.broadcast %x : tensor<4x2xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @addptr_shape(%p: tensor<8x!tile.ptr<f32>>, %o: tensor<16xi32>) {
  // expected-error @+1 {{offset shape [16] differs from pointer shape [8]}}
  %q = tile.addptr %p, %o : tensor<8x!tile.ptr<f32>>, tensor<16xi32>
  return
}

// -----

func.func @load_mask_shape(%p: tensor<8x!tile.ptr<f32>>, %m: tensor<4xi1>) {
  // expected-error @+1 {{mask shape [4] differs from pointer shape [8]}}
  %x = tile.load %p mask %m : tensor<4xi1> : tensor<8x!tile.ptr<f32>> -> tensor<8xf32>
  return
}

// -----

func.func @load_result_type(%p: tensor<8x!tile.ptr<f32>>) {
  // expected-error @+1 {{result type 'tensor<8xf16>' should be 'tensor<8xf32>'}}
  %x = tile.load %p : tensor<8x!tile.ptr<f32>> -> tensor<8xf16>
  return
}

// -----

func.func @store_value_type(%p: tensor<8x!tile.ptr<i32>>, %v: tensor<8xf32>) {
  // expected-error @+1 {{value type 'tensor<8xf32>' should be 'tensor<8xi32>'}}
  tile.store %p, %v : tensor<8x!tile.ptr<i32>>, tensor<8xf32>
  return
}

// -----

func.func @reduce_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{axis 1 out of range for rank 1}}
  %s = tile.reduce %x {axis = 1 : i32} : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    tile.reduce.return %a : f32
  }
  return
}

// -----

func.func @reduce_region(%x: tensor<8xf32>) {
  // expected-error @+1 {{combine region takes 2 arguments, has 1}}
  %s = tile.reduce %x {axis = 0 : i32} : tensor<8xf32> -> f32 {
  ^bb0(%a: f32):
    tile.reduce.return %a : f32
  }
  return
}

// -----

func.func @dot_inner(%a: tensor<16x32xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{inner dimensions differ: [16, 32] x [16, 16]}}
  %d = tile.dot %a, %b, %c : tensor<16x32xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @trans_order(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{order must be a permutation of 0..1}}
  %t = tile.trans %x {order = array<i32: 0, 0>} : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}

// -----

// expected-error @+1 {{pointers point to integer or float elements}}
func.func @ptr_to_tensor(%p: !tile.ptr<tensor<4xf32>>) {
  return
}

// -----

func.func @splat_type(%x: f32) {
  // expected-error @+1 {{element type of the result is the source type}}
  %s = "tile.splat"(%x) : (f32) -> tensor<8xi32>
  return
}

// -----

func.func @expand_dims_shape(%x: tensor<8xf32>) {
  // expected-error @+1 {{result shape [8, 1] should be [1, 8]}}
  %e = tile.expand_dims %x {axis = 0 : i32} : tensor<8xf32> -> tensor<8x1xf32>
  return
}

// -----

func.func @reshape_numel(%x: tensor<8xf32>) {
  // expected-error @+1 {{cannot reshape [8] to [4, 4]: the number of elements differs}}
  %r = tile.reshape %x : tensor<8xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @program_id_axis() {
  // expected-error @+1 {{attribute 'axis' failed to satisfy constraint}}
  %p = tile.get_program_id 3
  return
}

// -----

func.func @dot_acc_shape(%a: tensor<16x16xf32>, %b: tensor<16x32xf32>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{accumulator shape [16, 16] should be [16, 32]}}
  %d = tile.dot %a, %b, %c : tensor<16x16xf32>, tensor<16x32xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @load_store_cache(%p: !tile.ptr<f32>) {
  // expected-error @+1 {{cache modifier 'wb' is for stores; loads take ca, cg or cv}}
  %x = tile.load %p cache = wb : !tile.ptr<f32> -> f32
  return
}

// -----

func.func @store_load_cache(%p: !tile.ptr<f32>, %x: f32) {
  // expected-error @+1 {{cache modifier 'ca' is for loads; stores take wb, cg, cs or wt}}
  tile.store %p, %x cache = ca : !tile.ptr<f32>, f32
  return
}

// -----

func.func @bad_eviction(%p: !tile.ptr<f32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'evict' [evict_normal, evict_first, evict_last]}}
  %x = tile.load %p evict = evict_later : !tile.ptr<f32> -> f32
  return
}

// -----

func.func @dot_imprecise_negative(%a: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{attribute 'maxNumImpreciseAcc' failed to satisfy constraint}}
  %d = tile.dot %a, %a, %c max_num_imprecise_acc = -1 : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @hint_rank(%n: i32) {
  // expected-error @+1 {{'tile.divisibility' has 2 entries, expected 1}}
  %m = arith.addi %n, %n {tile.divisibility = array<i32: 16, 16>} : i32
  return
}

// -----

func.func @hint_positive() {
  // expected-error @+1 {{'tile.contiguity' entries must be positive, got 0}}
  %r = tile.make_range {start = 0 : i32, end = 32 : i32, tile.contiguity = array<i32: 0>} : tensor<32xi32>
  return
}

// -----

func.func @hint_type() {
  // expected-error @+1 {{'tile.constancy' must be an array of i32}}
  %r = tile.make_range {start = 0 : i32, end = 32 : i32, tile.constancy = 4 : i32} : tensor<32xi32>
  return
}

// -----

func.func @descriptor_counts(%p: !tile.ptr<f32>, %n: i32, %s: i64) {
  // expected-error @+1 {{a block of rank 2 takes 2 sizes, 1 strides and 2 offsets, got 2, 1 and 1}}
  %x = tile.descriptor_load %p[%n] shape [%n, %n] strides [%s] : !tile.ptr<f32> -> tensor<16x16xf32>
  return
}

// -----

func.func @descriptor_element(%p: !tile.ptr<f32>, %n: i32) {
  // expected-error @+1 {{the block's elements are 'f16', the base points to 'f32'}}
  %x = tile.descriptor_load %p[%n] shape [%n] strides [] : !tile.ptr<f32> -> tensor<16xf16>
  return
}

// -----

func.func @descriptor_block(%p: !tile.ptr<f32>, %n: i32, %v: tensor<12xf32>) {
  // expected-error @+1 {{block dimensions are powers of 2, got 'tensor<12xf32>'}}
  tile.descriptor_store %p[%n], %v shape [%n] strides [] : !tile.ptr<f32>, tensor<12xf32>
  return
}

// -----

func.func @descriptor_nan_ints(%p: !tile.ptr<i32>, %n: i32) {
  // expected-error @+1 {{NaN padding needs floating-point elements, got 'i32'}}
  %x = tile.descriptor_load %p[%n] shape [%n] strides [] nan_padding : !tile.ptr<i32> -> tensor<16xi32>
  return
}

// -----

func.func @scan_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{axis 1 out of range for rank 1}}
  %s = tile.scan %x {axis = 1 : i32} : tensor<8xf32> -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    tile.scan.return %a : f32
  }
  return
}

// -----

func.func @scan_result(%x: tensor<8xf32>) {
  // expected-error @+1 {{result type 'tensor<4xf32>' should be 'tensor<8xf32>'}}
  %s = tile.scan %x {axis = 0 : i32} : tensor<8xf32> -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    tile.scan.return %a : f32
  }
  return
}

// -----

func.func @scan_region(%x: tensor<8xi32>) {
  // expected-error @+1 {{combine result 0 should be 'i32'}}
  %s = tile.scan %x {axis = 0 : i32} : tensor<8xi32> -> tensor<8xi32> {
  ^bb0(%a: i32, %b: i32):
    %f = arith.sitofp %a : i32 to f32
    tile.scan.return %f : f32
  }
  return
}

// -----

func.func @gather_dims(%x: tensor<8x4xf32>, %i: tensor<8x2xi32>) {
  // expected-error @+1 {{indices dimension 1 must match the source's: [8, 2] vs [8, 4]}}
  %g = tile.gather %x[%i] {axis = 0 : i32} : tensor<8x4xf32>, tensor<8x2xi32> -> tensor<8x2xf32>
  return
}

// -----

func.func @atomic_value_type(%p: !tile.ptr<i32>, %v: i64) {
  // expected-error @+1 {{value type 'i64' should be 'i32'}}
  %a = tile.atomic_rmw add, acq_rel, gpu, %p, %v : !tile.ptr<i32>, i64
  return
}

// -----

func.func @atomic_kind_type(%p: !tile.ptr<f32>, %v: f32) {
  // expected-error @+1 {{'add' is not defined on 'f32'}}
  %a = tile.atomic_rmw add, acq_rel, gpu, %p, %v : !tile.ptr<f32>, f32
  return
}

// -----

func.func @atomic_narrow(%p: !tile.ptr<i16>, %v: i16) {
  // expected-error @+1 {{'max' is not defined on 'i16'}}
  %a = tile.atomic_rmw max, acq_rel, gpu, %p, %v : !tile.ptr<i16>, i16
  return
}

// -----

func.func @atomic_fmax_half(%p: !tile.ptr<f16>, %v: f16) {
  // expected-error @+1 {{'fmax' is not defined on 'f16'}}
  %a = tile.atomic_rmw fmax, acq_rel, gpu, %p, %v : !tile.ptr<f16>, f16
  return
}

// -----

func.func @atomic_mask_shape(%p: tensor<16x!tile.ptr<i32>>, %v: tensor<16xi32>, %m: tensor<8xi1>) {
  // expected-error @+1 {{mask shape [8] differs from pointer shape [16]}}
  %a = tile.atomic_rmw add, acq_rel, gpu, %p, %v mask %m : tensor<8xi1> : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
  return
}

// -----

func.func @atomic_cas_width(%p: !tile.ptr<i8>, %v: i8) {
  // expected-error @+1 {{elements must be 16, 32 or 64 bits wide, got 'i8'}}
  %a = tile.atomic_cas acq_rel, gpu, %p, %v, %v : !tile.ptr<i8>, i8
  return
}

// -----

func.func @map_region(%x: tensor<8xf32>) {
  // expected-error @+1 {{the region takes 2 arguments, has 1}}
  %m = tile.map_elementwise %x {pack = 2 : i32} : tensor<8xf32> -> tensor<8xf32> {
  ^bb0(%a: f32):
    tile.map_elementwise.return %a, %a : f32, f32
  }
  return
}
