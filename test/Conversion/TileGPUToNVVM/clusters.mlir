// RUN: tessel-opt %s -tile-split-program=num-ctas=2 -convert-tile-to-tilegpu="num-warps=4" -canonicalize -convert-tilegpu-to-nvvm="num-ctas=2" -canonicalize -cse | FileCheck %s

// A program on a cluster of 2 CTAs: the kernel asks for clusters of 2 along
// x, program ids and counts are the cluster's, and each CTA's half of the
// range starts at its rank in the cluster times 128.
// CHECK-LABEL: llvm.func @copy(
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK-SAME: nvvm.kernel
// CHECK-DAG: %[[PID:.*]] = nvvm.read.ptx.sreg.clusterid.x : i32
// CHECK-DAG: %[[N:.*]] = nvvm.read.ptx.sreg.nclusterid.x : i32
// CHECK-DAG: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK-DAG: llvm.mul %[[RANK]], %{{.*}} : i32
// CHECK-NOT: nvvm.read.ptx.sreg.ctaid
// CHECK-NOT: nvvm.read.ptx.sreg.nctaid
func.func @copy(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: !tile.ptr<i32>) attributes {tile.kernel} {
  %pid = tile.get_program_id 0
  %c256 = arith.constant 256 : i32
  %base = arith.muli %pid, %c256 : i32
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %b = tile.splat %base : tensor<256xi32>
  %o = arith.addi %b, %r : tensor<256xi32>
  %xs = tile.splat %x : tensor<256x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %o : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %v = tile.load %xa : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
  %ys = tile.splat %y : tensor<256x!tile.ptr<f32>>
  %ya = tile.addptr %ys, %o : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  tile.store %ya, %v : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  %count = tile.get_num_programs 0
  tile.store %n, %count : !tile.ptr<i32>, i32
  return
}
