// RUN: tessel-opt %s -split-input-file -tile-exact-int-to-bf16 | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tile-exact-int-to-bf16=native=true | FileCheck %s --check-prefix=NATIVE

// Up to 32 bits: widened to 64 (signed or not), converted to fp64 exactly,
// rounded to odd into fp32, then to bf16.
// CHECK-LABEL: func.func @i32_and_u16
// CHECK: %[[W:.*]] = arith.extsi %{{.*}} : tensor<4xi32> to tensor<4xi64>
// CHECK: %[[F:.*]] = arith.sitofp %[[W]] : tensor<4xi64> to tensor<4xf64>
// CHECK: arith.truncf %[[F]] : tensor<4xf64> to tensor<4xf32>
// CHECK: %[[ODD:.*]] = arith.bitcast %{{.*}} : tensor<4xi32> to tensor<4xf32>
// CHECK: arith.truncf %[[ODD]] : tensor<4xf32> to tensor<4xbf16>
// CHECK: arith.extui %{{.*}} : i16 to i64
// CHECK-NOT: uitofp
// NATIVE-LABEL: func.func @i32_and_u16
// NATIVE: arith.sitofp %{{.*}} : tensor<4xi32> to tensor<4xbf16>
// NATIVE: arith.uitofp %{{.*}} : i16 to bf16
func.func @i32_and_u16(%a: tensor<4xi32>, %b: i16) -> (tensor<4xbf16>, bf16) {
  %x = arith.sitofp %a : tensor<4xi32> to tensor<4xbf16>
  %y = arith.uitofp %b : i16 to bf16
  return %x, %y : tensor<4xbf16>, bf16
}

// -----

// 64 bits: the halves' exact sum rounded to odd in fp64 (a two-sum), then to
// bf16; unsigned halves shift in zeros.
// CHECK-LABEL: func.func @u64
// CHECK: arith.shrui %{{.*}}, %c32_i64
// CHECK: %[[S:.*]] = arith.addf %{{.*}}, %{{.*}} : f64
// CHECK: arith.ori
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: uitofp
func.func @u64(%a: i64) -> bf16 {
  %x = arith.uitofp %a : i64 to bf16
  return %x : bf16
}

// -----

// Other conversions are left alone.
// CHECK-LABEL: func.func @others
// CHECK: arith.sitofp %{{.*}} : i32 to f16
// CHECK: arith.sitofp %{{.*}} : i64 to f32
func.func @others(%a: i32, %b: i64) -> (f16, f32) {
  %x = arith.sitofp %a : i32 to f16
  %y = arith.sitofp %b : i64 to f32
  return %x, %y : f16, f32
}
