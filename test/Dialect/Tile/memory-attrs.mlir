// RUN: tessel-opt %s | tessel-opt | FileCheck %s
// Cache and eviction modifiers, volatile, dot precision and tile.assume parse,
// verify and print back; absent attributes print nothing.

// CHECK-LABEL: func.func @modifiers
func.func @modifiers(%p: tensor<16x!tile.ptr<f32>>, %m: tensor<16xi1>, %q: !tile.ptr<f32>) {
  // CHECK: tile.load %{{.*}} cache = ca : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  %a = tile.load %p cache = ca : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  // CHECK: tile.load %{{.*}} mask %{{.*}} : tensor<16xi1> cache = cg evict = evict_first : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  %b = tile.load %p mask %m : tensor<16xi1> cache = cg evict = evict_first : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  // CHECK: tile.load %{{.*}} cache = cv evict = evict_last volatile : !tile.ptr<f32> -> f32
  %c = tile.load %q cache = cv evict = evict_last volatile : !tile.ptr<f32> -> f32
  // CHECK: tile.load %{{.*}} volatile : !tile.ptr<f32> -> f32
  %d = tile.load %q volatile : !tile.ptr<f32> -> f32
  // CHECK: tile.load %{{.*}} : !tile.ptr<f32> -> f32
  %e = tile.load %q : !tile.ptr<f32> -> f32
  // CHECK: tile.store %{{.*}}, %{{.*}} cache = wb : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  tile.store %p, %a cache = wb : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  // CHECK: tile.store %{{.*}}, %{{.*}} mask %{{.*}} : tensor<16xi1> cache = cs evict = evict_normal : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  tile.store %p, %b mask %m : tensor<16xi1> cache = cs evict = evict_normal : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  // CHECK: tile.store %{{.*}}, %{{.*}} cache = wt : !tile.ptr<f32>, f32
  tile.store %q, %c cache = wt : !tile.ptr<f32>, f32
  // CHECK: tile.store %{{.*}}, %{{.*}} cache = cg : !tile.ptr<f32>, f32
  tile.store %q, %d cache = cg : !tile.ptr<f32>, f32
  return
}

// CHECK-LABEL: func.func @dot_precision
func.func @dot_precision(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} input_precision = tf32x3 max_num_imprecise_acc = 32 : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %d = tile.dot %a, %b, %c input_precision = tf32x3 max_num_imprecise_acc = 32 : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} input_precision = bf16x6 : tensor
  %e = tile.dot %a, %b, %d input_precision = bf16x6 : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor
  %f = tile.dot %a, %b, %e : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// CHECK-LABEL: func.func @assume
func.func @assume(%n: i32) {
  %c0 = arith.constant 0 : i32
  %pos = arith.cmpi sgt, %n, %c0 : i32
  // CHECK: tile.assume %{{.*}}
  tile.assume %pos
  return
}

// CHECK-LABEL: func.func @hints
func.func @hints(%n: i32) -> tensor<8x4xi32> {
  // CHECK: tile.make_range {end = 32 : i32, start = 0 : i32, tile.contiguity = array<i32: 32>, tile.divisibility = array<i32: 16>}
  %r = tile.make_range {start = 0 : i32, end = 32 : i32, tile.divisibility = array<i32: 16>, tile.contiguity = array<i32: 32>} : tensor<32xi32>
  // CHECK: tile.reshape %{{.*}} {tile.constancy = array<i32: 1, 4>}
  %s = tile.reshape %r {tile.constancy = array<i32: 1, 4>} : tensor<32xi32> -> tensor<8x4xi32>
  // CHECK: arith.addi %{{.*}} {tile.divisibility = array<i32: 8>} : i32
  %m = arith.addi %n, %n {tile.divisibility = array<i32: 8>} : i32
  return %s : tensor<8x4xi32>
}
