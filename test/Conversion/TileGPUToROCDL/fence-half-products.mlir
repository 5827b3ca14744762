// RUN: tessel-opt %s -amd-fence-half-products | FileCheck %s

// An fp32 product rounded to fp16, alone or as an element of a vector
// rounded at once, goes through a fence, an empty asm statement on one VGPR
// (LLVM would make the pair one v_fma_mixlo_f16 with a +0 addend, turning -0
// into +0); a sum, a product rounded to bf16 and a product kept in fp32 do
// not.
// CHECK-LABEL: llvm.func @products
// CHECK: %[[P:.*]] = llvm.fmul
// CHECK: %[[F:.*]] = llvm.inline_asm asm_dialect = att "", "=v,0" %[[P]] : (f32) -> f32
// CHECK: llvm.fptrunc %[[F]] : f32 to f16
// CHECK: %[[Q:.*]] = llvm.fmul
// CHECK: %[[G:.*]] = llvm.inline_asm asm_dialect = att "", "=v,0" %[[Q]] : (f32) -> f32
// CHECK: llvm.insertelement %[[G]]
// CHECK: llvm.fptrunc {{.*}} : vector<2xf32> to vector<2xf16>
// CHECK-NOT: llvm.inline_asm
// CHECK: llvm.return
llvm.func @products(%x: f32, %y: f32, %v: vector<2xf32>) -> !llvm.struct<(f16, vector<2xf16>, f16, bf16, f32)> {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %p = llvm.fmul %x, %y : f32
  %h = llvm.fptrunc %p : f32 to f16
  %q = llvm.fmul %y, %y : f32
  %w = llvm.insertelement %q, %v[%c0 : i32] : vector<2xf32>
  %hw = llvm.fptrunc %w : vector<2xf32> to vector<2xf16>
  %s = llvm.fadd %x, %y : f32
  %hs = llvm.fptrunc %s : f32 to f16
  %r = llvm.fmul %x, %x : f32
  %b = llvm.fptrunc %r : f32 to bf16
  %u = llvm.mlir.undef : !llvm.struct<(f16, vector<2xf16>, f16, bf16, f32)>
  %u0 = llvm.insertvalue %h, %u[0] : !llvm.struct<(f16, vector<2xf16>, f16, bf16, f32)>
  %u1 = llvm.insertvalue %hw, %u0[1] : !llvm.struct<(f16, vector<2xf16>, f16, bf16, f32)>
  %u2 = llvm.insertvalue %hs, %u1[2] : !llvm.struct<(f16, vector<2xf16>, f16, bf16, f32)>
  %u3 = llvm.insertvalue %b, %u2[3] : !llvm.struct<(f16, vector<2xf16>, f16, bf16, f32)>
  %u4 = llvm.insertvalue %r, %u3[4] : !llvm.struct<(f16, vector<2xf16>, f16, bf16, f32)>
  llvm.return %u4 : !llvm.struct<(f16, vector<2xf16>, f16, bf16, f32)>
}
