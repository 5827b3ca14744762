// RUN: tessel-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// A multi-buffered slot, async copies into it and a read back: the ops and
// the buffer type print as they parse.
#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[16, 0], [32, 0]], block = []>
// CHECK-LABEL: func.func @round_trip
// CHECK: %[[BUF:.*]] = tilegpu.local_alloc : !tilegpu.shared<3x64x16xf16, k_major, swizzle = 32>
// CHECK: tilegpu.async_copy %{{.*}} to %[[BUF]][%{{.*}}] mask %{{.*}} : tensor<64x16xi1, #linear> : tensor<64x16x!tile.ptr<f16>, #linear>, !tilegpu.shared<3x64x16xf16, k_major, swizzle = 32>
// CHECK: tilegpu.async_commit
// CHECK: tilegpu.async_wait {async_proxy, pending = 1 : i32}
// CHECK: tilegpu.local_load %[[BUF]][%{{.*}}] : !tilegpu.shared<3x64x16xf16, k_major, swizzle = 32> -> tensor<64x16xf16, #linear>
func.func @round_trip(%p: tensor<64x16x!tile.ptr<f16>, #blocked>, %m: tensor<64x16xi1, #blocked>, %slot: i32) -> tensor<64x16xf16, #blocked> {
  %buf = tilegpu.local_alloc : !tilegpu.shared<3x64x16xf16, k_major, swizzle = 32>
  tilegpu.async_copy %p to %buf[%slot] mask %m : tensor<64x16xi1, #blocked> : tensor<64x16x!tile.ptr<f16>, #blocked>, !tilegpu.shared<3x64x16xf16, k_major, swizzle = 32>
  tilegpu.async_commit
  tilegpu.async_wait {pending = 1 : i32, async_proxy}
  %v = tilegpu.local_load %buf[%slot] : !tilegpu.shared<3x64x16xf16, k_major, swizzle = 32> -> tensor<64x16xf16, #blocked>
  return %v : tensor<64x16xf16, #blocked>
}

// -----

// A slot holding its 16 x 64 tile transposed (64 rows of 16 contiguous
// elements along dimension 0: a K-major B) prints as it parses.
// CHECK-LABEL: func.func private @transposed
// CHECK-SAME: !tilegpu.shared<2x16x64xf16, k_major, transposed, swizzle = 32>
func.func private @transposed() -> !tilegpu.shared<2x16x64xf16, k_major, transposed, swizzle = 32>

// -----

// Padded rows (AMD's MFMA operands) print their padding in bytes.
// CHECK-LABEL: func.func private @padded
// CHECK-SAME: !tilegpu.shared<2x32x64xi8, padded, transposed, pad = 8>
func.func private @padded() -> !tilegpu.shared<2x32x64xi8, padded, transposed, pad = 8>

// -----

// expected-error @+1 {{the padding is 4, 8, 16 or 32 bytes, whole elements, got 2}}
func.func private @bad_padding() -> !tilegpu.shared<2x32x64xf32, padded, pad = 2>

// -----

// expected-error @+1 {{expected 'pad'}}
func.func private @padded_swizzle() -> !tilegpu.shared<2x32x64xf16, padded, swizzle = 64>

// -----

// Transposed, the rows are what the swizzle atoms span: 16 fp16 rows are
// 32 bytes, not 64.
// expected-error @+1 {{a slot is whole swizzle atoms: columns a multiple of 8, rows of 64 bytes}}
func.func private @bad_transposed_atoms() -> !tilegpu.shared<2x16x64xf16, k_major, transposed, swizzle = 64>

// -----

// expected-error @+1 {{the swizzle spans 32, 64 or 128 bytes, got 16}}
func.func private @bad_swizzle() -> !tilegpu.shared<2x64x16xf16, k_major, swizzle = 16>

// -----

// expected-error @+1 {{a slot is whole swizzle atoms: rows a multiple of 8, columns of 64 bytes}}
func.func private @bad_atoms() -> !tilegpu.shared<2x64x16xf16, mn_major, swizzle = 64>

// -----

// expected-error @+1 {{a shared buffer is slots x rows x columns, got 2 dimensions}}
func.func private @bad_rank() -> !tilegpu.shared<64x16xf16, k_major, swizzle = 32>

// -----

// expected-error @+1 {{expected k_major, mn_major, gather or padded}}
func.func private @bad_order() -> !tilegpu.shared<2x64x16xf16, row_major, swizzle = 32>

// -----

#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[16, 0], [32, 0]], block = []>
func.func @copy_wrong_shape(%p: tensor<64x16x!tile.ptr<f16>, #blocked>, %slot: i32) {
  %buf = tilegpu.local_alloc : !tilegpu.shared<2x32x16xf16, k_major, swizzle = 32>
  // expected-error @+1 {{copies a whole slot: pointers of shape 32x16 expected}}
  tilegpu.async_copy %p to %buf[%slot] : tensor<64x16x!tile.ptr<f16>, #blocked>, !tilegpu.shared<2x32x16xf16, k_major, swizzle = 32>
  return
}

// -----

#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[16, 0], [32, 0]], block = []>
func.func @copy_wrong_type(%p: tensor<64x16x!tile.ptr<f32>, #blocked>, %slot: i32) {
  %buf = tilegpu.local_alloc : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
  // expected-error @+1 {{needs pointers to the buffer's element type 'f16'}}
  tilegpu.async_copy %p to %buf[%slot] : tensor<64x16x!tile.ptr<f32>, #blocked>, !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
  return
}

// -----

#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[16, 0], [32, 0]], block = []>
#other = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]], warp = [[16, 0], [32, 0]], block = []>
func.func @copy_mask_layout(%p: tensor<64x16x!tile.ptr<f16>, #blocked>, %m: tensor<64x16xi1, #other>, %slot: i32) {
  %buf = tilegpu.local_alloc : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
  // expected-error @+1 {{needs a mask of i1 with the pointers' shape and layout}}
  tilegpu.async_copy %p to %buf[%slot] mask %m : tensor<64x16xi1, #other> : tensor<64x16x!tile.ptr<f16>, #blocked>, !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
  return
}

// -----

#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[16, 0], [32, 0]], block = []>
func.func @load_wrong_type(%slot: i32) -> tensor<64x16xf32, #blocked> {
  %buf = tilegpu.local_alloc : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
  // expected-error @+1 {{reads a whole slot: 'tensor<64x16xf16>' with a layout expected}}
  %v = tilegpu.local_load %buf[%slot] : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32> -> tensor<64x16xf32, #blocked>
  return %v : tensor<64x16xf32, #blocked>
}

// -----

func.func @load_without_layout(%slot: i32) -> tensor<64x16xf16> {
  %buf = tilegpu.local_alloc : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
  // expected-error @+1 {{needs a result with a layout}}
  %v = tilegpu.local_load %buf[%slot] : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32> -> tensor<64x16xf16>
  return %v : tensor<64x16xf16>
}
