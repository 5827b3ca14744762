// RUN: tessel-opt %s | tessel-opt | FileCheck %s
// Every tile op parses, verifies and prints back.

// CHECK-LABEL: func.func @all_ops
func.func @all_ops(%p: !tile.ptr<f32>, %q: !tile.ptr<f16, 3>, %n: i32) {
  // CHECK: tile.get_program_id 0
  %pid = tile.get_program_id 0
  // CHECK: tile.get_num_programs 2
  %np = tile.get_num_programs 2
  // CHECK: tile.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  // CHECK: tile.splat %{{.*}} : tensor<128x!tile.ptr<f32>>
  %ps = tile.splat %p : tensor<128x!tile.ptr<f32>>
  // CHECK: tile.addptr %{{.*}}, %{{.*}} : tensor<128x!tile.ptr<f32>>, tensor<128xi32>
  %ptrs = tile.addptr %ps, %r : tensor<128x!tile.ptr<f32>>, tensor<128xi32>
  %ns = tile.splat %n : tensor<128xi32>
  %mask = arith.cmpi slt, %r, %ns : tensor<128xi32>
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  // CHECK: tile.load %{{.*}} mask %{{.*}} : tensor<128xi1> other %{{.*}} : tensor<128xf32> : tensor<128x!tile.ptr<f32>> -> tensor<128xf32>
  %x = tile.load %ptrs mask %mask : tensor<128xi1> other %zero : tensor<128xf32> : tensor<128x!tile.ptr<f32>> -> tensor<128xf32>
  // CHECK: tile.store %{{.*}}, %{{.*}} mask %{{.*}} : tensor<128xi1> : tensor<128x!tile.ptr<f32>>, tensor<128xf32>
  tile.store %ptrs, %x mask %mask : tensor<128xi1> : tensor<128x!tile.ptr<f32>>, tensor<128xf32>
  // CHECK: tile.expand_dims %{{.*}} {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
  %col = tile.expand_dims %x {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
  // CHECK: tile.broadcast %{{.*}} : tensor<128x1xf32> -> tensor<128x32xf32>
  %bc = tile.broadcast %col : tensor<128x1xf32> -> tensor<128x32xf32>
  // CHECK: tile.trans %{{.*}} {order = array<i32: 1, 0>} : tensor<128x32xf32> -> tensor<32x128xf32>
  %t = tile.trans %bc {order = array<i32: 1, 0>} : tensor<128x32xf32> -> tensor<32x128xf32>
  // CHECK: tile.reshape %{{.*}} : tensor<32x128xf32> -> tensor<4096xf32>
  %flat = tile.reshape %t : tensor<32x128xf32> -> tensor<4096xf32>
  // CHECK: tile.reduce %{{.*}} {axis = 0 : i32} : tensor<4096xf32> -> f32
  // CHECK: tile.reduce.return %{{.*}} : f32
  %sum = tile.reduce %flat {axis = 0 : i32} : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tile.reduce.return %s : f32
  }
  // CHECK: tile.scan %{{.*}} {axis = 1 : i32, reverse} : tensor<128x32xf32> -> tensor<128x32xf32>
  // CHECK: tile.scan.return %{{.*}} : f32
  %cs = tile.scan %bc {axis = 1 : i32, reverse} : tensor<128x32xf32> -> tensor<128x32xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tile.scan.return %s : f32
  }
  %gi = arith.constant dense<3> : tensor<64x32xi32>
  // CHECK: tile.gather %{{.*}}[%{{.*}}] {axis = 0 : i32} : tensor<128x32xf32>, tensor<64x32xi32> -> tensor<64x32xf32>
  %g = tile.gather %bc[%gi] {axis = 0 : i32} : tensor<128x32xf32>, tensor<64x32xi32> -> tensor<64x32xf32>
  // CHECK: tile.map_elementwise %{{.*}}, %{{.*}} {pack = 2 : i32} : tensor<128x32xf32>, tensor<128x32xf32> -> tensor<128x32xf32>
  // CHECK: tile.map_elementwise.return %{{.*}}, %{{.*}} : f32, f32
  %me = tile.map_elementwise %bc, %bc {pack = 2 : i32} : tensor<128x32xf32>, tensor<128x32xf32> -> tensor<128x32xf32> {
  ^bb0(%x0: f32, %x1: f32, %y0: f32, %y1: f32):
    %s0 = arith.addf %x0, %y1 : f32
    tile.map_elementwise.return %s0, %x1 : f32, f32
  }
  // CHECK: tile.debug_barrier
  tile.debug_barrier
  %acc = arith.constant dense<0.0> : tensor<128x128xf32>
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x32xf32>, tensor<32x128xf32> -> tensor<128x128xf32>
  %d = tile.dot %bc, %t, %acc : tensor<128x32xf32>, tensor<32x128xf32> -> tensor<128x128xf32>
  // CHECK: tile.load %{{.*}} : !tile.ptr<f16, 3> -> f16
  %h = tile.load %q : !tile.ptr<f16, 3> -> f16
  return
}

