"""Kernel.allocation (tc_kernel_tensor_allocation) and Tensor.describe, with
sizes derived by hand from the allocation rules (see tests/test_allocation.c
for the C cases)."""
import numpy as np
import pytest

import tilec
from helpers import gsg_copy_tensors

# (inline at 1, TIDx on axis 0, BIDx on axis 1) -> T1's allocated (positions,
# extents) in shared memory: BIDx is never allocated, TIDx always, a serial
# axis only right of the compute-at position.
CASES = [
    ((False, False, False), (0, 1), (2, 4)),
    ((False, False, True), (0,), (2,)),
    ((True, False, False), (1,), (4,)),
    ((True, False, True), (), ()),
    ((True, True, False), (0, 1), (2, 4)),
    ((True, True, True), (0,), (2,)),
]


@pytest.mark.parametrize("how,positions,extents", CASES,
                         ids=["gsg_copy_%d" % i for i in range(1, 7)])
def test_shared_copy(how, positions, extents):
    f, tv0, tv1, tv2 = gsg_copy_tensors(*how)
    k = f.compile()
    n = int(np.prod(extents)) if extents else 1
    assert k.allocation(tv1) == tilec.Allocation(tilec.shared, positions, extents, n, 4 * n, 0, 0,
                                                 0, 0)
    assert k.smem_bytes == 4 * n
    # the parameters: the caller's [2, 4] f32 buffers
    for t in (tv0, tv2):
        assert k.allocation(t) == tilec.Allocation(tilec.global_mem, (0, 1), (2, 4), 8, 32, 0, 0,
                                                   0, 0)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(k.run(x), x)


def test_tensor_memory():
    # [128, 2, 6] f32 through tensor memory, TIDx{128} on axis 0, inlined at
    # 2, dim-sep 1: 128 lanes (TIDx, always allocated); axis 1 left of the
    # compute-at position is not; axis 2: 6 columns, 32 reserved.
    f = tilec.Fusion()
    tv = [f.input(tilec.f32, (128, 2, 6))]
    for _ in range(4):
        tv.append(f.set(tv[-1]))
    f.add_output(tv[4])
    tv[2].set_memory_type(tilec.tensor_mem)
    for t in tv[1:]:
        t.parallelize(0, tilec.TIDx)
    f.inline_all_at(2)
    tv[2].set_tmem_dimsep(1)
    assert tv[2].describe() == "T2[iTIDx{128}, (DS), iS{2}, (CA), iS{6}]"
    k = f.compile()
    a = k.allocation(tv[2])
    assert a == tilec.Allocation(tilec.tensor_mem, (0, 2), (128, 6), 768, 3072, 0, 128, 6, 32)
    assert k.tmem_columns == 32
    x = np.arange(128 * 12, dtype=np.float32).reshape(128, 2, 6)
    np.testing.assert_array_equal(k.run(x), x)


def test_describe_full_rank_inline():
    f = tilec.Fusion()
    t0 = f.input(tilec.f32, (4, 6))
    t1 = f.set(t0)
    f.add_output(f.set(t1))
    t1.inline_at(2)
    assert t1.describe() == "T1[iS{4}, iS{6}, (CA)]"


def test_not_in_kernel():
    f = tilec.Fusion()
    t0 = f.input(tilec.f32, (4, 6))
    f.add_output(f.neg(t0))
    dead = f.abs(t0)
    k = f.compile()
    with pytest.raises(tilec.TilecError) as e:
        k.allocation(dead)
    assert "kernel tilec_kernel has no tensor T2" in str(e.value)
    with pytest.raises(TypeError):
        k.allocation("T2")
