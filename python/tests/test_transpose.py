"""A transpose through a shared-memory tile, against NumPy's .T."""
import numpy as np
import pytest

from helpers import transpose


@pytest.mark.parametrize("swizzle", [False, True], ids=["plain", "xor_swizzled"])
def test_transpose_through_shared(rng, swizzle):
    f = transpose((67, 45), swizzle)
    t0, = f.inputs
    t2, = f.outputs
    assert t2.shape == (45, 67)
    k = f.compile(name="transpose")
    assert k.smem_bytes == 16 * 16 * 4
    assert k.launch.block[:2] == (16, 16)
    x = rng.standard_normal((67, 45), dtype=np.float32)
    out = k.run(x)
    assert out.shape == (45, 67)
    np.testing.assert_array_equal(out, x.T)
    np.testing.assert_array_equal(f.reference(x), x.T)
