// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 compute-capability=80" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s
// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 compute-capability=90" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// fp16 x fp16 into fp16 runs on mma.sync m16n8k16 on sm_80 and on sm_90a
// alike (wgmma takes fp32 results only), summed in fp32 and rounded once,
// as the FMA loop and the CPU backend do: the fp16 accumulator (here the
// loaded block) is widened before the first instruction and the sums are
// rounded after the last. 64x64
// on 2 x 2 warps is 2 x 4 tiles per warp, 4 K steps: 32 instructions a warp.
// CHECK-LABEL: llvm.func @f16_result
// CHECK-NOT: wgmma
// CHECK: llvm.fpext {{.*}} : f16 to f32
// CHECK-COUNT-32: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvvm.mma.sync
// CHECK: llvm.fptrunc {{.*}} : f32 to f16
// CHECK-NOT: wgmma
func.func @f16_result(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %as = tile.splat %a : tensor<64x64x!tile.ptr<f16>>
  %aa = tile.addptr %as, %i : tensor<64x64x!tile.ptr<f16>>, tensor<64x64xi32>
  %x = tile.load %aa : tensor<64x64x!tile.ptr<f16>> -> tensor<64x64xf16>
  %d = tile.dot %x, %x, %x : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f16>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<f16>>, tensor<64x64xi32>
  tile.store %oa, %d : tensor<64x64x!tile.ptr<f16>>, tensor<64x64xf16>
  return
}
