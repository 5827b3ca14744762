"""Thread block clusters in the simulator: the cluster special registers as the PTX ISA defines them (a CTA's
place in its cluster and the cluster's in the grid, clusters from the kernel's .reqnctapercluster, or of one CTA
without it), checked against numpy, and launches whose grid is not a whole number of clusters refused."""
import numpy as np
import pytest

from tessel import gpusim

REGISTERS = ["%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_ctaid.z",
             "%cluster_nctaid.x", "%cluster_nctaid.y", "%cluster_nctaid.z",
             "%clusterid.x", "%clusterid.y", "%clusterid.z",
             "%nclusterid.x", "%nclusterid.y", "%nclusterid.z",
             "%cluster_ctarank", "%cluster_nctarank"]


def kernel(directives):
    # Thread 0 of each CTA writes every register to out[cta * 14 + i], the CTA numbered x + gx * (y + gy * z).
    body = []
    for i, reg in enumerate(REGISTERS):
        body.append(f" mov.u32 %v, {reg};\n st.global.u32 [%rd2+{4 * i}], %v;")
    body = "\n".join(body)
    return f""".version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{directives}
{{
 .reg .b32 %t, %x, %y, %z, %gx, %gy, %c, %v;
 .reg .b64 %rd<3>;
 .reg .pred %p;
 mov.u32 %t, %tid.x;
 setp.ne.u32 %p, %t, 0;
 @%p bra $done;
 mov.u32 %x, %ctaid.x;
 mov.u32 %y, %ctaid.y;
 mov.u32 %z, %ctaid.z;
 mov.u32 %gx, %nctaid.x;
 mov.u32 %gy, %nctaid.y;
 mad.lo.u32 %c, %z, %gy, %y;
 mad.lo.u32 %c, %c, %gx, %x;
 mul.lo.u32 %c, %c, {4 * len(REGISTERS)};
 ld.param.u64 %rd0, [out];
 cvt.u64.u32 %rd1, %c;
 add.s64 %rd2, %rd0, %rd1;
{body}
$done:
 ret;
}}
"""


def expected(grid, cluster):
    # The PTX ISA's definitions: the CTA's index within its cluster, the cluster's shape, the cluster's index in
    # the grid and the grid's shape in clusters, the CTA's rank in the cluster (x fastest) and the cluster's size.
    rows = []
    for z in range(grid[2]):
        for y in range(grid[1]):
            for x in range(grid[0]):
                ctaid = np.array([x, y, z])
                inside = ctaid % cluster
                rank = inside[0] + cluster[0] * (inside[1] + cluster[1] * inside[2])
                rows.append([*inside, *cluster, *(ctaid // cluster), *(np.array(grid) // cluster), rank,
                             np.prod(cluster)])
    return np.array(rows, np.uint32)


@pytest.mark.parametrize("grid,cluster", [((8, 1, 1), (2, 1, 1)), ((8, 3, 1), (4, 1, 1)), ((4, 6, 2), (2, 3, 2)),
                                          ((3, 2, 1), None)])
def test_cluster_registers(grid, cluster):
    directives = f".explicitcluster\n.reqnctapercluster {', '.join(map(str, cluster))}" if cluster else ""
    out = np.zeros((int(np.prod(grid)), len(REGISTERS)), np.uint32)
    gpusim.launch(kernel(directives), "k", grid, num_warps=1, args=[out])
    np.testing.assert_array_equal(out, expected(grid, np.array(cluster or (1, 1, 1))))


def test_a_grid_that_is_not_whole_clusters_is_refused():
    out = np.zeros((6, len(REGISTERS)), np.uint32)
    with pytest.raises(gpusim.SimulatorError, match=r"clusters of 4 x 1 x 1 CTAs .*do not divide the grid \(6, 1, 1\)"):
        gpusim.launch(kernel(".reqnctapercluster 4, 1, 1"), "k", 6, num_warps=1, args=[out])