// CHECK-LABEL: func.func @atomics
func.func @atomics(%p: !tile.ptr<i32>, %f: !tile.ptr<f32>, %h: !tile.ptr<bf16>, %v: i32) {
  %r = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %ps = tile.splat %p : tensor<16x!tile.ptr<i32>>
  %ptrs = tile.addptr %ps, %r : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
  %c8 = arith.constant dense<8> : tensor<16xi32>
  %m = arith.cmpi slt, %r, %c8 : tensor<16xi32>
  // CHECK: tile.atomic_rmw add, acq_rel, gpu, %{{.*}}, %{{.*}} mask %{{.*}} : tensor<16xi1> : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
  %a = tile.atomic_rmw add, acq_rel, gpu, %ptrs, %r mask %m : tensor<16xi1> : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
  // CHECK: tile.atomic_rmw umax, relaxed, cta, %{{.*}}, %{{.*}} : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
  %b = tile.atomic_rmw umax, relaxed, cta, %ptrs, %a : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
  // CHECK: tile.atomic_rmw and, release, sys, %{{.*}}, %{{.*}} : !tile.ptr<i32>, i32
  %c = tile.atomic_rmw and, release, sys, %p, %v : !tile.ptr<i32>, i32
  %one = arith.constant 1.0 : f32
  // CHECK: tile.atomic_rmw fmax, acquire, gpu, %{{.*}}, %{{.*}} : !tile.ptr<f32>, f32
  %d = tile.atomic_rmw fmax, acquire, gpu, %f, %one : !tile.ptr<f32>, f32
  // CHECK: tile.atomic_rmw xor, acq_rel, gpu, %{{.*}}, %{{.*}} : !tile.ptr<f32>, f32
  %e = tile.atomic_rmw xor, acq_rel, gpu, %f, %d : !tile.ptr<f32>, f32
  %hv = arith.constant 1.0 : bf16
  // CHECK: tile.atomic_rmw fadd, acq_rel, gpu, %{{.*}}, %{{.*}} : !tile.ptr<bf16>, bf16
  %g = tile.atomic_rmw fadd, acq_rel, gpu, %h, %hv : !tile.ptr<bf16>, bf16
  // CHECK: tile.atomic_cas acq_rel, gpu, %{{.*}}, %{{.*}}, %{{.*}} : !tile.ptr<i32>, i32
  %old = tile.atomic_cas acq_rel, gpu, %p, %v, %c : !tile.ptr<i32>, i32
  // CHECK: tile.atomic_cas relaxed, sys, %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
  %olds = tile.atomic_cas relaxed, sys, %ptrs, %a, %b : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
  return
}

// CHECK-LABEL: func.func @pointer_casts
func.func @pointer_casts(%p: !tile.ptr<f32>, %a: tensor<8xi64>) {
  // CHECK: tile.ptr_to_int %{{.*}} : !tile.ptr<f32> -> i64
  %i = tile.ptr_to_int %p : !tile.ptr<f32> -> i64
  // CHECK: tile.int_to_ptr %{{.*}} : i64 -> !tile.ptr<f16>
  %q = tile.int_to_ptr %i : i64 -> !tile.ptr<f16>
  // CHECK: tile.int_to_ptr %{{.*}} : tensor<8xi64> -> tensor<8x!tile.ptr<i8>>
  %t = tile.int_to_ptr %a : tensor<8xi64> -> tensor<8x!tile.ptr<i8>>
  // CHECK: tile.ptr_cast %{{.*}} : tensor<8x!tile.ptr<i8>> -> tensor<8x!tile.ptr<i32>>
  %c = tile.ptr_cast %t : tensor<8x!tile.ptr<i8>> -> tensor<8x!tile.ptr<i32>>
  return
}
