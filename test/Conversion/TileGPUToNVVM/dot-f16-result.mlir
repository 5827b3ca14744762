// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 compute-capability=80" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s --check-prefix=SM80
// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 compute-capability=90" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s --check-prefix=SM90

// fp16 x fp16 into fp16 is summed in fp32 and rounded once, as the FMA loop
// and the CPU backend do: the fp16 accumulator (here the loaded block) is
// widened before the first instruction and the sums are rounded after the
// last. On sm_80, mma.sync m16n8k16: 64x64 on 2 x 2 warps is 2 x 4 tiles
// per warp, 4 K steps: 32 instructions a warp. On sm_90a, wgmma with fp32
// accumulators: one warpgroup of 64 rows, m64n64k16, 4 K steps.
// SM80-LABEL: llvm.func @f16_result
// SM80-NOT: wgmma
// SM80: llvm.fpext {{.*}} : f16 to f32
// SM80-COUNT-32: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// SM80-NOT: nvvm.mma.sync
// SM80: llvm.fptrunc {{.*}} : f32 to f16
// SM80-NOT: wgmma
// SM90-LABEL: llvm.func @f16_result
// SM90-NOT: mma.sync
// SM90: llvm.fpext {{.*}} : f16 to f32
// SM90-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// SM90-NOT: wgmma.mma_async
// SM90: nvvm.wgmma.wait.group.sync.aligned 0
// SM90: llvm.fptrunc {{.*}} : f32 to f16
// SM90-NOT: mma.sync
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
