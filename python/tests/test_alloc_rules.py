"""The allocation rules (nvFuser's): the six gmem -> smem -> gmem copies and their shared memory."""
import numpy as np
import pytest

from helpers import gsg_copy

# (inline at 1, TIDx on axis 0, BIDx on axis 1) -> bytes of shared memory
CASES = [
    ((False, False, False), 32),
    ((False, False, True), 8),
    ((True, False, False), 16),
    ((True, False, True), 4),
    ((True, True, False), 32),
    ((True, True, True), 8),
]


@pytest.mark.parametrize("how,smem", CASES, ids=["gsg_copy_%d" % i for i in range(1, 7)])
def test_copy(how, smem):
    f = gsg_copy(*how)
    k = f.compile(name="gsg_copy")
    assert k.smem_bytes == smem
    x = np.arange(8, dtype=np.float32).reshape(2, 4) * 1.5 - 3
    out = k.run(x)
    assert out.dtype == np.float32 and out.shape == (2, 4)
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(f.reference(x), x)
    assert k.last_ms is not None and k.last_ms >= 0


def test_launch_dims():
    k = gsg_copy(True, True, True).compile()
    assert k.launch.grid == (4, 1, 1)
    assert k.launch.block == (2, 1, 1)
    assert k.param_bytes == [32, 32]
    assert "__local" in k.source  # the shared tile
