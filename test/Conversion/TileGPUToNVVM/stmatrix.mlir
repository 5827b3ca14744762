// RUN: tessel-opt %s -convert-tilegpu-to-nvvm="compute-capability=90" -canonicalize -cse | FileCheck %s
// RUN: tessel-opt %s -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s --check-prefix=SM80

// 16-bit values in an MMA accumulator layout (each lane's register pairs on
// consecutive columns, lanes 4 to a 16-byte row, 8 rows to a matrix) leave
// for shared memory as 8x8 matrices where the target stores matrices: a
// 64x64 fp16 tile on 128 threads is 32 elements a thread, 4 stmatrix .x4 of
// 4 words (pairs) each; on sm_80 vector stores of the pairs instead.
// CHECK-LABEL: llvm.func @acc_to_blocked
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: nvvm.stmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> vector<8xf16>
// SM80-LABEL: llvm.func @acc_to_blocked
// SM80-NOT: nvvm.stmatrix
// SM80: llvm.store {{.*}} : vector<2xf16>, !llvm.ptr<3>
#mma = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 16], [0, 32], [32, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[0, 8], [16, 0]], block = []>
#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4], [8, 0], [16, 0]], lane = [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warp = [[4, 0], [32, 0]], block = []>
module {
  func.func @acc_to_blocked(%x: f16, %out: !tile.ptr<f16>) attributes {tile.kernel, tilegpu.num_warps = 4 : i32} {
    %v = tile.splat %x : tensor<64x64xf16, #mma>
    %c = tilegpu.convert_layout %v : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
    %p = tile.splat %out : tensor<64x64x!tile.ptr<f16>, #blocked>
    tile.store %p, %c : tensor<64x64x!tile.ptr<f16>, #blocked>, tensor<64x64xf16, #blocked>
    return
  }
}
